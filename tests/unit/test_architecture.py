"""The direction of imports drawn in docs/architecture.md, checked on the source.

Each rule is (package prefix, modules it must never import). Imports inside functions count
too: a lazy import still ties the packages together. Below the rules: the floor everything
stands on (errors, redact, the kinds catalogue, the TOML module), the one model module the
renderers may take from the converters, and where an import may wait inside a function.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UI = ("typer", "click", "rich")
HEAVY = ("pyspark", "confluent_kafka")
_ROOM_NAMES = ("jsontext", "avro", "store", "evolution", "lint", "fixes", "readers", "gate")


def _rooms_but(*allowed: str) -> tuple[str, ...]:
    """Every room of the contract core but ``allowed``."""
    return tuple(f"schemacli.contracts.{r}" for r in _ROOM_NAMES if r not in allowed)


def _modules_but(room: str, *allowed: str) -> tuple[str, ...]:
    """Every module of one room but ``allowed``."""
    folder = ROOT / "schemacli" / "contracts" / room
    return tuple(
        f"schemacli.contracts.{room}.{p.stem}"
        for p in sorted(folder.glob("*.py"))
        if p.stem not in allowed and p.stem != "__init__"
    )


RULES = [
    # the core knows nothing of the terminal, the settings file, the registry or Spark, and
    # runs no process (a store at a git ref arrives as a Tree built by schemacli.gittree)
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
            "schemacli.gittree",
            "subprocess",
            "converters",
            "spark_avro",
        ),
    ),
    # the contract core's rooms (docs/architecture.md): jsontext at the bottom, then the Avro
    # model, the store and the compatibility engine, then lint, fixes and readers, the gate on top
    ("schemacli.contracts.jsontext", (*_rooms_but("jsontext"), "schemacli.contracts.findings")),
    ("schemacli.contracts.avro", (*_rooms_but("jsontext", "avro"), "schemacli.contracts.findings")),
    (
        "schemacli.contracts.store",
        (*_rooms_but("jsontext", "avro", "store"), "schemacli.contracts.findings"),
    ),
    # of the fixes, check takes the suggested fixes and verdicts the Fix record; never the loop
    (
        "schemacli.contracts.evolution",
        (*_rooms_but("jsontext", "avro", "evolution", "fixes"), "schemacli.contracts.fixes.fixing"),
    ),
    # of the compatibility engine, lint takes only the levels (E003)
    (
        "schemacli.contracts.lint",
        (
            *_rooms_but("jsontext", "avro", "evolution", "fixes", "lint"),
            *_modules_but("evolution", "levels"),
            "schemacli.contracts.fixes.suggest",
            "schemacli.contracts.fixes.fixing",
        ),
    ),
    # of lint, the fixes take only validate's warnings: a suggested fix may not add one
    (
        "schemacli.contracts.fixes",
        (
            *_rooms_but("jsontext", "avro", "evolution", "fixes", "lint"),
            *_modules_but("lint", "validate"),
            "schemacli.contracts.lint.rules",
        ),
    ),
    ("schemacli.contracts.readers", _rooms_but("jsontext", "avro", "evolution", "readers")),
    # the finding record names its fixes (Fix), nothing else of the rooms
    (
        "schemacli.contracts.findings",
        (*_rooms_but("jsontext", "fixes"), *_modules_but("fixes", "edits")),
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
    # of the registry, config takes only the pure settings module (no network, no requests)
    (
        "schemacli.config",
        (
            *UI,
            *HEAVY,
            "requests",
            "schemacli.commands",
            "schemacli.registry.client",
            "schemacli.registry.transport",
            "schemacli.registry.publish",
            "schemacli.registry.gate",
            "schemacli.registry.snapshot",
            "schemacli.registry.compare",
            "schemacli.registry.history",
            "schemacli.registry.apicurio",
            "schemacli.registry.models",
            "schemacli.registry.errors",
        ),
    ),
    ("schemacli.scaffold", (*UI, "schemacli.commands")),
    # the one writer of users' files: plain file-system plumbing under everything
    ("schemacli.atomicwrite", (*UI, *HEAVY, "schemacli.commands", "schemacli.registry")),
    # the converters import the readers, never the other way round: migrate on read hands the
    # readers a prepared migration (converters.onread); the Spark SQL both run lives in
    # spark_avro.migrate
    (
        "spark_avro",
        (*UI, "schemacli.commands", "schemacli.config", "schemacli.output", "converters"),
    ),
    ("converters", (*UI, "schemacli.commands", "schemacli.app", "schemacli.output")),
    # the converter's rooms: the mapping language, the pipeline, the operations; the CLI's
    # renderers import the mapping's model, which loads no YAML, Spark or Kafka
    ("converters.mapping.model", (*HEAVY, "yaml", "requests", "converters.pipeline")),
    # the mapping language needs no Spark reader: its registry schemas come from the one road
    # (schemacli.registry.schemas), not from spark_avro
    (
        "converters.mapping",
        (
            "converters.pipeline",
            "converters.ops",
            "converters.job",
            "converters.onread",
            "spark_avro",
        ),
    ),
    ("converters.pipeline", ("converters.ops", "converters.job")),
    # the plumbing every room shares sits below them all
    ("converters.kafka", ("converters.mapping", "converters.pipeline", "converters.ops")),
    # the census of a topic's data: over the Kafka plumbing, below the operations that use it
    (
        "converters.census",
        ("converters.mapping", "converters.pipeline", "converters.ops", "converters.job"),
    ),
    ("converters.spark", ("converters.mapping", "converters.pipeline", "converters.ops")),
    ("converters.state", ("converters.pipeline", "converters.ops", "converters.job")),
    ("schemacli.output", (*HEAVY, "schemacli.commands", "schemacli.config")),
    # the report's site: the store's data and a census in, HTML out; a migration's overview
    # arrives from the command, and of the converters the site names only its type
    # (converters.ops.overview, for the type checker)
    (
        "schemacli.site",
        (
            *UI,
            *HEAVY,
            "requests",
            "schemacli.commands",
            "schemacli.config",
            "schemacli.registry",
            "schemacli.output",
            "spark_avro",
            "converters.job",
            "converters.mapping",
            "converters.pipeline",
            "converters.kafka",
            "converters.spark",
            "converters.state",
            *(
                f"converters.ops.{m}"
                for m in (
                    "deploy",
                    "process",
                    "replay",
                    "status",
                    "stop",
                    "window",
                    "dependents",
                    "finish",
                )
            ),
        ),
    ),
    # settings files' syntax and where a setting came from: below config and the registry
    (
        "schemacli.tomlfile",
        (
            *UI,
            *HEAVY,
            "schemacli.config",
            "schemacli.registry",
            "schemacli.commands",
            "schemacli.output",
        ),
    ),
    (
        "schemacli.origin",
        (
            *UI,
            *HEAVY,
            "schemacli.config",
            "schemacli.registry",
            "schemacli.commands",
            "schemacli.output",
        ),
    ),
]

# Third-party modules slow enough to import that the CLI's start-up must not pay for them.
SLOW = ("pyspark", "confluent_kafka", "requests", "rich", "yaml", "tomlkit", "fastavro", "sqlglot")


def modules() -> dict[str, Path]:
    found = {}
    for package in ("schemacli", "spark_avro", "converters"):
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _runtime(node: ast.AST) -> bool:
    """Not an ``if TYPE_CHECKING:`` block (imports there are for the type checker alone)."""
    return not (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    )


def _imported(node: ast.AST) -> list[str]:
    """The names an import statement binds, whole: ``from a.b import c`` gives a.b.c (a module,
    or a name that :func:`owner` takes back to a.b)."""
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [f"{node.module}.{alias.name}" for alias in node.names]
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    return []


@functools.cache
def top_level_imports(path: Path) -> frozenset[str]:
    """What a module imports when it is imported: at its top level, outside functions and
    outside ``if TYPE_CHECKING:``."""
    names: set[str] = set()
    todo = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while todo:
        node = todo.pop()
        names.update(_imported(node))
        if isinstance(node, (ast.If, ast.Try, ast.With)) and _runtime(node):
            todo.extend(ast.iter_child_nodes(node))
    return frozenset(names)


def function_imports(path: Path) -> list[tuple[str, str]]:
    """(function, module) for each import made inside a function."""
    found = []
    for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                found += [(fn.name, name) for name in _imported(node)]
    return found


def owner(name: str, names: dict[str, Path]) -> str | None:
    """The project module an imported name is (``from a.b import c``: a.b, or a.b.c if that is
    a module), None for a third-party one."""
    while name and name not in names:
        name = name.rpartition(".")[0]
    return name or None


def loaded_with(module: str, names: dict[str, Path]) -> set[str]:
    """Every module, project or third-party, that importing ``module`` imports."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        parts = current.split(".")
        for i in range(1, len(parts)):  # a package's __init__ runs first
            if ".".join(parts[:i]) in names:
                todo.append(".".join(parts[:i]))
        if current in names:
            for name in top_level_imports(names[current]):
                todo.append(owner(name, names) or name)
    return seen


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


