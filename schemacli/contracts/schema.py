"""The Avro schema model and its parser, mirroring Apache Avro Java 1.12's ``Schema.Parser``.

Confluent Schema Registry parses every schema with the Java library, so what it accepts is what
we accept, and what it refuses we refuse with a :class:`SchemaParseError` that carries the JSON
pointer of the offending node and a hint. Behaviour confirmed against the jar (see
``tests/oracle``), some of it surprising and documented in ``docs/compatibility.md``:

* names follow Java's default validator: Unicode letters and digits are allowed;
* a reference may point to a named type defined *later* in the same schema;
* a field default is valid for a union when it fits *any* branch (not only the first);
* a field default for an enum only needs to be a string (it need not be a symbol);
* ``"NaN"``/``"Infinity"``/numeric strings are accepted as defaults of float/double fields;
* logical types are never validated (an invalid one is silently ignored);
* a named type may be defined twice if Java's ``equals`` holds at the moment of definition.

Every node is an immutable object that keeps the JSON pointer where it was defined. A reference
to a named type resolves to the defining object itself, so recursive schemas are cyclic graphs
(compare nodes by identity, as the compatibility engine does).
"""

from __future__ import annotations

import functools
import gc
import json
import math
import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from schemacli.contracts import nesting
from schemacli.contracts.kinds import Kind
from schemacli.contracts.numberlength import NUMBER_TOO_LONG_HINT, NumberTooLong
from schemacli.errors import Location, SchemaParseError
from schemacli.textfile import line_column

PRIMITIVE_TYPES = frozenset(
    {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
)
NAMED_TYPES = frozenset({"record", "enum", "fixed"})
ORDERS = ("ascending", "descending", "ignore")

_EMPTY: Mapping[str, Any] = MappingProxyType({})
_ASCII_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_NAMED_RESERVED = frozenset({"type", "name", "namespace", "doc", "aliases"})
_RESERVED = {
    "record": _NAMED_RESERVED | {"fields"},
    "enum": _NAMED_RESERVED | {"symbols", "default"},
    "fixed": _NAMED_RESERVED | {"size"},
    "array": frozenset({"type", "items"}),
    "map": frozenset({"type", "values"}),
}
_FIELD_RESERVED = frozenset({"name", "type", "doc", "default", "aliases", "order"})
_ARRAY_RESERVED = _RESERVED["array"]
_MAP_RESERVED = _RESERVED["map"]
_MISSING = object()
_INDEXES = tuple(str(i) for i in range(4096))  # field positions as pointer tokens
SELF_COMPATIBLE = "_self_compatible"  # a private mark on a parsed root; see _parse

# SchemaParseError.kind: which rule a refused schema breaks (the finding kind `validate` shows),
# from the catalogue; bound to names once (an enum attribute costs ~0.7 us on 3.11).
UNDEFINED_NAME = Kind.UNDEFINED_NAME
INVALID_DEFAULT = Kind.INVALID_DEFAULT
DUPLICATE_FIELD = Kind.DUPLICATE_FIELD
DUPLICATE_SYMBOL = Kind.DUPLICATE_SYMBOL
INVALID_NAME = Kind.INVALID_NAME
INVALID_FIXED_SIZE = Kind.INVALID_FIXED_SIZE
DUPLICATE_UNION_BRANCH = Kind.DUPLICATE_UNION_BRANCH
NESTED_UNION = Kind.NESTED_UNION
REDEFINED_NAME = Kind.REDEFINED_NAME
MISSING_ATTRIBUTE = Kind.MISSING_ATTRIBUTE
INVALID_JSON = Kind.INVALID_JSON
INVALID_SCHEMA = Kind.INVALID_SCHEMA  # anything else Java refuses


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, kw_only=True)
class Schema:
    """Any Avro schema node. ``type`` is Avro's type name (``record`` for ``error`` too).

    ``props`` holds every other attribute (``logicalType``, ``precision``, custom ones), as Java
    keeps them. Nodes compare by identity; use :func:`canonical_form` for structural equality.
    """

    type: str
    pointer: str = ""
    props: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)  # see _make

    @property
    def logical_type(self) -> str | None:
        value = self.props.get("logicalType")
        return value if isinstance(value, str) else None

    @property
    def name(self) -> str:
        """What Java's ``getName()`` says: the simple name of a named type, else the type."""
        return self.type

    @property
    def fullname(self) -> str:
        """What Java's ``getFullName()`` says (union duplicate detection, messages)."""
        return self.type


@dataclass(frozen=True, eq=False, kw_only=True)
class PrimitiveSchema(Schema):
    """null, boolean, int, long, float, double, bytes or string (logical type in ``props``)."""


@dataclass(frozen=True, eq=False, kw_only=True)
class NamedSchema(Schema):
    """record, enum or fixed. ``aliases`` as Java's getAliases() spells them (see named_aliases)."""

    simple_name: str
    namespace: str | None = None
    aliases: tuple[str, ...] = ()
    doc: str | None = None

    @property
    def name(self) -> str:
        return self.simple_name

    @property
    def fullname(self) -> str:
        return f"{self.namespace}.{self.simple_name}" if self.namespace else self.simple_name


@dataclass(frozen=True, eq=False, kw_only=True)
class Field:
    """A record field. ``has_default`` tells a JSON ``null`` default from no default at all."""

    name: str
    type: Schema
    position: int
    pointer: str
    default: Any = None
    has_default: bool = False
    aliases: tuple[str, ...] = ()
    order: str = "ascending"
    doc: str | None = None
    props: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)  # see _make


