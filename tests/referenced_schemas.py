"""An order whose schema uses Confluent references two levels deep, for the tests of the one
registry road (unit, against the in-process fake; integration, against the real registry).

``x.Color`` (an enum) is one subject's, ``x.Address`` (a record using ``x.Color`` by reference)
another's, and the v2 ``shop.Order`` uses ``x.Address`` by reference. ``ORDER_V2_INLINE`` is the
same v2 written in one file, ``ORDER_V1`` the v1 a mapping converts it to (``total`` a float).
"""

from __future__ import annotations

from typing import Any

COLOR: dict[str, Any] = {
    "type": "enum",
    "name": "Color",
    "namespace": "x",
    "symbols": ["RED", "GREEN", "BLUE"],
}
ADDRESS: dict[str, Any] = {
    "type": "record",
    "name": "Address",
    "namespace": "x",
    "fields": [{"name": "street", "type": "string"}, {"name": "color", "type": "x.Color"}],
}
ORDER_V2: dict[str, Any] = {  # as registered: x.Address by reference
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "ship_to", "type": "x.Address"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "total", "type": "string"},
    ],
}
INLINE_ADDRESS: dict[str, Any] = {
    **ADDRESS,
    "fields": [ADDRESS["fields"][0], {"name": "color", "type": COLOR}],
}
ORDER_V2_INLINE: dict[str, Any] = {
    **ORDER_V2,
    "fields": [
        ORDER_V2["fields"][0],
        {"name": "ship_to", "type": INLINE_ADDRESS},
        *ORDER_V2["fields"][2:],
    ],
}
ORDER_V1: dict[str, Any] = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "ship_to", "type": INLINE_ADDRESS},
        {"name": "total", "type": "float"},
    ],
}
# the mapping's rules, v2 -> v1 (YAML): the same with the v2 schema by subject or inline
FIELDS = """fields:
  id: {from: id, convert: copy}
  ship_to: {from: ship_to, convert: copy}
  total: {from: total, convert: parse_number, on_error: fail}
"""


def reference(name: str, subject: str, version: int = 1) -> dict[str, Any]:
    """A Confluent reference as the registry's API takes it."""
    return {"name": name, "subject": subject, "version": version}


def register_in_fake(fake, color: str, address: str, order: str) -> None:  # type: ignore[no-untyped-def]
    """The three subjects in the in-process fake registry: ``order`` -> ``address`` ->
    ``color``."""
    fake.add(color, COLOR)
    fake.add(address, ADDRESS, references=[reference("x.Color", color)])
    fake.add(order, ORDER_V2, references=[reference("x.Address", address)])