def test_the_renderers_take_from_the_converters_only_the_mappings_model():
    names = modules()
    taken = {
        f"{module} imports {name}"
        for module, path in names.items()
        if under(module, "schemacli.output")
        for name in imports(path)
        if under(name, "converters") and name != "converters.mapping.model"
    }
    assert taken == set()


def start_ups(names: dict[str, Path]) -> list[set[str]]:
    """What the CLI loads before it runs: the console script's entry alone (it answers Ctrl-C
    before it imports the app), the app (``schemacli --help``), for each command the app, the
    error edge and that command's module (the app imports a command's module, and the edge,
    only when that command runs: ``schemacli.app.COMMANDS``), and that with what the command's
    functions import when it runs (its core: ``validate ONE.avsc`` starts up through the whole
    of ``contracts.lint.validate``, so a module there may wait to import what only some files
    need)."""
    from schemacli.app import COMMANDS

    app = loaded_with("schemacli.app", names)
    run = app | loaded_with("schemacli.edge", names)
    commands = [run | loaded_with(entry.module, names) for entry in COMMANDS.values()]
    runs = []
    for entry, command in zip(COMMANDS.values(), commands, strict=True):
        inside = {owner(name, names) for _, name in function_imports(names[entry.module])}
        runs.append(command.union(*(loaded_with(m, names) for m in inside if m is not None)))
    return [loaded_with("schemacli.entry", names), app, *commands, *runs]


