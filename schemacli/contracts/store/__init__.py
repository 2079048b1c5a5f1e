"""The local store: subjects' version histories in files, naming strategies."""
