"""The batch state machine, in-process on SQLite: whatever order messages arrive in, twice
or after a worker died holding them, each item ends done once, with its capture recorded once.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from records import jobs
from records.models import BatchItem, Capture
from records.vocabulary import ItemState
from records.workspace import Workspace
from snap.config import Settings
from tests.http_fixtures import LoopbackServer

ITEMS = 4
# deliver: claim and run; crash: claim, then the worker dies; twice: two deliveries claimed
# before either finished (a redelivery while the first still runs), then both run
operations = st.lists(
    st.tuples(st.sampled_from(["deliver", "crash", "twice"]), st.integers(0, ITEMS - 1)),
    max_size=12,
)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    home = tmp_path_factory.mktemp("jobs")
    env = {"SNAP_HOME": str(home), "SNAP_ALLOW_NETWORKS": "127.0.0.0/8"}
    opened = Workspace.open(Settings.from_env(env))
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    """Workers capture web URLs only (never a local file): the sources are served here."""
    with LoopbackServer() as running:
        yield running


def run(workspace: Workspace, claimed: jobs.Claimed | None) -> None:
    if claimed is not None:
        jobs.run_item(workspace, claimed)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=operations)
def test_every_item_is_done_once_whatever_the_deliveries(
    workspace: Workspace, server: LoopbackServer, steps: list[tuple[str, int]]
) -> None:
    run_name = uuid.uuid4().hex
    files = []
    for n in range(ITEMS):
        path = f"/{run_name}/source-{n}.txt"
        body = f"Source {n} of run {run_name}: it says {n * 7} things.".encode()
        server.route(path, body=body, content_type="text/plain; charset=utf-8")
        files.append(server.url(path))
    batch_id, ids = jobs.create_batch(workspace.db, "capture", {}, jobs.capture_items(files))
    for operation, index in steps:
        if operation == "deliver":
            run(workspace, jobs.claim_item(workspace.db, ids[index], batch_id))
        elif operation == "crash":
            jobs.claim_item(workspace.db, ids[index], batch_id)
        else:
            first = jobs.claim_item(workspace.db, ids[index], batch_id)
            second = jobs.claim_item(workspace.db, ids[index], batch_id)
            run(workspace, first)
            run(workspace, second)
    _, leftover = jobs.resumable_items(workspace.db, batch_id)
    jobs.run_here(workspace, batch_id, leftover)
    assert jobs.resumable_items(workspace.db, batch_id)[1] == []
    with workspace.db.reading() as session:
        states = session.scalars(
            sa.select(BatchItem.state).where(BatchItem.batch_id == batch_id)
        ).all()
        urls = session.scalars(
            sa.select(Capture.url).where(Capture.url.like(f"%{run_name}%"))
        ).all()
    assert states == ["done"] * ITEMS
    assert sorted(urls) == sorted(files)  # each recorded once
    progress = jobs.batch_progress(workspace.db, batch_id)
    assert (progress.count(ItemState.DONE), progress.finished) == (ITEMS, True)
