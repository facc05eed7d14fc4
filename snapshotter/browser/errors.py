"""The browser path's own errors, beside the code that raises them.

``BrowserUnavailable`` is a setting snap cannot honour (``--browser`` with no Chromium or no
Playwright installed): exit 2, nothing captured. ``BrowserFailed`` is a capture that failed in
the browser (it crashed, would not start, or the capture deadline passed): a failed capture,
recorded as such, exit 1.
"""

from __future__ import annotations

from snapshotter.errors import ConfigError, FetchError


class BrowserUnavailable(ConfigError):
    """No usable Chromium (or no Playwright) for a browser capture."""


class BrowserFailed(FetchError):
    """The browser crashed, could not be started, or the capture ran past its deadline."""
