"""Declared readers: readers/<consumer>/ files, and a writer judged against them."""
