"""Typed results of the registry's REST API (frozen dataclasses, built from its JSON)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from schemacli.errors import UsageError

MAX_VERSION = 2**31 - 1  # the registry stores versions as a Java int


def parse_version(text: str, *, what: str = "--version") -> int | str:
    """A version as the registry's ``/versions/{v}`` path takes it: ``"latest"`` (any case) or a
    number 1..2^31-1. UsageError naming ``what`` otherwise, before anything is sent.

    Confluent also reads -1 as "latest"; it is refused here so that a typo never picks (or
    deletes) the latest version: say ``latest``.
    """
    value = text.strip()
    if value.lower() == "latest":
        return "latest"
    if re.fullmatch(r"[0-9]+", value) and 1 <= int(value) <= MAX_VERSION:
        return int(value)
    hint = f"Give a version number from 1 to {MAX_VERSION}, or latest."
    if value == "-1":
        hint = "Give latest for the latest version (-1 is the registry's alias, not accepted here)."
    raise UsageError(f"{what}: {text!r} is not a version.", hint=hint)


class BadAnswer(ValueError):
    """A value in a registry answer of the wrong type or out of range.

    Raised while reading an answer; the client (``_reads_answer``) turns it into a RegistryError
    naming the request, so the message says only what was wrong with which value.
    """


def answer_number(value: Any, what: str) -> int:
    """``value`` as an id or version number from an answer: a JSON integer 1..2^31-1.

    Booleans (``true`` is an int in Python), floats (``1.9``, ``1e400``), strings, zero and
    negative numbers are refused with BadAnswer: silently rounding or accepting them would
    print, register against or delete the wrong version.
    """
    if type(value) is not int or not 1 <= value <= MAX_VERSION:
        raise BadAnswer(f"{what} {_shown(value)} is not a number from 1 to {MAX_VERSION}")
    return value


def answer_text(value: Any, what: str) -> str:
    """``value`` as a string from an answer (a schema, a subject, a level); BadAnswer if not."""
    if not isinstance(value, str):
        raise BadAnswer(f"{what} is {_shown(value)}, not a string")
    return value


def answer_object(value: Any, what: str) -> dict[str, Any]:
    """``value`` as a JSON object from an answer; BadAnswer if not."""
    if not isinstance(value, dict):
        raise BadAnswer(f"{what} is {_shown(value)}, not a JSON object")
    return value


def _shown(value: Any) -> str:
    import json

    try:
        text = json.dumps(value)
    except (ValueError, TypeError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True)
class Reference:
    """A schema reference: the named type ``name`` is defined by ``subject`` at ``version``."""

    name: str
    subject: str
    version: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "subject": self.subject, "version": self.version}

    @classmethod
    def from_json(cls, data: Any) -> Reference:
        """A reference from an answer; BadAnswer (or KeyError) when malformed."""
        data = answer_object(data, "a reference")
        return cls(
            name=answer_text(data["name"], "a reference's name"),
            subject=answer_text(data["subject"], "a reference's subject"),
            version=answer_number(data["version"], "a reference's version"),
        )

    @classmethod
    def parse(cls, text: str) -> Reference:
        """``name=subject:version`` (the --reference flag). Raises ValueError when malformed."""
        name, sep, rest = text.partition("=")
        subject, sep2, version = rest.rpartition(":")
        if not (sep and sep2 and name and subject and version.isdigit()):
            raise ValueError(text)
        return cls(name=name, subject=subject, version=int(version))


@dataclass(frozen=True)
class SubjectVersion:
    """One version of a subject: ``GET /subjects/{s}/versions/{v}`` or a lookup answer."""

    subject: str
    version: int
    id: int
    schema: str
    schema_type: str = "AVRO"
    references: tuple[Reference, ...] = ()
    # data contracts (Confluent 7.4+): None when the registry gave none (or dropped them)
    metadata: dict[str, Any] | None = field(default=None, compare=False)
    rule_set: dict[str, Any] | None = field(default=None, compare=False)

    @classmethod
    def from_json(cls, data: Any) -> SubjectVersion:
        """One version from an answer, every field checked; BadAnswer (or KeyError) if not."""
        data = answer_object(data, "the answer")
        return cls(
            subject=answer_text(data["subject"], "the subject"),
            version=answer_number(data["version"], "the version"),
            id=answer_number(data["id"], "the id"),
            schema=answer_text(data["schema"], "the schema"),
            schema_type=answer_schema_type(data.get("schemaType")),
            references=answer_references(data.get("references")),
            metadata=_optional_object(data.get("metadata"), "metadata"),
            rule_set=_optional_object(data.get("ruleSet"), "ruleSet"),
        )


def _optional_object(value: Any, what: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadAnswer(f"{what} is {_shown(value)}, not a JSON object")
    return value


def answer_schema_type(value: Any) -> str:
    """``schemaType`` from an answer: absent or null means AVRO."""
    return "AVRO" if value is None else answer_text(value, "schemaType")


def answer_references(value: Any) -> tuple[Reference, ...]:
    """``references`` from an answer: absent or null means none; otherwise a list of objects."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise BadAnswer(f"references is {_shown(value)}, not a JSON array")
    return tuple(Reference.from_json(r) for r in value)


@dataclass(frozen=True)
class SchemaById:
    """``GET /schemas/ids/{id}``: the schema text and its type and references."""

    id: int
    schema: str
    schema_type: str = "AVRO"
    references: tuple[Reference, ...] = ()


@dataclass(frozen=True)
class SubjectVersionRef:
    """A (subject, version) pair, e.g. from ``GET /schemas/ids/{id}/versions``."""

    subject: str
    version: int


@dataclass(frozen=True)
class Registered:
    """``POST /subjects/{s}/versions``: the id under which the schema is registered.

    ``version`` is filled when the registry says it (newer Confluent versions do) or when the
    client looked it up; ``created`` is False when the schema was already registered.
    """

    subject: str
    id: int
    version: int | None = None
    created: bool = True


@dataclass(frozen=True)
class CompatibilityAnswer:
    """``POST /compatibility/...?verbose=true``: the verdict and the registry's reasons."""

    compatible: bool
    messages: tuple[str, ...] = field(default=())
