"""Compatibility: the engine, the levels, a candidate against a history, verdicts, diff."""
