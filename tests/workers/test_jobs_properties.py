"""The batch state machine, in-process on SQLite: whatever order messages arrive in, twice
or after a worker died holding them, each item ends done once, with its capture recorded once.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from records import jobs
from records.models import BatchItem, Capture
from records.workspace import Workspace
from snap.config import Settings

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
    opened = Workspace.open(Settings.from_env({"SNAP_HOME": str(home)}))
    yield opened
    opened.close()


def run(workspace: Workspace, claimed: jobs.Claimed | None) -> None:
    if claimed is not None:
        jobs.run_item(workspace, claimed)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=operations)
def test_every_item_is_done_once_whatever_the_deliveries(
    workspace: Workspace, tmp_path: Path, steps: list[tuple[str, int]]
) -> None:
    folder = tmp_path / uuid.uuid4().hex
    folder.mkdir()
    files = []
    for n in range(ITEMS):
        path = folder / f"source-{n}.txt"
        path.write_text(f"Source {n} of run {folder.name}: it says {n * 7} things.")
        files.append(str(path))
    batch_id, ids = jobs.create_batch(workspace.db, "capture", {}, jobs.capture_items(files))
    for operation, index in steps:
        if operation == "deliver":
            run(workspace, jobs.claim_item(workspace.db, ids[index]))
        elif operation == "crash":
            jobs.claim_item(workspace.db, ids[index])
        else:
            first = jobs.claim_item(workspace.db, ids[index])
            second = jobs.claim_item(workspace.db, ids[index])
            run(workspace, first)
            run(workspace, second)
    _, leftover = jobs.resumable_items(workspace.db, batch_id)
    jobs.run_here(workspace, leftover)
    assert jobs.resumable_items(workspace.db, batch_id)[1] == []
    with workspace.db.reading() as session:
        states = session.scalars(
            sa.select(BatchItem.state).where(BatchItem.batch_id == batch_id)
        ).all()
        urls = session.scalars(
            sa.select(Capture.url).where(Capture.url.like(f"%{folder.name}%"))
        ).all()
    assert states == ["done"] * ITEMS
    assert sorted(urls) == sorted(Path(f).as_uri() for f in files)  # each recorded once
    progress = jobs.batch_progress(workspace.db, batch_id)
    assert (progress["done"], progress["finished"]) == (ITEMS, True)
