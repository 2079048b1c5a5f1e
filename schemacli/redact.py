"""One redaction for everything schemacli prints, logs or puts in a document.

Two things are masked as ``***``:

* anything shaped like the user info of a URL, whether or not the text parses as one:
  ``scheme://user:pass@``, ``scheme:/user@``, ``scheme//user@``, ``//user@`` and a bare
  ``user:pass@`` (a registry URL given without its scheme: ``alice:***@host:1``, the name
  before the colon reads as a scheme and stays). A bare ``name@host`` without a colon is an
  e-mail address as often as a credential, so it is masked only when it is a secret given to
  this process (below); so is git's ``HEAD@{1}``, never;
* every secret value given to this process: registry passwords, bearer tokens, the user info of
  a registry URL from any source, the Basic credential as it travels, Kafka SASL and TLS
  passwords. Whoever reads a secret from a flag, the environment or a file hands it to
  :func:`remember` before anything can fail.

Why one process-wide set rather than secrets passed down: the renderers, the error renderer, the
warning printer and the log formatter are the last line of defence, and a secret must be masked
there even when the code that raised the error never held it. A process runs one command, so
the set lives as long as the process; :func:`scope` gives a part of one its own set (the test
suite opens one per test, so a password one test plants is never masked in another's output).

:func:`redact` takes text; :func:`scrub` walks a report (dataclasses, tuples, lists, dicts) and
redacts every string in it, so machine formats redact values *before* they are serialised: an
escape in JSON or XML never hides a secret, and masking never breaks a document's syntax.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from enum import Enum
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import unquote

if TYPE_CHECKING:
    import logging

MASK = "***"

# Secrets shorter than this are masked only where they stand alone: replacing every "1" of a
# password "1" garbles "[Errno 111]" into "[Errno *********]" (and, by the pattern of stars,
# shows the secret anyway).
SHORT_SECRET = 4


class _Lazy:
    """A regular expression compiled when first used: many runs (``validate`` of a valid file)
    redact nothing, and compiling this module's patterns cost every command's start-up ~8 M
    instructions. ``_PATTERN()`` is the compiled pattern."""

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def __call__(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._pattern, self._flags)
        return self._compiled


# A scheme, bounded so that a long run of letters and dots cannot make the search quadratic.
_SCHEME = r"[A-Za-z][A-Za-z0-9+.-]{0,31}"
# What ends a URL-ish run in prose: white space, quotes, brackets (not braces: see _mask_run).
_DELIMITERS = _Lazy(r"([\s'\"`<>()\[\]]+)")
# The lead of user info in a run: a scheme and a colon with any slashes, a scheme and two or more
# slashes (a lost colon), or a bare '//'.
_LEAD = _Lazy(rf"\b{_SCHEME}(?::/*|//+)|//")
# A whole registry URL as given: its lead (if any), then everything up to its last '@'.
_URL_INFO = _Lazy(rf"\s*(?:{_SCHEME}(?::/*|//+)|//)?(?P<info>.*)@", re.DOTALL)

_scopes: list[set[str]] = [set()]
_ordered: dict[int, tuple[str, ...]] = {}  # id of a scope's set -> its secrets, longest first


def remember(*values: str | None) -> None:
    """Mask these values (and their escaped forms) in everything printed from now on, until
    the current :func:`scope` ends. Empty values and ``None`` are ignored."""
    for value in values:
        if value:
            _scopes[-1].update(_forms(value))
            _ordered.pop(id(_scopes[-1]), None)


def remember_url(url: str | None) -> None:
    """Remember the user info of a registry URL, however mangled (``alice:SECRET@host:1``,
    ``http:/alice:SECRET@h``, ``https://TOKEN@host``): the whole of it, the password after its
    first ':' (or the lone name, which may be a token), percent-decoded as well."""
    if not url:
        return
    match = _URL_INFO().match(url)
    if match is None or not match.group("info"):
        return
    info = match.group("info")
    name, colon, password = info.partition(":")
    secret = password if colon else name
    remember(info, secret, unquote(info), unquote(secret))


def remember_basic(user: str | None, password: str | None) -> None:
    """Remember a password and the Basic credential it travels as (base64 of user:password)."""
    if user is None or not password:
        return
    credential = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    remember(password, credential)


# Kafka client settings whose value is a secret (Java and librdkafka names), and the secrets
# inside a JAAS or OAUTHBEARER config line.
_SECRET_PROPERTY = _Lazy(
    r"password|secret|jaas\.config$|oauthbearer\.config$|key\.pem$|keystore\.key$", re.I
)
_QUOTED_SECRET = _Lazy(
    r"\b(?:password|clientSecret|secret)\s*=\s*(?:\"((?:[^\"\\]|\\.)*)\"|([^\s\";]+))", re.I
)


def remember_properties(properties: Mapping[str, str]) -> None:
    """Remember the secrets of a Kafka properties file: ``sasl.password``, ``ssl.key.password``,
    ``ssl.truststore.password``, a private key's PEM, a ``sasl.jaas.config`` line whole and the
    password quoted in it (keys with or without the ``kafka.`` prefix)."""
    for key, value in properties.items():
        if _SECRET_PROPERTY().search(key):
            inner = [m.group(1) or m.group(2) for m in _QUOTED_SECRET().finditer(value)]
            remember(value, *inner, *(v.replace('\\"', '"') for v in inner))


def secrets() -> frozenset[str]:
    """The secrets remembered in the current scope (each with its escaped forms)."""
    return frozenset(_scopes[-1])


@contextmanager
def scope() -> Iterator[None]:
    """A fresh set of secrets for one command; the previous set is back when it ends."""
    _scopes.append(set())
    try:
        yield
    finally:
        _ordered.pop(id(_scopes.pop()), None)


def redact(text: str, extra: Iterable[str | None] = ()) -> str:
    """``text`` with URL user info and every remembered secret (and each of ``extra``) masked.

    A secret of SHORT_SECRET characters or more is masked wherever it occurs; a shorter one only
    as a whole word (not inside a longer run of letters and digits)."""
    known = _longest_first(_scopes[-1])
    more = {form for value in extra if value for form in _forms(value)}
    if more:
        known = _longest_first(more | _scopes[-1], cache=False)
    if not _may_hide(text, known):
        return text
    for secret in known:  # the longest first: no half-masked rest
        if secret not in text:
            continue
        if len(secret) >= SHORT_SECRET:
            text = text.replace(secret, MASK)
        else:
            text = re.sub(rf"(?<!\w){re.escape(secret)}(?!\w)", MASK, text)
    # Secrets first: a password holding an '@' is then masked whole, not cut at its '@'.
    return _mask_query_secrets(mask_userinfo(text))


# A URL's query parameter that carries a credential (?password=..., &access_token=...): its
# value is masked whatever the URL, as its user info is.
_QUERY_SECRET = _Lazy(
    r"([?&;][\w.-]{0,40}?(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key)"
    r"[\w.-]{0,40}=)[^&#;\s'\"<>]+",
    re.I,
)


def nothing_to_mask(text: str) -> bool:
    """Whether :func:`redact` leaves every part of ``text`` as it is: no secret is remembered,
    and the text holds no '@' (user info) and no '=' (a query secret). A document that writes
    each string of a report whole (JSON: neither character is ever escaped) and holds nothing
    to mask held no string that :func:`scrub` would have changed."""
    return not _may_hide(text, _longest_first(_scopes[-1]))


def _may_hide(text: str, known: tuple[str, ...]) -> bool:
    """Whether :func:`redact` could change ``text``: a secret is remembered, or the text holds
    an '@' (user info) or an '=' (a query secret). Most of a report's strings hold neither."""
    return bool(known) or "@" in text or "=" in text


def _mask_query_secrets(text: str) -> str:
    if "=" not in text:
        return text
    return _QUERY_SECRET().sub(lambda m: m.group(1) + MASK, text)


def _longest_first(secrets: set[str], *, cache: bool = True) -> tuple[str, ...]:
    ordered = _ordered.get(id(secrets)) if cache else None
    if ordered is None:
        ordered = tuple(sorted(secrets, key=len, reverse=True))
        if cache:
            _ordered[id(secrets)] = ordered
    return ordered


def mask_userinfo(text: str) -> str:
    """``text`` with only what looks like URL user info masked (no remembered secret)."""
    if "@" not in text:
        return text
    parts = _DELIMITERS().split(text)  # runs at even indexes, delimiters at odd ones
    return "".join(_mask_run(p) if i % 2 == 0 and "@" in p else p for i, p in enumerate(parts))


T = TypeVar("T")


def scrub(value: T) -> T:
    """``value`` with :func:`redact` applied to every string in it: through frozen dataclasses
    (rebuilt with ``dataclasses.replace``), tuples, lists, dicts (keys too) and paths. Enums
    and numbers are left as they are. Each distinct string is redacted once, and a tuple or
    dataclass met again (a fix's edits shared by several findings) is walked once."""
    return cast(T, _Scrub(_longest_first(_scopes[-1])).walk(value))  # each value as its type


def formatter(fmt: str) -> logging.Formatter:
    """A logging formatter whose every line is redacted (``--verbose`` logs of HTTP calls).
    ``logging`` is imported here, not at the top: only ``--verbose`` needs it, and every command
    loads this module (its import was about a twentieth of ``validate``'s start-up)."""
    import logging

    class Redacting(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            return redact(super().format(record))

    return Redacting(fmt)


_ATOMS = frozenset({type(None), bool, int, float})


class _Scrub:
    """One :func:`scrub` walk. Gives ``value`` itself back when nothing in it changed (the
    usual case: no secret, no '@'), so a report of 100,000 findings is walked, not rebuilt."""

    def __init__(self, known: tuple[str, ...]) -> None:
        self.known = known
        self.texts: dict[str, str] = {}  # a string -> its redacted form
        self.seen: dict[int, Any] = {}  # id of a tuple or dataclass in the value -> its result

    def text(self, text: str) -> str:
        if not _may_hide(text, self.known):
            return text
        done = self.texts.get(text)
        if done is None:
            done = self.texts[text] = redact(text)
        return text if done == text else done  # this very string when nothing was masked

    def walk(self, value: Any) -> Any:
        kind: type = type(value)  # not type[Any], which mypy finds unhashable for functools.cache
        if kind is str:
            return self.text(value)
        shape = _shape(kind)
        if shape is _Shape.ATOM:
            return value
        if shape is _Shape.TEXT:  # a str subclass
            return redact(value)
        if shape is _Shape.PATH:
            cleaned = redact(str(value))
            return value if cleaned == str(value) else kind(cleaned)
        if shape is _Shape.LIST:
            return [self.walk(v) for v in value]
        if shape is _Shape.DICT:
            return {self.walk(k): self.walk(v) for k, v in value.items()}
        if shape is _Shape.OTHER:
            return value
        # tuples and dataclasses are immutable and alive as long as ``value``: kept by id
        done = self.seen.get(id(value), _UNSEEN)
        if done is _UNSEEN:
            done = self.seen[id(value)] = self.rebuilt(value, kind, shape)
        return done

    def rebuilt(self, value: Any, kind: type, shape: _Shape) -> Any:
        if shape is _Shape.TUPLE:
            if _ATOMS.issuperset(map(type, value)):  # (line, column) and such
                return value
            items = tuple(self.walk(v) for v in value)
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return kind(*items) if hasattr(value, "_fields") else items
        changes = {}
        for name in _init_fields(kind):
            old = getattr(value, name)
            new = self.walk(old)
            if new is not old:
                changes[name] = new
        return dataclasses.replace(value, **changes) if changes else value


class _Shape(Enum):
    """How :class:`_Scrub` walks a value of one type."""

    ATOM = "atom"  # None, bools, numbers, enums: left as they are
    TEXT = "text"  # a str subclass
    PATH = "path"
    LIST = "list"
    DICT = "dict"
    TUPLE = "tuple"
    DATACLASS = "dataclass"
    OTHER = "other"  # anything else: left as it is


@functools.cache
def _shape(kind: type) -> _Shape:
    if kind in _ATOMS or issubclass(kind, Enum):
        return _Shape.ATOM
    for base, shape in (
        (str, _Shape.TEXT),
        (PurePath, _Shape.PATH),
        (tuple, _Shape.TUPLE),
        (list, _Shape.LIST),
        (dict, _Shape.DICT),
    ):
        if issubclass(kind, base):
            return shape
    return _Shape.DATACLASS if dataclasses.is_dataclass(kind) else _Shape.OTHER


_UNSEEN = object()


@functools.cache
def _init_fields(kind: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(kind) if f.init)


def _mask_run(run: str) -> str:
    """One run of text (no white space, quotes or brackets) with its user info masked: all
    that stands between the lead (``scheme:``, ``scheme//``, ``//``) and the run's last '@', or
    the whole ``name:secret`` before it when there is no lead. Linear in the run's length."""
    at = run.rfind("@")
    if run.startswith("{", at + 1):  # git's reflog selector (git:HEAD@{1}), not user info
        return run
    head = run[:at]
    lead = _LEAD().search(head)
    if lead is not None:
        return run if lead.end() == at else run[: lead.end()] + MASK + run[at:]
    if ":" in head:
        return MASK + run[at:]
    return run


def _forms(secret: str) -> set[str]:
    """A secret as it may appear in text: itself, as Python's repr shows it (the form our
    messages quote values in) and as JSON escapes it."""
    forms = {secret, repr(secret)[1:-1], json.dumps(secret)[1:-1]}
    forms.add(json.dumps(secret, ensure_ascii=False)[1:-1])
    forms.add(secret.encode("unicode_escape", "backslashreplace").decode("ascii"))
    return {form for form in forms if form}


# Text that is safe to print on a terminal. Names and messages can come from outside: a registry's
# subjects and error messages, file names, schema names. A control character among them (ESC,
# BEL, C1 such as CSI) or a bidi override could retitle, recolour or rewrite the user's terminal,
# so text output shows them as visible escapes like ``\\x1b``. JSON needs none of this: JSON
# escapes them itself. Safe also means without secrets: printable() masks first.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def printable(text: str, *, keep: str = "") -> str:
    """``text`` redacted (``schemacli.redact``), then with control characters and bidi
    overrides (except those in ``keep``) escaped. Where line breaks are kept, no line can start
    a CI log command (:func:`inert_lines`): without ``keep``, a value is one line."""
    text = redact(text)

    def safe(match: re.Match[str]) -> str:
        char = match.group()
        return char if char in keep else char.encode("unicode_escape").decode("ascii")

    shown = _UNSAFE().sub(safe, text)  # at C speed: a report of 100,000 findings passes through
    return inert_lines(shown) if "\n" in keep or "\r" in keep else shown


# Unicode's control characters (category Cc: C0, DEL, C1) and the bidi overrides.
_UNSAFE = _Lazy("[\x00-\x1f\x7f-\x9f" + "".join(sorted(_BIDI)) + "]")


# A line a CI runner reads as a command, not as log text: GitHub's workflow commands
# (``::error ...::``, after leading white space) and Azure Pipelines' logging commands.
_LOG_COMMAND = _Lazy(r"^([ \t]*)(::|##\[|##vso\[)", re.MULTILINE)


def inert_lines(text: str) -> str:
    """``text`` with a backslash before each line that a CI runner would read as a command
    (``::error file=..::``): a registry's message or a file name printed in a log, line breaks
    and all, never raises an annotation or stops the log. Our own text lines never start so."""
    return _LOG_COMMAND().sub(r"\1\\\2", text)
