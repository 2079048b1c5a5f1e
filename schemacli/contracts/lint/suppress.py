"""Rules silenced in the schema itself: ``"schemacli:ignore": ["CODE", ...]`` on any node
silences the named rules (codes, prefixes, names or categories) on that node and everything
under it; at the root, in the whole file. JSON has no comments, so the suppression is a
property of the node (Avro keeps unknown properties, outside the canonical form).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from schemacli.contracts.findings import Finding
from schemacli.contracts.jsontext.document import Document
from schemacli.contracts.jsontext.pointer import join_pointer
from schemacli.contracts.lint.ruleset import RULES, matches, rule_for
from schemacli.kinds import Kind, Severity

SUPPRESS = "schemacli:ignore"  # the JSON property that suppresses rules on a node


def _suppressions(value: Any) -> Iterator[tuple[str, Any]]:
    """(pointer of the node, its ``schemacli:ignore`` value) for every node that has one."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        node, at = stack.pop()
        if isinstance(node, dict):
            if SUPPRESS in node:
                yield at, node[SUPPRESS]
            stack.extend((v, join_pointer(at, k)) for k, v in node.items() if k != SUPPRESS)
        elif isinstance(node, list):
            stack.extend((v, f"{at}/{i}") for i, v in enumerate(node))


def suppressed(findings: list[Finding], document: Document) -> list[Finding]:
    """``findings`` minus those a ``schemacli:ignore`` at or above them names; a bad
    ``schemacli:ignore`` (not a list of rule codes) is itself a finding."""
    if SUPPRESS not in document.text:
        return findings
    scopes: list[tuple[str, tuple[str, ...]]] = []
    problems: list[Finding] = []
    for pointer, given in _suppressions(document.value):
        at = join_pointer(pointer, SUPPRESS)
        if not isinstance(given, list) or not all(isinstance(s, str) for s in given):
            problems.append(_bad_suppression(document, at, "is not a list of rule codes"))
            continue
        unknown = [s for s in given if not any(matches(s, r) for r in RULES)]
        if unknown:
            problems.append(
                _bad_suppression(document, at, f"names no rule: {', '.join(map(repr, unknown))}")
            )
        scopes.append((pointer, tuple(given)))
    kept = []
    for finding in findings:
        rule = rule_for(finding.kind)
        where = finding.location.pointer or ""
        if rule is not None and any(
            (where == scope or where.startswith(scope + "/") or scope == "")
            and any(matches(s, rule) for s in selectors)
            for scope, selectors in scopes
        ):
            continue
        kept.append(finding)
    return kept + problems


def _bad_suppression(document: Document, pointer: str, problem: str) -> Finding:
    return Finding(
        kind=Kind.INVALID_INPUT,
        message=f'"{SUPPRESS}" {problem}',
        location=document.location(pointer),
        hint=f'write "{SUPPRESS}": ["E001", "N"] (codes, prefixes or categories; see '
        "schemacli lint --list-rules)",
        severity=Severity.WARNING,
    )
