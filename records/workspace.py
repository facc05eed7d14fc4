"""The things every use case needs, opened once from options: database, store, fetch options.

``Workspace.open`` takes the records' own ``WorkspaceOptions`` or anything that builds them
(the shell's ``Settings``); what it was opened with is kept, unread here, in ``config`` for the
shell (``snap.config.settings_of``)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from records.db import Database
from records.evidence import StoreResolver
from records.options import BuildsWorkspaceOptions, WorkspaceOptions
from snapshotter.store import BlobStore, open_store

if TYPE_CHECKING:
    from records.prepared import PreparedFolder
    from records.texts import PreparedCache
    from snapshotter.browser import BrowserOptions
    from snapshotter.browser.session import BrowserSession
    from snapshotter.options import FetchOptions


_BROWSER_LOCK = threading.Lock()


@dataclass
class Workspace:
    settings: WorkspaceOptions
    db: Database
    store: BlobStore
    _stores: StoreResolver | None = field(default=None, repr=False)
    # tokenized texts shared across runs: in memory in a long-lived process (snap serve), in
    # the prepared-source folder for the next process (``shared_prepared``)
    prepared: PreparedCache | None = field(default=None, repr=False)
    # one browser for every browser capture of this process, started on first use
    _browser: BrowserSession | None = field(default=None, repr=False)
    # the signing key and TSA, loaded on first use (records.attest.seal.attestor_of)
    attestor_cache: object = field(default=None, repr=False)
    # seals verified by this process (records.attest.checks.seal_checks_of)
    seal_checks: object = field(default=None, repr=False)
    # what the workspace was opened with (the shell's Settings): records never reads it
    config: object = field(default=None, repr=False)

    @classmethod
    def open(
        cls, config: WorkspaceOptions | BuildsWorkspaceOptions, *, existing: bool = False
    ) -> Workspace:
        """``existing``: for commands that only look at what is recorded; an embedded database
        that does not exist yet is then an error, not silently created empty."""
        settings = config if isinstance(config, WorkspaceOptions) else config.workspace_options()
        store = open_store(
            settings.store_url,
            lock_mode=settings.lock_mode,
            lock_days=settings.lock_days,
            home=settings.home,
        )
        database = Database(settings.database_url, must_exist=existing)
        return cls(settings=settings, db=database, store=store, config=config)

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

    def prepared_folder(self) -> PreparedFolder | None:
        """The folder prepared sources are kept in across processes; None when turned off
        (``SNAP_PREPARED_CACHE=off``)."""
        folder = self.settings.prepared_cache
        if folder is None:
            return None
        from records.prepared import PreparedFolder

        return PreparedFolder(
            folder,
            max_bytes=self.settings.prepared_cache_bytes,
            key_file=self.settings.home / "prepared.key",
        )

    def shared_prepared(self) -> PreparedCache | None:
        """Tokenized texts shared by the runs of this process and with the next ones: the
        service's in-memory cache (``prepared``) when set, else one over the prepared-source
        folder alone, made on first use (one run already keeps what it reads:
        ``records.texts.SnapshotTexts``); None when the folder is turned off."""
        if self.prepared is None:
            folder = self.prepared_folder()
            if folder is None:
                return None
            from records.texts import PreparedCache

            self.prepared = PreparedCache(max_code_points=0, folder=folder)
        return self.prepared

    @property
    def fetch_options(self) -> FetchOptions:
        return self.settings.fetch

    @property
    def browser_options(self) -> BrowserOptions:
        from snapshotter.browser import BrowserOptions

        settings = self.settings
        return BrowserOptions(
            executable=settings.browser,
            max_resources=settings.browser_max_resources,
            max_total_bytes=settings.browser_max_total_bytes,
        )

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

    def close(self) -> None:
        if self._browser is not None:
            self._browser.close()
            self._browser = None
        self.db.dispose()
