"""The code-spans blob: where an extracted text is code, stored beside the text.

The text alone loses the markup that says a run is code (``<code>``, ``<pre>``, ``<kbd>``,
``<samp>``), and the verifier compares code more strictly than prose (``verifier.code``), so the
HTML extractor records the code-point ranges of such text, and the capture stores them as one
small content-addressed blob of kind ``code``: canonical JSON (RFC 8785: sorted keys, no
whitespace), ``{"code":[[start,end],...],"version":1}``, ranges sorted, merged and non-empty,
in code points of the text.  The extraction row names it (``code_hash``) and the capture's
provenance too (``codeBlob``), so the capture's manifest names it with every other blob.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from snapshotter.canonical_json import canonical_json
from snapshotter.errors import IntegrityError
from snapshotter.store.base import blob_key
from verifier.errors import CodeSpanError

if TYPE_CHECKING:  # imported where decoded: the tokenizer's patterns stay unloaded until then
    from verifier import CodeSpans

CODE_BLOB: Final = "codeBlob"
"""The capture provenance's entry naming the blob (``{"hash", "size", "versionId"}``)."""
CODE_FORMAT_VERSION: Final = 1
_EXPECTED: Final = "a canonical version 1 code-spans document"


def encode(spans: CodeSpans) -> bytes:
    """The canonical bytes of ``spans``; equal spans always give equal bytes (and digests)."""
    document: dict[str, Any] = {
        "version": CODE_FORMAT_VERSION,
        "code": [[start, end] for start, end in spans.ranges],
    }
    return canonical_json(document)


def decode(data: bytes, *, text_length: int, digest: str) -> CodeSpans:
    """The spans a stored blob holds, checked against the text they describe.

    The blob's digest has been checked by the store; a blob that is not such a document, or
    whose ranges run past the text, is damaged evidence all the same (``IntegrityError``): the
    text would be compared by other rules than the ones it was captured with.
    """
    from verifier import CodeSpans  # the tokenizer: loaded only where code spans are read

    try:
        document = json.loads(data.decode("utf-8"))
        if not isinstance(document, dict) or document.get("version") != CODE_FORMAT_VERSION:
            raise ValueError("not a version 1 code-spans document")
        ranges = document.get("code")
        if not isinstance(ranges, list):
            raise ValueError("no list of code ranges")
        spans = CodeSpans(tuple(_pair(item) for item in ranges))
        if spans.ranges and spans.ranges[-1][1] > text_length:
            raise ValueError(f"a range runs past the text's {text_length} code points")
    except (ValueError, CodeSpanError, UnicodeDecodeError) as error:
        raise IntegrityError(blob_key("code", digest), _EXPECTED, str(error)) from None
    if encode(spans) != data:
        raise IntegrityError(blob_key("code", digest), _EXPECTED, "another form of it")
    return spans


def _pair(item: Any) -> tuple[int, int]:
    if (
        not isinstance(item, list)
        or len(item) != 2
        or not all(isinstance(value, int) and not isinstance(value, bool) for value in item)
    ):
        raise ValueError(f"{item!r} is not a [start, end] pair of integers")
    return item[0], item[1]
