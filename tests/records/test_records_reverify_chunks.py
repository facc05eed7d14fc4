"""``snap reverify`` a chunk at a time (records.reverify.reverify_in_chunks): the same checks as
one ``reverify`` of every citation, each citation once, under one run id that an interrupted run
continues."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import records.reverify as reverify_module
from records.capture import capture_source
from records.citation_input import parse_document
from records.reverify import (
    reverify,
    reverify_in_chunks,
    select_citation_keys,
    select_citations,
    source_chunks,
)
from records.verify import verify_citations
from records.workspace import Workspace
from tests.records.conftest import Backend


def cite_three_sources(workspace: Workspace, tmp_path: Path) -> None:
    citations: list[dict[str, str]] = []
    for n in range(3):
        path = tmp_path / f"source-{n}.txt"
        path.write_text(f"Source {n} says the origin serves only {n} request in 10. " * 5)
        snapshot = capture_source(workspace, str(path))
        for quote in (f"serves only {n} request in 10", "a quote found nowhere", f"Source {n}"):
            citations.append({"snapshotId": snapshot.snapshot_id, "quote": quote})
    verify_citations(workspace, parse_document(citations))


def by_citation(results: list[object]) -> dict[str, str]:
    return {r.citation_id: r.status for r in results}  # type: ignore[attr-defined]


def test_chunks_check_every_citation_once_as_one_run_does(
    workspace: Workspace, tmp_path: Path
) -> None:
    cite_three_sources(workspace, tmp_path)
    whole = reverify(workspace, select_citations(workspace))
    keys = select_citation_keys(workspace)
    assert [key.id for key in keys] == [c.id for c in select_citations(workspace)]
    chunked = reverify_in_chunks(workspace, keys, chunk=2)
    assert len(chunked.results) == len(keys) == 9
    assert by_citation(chunked.results) == by_citation(whole.results)
    assert sorted(by_citation(chunked.results).values()).count("quote_found") == 6


def test_chunks_are_cut_between_sources_only(workspace: Workspace, tmp_path: Path) -> None:
    cite_three_sources(workspace, tmp_path)
    keys = select_citation_keys(workspace)
    source_of = {key.id: key.snapshot_id for key in keys}
    chunks = list(source_chunks(keys, 2))
    assert sorted(i for chunk in chunks for i in chunk) == sorted(source_of)
    assert len(chunks) == 3
    for chunk in chunks:
        assert len({source_of[i] for i in chunk}) == 1
    assert list(source_chunks(keys, 9)) == [[key.id for key in keys]]  # in their order, as before


def test_an_interrupted_chunked_run_continues_under_its_id(
    workspace: Workspace, tmp_path: Path
) -> None:
    cite_three_sources(workspace, tmp_path)
    keys = select_citation_keys(workspace)
    first = reverify_in_chunks(workspace, keys[:3], chunk=2)  # the run stopped after these
    again = reverify_in_chunks(workspace, keys, run_id=first.run_id, chunk=2)
    assert again.run_id == first.run_id
    assert again.resumed == 3
    assert len(again.results) == 9
    assert len(by_citation(again.results)) == 9


@pytest.mark.parametrize("stopped_after", [0, 1])
def test_an_interrupted_reverify_names_its_run_when_it_recorded_some(
    backend: Backend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stopped_after: int
) -> None:
    """Ctrl-C during ``snap reverify``: exit 130, and once a snapshot group is recorded, one
    line names the run, which ``--run`` then continues; before that there is nothing to go on
    with (``--run`` would refuse an id never recorded), and no run is named."""
    with backend.opened() as workspace:
        cite_three_sources(workspace, tmp_path)
    real_check = reverify_module.check_group
    groups: list[int] = []

    def check_group(*args: Any, **kwargs: Any) -> Any:
        if len(groups) == stopped_after:
            raise KeyboardInterrupt
        groups.append(1)
        return real_check(*args, **kwargs)

    monkeypatch.setattr(reverify_module, "check_group", check_group)
    stopped = backend.snap("reverify")
    assert stopped.returncode == 130
    lines = stopped.stderr.splitlines()
    assert lines[-1] == "snap: interrupted"
    if not stopped_after:
        assert lines == ["snap: interrupted"]
        return
    (named,) = [line for line in lines if line.startswith("snap: run ")]
    run_id = named.split()[2]
    assert f"snap reverify --run {run_id}" in named
    monkeypatch.setattr(reverify_module, "check_group", real_check)
    resumed = backend.snap("reverify", "--run", run_id, "--json")
    summary = json.loads(resumed.stdout)["summary"]
    assert (summary["runId"], summary["resumed"], summary["total"]) == (run_id, 3, 9)


def test_the_command_an_interrupted_run_prints_continues_over_the_same_citations(
    backend: Backend, tmp_path: Path
) -> None:
    """The line names the run with its own filters: ``--run`` alone would go on over every
    recorded citation, not the ones the run was started for."""
    import shlex

    from snap.render import interrupted_run

    with backend.opened() as workspace:
        cite_three_sources(workspace, tmp_path)
    url = (tmp_path / "source-1.txt").as_uri()
    done = backend.snap("reverify", "--url", url, "--json")
    assert done.stdout, done.stderr
    first = json.loads(done.stdout)["summary"]
    assert first["total"] == 3
    line = interrupted_run(first["runId"], url, None)
    command = shlex.split(line.split("continue it with: ", 1)[1])
    assert command[:2] == ["snap", "reverify"]
    again = backend.snap(*command[1:], "--json")
    assert again.stdout, (command, again.stderr)
    resumed = json.loads(again.stdout)["summary"]
    assert (resumed["runId"], resumed["resumed"], resumed["total"]) == (first["runId"], 3, 3)


def test_a_refetch_stopped_before_any_check_says_what_it_kept(
    backend: Backend, http_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while sources are captured again (``--refetch``): no run was recorded, so no run
    id is named; one line says the captures made are kept and nothing was checked."""
    pages = [f"/p{n}" for n in range(3)]
    for path in pages:
        words = f"Page {path} says the origin rests while the edge answers. " * 20
        http_server.route(
            path, body=f"<html><body><main><p>{words}</p></main></body></html>".encode()
        )
    cited = [{"url": http_server.url(path), "quote": "the origin rests"} for path in pages]
    (tmp_path / "cited.json").write_text(json.dumps(cited))
    assert backend.snap("fetch", *(http_server.url(path) for path in pages)).returncode == 0
    assert backend.snap("verify", str(tmp_path / "cited.json")).returncode == 0
    real_capture = reverify_module.capture_source
    tried: list[str] = []

    def capture_source(workspace: Any, url: str, **options: Any) -> Any:
        if len(tried) == 2:
            raise KeyboardInterrupt
        tried.append(url)
        return real_capture(workspace, url, **options)

    monkeypatch.setattr(reverify_module, "capture_source", capture_source)
    stopped = backend.snap("reverify", "--refetch")
    assert stopped.returncode == 130
    *before, last = stopped.stderr.splitlines()
    assert last == "snap: interrupted"
    assert before == [
        "snap: stopped while capturing sources again (2 tried): the captures made are kept"
        " (snap audit --url shows them); nothing was checked, so no run was recorded:"
        " start the reverify again"
    ]
