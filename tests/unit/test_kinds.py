"""The catalogue of finding kinds (schemacli.kinds): every kind a module reports is
one of its entries, and every entry points at a docs heading that exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from schemacli.kinds import INCOMPATIBILITIES, Kind, Severity

ROOT = Path(__file__).resolve().parents[2]
KIND_ID = re.compile(r"^(?=.{4,})[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$")
# calls whose first argument is a finding's kind (converters' Checker.finding, validate's _warning)
TAKES_A_KIND = re.compile(r"finding|warning")


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def bare_kinds(path: Path) -> set[tuple[str, int]]:
    """String literals ``path`` uses as a finding's kind: ``kind="X"``, ``kind = "X"`` (an error
    class's kind), ``finding("X", ...)``, ``x.kind == "X"``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        values: list[ast.AST] = []
        if isinstance(node, ast.keyword) and node.arg == "kind":
            values.append(node.value)
        elif isinstance(node, ast.Assign) and any(_name(t) == "kind" for t in node.targets):
            values.append(node.value)
        elif isinstance(node, ast.Call) and node.args and TAKES_A_KIND.search(_name(node.func)):
            values.append(node.args[0])
        elif isinstance(node, ast.Compare) and _name(node.left) == "kind":
            values.extend(node.comparators)
        for value in values:
            for leaf in ast.walk(value):
                if isinstance(leaf, ast.Constant) and isinstance(leaf.value, str):
                    if KIND_ID.match(leaf.value):
                        found.add((leaf.value, leaf.lineno))
    return found


def sources(*packages: str) -> list[Path]:
    return sorted(p for package in packages for p in (ROOT / package).rglob("*.py"))


def test_every_kind_a_module_reports_is_in_the_catalogue():
    known = {kind.value for kind in Kind}
    unknown = sorted(
        f"{path.relative_to(ROOT)}:{line}: {kind}"
        for path in sources("schemacli", "spark_avro", "converters")
        for kind, line in bare_kinds(path)
        if kind not in known
    )
    assert unknown == []


def test_every_package_names_kinds_through_the_catalogue_not_bare_strings():
    bare = sorted(
        f"{path.relative_to(ROOT)}:{line}: {kind}"
        for path in sources("schemacli", "spark_avro", "converters")
        for kind, line in bare_kinds(path)
    )
    assert bare == []


def test_every_kind_reads_as_its_id_in_every_output():
    for kind in Kind:
        assert kind == kind.value and f"{kind}" == kind.value and Kind(kind.value) is kind
        assert kind.name == kind.value


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces as -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)  # a "# comment" in a code block
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, flags=re.M)}


@pytest.mark.parametrize("anchor", sorted({kind.anchor for kind in Kind}))
def test_every_catalogue_anchor_is_a_heading_in_the_docs(anchor):
    file, _, slug = anchor.partition("#")
    assert (ROOT / file).is_file()
    assert slug in _anchors(ROOT / file)


def test_every_incompatibility_kind_has_a_template_and_a_hint_for_where_it_happened():
    assert INCOMPATIBILITIES
    for kind in INCOMPATIBILITIES:
        assert kind.severity is Severity.ERROR
        assert "{where}" in kind.message(where="{where}", reader="", writer="", name="", extra="")
        assert kind.hint


def test_a_kind_without_a_template_leaves_the_message_to_its_caller():
    with pytest.raises(ValueError, match="INVALID_JSON has no message template"):
        Kind.INVALID_JSON.message()
    assert Kind.INVALID_JSON.hint_for() is None
