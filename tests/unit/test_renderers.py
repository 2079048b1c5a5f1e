"""Every renderer, golden-tested over the same reports; plus the escaping rules they rely on.

Regenerate the golden files after an intended change with ``SCHEMACLI_UPDATE_GOLDEN=1 pytest``
and review the diff.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from schemacli.config import Level
from schemacli.contracts.evolution.check import CheckReport
from schemacli.contracts.evolution.diff import Change, LevelVerdict, SchemaDiff
from schemacli.contracts.findings import Finding, Severity
from schemacli.contracts.fixes.edits import Applicability, Fix, TextEdit
from schemacli.contracts.gate.rows import GateReport, SubjectReport
from schemacli.errors import Location
from schemacli.output import OutputFormat, check_report, diff_report, gate_report, render
from schemacli.output.github import escape_data, escape_property

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "output"
EXTENSIONS = {
    "text": "txt",
    "json": "json",
    "junit": "xml",
    "github": "log",
    "sarif": "sarif",
    "gitlab": "gitlab.json",
}

V3 = "schemas/subjects/taxi-rides-value/v3.avsc"
TYPE_MISMATCH = Finding(
    kind="TYPE_MISMATCH",
    message="reader type string does not match writer type float at total_amount "
    "(against taxi-rides-value v2)",
    location=Location(V3, "/fields/4/type", 8, 40),
    hint="keep the type, or add a new field with a default and deprecate the old one",
    old="float",
    new="string",
    subject="taxi-rides-value",
)
MISSING_DEFAULT = Finding(
    kind="READER_FIELD_MISSING_DEFAULT_VALUE",
    message='new field "zone" has no default; 100% of old records, e.g. {"a": [1, 2]}, lack it',
    location=Location(V3, "/fields/5", 9, 5),
    hint='add a default, e.g. "default": "unknown"',
    subject="taxi-rides-value",
)
COMMENT_WARNING = Finding(
    kind="JSON_COMMENT",
    message="the file contains JSON comments",
    location=Location("schemas/subjects/taxi-rides-key/v1.avsc", "", 1, 1),
    severity=Severity.WARNING,
    subject="taxi-rides-key",
)


def gate_failing():
    return gate_report(
        GateReport(
            store="schemas",
            against="git:origin/main",
            subjects=(
                SubjectReport("taxi-rides-key", Level.BACKWARD, 1, (), (COMMENT_WARNING,)),
                SubjectReport(
                    "taxi-rides-value",
                    Level.FULL,
                    3,
                    (3,),
                    (TYPE_MISMATCH, MISSING_DEFAULT),
                ),
            ),
        )
    )


def gate_passing():
    return gate_report(
        GateReport(
            store="schemas",
            against=None,
            subjects=(
                SubjectReport("taxi-rides-key", Level.BACKWARD, 1, ()),
                SubjectReport("taxi-rides-value", Level.BACKWARD, 2, (2,)),
            ),
        )
    )


def check_identical():
    return check_report(
        CheckReport(
            subject="taxi-rides-value",
            level=Level.BACKWARD,
            candidate="schemas/subjects/taxi-rides-value/v2.avsc",
            history=(1, 2),
            checked_against=(),
            findings=(),
            identical_to=2,
        )
    )


def check_incompatible():
    return check_report(
        CheckReport(
            subject="taxi-rides-value",
            level=Level.BACKWARD,
            candidate=V3,
            history=(1, 2),
            checked_against=(2,),
            findings=(TYPE_MISMATCH,),
        )
    )


def diff_two_changes():
    new = "new.avsc"
    return diff_report(
        SchemaDiff(
            old="old.avsc",
            new=new,
            changes=(
                Change(
                    "FIELD_ADDED",
                    "field 'tip_amount' added (type float, default 0.0)",
                    Location(new, "/fields/5", 10, 5),
                    None,
                    "tip_amount",
                ),
                Change(
                    "TYPE_CHANGED",
                    "field 'total_amount': type changed from float to string",
                    Location(new, "/fields/4/type", 9, 40),
                    "float",
                    "string",
                ),
            ),
            verdicts=(
                LevelVerdict(Level.NONE, True, ()),
                LevelVerdict(Level.BACKWARD, False, (TYPE_MISMATCH,)),
                LevelVerdict(Level.FORWARD, True, ()),
                LevelVerdict(Level.FULL, False, (TYPE_MISMATCH,)),
            ),
        )
    )


FIXED = Finding(
    kind="READER_FIELD_MISSING_DEFAULT_VALUE",
    message="new field 'tip' has no default",
    location=Location(V3, "/fields/5", 9, 5),
    hint='add a default, e.g. "default": null',
    subject="taxi-rides-value",
    fixes=(
        Fix(
            "Add \"default\": null to field 'tip'",
            Applicability.SAFE,
            (TextEdit(120, 120, ', "default": null', (9, 44), (9, 44)),),
        ),
        Fix(
            'Replace the type of field \'tip\' by ["null", "double"]',
            Applicability.UNSAFE,
            (TextEdit(100, 108, '["null", "double"]', (9, 24), (9, 32)),),
        ),
        Fix("Or start a new subject: schemacli migrate plan", Applicability.DISPLAY),
    ),
)


def check_with_fixes():
    return check_report(
        CheckReport(
            subject="taxi-rides-value",
            level=Level.BACKWARD,
            candidate=V3,
            history=(1, 2),
            checked_against=(2,),
            findings=(FIXED,),
        )
    )


REPORTS = {
    "check_with_fixes": check_with_fixes,
    "gate_failing": gate_failing,
    "gate_passing": gate_passing,
    "check_identical": check_identical,
    "check_incompatible": check_incompatible,
    "diff_two_changes": diff_two_changes,
}


@pytest.mark.parametrize("fmt", [f.value for f in OutputFormat])
@pytest.mark.parametrize("name", sorted(REPORTS))
def test_renderer_output_matches_its_golden_file(name, fmt):
    rendered = render(REPORTS[name](), fmt)
    golden = GOLDEN / f"{name}.{EXTENSIONS[fmt]}"
    if os.environ.get("SCHEMACLI_UPDATE_GOLDEN"):
        golden.write_text(rendered, encoding="utf-8")
    assert golden.exists(), f"no golden file {golden}; run with SCHEMACLI_UPDATE_GOLDEN=1"
    assert rendered == golden.read_text(encoding="utf-8")


def test_every_renderer_ends_with_a_newline():
    for make in REPORTS.values():
        for fmt in OutputFormat:
            assert render(make(), fmt).endswith("\n")


def test_text_keeps_square_brackets_of_avro_json_verbatim():
    text = render(gate_failing(), "text")
    assert '{"a": [1, 2]}' in text


def test_text_lists_every_finding_with_its_location_and_hint():
    text = render(gate_failing(), "text")
    assert f"{V3}:8:40 (at /fields/4/type): error TYPE_MISMATCH" in text
    assert f"{V3}:9:5 (at /fields/5): error READER_FIELD_MISSING_DEFAULT_VALUE" in text
    assert "hint: keep the type" in text
    assert "gate: failed: 1 of 2 subjects failing, 2 problems" in text


def test_json_is_parseable_and_keeps_every_finding_with_its_location():
    payload = json.loads(render(gate_failing(), "json"))
    assert payload["verdict"] == "incompatible"
    value = next(c for c in payload["cases"] if c["name"] == "taxi-rides-value")
    assert [f["kind"] for f in value["findings"]] == [
        "TYPE_MISMATCH",
        "READER_FIELD_MISSING_DEFAULT_VALUE",
    ]
    assert value["findings"][0]["location"] == {
        "source": V3,
        "pointer": "/fields/4/type",
        "line": 8,
        "column": 40,
    }
    assert value["level"] == "FULL"


def test_junit_has_one_testcase_per_subject_and_a_failure_listing_all_findings():
    root = ET.fromstring(render(gate_failing(), "junit"))
    suite = root.find("testsuite")
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["taxi-rides-key"].find("failure") is None
    failure = cases["taxi-rides-value"].find("failure")
    assert failure.get("type") == "TYPE_MISMATCH"
    assert "(and 1 more)" in failure.get("message")
    assert "READER_FIELD_MISSING_DEFAULT_VALUE" in failure.text


def test_junit_marks_invalid_input_as_error_not_failure():
    report = gate_report(
        GateReport(
            "schemas",
            None,
            (
                SubjectReport(
                    "a-value",
                    Level.BACKWARD,
                    1,
                    (),
                    (Finding("INVALID_SCHEMA", "bad", Location("a.avsc", None, 1, 2)),),
                ),
            ),
        )
    )
    suite = ET.fromstring(render(report, "junit")).find("testsuite")
    assert suite.get("errors") == "1"
    assert suite.find("testcase").find("error") is not None


def test_github_annotation_carries_file_line_col_and_title():
    lines = render(gate_failing(), "github").splitlines()
    assert lines[1].startswith(
        f"::error file={V3},line=8,col=40,title=taxi-rides-value%3A TYPE_MISMATCH::"
    )
    assert lines[0].startswith("::warning ")


def test_github_escapes_percent_and_newlines_in_messages_and_colon_comma_in_properties():
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    line = render(gate_failing(), "github").splitlines()[2]
    assert "100%25 of old records" in line
    assert "%0Ahint: add a default" in line
    assert "\n" not in line


def test_github_property_with_comma_in_a_file_name_is_escaped():
    finding = Finding("X", "m", Location("dir,1/a:b.avsc", None, 1, 1))
    report = gate_report(
        GateReport("s", None, (SubjectReport("s", Level.BACKWARD, 1, (), (finding,)),))
    )
    assert "file=dir%2C1/a%3Ab.avsc,line=1,col=1" in render(report, "github")


def test_github_step_summary_matches_its_golden_file():
    from schemacli.output.github import step_summary

    rendered = step_summary(gate_failing())
    golden = GOLDEN / "gate_failing.step_summary.md"
    if os.environ.get("SCHEMACLI_UPDATE_GOLDEN"):
        golden.write_text(rendered, encoding="utf-8")
    assert rendered == golden.read_text(encoding="utf-8")


# -- fixes travel in every format --------------------------------------------------------------


def test_text_shows_each_fix_with_its_applicability_and_edits():
    text = render(check_with_fixes(), "text")
    assert "    fix (safe): Add \"default\": null to field 'tip'" in text
    assert '      9:44-9:44 -> ", \\"default\\": null"' in text
    assert "    fix (display): Or start a new subject: schemacli migrate plan" in text


def test_json_fix_objects_hold_title_applicability_and_edits():
    finding = json.loads(render(check_with_fixes(), "json"))["cases"][0]["findings"][0]
    safe, unsafe, advice = finding["fixes"]
    assert safe == {
        "title": "Add \"default\": null to field 'tip'",
        "applicability": "safe",
        "edits": [
            {
                "start": {"line": 9, "column": 44},
                "end": {"line": 9, "column": 44},
                "text": ', "default": null',
            }
        ],
    }
    assert unsafe["applicability"] == "unsafe" and advice["edits"] == []


def test_json_of_a_finding_without_fixes_has_no_fixes_key():
    finding = json.loads(render(check_incompatible(), "json"))["cases"][0]["findings"][0]
    assert "fixes" not in finding


def test_sarif_fixes_are_valid_artifact_changes_and_display_advice_stays_in_the_message():
    from tests.output_documents import parse

    log = parse("sarif", render(check_with_fixes(), "sarif"))
    result = log["runs"][0]["results"][0]
    assert len(result["fixes"]) == 2  # the display advice has no edits
    change = result["fixes"][0]["artifactChanges"][0]
    assert change["artifactLocation"]["uri"] == V3
    assert change["replacements"][0] == {
        "deletedRegion": {"startLine": 9, "startColumn": 44, "endLine": 9, "endColumn": 44},
        "insertedContent": {"text": ', "default": null'},
    }
    assert result["fixes"][1]["properties"] == {"applicability": "unsafe"}
    assert "fix (display): Or start a new subject" in result["message"]["text"]


def test_github_gitlab_and_junit_carry_the_suggestion():
    from tests.output_documents import github_commands, parse

    github = render(check_with_fixes(), "github")
    (command,) = [c for c in github_commands(github) if c.get("level") == "error"]
    assert "fix (safe): Add \"default\": null to field 'tip'" in command["message"]
    assert '9:44-9:44 -> ", \\"default\\": null"' in command["message"]
    (issue,) = parse("gitlab", render(check_with_fixes(), "gitlab"))
    assert issue["description"].endswith(
        "; fix (display): Or start a new subject: schemacli migrate plan"
    )
    plain = parse("gitlab", render(check_incompatible(), "gitlab"))[0]
    failure = ET.fromstring(render(check_with_fixes(), "junit")).find("testsuite/testcase/failure")
    assert "; fix (safe): Add" in failure.get("message")
    assert "fix (unsafe): Replace the type" in failure.text
    assert plain["fingerprint"]


def test_a_fix_does_not_change_a_gitlab_fingerprint():
    from dataclasses import replace

    from tests.output_documents import parse

    bare = check_report(
        CheckReport(
            "taxi-rides-value", Level.BACKWARD, V3, (1, 2), (2,), (replace(FIXED, fixes=()),)
        )
    )
    assert (
        parse("gitlab", render(bare, "gitlab"))[0]["fingerprint"]
        == parse("gitlab", render(check_with_fixes(), "gitlab"))[0]["fingerprint"]
    )
