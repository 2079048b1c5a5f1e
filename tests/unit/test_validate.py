"""validate_paths: a fixture per kind of error and warning, each with place, pointer and hint."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from schemacli.contracts.findings import Severity
from schemacli.contracts.lint import validate as validate_module
from schemacli.contracts.lint.validate import validate_paths

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "avsc"
ROOT = Path(__file__).resolve().parents[2]

# file (under fixtures/avsc/bad), kind, line, column, pointer, a word of the message, of the hint
ERRORS = [
    (
        "unknown_type.avsc",
        "UNDEFINED_NAME",
        7,
        30,
        "/fields/1/type",
        "Undefined name: com.acme.Zone",
        "com.acme.Zone.avsc",
    ),
    (
        "default_mismatch.avsc",
        "INVALID_DEFAULT",
        5,
        54,
        "/fields/0/default",
        "Invalid default",
        "default",
    ),
    (
        "default_null_for_non_null.avsc",
        "INVALID_DEFAULT",
        5,
        51,
        "/fields/0/default",
        "null is not a string",
        "default",
    ),
    (
        "int_default_out_of_range.avsc",
        "INVALID_DEFAULT",
        5,
        50,
        "/fields/0/default",
        "3000000000",
        "default",
    ),
    (
        "duplicate_field.avsc",
        "DUPLICATE_FIELD",
        7,
        14,
        "/fields/2/name",
        "Duplicate field 'fare'",
        "rename",
    ),
    (
        "duplicate_symbol.avsc",
        "DUPLICATE_SYMBOL",
        4,
        31,
        "/symbols/2",
        "Duplicate enum symbol",
        "once",
    ),
    (
        "invalid_name.avsc",
        "INVALID_NAME",
        5,
        14,
        "/fields/0/name",
        "total-amount",
        "letters, digits or _",
    ),
    ("fixed_without_size.avsc", "INVALID_FIXED_SIZE", 5, 30, "/fields/0/type", "size", '"size"'),
    (
        "enum_default_not_symbol.avsc",
        "INVALID_DEFAULT",
        5,
        14,
        "/default",
        "VOUCHER",
        "one of the symbols",
    ),
    ("nested_union.avsc", "NESTED_UNION", 5, 38, "/fields/0/type/1", "union", "outer union"),
    (
        "duplicate_union_branch.avsc",
        "DUPLICATE_UNION_BRANCH",
        5,
        47,
        "/fields/0/type/2",
        "Duplicate in union: float",
        "only once",
    ),
    (
        "named_after_primitive.avsc",
        "INVALID_NAME",
        5,
        53,
        "/fields/0/type/name",
        "primitive",
        "namespace",
    ),
    ("record_without_fields.avsc", "MISSING_ATTRIBUTE", 1, 1, "", 'no "fields"', '"fields"'),
    (
        "array_without_items.avsc",
        "MISSING_ATTRIBUTE",
        5,
        31,
        "/fields/0/type",
        '"items"',
        '"items"',
    ),
    ("field_without_type.avsc", "MISSING_ATTRIBUTE", 6, 5, "/fields/1", 'no "type"', '"type"'),
    ("invalid_order.avsc", "INVALID_SCHEMA", 5, 45, "/fields/0/order", "order", "ascending"),
    ("trailing_comma.avsc", "INVALID_JSON", 5, 35, None, "trailing comma", "remove the comma"),
    ("unquoted_type.avsc", "INVALID_JSON", 5, 28, None, "found a word without quotes", "quoted"),
    ("truncated.avsc", "INVALID_JSON", 6, 1, None, "ends before", "close every"),
    ("empty.avsc", "INVALID_JSON", 1, 1, None, "empty", "one JSON value"),
    ("binary.avsc", "UNREADABLE_FILE", 1, 18, None, "binary", ".avsc"),
    ("latin1.avsc", "UNREADABLE_FILE", 1, 47, None, "UTF-8", "UTF-8"),
    (
        "missing_reference/ride.avsc",
        "UNDEFINED_NAME",
        6,
        32,
        "/fields/0/type",
        "com.acme.geo.Point",
        "com.acme.geo.Point.avsc",
    ),
]


@pytest.mark.parametrize(
    "name,kind,line,column,pointer,what,how", ERRORS, ids=[e[0] for e in ERRORS]
)
def test_each_kind_of_invalid_schema_is_reported_at_file_line_column_with_hint(
    name: str, kind: str, line: int, column: int, pointer: str | None, what: str, how: str
) -> None:
    path = FIXTURES / "bad" / name
    report = validate_paths([path])
    assert not report.ok
    [result] = report.files
    [finding] = result.findings
    assert finding.severity is Severity.ERROR
    assert finding.kind == kind
    loc = finding.location
    assert (loc.source, loc.line, loc.column, loc.pointer) == (str(path), line, column, pointer)
    assert what in finding.message
    assert finding.hint and how in finding.hint
    assert result.fingerprints is None


def test_bad_declared_reference_is_reported_in_the_references_file() -> None:
    report = validate_paths([FIXTURES / "bad" / "bad_sidecar" / "ride.avsc"])
    [finding] = report.findings
    assert finding.kind == "BAD_REFERENCE"
    loc = finding.location
    assert loc.source.endswith("ride.references.json")
    assert (loc.line, loc.column, loc.pointer) == (2, 38, "/0/path")
    assert "money.avsc" in finding.message and "relative" in finding.hint


def test_circular_file_references_are_reported_in_each_file_with_the_cycle() -> None:
    report = validate_paths([FIXTURES / "cycle"])
    assert [r.source.rsplit("/", 1)[1] for r in report.files] == [
        "com.acme.Edge.avsc",
        "com.acme.Node.avsc",
    ]
    for result in report.files:
        [finding] = result.findings
        assert finding.kind == "CIRCULAR_REFERENCE"
        assert finding.location.source == result.source
        assert re.search(r"Edge\.avsc -> .*Node\.avsc -> .*Edge\.avsc", finding.message)
        assert "one file" in finding.hint


# file (under fixtures/avsc/warn), kind, line, column, pointer, consumers named in the message
WARNINGS = [
    (
        "union_default_not_first.avsc",
        "UNION_DEFAULT_NOT_FIRST",
        5,
        61,
        "/fields/0/default",
        "Python avro package fails",
    ),
    (
        "enum_default_not_symbol.avsc",
        "ENUM_DEFAULT_NOT_SYMBOL",
        6,
        17,
        "/fields/0/default",
        "Java (and so Spark) fails",
    ),
    (
        "fixed_default_size.avsc",
        "FIXED_DEFAULT_SIZE",
        5,
        87,
        "/fields/0/default",
        "fastavro and the Python avro package return all 3",
    ),
    (
        "bytes_default_not_latin1.avsc",
        "BYTES_DEFAULT_NOT_LATIN1",
        5,
        52,
        "/fields/0/default",
        "Java turns it into '?'",
    ),
    (
        "decimal_scale_above_precision.avsc",
        "INVALID_DECIMAL",
        5,
        99,
        "/fields/0/type/scale",
        "fastavro refuses",
    ),
    (
        "decimal_fixed_too_small.avsc",
        "INVALID_DECIMAL",
        5,
        114,
        "/fields/0/type/precision",
        "fastavro refuses",
    ),
    (
        "decimal_precision_zero.avsc",
        "INVALID_DECIMAL",
        5,
        87,
        "/fields/0/type/precision",
        "Java and the Python avro package ignore",
    ),
    ("non_ascii_record_name.avsc", "NON_ASCII_NAME", 3, 11, "/name", "Python avro package refuses"),
    (
        "non_ascii_enum_symbol.avsc",
        "NON_ASCII_NAME",
        4,
        23,
        "/symbols/1",
        "fastavro and the Python avro package refuse",
    ),
    (
        "logical_type_ignored.avsc",
        "LOGICAL_TYPE_IGNORED",
        5,
        63,
        "/fields/0/type/logicalType",
        "Java and the Python avro package ignore",
    ),
    (
        "logical_type_on_field.avsc",
        "LOGICAL_TYPE_IGNORED",
        5,
        53,
        "/fields/0/logicalType",
        "Java (and so the registry and Spark) reads a logical type only on a type",
    ),
    (
        "redefined_name.avsc",
        "REDEFINED_NAME",
        6,
        33,
        "/fields/1/type",
        "fastavro and the Python avro package refuse",
    ),
    ("json_comment.avsc", "JSON_COMMENT", 5, 5, None, "fastavro, the Python avro package"),
    ("duplicate_key.avsc", "DUPLICATE_KEY", 4, 3, "/name", "keep the last value"),
    # not in warn/: the Java claims harness there reads its files as UTF-8
    (
        "../encoding/position-utf16le.avsc",
        "ENCODING_NOT_UTF8",
        1,
        1,
        None,
        "fastavro and the Python avro package read schema files as UTF-8 and refuse it",
    ),
    (
        "../fallback/price.avsc",
        "NULL_NAMESPACE_FALLBACK",
        5,
        41,
        "/fields/0/type",
        "fastavro and the Python avro package look for 'com.acme.Money' and refuse",
    ),
]


@pytest.mark.parametrize(
    "name,kind,line,column,pointer,consumers", WARNINGS, ids=[w[0] for w in WARNINGS]
)
def test_each_warning_names_place_and_the_consumers_that_would_refuse(
    name: str, kind: str, line: int, column: int, pointer: str | None, consumers: str
) -> None:
    path = FIXTURES / "warn" / name
    report = validate_paths([path])
    assert report.ok, "warnings alone keep a file valid"
    [result] = report.files
    [finding] = result.findings
    assert finding.severity is Severity.WARNING
    assert finding.kind == kind
    loc = finding.location
    assert (loc.source, loc.line, loc.column, loc.pointer) == (str(path), line, column, pointer)
    assert consumers in finding.message
    assert finding.hint
    assert result.fingerprints is not None


@pytest.mark.parametrize("name", [w[0] for w in WARNINGS])
def test_strict_turns_each_warning_into_an_error(name: str) -> None:
    report = validate_paths([FIXTURES / "warn" / name], strict=True)
    assert not report.ok
    assert {f.severity for f in report.findings} == {Severity.ERROR}


def test_every_documented_warning_kind_has_a_fixture() -> None:
    documented = set(re.findall(r"``([A-Z0-9_]+)``\s{2,}", validate_module.__doc__ or ""))
    assert documented == {w[1] for w in WARNINGS}


def test_example_contracts_are_valid_without_warnings() -> None:
    report = validate_paths([ROOT / "schemas"])
    assert len(report.files) == 4
    assert report.findings == ()
    assert all(r.fingerprints for r in report.files)


def test_good_schemas_with_references_validate_and_list_their_files() -> None:
    report = validate_paths([FIXTURES / "refs"])
    assert report.findings == ()
    by_name = {Path(r.source).name: r for r in report.files}
    assert [p.name for p in by_name["customer.avsc"].loaded.referenced_files()] == [
        "com.acme.Address.avsc"
    ]


def test_union_default_matching_first_branch_is_not_warned(tmp_path: Path) -> None:
    path = tmp_path / "ok.avsc"
    path.write_text(
        '{"type": "record", "name": "R", "fields": ['
        '{"name": "a", "type": ["string", "null"], "default": "x"},'
        '{"name": "b", "type": ["null", "string"], "default": null}]}'
    )
    assert validate_paths([path]).findings == ()


def test_warnings_inside_referenced_files_are_reported_only_for_that_file(tmp_path: Path) -> None:
    (tmp_path / "com.acme.Zone.avsc").write_text(
        '{"type": "enum", "name": "Zone", "namespace": "com.acme", "symbols": ["N\u00d6RD"]}'
    )
    (tmp_path / "ride.avsc").write_text(
        '{"type": "record", "name": "Ride", "namespace": "com.acme",'
        ' "fields": [{"name": "z", "type": "Zone"}]}'
    )
    report = validate_paths([tmp_path / "ride.avsc"])
    assert report.findings == ()
    report = validate_paths([tmp_path])
    [finding] = report.findings
    assert finding.location.source.endswith("com.acme.Zone.avsc")


def test_nested_enum_default_inside_a_record_default_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "nested.avsc"
    path.write_text(
        '{"type": "record", "name": "R", "fields": [{"name": "inner", "type": '
        '{"type": "record", "name": "In", "fields": [{"name": "e", "type": '
        '{"type": "enum", "name": "E", "symbols": ["A"]}}]}, "default": {"e": "B"}}]}'
    )
    [finding] = validate_paths([path]).findings
    assert finding.kind == "ENUM_DEFAULT_NOT_SYMBOL"
    assert finding.location.pointer == "/fields/0/default/e"


def test_missing_path_and_folder_without_schemas_are_errors(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("no schemas here")
    report = validate_paths([tmp_path / "nope", tmp_path / "empty"])
    assert not report.ok
    assert [f.kind for f in report.findings] == ["PATH_NOT_FOUND", "NO_SCHEMA_FILES"]
    assert all(f.hint for f in report.findings)


def test_file_named_explicitly_is_validated_whatever_its_suffix(tmp_path: Path) -> None:
    path = tmp_path / "schema.json"
    path.write_text('"string"')
    report = validate_paths([path])
    assert report.ok and len(report.files) == 1


def test_files_are_found_recursively_sorted_and_each_once() -> None:
    folder = FIXTURES / "warn"
    report = validate_paths([folder, folder / "json_comment.avsc"])
    sources = [r.source for r in report.files]
    in_warn = [w for w in WARNINGS if "/" not in w[0]]
    assert sources == sorted(sources) and len(sources) == len(set(sources)) == len(in_warn)


def test_json_nested_deeper_than_java_reads_is_an_error_at_level_1001(tmp_path: Path) -> None:
    path = tmp_path / "deep.avsc"
    path.write_text('{"type": "array",\n "items": ' * 1500 + '"int"' + "}" * 1500)
    [finding] = validate_paths([path]).findings
    assert finding.kind == "INVALID_JSON"
    assert finding.message == (
        "the JSON is nested 1500 levels deep; Apache Avro Java (Jackson) reads at most 1000"
    )
    assert (finding.location.line, finding.location.column) == (1001, 11)  # the 1001st {
    assert "define a deeply nested record once by name" in finding.hint


def test_json_nested_as_deep_as_java_reads_is_valid(tmp_path: Path) -> None:
    arrays = tmp_path / "arrays.avsc"
    arrays.write_text('{"type": "array", "items": ' * 1000 + '"int"' + "}" * 1000)
    records = tmp_path / "records.avsc"
    text = '"int"'
    for i in range(333):  # three JSON levels each: 999
        text = f'{{"type":"record","name":"R{i}","fields":[{{"name":"f","type":{text}}}]}}'
    records.write_text(text)
    report = validate_paths([arrays, records])
    assert report.findings == () or list(report.findings) == []
    assert all(f.fingerprints for f in report.files)


def test_hidden_folders_are_not_searched(tmp_path: Path) -> None:
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "bad.avsc").write_text("{")
    (tmp_path / "ok.avsc").write_text('"int"')
    report = validate_paths([tmp_path])
    assert [Path(r.source).name for r in report.files] == ["ok.avsc"]
