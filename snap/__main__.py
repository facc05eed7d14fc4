"""``python -m snap``: the same command line as the ``snap`` script."""

from snap.entry import main

main()