@dataclass(frozen=True, eq=False, kw_only=True)
class RecordSchema(NamedSchema):
    """A record (or an ``error``, which Avro treats as a record)."""

    fields: tuple[Field, ...] = ()
    is_error: bool = False
    # Built once the fields are known; maps field name -> Field.
    field_map: Mapping[str, Field] = field(default_factory=lambda: _EMPTY)


@dataclass(frozen=True, eq=False, kw_only=True)
class EnumSchema(NamedSchema):
    symbols: tuple[str, ...] = ()
    default: str | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class FixedSchema(NamedSchema):
    size: int = 0


@dataclass(frozen=True, eq=False, kw_only=True)
class ArraySchema(Schema):
    items: Schema


@dataclass(frozen=True, eq=False, kw_only=True)
class MapSchema(Schema):
    values: Schema


@dataclass(frozen=True, eq=False, kw_only=True)
class UnionSchema(Schema):
    types: tuple[Schema, ...] = ()


# The parser builds nodes with _make, which fills the instance dict in one step: a frozen
# dataclass __init__ costs ~8x more, and a 2,000-field schema must parse in a few ms. Attributes
# left out fall back to these class-level defaults (and to the dataclass defaults above).
Schema.props = _EMPTY  # type: ignore[misc]
Field.props = _EMPTY  # type: ignore[misc]
RecordSchema.field_map = _EMPTY  # type: ignore[misc]

_new = object.__new__
_set = object.__setattr__


class _PrimitiveFieldType:
    """``Field.type`` of a field whose type is a bare primitive name, built on first access.

    The parser stores just the name (``_ptype``) for such fields: most fields of big schemas
    are primitives, and a node per field that the compatibility check never needs (it compares
    the names) was a fifth of a large parse. The node, once built, is kept in the field (so the
    same node is returned every time) and is exactly what the parser would have built.
    """

    def __get__(self, field: Any, owner: type | None = None) -> Any:
        if field is None:
            return self
        attrs = field.__dict__
        node = attrs.get("type")
        if node is None:
            try:
                name = attrs["_ptype"]
            except KeyError:
                raise AttributeError("type") from None
            node = _new(PrimitiveSchema)
            _set(node, "__dict__", {"type": name, "pointer": attrs["pointer"] + "/type"})
            node = attrs.setdefault("type", node)
        return node


Field.type = _PrimitiveFieldType()  # type: ignore[assignment,misc]


def _make(cls: type, **attrs: Any) -> Any:
    node = _new(cls)
    _set(node, "__dict__", attrs)
    return node


def _make_from(cls: type, attrs: dict[str, Any]) -> Any:
    node = _new(cls)
    _set(node, "__dict__", attrs)
    return node


# --------------------------------------------------------------------------------------------
# Names known from other files
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Names:
    """Named types already known (e.g. defined in other files), by full name.

    Immutable: ``names.including(schema)`` returns a new ``Names`` that also knows every named
    type defined inside ``schema``.
    """

    types: Mapping[str, NamedSchema] = field(default_factory=dict)

    def get(self, fullname: str) -> NamedSchema | None:
        return self.types.get(fullname)

    def __contains__(self, fullname: object) -> bool:
        return fullname in self.types

    def __len__(self) -> int:
        return len(self.types)

    def including(self, schema: Schema) -> Names:
        merged = dict(self.types)
        for named in named_types(schema):
            merged.setdefault(named.fullname, named)
        return Names(merged)


def named_types(schema: Schema) -> Iterator[NamedSchema]:
    """Every named type reachable from ``schema``, each once, in definition order."""
    seen: set[int] = set()
    stack = [schema]
    out: list[NamedSchema] = []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, NamedSchema):
            out.append(node)
        stack.extend(reversed(_children(node)))
    return iter(out)


def _children(node: Schema) -> list[Schema]:
    if isinstance(node, RecordSchema):
        return [f.type for f in node.fields]
    if isinstance(node, ArraySchema):
        return [node.items]
    if isinstance(node, MapSchema):
        return [node.values]
    if isinstance(node, UnionSchema):
        return list(node.types)
    return []


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


def parse_schema(obj: Any, *, names: Names | None = None) -> Schema:
    """Parse an Avro schema the way Java's ``Schema.Parser`` (1.12, validating defaults) does.

    ``obj`` is parsed JSON (dict, list, or a str naming a type) or JSON text: a str is read as
    JSON text unless it is a bare primitive or type name. ``names`` are named types defined
    elsewhere that references may use. Returns the root node (the same node for the same text:
    parses of text are cached); raises :class:`SchemaParseError` with ``Location(pointer=...)``
    and a hint for anything Java refuses.
    """
    if isinstance(obj, str) and names is None:
        return _parse_text(obj)
    return _parse(obj, names)


@functools.lru_cache(maxsize=1024)
def _parse_text(text: str) -> Schema:
    # Nodes are immutable, so the same text can share one parsed tree (the gate and the levels
    # parse each history version again and again). Errors are not cached.
    return _parse(text, None)


def clear_parse_cache() -> None:
    """Forget the schemas parsed from text (for benchmarks measuring cold parses)."""
    _parse_text.cache_clear()


def _parse(obj: Any, names: Names | None) -> Schema:
    # A parse allocates many small objects and frees none: the cyclic GC would only scan them
    # again and again (it costs ~half the time on a 2,000-field schema), so it waits.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        if isinstance(obj, str):
            obj = _json_text(obj)
        return nesting.call_deep(_build, obj, names)
    finally:
        if was_enabled:
            gc.enable()


