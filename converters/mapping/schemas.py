"""A mapping's two schemas (and its key's): read from the files it names, taken inline, or
fetched from the registry (``schemacli.registry.schemas``, references inlined), each checked as
Avro and as a record the converter supports."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from converters.mapping.model import Mapping
from converters.mapping.schemaview import view
from schemacli.contracts.avro.inline import inlined
from schemacli.contracts.avro.loader import load_schema_file
from schemacli.contracts.avro.parse import parse_schema
from schemacli.contracts.jsontext.source import UnreadableFile
from schemacli.errors import InputError, Location, RegistryError, SchemaParseError
from schemacli.textfile import Root, work_tree

if TYPE_CHECKING:
    from schemacli.registry.schemas import RegistrySchemas


def load_schema_files(mapping: Mapping, base: Path) -> Mapping:
    """Each side's schema, read (``schema``) or taken inline (``schema_json``) and checked as
    Avro (``schemacli.contracts``) and as a record the converter supports. A side naming only
    a ``subject`` keeps ``schema_json=None``: see :func:`with_registry_schemas`."""
    if mapping.key is not None:
        mapping = replace(mapping, key=load_schema_files(mapping.key, base))
    loaded = []
    for side, ep in (("source", mapping.source), ("target", mapping.target)):
        js = ep.schema_json
        if js is not None:
            js = _inline_schema(mapping, side, js)
        elif ep.schema is not None:
            path = (base / ep.schema) if not Path(ep.schema).is_absolute() else Path(ep.schema)
            js = _schema_file(mapping, side, path, _root(base))
        loaded.append(js)
    return mapping.with_schemas(*loaded)


def side_label(mapping: Mapping, side: str) -> str:
    """ "v2" / "v1" (what the converter reads / writes), "v2 key" / "v1 key" in a key section."""
    return ("v2" if side == "source" else "v1") + (" key" if mapping.prefix else "")


def _root(base: Path) -> Root | None:
    """Where a mapping's schema paths must resolve: the git work tree holding the mapping (a
    mapping in a pull request names files of its repository, never /etc/passwd or a link out
    of it); a mapping outside any work tree is the user's own, its paths read as written."""
    top = work_tree(base)
    return Root(top, f"the repository {top}") if top is not None else None


def _schema_file(mapping: Mapping, side: str, path: Path, within: Root | None) -> Any:

    label = side_label(mapping, side)
    try:
        loaded = load_schema_file(path, within=within)
    except UnreadableFile as err:
        if err.location is not None and err.location.line is not None:  # bad bytes: in the file
            raise
        raise InputError(
            f"cannot read the {mapping.prefix[1:]}{' ' if mapping.prefix else ''}{side} "
            f"schema {str(path)!r} ({label}): {err.message}",
            location=mapping.location(f"/{side}/schema"),
            hint=err.hint if err.reason == "outside" else "Paths are relative to the mapping file.",
        ) from err
    except SchemaParseError as err:
        raise SchemaParseError(
            f"{label} schema: {err.message}",
            location=err.location,
            hint=err.hint or "Check it with `schemacli validate`.",
        ) from err
    except InputError as err:  # not JSON, ...: where in the schema file
        raise InputError(
            f"{label} schema: {err.message}",
            location=err.location,
            hint=err.hint or "Check it with `schemacli validate`.",
        ) from err

    value = inlined(loaded)  # named types from other files travel inline, as the job needs
    _supported(mapping, side, value, loaded.location)
    return value


def _inline_schema(mapping: Mapping, side: str, js: Any) -> Any:

    label = side_label(mapping, side)
    pointer = f"/{side}/schema_json"
    if isinstance(js, str) and js.lstrip()[:1] in ("{", "[", '"'):
        raise InputError(
            f"{label} schema_json is JSON text in a string, not a schema",
            location=mapping.location(pointer),
            hint="Write the schema itself under `schema_json:` (YAML or JSON, unquoted), or "
            "save it as an .avsc file and name it with `schema:`.",
        )
    try:
        parse_schema(js)
    except SchemaParseError as err:
        inner = err.location.pointer if err.location and err.location.pointer else ""
        raise SchemaParseError(
            f"{label} schema_json: {err.message}",
            location=mapping.location(pointer + inner),
            hint=err.hint or "Fix the inline schema; `schemacli validate` checks an .avsc file.",
        ) from err

    def where(inner: str | None = None) -> Location:
        return mapping.location(pointer + (inner or ""))

    _supported(mapping, side, js, where)
    return js


def _supported(
    mapping: Mapping, side: str, js: Any, where: Callable[[str | None], Location]
) -> None:
    """The schema is a record the converter can handle (not a primitive, not recursive)."""

    label = side_label(mapping, side)
    try:
        kind = view(js).kind
    except InputError as err:  # valid Avro the converter does not support (recursion)
        inner = err.location.pointer if err.location else None
        raise InputError(
            f"{label} schema: {err.message}", location=where(inner), hint=err.hint
        ) from err
    if kind != "record":
        raise InputError(
            f"{label} schema is a{'n' if kind[0] in 'aeiou' else ''} {kind}, not a record",
            location=where(None),
            hint="A mapping converts records field by field; both schemas must be records.",
        )


def with_registry_schemas(mapping: Mapping, road: RegistrySchemas) -> Mapping:
    """``mapping`` with the schema of each side that names only a ``subject`` (no ``schema``,
    no ``schema_json``) taken from the registry through the one road: the subject's
    ``version`` (default the latest), self-contained (the named types of its references, to
    any depth, defined inline, as the converter and Spark need one schema text), and checked
    as a record the converter supports. Sides with a schema are left alone. A RegistryError
    says which side asked for it and how to do without."""

    if mapping.key is not None:
        mapping = replace(mapping, key=with_registry_schemas(mapping.key, road))
    loaded = []
    for side, ep in (("source", mapping.source), ("target", mapping.target)):
        js = ep.schema_json
        if js is None and ep.subject is not None:
            try:
                found = road.schema(ep.subject, ep.version or "latest")
            except RegistryError as err:
                err.message = (
                    f"the {side_label(mapping, side)} side of the mapping names only subject "
                    f"{ep.subject!r} (no `schema:`), so its schema comes from the registry: "
                    f"{err.message}"
                )
                err.hint = (
                    f"{err.hint + ' ' if err.hint else ''}Or add `schema: <file.avsc>` to that "
                    "side."
                )
                raise
            js = found.value
            _supported(mapping, side, js, found.loaded.location)
        loaded.append(js)
    return mapping.with_schemas(*loaded)


def missing_schemas(mapping: Mapping) -> list[str]:
    """JSON pointers of the sides (the key's too) whose schema is not loaded."""
    missing = [
        mapping.prefix + f"/{side}"
        for side, ep in (("source", mapping.source), ("target", mapping.target))
        if ep.schema_json is None
    ]
    return missing + (missing_schemas(mapping.key) if mapping.key is not None else [])
