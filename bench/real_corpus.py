"""A corpus of real pages nobody here wrote, for the verifier's benchmarks (issue 25).

Run: ``.venv/bin/python bench/real_corpus.py [--corpus DIR] [--rebuild]``

The pages are the HTML manuals of Debian's documentation packages, turned into text by snap's own
extractor (``snapshotter.extract``), as ``snap fetch`` of the same bytes would store it.  They
are other projects' content, so they are never committed: this script builds the corpus on the
machine from the installed packages, into ``bench/results/real-corpus/`` (ignored by git), and
the benchmarks read it from there (``load``), building it first when it is missing.  Install
the packages with::

    apt-get install -y python3.11-doc postgresql-doc-15 debian-reference-en \\
        debian-reference-fr debian-reference-ja debmake-doc diffutils-doc

A manual whose package is missing is left out with a line saying so; with none at all the
benchmarks stop with that line.

What the benchmarks read:

* ``documents``: every page whose text is 1,000-3,000 characters (the small real documents);
* ``books``: for each manual, its pages' texts joined in file order (as its one-page edition
  reads) and cut at a line break at ``BOOK_SIZE`` characters: the 1 MB real pages;
* ``draw_quotes``: quotes drawn with a seed, an even mix of copied ones and changed ones (one
  word changed, dropped or added, or a number changed: a quarter each where the passage allows).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from snapshotter.extract import extract  # noqa: E402
from verifier import tokenize  # noqa: E402
from verifier.tokenizer import NUMBER, WORD, Token  # noqa: E402

DEFAULT_CORPUS = ROOT / "bench" / "results" / "real-corpus"
FORMAT = "snap-real-corpus/1"
BOOK_SIZE = 1_000_000
SMALL = (1_000, 3_000)
INSTALL = (
    "apt-get install -y python3.11-doc postgresql-doc-15 debian-reference-en "
    "debian-reference-fr debian-reference-ja debmake-doc diffutils-doc"
)


@dataclass(frozen=True)
class Manual:
    """One manual: its Debian package, and where and which of its HTML files are read."""

    name: str
    package: str
    folder: str
    pattern: str


REFERENCE = "/usr/share/debian-reference"
MANUALS = (
    Manual("python-3.11", "python3.11-doc", "/usr/share/doc/python3.11-doc/html", "**/*.html"),
    Manual("postgresql-15", "postgresql-doc-15", "/usr/share/doc/postgresql-doc-15/html", "*.html"),
    *(
        Manual(f"debian-reference-{lang}", f"debian-reference-{lang}", REFERENCE, f"*.{lang}.html")
        for lang in ("en", "fr", "ja")
    ),
    Manual("debmake-doc", "debmake-doc", "/usr/share/doc/debmake-doc/html", "*.html"),
    Manual("diffutils", "diffutils-doc", "/usr/share/doc/diffutils", "*.html"),
)


class Page(NamedTuple):
    manual: str
    path: str
    text: str


class Corpus(NamedTuple):
    pages: list[Page]
    manuals: list[str]
    missing: list[str]

    def documents(self) -> list[Page]:
        """The small real documents: pages of 1,000-3,000 characters of text."""
        return [page for page in self.pages if SMALL[0] <= len(page.text) <= SMALL[1]]

    def books(self, size: int = BOOK_SIZE) -> dict[str, str]:
        """Each manual's pages joined in file order, cut at a line break at ``size`` characters;
        only manuals with that much text."""
        books: dict[str, str] = {}
        for manual in self.manuals:
            text = "\n".join(page.text for page in self.pages if page.manual == manual)
            if len(text) >= size:
                cut = text.rfind("\n", 0, size)
                books[manual] = text[: cut if cut > 0 else size]
        return books


class CorpusMissing(Exception):
    """No manual's package is installed: the message says what to install."""


def build(folder: Path) -> Corpus:
    """Extract every installed manual's pages into ``folder`` (one JSON file per manual)."""
    folder.mkdir(parents=True, exist_ok=True)
    missing = []
    for manual in MANUALS:
        files = sorted(Path(manual.folder).glob(manual.pattern))
        if not files:
            missing.append(manual.package)
            continue
        pages = []
        for path in files:
            extraction = extract(path, "text/html")
            if extraction.text:
                data = path.read_bytes()
                pages.append(
                    {
                        "path": str(path),
                        "sha256": hashlib.sha256(data).hexdigest(),
                        "extractor": extraction.extractor,
                        "text": extraction.text,
                    }
                )
        print(f"{manual.name}: {len(pages)} pages extracted", file=sys.stderr)
        record = {
            "format": FORMAT,
            "manual": manual.name,
            "package": manual.package,
            "pages": pages,
        }
        (folder / f"{manual.name}.json").write_text(json.dumps(record), encoding="utf-8")
    (folder / "missing.json").write_text(json.dumps(missing), encoding="utf-8")
    return read(folder)


