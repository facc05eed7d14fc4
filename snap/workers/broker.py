"""The Celery app object and its configuration from snap's Settings (tasks.py and
politeness.py import it here; ``snap.workers.app.configure`` also registers the tasks).

Delivery settings, and why:
- ``task_acks_late``: a message is acknowledged after its task ran, not before, so a worker
  that dies mid-task leaves it to be delivered again (tasks are idempotent, see tasks.py);
- ``task_reject_on_worker_lost``: a pool process killed mid-task (SIGKILL, out of memory)
  puts its message back on the queue at once instead of acknowledging it;
- ``worker_prefetch_multiplier = 1``: a worker holds one message per pool process, so a
  killed worker strands as few as possible and long captures do not sit behind each other;
- no result backend: the result and state of every item are in the database (records/jobs.py).
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from celery import Celery

from snap.config import Settings

# With Redis, a message taken but never acknowledged (its worker killed as a whole) comes
# back after this many seconds; snap jobs --resume re-queues it sooner. Longer than any task.
VISIBILITY_TIMEOUT = 3600

app = Celery("snap")
_settings: list[Settings] = []


def point_at(settings: Settings) -> Celery:
    """Point the app at the configured broker and queue; returns it."""
    _settings[:] = [settings]
    app.conf.update(
        broker_url=settings.broker_url,
        task_default_queue=settings.queue,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        broker_connection_retry_on_startup=True,
        broker_transport_options=transport_options(settings),
        worker_hijack_root_logger=False,
    )
    return app


def transport_options(settings: Settings) -> dict[str, object]:
    """On Redis every key of a deployment starts ``snap:<queue>:`` (its queue, and the hash of
    messages taken but not yet acknowledged), so two deployments, or two test runs, sharing a
    Redis server never see each other's messages."""
    options: dict[str, object] = {"visibility_timeout": VISIBILITY_TIMEOUT}
    if (settings.broker_url or "").startswith(("redis://", "rediss://")):
        options["global_keyprefix"] = key_prefix(settings)
    return options


def safe_url(url: str) -> str:
    """The broker URL with any password replaced by ``***``, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rpartition("@")
    user = (parts.username or "") + ":***"
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc[2]}"))


def key_prefix(settings: Settings) -> str:
    return f"snap:{settings.queue}:"


def settings() -> Settings:
    """The settings the app was configured with (a worker started by ``celery -A`` reads
    them from the environment)."""
    if not _settings:
        _settings.append(Settings.from_env())
    return _settings[0]
