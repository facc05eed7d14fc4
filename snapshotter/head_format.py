"""The ``headers`` blob's format, which ``fetch`` writes and ``capture`` stores: here, so that
neither of the two imports the other for it (``capture`` re-exports both names)."""

HEADERS_BLOB = "headersBlob"  # the provenance key naming a capture's ``headers`` blob
HEAD_FORMAT = "snap-http-exchanges/1"  # the format of a ``headers`` blob (snapshotter.fetch)
