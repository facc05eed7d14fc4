"""``snap mcp`` on the command line: its help, its refusals, and who loads the MCP SDK."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_startup_imports import loaded, present

SDK = ("mcp", "snap.mcp")


@pytest.mark.parametrize("args", [("--help",), ("verify", "--help"), ("serve", "--help")])
def test_other_commands_do_not_load_the_sdk(tmp_path: Path, args: tuple[str, ...]) -> None:
    done, modules = loaded(tmp_path, *args)
    assert done.returncode == 0, done.stderr
    assert present(modules, SDK) == []


def test_mcp_help_names_the_tools_without_loading_the_sdk(tmp_path: Path) -> None:
    done, modules = loaded(tmp_path, "mcp", "--help")
    assert done.returncode == 0, done.stderr
    assert "verify_quote" in done.stdout
    assert "--transport" in done.stdout
    assert present(modules, SDK) == []


def test_http_beyond_loopback_without_tokens_is_one_line_exit_2(tmp_path: Path) -> None:
    # refused before anything is bound or sent: no packet leaves this machine
    done, modules = loaded(tmp_path, "mcp", "--transport", "http", "--host", "0.0.0.0")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "SNAP_API_TOKENS" in done.stderr
    assert present(modules, SDK) == []
