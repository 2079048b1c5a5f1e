"""Registry commands against a misbehaving registry, via the CLI: exit 3, words, no traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
V1 = ROOT / "schemas/subjects/taxi-rides-value/v1.avsc"
V2 = ROOT / "schemas/subjects/taxi-rides-value/v2.avsc"
NOT_AVRO = json.dumps(
    {"type": "record", "name": "Ride", "fields": [{"name": "id", "type": "NoSuchType"}]}
)


@pytest.fixture
def cli(fake_registry_cli):
    """schemacli against the fake registry, no retries."""

    def run(*args: str, env: dict[str, str] | None = None):
        return fake_registry_cli(*args, env={"SCHEMACLI_REGISTRY_RETRIES": "0", **(env or {})})

    return run


def assert_registry_error(result) -> None:
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), repr(result.exception)


def test_deeply_nested_json_from_the_registry_exits_3_naming_the_request(cli, fake):
    fake.fail_next(200, b"[" * 200_000)
    result = cli("subjects", "list")
    assert_registry_error(result)
    assert "GET /subjects" in result.stderr


def test_an_id_too_large_for_any_number_exits_3(cli, fake):
    fake.add("foo", V1.read_text())
    real = fake.handle

    def huge_id(method, path, query, body):
        if method == "POST" and path == "/subjects/foo/versions":
            return 200, {"id": 1e400}
        return real(method, path, query, body)

    fake.handle = huge_id
    result = cli("register", V2, "--subject", "foo")
    assert_registry_error(result)
    assert "POST /subjects/foo/versions" in result.stderr


def test_a_compatibility_verdict_given_as_a_string_is_not_read_as_compatible(cli, fake):
    fake.add("foo", V1.read_text())
    real = fake.handle

    def string_verdict(method, path, query, body):
        if path.startswith("/compatibility/"):
            return 200, {"is_compatible": "false"}
        return real(method, path, query, body)

    fake.handle = string_verdict
    result = cli("register", V2, "--subject", "foo", "--dry-run")
    assert_registry_error(result)
    assert "is_compatible" in result.stderr and "not true or false" in result.stderr


@pytest.mark.parametrize("schema", [None, {"type": "int"}], ids=["null", "object"])
def test_a_version_whose_schema_is_not_a_string_exits_3_even_with_json_output(cli, fake, schema):
    fake.add("foo", V1.read_text())
    fake.subjects["foo"][0]["schema"] = schema
    result = cli("subjects", "show", "foo", "-o", "json")
    assert_registry_error(result)
    assert "the schema is" in result.stderr and "not a string" in result.stderr


def test_an_empty_answer_to_a_subject_delete_exits_3_instead_of_claiming_success(cli, fake):
    fake.add("foo", V1.read_text())
    fake.fail_next(200, b"")
    result = cli("subjects", "delete", "foo", "--yes")
    assert_registry_error(result)
    assert "soft-deleted version(s)" not in result.stdout
    assert "DELETE /subjects/foo" in result.stderr


def test_an_invalid_schema_in_the_registry_history_is_a_registry_error_naming_it(cli, fake):
    fake.add("foo", NOT_AVRO)
    result = cli("check", V2, "--subject", "foo", "--registry", fake.url)
    assert_registry_error(result)
    assert "foo:v1" in result.stderr and "not valid Avro" in result.stderr


def test_gate_exits_3_for_an_invalid_schema_in_the_registry_history(cli, fake, tmp_path):
    shutil.copytree(ROOT / "schemas" / "subjects", tmp_path / "schemas" / "subjects")
    fake.add("taxi-rides-value", NOT_AVRO)
    result = cli("gate", "--registry", fake.url)
    assert_registry_error(result)
    assert "taxi-rides-value:v1" in result.stderr


def test_an_invalid_local_file_is_still_an_input_error(cli, fake, tmp_path):
    broken = tmp_path / "broken.avsc"
    broken.write_text(NOT_AVRO)
    result = cli("check", broken, "--subject", "foo", "--registry", fake.url)
    assert result.exit_code == 2, result.output


def test_a_register_that_times_out_says_the_registry_may_have_stored_it(cli, fake):
    # stored, but answered only once the client has given up
    fake.stall = lambda method, path: method == "POST" and path == "/subjects/foo/versions"
    result = cli("register", V1, "--subject", "foo", env={"SCHEMACLI_REGISTRY_TIMEOUT": "0.2"})
    assert_registry_error(result)
    assert "may have stored it" in result.stderr
    assert "schemacli subjects show foo" in result.stderr


def test_control_characters_in_registry_subject_names_are_escaped_in_text_output(cli, fake):
    fake.add("evil\x1b]0;pwned\x07-value", V1.read_text())
    result = cli("subjects", "list")
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert result.stdout.strip() == "evil\\x1b]0;pwned\\x07-value"
    as_json = cli("subjects", "list", "-o", "json")
    assert json.loads(as_json.stdout)["subjects"] == [{"subject": "evil\x1b]0;pwned\x07-value"}]
    for args in (("subjects", "show"), ("config", "get"), ("subjects", "delete")):
        shown = cli(*args, "evil\x1b]0;pwned\x07-value", *(["--yes"] if "delete" in args else []))
        assert shown.exit_code == 0, (args, shown.output)
        assert "\x1b" not in shown.stdout and "evil\\x1b]0;pwned\\x07-value" in shown.stdout, args


@pytest.mark.parametrize("answer", [b"", b"{}", b"false", b"0", b'""'])
def test_an_empty_or_falsy_subject_list_is_a_registry_error_not_no_subjects(cli, fake, answer):
    fake.add("foo", V1.read_text())
    for args in (("subjects", "list"), ("pull", "--store", "pulled", "--no-levels")):
        fake.fail_next(200, answer)
        result = cli(*args)
        assert_registry_error(result)
        assert "GET /subjects" in result.stderr
