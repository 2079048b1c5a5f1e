"""One short module per verb: parse arguments -> call the core -> render -> exit code."""
