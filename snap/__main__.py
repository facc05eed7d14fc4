"""``python -m snap``: the same command line as the ``snap`` script."""

from snap.cli import main

main()