def _build(obj: Any, names: Names | None) -> Schema:
    try:
        parser = _Parser(names)
        root = parser.parse(obj, "", None)
    except RecursionError:
        depth = nesting.value_depth(obj)  # parsed JSON handed to us may be deeper than Java reads
        if depth <= nesting.MAX_DEPTH:
            raise
        raise SchemaParseError(
            nesting.too_deep_message(depth),
            location=Location(pointer=""),
            hint=nesting.TOO_DEEP_HINT,
            kind=INVALID_JSON,
        ) from None
    parser.resolve_forward_references(root)
    if names is None and not parser.field_aliases:
        # Read by compat.check: without field aliases, a schema is always compatible with
        # itself (see compat._self_compatible).
        root.__dict__[SELF_COMPATIBLE] = True
    return root


def _json_text(text: str) -> Any:
    first = text[:1]
    if first == "{" or first == "[":  # the usual case: no need to look for a bare name
        return _json_loads(text)
    stripped = text.strip()
    if stripped[:1] not in ("{", "[", '"') and (
        stripped in PRIMITIVE_TYPES or _is_plain_name(stripped)
    ):
        return stripped
    return _json_loads(text)


def _json_loads(text: str) -> Any:
    try:
        return nesting.read(json.loads, text)
    except nesting.TooDeep as exc:
        line, column = line_column(text, exc.position)
        raise SchemaParseError(
            str(exc),
            location=Location(pointer="", line=line, column=column),
            hint=nesting.TOO_DEEP_HINT,
            kind=INVALID_JSON,
        ) from None
    except NumberTooLong as exc:
        line, column = line_column(text, exc.position)
        raise SchemaParseError(
            str(exc),
            location=Location(pointer="", line=line, column=column),
            hint=NUMBER_TOO_LONG_HINT,
            kind=INVALID_JSON,
        ) from None
    except json.JSONDecodeError as exc:
        raise SchemaParseError(
            f"Schema is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            location=Location(pointer="", line=exc.lineno, column=exc.colno),
            hint="Fix the JSON syntax; a schema is a JSON object, array or quoted type name.",
            kind=INVALID_JSON,
        ) from exc


def _is_plain_name(text: str) -> bool:
    return bool(text) and all(_ASCII_NAME.match(part) for part in text.split("."))


# Names already found valid (names repeat across fields and schemas); bounded.
_VALID_NAMES: set[str] = set()
_VALID_NAMESPACES: set[str] = set()


def _remember_valid(name: str) -> None:
    if len(_VALID_NAMES) > 50_000:
        _VALID_NAMES.clear()
    _VALID_NAMES.add(name)


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


class _Placeholder(Schema):
    """A reference to a named type not defined yet; replaced once the whole schema is read.

    Java validates defaults against it as if it were a record without fields.
    """

    def __init__(self, ref: str, pointer: str) -> None:
        self.__dict__.update(type="record", pointer=pointer, ref=ref)

    @property
    def fullname(self) -> str:
        return self.ref


# The two container types: class, child attribute, reserved keys, what the child types.
_CONTAINERS = {
    "array": (ArraySchema, "items", _ARRAY_RESERVED, "elements"),
    "map": (MapSchema, "values", _MAP_RESERVED, "values"),
}


