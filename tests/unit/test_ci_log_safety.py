"""Text a registry or a pull request controls (a registry's message, a subject's name, a file's
name) is printed as one line: a line feed in it is shown escaped, and no line of text output or
of an error can start a CI runner's command (GitHub's ``::error ...::``, Azure's ``##vso[``)."""

from __future__ import annotations

import pytest

from schemacli.contracts.findings import Finding, Kind
from schemacli.errors import Location, RegistryError, error_text
from schemacli.output import Case, Report, render
from schemacli.redact import inert_lines, printable
from tests.output_documents import FORMATS, parse

HOSTILE = "ok\n::error file=x.avsc::planted\r\n##vso[task.setvariable]x\x1b[31m\u202e"


def commands_in(text: str) -> list[str]:
    starts = ("::", "##[", "##vso[")
    return [line for line in text.splitlines() if line.lstrip().startswith(starts)]


def test_a_registry_message_with_line_feeds_stays_one_line_of_the_error():
    err = RegistryError("the registry refused it", status=422, error_code=42201,
                        server_message=HOSTILE)  # fmt: skip
    text = error_text(err)
    assert commands_in(text) == []
    assert "HTTP 422 42201: ok\\n::error" in text and "\x1b" not in text


def test_a_file_name_with_a_line_feed_stays_in_the_errors_first_line():
    err = RegistryError("x", location=Location(source="v1.avsc\n::error::planted"))
    assert error_text(err).splitlines()[0].startswith("error: v1.avsc\\n::error::planted")


def test_a_message_of_its_own_lines_keeps_them_but_none_starts_a_command():
    err = RegistryError("still used by:\n  g1\n::error::planted-group")
    lines = error_text(err).splitlines()
    assert lines[1] == "  g1" and lines[2] == "\\::error::planted-group"


def _report() -> Report:
    finding = Finding(kind=Kind.TYPE_MISMATCH, message=HOSTILE,
                      location=Location(source="s.avsc\n::warning::y"), hint=HOSTILE)  # fmt: skip
    case = Case(name="::error::subject", verdict="incompatible", findings=(finding,))
    return Report(command="check", title=HOSTILE, verdict="incompatible", cases=(case,),
                  notes=(HOSTILE,))  # fmt: skip


def test_the_text_report_prints_every_value_on_its_line_and_starts_no_command():
    text = render(_report(), "text")
    assert commands_in(text) == []
    assert "\x1b" not in text and "\u202e" not in text and "\r" not in text
    assert "ok\\n::error file=x.avsc::planted" in text


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_other_format_is_still_one_valid_document(fmt):
    text = render(_report(), fmt)
    parse(fmt, text)
    if fmt == "github":
        assert all(line.startswith(("::error", "::warning", "::notice")) or not
                   line.startswith("::") for line in text.splitlines())  # fmt: skip
        assert len([line for line in text.splitlines() if "planted" in line]) <= 2


def test_printable_keeps_only_the_line_breaks_asked_for():
    assert printable("a\nb\tc") == "a\\nb\\tc"
    assert printable("a\nb\tc", keep="\n\t") == "a\nb\tc"
    assert printable("a\n::x", keep="\n") == "a\n\\::x"
    assert inert_lines("  ::x\n##[group]y\nfine :: here") == "  \\::x\n\\##[group]y\nfine :: here"
