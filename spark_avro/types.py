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

from schemacli.errors import InputError, Location

PRIMITIVES = {
    "null": "void",
    "boolean": "boolean",
    "int": "integer",
    "long": "long",
    "float": "float",
    "double": "double",
    "bytes": "binary",
    "string": "string",
}
NAMED = ("record", "enum", "fixed")

SparkType = Any  # Spark's JSON form: a type name (str) or a dict for struct/array/map


class UnsupportedForSpark(InputError):
    """The Avro schema cannot be turned into a Spark type (e.g. a recursive record)."""


def avro_to_spark(
    schema: Any, *, source: str | None = None, stable_union_names: bool = False
) -> tuple[SparkType, bool]:
    """Spark's (type, nullable) for an Avro schema given as JSON text or parsed JSON.

    ``stable_union_names`` names union members ``member_<type name>`` as from_avro does with
    ``enableStableIdentifiersForUnionType`` (the default of spark_avro's readers); without it,
    ``member0..N`` as plain from_avro does. Raises UnsupportedForSpark (with a JSON pointer) for
    recursive records, unknown names, or union branches whose stable names clash.
    """
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except json.JSONDecodeError:
            pass  # a bare type name such as "string" is not JSON text
    return _Converter(source, stable_union_names).convert(schema, "", None, ())


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


class _Converter:
    def __init__(self, source: str | None, stable_union_names: bool = False) -> None:
        self.source = source
        self.stable_union_names = stable_union_names
        self.named: dict[str, Any] = {}

    def _error(self, message: str, pointer: str, hint: str) -> UnsupportedForSpark:
        return UnsupportedForSpark(
            message, location=Location(source=self.source, pointer=pointer), hint=hint
        )

    def convert(
        self, schema: Any, pointer: str, namespace: str | None, enclosing: tuple[str, ...]
    ) -> tuple[SparkType, bool]:
        if isinstance(schema, list):
            return self._union(schema, pointer, namespace, enclosing)
        if isinstance(schema, str):
            if schema in PRIMITIVES:
                return PRIMITIVES[schema], schema == "null"
            return self._reference(schema, pointer, namespace, enclosing)
        if not isinstance(schema, dict) or "type" not in schema:
            raise self._error(
                f"not an Avro schema: {json.dumps(schema)[:60]}",
                pointer,
                "Use a type name, a union list or an object with a 'type'.",
            )
        kind = schema["type"]
        logical = schema.get("logicalType")
        if kind in NAMED:
            namespace = self._register(schema, namespace)
        if kind == "record" or kind == "error":
            return self._record(schema, pointer, namespace, enclosing)
        if kind == "enum":
            return "string", False
        if kind == "array":
            element, nullable = self.convert(
                schema["items"], f"{pointer}/items", namespace, enclosing
            )
            return {"type": "array", "elementType": element, "containsNull": nullable}, False
        if kind == "map":
            value, nullable = self.convert(
                schema["values"], f"{pointer}/values", namespace, enclosing
            )
            return (
                {
                    "type": "map",
                    "keyType": "string",
                    "valueType": value,
                    "valueContainsNull": nullable,
                },
                False,
            )
        if kind in ("bytes", "fixed") and logical == "decimal":
            precision, scale = schema.get("precision"), schema.get("scale", 0)
            if _valid_decimal(schema, precision, scale):
                return f"decimal({precision},{scale})", False
            # Avro ignores an invalid decimal logical type; so does Spark.
        if kind == "fixed":
            return "binary", False
        if kind == "int" and logical == "date":
            return "date", False
        if kind == "long" and logical in ("timestamp-millis", "timestamp-micros"):
            return "timestamp", False
        if kind == "long" and logical in ("local-timestamp-millis", "local-timestamp-micros"):
            return "timestamp_ntz", False
        if isinstance(kind, str) and kind in PRIMITIVES:
            return PRIMITIVES[kind], kind == "null"
        if isinstance(kind, (dict, list)):
            return self.convert(kind, f"{pointer}/type", namespace, enclosing)
        return self._reference(kind, f"{pointer}/type", namespace, enclosing)

    def _register(self, schema: dict[str, Any], namespace: str | None) -> str | None:
        name = schema.get("name", "")
        space = schema.get("namespace", namespace)
        full = name if "." in name or not space else f"{space}.{name}"
        self.named[full] = schema
        return full.rpartition(".")[0] or None

    def _reference(
        self, name: str, pointer: str, namespace: str | None, enclosing: tuple[str, ...]
    ) -> tuple[SparkType, bool]:
        full = name if "." in name or not namespace else f"{namespace}.{name}"
        target = self.named.get(full, self.named.get(name))
        if target is None:
            raise self._error(
                f"unknown type name {name!r}",
                pointer,
                "Define the named type before using it, or give its full name with the namespace.",
            )
        if target.get("type") == "record":
            full = full if full in self.named else name
            if full in enclosing:
                raise self._recursive(full, pointer)
            return self._record(target, pointer, full.rpartition(".")[0] or None, enclosing)
        return self.convert(
            {**target, "name": full, "namespace": None}, pointer, namespace, enclosing
        )

    def _recursive(self, full: str, pointer: str) -> UnsupportedForSpark:
        return self._error(
            f"record {full!r} refers to itself: Spark cannot map a recursive Avro record",
            pointer,
            "Spark refuses recursive records by default (option recursiveFieldMaxDepth 1..12 "
            "truncates them); break the cycle or read that field as bytes.",
        )

    def _record(
        self,
        schema: dict[str, Any],
        pointer: str,
        namespace: str | None,
        enclosing: tuple[str, ...],
    ) -> tuple[SparkType, bool]:
        name = schema.get("name", "")
        full = name if "." in name or not namespace else f"{namespace}.{name}"
        if full in enclosing:
            raise self._recursive(full, pointer)
        inner = (*enclosing, full)
        fields = []
        for index, field in enumerate(schema.get("fields", [])):
            spark_type, nullable = self.convert(
                field["type"], f"{pointer}/fields/{index}/type", namespace, inner
            )
            fields.append(
                {"name": field["name"], "type": spark_type, "nullable": nullable, "metadata": {}}
            )
        return {"type": "struct", "fields": fields}, False

    def _union(
        self, branches: list[Any], pointer: str, namespace: str | None, enclosing: tuple[str, ...]
    ) -> tuple[SparkType, bool]:
        non_null = [(i, b) for i, b in enumerate(branches) if _type_name(b) != "null"]
        if len(non_null) < len(branches):
            if len(non_null) == 1:
                index, branch = non_null[0]
                spark_type, _ = self.convert(branch, f"{pointer}/{index}", namespace, enclosing)
                return spark_type, True
            spark_type, _ = self._union_without_null(non_null, pointer, namespace, enclosing)
            return spark_type, True
        return self._union_without_null(list(enumerate(branches)), pointer, namespace, enclosing)

    def _union_without_null(
        self,
        branches: list[tuple[int, Any]],
        pointer: str,
        namespace: str | None,
        enclosing: tuple[str, ...],
    ) -> tuple[SparkType, bool]:
        kinds = {_type_name(b) for _, b in branches}
        if len(branches) == 1:
            index, branch = branches[0]
            return self.convert(branch, f"{pointer}/{index}", namespace, enclosing)
        if len(branches) == 2 and kinds == {"int", "long"}:
            return "long", False
        if len(branches) == 2 and kinds == {"float", "double"}:
            return "double", False
        members, seen = [], set()
        for position, (index, branch) in enumerate(branches):
            spark_type, _ = self.convert(branch, f"{pointer}/{index}", namespace, enclosing)
            name = f"member{position}"
            if self.stable_union_names:
                name = f"member_{_branch_name(branch)}"
                if name.lower() in seen:
                    raise self._error(
                        f"union branches clash on the stable member name {name!r} "
                        "(type names are compared without namespace and case)",
                        f"{pointer}/{index}",
                        "Rename one of the types, or read with stable_union_names=False "
                        "(positional member0..N).",
                    )
                seen.add(name.lower())
            members.append({"name": name, "type": spark_type, "nullable": True, "metadata": {}})
        return {"type": "struct", "fields": members}, False


