"""The direction of imports drawn in docs/architecture.md, checked on the source.

Each rule is (package prefix, modules it must never import). Imports inside functions count
too: a lazy import still ties the packages together.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UI = ("typer", "click", "rich")
HEAVY = ("pyspark", "confluent_kafka")

RULES = [
    # the core knows nothing of the terminal, the settings file, the registry or Spark
    (
        "schemacli.contracts",
        (
            *UI,
            *HEAVY,
            "requests",
            "schemacli.config",
            "schemacli.commands",
            "schemacli.output",
            "schemacli.registry",
            "schemacli.app",
            "converters",
            "spark_avro",
        ),
    ),
    # the registry client and its checks: no terminal, no settings file, no Spark
    (
        "schemacli.registry",
        (
            *UI,
            *HEAVY,
            "schemacli.config",
            "schemacli.commands",
            "schemacli.output",
            "schemacli.app",
            "converters",
            "spark_avro",
        ),
    ),
    ("schemacli.config", (*UI, *HEAVY, "requests", "schemacli.commands", "schemacli.registry")),
    ("schemacli.scaffold", (*UI, "schemacli.commands")),
    # the one writer of users' files: plain file-system plumbing under everything
    ("schemacli.atomicwrite", (*UI, *HEAVY, "schemacli.commands", "schemacli.registry")),
    ("spark_avro", (*UI, "schemacli.commands", "schemacli.config", "schemacli.output")),
    ("converters", (*UI, "schemacli.commands", "schemacli.app", "schemacli.output")),
    # the converter's rooms: the mapping language, the pipeline, the operations; the CLI's
    # renderers import the mapping's model, which loads no YAML, Spark or Kafka
    ("converters.mapping.model", (*HEAVY, "yaml", "requests", "converters.pipeline")),
    ("converters.mapping", ("converters.ops", "converters.job")),
    ("converters.pipeline", ("converters.ops", "converters.job")),
    # the plumbing every room shares sits below them all
    ("converters.kafka", ("converters.mapping", "converters.pipeline", "converters.ops")),
    ("converters.spark", ("converters.mapping", "converters.pipeline", "converters.ops")),
    ("converters.state", ("converters.pipeline", "converters.ops", "converters.job")),
    ("schemacli.output", (*HEAVY, "schemacli.commands", "schemacli.config")),
]


def modules() -> dict[str, Path]:
    found = {}
    for package in ("schemacli", "spark_avro", "converters"):
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


@pytest.mark.parametrize(("package", "forbidden"), RULES, ids=[r[0] for r in RULES])
def test_imports_point_one_way(package, forbidden):
    wrong = sorted(
        f"{module} imports {name}"
        for module, path in modules().items()
        if under(module, package)
        for name in imports(path)
        if any(under(name, f) for f in forbidden)
    )
    assert wrong == []


def test_every_rule_names_a_package_that_exists():
    names = modules()
    assert all(any(under(m, package) for m in names) for package, _ in RULES)
