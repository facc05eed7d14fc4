"""The layers import one way (docs/layout.md), and the shell maps errors to exit codes in one
table: import-linter's contract (pyproject.toml), a check that no modules import each other
in a cycle, and the exit-code table against the codes snap has always used."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import grimp

import snap.errors

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("snap", "migrations", "records", "snapshotter", "verifier")
LINT_IMPORTS = "from importlinter.cli import lint_imports_command as c; c(['--no-cache'])"


def test_the_layers_contract_holds() -> None:
    """``lint-imports`` with the contract of pyproject.toml: no import from a lower layer to a
    higher one (a leftover ``from snap.errors import`` in records/ fails here)."""
    done = subprocess.run(
        [sys.executable, "-c", LINT_IMPORTS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 kept, 0 broken" in done.stdout


def test_no_two_modules_import_each_other() -> None:
    """No import cycle of any length among snap's modules (lazy and type-only imports count:
    a cycle is a design fault whether or not Python happens to tolerate it)."""
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    cycles = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                cycles.append(" -> ".join((importer, *back)))
    assert cycles == []


# The codes of every class before the table replaced the classes' own attributes.
EXPECTED_EXIT_CODES = {
    "SnapError": 1,
    "InputError": 2,
    "InputTooLarge": 2,
    "NothingToCheck": 2,
    "ConfigError": 2,
    "CaptureError": 1,
    "FetchError": 1,
    "AddressRefused": 1,
    "TooLarge": 1,
    "ExtractionError": 1,
    "ExtractionConflict": 1,
    "StoreError": 3,
    "BlobNotFound": 1,
    "IntegrityError": 1,
    "RecordNotFound": 1,
    "DatabaseError": 3,
    "BrokerError": 3,
    "ListenError": 3,
    "OutputError": 3,
    "AttestationFailure": 1,
    "TimestampUnavailable": 3,
    "VerifierError": 2,
    "OffsetError": 2,
    "SelectorError": 2,
}


def error_classes() -> list[type[BaseException]]:
    return [
        cls
        for _, cls in inspect.getmembers(snap.errors, inspect.isclass)
        if issubclass(cls, (snap.errors.SnapError, snap.errors.VerifierError))
    ]


def test_every_error_class_has_its_exit_code_in_the_one_table() -> None:
    classes = error_classes()
    assert [cls.__name__ for cls in classes if cls not in snap.errors.EXIT_CODES] == []
    codes = {
        cls.__name__: snap.errors.exit_code_of(cls.__new__(cls))  # type: ignore[arg-type]
        for cls in classes
    }
    assert codes == EXPECTED_EXIT_CODES


def test_no_error_class_carries_an_exit_code_of_its_own() -> None:
    """The shell's table is the one place: an ``exit_code`` attribute on a class (an error
    written before the layers, merged in) would be silently ignored, so it fails here."""
    carrying = [cls.__name__ for cls in error_classes() if hasattr(cls, "exit_code")]
    assert carrying == []


def test_a_subclass_without_a_row_exits_as_its_parent() -> None:
    class Unlisted(snap.errors.StoreError):
        pass

    assert snap.errors.exit_code_of(Unlisted("down")) == 3
