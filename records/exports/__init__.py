"""Exports: snap's evidence in the formats of the web-archiving field, for people who do not run
snap.

``selection`` turns what the user named (a citation, a snapshot, a URL or an answer file) into
plain data read in one short transaction; ``http_head`` rebuilds the captured HTTP heads;
``warc`` writes WARC 1.1 with warcio; ``wacz`` packages that WARC as WACZ 1.1.1 with pages and
W3C annotations; ``evidence_page`` renders the HTML page. Every blob is read through the
digest-checked read path, so a damaged blob is refused, never exported.
"""
