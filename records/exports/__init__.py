"""Exports: snap's evidence in forms that someone who does not run snap can open and check."""
