"""A SchemacliError as a document for stdout in a machine format. Its words for stderr are
:func:`schemacli.errors.error_text`, the one place an error becomes text.

Every renderer here (and the SARIF and GitLab error documents) reads the error through
:func:`schemacli.errors.shown`: its message, hint, location and the server's words with secrets
and URL user info masked (``schemacli.redact``), before any format escapes them.
"""

from __future__ import annotations

import dataclasses
import json

from schemacli.errors import Location, RegistryError, SchemacliError, error_text, shown


def error_json(err: SchemacliError, *, compact: bool = False) -> str:
    """``err`` as a JSON document; ``compact``: on one line, as a stream of documents (a
    ``--watch``) needs."""
    err = shown(err)
    loc = err.location
    payload = {
        "error": {
            "type": type(err).__name__,
            "message": err.message,
            "hint": err.hint,
            "exit_code": int(err.exit_code),
            "location": None if loc is None else dataclasses.asdict(loc),
        }
    }
    if isinstance(err, RegistryError):
        payload["error"].update(
            status=err.status, error_code=err.error_code, server_message=err.server_message
        )
    return json.dumps(payload, separators=(",", ":")) if compact else json.dumps(payload, indent=2)


def error_junit(err: SchemacliError, command: str) -> str:
    """A JUnit document with one errored test case: a CI report step still finds its XML when
    the command could not run (an unreadable schema, an unreachable registry)."""
    import xml.etree.ElementTree as ET

    from schemacli.output.junit import xml_document

    text = error_text(err)
    err = shown(err)
    counts = {"tests": "1", "failures": "0", "errors": "1"}
    root = ET.Element("testsuites", name=f"schemacli {command}", **counts)
    suite = ET.SubElement(root, "testsuite", name=f"schemacli {command}", skipped="0", **counts)
    attrs = {"classname": f"schemacli.{command}", "name": command}
    if err.location is not None and err.location.source:
        attrs["file"] = err.location.source
    case = ET.SubElement(suite, "testcase", attrs)
    element = ET.SubElement(case, "error", message=err.message, type=type(err).__name__)
    element.text = text
    return xml_document(root).rstrip("\n")


def error_github(err: SchemacliError) -> str:
    """A GitHub Actions ``::error`` annotation, on the file and line when the error has them."""
    from schemacli.output.github import command

    err = shown(err)
    location = err.location or Location()
    message = err.message
    if location.pointer:
        message += f" (at {location.pointer})"
    if err.hint:
        message += f"\nhint: {err.hint}"
    return command("error", message, location, f"schemacli: {type(err).__name__}")
