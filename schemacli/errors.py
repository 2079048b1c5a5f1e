"""The exception hierarchy. Core code raises these; only the CLI layer renders them and exits.

Every error carries where it happened (file, line:col, JSON pointer) and what to do about it,
so :func:`error_text` (the one place an error becomes words) can say all of it without a
traceback; each format's ``render_error`` (``schemacli.output.formats``) makes the
machine formats' documents from :func:`shown`.
"""

from __future__ import annotations

from enum import IntEnum

from schemacli import redact
from schemacli.frozen import frozen_dataclass
from schemacli.kinds import Kind


class ExitCode(IntEnum):
    """The process exit codes: a contract, documented in ``--help`` and tested."""

    OK = 0
    CHECK_FAILED = 1  # incompatible schema, failed gate, failed validation of a mapping
    INPUT_ERROR = 2  # usage error, unreadable or invalid input
    REGISTRY_ERROR = 3  # registry or network error


@frozen_dataclass
class Location:
    """Where something is: a file (or ``subject:version``), a JSON pointer, line:col in the text."""

    source: str | None = None
    pointer: str | None = None
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        parts = [self.source or "<input>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        text = ":".join(parts)
        if self.pointer is not None:
            text += f" (at {self.pointer or '/'})"
        return text


class SchemacliError(Exception):
    """Root of every error schemacli reports to a user."""

    exit_code: ExitCode = ExitCode.INPUT_ERROR

    def __init__(
        self,
        message: str,
        *,
        location: Location | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.location = location
        self.hint = hint

    def with_location(self, location: Location) -> SchemacliError:
        """Return this error with ``location`` filled in (used when a caller knows the file)."""
        self.location = location
        return self


class UsageError(SchemacliError):
    """The command line itself is wrong (conflicting options, unknown level, ...)."""


class InputError(SchemacliError):
    """An input file or value cannot be used: unreadable, bad JSON, bad YAML, bad config."""


class SchemaParseError(InputError):
    """A schema is not valid Avro (as Apache Avro Java's ``Schema.Parser`` would refuse it).

    ``kind`` says which rule it breaks (UNDEFINED_NAME, INVALID_DEFAULT, DUPLICATE_FIELD, ...);
    it becomes the finding's kind. Without one, an error raised ``from`` another
    SchemaParseError (e.g. re-raised with its file:line:col) keeps its cause's kind, and
    anything else is INVALID_SCHEMA.
    """

    def __init__(
        self,
        message: str,
        *,
        location: Location | None = None,
        hint: str | None = None,
        kind: Kind | None = None,
    ) -> None:
        super().__init__(message, location=location, hint=hint)
        self._kind = kind

    @property
    def kind(self) -> Kind:
        if self._kind is not None:
            return self._kind
        cause = self.__cause__
        if isinstance(cause, SchemaParseError):
            return cause.kind
        return Kind.INVALID_SCHEMA

    @kind.setter
    def kind(self, value: Kind) -> None:
        self._kind = value


class ConfigError(InputError):
    """The configuration file or environment is invalid."""


class CheckFailed(SchemacliError):
    """A check ran and failed (used where a command must stop early with exit code 1)."""

    exit_code = ExitCode.CHECK_FAILED


class RegistryError(SchemacliError):
    """The schema registry answered with an error, or could not be reached.

    ``status`` is the HTTP status (None when no answer came), ``error_code`` the registry's own
    code (40401, 42201, ...), ``server_message`` what the server said, verbatim.
    """

    exit_code = ExitCode.REGISTRY_ERROR

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error_code: int | None = None,
        server_message: str | None = None,
        location: Location | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, location=location, hint=hint)
        self.status = status
        self.error_code = error_code
        self.server_message = server_message


class NetworkError(RegistryError):
    """No answer: connection refused, DNS failure, TLS failure, timeout."""


def shown(err: SchemacliError) -> SchemacliError:
    """A copy of ``err`` as it may be shown: every text in it redacted. The type, exit code,
    status and registry error code are kept."""
    clone = type(err).__new__(type(err))  # no __init__: subclasses take other arguments
    clone.__dict__.update(err.__dict__)
    clone.args = tuple(redact.scrub(a) for a in err.args)
    clone.__cause__ = err.__cause__  # a parse error's kind may come from its cause
    clone.message = redact.redact(err.message)
    clone.hint = None if err.hint is None else redact.redact(err.hint)
    clone.location = None if err.location is None else redact.scrub(err.location)
    if isinstance(clone, RegistryError) and clone.server_message is not None:
        clone.server_message = redact.redact(clone.server_message)
    return clone


def error_text(err: SchemacliError) -> str:
    """``error: <where>: <what>`` then an optional ``hint:`` line. Never a traceback."""
    err = shown(err)
    # A file name, a registry's answer and a hint are one line each: a line feed in them (a
    # registry's message, a file named by a pull request) is shown escaped, never a new line a
    # CI log could read as a command. Only the message's own lines (a list) stay lines, and
    # none of them can start a command either (redact.printable).
    one = redact.printable
    where = f"{one(str(err.location))}: " if err.location is not None else ""
    lines = [f"error: {where}{err.message}"]
    server = err.server_message if isinstance(err, RegistryError) else None
    if server and server not in err.message and isinstance(err, RegistryError):
        code = f" {err.error_code}" if err.error_code is not None else ""
        status = f"HTTP {err.status}" if err.status is not None else "registry"
        lines.append(f"  {status}{code}: {one(server)}")
    if err.hint:
        lines.append(f"  hint: {one(err.hint)}")
    # Messages may quote a registry's answer or a file name: nothing in them may drive the terminal.
    return redact.printable("\n".join(lines), keep="\n")


class SchemacliWarning(UserWarning):
    """Something worth saying that does not stop the command (raised with ``warnings.warn``;
    the CLI prints each once on stderr as ``warning: ...``)."""