def _branch_name(schema: Any) -> str:
    """Avro's Schema.getName of a union branch: a named type's name without namespace, else
    the type (logical types ignored): what Spark's stable union member names use."""
    if isinstance(schema, dict):
        kind = schema.get("type")
        if kind in NAMED or kind == "error":
            return str(schema.get("name", "")).rpartition(".")[2]
        return kind if isinstance(kind, str) else _branch_name(kind)
    return str(schema).rpartition(".")[2]


def _type_name(schema: Any) -> str | None:
    """The Avro type of a union branch, with logical types ignored (as Avro's getType does)."""
    if isinstance(schema, str):
        return schema if schema in PRIMITIVES else "named"
    if isinstance(schema, dict):
        kind = schema.get("type")
        return kind if isinstance(kind, str) and kind in PRIMITIVES else "named"
    return None


def _valid_decimal(schema: dict[str, Any], precision: Any, scale: Any) -> bool:
    if not isinstance(precision, int) or precision <= 0:
        return False
    if not isinstance(scale, int) or scale < 0 or scale > precision:
        return False
    if schema["type"] == "fixed":
        size = schema.get("size", 0)
        return precision <= int((8 * size - 1) * 0.30102999566398120)  # log10(2)
    return True


_PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _quote(name: str) -> str:
    # Spark's QuotingUtils.quoteIfNeeded: backticks unless a plain identifier.
    if _PLAIN_NAME.match(name):
        return name
    return "`" + name.replace("`", "``") + "`"


def type_sql(spark_type: SparkType) -> str:
    """Spark's ``DataType.sql`` for a type in JSON form (``INT``, ``ARRAY<STRING>``, ...)."""
    if isinstance(spark_type, str):
        names = {"integer": "INT", "long": "BIGINT", "void": "VOID"}
        return names.get(spark_type, spark_type.upper())
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
