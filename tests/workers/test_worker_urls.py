"""URL lists for workers: every line is held to the rules of a web URL before anything is
queued, and a URL that can never be fetched is never retried as a transient failure."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from records.capture import capture_source
from records.jobs import read_url_list
from records.workspace import Workspace
from snap.cli import cli
from snap.config import Settings
from snap.errors import InputError, exit_code_of, is_transient


def _listing(tmp_path: Path, line: str) -> Path:
    path = tmp_path / "urls.txt"
    path.write_text(f"# a list\nhttp://127.0.0.1:9/fine\n{line}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("http://h:1:1/", "not a valid URL"),
        ("http://127.0.0.1:99999/", "not a valid URL"),
        ("http:", "not an absolute URL with a host"),
        ("https:", "not an absolute URL with a host"),
        ("http:x.txt", "not an absolute URL with a host"),
        ("http://127.0.0.1:9/\x00", "U+0000"),
        ("http://127.0.0.1:9/a\x0bb", "U+000B"),  # a vertical tab: str.splitlines splits there
        ("http://127.0.0.1:9/a\x1fb", "U+001F"),
        ("http://127.0.0.1:9/\x7f", "U+007F"),
        ("http://%31%32%37.0.0.1/", "percent-encoded"),
        ("http://127.0.0.1:9\\@public.test/", "backslash"),
    ],
)
def test_a_bad_line_is_refused_with_its_number(tmp_path: Path, line: str, reason: str) -> None:
    listing = _listing(tmp_path, line)
    with pytest.raises(InputError) as caught:
        read_url_list(listing)
    assert caught.value.message.startswith(f"{listing}:3: ")
    assert reason in caught.value.message
    result = CliRunner().invoke(
        cli, ["fetch", "--enqueue", str(listing)], env={"SNAP_HOME": str(tmp_path / "home")}
    )
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1


def test_good_lines_are_kept_as_written(tmp_path: Path) -> None:
    listing = _listing(tmp_path, "  HTTP://Example.test/a b\t\r")
    assert read_url_list(listing) == ["http://127.0.0.1:9/fine", "HTTP://Example.test/a b"]


def test_an_invalid_url_is_not_transient(tmp_path: Path) -> None:
    """What a worker's task meets if such a URL is queued anyway (an older batch): unusable
    input, failed at once, never tried again with backoff."""
    settings = Settings.from_env({"SNAP_HOME": str(tmp_path)})
    workspace = Workspace.open(settings)
    try:
        with pytest.raises(InputError) as caught:
            capture_source(workspace, "http://h:1:1/", web_only=True)
    finally:
        workspace.close()
    assert not is_transient(caught.value)
    assert exit_code_of(caught.value) == 2
