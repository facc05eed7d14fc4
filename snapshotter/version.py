"""snap's version, here in the lowest layer that records it (the User-Agent and provenance of
every fetch, the software fields of exports); ``snap.__version__`` re-exports it."""

__version__ = "0.1.0"