def read(folder: Path) -> Corpus:
    pages: list[Page] = []
    manuals = []
    for manual in MANUALS:
        path = folder / f"{manual.name}.json"
        if not path.exists():
            continue
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("format") != FORMAT:
            continue
        manuals.append(manual.name)
        pages.extend(Page(manual.name, page["path"], page["text"]) for page in record["pages"])
    missing_file = folder / "missing.json"
    missing = json.loads(missing_file.read_text()) if missing_file.exists() else []
    return Corpus(pages, manuals, missing)


def load(folder: Path = DEFAULT_CORPUS, rebuild: bool = False) -> Corpus:
    """The corpus in ``folder``, built first when missing; ``CorpusMissing`` when no manual's
    package is installed."""
    corpus = None if rebuild else read(folder)
    if corpus is None or not corpus.manuals:
        corpus = build(folder)
    if not corpus.manuals:
        raise CorpusMissing(
            "no documentation package is installed for the real-page corpus; install them with: "
            + INSTALL
        )
    return corpus


# Quotes --------------------------------------------------------------------------------------

COPIED = "copied"
CHANGES = ("word changed", "word dropped", "word added", "number changed")


class Quote(NamedTuple):
    text: str
    kind: str  # COPIED or one of CHANGES


def draw_quotes(text: str, count: int, rng: random.Random) -> list[Quote]:
    """``count`` quotes of ``text``: even ones copied (a run of 6-20 tokens that cuts no word,
    number or symbol), odd ones changed once, the changes taken in turn (a number changed only
    where the passage has a number, else a word).  A changed quote differs from its passage in one
    word or number; whether the source holds it elsewhere is for the checker to say."""
    tokens = tokenize(text)
    words = [token.text for token in tokens if token.kind == WORD and len(token.text) > 1]
    if len(tokens) < 24 or not words:
        return []
    quotes: list[Quote] = []
    for _ in range(50 * count):
        if len(quotes) == count:
            break
        first = rng.randrange(len(tokens) - 21)
        window = tokens[first : first + rng.randint(6, 20)]
        if window[0].glued or tokens[first + len(window)].glued:
            continue  # the quote would cut a word, number or symbol of the source
        if len(quotes) % 2 == 0:
            quotes.append(Quote(text[window[0].start : window[-1].end], COPIED))
            continue
        change = CHANGES[(len(quotes) // 2) % len(CHANGES)]
        changed = _changed(text, window, change, rng.choice(words), rng)
        if changed is not None:
            quotes.append(changed)
    return quotes


def _changed(
    text: str, window: list[Token], change: str, other: str, rng: random.Random
) -> Quote | None:
    """The passage ``window`` of ``text`` with one change (``other``: a word of the text), or
    None when the passage has no place for it."""
    start, end = window[0].start, window[-1].end
    numbers = [token for token in window if token.kind == NUMBER]
    if change == "number changed" and numbers:
        target = rng.choice(numbers)
        digit = str((int(target.text[-1]) + rng.randint(1, 9)) % 10)
        return Quote(text[start : target.end - 1] + digit + text[target.end : end], change)
    inner = [
        index
        for index, token in enumerate(window[1:-1], 1)
        if token.kind == WORD and not token.glued and not window[index + 1].glued
    ]
    if not inner:
        return None
    index = rng.choice(inner)
    target = window[index]
    if change == "word dropped":
        return Quote(text[start : target.start] + text[window[index + 1].start : end], change)
    if change == "word added":
        return Quote(text[start : target.start] + other + " " + text[target.start : end], change)
    if other.casefold() == target.text.casefold():
        return None
    return Quote(text[start : target.start] + other + text[target.end : end], "word changed")


def _main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    try:
        corpus = load(args.corpus, args.rebuild)
    except CorpusMissing as missing:
        raise SystemExit(str(missing)) from None
    for manual in corpus.manuals:
        pages = [page for page in corpus.pages if page.manual == manual]
        size = sum(len(page.text) for page in pages)
        print(f"{manual}: {len(pages)} pages, {size / 1e6:.2f} M characters")
    print(f"small documents: {len(corpus.documents())}; 1 MB books: {', '.join(corpus.books())}")
    if corpus.missing:
        print(f"left out (not installed): {', '.join(corpus.missing)}; {INSTALL}")


if __name__ == "__main__":
    _main()