class _Parser:
    """One parse: the named types seen so far (Java's ParseContext) and pending references.

    The hot paths (records, fields, primitive types, unions) are written out inline with exact
    class tests (``x.__class__ is str``) and direct node construction: a parse is mostly Python
    call overhead, and the corpus and large-schema benchmarks (bench/bench_compat.py) are
    dominated by it. Anything unusual takes the general path, which raises the precise errors.
    """

    __slots__ = ("old", "new", "placeholders", "building", "field_aliases")

    def __init__(self, names: Names | None) -> None:
        self.old: Mapping[str, NamedSchema] = names.types if names is not None else {}
        self.new: dict[str, NamedSchema] = {}
        self.placeholders: list[_Placeholder] = []
        self.building: set[int] = set()  # records whose fields are being parsed
        self.field_aliases = False  # whether any field has aliases

    # -- errors -------------------------------------------------------------------------------

    @staticmethod
    def fail(kind: str, message: str, pointer: str, hint: str) -> SchemaParseError:
        return SchemaParseError(message, location=Location(pointer=pointer), hint=hint, kind=kind)

    # -- names --------------------------------------------------------------------------------

    def find(self, name: str, namespace: str | None, pointer: str) -> Schema:
        if name in PRIMITIVE_TYPES:
            node = _new(PrimitiveSchema)
            _set(node, "__dict__", {"type": name, "pointer": pointer})
            return node
        full = f"{namespace}.{name}" if namespace and "." not in name else name
        found = self.lookup(full) or self.lookup(name)
        if found is not None:
            return found
        placeholder = _Placeholder(full, pointer)
        self.placeholders.append(placeholder)
        return placeholder

    def lookup(self, fullname: str) -> NamedSchema | None:
        found = self.old.get(fullname)
        return found if found is not None else self.new.get(fullname)

    def define(self, schema: NamedSchema, fullname: str, pointer: str) -> None:
        space = schema.namespace
        if space and space not in _VALID_NAMESPACES:
            for part in space.split("."):
                problem = name_error(part)
                if problem:
                    raise self.fail(
                        INVALID_NAME,
                        f'Namespace part "{part}" of {fullname!r} is invalid: {problem}',
                        pointer,
                        "Namespace parts are names separated by dots: a letter or _ then "
                        "letters, digits or _.",
                    )
            if len(_VALID_NAMESPACES) > 10_000:
                _VALID_NAMESPACES.clear()
            _VALID_NAMESPACES.add(space)
        existing = self.old.get(fullname)
        if existing is None:
            existing = self.new.get(fullname)
            if existing is None:
                self.new[fullname] = schema
                return
        if not self._equal_at_definition(existing, schema):
            raise self.fail(
                REDEFINED_NAME,
                f"Can't redefine: {fullname} (already defined at {existing.pointer or '/'})",
                pointer,
                f"Refer to the existing type by name ({json.dumps(fullname)}) instead of "
                "defining it again, or give this one another name.",
            )

    def _equal_at_definition(self, existing: NamedSchema, new: NamedSchema) -> bool:
        # Java puts a named type into its context right after constructing it, before its
        # properties (and a record's fields) are added, and refuses a second definition unless
        # Schema.equals holds at that moment.
        if type(existing) is not type(new) or existing.props:
            return False
        if isinstance(existing, RecordSchema):
            return id(existing) in self.building
        if isinstance(existing, EnumSchema):
            return existing.symbols == new.symbols  # type: ignore[attr-defined]
        if isinstance(existing, FixedSchema):
            return existing.size == new.size  # type: ignore[attr-defined]
        return False

    def valid_name(self, name: Any, pointer: str, what: str) -> str:
        problem = name_error(name)
        if problem:
            raise self.fail(
                INVALID_NAME,
                f"Invalid {what} {json.dumps(name, ensure_ascii=False)}: {problem}",
                pointer,
                "A name starts with a letter or _ and continues with letters, digits or _ "
                "(no dots, dashes or spaces).",
            )
        return name

    # -- the schema grammar ---------------------------------------------------------------------

    def parse(self, node: Any, pointer: str, namespace: str | None) -> Schema:
        cls = node.__class__
        if cls is str:
            if node in PRIMITIVE_TYPES:
                schema = _new(PrimitiveSchema)
                _set(schema, "__dict__", {"type": node, "pointer": pointer})
                return schema
            return self.find(node, namespace, pointer)
        if cls is dict:
            return self.parse_object(node, pointer, namespace)
        if cls is list:
            return self.parse_union(node, pointer, namespace)
        if isinstance(node, str):
            return self.find(str(node), namespace, pointer)
        if isinstance(node, dict):
            return self.parse_object(node, pointer, namespace)
        if isinstance(node, list):
            return self.parse_union(node, pointer, namespace)
        raise self.fail(
            INVALID_SCHEMA,
            f"Schema not supported: {json.dumps(node)} is not a type name, object or union",
            pointer,
            'Write a type name ("string"), a type object ({"type": ...}) or a union ([...]).',
        )

    def parse_union(self, node: list, pointer: str, namespace: str | None) -> Schema:
        branches: list[Schema] = []
        seen: dict[str, int] = {}
        index = 0
        for item in node:
            branch_pointer = f"{pointer}/{index}"
            if item.__class__ is str and item in PRIMITIVE_TYPES:
                branch = _new(PrimitiveSchema)
                _set(branch, "__dict__", {"type": item, "pointer": branch_pointer})
                key = item
            else:
                branch = self.parse(item, branch_pointer, namespace)
                if branch.__class__ is UnionSchema:
                    raise self.fail(
                        NESTED_UNION,
                        "A union may not contain a union directly",
                        branch_pointer,
                        "Put the nested union's branches into the outer union.",
                    )
                key = branch.type if branch.__class__ is PrimitiveSchema else branch.fullname
            if key in seen:
                raise self.fail(
                    DUPLICATE_UNION_BRANCH,
                    f"Duplicate in union: {key} (branches {seen[key]} and {index})",
                    branch_pointer,
                    "A union may hold each type only once (arrays once, maps once, each named "
                    "type once); remove one branch or wrap it in a named record.",
                )
            seen[key] = index
            branches.append(branch)
            index += 1
        union = _new(UnionSchema)
        _set(union, "__dict__", {"type": "union", "pointer": pointer, "types": tuple(branches)})
        return union

    def parse_object(self, node: dict, pointer: str, namespace: str | None) -> Schema:
        kind = node.get("type")
        if kind.__class__ is not str and not isinstance(kind, str):
            raise self.fail(
                MISSING_ATTRIBUTE,
                "Type object has no textual \"type\" attribute",
                pointer + "/type" if "type" in node else pointer,
                'Give it "type": a type name such as "record", "array" or "string"; nest other '
                'schemas one level down (e.g. {"type": "array", "items": ...}).',
            )
        if kind == "record" or kind == "enum" or kind == "fixed" or kind == "error":
            return self.parse_named(node, kind, pointer, namespace)
        if kind in PRIMITIVE_TYPES:
            props = {k: v for k, v in node.items() if k != "type"}
            schema = _new(PrimitiveSchema)
            _set(schema, "__dict__", {
                "type": kind, "pointer": pointer,
                "props": MappingProxyType(props) if props else _EMPTY,
            })
            return schema
        container = _CONTAINERS.get(kind)
        if container is not None:  # array (items) or map (values)
            cls, attr, reserved, what = container
            if attr not in node:
                raise self.fail(
                    MISSING_ATTRIBUTE,
                    f'{kind.capitalize()} has no "{attr}"', pointer,
                    f'Add "{attr}": the type of the {what}.',
                )
            child = self.parse(node[attr], f"{pointer}/{attr}", namespace)
            schema = _new(cls)
            _set(schema, "__dict__", {
                "type": kind, "pointer": pointer, attr: child,
                "props": _EMPTY if reserved.issuperset(node) else _props(node, kind),
            })
            return schema
        # {"type": "SomeName"}: a reference to a named type.
        return self.find(kind, namespace, pointer)

    def parse_named(
        self, node: dict, kind: str, pointer: str, namespace: str | None
    ) -> NamedSchema:
        raw_name = node.get("name")
        if raw_name.__class__ is not str and not isinstance(raw_name, str):
            raise self.fail(
                MISSING_ATTRIBUTE,
                f"A {kind} needs a textual \"name\"",
                pointer + "/name" if "name" in node else pointer,
                'Add "name": a letter or _ followed by letters, digits or _.',
            )
        space = node.get("namespace")
        if space.__class__ is not str and not isinstance(space, str):
            space = namespace  # Java ignores a non-textual namespace
        dot = raw_name.rfind(".")  # Java's Name(name, space): a dotted name has its namespace
        if dot >= 0:
            space = raw_name[:dot]
            simple = raw_name[dot + 1 :]
        else:
            simple = raw_name
        if not space:
            space = None
        if simple not in _VALID_NAMES:
            _remember_valid(self.valid_name(simple, pointer + "/name", "name"))
        fullname = f"{space}.{simple}" if space else simple
        if fullname in PRIMITIVE_TYPES:
            raise self.fail(
                INVALID_NAME,
                f"Schemas may not be named after primitives: {fullname}",
                pointer + "/name",
                "Choose a name that is not a primitive type name, or add a namespace.",
            )
        doc = node.get("doc")
        if doc is not None and doc.__class__ is not str and not isinstance(doc, str):
            doc = None
        aliases = self.named_aliases(node, pointer, space) if "aliases" in node else ()
        if kind == "record" or kind == "error":
            reserved = _RESERVED["record"]
        else:
            reserved = _RESERVED[kind]
        if reserved.issuperset(node):
            props = _EMPTY
        else:
            props = MappingProxyType({k: v for k, v in node.items() if k not in reserved})
        if kind == "record" or kind == "error":
            return self.parse_record(node, kind, pointer, simple, space, fullname, aliases, doc,
                                     props)
        if kind == "enum":
            return self.parse_enum(node, pointer, simple, space, fullname, aliases, doc, props)
        size = node.get("size")
        if type(size) is not int or not _INT_MIN <= size <= _INT_MAX:
            raise self.fail(
                INVALID_FIXED_SIZE,
                f"Fixed {fullname} has no valid \"size\": {json.dumps(size)}",
                pointer + ("/size" if "size" in node else ""),
                'Give "size" as a JSON integer: the number of bytes.',
            )
        if size < 0:
            raise self.fail(
                INVALID_FIXED_SIZE,
                f"Fixed {fullname} has a negative size: {size}",
                pointer + "/size",
                '"size" is a number of bytes: 0 or more.',
            )
        schema = _new(FixedSchema)
        _set(schema, "__dict__", {
            "type": "fixed", "pointer": pointer, "simple_name": simple, "namespace": space,
            "aliases": aliases, "doc": doc, "props": props, "size": size,
        })
        self.define(schema, fullname, pointer)
        return schema

    def named_aliases(self, node: dict, pointer: str, space: str | None) -> tuple[str, ...]:
        """The aliases as Java's ``NamedSchema.getAliases()`` spells them.

        An alias without a dot takes the type's own namespace (not the enclosing one); a dotted
        alias carries its own, unchecked (Java validates only the last part). An alias in the
        null namespace (``".Old"``) of a type that has a namespace is spelled ``.Old``: no full
        name equals it, so Java's compatibility check never matches it.
        """
        raw = self.aliases_of(node, pointer)
        out = []
        for index, alias in enumerate(raw):
            simple, alias_space = _split_name(alias, space)
            self.valid_name(simple, f"{pointer}/aliases/{index}", "alias")
            if alias_space:
                out.append(f"{alias_space}.{simple}")
            else:
                out.append(f".{simple}" if space else simple)
        return tuple(dict.fromkeys(out))

    def aliases_of(self, node: dict, pointer: str) -> list[str]:
        if "aliases" not in node:
            return []
        raw = node["aliases"]
        if not isinstance(raw, list):
            raise self.fail(
                INVALID_SCHEMA,
                "\"aliases\" is not an array", pointer + "/aliases",
                'Write aliases as an array of names: "aliases": ["OldName"].',
            )
        for index, alias in enumerate(raw):
            if not isinstance(alias, str):
                raise self.fail(
                    INVALID_SCHEMA,
                    f"Alias is not a string: {json.dumps(alias)}", f"{pointer}/aliases/{index}",
                    "Each alias is a name in quotes.",
                )
        return raw

    def parse_enum(self, node, pointer, simple, space, fullname, aliases, doc, props):
        symbols = node.get("symbols")
        if not isinstance(symbols, list):
            raise self.fail(
                MISSING_ATTRIBUTE,
                "Enum has no \"symbols\" array",
                pointer + ("/symbols" if "symbols" in node else ""),
                'Add "symbols": an array of names, e.g. ["CASH", "CARD"].',
            )
        valid = _VALID_NAMES
        seen: set[str] = set()
        for symbol in symbols:
            if symbol.__class__ is not str or symbol not in valid or symbol in seen:
                seen = self.check_symbols(symbols, pointer)
                break
            seen.add(symbol)
        default = node.get("default")
        if isinstance(default, str):
            if default not in seen:
                raise self.fail(
                    INVALID_DEFAULT,
                    f"The enum default {default!r} is not one of the symbols {symbols}",
                    pointer + "/default",
                    "Make the enum default one of the symbols, or remove it.",
                )
        else:
            default = None  # Java ignores a non-textual enum default
        schema = _new(EnumSchema)
        _set(schema, "__dict__", {
            "type": "enum", "pointer": pointer, "simple_name": simple, "namespace": space,
            "aliases": aliases, "doc": doc, "props": props, "symbols": tuple(symbols),
            "default": default,
        })
        self.define(schema, fullname, pointer)
        return schema

    def check_symbols(self, symbols: list, pointer: str) -> set[str]:
        """Validate enum symbols one by one (names, duplicates); the set of symbols."""
        seen: set[str] = set()
        for index, symbol in enumerate(symbols):
            if symbol.__class__ is not str or symbol not in _VALID_NAMES:
                _remember_valid(
                    self.valid_name(symbol, f"{pointer}/symbols/{index}", "enum symbol")
                )
            if symbol in seen:
                raise self.fail(
                    DUPLICATE_SYMBOL,
                    f"Duplicate enum symbol: {symbol}", f"{pointer}/symbols/{index}",
                    "List each symbol once.",
                )
            seen.add(symbol)
        return seen

    def parse_record(self, node, kind, pointer, simple, space, fullname, aliases, doc, props):
        raw_fields = node.get("fields")
        if raw_fields.__class__ is not list and not isinstance(raw_fields, list):
            raise self.fail(
                MISSING_ATTRIBUTE,
                f"Record {simple} has no \"fields\" array",
                pointer + ("/fields" if "fields" in node else ""),
                'Add "fields": an array of {"name": ..., "type": ...} objects ([] for none).',
            )
        record = _new(RecordSchema)
        attrs = {
            "type": "record", "fields": (), "pointer": pointer, "simple_name": simple,
            "namespace": space, "aliases": aliases, "doc": doc, "props": props,
            "is_error": kind == "error",
        }
        _set(record, "__dict__", attrs)
        self.define(record, fullname, pointer)
        building = self.building
        building.add(id(record))
        fields: list[Field] = []
        by_name: dict[str, Field] = {}
        valid = _VALID_NAMES
        primitives = PRIMITIVE_TYPES
        new, set_attr, primitive_class, field_class = _new, _set, PrimitiveSchema, Field
        indexes = _INDEXES
        prefix = pointer + "/fields/"
        position = 0
        for raw in raw_fields:
            fpointer = prefix + (indexes[position] if position < 4096 else str(position))
            # One field (written out here: this loop is the hottest part of a parse).
            name = raw.get("name") if raw.__class__ is dict or isinstance(raw, dict) else None
            if name.__class__ is not str and not isinstance(name, str):
                raise self.fail(
                    MISSING_ATTRIBUTE,
                    "Field has no textual \"name\"", fpointer,
                    'Each field is an object with "name" and "type".',
                )
            if name not in valid:
                _remember_valid(self.valid_name(name, fpointer + "/name", "field name"))
            ftype = raw.get("type", _MISSING)
            if ftype.__class__ is str and ftype in primitives:
                if len(raw) == 2:  # no default to check: the node is built when first asked for
                    fld = new(field_class)
                    set_attr(fld, "__dict__", {
                        "name": name, "_ptype": ftype, "position": position, "pointer": fpointer,
                    })
                    if name in by_name:
                        self.duplicate_field(name, fullname, by_name, position, fpointer)
                    by_name[name] = fld
                    fields.append(fld)
                    position += 1
                    continue
                ftype_node = new(primitive_class)
                set_attr(ftype_node, "__dict__", {"type": ftype, "pointer": fpointer + "/type"})
            elif ftype is _MISSING:
                raise self.fail(
                    MISSING_ATTRIBUTE,
                    f"Field {name!r} has no \"type\"", fpointer, 'Add "type" to the field.'
                )
            elif ftype.__class__ is dict:
                ftype_node = self.parse_object(ftype, fpointer + "/type", space)
            else:
                ftype_node = self.parse(ftype, fpointer + "/type", space)
            fattrs: dict[str, Any] = {
                "name": name, "type": ftype_node, "position": position, "pointer": fpointer,
            }
            if len(raw) > 2:
                self.field_extras(raw, name, ftype_node, fpointer, fattrs)
            fld = new(field_class)
            set_attr(fld, "__dict__", fattrs)
            if name in by_name:
                self.duplicate_field(name, fullname, by_name, position, fpointer)
            by_name[name] = fld
            fields.append(fld)
            position += 1
        building.discard(id(record))
        # The record must exist before its fields (they may refer to it), so its fields are set
        # here, once, before anyone else can see the object.
        attrs["fields"] = tuple(fields)
        attrs["field_map"] = MappingProxyType(by_name)
        return record

    def duplicate_field(
        self, name: str, fullname: str, by_name: dict[str, Field], position: int, pointer: str
    ) -> None:
        raise self.fail(
            DUPLICATE_FIELD,
            f"Duplicate field {name!r} in record {fullname} "
            f"(fields {by_name[name].position} and {position})",
            pointer + "/name",
            "Each field name may appear once in a record; rename or remove one.",
        )

    def field_extras(
        self, raw: dict, name: str, ftype: Schema, pointer: str, attrs: dict[str, Any]
    ) -> None:
        """doc, order, default, aliases and other properties of a field, into ``attrs``."""
        if len(raw) == 3 and "default" in raw:  # the common case: name, type and default
            attrs["has_default"] = True
            attrs["default"] = self.check_default(name, ftype, raw["default"], pointer + "/default")
            return
        doc = raw.get("doc")
        if isinstance(doc, str):
            attrs["doc"] = doc
        if "order" in raw:
            order_raw = raw["order"]
            if not isinstance(order_raw, str) or order_raw.lower() not in ORDERS:
                raise self.fail(
                    INVALID_SCHEMA,
                    f"Invalid order {json.dumps(order_raw)} for field {name!r}",
                    pointer + "/order",
                    'Use "ascending", "descending" or "ignore", or leave "order" out.',
                )
            attrs["order"] = order_raw.lower()
        if "default" in raw:
            attrs["has_default"] = True
            attrs["default"] = self.check_default(name, ftype, raw["default"], pointer + "/default")
        if "aliases" in raw:
            attrs["aliases"] = tuple(self.aliases_of(raw, pointer))
            self.field_aliases = True
        if not _FIELD_RESERVED.issuperset(raw):
            attrs["props"] = MappingProxyType(
                {k: v for k, v in raw.items() if k not in _FIELD_RESERVED}
            )

    def check_default(self, name: str, ftype: Schema, default: Any, pointer: str) -> Any:
        t = ftype.type
        # The common cases first (Java's rules, as in _valid_value).
        if t == "union":
            first = ftype.types[0].type if ftype.types else None  # type: ignore[attr-defined]
            if default is None and first == "null":
                return default
        elif t == "string" or t == "bytes":
            if default.__class__ is str:
                return default
        elif t == "int":
            if default.__class__ is int and _INT_MIN <= default <= _INT_MAX:
                return default
        elif t == "long":
            if default.__class__ is int and _LONG_MIN <= default <= _LONG_MAX:
                return default
        elif t == "boolean":
            if default.__class__ is bool:
                return default
        elif t == "null":
            if default is None:
                return default
        elif t == "float" or t == "double":
            if isinstance(default, str):
                # Java turns a textual default of a float/double field into a number first.
                number = _java_double(default)
                if number is None:
                    raise self.fail(
                        INVALID_DEFAULT,
                        f"Invalid default for field {name!r}: {json.dumps(default)} is not a "
                        "number",
                        pointer,
                        'Write the default as a JSON number, or "NaN", "Infinity", '
                        '"-Infinity".',
                    )
                return number
        try:
            problem = None if _valid_value(ftype, default, self.building) else ""
        except _FieldsNotSet as unfinished:
            problem = f" (record {unfinished.args[0]} is still being defined)"
        if problem is not None:
            raise self.fail(
                INVALID_DEFAULT,
                f"Invalid default for field {name!r}: {_short(default)} is not "
                f"{_with_article(_describe(ftype))}{problem}",
                pointer,
                "Make the default a JSON value of the field's type (for a union: of one of "
                "its branches, best the first), or remove it.",
            )
        return default

    def resolve_forward_references(self, root: Schema) -> None:
        if not self.placeholders:
            return
        for placeholder in self.placeholders:
            if self.lookup(placeholder.ref) is None:
                raise self.fail(
                    UNDEFINED_NAME,
                    f"Undefined name: {placeholder.ref}",
                    placeholder.pointer,
                    "Define the type (a record, enum or fixed with this name) in this schema or "
                    "in a referenced one, or fix the spelling/namespace; names in another "
                    "namespace need their full name.",
                )
        self._replace_placeholders(root)

    def _replace_placeholders(self, root: Schema) -> None:
        seen: set[int] = set()
        stack = [root]
        fix = self._resolved
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, RecordSchema):
                for fld in node.fields:
                    ftype = fld.__dict__.get("type")
                    if ftype is None:
                        continue  # a primitive not built yet (see _PrimitiveFieldType)
                    if isinstance(ftype, _Placeholder):
                        ftype = fix(ftype)
                        object.__setattr__(fld, "type", ftype)
                    stack.append(ftype)
            elif isinstance(node, ArraySchema):
                object.__setattr__(node, "items", fix(node.items))
                stack.append(node.items)
            elif isinstance(node, MapSchema):
                object.__setattr__(node, "values", fix(node.values))
                stack.append(node.values)
            elif isinstance(node, UnionSchema):
                object.__setattr__(node, "types", tuple(fix(t) for t in node.types))
                stack.extend(node.types)

    def _resolved(self, node: Schema) -> Schema:
        if isinstance(node, _Placeholder):
            return self.lookup(node.ref)  # type: ignore[return-value]
        return node


