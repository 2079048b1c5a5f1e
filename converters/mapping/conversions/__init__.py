"""The catalogue of conversions as specs: what each accepts, how it fails, and what the SQL
road, the JSONata rules, the fast road, the preview and the planner make of it
(``converters.mapping.conversions.spec``).

A new conversion is a member of ``model.Conversion``, a :class:`~.spec.ValueSpec` in its own
module here, its place in :data:`SPECS`, and (for the fast road) its operation in the JVM
writer's ``RecordPlan.java``; each road reads it from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from converters.mapping.conversions.copy import Copy
from converters.mapping.conversions.narrow import Narrow
from converters.mapping.conversions.parse_number import ParseNumber
from converters.mapping.conversions.shapes import Default, Record, Sql, Unresolved
from converters.mapping.conversions.spec import Spec, ValueSpec
from converters.mapping.conversions.to_enum import ToEnum
from converters.mapping.conversions.to_string import ToString
from converters.mapping.conversions.utf8 import BytesToString, StringToBytes
from converters.mapping.model import Conversion

# in the order docs/migration.md's table lists them; the planner proposes the first that fits
SPECS: Mapping[Conversion, Spec] = MappingProxyType(
    {
        spec.conversion: spec
        for spec in (
            Copy(),
            ParseNumber(),
            Narrow(),
            ToString(),
            ToEnum(),
            BytesToString(),
            StringToBytes(),
            Record(),
            Default(),
            Sql(),
            Unresolved(),
        )
    }
)
VALUE_SPECS: tuple[ValueSpec, ...] = tuple(s for s in SPECS.values() if isinstance(s, ValueSpec))


def value_spec(conversion: Conversion) -> ValueSpec | None:
    """The spec of a conversion of one value; None for a shape (record, default, sql,
    unresolved), which each road's walker handles."""
    spec = SPECS[conversion]
    return spec if isinstance(spec, ValueSpec) else None