def test_the_app_starts_without_any_command_module():
    from schemacli.app import COMMANDS

    loaded = loaded_with("schemacli.app", modules())
    assert sorted(entry.module for entry in COMMANDS.values() if entry.module in loaded) == []


def test_validate_starts_without_the_fixes_editor():
    """``validate ONE.avsc`` loads no module of ``contracts.fixes`` (the editor, its diff and
    JSON helpers): a lint rule loads them when it makes a fix."""
    from schemacli.app import COMMANDS

    names = modules()
    road = set().union(
        *(
            loaded_with(m, names)
            for m in (
                "schemacli.entry",
                "schemacli.app",
                "schemacli.edge",
                COMMANDS["validate"].module,
                "schemacli.contracts.lint.validate",
            )
        )
    )
    assert "schemacli.contracts.lint.walk" in road
    assert sorted(m for m in road if under(m, "schemacli.contracts.fixes")) == []


def test_an_import_waits_inside_a_function_only_for_start_up_time():
    """A project module imported inside a function must be one that loads something slow
    (pyspark, confluent_kafka, requests, ...), or be imported there by a module the CLI loads at
    a start-up (the app's, or a command's) from a module it does not; anything else belongs at
    the top of the file."""
    names = modules()
    starts = start_ups(names)
    slow = {}
    needless = []
    for module, path in names.items():
        for function, name in function_imports(path):
            target = owner(name, names)
            if target is None:
                continue  # third-party: lazy where it is slow is the point
            if target not in slow:
                slow[target] = any(under(m, s) for m in loaded_with(target, names) for s in SLOW)
            if slow[target] or any(module in s and target not in s for s in starts):
                continue
            needless.append(f"{module}.{function} imports {name}")
    assert needless == []


FLOOR = ("schemacli.errors", "schemacli.redact", "schemacli.kinds", "schemacli.frozen")


def test_the_floor_imports_nothing_of_the_project_but_the_floor():
    """The error types and their words, redaction and the kinds catalogue sit under every
    package: each imports, of the project, only another of them."""
    names = modules()
    above = {
        f"{module} imports {name}"
        for module in FLOOR
        for name in top_level_imports(names[module])
        | {n for _, n in function_imports(names[module])}
        if (target := owner(name, names)) is not None and target not in FLOOR
    }
    assert above == set()


def test_the_registry_settings_config_takes_load_no_network_code():
    """config imports schemacli.registry.settings: it must load neither requests nor the client."""
    loaded = loaded_with("schemacli.registry.settings", modules())
    network = ("requests", "urllib3", "schemacli.registry.client", "schemacli.registry.publish")
    assert sorted(m for m in loaded if any(under(m, n) for n in network)) == []


def test_no_two_modules_of_the_contract_core_import_each_other_round_a_circle():
    """Imports of every kind count (top level, in functions, for the type checker alone)."""
    names = modules()
    core = {m for m in names if under(m, "schemacli.contracts")}
    graph = {
        m: {o for n in imports(names[m]) if (o := owner(n, names)) in core and o != m} for m in core
    }
    circles = []
    for start in sorted(core):
        seen, todo = set(), [(start, (start,))]
        while todo:
            current, path = todo.pop()
            for nxt in graph[current]:
                if nxt == start:
                    circles.append(" -> ".join((*path, start)))
                elif nxt not in seen and nxt > start:
                    seen.add(nxt)
                    todo.append((nxt, (*path, nxt)))
    assert circles == []
