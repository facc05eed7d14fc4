"""snap: content-addressed snapshots of sources and checkable citations against them.

This package is the application shell: the version, the configuration read from the
environment, the one error hierarchy, and the thin ``snap`` command line.  The work itself
lives in ``verifier`` (pure text matching), ``snapshotter`` (fetch, extract, store) and
``records`` (database and use cases).
"""

from snapshotter.version import __version__ as __version__
