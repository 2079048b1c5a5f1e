"""JUnit XML for CI test reports: one test case per subject (or level, for a diff).

A case with errors gets one ``<failure>`` (incompatible) or ``<error>`` (invalid input) whose
text lists every finding; warnings go to ``<system-out>``. The layout follows the common JUnit
schema that GitHub, GitLab and Jenkins read.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from schemacli.contracts.findings import Severity
from schemacli.errors import SchemacliError, error_text, shown
from schemacli.output import Report, fix_label
from schemacli.output.text import finding_lines

# Characters XML 1.0 cannot hold, even escaped (control characters, lone surrogates), and DEL
# and the C1 controls it discourages; a name or a default in a schema may contain them (Java reads
# "\u0001" in a name's JSON string), and so may a file name.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def xml_document(root: ET.Element) -> str:
    """``root`` as a well-formed XML 1.0 document ending with a newline: each character XML
    cannot hold is written as a visible escape (``\\u0001``), in text and attributes alike."""
    ET.indent(root, space="  ")
    body = _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", ET.tostring(root, encoding="unicode"))
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def render(report: Report, *, color: bool = False) -> str:
    """The report as a JUnit XML document, ending with a newline."""
    suite_name = f"schemacli {report.command}"
    failures = sum(1 for c in report.cases if c.verdict == "incompatible")
    errors = sum(1 for c in report.cases if c.verdict == "invalid")
    root = ET.Element(
        "testsuites",
        name=suite_name,
        tests=str(len(report.cases)),
        failures=str(failures),
        errors=str(errors),
    )
    suite = ET.SubElement(
        root,
        "testsuite",
        name=report.title,
        tests=str(len(report.cases)),
        failures=str(failures),
        errors=str(errors),
        skipped="0",
    )
    for case in report.cases:
        attrs = {"classname": f"schemacli.{report.command}", "name": case.name}
        if case.source:
            attrs["file"] = case.source
        element = ET.SubElement(suite, "testcase", attrs)
        problems = [f for f in case.findings if f.severity is Severity.ERROR]
        warnings = [f for f in case.findings if f.severity is not Severity.ERROR]
        if problems:
            tag = "error" if case.verdict == "invalid" else "failure"
            first = problems[0]
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            more += "".join(f"; {fix_label(fix)}" for fix in first.fixes)
            failure = ET.SubElement(
                element, tag, message=f"{first.kind}: {first.message}{more}", type=first.kind
            )
            failure.text = "\n".join(line for f in problems for line in finding_lines(f))
        if warnings:
            out = ET.SubElement(element, "system-out")
            out.text = "\n".join(line for f in warnings for line in finding_lines(f))
    if report.changes:
        out = ET.SubElement(suite, "system-out")
        out.text = "\n".join(f"{c.location}: {c.kind}: {c.message}" for c in report.changes)
    return xml_document(root)


def render_error(err: SchemacliError, *, command: str, compact: bool = False) -> str:
    """A JUnit document with one errored test case for ``command``: a CI report step still
    finds its XML when the command could not run (an unreadable schema, an unreachable
    registry)."""
    text = error_text(err)
    err = shown(err)
    counts = {"tests": "1", "failures": "0", "errors": "1"}
    root = ET.Element("testsuites", {"name": f"schemacli {command}", **counts})
    suite = ET.SubElement(
        root, "testsuite", {"name": f"schemacli {command}", "skipped": "0", **counts}
    )
    attrs = {"classname": f"schemacli.{command}", "name": command}
    if err.location is not None and err.location.source:
        attrs["file"] = err.location.source
    case = ET.SubElement(suite, "testcase", attrs)
    element = ET.SubElement(case, "error", message=err.message, type=type(err).__name__)
    element.text = text
    return xml_document(root)
