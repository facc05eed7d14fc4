"""Input adapters for web archives made by other tools: ``snap import`` of WARC and WACZ."""
