"""The things every use case needs, opened once from settings: database, store, fetch options."""

from __future__ import annotations

from dataclasses import dataclass

from records.db import Database
from snap.config import Settings
from snapshotter.fetch import FetchOptions
from snapshotter.store import BlobStore, open_store


@dataclass
class Workspace:
    settings: Settings
    db: Database
    store: BlobStore

    @classmethod
    def open(cls, settings: Settings) -> Workspace:
        store = open_store(
            settings.store_url, lock_mode=settings.lock_mode, lock_days=settings.lock_days
        )
        return cls(settings=settings, db=Database(settings.database_url), store=store)

    @property
    def fetch_options(self) -> FetchOptions:
        return FetchOptions.from_settings(self.settings)

    def close(self) -> None:
        self.db.dispose()
