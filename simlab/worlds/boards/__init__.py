"""The boards world family (cobot structure building)."""