def _split_name(name: str, space: str | None) -> tuple[str, str | None]:
    """Java's Name(name, space): a dotted name carries its own namespace; "" means none."""
    dot = name.rfind(".")
    if dot >= 0:
        space = name[:dot]
        name = name[dot + 1 :]
    return name, space or None


def _props(node: dict, kind: str) -> Mapping[str, Any]:
    reserved = _RESERVED[kind]
    props = {k: v for k, v in node.items() if k not in reserved}
    return MappingProxyType(props) if props else _EMPTY


def _is_int(value: Any) -> bool:
    return type(value) is int


def _java_double(text: str) -> float | None:
    """Java's Double.valueOf, for the strings people write as float/double defaults."""
    s = text.strip()
    if s and s[-1] in "fFdD" and not s.lower().endswith("infinity"):
        s = s[:-1]
    if s in ("NaN", "+NaN", "-NaN"):
        return math.nan
    if s in ("Infinity", "+Infinity"):
        return math.inf
    if s == "-Infinity":
        return -math.inf
    if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", s):
        return None
    return float(s)


class _FieldsNotSet(Exception):
    """A default reached into a record whose fields are still being parsed."""


def _valid_value(schema: Schema, value: Any, building: set[int] | frozenset = frozenset()) -> bool:
    t = schema.type
    if t in ("string", "bytes", "enum", "fixed"):
        return isinstance(value, str)
    if t == "int":
        return type(value) is int and _INT_MIN <= value <= _INT_MAX
    if t == "long":
        return type(value) is int and _LONG_MIN <= value <= _LONG_MAX
    if t in ("float", "double"):
        return type(value) in (int, float)
    if t == "boolean":
        return type(value) is bool
    if t == "null":
        return value is None
    if t == "array":
        return isinstance(value, list) and all(
            _valid_value(schema.items, v, building) for v in value  # type: ignore[attr-defined]
        )
    if t == "map":
        return isinstance(value, dict) and all(
            _valid_value(schema.values, v, building)  # type: ignore[attr-defined]
            for v in value.values()
        )
    if t == "union":
        for branch in schema.types:  # type: ignore[attr-defined]
            if _valid_value(branch, value, building):
                return True
        return False
    if t == "record":
        if not isinstance(value, dict):
            return False
        if isinstance(schema, _Placeholder):
            return True  # Java checks against an unresolved stand-in: a record without fields
        if id(schema) in building:
            # Java throws "Schema fields not set yet" here, ending the whole validation.
            raise _FieldsNotSet(schema.fullname)
        for fld in schema.fields:  # type: ignore[attr-defined]
            if fld.name in value:
                if not _valid_value(fld.type, value[fld.name], building):
                    return False
            elif not fld.has_default:
                return False
        return True
    return False


