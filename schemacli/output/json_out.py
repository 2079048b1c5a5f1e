"""JSON for machines: the whole report, every finding with its location, one document."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any

import click

from schemacli import redact
from schemacli.contracts.findings import Finding
from schemacli.contracts.fixes.edits import Fix
from schemacli.errors import Location, RegistryError, SchemacliError, shown
from schemacli.output import Case, OutputFormat, Report, to_jsonable

# Every string of a report is written whole, each character as itself or a JSON escape ('@' and
# '=' never escaped): a document holding nothing to mask needs no scrub (``output.render``).
WHOLE_STRINGS = True

# the edits' JSON made so far, by the id of a fix's edits (the edits kept, so the id holds)
_Shared = dict[int, tuple[object, list[Any]]]


def render(report: Report, *, color: bool = False) -> str:
    """The report as one JSON object (stable key order), ending with a newline (``color``:
    ignored, as by every machine format)."""
    shared: _Shared = {}  # one JSON list per shared edits
    payload: dict[str, Any] = {
        "command": report.command,
        "title": report.title,
        "verdict": report.verdict,
        "cases": [
            _plain_case(case)
            or {
                "name": case.name,
                "verdict": case.verdict,
                **({"source": case.source} if case.source else {}),
                **{key: to_jsonable(value) for key, value in case.columns},
                "findings": [finding_json(f, shared) for f in case.findings],
            }
            for case in report.cases
        ],
    }
    if report.command == "diff":
        payload["changes"] = [
            {
                "kind": c.kind,
                "message": c.message,
                "location": location_json(c.location),
                "old": to_jsonable(c.old),
                "new": to_jsonable(c.new),
            }
            for c in report.changes
        ]
    payload["notes"] = list(report.notes)
    return dumps_indented(payload) + "\n"


class _Written(str):
    """A value's JSON text as ``_write`` writes it at its depth, written as it is."""


_CASE_DEPTH = 2  # a case in the report's "cases"
_PLAIN_KEYS = frozenset({"name", "verdict", "source", "findings"})


def _plain_case(case: Case) -> _Written | None:
    """A case without findings and source whose columns are strings, integers and tuples of
    integers (a gate row the gate found nothing in: most rows of a large store), written as
    ``_write`` writes its dict at its depth, in one step; None for any other case (written
    as a dict). tests/unit/test_output_json_dump.py compares the two roads."""
    if case.findings or case.source or _C_ENCODER is None:
        return None
    keys = [key for key, _ in case.columns]
    if len(set(keys)) != len(keys) or not _PLAIN_KEYS.isdisjoint(keys):
        return None  # a dict would keep one of the same keys: written as a dict
    inner = _BREAKS[_CASE_DEPTH + 1]
    parts = ["{", inner, '"name": ', encode_basestring(case.name), ",", inner, '"verdict": ']
    parts.append(encode_basestring(case.verdict))
    for key, value in case.columns:
        kind = type(value)
        if type(key) is not str:
            return None
        if kind is str:
            text = encode_basestring(value)
        elif kind is int:
            text = int.__repr__(value)
        elif kind is tuple and all(type(n) is int for n in value):
            text = _FLAT[_CASE_DEPTH + 1](list(value)) if value else "[]"
        else:
            return None
        parts += (",", inner, encode_basestring(key), ": ", text)
    parts += (",", inner, '"findings": []', _BREAKS[_CASE_DEPTH], "}")
    return _Written("".join(parts))


