"""Fixes as edits of a schema file's text: suggested fixes, proven, and the --fix loop."""
