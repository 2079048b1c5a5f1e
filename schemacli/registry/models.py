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


@dataclass(frozen=True)
class Reference:
    """A schema reference: the named type ``name`` is defined by ``subject`` at ``version``."""

    name: str
    subject: str
    version: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "subject": self.subject, "version": self.version}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Reference:
        return cls(
            name=str(data["name"]), subject=str(data["subject"]), version=int(data["version"])
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

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SubjectVersion:
        return cls(
            subject=str(data["subject"]),
            version=int(data["version"]),
            id=int(data["id"]),
            schema=str(data.get("schema", "")),
            schema_type=str(data.get("schemaType") or "AVRO"),
            references=tuple(Reference.from_json(r) for r in data.get("references") or ()),
        )


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
