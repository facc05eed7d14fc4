"""Fetch sources, extract their text, and keep both write-once and content-addressed.

``fetch`` downloads (with a request-forgery guard and size caps), ``extract`` turns bytes into
text deterministically, ``store`` keeps blobs behind one small interface, and ``capture`` ties
the three together into a snapshot record.
"""
