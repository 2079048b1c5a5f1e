"""Lint: the rules over a loaded schema, their selection, and validate's refusals."""
