"""The citation record: database models, queries, and the use cases that tie store and verifier.

Use cases (``capture``, ``verify``, ``audit``, ``reverify``, ``fsck``) are plain functions
over a ``Database`` and a ``BlobStore``; the ``snap`` CLI is a thin layer over them.
"""
