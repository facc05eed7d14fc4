"""``snap export FILE --documents MAP``: a model's answer that cites documents by file id or
index is exported with the sources the map names, as ``snap verify --documents`` checks it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from snap.cli import cli
from tests.inputs.conftest import FIXTURES

ENV: dict[str, str | None] = {"SNAP_STORE": None, "SNAP_DATABASE_URL": None}


def snap(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env=ENV | {"SNAP_HOME": str(home)})


def test_export_of_an_answer_reads_its_documents_map(tmp_path: Path) -> None:
    home = tmp_path / "home"
    page = tmp_path / "report.txt"
    shutil.copy(FIXTURES / "report.txt", page)
    fetched = snap(home, "fetch", "--json", str(page))
    assert fetched.exit_code == 0, fetched.output
    snapshot_id = json.loads(fetched.stdout)["snapshotId"]
    answer = FIXTURES / "openai_file_search.json"
    documents = tmp_path / "documents.json"
    documents.write_text(json.dumps({"file-2dtbBZdjtDKS8eqWxqbgDi": snapshot_id}), "utf-8")
    out = tmp_path / "answer.warc"

    unmapped = snap(home, "export", "--format", "warc", "-o", str(out), str(answer))
    assert unmapped.exit_code != 0  # no citation of it names a stored source without the map
    mapped = snap(
        home, "export", "--json", "--format", "warc", "-o", str(out),
        "--documents", str(documents), str(answer),
    )  # fmt: skip
    assert mapped.exit_code == 0, mapped.output
    summary: dict[str, Any] = json.loads(mapped.stdout)
    assert summary["snapshotIds"] == [snapshot_id]


def test_documents_without_a_file_is_a_usage_error(tmp_path: Path) -> None:
    documents = tmp_path / "documents.json"
    documents.write_text("{}", "utf-8")
    result = snap(
        tmp_path / "home", "export", "--format", "warc", "-o", str(tmp_path / "x.warc"),
        "--url", "http://127.0.0.1:9/", "--documents", str(documents),
    )  # fmt: skip
    assert result.exit_code == 2
    assert "--documents goes with FILE" in result.stderr
