"""The gate: every subject of a store checked at its level, with its readers and its lint."""
