"""Messages about settings and missing captures say what to do in the user's terms: bounds as
people write numbers, and how a local file is captured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snap.config import check_range
from snap.errors import ConfigError
from tests.snap_cli import run_snap


def test_a_bound_is_written_as_people_write_numbers() -> None:
    with pytest.raises(ConfigError) as raised:
        check_range("SNAP_PREPARED_CACHE_MB", 0, 0, 1024 * 1024, low_open=True)
    assert str(raised.value) == (
        "SNAP_PREPARED_CACHE_MB must be a finite number more than 0 and at most 1,048,576, got 0"
    )
    with pytest.raises(ConfigError) as raised:
        check_range("SNAP_HOST_DELAY", 2.5, 0, 0.5, low_open=False)
    assert str(raised.value).endswith("at least 0 and at most 0.5, got 2.5")


def test_a_file_url_never_captured_points_to_snap_fetch(
    home_env: dict[str, str], tmp_path: Path
) -> None:
    citation = tmp_path / "c.json"
    citation.write_text(json.dumps({"url": (tmp_path / "never.txt").as_uri(), "quote": "hello"}))
    done = run_snap(["verify", str(citation), "--json"], home_env)
    [result] = json.loads(done.stdout)["results"]
    assert result["reason"].endswith("has been captured (capture it with snap fetch PATH)")
    web = tmp_path / "web.json"
    web.write_text(json.dumps({"url": "https://x.test/never", "quote": "hello"}))
    [result] = json.loads(run_snap(["verify", str(web), "--json"], home_env).stdout)["results"]
    assert result["reason"].endswith(
        "has been captured (capture it with snap fetch URL, or verify with --fetch;"
        " fetch=true over HTTP)"
    )
    ftp = tmp_path / "ftp.json"
    ftp.write_text(json.dumps({"url": "ftp://x.test/never", "quote": "hello"}))
    [result] = json.loads(run_snap(["verify", str(ftp), "--json"], home_env).stdout)["results"]
    assert "--fetch" not in result["reason"]  # it captures only http and https
    assert result["reason"].endswith(
        "(snap captures only http and https URLs, and local files by their path)"
    )
