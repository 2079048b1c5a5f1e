"""The conversions that are shapes of the mapping rather than functions of one value: a record
built field by field, a default, a hand-written expression, an unresolved marker. Each road's
walker handles them (``sql._Compiler``, ``jsonata._Down``, ``recordplan``, ``preview``); their
specs carry the documentation and the failure policy."""

from __future__ import annotations

from converters.mapping.conversions.spec import Doc, Spec
from converters.mapping.model import Conversion


class Record(Spec):
    conversion = Conversion.RECORD
    doc = Doc(
        "record → record (different shape)",
        "`named_struct(...)` of the `path.sub` rules",
        "a child fails; a null v2 record into a non-null v1 record",
    )
    can_fail = False  # its children's rules fail, each with its own policy


class Default(Spec):
    conversion = Conversion.DEFAULT
    doc = Doc("v2 lacks the field", "the typed literal of v1's (or the rule's) default", "never")
    can_fail = False


class Sql(Spec):
    conversion = Conversion.SQL
    doc = Doc("anything", "your `expr`, cast to the v1 type", "your `error_when`")
    can_fail = True


class Unresolved(Spec):
    conversion = Conversion.UNRESOLVED
    doc = None  # a marker the planner writes: the mapping is not deployable until resolved
    can_fail = False