def is_valid_default(schema: Schema, value: Any) -> bool:
    """Whether ``value`` is a valid default for ``schema`` by Java's rules (any union branch)."""
    return _valid_value(schema, value)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _with_article(text: str) -> str:
    return ("an " if text[:1] in ("a", "e", "i", "o", "u") else "a ") + text


def _describe(schema: Schema) -> str:
    if isinstance(schema, UnionSchema):
        return "value of any branch of [" + ", ".join(_describe(t) for t in schema.types) + "]"
    if isinstance(schema, NamedSchema):
        return f"{schema.type} {schema.fullname}"
    if isinstance(schema, ArraySchema):
        return f"array of {_describe(schema.items)}"
    if isinstance(schema, MapSchema):
        return f"map of {_describe(schema.values)}"
    return schema.type


# --------------------------------------------------------------------------------------------
# Parsing Canonical Form and fingerprints
# --------------------------------------------------------------------------------------------


def canonical_form(schema: Schema) -> str:
    """Avro's Parsing Canonical Form of ``schema`` (as Java's SchemaNormalization prints it)."""
    return nesting.call_deep(_canonical_text, schema)


def _canonical_text(schema: Schema) -> str:
    out: list[str] = []
    _canonical(schema, set(), out)
    return "".join(out)


def _canonical(schema: Schema, seen: set[str], out: list[str]) -> None:
    t = schema.type
    if isinstance(schema, UnionSchema):
        out.append("[")
        for i, branch in enumerate(schema.types):
            if i:
                out.append(",")
            _canonical(branch, seen, out)
        out.append("]")
        return
    if isinstance(schema, NamedSchema):
        full = schema.fullname
        quoted = json.dumps(full, ensure_ascii=False)
        if full in seen:
            out.append(quoted)
            return
        seen.add(full)
        out.append(f'{{"name":{quoted},"type":"{t}"')
        if isinstance(schema, RecordSchema):
            out.append(',"fields":[')
            for i, fld in enumerate(schema.fields):
                if i:
                    out.append(",")
                out.append(f'{{"name":{json.dumps(fld.name, ensure_ascii=False)},"type":')
                _canonical(fld.type, seen, out)
                out.append("}")
            out.append("]}")
        elif isinstance(schema, EnumSchema):
            symbols = ",".join(json.dumps(s, ensure_ascii=False) for s in schema.symbols)
            out.append(f',"symbols":[{symbols}]}}')
        elif isinstance(schema, FixedSchema):
            out.append(f',"size":{schema.size}}}')
        return
    if isinstance(schema, ArraySchema):
        out.append('{"type":"array","items":')
        _canonical(schema.items, seen, out)
        out.append("}")
        return
    if isinstance(schema, MapSchema):
        out.append('{"type":"map","values":')
        _canonical(schema.values, seen, out)
        out.append("}")
        return
    out.append(f'"{t}"')


