"""The manual builds with warnings as errors, and documents every command and HTTP route."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import click
import pytest

from snap.cli import cli
from snap.config import Settings
from snap.service.app import ServiceConfig, create_app, openapi_document
from tests.docs.manual import (
    COMMANDS_PAGE,
    DOCS,
    HTTP_PAGE,
    README,
    ROOT,
    build_site,
    hand_written,
    headings,
    manual_text,
    pages,
)
from tests.snap_cli import subcommands

README_MAX_LINES = 200


def command_names(group: click.Group, prefix: str = "") -> list[str]:
    """Every command and subcommand, walking the click tree (groups included)."""
    found = []
    for name, command in sorted(subcommands(group).items()):
        found.append(f"{prefix}{name}")
        if isinstance(command, click.Group):
            found += command_names(command, f"{prefix}{name} ")
    return found


def leaf_commands(group: click.Group, prefix: str = "") -> list[str]:
    found = []
    for name, command in sorted(subcommands(group).items()):
        if isinstance(command, click.Group):
            found += leaf_commands(command, f"{prefix}{name} ")
        else:
            found.append(f"{prefix}{name}")
    return found


def app_routes() -> list[tuple[str, str]]:
    """(method, path) of every route of the FastAPI app, HEAD (answered by GET) aside."""
    app = create_app(ServiceConfig(Settings.from_env({"SNAP_HOME": "/nonexistent"})))
    found = set()
    for route in app.routes:
        for method in getattr(route, "methods", None) or ():
            if method != "HEAD":
                found.add((method, str(getattr(route, "path", ""))))
    return sorted(found)


def route_pattern(method: str, path: str) -> re.Pattern[str]:
    """``GET /v1/snapshots/{id}`` documents ``/v1/snapshots/{snapshot_id}``: a path parameter
    may be named differently, nothing else; the path must end there (a query may follow)."""
    parts = re.split(r"\{[^}]+\}", path)
    body = r"\{[^}/]+\}".join(re.escape(part) for part in parts)
    return re.compile(rf"{method} {body}(?![\w/{{.-])")


LEAVES = leaf_commands(cli)
ROUTES = app_routes()


def test_the_site_builds_strict_with_every_page(site: Path) -> None:
    for page in pages():
        built = site / ("index.html" if page.stem == "index" else f"{page.stem}/index.html")
        assert built.is_file(), f"{page.name} was not built"
    assert (site / "search" / "search_index.json").is_file()


@pytest.mark.parametrize(
    ("page", "fault", "named"),
    [
        ("index.md", "[a page that is not there](nowhere.md)", "nowhere.md"),
        ("index.md", "[an anchor that is not there](commands.md#snap-nowhere)", "#snap-nowhere"),
        ("commands.md", "<!-- snap-help: nowhere -->", "snap nowhere"),
    ],
    ids=["link", "anchor", "help-of-no-command"],
)
def test_a_warning_fails_the_build(tmp_path: Path, page: str, fault: str, named: str) -> None:
    pytest.importorskip("mkdocs", reason="MkDocs is a dev extra")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(DOCS, tmp_path / "docs")
    with (tmp_path / "docs" / page).open("a", encoding="utf-8") as written:
        written.write(f"\n{fault}\n")
    built = build_site(tmp_path / "site", project=tmp_path)
    assert built.returncode != 0, f"the build passed with {fault!r}"
    assert named in built.stderr


def test_nothing_is_requested_from_elsewhere_when_the_site_is_opened(site: Path) -> None:
    """No web font, script or stylesheet from another host (theme.font is off)."""
    for html in site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        sources = re.findall(r'<(?:script|link)[^>]+(?:src|href)="(https?:)?//[^"]*"', text)
        assert sources == [], f"{html.relative_to(site)} loads from another host"
        assert "fonts.googleapis" not in text
        assert "fonts.gstatic" not in text


@pytest.mark.parametrize("name", LEAVES)
def test_every_command_has_a_section_in_the_commands_page(name: str) -> None:
    assert f"snap {name}" in headings(COMMANDS_PAGE, 2), (
        f"docs/commands.md has no '## snap {name}' section"
    )


def test_every_commands_page_section_is_a_command() -> None:
    known = {f"snap {name}" for name in command_names(cli)}
    sections = [title for title in headings(COMMANDS_PAGE, 2) if title.startswith("snap ")]
    assert sections, "docs/commands.md has no command sections"
    assert [title for title in sections if title not in known] == []


@pytest.mark.parametrize("name", LEAVES)
def test_every_command_section_shows_its_help_in_the_built_site(site: Path, name: str) -> None:
    built = (site / "commands" / "index.html").read_text(encoding="utf-8")
    assert f"Usage: snap {name} " in built or f"Usage: snap {name}\n" in built


@pytest.mark.parametrize(("method", "path"), ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
def test_every_http_route_is_documented(method: str, path: str) -> None:
    written = hand_written(HTTP_PAGE)
    assert route_pattern(method, path).search(written), (
        f"docs/http.md does not document {method} {path}"
    )


def test_every_endpoint_the_http_page_lists_is_a_route() -> None:
    """The endpoints table names no route the app does not have (a renamed or removed one)."""
    row = re.compile(r"^\| `(GET|POST|PUT|PATCH|DELETE) (/[^`?\[ ]*)", re.MULTILINE)
    listed = row.findall(hand_written(HTTP_PAGE))
    assert listed, "docs/http.md has no endpoints table"
    stale = [
        f"{method} {path}"
        for method, path in listed
        if not any(
            method == real_method
            and route_pattern(real_method, real_path).fullmatch(f"{method} {path}")
            for real_method, real_path in ROUTES
        )
    ]
    assert stale == []


def test_the_openapi_document_is_rendered_and_published(site: Path) -> None:
    document = openapi_document()
    assert json.loads((site / "openapi.json").read_text(encoding="utf-8")) == document
    built = (site / "http" / "index.html").read_text(encoding="utf-8")
    for path, item in document["paths"].items():
        for method in item:
            assert f"{method.upper()} {path}" in built, f"{method.upper()} {path} not rendered"
    for name in document["components"]["schemas"]:
        assert f"Schema {name}" in built, f"the schema {name} is not rendered"


def test_every_setting_snap_reads_is_documented() -> None:
    source = "\n".join(
        path.read_text(encoding="utf-8")
        for folder in ("snap", "records", "snapshotter")
        for path in (DOCS.parent / folder).rglob("*.py")
    )
    settings = sorted(set(re.findall(r"\"(SNAP_[A-Z0-9_]+)\"", source)))
    assert settings, "no SNAP_ setting found in the code"
    written = manual_text()
    assert [name for name in settings if name not in written] == []


def test_the_readme_is_one_screen_or_two_and_points_into_the_manual() -> None:
    readme = README.read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MAX_LINES
    assert "bash examples/demo.sh     # installs snap" in readme
    assert "bash tests/run.sh         # the whole test suite" in readme
    for page in pages():
        if page.stem != "index":
            assert f"(docs/{page.name})" in readme, f"the README does not link to docs/{page.name}"
