"""The top level of the CLI as data, and its help page written without click or typer.

The data: the app's help (:data:`HELP`), the help option's names, the ``--version`` option's
help, and the ONE static table of commands (:data:`COMMANDS`: where each lives and the first
sentence of its help), which ``schemacli.app`` builds its typer app and lazy group from.

The page: ``schemacli --help`` (or ``-h``) and nothing else on the command line is answered by
:func:`answer_help` before click and typer are imported (``schemacli.entry``): the same bytes
click writes for the app (its usage line, its wrapped paragraphs, its definition lists and its
shortened command summaries, at click's width), about a third of the start-up.
tests/cli/test_top_help.py renders both roads over many widths and program names and compares
them byte for byte, and keeps every other command line on the app's road.

Standard library only: ``os``, ``sys`` and ``textwrap`` (which click loads too); not ``typing``
nor ``shutil``, whose imports cost more than the page.
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence

HELP = """Avro data contracts on Kafka: validate, check compatibility, gate CI,
read with Spark, migrate.

Exit codes: 0 ok · 1 incompatible / check failed · 2 usage or input error ·
3 registry or network error.
"""

HELP_OPTION_NAMES = ("-h", "--help")
VERSION_HELP = "Print the version and exit."


class Entry:
    """Where a command lives, and what ``--help`` lists for it without importing it. (A plain
    class: ``typing``'s NamedTuple would cost this module a tenth of a start-up.)"""

    __slots__ = ("module", "attribute", "summary")

    def __init__(self, module: str, attribute: str, summary: str) -> None:
        self.module = module
        self.attribute = attribute  # the command's function, or its group's typer.Typer
        self.summary = summary  # the first sentence of its help, as --help lists it


# The commands, in the order --help lists them.
COMMANDS: dict[str, Entry] = {
    "init": Entry(
        "schemacli.commands.init",
        "init_command",
        "Create a local store (STORE/subjects/), its configuration ([tool.schemacli] in "
        "pyproject.toml, else schemacli.toml) and, with --pre-commit / --github, the CI glue.",
    ),
    "validate": Entry(
        "schemacli.commands.validate",
        "validate_command",
        "Validate .avsc files: errors where Apache Avro Java (and so the registry) refuses, "
        "warnings where the Avro specification or other readers (fastavro, Python avro) would.",
    ),
    "lint": Entry(
        "schemacli.commands.lint",
        "lint_command",
        "Lint .avsc files: naming, namespaces, docs, optional fields, enum defaults, decimals, "
        "timestamps and Spark-unfriendly unions (schemacli lint --list-rules).",
    ),
    "check": Entry(
        "schemacli.commands.check",
        "check_command",
        "Check SCHEMA against its subject's history in the local store, and against every "
        "reader schema the subject's consumers declared there (readers/, docs/readers.md).",
    ),
    "diff": Entry(
        "schemacli.commands.diff",
        "diff_command",
        "Show what changed from OLD to NEW, field by field, and the verdict at every level.",
    ),
    "gate": Entry(
        "schemacli.commands.gate",
        "gate_command",
        "Check every subject's versions at the subject's compatibility level, and against the "
        "reader schemas its consumers declared in the store (readers/, docs/readers.md).",
    ),
    "register": Entry(
        "schemacli.commands.register", "register_command", "Register SCHEMA under --subject."
    ),
    "pull": Entry(
        "schemacli.commands.pull",
        "pull_command",
        "Snapshot subjects, their versions and levels from the registry into the local store.",
    ),
    "report": Entry(
        "schemacli.commands.report",
        "report_command",
        "Write a static HTML site: an index, one page per subject (its version timeline, the "
        "diff of each version, its level, its declared readers and their verdicts, the census "
        "chart) and one page per migration.",
    ),
    "subjects": Entry(
        "schemacli.commands.subjects",
        "subjects_app",
        "List, show and delete subjects in the schema registry.",
    ),
    "readers": Entry(
        "schemacli.commands.readers",
        "readers_app",
        "Declare, list, remove and pull the reader schemas consumers use (docs/readers.md).",
    ),
    "topics": Entry(
        "schemacli.commands.topics",
        "topics_app",
        "Look at what Kafka topics hold: the census of their writer schema versions.",
    ),
    "config": Entry(
        "schemacli.commands.registry_config",
        "config_app",
        "Read and change compatibility levels in the schema registry (global or per subject).",
    ),
    "spark": Entry(
        "schemacli.commands.spark",
        "spark_app",
        "Spark readers for Confluent-framed Avro topics: generate one, or show a Spark schema.",
    ),
    "rules": Entry(
        "schemacli.commands.rules",
        "rules_app",
        "Data-quality rules of a contract: CEL conditions and transforms (docs/rules.md).",
    ),
    "migrate": Entry(
        "schemacli.commands.migrate.group",
        "migrate_app",
        "Convert a v2 topic back to v1 with a Spark job: plan a mapping, validate it, deploy, "
        "watch and stop the job, replay its dead letters, and finish the migration once nobody "
        "depends on v1; or compile the same mapping into Confluent migration rules (rules).",
    ),
}


def complete_var_name(prog_name: str) -> str:
    """The variable the shell sets to ask for completions (``_SCHEMACLI_COMPLETE``)."""
    return f"_{prog_name}_COMPLETE".replace("-", "_").upper()


# -- the top-level help without click ---------------------------------------------------------

# The root's options as the app's help lists them: ours, then typer's two completion options
# (the app's add_completion=True), then click's help option. The words of the last three are
# typer's and click's: the byte-for-byte test of both roads says when they change.
_OPTIONS = (
    ("--version", VERSION_HELP),
    ("--install-completion", "Install completion for the current shell."),
    (
        "--show-completion",
        "Show completion for the current shell, to copy it or customize the installation.",
    ),
    (", ".join(HELP_OPTION_NAMES), "Show this message and exit."),
)
_USAGE_ARGS = "[OPTIONS] COMMAND [ARGS]..."  # a group's usage, as click writes it


def answers_help(argv: Sequence[str], environ: Mapping[str, str]) -> bool:
    """Whether this road answers ``argv``: the help option alone, no completion request (the
    app answers one whatever the words), on a POSIX system, to a UTF-8 (or absent) stdout.
    Anything else is the app's to answer."""
    if len(argv) != 1 or argv[0] not in HELP_OPTION_NAMES or os.name != "posix":
        return False
    if environ.get(complete_var_name(program_name())):
        return False
    # click writes through its own stream when stdout's encoding is ASCII: leave that to it
    encoding = getattr(sys.stdout, "encoding", None) or ""
    return sys.stdout is None or encoding.lower().replace("-", "").replace("_", "") == "utf8"


def answer_help() -> int:
    """Write the top-level help to stdout; the exit code (0, or 1 when stdout is a closed pipe,
    as click's main answers it)."""
    if sys.stdout is None:  # no stream to write to: click's echo writes nothing either
        return 0
    try:
        sys.stdout.write(help_page(program_name(), terminal_columns()) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader is gone: what is left in the buffer goes nowhere, quietly, at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return 0


def terminal_columns() -> int:
    """The terminal's width as click asks ``shutil.get_terminal_size`` for it: ``COLUMNS`` when
    it is a positive number, else the width of the terminal on stdout, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


def program_name() -> str:
    """The program's name as click's usage line gives it: the script's file name, or
    ``python -m PACKAGE`` when run as a module."""
    main = sys.modules["__main__"]
    package = getattr(main, "__package__", None)
    file_name = os.path.basename(sys.argv[0])
    if not package:
        return file_name
    name = os.path.splitext(file_name)[0]
    module = package if name == "__main__" else f"{package}.{name}"
    return f"python -m {module.lstrip('.')}"


def help_page(prog: str, columns: int) -> str:
    """The app's help for a terminal of ``columns`` (without the last newline): click's width
    rule (the columns less 2, between 50 and 78), its sections and its wrapping."""
    width = max(min(columns, 80) - 2, 50)
    text = HELP.strip()
    longest = max(len(name) for name in COMMANDS)
    commands = [(name, short_help(e.summary, width - 6 - longest)) for name, e in COMMANDS.items()]
    parts = [
        _usage(prog, width),
        "\n",
        _wrap_paragraphs(text, width, "  "),
        "\n\nOptions:\n",
        _definitions(_OPTIONS, width, "  "),
        "\nCommands:\n",
        _definitions(commands, width, "  "),
    ]
    return "".join(parts).rstrip("\n")


def short_help(text: str, limit: int) -> str:
    """A command's help as a list shows it: its first sentence, shortened at a word to
    ``limit`` characters with ``...`` (click's rule for a command's short help)."""
    words = text.partition("\n\n")[0].split()
    for i, word in enumerate(words):
        # a period ends the sentence unless a lowercase word follows it ("vs. that")
        if word.endswith(".") and (i == len(words) - 1 or not words[i + 1][0].islower()):
            words = words[: i + 1]
            break
    sentence = " ".join(words)
    if len(sentence) <= limit:
        return sentence
    if limit < 3:
        return "..."
    return textwrap.shorten(sentence, limit, placeholder="...", break_on_hyphens=False).strip()


def _usage(prog: str, width: int) -> str:
    prefix = f"Usage: {prog} "
    if width >= len(prefix) + 20:  # the arguments fit beside the program's name
        return _fill(_USAGE_ARGS, width, prefix, " " * len(prefix)) + "\n"
    indent = " " * (len("Usage: ") + 4)
    return f"{prefix}\n{_fill(_USAGE_ARGS, width, indent, indent)}\n"


def _definitions(rows: Iterable[tuple[str, str]], width: int, indent: str) -> str:
    """Two columns, the terms' at most 30 wide; a longer term puts its text on the next line."""
    rows = list(rows)
    column = min(max(len(term) for term, _ in rows), 30) + 2
    lines = []
    for term, text in rows:
        wrapped = _wrap_paragraphs(text, max(width - column - 2, 10), "").splitlines() or [""]
        if len(term) <= column - 2:
            lines.append(f"{indent}{term}{' ' * (column - len(term))}{wrapped[0]}\n")
        else:
            lines.append(f"{indent}{term}\n{' ' * (column + len(indent))}{wrapped[0]}\n")
        lines.extend(f"{' ' * (column + len(indent))}{line}\n" for line in wrapped[1:])
    return "".join(lines)


def _wrap_paragraphs(text: str, width: int, indent: str) -> str:
    """``text`` rewrapped paragraph by paragraph (blank lines between them), each keeping the
    indentation of its first line."""
    paragraphs = []
    for block in text.expandtabs().split("\n\n"):
        lines = [line for line in block.splitlines() if line]
        if lines:
            first = lines[0].lstrip()
            extra = indent + " " * (len(lines[0]) - len(first))
            paragraphs.append(_fill(" ".join([first, *lines[1:]]), width, extra, extra))
    return "\n\n".join(paragraphs)


class _Wrapper(textwrap.TextWrapper):
    """Lines as click wraps them: a word longer than the line is cut where the line ends,
    never at a hyphen inside it."""

    def _handle_long_word(
        self, reversed_chunks: list[str], cur_line: list[str], cur_len: int, width: int
    ) -> None:
        room = max(width - cur_len, 1)
        word = reversed_chunks[-1]
        cur_line.append(word[:room])
        reversed_chunks[-1] = word[room:]


def _fill(text: str, width: int, first_indent: str, indent: str) -> str:
    wrapper = _Wrapper(
        width, initial_indent=first_indent, subsequent_indent=indent, replace_whitespace=False
    )
    return wrapper.fill(text)
