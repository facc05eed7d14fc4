"""A WACZ's ``attestations.jsonl`` is checked on import: snap's own export imports with no
attestation problem; one whose timestamp tokens were swapped between two captures imports all
the same (an import claims nothing of its own) but says so, naming both captures by their URL
and time and the line of the file (never by the ids the exporting snap gave them)."""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from records.imports.attestations import ATTESTATIONS, attestation_problems, read_attestations
from snap.cli import cli
from tests.attest.conftest import tsa  # noqa: F401  (fixture)
from tests.attest.tsa import LocalTsa
from tests.imports.sealed import export_two_sealed_captures

Lines = list[dict[str, Any]]


@pytest.fixture(scope="module")
def exported(tsa: LocalTsa, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """A page fetched twice (two captures, each with its manifest, signature and token),
    exported as a WACZ by snap."""
    folder = tmp_path_factory.mktemp("attested")
    export_two_sealed_captures(folder, tsa, ["wacz"])
    out = folder / "evidence.wacz"
    assert len(captures(read_lines(out))) == 2
    return out


def read_lines(wacz: Path) -> Lines:
    with zipfile.ZipFile(wacz) as archive:
        return [json.loads(line) for line in archive.read(ATTESTATIONS).splitlines()]


def captures(lines: Lines) -> Lines:
    return [line for line in lines if "captureId" in line]


def label(lines: Lines, line: dict[str, Any]) -> str:
    """How a problem names a line: by what it is about, then where it is, ending the label."""
    return f"({ATTESTATIONS} line {lines.index(line) + 1}):"


def swap_tokens(lines: Lines) -> Lines:
    """The two captures' timestamp tokens exchanged, all else as exported."""
    first, second = captures(lines)
    first["timestamp"]["token"], second["timestamp"]["token"] = (
        second["timestamp"]["token"],
        first["timestamp"]["token"],
    )
    return lines


def rewritten(source: Path, target: Path, lines: Lines, *, relist: bool) -> Path:
    """``source`` with its attestations replaced by ``lines``; ``relist``: its listing's hash
    and size of them updated too (and the listing's own digest), as a careful forger would."""
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    changes: dict[str, Callable[[bytes], bytes]] = {ATTESTATIONS: lambda _old: data}
    if relist:
        listing = b""

        def relisted(old: bytes) -> bytes:
            nonlocal listing
            package = json.loads(old)
            for resource in package["resources"]:
                if resource["path"] == ATTESTATIONS:
                    resource["hash"] = "sha256:" + hashlib.sha256(data).hexdigest()
                    resource["bytes"] = len(data)
            listing = json.dumps(package).encode()
            return listing

        def redigested(old: bytes) -> bytes:
            digest = json.loads(old)
            digest["hash"] = "sha256:" + hashlib.sha256(listing).hexdigest()
            return json.dumps(digest).encode()

        changes |= {"datapackage.json": relisted, "datapackage-digest.json": redigested}
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():  # in the exported order: the listing before its digest
            change = changes.get(info.filename)
            contents = old.read(info)
            new.writestr(info, change(contents) if change else contents)
    return target


def snap_import(wacz: Path, home: Path, *extra: str) -> Any:
    return CliRunner().invoke(cli, ["import", str(wacz), *extra], env={"SNAP_HOME": str(home)})


def test_snaps_own_export_imports_with_no_attestation_problem(
    exported: Path, tmp_path: Path
) -> None:
    done = snap_import(exported, tmp_path / "home", "--json")
    assert done.exit_code == 0, done.output
    summary = json.loads(done.output)["summary"]
    assert summary["attestationProblems"] == []
    assert summary["imported"] == 2
    assert attestation_problems(b"") == []


def test_swapped_tokens_are_reported_naming_both_captures(exported: Path, tmp_path: Path) -> None:
    lines = swap_tokens(read_lines(exported))
    tampered = rewritten(exported, tmp_path / "tampered.wacz", lines, relist=True)
    done = snap_import(tampered, tmp_path / "home", "--json")
    assert done.exit_code == 0, done.output  # reported, never refused: nothing is lost
    report = json.loads(done.output)
    summary = report["summary"]
    assert summary["imported"] == 2
    problems = summary["attestationProblems"]
    for line in captures(lines):
        document = json.loads(line["manifest"]["document"])
        named = f"the capture of {document['requestedUrl']} at {document['capturedAt']} "
        about = [p for p in problems if p.startswith(named + label(lines, line))]
        assert any("timestamp token stamps another digest" in p for p in about), problems
        assert any("the logged leaf names timestamp" in p for p in about), problems
    assert not any(f"capture {line['captureId']}" in p for p in problems for line in lines)
    assert {r["attestation"] for r in report["records"] if r["captureId"]} == {"does not hold"}
    text = snap_import(tampered, tmp_path / "again").output.splitlines()
    told = [line for line in text if line.startswith("attestation problem: the capture of ")]
    assert len(told) == len(problems)
    assert text[-1].startswith(f"{len(problems)} attestation problems in the archive (")


def test_swapped_tokens_with_the_listing_left_stale_are_refused_whole(
    exported: Path, tmp_path: Path
) -> None:
    """Then the listing's hash no longer matches: the package is refused before anything is
    read, as any changed file of a WACZ is."""
    lines = swap_tokens(read_lines(exported))
    tampered = rewritten(exported, tmp_path / "tampered.wacz", lines, relist=False)
    done = snap_import(tampered, tmp_path / "home")
    assert done.exit_code == 2, done.output
    assert f"{ATTESTATIONS} was changed: datapackage.json declares" in done.output
    assert "Traceback" not in done.output


def test_a_whole_attestation_moved_to_another_capture_is_reported(exported: Path) -> None:
    """Manifest, signature and token of one capture under the other's id and log proof: each
    piece holds with the others, but not with the leaf the log proves."""
    lines = read_lines(exported)
    first, second = captures(lines)
    for key in ("manifest", "signature", "timestamp"):
        first[key], second[key] = second[key], first[key]
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    problems = attestation_problems(data)
    for line in (first, second):
        assert any(
            label(lines, line) in p and "the logged leaf names manifest" in p for p in problems
        ), problems


def test_a_changed_manifest_and_a_proof_off_its_root_are_reported(exported: Path) -> None:
    lines = read_lines(exported)
    first = captures(lines)[0]
    first["manifest"]["document"] = first["manifest"]["document"].replace("sha256", "SHA256", 1)
    proof = first["logProof"]
    if proof["path"]:
        proof["path"][0] = "00" * 32
    else:
        proof["position"] += 1
    problems = attestation_problems(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    named = label(lines, first)
    assert any(named in p and "the manifest hashes to sha256:" in p for p in problems)
    assert any(
        named in p and "does not lead to the root its checkpoint states" in p for p in problems
    )


@pytest.mark.parametrize(
    "line",
    [
        b"not json",
        b"[1, 2]",
        b'{"captureId": "x"}',
        b'{"captureId": 1, "logProof": {"checkpoint": {"id": 1}}}',
        b'{"captureId": 1, "manifest": "text", "logProof": null}',
    ],
)
def test_a_line_not_shaped_as_snap_writes_it_is_one_problem(line: bytes) -> None:
    problems = attestation_problems(line + b"\n")
    assert len(problems) == 1
    assert "line 1" in problems[0]


def test_a_checkpoint_token_over_another_document_is_said_once(exported: Path) -> None:
    lines = read_lines(exported)
    checkpoints = [line["logProof"]["checkpoint"] for line in lines]
    for checkpoint in checkpoints:
        checkpoint["document"] = checkpoint["document"].replace("{", "{ ", 1)
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    problems = attestation_problems(data)
    stamped = [p for p in problems if "timestamp token stamps another digest" in p]
    assert stamped
    assert all(p.startswith("the log checkpoint of ") for p in stamped)
    assert len(stamped) == len({c["id"] for c in checkpoints})
    for capture in read_attestations(data).captures:  # proved against it: does not hold
        assert any(p in stamped for p in capture.problems), capture.problems


def test_swapped_signatures_are_reported(exported: Path) -> None:
    lines = read_lines(exported)
    first, second = captures(lines)
    first["signature"], second["signature"] = second["signature"], first["signature"]
    problems = attestation_problems(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    for line in (first, second):
        named = f"{label(lines, line)} the manifest's signature does not verify"
        assert any(named in p for p in problems), problems
