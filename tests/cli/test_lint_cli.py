"""`schemacli lint`: exit codes, --fix / --diff / --unsafe-fixes, every output format, the
settings table, the gate's lint, and no traceback (nor any write) on bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from schemacli.contracts.lint.ruleset import RULES
from tests.output_documents import FORMATS, parse

ROOT = Path(__file__).resolve().parents[2]

OPTIONAL = """{
  "type": "record",
  "name": "Ride",
  "namespace": "com.acme",
  "fields": [
    {"name": "ride_id", "type": "string"},
    {"name": "tip", "type": ["null", "double"]}
  ]
}
"""
CLEAN = OPTIONAL.replace('["null", "double"]}', '["null", "double"], "default": null}')
WARNING_ONLY = CLEAN.replace('"name": "ride_id"', '"name": "from"')


def run(*args: str | Path, input: str | None = None):
    result = CliRunner().invoke(app, [str(a) for a in args], input=input)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result


@pytest.fixture
def here(tmp_path, monkeypatch):
    """An empty project folder (no settings file above it) as the current directory."""
    (tmp_path / "schemacli.toml").write_text('store = "schemas"\n')
    monkeypatch.chdir(tmp_path)
    for name in ("SCHEMACLI_STORE", "SCHEMACLI_DEFAULT_LEVEL", "SCHEMACLI_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- verdicts -----------------------------------------------------------------------------------


def test_a_clean_file_exits_0(here):
    result = run("lint", write(here, "a.avsc", CLEAN))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "lint: passed (1 file)"


def test_an_error_finding_exits_1_with_place_kind_hint_and_fix(here):
    result = run("lint", write(here, "a.avsc", OPTIONAL))
    assert result.exit_code == 1
    assert "a.avsc:7:5 (at /fields/1): error E001: field 'tip' is optional" in result.stdout
    assert "fix (safe): Add \"default\": null to field 'tip'" in result.stdout


def test_warnings_exit_0_and_strict_makes_them_fail(here):
    path = write(here, "a.avsc", WARNING_ONLY)
    relaxed = run("lint", path)
    assert relaxed.exit_code == 0 and "warning N006" in relaxed.stdout
    assert run("lint", "--strict", path).exit_code == 1


def test_folders_are_searched_for_avsc_files(here):
    write(here, "s/x/a.avsc", CLEAN)
    write(here, "s/b.avsc", OPTIONAL)
    result = run("lint", here / "s", "-o", "json")
    assert result.exit_code == 1
    names = [Path(c["name"]).name for c in json.loads(result.stdout)["cases"]]
    assert names == ["b.avsc", "a.avsc"]


# -- fixes --------------------------------------------------------------------------------------


def test_fix_writes_the_safe_fix_and_lint_then_passes(here):
    path = write(here, "a.avsc", OPTIONAL)
    result = run("lint", "--fix", path)
    assert result.exit_code == 0, result.output
    assert path.read_text() == CLEAN
    assert "1 fix(es) applied in 1 file(s)" in result.stderr
    assert run("lint", path).exit_code == 0


def test_fix_keeps_crlf_and_a_byte_order_mark(here):
    path = here / "a.avsc"
    path.write_bytes(b"\xef\xbb\xbf" + OPTIONAL.replace("\n", "\r\n").encode())
    assert run("lint", "--fix", path).exit_code == 0
    assert path.read_bytes() == b"\xef\xbb\xbf" + CLEAN.replace("\n", "\r\n").encode()


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32"])
def test_fix_keeps_a_utf16_or_utf32_file_in_its_encoding(here, encoding):
    path = here / "a.avsc"
    path.write_bytes(OPTIONAL.encode(encoding))
    assert run("lint", "--fix", path).exit_code == 0
    assert path.read_bytes() == CLEAN.encode(encoding)


def test_diff_prints_a_unified_diff_and_writes_nothing(here):
    path = write(here, "a.avsc", OPTIONAL)
    result = run("lint", "--diff", path)
    assert result.exit_code == 1
    assert result.stdout.startswith(f"--- {path}\n+++ {path}\n") or "--- a/" in result.stdout
    assert '+    {"name": "tip", "type": ["null", "double"], "default": null}' in result.stdout
    assert path.read_text() == OPTIONAL
    assert run("lint", "--diff", write(here, "b.avsc", CLEAN)).exit_code == 0


def test_unsafe_fixes_apply_only_when_asked(here):
    text = CLEAN.replace('"name": "Ride"', '"name": "ride_event"')
    path = write(here, "a.avsc", text)
    assert run("lint", "--fix", path).exit_code == 0
    assert path.read_text() == text  # a rename is unsafe
    assert run("lint", "--fix", "--unsafe-fixes", path).exit_code == 0
    fixed = json.loads(path.read_text())
    assert fixed["name"] == "RideEvent" and fixed["aliases"] == ["com.acme.ride_event"]


def test_fix_says_which_fix_was_dropped_and_why_and_applies_the_others(here):
    clash = (
        '{"type": "record", "name": "Outer", "namespace": "com.example", "fields": [\n'
        '  {"name": "a", "type": {"type": "record", "name": "my_type", "fields": []}},\n'
        '  {"name": "b", "type": {"type": "record", "name": "MyType", "fields": []}},\n'
        '  {"name": "maybe", "type": ["null", "string"]}\n]}\n'
    )
    path = write(here, "clash.avsc", clash)
    for flag in ("--diff", "--fix"):
        result = run("lint", path, flag, "--unsafe-fixes")
        assert "not applied: Rename record my_type to MyType" in result.stderr
        assert "would not parse" in result.stderr
    assert '"default": null' in path.read_text() and '"my_type"' in path.read_text()


def test_stdin_is_linted_and_fixed_to_stdout(here):
    result = run("lint", "-", input=OPTIONAL)
    assert result.exit_code == 1 and "<stdin>:7:5" in result.stdout
    fixed = run("lint", "--fix", "-", input=OPTIONAL)
    assert fixed.exit_code == 0 and fixed.stdout == CLEAN


def test_a_read_only_file_is_refused_and_nothing_is_written(here):
    if os.geteuid() == 0:
        pytest.skip("root writes read-only files")
    path = write(here, "a.avsc", OPTIONAL)
    other = write(here, "b.avsc", OPTIONAL)
    here.chmod(0o555)
    try:
        result = run("lint", "--fix", path, other)
    finally:
        here.chmod(0o755)
    assert result.exit_code == 2
    assert path.read_text() == OPTIONAL and other.read_text() == OPTIONAL


# -- rules and settings ---------------------------------------------------------------------------


def test_list_rules_and_explain(here):
    listed = run("lint", "--list-rules")
    assert listed.exit_code == 0
    rows = [line.split() for line in listed.stdout.splitlines()[1:]]
    assert [(row[0], row[1], row[2]) for row in rows] == [
        (rule.code, rule.name, rule.category.value) for rule in RULES
    ]
    explained = run("lint", "--explain", "e001")
    assert explained.exit_code == 0
    assert "docs/lint.md#e001-optional-field-without-null-default" in explained.stdout


@pytest.mark.parametrize("flag", [["--list-rules"], ["--explain", "E001"]])
def test_list_rules_and_explain_with_a_path_are_a_usage_error(here, flag):
    # found by tests/fuzz: `lint loop.avsc --list-rules` listed the rules and exited 0
    path = write(here, "a.avsc", OPTIONAL)
    result = run("lint", path, *flag)
    assert result.exit_code == 2
    assert "takes no PATH" in result.output
    assert path.read_text() == OPTIONAL


def test_list_rules_and_explain_give_one_json_document_and_refuse_other_formats(here):
    # found by tests/fuzz: `--list-rules -o json` printed the text table
    listed = json.loads(run("lint", "--list-rules", "-o", "json").stdout)
    assert [r["code"] for r in listed["rules"]] == [r.code for r in RULES]
    one = json.loads(run("lint", "--explain", "E001", "-o", "json").stdout)
    assert [r["code"] for r in one["rules"]] == ["E001"]
    for fmt in ("sarif", "junit", "gitlab", "github"):
        result = run("lint", "--list-rules", "-o", fmt)
        assert result.exit_code == 2
        parse(fmt, result.stdout)  # the error, as a valid document of that format


def test_select_and_ignore_flags(here):
    path = write(here, "a.avsc", WARNING_ONLY)
    assert "N006" not in run("lint", "--ignore", "N006", path).stdout
    selected = run("lint", "--select", "docs", "-o", "json", path)
    kinds = {f["kind"] for c in json.loads(selected.stdout)["cases"] for f in c["findings"]}
    assert kinds == {"D001", "D002"}


def test_the_settings_table_selects_ignores_and_ignores_per_file(here):
    (here / "schemacli.toml").write_text(
        'store = "schemas"\n[lint]\nselect = ["ALL"]\nignore = ["D002"]\n'
        '[lint.per-file-ignores]\n"legacy/*.avsc" = ["E", "N"]\n'
    )
    write(here, "legacy/a.avsc", OPTIONAL)
    write(here, "new/a.avsc", OPTIONAL)
    report = json.loads(run("lint", here, "-o", "json").stdout)
    by_file = {c["name"]: sorted({f["kind"] for f in c["findings"]}) for c in report["cases"]}
    assert by_file[str(here / "legacy/a.avsc")] == ["D001"]
    assert by_file[str(here / "new/a.avsc")] == ["D001", "E001"]


def test_a_configured_field_style(here):
    (here / "schemacli.toml").write_text('[lint]\nfield-style = "camelCase"\n')
    result = run("lint", write(here, "a.avsc", CLEAN))
    assert "field 'ride_id' is not camelCase" in result.stdout


def test_schemacli_ignore_in_the_schema(here):
    text = OPTIONAL.replace(
        '"namespace": "com.acme",', '"namespace": "com.acme",\n  "schemacli:ignore": ["E001"],'
    )
    assert run("lint", write(here, "a.avsc", text)).exit_code == 0


@pytest.mark.parametrize(
    ("table", "message", "line_col"),
    [
        ("[lint]\nselekt = []\n", "unknown key 'selekt' in the lint table", ":2:1"),
        ('[lint]\nselect = ["X9"]\n', "'X9' selects no rule", ":2:1"),
        ('[lint]\nselect = "E"\n', "lint.select = 'E' is not valid", ":2:1"),
        ('[lint]\nfield-style = "kebab"\n', "lint.field-style = 'kebab' is not valid", ":2:1"),
        ('[lint]\ngate = "yes"\n', "lint.gate = 'yes' is not valid", ":2:1"),
        ('[lint.per-file-ignores]\n"a/*" = [1]\n', "is not valid", ":2:1"),
        ("lint = 3\n", "lint must be a table", ":1:1"),
    ],
)
def test_bad_settings_exit_2_naming_the_line_and_column(here, table, message, line_col):
    (here / "schemacli.toml").write_text(table)
    result = run("lint", write(here, "a.avsc", CLEAN))
    assert result.exit_code == 2
    assert message in result.stderr
    assert f"schemacli.toml{line_col}" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "lint needs at least one PATH"),
        (("--unsafe-fixes", "a.avsc"), "--unsafe-fixes only chooses which fixes --fix or --diff"),
        (("--fix", "--diff", "a.avsc"), "give one"),
        (("--select", "X9", "a.avsc"), "--select: 'X9' selects no rule"),
        (("--ignore", "E,,Q", "a.avsc"), "--ignore: 'Q' selects no rule"),
        (("--explain", "X9"), "no such rule"),
        (("-", "a.avsc"), "cannot be linted together"),
    ],
)
def test_bad_flags_exit_2_with_a_message(here, args, message):
    write(here, "a.avsc", CLEAN)
    result = run("lint", *args)
    assert result.exit_code == 2
    assert message in result.output


def test_bad_files_exit_2_with_their_place_and_nothing_is_written(here):
    (here / "empty").mkdir()
    binary = here / "bin.avsc"
    binary.write_bytes(b"\x00\x01\x02")
    broken = write(here, "broken.avsc", '{"type": "record",\n "name": }')
    good = write(here, "good.avsc", OPTIONAL)
    result = run("lint", "--fix", here / "missing.avsc", here / "empty", binary, broken, good)
    assert result.exit_code == 2
    out = result.stdout
    assert "missing.avsc: error PATH_NOT_FOUND" in out
    assert "NO_SCHEMA_FILES" in out
    assert "bin.avsc:1:1: error UNREADABLE_FILE" in out
    assert "broken.avsc:2:10: error INVALID_JSON" in out
    assert good.read_text() == CLEAN  # the good file is fixed; the bad ones are left alone
    assert broken.read_text() == '{"type": "record",\n "name": }'


def test_a_symlink_loop_is_an_unreadable_file_not_a_traceback(here):
    # Python 3.11's Path.resolve raises RuntimeError on a loop (found by tests/fuzz): lint asks
    # where a file sits (relative path, store subject) before it reads it
    (here / "schemas" / "subjects" / "rides-value").mkdir(parents=True)
    for loop in (here / "loop.avsc", here / "schemas" / "subjects" / "rides-value" / "v1.avsc"):
        loop.symlink_to(loop.name)
        result = run("lint", loop)
        assert result.exit_code == 2
        assert "UNREADABLE_FILE: symbolic links in a loop" in result.stdout


def test_an_invalid_schema_exits_2(here):
    path = write(here, "a.avsc", '{"type": "record", "name": "R", "fields": [{"name": "a"}]}')
    assert run("lint", path).exit_code == 2


# -- formats ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_is_one_valid_document_with_the_fix(here, fmt):
    result = run("lint", "-o", fmt, write(here, "a.avsc", OPTIONAL))
    assert result.exit_code == 1
    document = parse(fmt, result.stdout)
    if fmt == "sarif":
        run_ = document["runs"][0]
        (rule,) = run_["tool"]["driver"]["rules"]
        assert rule["helpUri"].endswith("docs/lint.md#e001-optional-field-without-null-default")
        assert rule["help"]["text"]
        (result_,) = run_["results"]
        replacement = result_["fixes"][0]["artifactChanges"][0]["replacements"][0]
        assert replacement["insertedContent"]["text"] == ', "default": null'
    elif fmt == "json":
        (finding,) = document["cases"][0]["findings"]
        assert finding["fixes"][0]["applicability"] == "safe"
    elif fmt == "github":
        assert 'fix (safe): Add "default": null' in document[0]["message"]
    elif fmt == "gitlab":
        assert "fix (safe)" in document[0]["description"]


# -- the gate -----------------------------------------------------------------------------------


def _store(here: Path, *versions: str) -> None:
    for n, text in enumerate(versions, 1):
        write(here, f"schemas/subjects/rides-value/v{n}.avsc", text)


def test_gate_lints_new_versions_only_when_configured(here):
    _store(here, CLEAN, OPTIONAL.replace('"name": "tip"', '"name": "tip2"'))
    quiet = run("gate")
    assert quiet.exit_code == 1  # tip2 without a default: BACKWARD fails anyway
    _store(here, CLEAN, CLEAN.replace('"type": "string"}', '"type": "string", "doc": "x"}'))
    assert run("gate").exit_code == 0
    (here / "schemacli.toml").write_text('store = "schemas"\n[lint]\ngate = true\n')
    assert run("gate").exit_code == 0
    tip_twice = CLEAN.replace(
        '"default": null}', '"default": null},\n    {"name": "Tip", "type": "int", "default": 0}'
    )
    _store(here, CLEAN, tip_twice)
    gated = run("gate", "-o", "json")
    assert gated.exit_code == 1
    (row,) = json.loads(gated.stdout)["cases"]
    assert [(f["kind"], f["subject"]) for f in row["findings"]] == [("N005", "rides-value")]
    assert row["findings"][0]["location"]["source"] == "schemas/subjects/rides-value/v2.avsc"


def test_lint_of_a_store_version_uses_the_subjects_level(here):
    (here / "schemacli.toml").write_text(
        'store = "schemas"\n[subjects."rides-value"]\nlevel = "FULL"\n'
    )
    _store(here, CLEAN)
    result = run("lint", "schemas")
    assert result.exit_code == 0
    assert "warning E003: field 'ride_id' has no default: at level FULL" in result.stdout


def test_gate_without_lint_configured_loads_no_lint_code(here):
    import subprocess
    import sys

    _store(here, CLEAN)
    probe = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from schemacli.app import app\n"
        "result = CliRunner().invoke(app, ['gate'])\n"
        "print(result.exit_code, 'schemacli.contracts.lint.engine' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=here, env=env, capture_output=True, text=True
    )
    assert done.stdout.split() == ["0", "False"], done.stdout + done.stderr


def test_gate_register_registers_nothing_when_a_new_version_fails_lint(here, fake):
    (here / "schemacli.toml").write_text('store = "schemas"\n[lint]\ngate = true\n')
    _store(here, OPTIONAL)  # E001: an error, so the gate fails before anything is registered
    env = {"SCHEMACLI_REGISTRY_URL": ""}
    result = CliRunner().invoke(
        app, ["gate", "--registry", fake.url, "--register", "-o", "json"], env=env
    )
    assert result.exit_code == 1, result.output
    (row,) = json.loads(result.stdout)["cases"]
    assert [f["kind"] for f in row["findings"]] == ["E001"]
    assert "nothing was registered" in result.stderr
    assert fake.subjects == {}
    write(here, "schemas/subjects/rides-value/v1.avsc", CLEAN)
    passed = CliRunner().invoke(app, ["gate", "--registry", fake.url, "--register"], env=env)
    assert passed.exit_code == 0, passed.output
    assert list(fake.subjects) == ["rides-value"]