_CRC64_EMPTY = 0xC15D213AA4D7A795  # the CRC-64-AVRO "empty" value from the specification


def _crc64_table() -> tuple[int, ...]:
    table = []
    for i in range(256):
        fp = i
        for _ in range(8):
            fp = (fp >> 1) ^ (_CRC64_EMPTY & -(fp & 1))
        table.append(fp)
    return tuple(table)


_CRC64_TABLE = _crc64_table()


def rabin64(data: bytes) -> int:
    """CRC-64-AVRO of ``data`` as an unsigned integer (the specification's algorithm).

    The one implementation in schemacli (``schemacli.contracts.canonical`` re-exports it).
    """
    fp = _CRC64_EMPTY
    table = _CRC64_TABLE
    for byte in data:
        fp = (fp >> 8) ^ table[(fp ^ byte) & 0xFF]
    return fp


def fingerprint(schema: Schema) -> int:
    """The CRC-64-AVRO fingerprint of the schema's Parsing Canonical Form (unsigned 64-bit)."""
    return rabin64(canonical_form(schema).encode("utf-8"))


def fingerprint_hex(schema: Schema) -> str:
    """The fingerprint as 16 hex digits, little-endian bytes as Avro's single-object encoding."""
    return fingerprint(schema).to_bytes(8, "little").hex()
