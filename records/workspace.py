"""The things every use case needs, opened once from settings: database, store, fetch options."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from records.db import Database
from records.evidence import StoreResolver
from snap.config import Settings
from snapshotter.store import BlobStore, open_store

if TYPE_CHECKING:
    from records.attest.seal import Attestor
    from records.texts import PreparedCache
    from snapshotter.fetch import FetchOptions


@dataclass
class Workspace:
    settings: Settings
    db: Database
    store: BlobStore
    _stores: StoreResolver | None = field(default=None, repr=False)
    # tokenized texts shared across runs; only a long-lived process (snap serve) sets one
    prepared: PreparedCache | None = field(default=None, repr=False)
    _attestor: Attestor | None = field(default=None, repr=False)

    @classmethod
    def open(cls, settings: Settings, *, existing: bool = False) -> Workspace:
        """``existing``: for commands that only look at what is recorded; an embedded database
        that does not exist yet is then an error, not silently created empty."""
        store = open_store(
            settings.store_url, lock_mode=settings.lock_mode, lock_days=settings.lock_days
        )
        database = Database(settings.database_url, must_exist=existing)
        return cls(settings=settings, db=database, store=store)

    @property
    def stores(self) -> StoreResolver:
        """The store each snapshot was recorded in (the configured one first)."""
        if self._stores is None:
            settings = self.settings
            self._stores = StoreResolver(
                self.store, lock_mode=settings.lock_mode, lock_days=settings.lock_days
            )
        return self._stores

    @property
    def fetch_options(self) -> FetchOptions:
        from snapshotter.fetch import FetchOptions  # only commands that fetch load http and ssl

        return FetchOptions.from_settings(self.settings)

    @property
    def attestor(self) -> Attestor:
        """The signing key and time-stamping authority, loaded on first use."""
        if self._attestor is None:
            from records.attest.seal import Attestor

            self._attestor = Attestor.from_settings(self.settings)
        return self._attestor

    def close(self) -> None:
        self.db.dispose()
