"""The ``snap`` program's entry point: answer ``snap --version`` before loading anything.

Scripts and package managers probe ``snap --version`` often, and the command line proper
(click, and through the commands SQLAlchemy and the rest) costs more to import than the
interpreter takes to start.  Exactly ``snap --version`` is answered here, with the very line
click's version option prints (a test keeps the two equal); everything else goes to
``snap.cli``.
"""

from __future__ import annotations

import sys

from snap import __version__

VERSION_LINE = f"snap, version {__version__}"
INSTALLATION_BROKEN = 3  # the exit code of a store or database that cannot be used


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        try:
            sys.stdout.write(VERSION_LINE + "\n")
            sys.stdout.flush()
        except OSError as error:  # a closed pipe, a full disk: as any command's output
            from snap.output import unwritable_before_cli

            unwritable_before_cli(error)
        return
    from snap.packages import foreign_packages

    foreign = foreign_packages()
    if foreign:
        sys.stderr.write(
            "snap: error: another installation shadows part of snap: "
            + ", ".join(foreign)
            + "; install snap on its own (pipx install snap-citations)\n"
        )
        raise SystemExit(INSTALLATION_BROKEN)
    from snap.cli import main as cli_main

    cli_main()
