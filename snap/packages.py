"""The five import names snap installs, and a check that they are snap's own.

snap's top-level packages (``snap``, ``verifier``, ``snapshotter``, ``records``,
``migrations``) carry names that other distributions on the public index use too; ``records``
is a popular one.  snap is meant to be installed on its own (``pipx install``, or a virtual
environment of its own: see docs/operations.md), and this check makes a mix-up loud: if
any of the names resolves to a file outside the folder ``snap`` itself was loaded from, another
distribution is shadowing (or has overwritten) part of snap, and no command runs on it.

``importlib.util.find_spec`` of a top-level name locates the package without running it, so the
check costs microseconds and loads nothing.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Final

OWN_PACKAGES: Final = ("snap", "verifier", "snapshotter", "records", "migrations")


def foreign_packages() -> list[str]:
    """Which of snap's import names resolve somewhere other than beside ``snap`` (or to a
    package that is not snap's), as "name (path)"; empty when the installation is whole."""
    home = Path(__file__).resolve().parent.parent
    foreign = []
    for name in OWN_PACKAGES:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        if origin is None or Path(origin).resolve().parent.parent != home:
            foreign.append(f"{name} ({origin or 'not found'})")
    return foreign
