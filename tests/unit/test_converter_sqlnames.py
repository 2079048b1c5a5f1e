"""The columns a hand-written Spark SQL rule reads, found without Spark (a warning's basis)."""

import pytest

from converters.mapping.sqlnames import column_names


@pytest.mark.parametrize(
    ("expr", "names"),
    [
        ("try_cast(total_amount AS FLOAT)", ["total_amount"]),
        ("cast(a as decimal(10, 2)) + cast(b AS array<int>)[0]", ["a", "b"]),
        ("upper(`first name`) || ' ' || last", ["first name", "last"]),
        ("pickup.lat + Pickup.lon", ["pickup", "Pickup"]),
        ("CASE WHEN x IS NULL THEN 'n/a' ELSE lower(x) END", ["x"]),
        ("transform(items, (v, i) -> v * i) ", ["items"]),
        ("filter(tags, t -> t != 'x')", ["tags"]),
        ("concat('a.b', \"c d\", 12.5e3, 10L, X'0A', DATE '2020-01-01')", []),
        ("amount BETWEEN 0 AND 10 AND NOT flag OR current_date > day", ["amount", "flag", "day"]),
        ("m['key'] + `we``ird`", ["m", "we`ird"]),
        ("ts + INTERVAL 1 DAY + INTERVAL '1-2' YEAR TO MONTH - hour", ["ts", "hour"]),
    ],
)
def test_column_names_are_the_first_segments_of_references_not_functions_or_keywords(expr, names):
    assert column_names(expr) == names
