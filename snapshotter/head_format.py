"""The ``headers`` blob's format, which ``fetch`` writes and ``capture`` stores, and the
provenance keys that name a capture's extra blobs: here, so that neither of the two imports the
other for them, and a reader of stored evidence (``records.evidence``) neither (``capture``
re-exports the names)."""

HEADERS_BLOB = "headersBlob"  # the provenance key naming a capture's ``headers`` blob
HEAD_FORMAT = "snap-http-exchanges/1"  # the format of a ``headers`` blob (snapshotter.fetch)
BROWSER_PROVENANCE = "browser"  # the provenance key of a browser capture (snapshotter.browser)
