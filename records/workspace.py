"""The things every use case needs, opened once from settings: database, store, fetch options."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from records.db import Database
from records.evidence import StoreResolver
from snap.config import Settings
from snapshotter.store import BlobStore, open_store

if TYPE_CHECKING:
    from records.attest.seal import Attestor
    from records.texts import PreparedCache
    from snapshotter.browser import BrowserOptions
    from snapshotter.browser.session import BrowserSession
    from snapshotter.fetch import FetchOptions


_BROWSER_LOCK = threading.Lock()


@dataclass
class Workspace:
    settings: Settings
    db: Database
    store: BlobStore
    _stores: StoreResolver | None = field(default=None, repr=False)
    # tokenized texts shared across runs; only a long-lived process (snap serve) sets one
    prepared: PreparedCache | None = field(default=None, repr=False)
    # one browser for every browser capture of this process, started on first use
    _browser: BrowserSession | None = field(default=None, repr=False)
    _attestor: Attestor | None = field(default=None, repr=False)

    @classmethod
    def open(cls, settings: Settings, *, existing: bool = False) -> Workspace:
        """``existing``: for commands that only look at what is recorded; an embedded database
        that does not exist yet is then an error, not silently created empty."""
        store = open_store(
            settings.store_url,
            lock_mode=settings.lock_mode,
            lock_days=settings.lock_days,
            home=settings.home,
        )
        database = Database(settings.database_url, must_exist=existing)
        return cls(settings=settings, db=database, store=store)

    @property
    def stores(self) -> StoreResolver:
        """The store each snapshot was recorded in (the configured one first)."""
        if self._stores is None:
            settings = self.settings
            self._stores = StoreResolver(
                self.store,
                lock_mode=settings.lock_mode,
                lock_days=settings.lock_days,
                home=settings.home,
            )
        return self._stores

    @property
    def fetch_options(self) -> FetchOptions:
        from snapshotter.fetch import FetchOptions  # only commands that fetch load http and ssl

        return FetchOptions.from_settings(self.settings)

    @property
    def browser_options(self) -> BrowserOptions:
        from snapshotter.browser import BrowserOptions

        return BrowserOptions.from_settings(self.settings)

    @property
    def browser_session(self) -> BrowserSession:
        """The process's browser session; BrowserUnavailable when no Chromium is installed."""
        with _BROWSER_LOCK:  # the service captures on several threads at once
            if self._browser is None:
                from snapshotter.browser import BrowserUnavailable
                from snapshotter.browser.session import BrowserSession

                executable = self.browser_options.find()
                if executable is None:
                    raise BrowserUnavailable(
                        "a browser capture needs Chromium: apt-get install chromium,"
                        " or name it with SNAP_BROWSER"
                    )
                self._browser = BrowserSession(executable)
            return self._browser

    @property
    def attestor(self) -> Attestor:
        """The signing key and time-stamping authority, loaded on first use."""
        if self._attestor is None:
            from records.attest.seal import Attestor

            self._attestor = Attestor.from_settings(self.settings)
        return self._attestor

    def close(self) -> None:
        if self._browser is not None:
            self._browser.close()
            self._browser = None
        self.db.dispose()
