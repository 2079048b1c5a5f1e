"""One notion of located positions: schema files and mapping files find a line the same way."""

from __future__ import annotations

from unittest import mock

import pytest

import schemacli.contracts.jsontext.document as document
import schemacli.contracts.jsontext.positions as positions
from converters.mapping.reader import loads
from schemacli.contracts.jsontext.pointer import join_pointer, parent_pointer
from schemacli.contracts.jsontext.positions import Positions, nearest
from schemacli.contracts.jsontext.source import parse_text
from schemacli.errors import InputError

MAPPING = """\
version: 1
source: {schema: v2.avsc}
target: {schema: v1.avsc}
fields:
  a/b: {from: x}
  total: {from: total}
"""

SCHEMA = """\
{"type": "record", "name": "R",
 "fields": [
   {"name": "a", "type": "int"}
 ]}
"""


def test_a_mapping_error_and_a_schema_error_find_their_line_by_the_same_nearest_ancestor_lookup():
    assert document.nearest is positions.nearest  # the schema reader uses the shared walk up
    calls: list[str] = []
    real = positions.nearest

    def spy(pointer: str, find):  # type: ignore[no-untyped-def]
        calls.append(pointer)
        return real(pointer, find)

    with mock.patch.object(positions, "nearest", spy), mock.patch.object(document, "nearest", spy):
        mapping = loads(MAPPING, source="m.yaml")
        # a key the mapping lacks is placed at its nearest ancestor: the rule's own key
        where = mapping.location("/fields/total/convert")
        assert (where.source, where.line, where.column) == ("m.yaml", 6, 3)
        doc = parse_text(SCHEMA, "s.avsc")
        # a member the schema lacks is placed at its nearest ancestor: the field's object
        where = doc.location("/fields/0/default")
        assert (where.source, where.line, where.column) == ("s.avsc", 3, 4)
    assert calls == ["/fields/total/convert", "/fields/0/default"]


def test_a_mapping_key_with_a_slash_keeps_its_unescaped_pointer_in_errors():
    with pytest.raises(InputError) as err:
        loads(MAPPING.replace("{from: x}", "{from: x, convert: nope}"), source="m.yaml")
    loc = err.value.location
    assert loc is not None
    assert (loc.pointer, loc.line, loc.column) == ("/fields/a/b/convert", 5, 18)
    assert join_pointer("/fields", "a/b", escape=False) == "/fields/a/b"
    assert join_pointer("/fields", "a/b") == "/fields/a~1b"


def test_the_walk_up_stops_at_the_root():
    assert parent_pointer("/fields/3/type") == "/fields/3"
    assert nearest("/a/b", {"": (1, 1)}.get) == (1, 1)
    assert nearest("/a/b", {}.get) is None
    assert Positions({"/a": (2, 3)}).location("f", "/a/b/c").line == 2
    assert Positions().location("f", "/a").line is None
