"""CEL's types, as the checker reasons about them.

``Prim`` names CEL's scalar types (``int``, ``uint``, ``double``, ``bool``, ``string``,
``bytes``, ``null_type``, ``google.protobuf.Timestamp``/``Duration`` shown as ``timestamp``
and ``duration``) and ``dyn``. ``ListT``/``MapT`` are CEL's containers. ``RecordT`` is an Avro
record as Confluent's executors hand it to CEL: a map from field names to values whose keys the
schema fixes, so ``message.f`` on a name the record lacks is a finding, not a runtime
``no such key``. A record's field types are computed when asked (records may be recursive).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Prim:
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class ListT:
    elem: CelType

    def __str__(self) -> str:
        return f"list({self.elem})"


@dataclass(frozen=True)
class MapT:
    key: CelType
    value: CelType

    def __str__(self) -> str:
        return f"map({self.key}, {self.value})"


@dataclass(frozen=True)
class FieldT:
    """One field of a record as CEL sees it: its CEL type, whether the value may be null (an
    Avro ``["null", T]``), and what the Avro schema says (``avro``: the Avro type's text, for
    messages; ``pointer``: where the field sits in the schema file)."""

    name: str
    type: CelType
    nullable: bool
    avro: str
    pointer: str
    note: str | None = None  # why the executors present it oddly (a decimal, a time-*)


@dataclass(frozen=True, eq=False)
class RecordT:
    name: str  # the Avro record's full name
    build: Callable[[], Mapping[str, FieldT]] = field(repr=False)
    _fields: dict[str, Mapping[str, FieldT]] = field(default_factory=dict, repr=False)

    @property
    def fields(self) -> Mapping[str, FieldT]:
        if "f" not in self._fields:
            self._fields["f"] = self.build()
        return self._fields["f"]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RecordT) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("record", self.name))

    def __str__(self) -> str:
        return f"record {self.name}"


CelType = Prim | ListT | MapT | RecordT

INT = Prim("int")
UINT = Prim("uint")
DOUBLE = Prim("double")
BOOL = Prim("bool")
STRING = Prim("string")
BYTES = Prim("bytes")
NULL = Prim("null_type")
TIMESTAMP = Prim("timestamp")
DURATION = Prim("duration")
DYN = Prim("dyn")
TYPE = Prim("type")

NUMBERS = (INT, UINT, DOUBLE)
ORDERED = (INT, UINT, DOUBLE, STRING, BYTES, BOOL, TIMESTAMP, DURATION)


def is_dyn(t: CelType) -> bool:
    return t == DYN


def assignable(a: CelType, b: CelType) -> bool:
    """Whether values of ``a`` and ``b`` may meet in one overload (equal, or one is dyn; the
    parts of lists and maps alike)."""
    if a == DYN or b == DYN:
        return True
    if isinstance(a, ListT) and isinstance(b, ListT):
        return assignable(a.elem, b.elem)
    if isinstance(a, MapT) and isinstance(b, MapT):
        return assignable(a.key, b.key) and assignable(a.value, b.value)
    if isinstance(a, RecordT) and isinstance(b, MapT):
        return b.key in (STRING, DYN)
    if isinstance(b, RecordT) and isinstance(a, MapT):
        return a.key in (STRING, DYN)
    return a == b


def join(a: CelType, b: CelType) -> CelType:
    """The type of a value that is ``a`` or ``b`` (a conditional's branches, list items)."""
    if a == b:
        return a
    if a == NULL:
        return b
    if b == NULL:
        return a
    if isinstance(a, ListT) and isinstance(b, ListT):
        return ListT(join(a.elem, b.elem))
    if isinstance(a, MapT) and isinstance(b, MapT):
        return MapT(join(a.key, b.key), join(a.value, b.value))
    return DYN
