"""Names as Apache Avro Java 1.12 reads them: its default name validator (Unicode letters and
digits allowed), namespaces, full names and aliases, each refused with the pointer and a hint."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any, cast

from schemacli.errors import Location, SchemaParseError
from schemacli.kinds import Kind

_ASCII_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
INVALID_NAME = Kind.INVALID_NAME
INVALID_SCHEMA = Kind.INVALID_SCHEMA


def _refuse(kind: Kind, message: str, pointer: str, hint: str) -> SchemaParseError:
    return SchemaParseError(message, location=Location(pointer=pointer), hint=hint, kind=kind)


def is_plain_name(text: str) -> bool:
    return bool(text) and all(_ASCII_NAME.match(part) for part in text.split("."))


# Names already found valid (names repeat across fields and schemas); bounded.
VALID_NAMES: set[str] = set()
VALID_NAMESPACES: set[str] = set()


def remember_valid(name: str) -> None:
    if len(VALID_NAMES) > 50_000:
        VALID_NAMES.clear()
    VALID_NAMES.add(name)


def name_error(name: Any) -> str | None:
    """Why Java's default name validator (``NameValidator.UTF_VALIDATOR``) refuses ``name``."""
    if not isinstance(name, str):
        return "Null name"
    if _ASCII_NAME.match(name):
        return None
    if not name:
        return "Empty name"
    first = name[0]
    if not (_is_java_letter(first) or first == "_"):
        return f"Illegal initial character: {name}"
    for ch in name[1:]:
        if not (_is_java_letter(ch) or ch == "_" or _is_java_digit(ch)):
            return f"Illegal character in: {name}"
    return None


def _is_java_letter(ch: str) -> bool:
    # Java checks UTF-16 chars: a character outside the BMP is two surrogates, neither a letter.
    return ord(ch) <= 0xFFFF and unicodedata.category(ch)[0] == "L"


def _is_java_digit(ch: str) -> bool:
    return ord(ch) <= 0xFFFF and unicodedata.category(ch) == "Nd"


def valid_namespace(space: str, fullname: str, pointer: str) -> None:
    """Refuse a namespace with a part Java's validator refuses; remember a valid one."""
    for part in space.split("."):
        problem = name_error(part)
        if problem:
            raise _refuse(
                INVALID_NAME,
                f'Namespace part "{part}" of {fullname!r} is invalid: {problem}',
                pointer,
                "Namespace parts are names separated by dots: a letter or _ then "
                "letters, digits or _.",
            )
    if len(VALID_NAMESPACES) > 10_000:
        VALID_NAMESPACES.clear()
    VALID_NAMESPACES.add(space)


def valid_name(name: Any, pointer: str, what: str) -> str:
    problem = name_error(name)
    if problem:
        raise _refuse(
            INVALID_NAME,
            f"Invalid {what} {json.dumps(name, ensure_ascii=False)}: {problem}",
            pointer,
            "A name starts with a letter or _ and continues with letters, digits or _ "
            "(no dots, dashes or spaces).",
        )
    return cast(str, name)  # name_error refuses anything but a str


def split_name(name: str, space: str | None) -> tuple[str, str | None]:
    """Java's Name(name, space): a dotted name carries its own namespace; "" means none."""
    dot = name.rfind(".")
    if dot >= 0:
        space = name[:dot]
        name = name[dot + 1 :]
    return name, space or None


def named_aliases(node: dict[str, Any], pointer: str, space: str | None) -> tuple[str, ...]:
    """The aliases as Java's ``NamedSchema.getAliases()`` spells them.

    An alias without a dot takes the type's own namespace (not the enclosing one); a dotted
    alias carries its own, unchecked (Java validates only the last part). An alias in the
    null namespace (``".Old"``) of a type that has a namespace is spelled ``.Old``: no full
    name equals it, so Java's compatibility check never matches it.
    """
    raw = aliases_of(node, pointer)
    out = []
    for index, alias in enumerate(raw):
        simple, alias_space = split_name(alias, space)
        valid_name(simple, f"{pointer}/aliases/{index}", "alias")
        if alias_space:
            out.append(f"{alias_space}.{simple}")
        else:
            out.append(f".{simple}" if space else simple)
    return tuple(dict.fromkeys(out))


def aliases_of(node: dict[str, Any], pointer: str) -> list[str]:
    if "aliases" not in node:
        return []
    raw = node["aliases"]
    if not isinstance(raw, list):
        raise _refuse(
            INVALID_SCHEMA,
            '"aliases" is not an array',
            pointer + "/aliases",
            'Write aliases as an array of names: "aliases": ["OldName"].',
        )
    for index, alias in enumerate(raw):
        if not isinstance(alias, str):
            raise _refuse(
                INVALID_SCHEMA,
                f"Alias is not a string: {json.dumps(alias)}",
                f"{pointer}/aliases/{index}",
                "Each alias is a name in quotes.",
            )
    return raw
