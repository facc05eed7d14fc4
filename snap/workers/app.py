"""The Celery app, configured from snap's Settings.

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

from celery import Celery

from snap.config import Settings

# With Redis, a message taken but never acknowledged (its worker killed as a whole) comes
# back after this many seconds; snap jobs --resume re-queues it sooner. Longer than any task.
VISIBILITY_TIMEOUT = 3600

app = Celery("snap")
_settings: list[Settings] = []


def configure(settings: Settings) -> Celery:
    """Point the app at the configured broker and queue; returns it (tasks registered)."""
    import snap.workers.tasks  # noqa: F401  (registers the tasks on the app)

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
        broker_transport_options={"visibility_timeout": VISIBILITY_TIMEOUT},
        worker_hijack_root_logger=False,
    )
    return app


def settings() -> Settings:
    """The settings the app was configured with (a worker started by ``celery -A`` reads
    them from the environment)."""
    if not _settings:
        _settings.append(Settings.from_env())
    return _settings[0]