def dumps_indented(value: Any) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)``, the same text, faster.

    ``json`` writes an indented document in Python, a few generator steps per value: 2 s of
    a 24 MB diff report. Here a dict or list holding only strings, numbers, booleans and nulls
    (a location, an edit's start) is written at C speed by ``json``'s own encoder, its item
    separator carrying the line break and the indent of its depth; only the containers above
    them are walked in Python (tests/unit/test_output_json_dump.py compares the two)."""
    if _C_ENCODER is None:  # a Python without json's C speed-ups
        return json.dumps(value, indent=2, ensure_ascii=False)
    out: list[str] = []
    _write(value, 0, out, {})
    return "".join(out)


# json's C encoder (None on a Python without json's speed-ups); its stubs do not name it
_C_ENCODER: Callable[..., Any] | None = getattr(json.encoder, "c_make_encoder", None)
_SCALARS = frozenset({str, int, float, bool, type(None)})
_KEYS = frozenset({str})
_DEPTHS = 64  # deeper values (never in a report) are written by json itself
_BREAKS = ["\n" + "  " * depth for depth in range(_DEPTHS + 1)]  # line break and indent


def _flat(depth: int) -> Callable[[Any], str]:
    """A dict or list of scalars at ``depth`` as json indents it, at C speed."""
    assert _C_ENCODER is not None
    # (markers, default, encoder, indent, key_separator, item_separator, sort_keys, skipkeys,
    # allow_nan): what json.dumps hands its C encoder, with the indent's breaks in the separator
    encode = _C_ENCODER(
        None, None, encode_basestring, None, ": ", "," + _BREAKS[depth + 1], False, False, True
    )
    inner, outer = _BREAKS[depth + 1], _BREAKS[depth]

    def flat(value: Any) -> str:
        text = "".join(encode(value, 0))
        return text[0] + inner + text[1:-1] + outer + text[-1]

    return flat


_FLAT = [_flat(depth) for depth in range(_DEPTHS)] if _C_ENCODER is not None else []


def _write(value: Any, depth: int, out: list[str], lists: dict[tuple[int, int], str]) -> None:
    """Append ``value``'s text at ``depth`` to ``out``. ``lists``: the text of each list
    written so far, by its id and depth (the report shares one list of edits between the
    findings whose fixes are the same edits, as FULL's and BACKWARD's)."""
    kind = type(value)
    if kind is str:
        out.append(encode_basestring(value))
    elif kind is _Written:  # written at its depth already (``_plain_case``)
        out.append(value)
    elif depth >= _DEPTHS:
        text = json.dumps(value, indent=2, ensure_ascii=False)
        out.append(text.replace("\n", "\n" + "  " * depth))
    elif kind is dict:
        if not value:
            out.append("{}")
        elif _SCALARS.issuperset(map(type, value.values())) and _KEYS.issuperset(map(type, value)):
            out.append(_FLAT[depth](value))
        else:
            inner = _BREAKS[depth + 1]
            lead = "{" + inner
            for key, item in value.items():
                out.append(lead + encode_basestring(_key(key)) + ": ")
                _write(item, depth + 1, out, lists)
                lead = "," + inner
            out.append(_BREAKS[depth] + "}")
    elif kind is list:
        if not value:
            out.append("[]")
        elif _SCALARS.issuperset(map(type, value)):
            out.append(_FLAT[depth](value))
        elif (id(value), depth) in lists:  # alive in ``value`` as long as the walk: ids hold
            out.append(lists[id(value), depth])
        else:
            start = len(out)
            inner = _BREAKS[depth + 1]
            lead = "[" + inner
            for item in value:
                out.append(lead)
                _write(item, depth + 1, out, lists)
                lead = "," + inner
            out.append(_BREAKS[depth] + "]")
            text = lists[id(value), depth] = "".join(out[start:])
            out[start:] = [text]
    else:  # numbers, booleans, None, tuples and any other type json takes: as json writes them
        out.append(json.dumps(value, indent=2, ensure_ascii=False).replace("\n", _BREAKS[depth]))


def _key(key: Any) -> str:
    """A dict key as json writes it (a number or boolean key as its JSON text)."""
    if type(key) is str:
        return key
    return str(next(iter(json.loads(json.dumps({key: None})))))


def location_json(loc: Location) -> dict[str, Any]:
    return {"source": loc.source, "pointer": loc.pointer, "line": loc.line, "column": loc.column}


def fix_json(fix: Fix, shared: _Shared | None = None) -> dict[str, Any]:
    """A fix: title, applicability, and its edits (1-based line:col, end exclusive); ``source``
    when the edits are in another file than the finding's location. ``shared``: the edits'
    JSON made so far, by the id of the fix's edits (one list for the fixes that share edits)."""
    kept = shared.get(id(fix.edits)) if shared is not None else None
    if kept is not None and kept[0] is fix.edits:
        edits = kept[1]
    else:
        edits = [
            {
                "start": {"line": e.start_pos[0], "column": e.start_pos[1]},
                "end": {"line": e.end_pos[0], "column": e.end_pos[1]},
                "text": e.text,
            }
            for e in fix.edits
        ]
        if shared is not None:
            shared[id(fix.edits)] = (fix.edits, edits)
    return {
        "title": fix.title,
        "applicability": fix.applicability.value,
        **({"source": fix.source} if fix.source else {}),
        "edits": edits,
    }


def finding_json(finding: Finding, shared: _Shared | None = None) -> dict[str, Any]:
    """A finding as JSON; ``fixes`` (a list of fix objects) only when it has any, ``reader``
    only for a declared reader's verdict (``shared``: see :func:`fix_json`)."""
    fixes = {"fixes": [fix_json(fix, shared) for fix in finding.fixes]} if finding.fixes else {}
    out = {
        "kind": finding.kind,
        "severity": finding.severity.value,
        "message": finding.message,
        "hint": finding.hint,
        "subject": finding.subject,
        "location": location_json(finding.location),
        "old": to_jsonable(finding.old),
        "new": to_jsonable(finding.new),
        **fixes,
    }
    if finding.reader is not None:  # a declared reader's verdict (docs/readers.md)
        ref = finding.reader
        out["reader"] = {
            "consumer": ref.consumer,
            "owner": ref.owner,
            "contact": ref.contact,
            "groups": list(ref.groups),
            "location": location_json(ref.location),
        }
    return out


def render_error(err: SchemacliError, *, command: str, compact: bool = False) -> str:
    """``err`` as a JSON document ending with a newline; ``compact``: on one line."""
    return error_json(err, compact=compact) + "\n"


def error_json(err: SchemacliError, *, compact: bool = False) -> str:
    """``err`` as a JSON document (no newline); ``compact``: on one line, as a stream of
    documents (a ``--watch``) needs. Reads the error through :func:`shown`: secrets and URL
    user info masked before anything is serialised."""
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


def emit_json(data: Any, *, indent: int | None = 2) -> None:
    """Write ``data`` (dataclasses and tuples allowed) as JSON to stdout (``indent=None``: one
    line, for a stream of documents)."""
    plain = json.loads(json.dumps(data, default=_default))  # then every string is redacted
    click.echo(json.dumps(redact.scrub(plain), indent=indent, ensure_ascii=False))


def _default(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


def is_json(output: OutputFormat | str | None) -> bool:
    """JSON for machines; every other format (text, and junit/github meant for check/gate)
    prints the text form."""
    return output is not None and OutputFormat(output) is OutputFormat.json
