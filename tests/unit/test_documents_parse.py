"""Each renderer's document parses whatever characters the report holds: every C0 and C1
control character (NUL included: a schema name may hold "\\u0000"), DEL, lone surrogates,
``]]>``, quotes, ``%`` — in names, messages, hints, sources and old/new values — and the error
documents likewise. The CLI tests (tests/cli/test_output_documents_parse_cli.py) drive the same
through real file names."""

from __future__ import annotations

from urllib.parse import unquote

import pytest

from schemacli.contracts.findings import Finding, Severity
from schemacli.errors import InputError, Location
from schemacli.output import Case, OutputFormat, Report, render
from schemacli.output import formats as output_formats
from schemacli.output.sarif import file_uri
from tests.output_documents import FORMATS, parse

NASTY = (
    "".join(chr(c) for c in range(0x20))
    + "\x7f\x80\x9b\x9f ]]> \"q\" 'a' <&> %25 % , : # ? \u202e \ud800 \udfff \udcff ü€"
)


def nasty_report() -> Report:
    finding = Finding(
        kind="TYPE_MISMATCH",
        message=f"message {NASTY}",
        location=Location(source=f"schemas/{NASTY}/v2.avsc", pointer=f"/fields/{NASTY}", line=2),
        hint=f"hint {NASTY}",
        severity=Severity.ERROR,
        old=NASTY,
        new=[NASTY, {NASTY: 1}],
        subject=NASTY,
    )
    warning = Finding(
        kind="DOC_CHANGED",
        message=NASTY,
        location=Location(source=NASTY),
        severity=Severity.WARNING,
    )
    case = Case(
        name=NASTY,
        verdict="incompatible",
        findings=(finding, warning),
        columns=(("level", "BACKWARD"),),
        source=f"schemas/{NASTY}/v2.avsc",
    )
    return Report(
        command="gate", title=NASTY, verdict="incompatible", cases=(case,), notes=(NASTY,)
    )


def as_stdout(text: str) -> str:
    """What stdout carries: the CLI writes a lone surrogate as a backslash escape."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_report_full_of_control_characters_renders_a_document_that_parses(fmt):
    parse(fmt, as_stdout(render(nasty_report(), fmt)))


ERROR = InputError(
    f"cannot read {NASTY}", location=Location(source=f"{NASTY}.avsc", line=1), hint=NASTY
)


@pytest.mark.parametrize("fmt", ["json", "junit", "github", "sarif", "gitlab"])
def test_an_error_full_of_control_characters_renders_a_document_that_parses(fmt):
    render_error = output_formats.FORMATS[OutputFormat(fmt)].render_error
    parse(fmt, as_stdout(render_error(ERROR, command="check")))


def test_every_output_format_has_one_renderer_for_reports_and_errors():
    assert set(output_formats.FORMATS) == set(OutputFormat)
    assert output_formats.FORMATS[OutputFormat.text].render_error(ERROR, command="check") == ""


def test_junit_writes_what_xml_cannot_hold_as_a_visible_escape():
    root = parse("junit", as_stdout(render(nasty_report(), "junit")))
    case = root.find("testsuite/testcase")
    assert case is not None
    assert case.get("name", "").startswith("\\u0000\\u0001")  # NUL and SOH, visible
    assert "]]>" in case.get("name", "") and "\\ud800" in case.get("name", "")


@pytest.mark.parametrize(
    ("path", "uri"),
    [
        ("a b/c,d:e.avsc", "a%20b/c%2Cd%3Ae.avsc"),
        ("x#y?z%.avsc", "x%23y%3Fz%25.avsc"),
        ("nl\nx.avsc", "nl%0Ax.avsc"),
        ("ü€.avsc", "%C3%BC%E2%82%AC.avsc"),
        ("a:b.avsc", "a%3Ab.avsc"),  # not scheme "a"
        ("dir\\win.avsc", "dir/win.avsc"),
        ("/abs/x.avsc", "/abs/x.avsc"),
        ("bad\udcff.avsc", "bad%FF.avsc"),  # the byte the file name has on disk
    ],
)
def test_a_sarif_uri_is_the_path_percent_encoded(path, uri):
    assert file_uri(path) == uri
    assert unquote(uri, errors="surrogateescape") == path.replace("\\", "/")


def test_github_properties_escape_colon_and_comma_and_the_message_keeps_them():
    finding = Finding(
        kind="K",
        message="a: b, c%\r\nd",
        location=Location(source="dir/a:b,c%.avsc", line=1, column=2),
        subject="s",
    )
    report = Report(
        command="check",
        title="t",
        verdict="incompatible",
        cases=(Case(name="s", verdict="incompatible", findings=(finding,)),),
    )
    (command,) = parse("github", render(report, "github"))
    assert command["file"] == "dir/a:b,c%.avsc"
    assert command["message"].startswith("a: b, c%\r\nd")
    line = render(report, "github").splitlines()[0]
    assert "file=dir/a%3Ab%2Cc%25.avsc," in line and "::a: b, c%25%0D%0Ad" in line
