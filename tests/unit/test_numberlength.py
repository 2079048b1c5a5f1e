"""Java's limit on the length of a JSON number (schemacli.contracts.jsontext.numberlength),
without Java: the same boundary cases the oracle tests decide with Avro 1.12.0."""

from __future__ import annotations

import pytest

from schemacli.contracts.jsontext.numberlength import number_too_long


def schema_with(number: str) -> str:
    return f'{{"type": "double", "doc": "x", "default": {number}}}'


@pytest.mark.parametrize(
    ("number", "digits"),
    [
        ("9" * 1000, None),
        ("9" * 1001, 1001),
        ("-" + "9" * 1000, None),  # the sign does not count
        ("1." + "0" * 999, None),
        ("1." + "0" * 1000, 1001),  # integer and fraction digits count together
        ("1" + "0" * 998 + "e1", None),
        ("1" + "0" * 999 + "e+1", 1001),  # so do the exponent's
        ("0." + "0" * 1000, None),  # a leading 0 counts as none
    ],
)
def test_a_number_is_too_long_past_1000_digits_as_jackson_counts_them(number, digits):
    found = number_too_long(schema_with(number))
    assert (found[0] if found else None) == digits
    if found:
        assert found[1] == schema_with(number).index(number)


def test_digits_inside_strings_are_not_a_number():
    assert number_too_long('{"doc": "' + "9" * 5000 + '", "type": "int"}') is None


def test_the_first_long_number_is_the_one_reported():
    text = "[" + "1" * 1001 + ", " + "2" * 2000 + "]"
    assert number_too_long(text) == (1001, 1)


def test_a_number_split_evenly_across_its_three_parts_is_still_found():
    # No run of digits in it reaches 335: integer 334, fraction 334, exponent 333 digits.
    number = "1" * 334 + "." + "1" * 334 + "e" + "1" * 333
    assert number_too_long(schema_with(number)) == (1001, schema_with(number).index(number))


def test_thousands_of_short_numbers_and_digits_in_names_are_not_too_long():
    fields = ", ".join(f'{{"name": "f{i}", "type": "int", "default": {i}}}' for i in range(3000))
    assert number_too_long(f'{{"type": "record", "name": "R", "fields": [{fields}]}}') is None
