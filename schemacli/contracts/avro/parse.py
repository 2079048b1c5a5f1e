"""The Avro schema parser, mirroring Apache Avro Java 1.12's ``Schema.Parser``.

Confluent Schema Registry parses every schema with the Java library, so what it accepts is what
we accept, and what it refuses we refuse with a :class:`SchemaParseError` that carries the JSON
pointer of the offending node and a hint. Behaviour confirmed against the jar (see
``tests/oracle``), some of it surprising and documented in ``docs/compatibility.md``:

* names follow Java's default validator: Unicode letters and digits are allowed;
* a reference may point to a named type defined *later* in the same schema;
* defaults are validated as Java does (``schemacli.contracts.avro.defaults``);
* logical types are never validated (an invalid one is silently ignored);
* a named type may be defined twice if Java's ``equals`` holds at the moment of definition.

The nodes it builds are the model of ``schemacli.contracts.avro.schema``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from schemacli.contracts.avro.defaults import check_default, check_enum_default
from schemacli.contracts.avro.facts import INT_MAX, INT_MIN, ORDERS, PRIMITIVE_TYPES
from schemacli.contracts.avro.forward import Placeholder, resolve_placeholders
from schemacli.contracts.avro.names import (
    VALID_NAMES,
    VALID_NAMESPACES,
    aliases_of,
    is_plain_name,
    named_aliases,
    remember_valid,
    valid_name,
    valid_namespace,
)
from schemacli.contracts.avro.schema import (
    EMPTY_PROPS,
    ArraySchema,
    EnumSchema,
    Field,
    FixedSchema,
    MapSchema,
    NamedSchema,
    Names,
    PrimitiveSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from schemacli.contracts.jsontext import nesting
from schemacli.contracts.jsontext.numberlength import NUMBER_TOO_LONG_HINT, NumberTooLong
from schemacli.errors import Location, SchemaParseError
from schemacli.kinds import Kind
from schemacli.textfile import line_column

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
SELF_COMPATIBLE = "_self_compatible"  # a private mark on a parsed root; see _build

# SchemaParseError.kind: which rule a refused schema breaks (the finding kind `validate` shows),
# from the catalogue; bound to names once (an enum attribute costs ~0.7 us on 3.11).
UNDEFINED_NAME = Kind.UNDEFINED_NAME
# INVALID_DEFAULT (a default that does not fit its type) is defaults.INVALID_DEFAULT.
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

_new = object.__new__
_set = object.__setattr__

# Fields parsed once for many schemas (see parse_schema's ``fields``): by pointer and text.
FieldMemo = dict[tuple[str, str], Field]
FIELD_TEXT = "_text"  # a memoised field's text (repr of its JSON), in its __dict__
_FIELD_MEMO_MAX = 1 << 14


def parse_schema(
    obj: Any, *, names: Names | None = None, fields: FieldMemo | None = None
) -> Schema:
    """Parse an Avro schema the way Java's ``Schema.Parser`` (1.12, validating defaults) does.

    ``obj`` is parsed JSON (dict, list, or a str naming a type) or JSON text: a str is read as
    JSON text unless it is a bare primitive or type name. ``names`` are named types defined
    elsewhere that references may use. Returns the root node of a new tree (nothing is kept
    between calls: a caller that parses the same text again and again keeps its own memo, as
    ``verdicts.VerdictCache`` does); raises :class:`SchemaParseError` with
    ``Location(pointer=...)`` and a hint for anything Java refuses.

    ``fields``: a memo kept by a caller that parses many schemas sharing most fields (a
    subject's versions): a record field whose JSON (its ``repr``) and pointer were parsed
    before, and whose type names no named type, is that same ``Field`` (its ``_text`` the
    repr), not parsed again. Such a field's model follows from its JSON and pointer alone
    (no names, namespace or enclosing record enter it), so the tree is the one a parse
    without the memo builds, field for field (tests/unit/test_avro_field_memo.py).
    """
    if isinstance(obj, str):
        obj = _json_text(obj)
    return nesting.call_deep(_build, obj, names, fields)


def _build(obj: Any, names: Names | None, fields: FieldMemo | None = None) -> Schema:
    try:
        parser = _Parser(names, fields)
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
    resolve_placeholders(root, parser.placeholders, parser.lookup)
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
        stripped in PRIMITIVE_TYPES or is_plain_name(stripped)
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


# The two container types: class, child attribute, reserved keys, what the child types.
_CONTAINERS: dict[str, tuple[type[Schema], str, frozenset[str], str]] = {
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

    __slots__ = ("old", "new", "placeholders", "building", "field_aliases", "fields")

    def __init__(self, names: Names | None, fields: FieldMemo | None = None) -> None:
        self.old: Mapping[str, NamedSchema] = names.types if names is not None else {}
        self.new: dict[str, NamedSchema] = {}
        self.placeholders: list[Placeholder] = []
        self.building: set[int] = set()  # records whose fields are being parsed
        self.field_aliases = False  # whether any field has aliases
        self.fields = fields  # fields parsed before, by (pointer, repr of the JSON)

    # -- errors -------------------------------------------------------------------------------

    @staticmethod
    def fail(kind: Kind, message: str, pointer: str, hint: str) -> SchemaParseError:
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
        placeholder = Placeholder(full, pointer)
        self.placeholders.append(placeholder)
        return placeholder

    def lookup(self, fullname: str) -> NamedSchema | None:
        found = self.old.get(fullname)
        return found if found is not None else self.new.get(fullname)

    def define(self, schema: NamedSchema, fullname: str, pointer: str) -> None:
        space = schema.namespace
        if space and space not in VALID_NAMESPACES:
            valid_namespace(space, fullname, pointer)
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
        if isinstance(existing, EnumSchema) and isinstance(new, EnumSchema):
            return existing.symbols == new.symbols
        if isinstance(existing, FixedSchema) and isinstance(new, FixedSchema):
            return existing.size == new.size
        return False

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

    def parse_union(self, node: list[Any], pointer: str, namespace: str | None) -> Schema:
        branches: list[Schema] = []
        seen: dict[str, int] = {}
        index = 0
        branch: Schema
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

    def parse_object(self, node: dict[str, Any], pointer: str, namespace: str | None) -> Schema:
        schema: Schema
        kind = node.get("type")
        if kind.__class__ is not str and not isinstance(kind, str):
            raise self.fail(
                MISSING_ATTRIBUTE,
                'Type object has no textual "type" attribute',
                pointer + "/type" if "type" in node else pointer,
                'Give it "type": a type name such as "record", "array" or "string"; nest other '
                'schemas one level down (e.g. {"type": "array", "items": ...}).',
            )
        if kind == "record" or kind == "enum" or kind == "fixed" or kind == "error":
            return self.parse_named(node, kind, pointer, namespace)
        if kind in PRIMITIVE_TYPES:
            props = {k: v for k, v in node.items() if k != "type"}
            schema = _new(PrimitiveSchema)
            _set(
                schema,
                "__dict__",
                {
                    "type": kind,
                    "pointer": pointer,
                    "props": MappingProxyType(props) if props else EMPTY_PROPS,
                },
            )
            return schema
        container = _CONTAINERS.get(kind)
        if container is not None:  # array (items) or map (values)
            cls, attr, reserved, what = container
            if attr not in node:
                raise self.fail(
                    MISSING_ATTRIBUTE,
                    f'{kind.capitalize()} has no "{attr}"',
                    pointer,
                    f'Add "{attr}": the type of the {what}.',
                )
            child = self.parse(node[attr], f"{pointer}/{attr}", namespace)
            schema = _new(cls)
            _set(
                schema,
                "__dict__",
                {
                    "type": kind,
                    "pointer": pointer,
                    attr: child,
                    "props": EMPTY_PROPS if reserved.issuperset(node) else _props(node, kind),
                },
            )
            return schema
        # {"type": "SomeName"}: a reference to a named type.
        return self.find(kind, namespace, pointer)

    def parse_named(
        self, node: dict[str, Any], kind: str, pointer: str, namespace: str | None
    ) -> NamedSchema:
        raw_name = node.get("name")
        if raw_name.__class__ is not str and not isinstance(raw_name, str):
            raise self.fail(
                MISSING_ATTRIBUTE,
                f'A {kind} needs a textual "name"',
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
        if simple not in VALID_NAMES:
            remember_valid(valid_name(simple, pointer + "/name", "name"))
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
        aliases = named_aliases(node, pointer, space) if "aliases" in node else ()
        if kind == "record" or kind == "error":
            reserved = _RESERVED["record"]
        else:
            reserved = _RESERVED[kind]
        if reserved.issuperset(node):
            props = EMPTY_PROPS
        else:
            props = MappingProxyType({k: v for k, v in node.items() if k not in reserved})
        if kind == "record" or kind == "error":
            return self.parse_record(
                node, kind, pointer, simple, space, fullname, aliases, doc, props
            )
        if kind == "enum":
            return self.parse_enum(node, pointer, simple, space, fullname, aliases, doc, props)
        size = node.get("size")
        if type(size) is not int or not INT_MIN <= size <= INT_MAX:
            raise self.fail(
                INVALID_FIXED_SIZE,
                f'Fixed {fullname} has no valid "size": {json.dumps(size)}',
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
        _set(
            schema,
            "__dict__",
            {
                "type": "fixed",
                "pointer": pointer,
                "simple_name": simple,
                "namespace": space,
                "aliases": aliases,
                "doc": doc,
                "props": props,
                "size": size,
            },
        )
        self.define(schema, fullname, pointer)
        return schema

    def parse_enum(
        self,
        node: dict[str, Any],
        pointer: str,
        simple: str,
        space: str | None,
        fullname: str,
        aliases: tuple[str, ...],
        doc: str | None,
        props: Mapping[str, Any],
    ) -> EnumSchema:
        symbols = node.get("symbols")
        if not isinstance(symbols, list):
            raise self.fail(
                MISSING_ATTRIBUTE,
                'Enum has no "symbols" array',
                pointer + ("/symbols" if "symbols" in node else ""),
                'Add "symbols": an array of names, e.g. ["CASH", "CARD"].',
            )
        valid = VALID_NAMES
        seen: set[str] = set()
        for symbol in symbols:
            if symbol.__class__ is not str or symbol not in valid or symbol in seen:
                seen = self.check_symbols(symbols, pointer)
                break
            seen.add(symbol)
        default = check_enum_default(node.get("default"), symbols, pointer + "/default")
        schema = _new(EnumSchema)
        _set(
            schema,
            "__dict__",
            {
                "type": "enum",
                "pointer": pointer,
                "simple_name": simple,
                "namespace": space,
                "aliases": aliases,
                "doc": doc,
                "props": props,
                "symbols": tuple(symbols),
                "default": default,
            },
        )
        self.define(schema, fullname, pointer)
        return schema

    def check_symbols(self, symbols: list[Any], pointer: str) -> set[str]:
        """Validate enum symbols one by one (names, duplicates); the set of symbols."""
        seen: set[str] = set()
        for index, symbol in enumerate(symbols):
            if symbol.__class__ is not str or symbol not in VALID_NAMES:
                remember_valid(valid_name(symbol, f"{pointer}/symbols/{index}", "enum symbol"))
            if symbol in seen:
                raise self.fail(
                    DUPLICATE_SYMBOL,
                    f"Duplicate enum symbol: {symbol}",
                    f"{pointer}/symbols/{index}",
                    "List each symbol once.",
                )
            seen.add(symbol)
        return seen

    def parse_record(
        self,
        node: dict[str, Any],
        kind: str,
        pointer: str,
        simple: str,
        space: str | None,
        fullname: str,
        aliases: tuple[str, ...],
        doc: str | None,
        props: Mapping[str, Any],
    ) -> RecordSchema:
        raw_fields = node.get("fields")
        if raw_fields.__class__ is not list and not isinstance(raw_fields, list):
            raise self.fail(
                MISSING_ATTRIBUTE,
                f'Record {simple} has no "fields" array',
                pointer + ("/fields" if "fields" in node else ""),
                'Add "fields": an array of {"name": ..., "type": ...} objects ([] for none).',
            )
        record = _new(RecordSchema)
        attrs: dict[str, Any] = {
            "type": "record",
            "fields": (),
            "pointer": pointer,
            "simple_name": simple,
            "namespace": space,
            "aliases": aliases,
            "doc": doc,
            "props": props,
            "is_error": kind == "error",
        }
        _set(record, "__dict__", attrs)
        self.define(record, fullname, pointer)
        building = self.building
        building.add(id(record))
        fields: list[Field] = []
        by_name: dict[str, Field] = {}
        valid = VALID_NAMES
        primitives = PRIMITIVE_TYPES
        new, set_attr, primitive_class, field_class = _new, _set, PrimitiveSchema, Field
        indexes = _INDEXES
        prefix = pointer + "/fields/"
        position = 0
        ftype_node: Schema
        memo = self.fields
        for raw in raw_fields:
            fpointer = prefix + (indexes[position] if position < 4096 else str(position))
            text = None
            if memo is not None and raw.__class__ is dict:
                text = repr(raw)
                known = memo.get((fpointer, text))
                if known is not None:
                    if known.name in by_name:
                        self.duplicate_field(known.name, fullname, by_name, position, fpointer)
                    by_name[known.name] = known
                    fields.append(known)
                    position += 1
                    continue
            # One field (written out here: this loop is the hottest part of a parse).
            name = raw.get("name") if raw.__class__ is dict or isinstance(raw, dict) else None
            if name.__class__ is not str and not isinstance(name, str):
                raise self.fail(
                    MISSING_ATTRIBUTE,
                    'Field has no textual "name"',
                    fpointer,
                    'Each field is an object with "name" and "type".',
                )
            if name not in valid:
                remember_valid(valid_name(name, fpointer + "/name", "field name"))
            ftype = raw.get("type", _MISSING)
            if ftype.__class__ is str and ftype in primitives:
                if len(raw) == 2:  # no default to check: the node is built when first asked for
                    fld = new(field_class)
                    set_attr(
                        fld,
                        "__dict__",
                        {
                            "name": name,
                            "_ptype": ftype,
                            "position": position,
                            "pointer": fpointer,
                        },
                    )
                    if text is not None:
                        self.remember(fld, text)
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
                    f'Field {name!r} has no "type"',
                    fpointer,
                    'Add "type" to the field.',
                )
            elif ftype.__class__ is dict:
                ftype_node = self.parse_object(ftype, fpointer + "/type", space)
            else:
                ftype_node = self.parse(ftype, fpointer + "/type", space)
            fattrs: dict[str, Any] = {
                "name": name,
                "type": ftype_node,
                "position": position,
                "pointer": fpointer,
            }
            if len(raw) > 2:
                self.field_extras(raw, name, ftype_node, fpointer, fattrs)
            fld = new(field_class)
            set_attr(fld, "__dict__", fattrs)
            if text is not None and "aliases" not in fattrs and plain_type(ftype_node) == PLAIN:
                self.remember(fld, text)
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

    def remember(self, fld: Field, text: str) -> None:
        """Keep ``fld`` (a field naming no named type) for the next schema of the memo."""
        memo = self.fields
        if memo is not None:
            if len(memo) >= _FIELD_MEMO_MAX:
                memo.clear()
            fld.__dict__[FIELD_TEXT] = text
            memo[(fld.pointer, text)] = fld

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
        self, raw: dict[str, Any], name: str, ftype: Schema, pointer: str, attrs: dict[str, Any]
    ) -> None:
        """doc, order, default, aliases and other properties of a field, into ``attrs``."""
        if len(raw) == 3 and "default" in raw:  # the common case: name, type and default
            attrs["has_default"] = True
            attrs["default"] = check_default(
                name, ftype, raw["default"], pointer + "/default", self.building
            )
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
            attrs["default"] = check_default(
                name, ftype, raw["default"], pointer + "/default", self.building
            )
        if "aliases" in raw:
            attrs["aliases"] = tuple(aliases_of(raw, pointer))
            self.field_aliases = True
        if not _FIELD_RESERVED.issuperset(raw):
            attrs["props"] = MappingProxyType(
                {k: v for k, v in raw.items() if k not in _FIELD_RESERVED}
            )


PLAIN = 1  # a type of primitives, arrays, maps and unions of them
REFERRING = 2  # the same, and named types a caller lists as defined elsewhere


def plain_type(node: Schema, external: frozenset[int] = frozenset()) -> int:
    """Whether ``node`` names no named type: :data:`PLAIN`, :data:`REFERRING` (it uses only
    named types whose ids are in ``external``), or 0 (it uses or defines another)."""
    found = PLAIN
    stack = [node]
    while stack:
        node = stack.pop()
        cls = node.__class__
        if cls is PrimitiveSchema:
            continue
        if cls is ArraySchema:
            stack.append(node.items)  # type: ignore[attr-defined]
        elif cls is MapSchema:
            stack.append(node.values)  # type: ignore[attr-defined]
        elif cls is UnionSchema:
            stack.extend(node.types)  # type: ignore[attr-defined]
        elif id(node) in external:
            found = REFERRING
        else:
            return 0
    return found


def _props(node: dict[str, Any], kind: str) -> Mapping[str, Any]:
    reserved = _RESERVED[kind]
    props = {k: v for k, v in node.items() if k not in reserved}
    return MappingProxyType(props) if props else EMPTY_PROPS
