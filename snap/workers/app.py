"""The Celery app, configured from snap's Settings, with snap's tasks registered.

The app object and its settings live in ``snap.workers.broker`` (which the tasks import); this
module registers the tasks on it, so ``celery -A snap.workers.app`` and ``configure`` see them,
and no two modules of the workers import each other.
"""

from __future__ import annotations

from celery import Celery

from snap.config import Settings
from snap.workers.broker import VISIBILITY_TIMEOUT as VISIBILITY_TIMEOUT
from snap.workers.broker import app as app
from snap.workers.broker import key_prefix as key_prefix
from snap.workers.broker import point_at
from snap.workers.broker import safe_url as safe_url
from snap.workers.broker import settings as settings
from snap.workers.broker import transport_options as transport_options


def configure(settings: Settings) -> Celery:
    """Point the app at the configured broker and queue; returns it (tasks registered)."""
    import snap.workers.tasks  # noqa: F401  (registers the tasks on the app)

    return point_at(settings)
