"""The ``snap`` commands, one module per family; ``snap.cli`` imports each on first use."""
