"""The vocabulary is spelled once: no status, blob state, batch kind, item state, failure kind
or capture outcome is written as a string literal in records/ (the exports included) or the
shell, outside the modules that define the enums (verifier/status.py, records/vocabulary.py).

A literal is allowed only where it names a key of a wire shape (``{"failed": …}``,
``progress["done"]``, ``payload.get("capture")``): there it is a JSON field, not a state.
``"capture"`` is also the log's entry kind, a SNAP_TSA_PER value and the name of a click
parameter, so for that one word only comparisons are refused.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

from records.vocabulary import (
    REFETCH_FAILED,
    BatchKind,
    BlobState,
    CaptureOutcome,
    FailureKind,
    ImportOutcome,
    ItemState,
    Status,
)

ROOT = Path(__file__).resolve().parents[2]
OWNERS = {ROOT / "records" / "vocabulary.py", ROOT / "verifier" / "status.py"}
WORDS = {
    member.value
    for enum in (
        Status,
        BlobState,
        BatchKind,
        ItemState,
        FailureKind,
        CaptureOutcome,
        ImportOutcome,
    )
    for member in enum
} | {REFETCH_FAILED}
OVERLOADED = {BatchKind.CAPTURE.value}
COMPARISONS = {"==", "!=", "in", "not"}
KEY_OPENERS = {"{", ",", "\n"}  # what comes before a key in a dict display
# (file, literal): why the word there is not the vocabulary's
ALLOWED = {
    ("snap/commands/attest.py", '"intact"'): "snap log verify's verdict in words, not a blob state",
    ("snap/render.py", '"imported"'): "snap audit's label of a capture an import made, not an"
    " import's outcome",
}


def literal_uses(path: Path, root: Path = ROOT) -> list[str]:
    """Each vocabulary word written as a string literal in ``path``, other than as a key."""
    tokens = list(tokenize.generate_tokens(io.StringIO(path.read_text("utf-8")).readline))
    found = []
    for index, token in enumerate(tokens):
        if token.type != tokenize.STRING or token.string[:1] not in "'\"":
            continue
        try:
            value = ast.literal_eval(token.string)
        except (ValueError, SyntaxError):
            continue
        if value not in WORDS:
            continue
        before = tokens[index - 1].string
        after = tokens[index + 1].string
        two_before = tokens[index - 2].string if index >= 2 else ""
        if (after == ":" and before in KEY_OPENERS) or (before == "[" and after == "]"):
            continue  # a dict key or a subscript: a wire key
        if before == "(" and two_before == "get":
            continue
        if value in OVERLOADED and before not in COMPARISONS and after not in COMPARISONS:
            continue
        found.append(f"{path.relative_to(root)}:{token.start[0]}: {token.string}")
    return found


def checked_files() -> list[Path]:
    files = [*sorted((ROOT / "records").rglob("*.py")), *sorted((ROOT / "snap").rglob("*.py"))]
    return [path for path in files if path not in OWNERS]


def test_no_status_or_state_is_spelled_outside_its_enum() -> None:
    files = checked_files()
    assert len(files) > 50  # the tree was found
    found = [use for path in files for use in literal_uses(path)]
    unexplained = [use for use in found if (use.split(":")[0], use.split(": ")[1]) not in ALLOWED]
    assert unexplained == []
    assert len(found) - len(unexplained) == len(ALLOWED)  # each allowance is still needed


def test_the_check_finds_a_literal_status(tmp_path: Path) -> None:
    """The scanner is not blind: a comparison with a status, a blob state or a batch kind, and
    an item state given as a value, are each found; keys are not."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        'if outcome.status == "quote_found":\n'
        '    state = "missing"\n'
        'if kind == "capture":\n'
        '    values(state="done")\n'
        'document = {"failed": 1, "captureId": 2}\n'
        'count = progress["pending"] + payload.get("capture", 0)\n'
        'log(entry, "capture")\n',
        "utf-8",
    )
    found = [line.split(": ", 1)[1] for line in literal_uses(sample, tmp_path)]
    assert found == ['"quote_found"', '"missing"', '"capture"', '"done"']


def test_every_enum_value_is_what_the_database_constraints_allow() -> None:
    """The CHECK constraints are built from the enums, so a new member cannot be forgotten."""
    from records.models import Batch, BatchItem, Verification

    def constraint_text(table: object) -> str:
        checks = [c for c in table.constraints if hasattr(c, "sqltext")]  # type: ignore[attr-defined]
        return " ".join(str(c.sqltext) for c in checks)

    assert all(f"'{kind.value}'" in constraint_text(Batch.__table__) for kind in BatchKind)
    items = constraint_text(BatchItem.__table__)
    assert all(f"'{state.value}'" in items for state in ItemState)
    assert all(f"'{kind.value}'" in items for kind in FailureKind)
    checks = constraint_text(Verification.__table__)
    assert all(f"'{status.value}'" in checks for status in Status)
