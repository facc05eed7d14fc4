"""A host's capture slot in Redis is a short lease, renewed while its capture runs: a worker
killed holding one frees it within the lease, not after a whole capture deadline (which held
a batch of small pages for five minutes), and a long capture keeps its slot however long."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from snap.config import Settings
from snap.workers.politeness import Politeness, RedisPoliteness
from tests.workers.conftest import REDIS_URL

LEASE = 0.6  # seconds


@pytest.fixture
def settings(queue: str) -> Settings:
    env = {"SNAP_BROKER_URL": REDIS_URL, "SNAP_QUEUE": queue, "SNAP_HOST_DELAY": "0"}
    return Settings.from_env(env | {"SNAP_HOST_CONCURRENCY": "1"})


@pytest.fixture
def limits(settings: Settings) -> Iterator[RedisPoliteness]:
    limits = RedisPoliteness(settings, lease=LEASE)
    yield limits
    limits.client.close()


def first_slot_after(limits: RedisPoliteness, token: str, give_up: float) -> float:
    """Seconds until ``token`` gets the host's one slot (``give_up`` when it does not)."""
    started = time.monotonic()
    while time.monotonic() - started < give_up:
        if limits.wait("host.test", token) == 0:
            return time.monotonic() - started
        time.sleep(0.05)
    return give_up


def test_a_slot_of_a_worker_that_died_frees_within_the_lease(limits: RedisPoliteness) -> None:
    assert limits.wait("host.test", "died") == 0  # taken, then never renewed nor released
    waited = first_slot_after(limits, "next", give_up=10 * LEASE)
    assert waited <= 3 * LEASE, waited


def test_a_slot_held_through_a_long_capture_stays_held(
    settings: Settings, limits: RedisPoliteness
) -> None:
    politeness = Politeness(settings)
    politeness.limits = limits  # the same Redis keys, with the short lease
    with politeness.slot("http://host.test/page"):
        assert first_slot_after(limits, "other", give_up=4 * LEASE) == 4 * LEASE
    assert first_slot_after(limits, "other", give_up=1.0) < 1.0  # released at the end
