"""A prepared source packed as bytes (verifier.packed) answers every quote as the prepared
source it was packed from, and bytes that are damaged, truncated, foreign or of another text are
refused, never read as an answer."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import verifier.packed
from verifier import CodeSpans, prepare
from verifier.errors import PackError
from verifier.packed import pack, unpack

PIECES = st.sampled_from(
    [
        "the",
        "Origin",
        "NASA",
        "naïve",
        "straße",
        "don’t",
        "5'000",
        "1,000.50",
        "−7",
        "10⁶",
        "CO₂",
        "MW",
        "kWh",
        "日本語",
        "のテキスト",
        "สวัสดี",
        "👩\u200d💻",
        "❤️",
        "[1]",
        "(",
        ")",
        "“",
        "”",
        "…",
        "x" * 300,  # a token of 255 code points or more keeps its end apart
    ]
)
GAPS = st.sampled_from([" ", "  ", "\n", "\t", "\u00a0", ", ", ". ", " — ", ""])
BINDING = "sha256:" + "ab" * 32


@st.composite
def sources(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(PIECES, min_size=0, max_size=25))
    text = pieces[0] if pieces else ""
    for piece in pieces[1:]:
        text += draw(GAPS) + piece
    return text


@st.composite
def source_and_quotes(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A source, slices of it (found or cut), and quotes of the same alphabet or of any text."""
    source = draw(st.one_of(sources(), st.text(max_size=200)))
    quotes = []
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        if source and draw(st.booleans()):
            start = draw(st.integers(min_value=0, max_value=len(source) - 1))
            end = draw(st.integers(min_value=start, max_value=len(source)))
            quote = source[start:end]
            quotes.append(quote.upper() if draw(st.booleans()) else quote)
        else:
            quotes.append(draw(st.one_of(sources(), st.text(max_size=40))))
    return source, quotes


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=source_and_quotes())
def test_a_packed_source_answers_as_the_prepared_one(case: tuple[str, list[str]]) -> None:
    source, quotes = case
    prepared = prepare(source)
    try:
        data = pack(prepared, BINDING)
    except PackError:  # a key the layout cannot hold: not packed, never wrong
        return
    loaded = unpack(data, source, BINDING)
    fresh = prepare(source)  # never packed: its index is built the usual way
    assert len(loaded) == len(fresh)
    for quote in quotes:
        assert loaded.check(quote) == fresh.check(quote)
        assert loaded.check(quote, closest=False) == fresh.check(quote, closest=False)
    assert loaded.normalized_digest() == fresh.normalized_digest()
    assert loaded.held_bytes() == fresh.held_bytes()


SOURCE = "The origin serves only 1 request in 10 [1] 👩\u200d💻, and NASA’s 5'000 MW. " * 20
QUOTES = ["serves only 1 request in 10", "NASA’s 5'000 MW", "serves only 2 requests", "nasa"]


def packed() -> bytes:
    return pack(prepare(SOURCE), BINDING)


def test_packing_the_same_source_gives_the_same_bytes() -> None:
    assert packed() == packed()
    loaded = unpack(packed(), SOURCE, BINDING)
    assert [loaded.check(q) for q in QUOTES] == [prepare(SOURCE).check(q) for q in QUOTES]


def test_the_memory_a_source_holds_is_counted_as_built() -> None:
    """Caches bound what they hold by ``held_bytes``: the figure is the same before and after
    the index is built, and for a source unpacked as for one tokenized."""
    counted_first = prepare(SOURCE).held_bytes()
    checked = prepare(SOURCE)
    for quote in QUOTES:  # the key index is built on the second check
        checked.check(quote)
    assert checked.held_bytes() == counted_first
    assert unpack(packed(), SOURCE, BINDING).held_bytes() == counted_first
    assert counted_first > len(SOURCE.encode())


@pytest.mark.parametrize("at", [0, 9, 40, 200, -40, -1])
def test_a_flipped_byte_anywhere_is_refused(at: int) -> None:
    data = bytearray(packed())
    data[at] ^= 0x01
    with pytest.raises(PackError):
        unpack(bytes(data), SOURCE, BINDING)


@given(st.data())
def test_any_flipped_bit_is_refused(data: st.DataObject) -> None:
    original = packed()
    at = data.draw(st.integers(min_value=0, max_value=len(original) - 1))
    bit = data.draw(st.integers(min_value=0, max_value=7))
    damaged = bytearray(original)
    damaged[at] ^= 1 << bit
    with pytest.raises(PackError):
        unpack(bytes(damaged), SOURCE, BINDING)


@pytest.mark.parametrize("keep", [0, 7, 8, 100, -33, -32, -1])
def test_truncated_bytes_are_refused(keep: int) -> None:
    with pytest.raises(PackError):
        unpack(packed()[:keep], SOURCE, BINDING)


def test_bytes_of_another_text_or_binding_are_refused() -> None:
    with pytest.raises(PackError, match="another text or version"):
        unpack(packed(), SOURCE, "sha256:" + "cd" * 32)
    with pytest.raises(PackError, match="another text or version"):
        unpack(packed(), SOURCE + " more", BINDING)


def test_bytes_of_another_version_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verifier.packed, "PACKED_ID", "snap-prepared@0 snap-verifier@2")
    foreign = packed()
    monkeypatch.undo()
    with pytest.raises(PackError, match="another text or version"):
        unpack(foreign, SOURCE, BINDING)


def test_whole_bytes_whose_arrays_disagree_are_refused() -> None:
    """A layout bug or a forged entry with a fresh digest: the arrays are still checked."""
    data = bytearray(packed()[:-32])
    marker = b"serves"
    at = data.index(marker)
    data[at : at + len(marker)] = b"serv\ns"  # one key more than there are ids for
    body = bytes(data)
    with pytest.raises(PackError, match="differ in length"):
        unpack(body + hashlib.sha256(body).digest(), SOURCE, BINDING)


def test_bytes_that_are_not_a_packed_source_are_refused() -> None:
    for data in (b"", b"SNAPPREP", b"\x00" * 64, SOURCE.encode()):
        with pytest.raises(PackError):
            unpack(data, SOURCE, BINDING)


def test_a_source_read_with_code_spans_is_never_packed() -> None:
    """An entry names its text only; code spans change what is compared, so such a source is
    not packed at all rather than packed without them."""
    source = "Run ls -la here, then cd /tmp."
    spans = CodeSpans.merged([(4, 10)])
    with pytest.raises(PackError, match="code spans"):
        pack(prepare(source, spans), BINDING)
