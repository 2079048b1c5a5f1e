"""Avro schema -> Spark SQL type, as Spark's own ``SchemaConverters.toSqlType`` maps it (Spark 4.0).

Pure Python (no pyspark): the CLI prints DDL without starting a JVM. The result is Spark's JSON
form of a DataType (``StructType.jsonValue()``), so ``StructType.fromJson`` turns it into the real
thing; ``to_ddl`` renders the DDL string ``StructType.toDDL`` would.

The mapping, as in Spark 4.0 ``org.apache.spark.sql.avro.SchemaConverters``:

* int -> integer (date -> date); long -> long (timestamp-millis/-micros -> timestamp,
  local-timestamp-millis/-micros -> timestamp_ntz); float, double, boolean, string as themselves;
  null -> void; bytes and fixed -> binary (decimal logical type -> decimal(p,s));
  enum -> string; record -> struct; array -> array; map -> map<string, ...>;
* union with null -> the rest, nullable; [int, long] -> long; [float, double] -> double;
  any other union -> struct<member0, member1, ...> with every member nullable, or with
  ``stable_union_names`` (from_avro's ``enableStableIdentifiersForUnionType``, the readers'
  default) struct<member_int, member_Address, ...>: ``member_`` and the branch's type name
  (a named type's name without namespace); two branches whose names differ only by case or
  namespace are refused, as Spark refuses them;
* everything else is not nullable; recursive records are refused (Spark's default).

``from_avro`` in PERMISSIVE mode makes every field nullable (``as_nullable``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from schemacli.contracts.avro.facts import (
    PRIMITIVE_TYPES,
    SPARK_TYPES,
    decimal_problem,
    spark_sql_name,
)
from schemacli.contracts.avro.parse import parse_schema
from schemacli.contracts.avro.schema import (
    ArraySchema,
    FixedSchema,
    MapSchema,
    NamedSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from schemacli.errors import InputError, Location, SchemaParseError

SparkType = Any  # Spark's JSON form: a type name (str) or a dict for struct/array/map


class UnsupportedForSpark(InputError):
    """The Avro schema cannot be turned into a Spark type (e.g. a recursive record)."""


def avro_to_spark(
    schema: Any, *, source: str | None = None, stable_union_names: bool = False
) -> tuple[SparkType, bool]:
    """Spark's (type, nullable) for an Avro schema: the parsed model (``contracts.avro``), or
    JSON text or parsed JSON, which is parsed first (as Java's Schema.Parser, Spark's own).

    ``stable_union_names`` names union members ``member_<type name>`` as from_avro does with
    ``enableStableIdentifiersForUnionType`` (the default of spark_avro's readers); without it,
    ``member0..N`` as plain from_avro does. Raises UnsupportedForSpark (with a JSON pointer) for
    recursive records, a schema Java refuses (an unknown name, ...), or union branches whose
    stable names clash.
    """
    if not isinstance(schema, Schema):
        if isinstance(schema, str):
            try:
                schema = json.loads(schema)
            except json.JSONDecodeError:
                pass  # a bare type name such as "string" is not JSON text
        try:
            schema = parse_schema(schema)
        except SchemaParseError as err:
            pointer = err.location.pointer if err.location is not None else None
            raise UnsupportedForSpark(
                err.message, location=Location(source=source, pointer=pointer), hint=err.hint
            ) from err
    return _Converter(source, stable_union_names).convert(schema, schema.pointer, ())


def as_nullable(spark_type: SparkType) -> SparkType:
    """The type with every nested field, element and value nullable (``DataType.asNullable``)."""
    if isinstance(spark_type, str):
        return spark_type
    kind = spark_type["type"]
    if kind == "struct":
        return {
            "type": "struct",
            "fields": [
                {**field, "type": as_nullable(field["type"]), "nullable": True}
                for field in spark_type["fields"]
            ],
        }
    if kind == "array":
        return {
            **spark_type,
            "elementType": as_nullable(spark_type["elementType"]),
            "containsNull": True,
        }
    return {
        **spark_type,
        "valueType": as_nullable(spark_type["valueType"]),
        "valueContainsNull": True,
    }


# The logical types that change the Spark type of their base (a decimal's is decimal(p,s)).
_LOGICAL = {
    ("int", "date"): "date",
    ("long", "timestamp-millis"): "timestamp",
    ("long", "timestamp-micros"): "timestamp",
    ("long", "local-timestamp-millis"): "timestamp_ntz",
    ("long", "local-timestamp-micros"): "timestamp_ntz",
}


class _Converter:
    """Walks the model; ``at`` is where the node is used in the text (a named type used by
    name is defined elsewhere), for the errors' pointers."""

    def __init__(self, source: str | None, stable_union_names: bool = False) -> None:
        self.source = source
        self.stable_union_names = stable_union_names

    def _error(self, message: str, pointer: str, hint: str) -> UnsupportedForSpark:
        return UnsupportedForSpark(
            message, location=Location(source=self.source, pointer=pointer), hint=hint
        )

    def convert(
        self, node: Schema, at: str, enclosing: tuple[RecordSchema, ...]
    ) -> tuple[SparkType, bool]:
        if isinstance(node, UnionSchema):
            return self._union(node, enclosing)
        if isinstance(node, RecordSchema):
            return self._record(node, at, enclosing)
        if isinstance(node, ArraySchema):
            element, nullable = self.convert(node.items, node.pointer + "/items", enclosing)
            return {"type": "array", "elementType": element, "containsNull": nullable}, False
        if isinstance(node, MapSchema):
            value, nullable = self.convert(node.values, node.pointer + "/values", enclosing)
            map_type = {
                "type": "map",
                "keyType": "string",
                "valueType": value,
                "valueContainsNull": nullable,
            }
            return map_type, False
        logical = node.logical_type
        if logical == "decimal" and node.type in ("bytes", "fixed"):
            size = node.size if isinstance(node, FixedSchema) else None
            if decimal_problem(node.props, size) is None:
                return f"decimal({node.props['precision']},{node.props.get('scale', 0)})", False
            # Avro ignores an invalid decimal logical type; so does Spark.
        spark_type = _LOGICAL.get((node.type, logical or "")) or SPARK_TYPES[node.type]
        return spark_type, node.type == "null"

    def _recursive(self, full: str, pointer: str) -> UnsupportedForSpark:
        return self._error(
            f"record {full!r} refers to itself: Spark cannot map a recursive Avro record",
            pointer,
            "Spark refuses recursive records by default (option recursiveFieldMaxDepth 1..12 "
            "truncates them); break the cycle or read that field as bytes.",
        )

    def _record(
        self, node: RecordSchema, at: str, enclosing: tuple[RecordSchema, ...]
    ) -> tuple[SparkType, bool]:
        if any(node is outer for outer in enclosing):
            raise self._recursive(node.fullname, at)
        inner = (*enclosing, node)
        fields = []
        for field in node.fields:
            spark_type, nullable = self.convert(field.type, field.pointer + "/type", inner)
            fields.append(
                {"name": field.name, "type": spark_type, "nullable": nullable, "metadata": {}}
            )
        return {"type": "struct", "fields": fields}, False

    def _union(
        self, node: UnionSchema, enclosing: tuple[RecordSchema, ...]
    ) -> tuple[SparkType, bool]:
        branches = [(f"{node.pointer}/{i}", b) for i, b in enumerate(node.types)]
        non_null = [(at, b) for at, b in branches if b.type != "null"]
        if len(non_null) < len(branches):
            if len(non_null) == 1:
                at, branch = non_null[0]
                spark_type, _ = self.convert(branch, at, enclosing)
                return spark_type, True
            spark_type, _ = self._union_without_null(non_null, enclosing)
            return spark_type, True
        return self._union_without_null(branches, enclosing)

    def _union_without_null(
        self, branches: list[tuple[str, Schema]], enclosing: tuple[RecordSchema, ...]
    ) -> tuple[SparkType, bool]:
        # Avro's getType of each branch, logical types ignored; a named type is just "named".
        kinds = {b.type if b.type in PRIMITIVE_TYPES else "named" for _, b in branches}
        if len(branches) == 1:
            at, branch = branches[0]
            return self.convert(branch, at, enclosing)
        if len(branches) == 2 and kinds == {"int", "long"}:
            return "long", False
        if len(branches) == 2 and kinds == {"float", "double"}:
            return "double", False
        members, seen = [], set()
        for position, (at, branch) in enumerate(branches):
            spark_type, _ = self.convert(branch, at, enclosing)
            name = f"member{position}"
            if self.stable_union_names:
                name = f"member_{_branch_name(branch)}"
                if name.lower() in seen:
                    raise self._error(
                        f"union branches clash on the stable member name {name!r} "
                        "(type names are compared without namespace and case)",
                        at,
                        "Rename one of the types, or read with stable_union_names=False "
                        "(positional member0..N).",
                    )
                seen.add(name.lower())
            members.append({"name": name, "type": spark_type, "nullable": True, "metadata": {}})
        return {"type": "struct", "fields": members}, False


def _branch_name(node: Schema) -> str:
    """Avro's Schema.getName of a union branch: a named type's name without namespace, else
    the type (logical types ignored): what Spark's stable union member names use."""
    return node.simple_name if isinstance(node, NamedSchema) else node.type


_PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _quote(name: str) -> str:
    # Spark's QuotingUtils.quoteIfNeeded: backticks unless a plain identifier.
    if _PLAIN_NAME.match(name):
        return name
    return "`" + name.replace("`", "``") + "`"


def type_sql(spark_type: SparkType) -> str:
    """Spark's ``DataType.sql`` for a type in JSON form (``INT``, ``ARRAY<STRING>``, ...)."""
    if isinstance(spark_type, str):
        return spark_sql_name(spark_type)
    kind = spark_type["type"]
    if kind == "array":
        return f"ARRAY<{type_sql(spark_type['elementType'])}>"
    if kind == "map":
        return f"MAP<{type_sql(spark_type['keyType'])}, {type_sql(spark_type['valueType'])}>"
    fields = ", ".join(
        f"{_quote(f['name'])}: {type_sql(f['type'])}{'' if f['nullable'] else ' NOT NULL'}"
        for f in spark_type["fields"]
    )
    return f"STRUCT<{fields}>"


def to_ddl(spark_type: SparkType) -> str:
    """The DDL string of a struct type, as ``StructType.toDDL`` writes it; else ``type_sql``."""
    if isinstance(spark_type, dict) and spark_type["type"] == "struct":
        return ",".join(
            f"{_quote(f['name'])} {type_sql(f['type'])}{'' if f['nullable'] else ' NOT NULL'}"
            for f in spark_type["fields"]
        )
    return type_sql(spark_type)
