"""Evidence that stands without trusting snap: capture manifests, signatures, RFC 3161 trusted
timestamps and a Merkle log of records (issue 22).

``merkle`` is pure (hashlib only); ``manifest`` builds the canonical document of one capture;
``signing`` and ``timestamps`` wrap ``cryptography`` and ``rfc3161-client``; ``log`` keeps the
Merkle log in the database; ``attest`` gathers it all for the other side.
"""
