"""The one road for registry schemas (``schemacli.registry.schemas``): references resolved to any
depth, each referenced version fetched once, cycles and over-deep references refused by name,
and nothing else in the repository reading a registry answer's schema text.

Registry answers come from the in-process fake; the real registry runs the same road in
tests/integration/test_registry_references_road.py."""

from __future__ import annotations

import ast
import json
import threading
from pathlib import Path

import pytest

from schemacli.contracts.avro.parse import parse_schema
from schemacli.errors import RegistryError
from schemacli.registry.client import RegistryClient
from schemacli.registry.models import Reference
from schemacli.registry.schemas import MAX_REFERENCE_DEPTH, RegistrySchemas
from schemacli.registry.settings import RegistrySettings
from tests.referenced_schemas import ADDRESS, COLOR, ORDER_V2, reference

ROOT = Path(__file__).resolve().parents[2]

# the order uses x.Address twice: defined inline at its first use only
ORDER = {
    **ORDER_V2,
    "fields": [
        *ORDER_V2["fields"],
        {"name": "bill_to", "type": ["null", "x.Address"], "default": None},
    ],
}


def register_two_levels(fake) -> None:
    """orders-v2-value -> x.Address (address-value) -> x.Color (color-value)."""
    fake.add("color-value", COLOR)
    fake.add("address-value", ADDRESS, references=[reference("x.Color", "color-value")])
    fake.add("orders-v2-value", ORDER, references=[reference("x.Address", "address-value")])


@pytest.fixture
def road(fake):
    with RegistryClient(RegistrySettings(url=fake.url, retries=0)) as client:
        yield RegistrySchemas(client)


def asked(fake, path: str) -> int:
    return sum(1 for r in fake.requests if r.method == "GET" and r.path == path)


def test_a_schema_two_references_deep_comes_back_self_contained(fake, road):
    register_two_levels(fake)
    found = road.schema("orders-v2-value")
    # the value stands alone: every named type defined once, at its first use
    alone = parse_schema(found.value)
    assert alone.fields[1].type.fullname == "x.Address"  # type: ignore[attr-defined]
    text = found.text
    assert text.count('"name": "Address"') == 1 and text.count('"name": "Color"') == 1
    # the registry's own text, parsed with the referenced versions' names
    assert found.loaded.source == "orders-v2-value:v1"
    assert [r.source for r in found.loaded.references] == ["address-value:v1"]
    assert [r.source for r in found.loaded.references[0].references] == ["color-value:v1"]
    assert "x.Color" in found.loaded.names and "x.Address" in found.loaded.names


def test_each_referenced_version_is_fetched_once_per_run_even_from_many_threads(fake, road):
    register_two_levels(fake)
    for n in range(2, 7):  # more versions of orders, each referencing the same Address
        extra = {"name": f"f{n}", "type": "int", "default": 0}
        order = {**ORDER, "fields": [*ORDER["fields"], extra]}
        fake.add("orders-v2-value", order, references=[reference("x.Address", "address-value")])
    barrier = threading.Barrier(4)

    def one(_: int) -> int:
        barrier.wait()  # all four ask at the same moment
        return len(road.writers("orders-v2-value"))

    assert list(road.map(one, range(4))) == [6, 6, 6, 6]
    assert asked(fake, "/subjects/address-value/versions/1") == 1
    assert asked(fake, "/subjects/color-value/versions/1") == 1
    for n in range(1, 7):
        assert asked(fake, f"/subjects/orders-v2-value/versions/{n}") == 1


def test_a_map_closed_before_its_end_returns_without_waiting_for_the_work_in_flight(road):
    """A caller that stops reading leaves the generator to the garbage collector, which closes
    it in whatever thread it runs, inside threading's own locks too (a new thread's start):
    waiting there for the workers deadlocked a CI run. Closed early, the map cancels the work
    not started and returns while a request is still in flight."""
    release = threading.Event()
    started: list[int] = []

    def work(n: int) -> int:
        started.append(n)
        if n > 0:
            release.wait(timeout=600)  # in flight until the test lets it go
        return n

    answers = road.map(work, range(50))
    assert next(answers) == 0
    closer = threading.Thread(target=answers.close)
    closer.start()
    closer.join(timeout=120)  # returns at once; only a hang reaches the deadline
    returned_in_flight = not closer.is_alive() and not release.is_set()
    release.set()
    closer.join()
    assert returned_in_flight
    assert len(started) <= road.client.settings.concurrency + 1  # the rest was cancelled


def test_writers_by_id_are_every_live_version_self_contained(fake, road):
    register_two_levels(fake)
    writers = road.writers("orders-v2-value")
    (schema_id, only), = writers.items()  # fmt: skip
    assert only.number == 1 and only.id == schema_id
    assert road.schema_by_id(schema_id).value == only.value


def test_a_reference_cycle_is_refused_naming_the_chain(fake, road):
    one = {"type": "record", "name": "A", "fields": [{"name": "b", "type": ["null", "B"]}]}
    two = {"type": "record", "name": "B", "fields": [{"name": "a", "type": ["null", "A"]}]}
    fake.add("a-value", one, references=[{"name": "B", "subject": "b-value", "version": 1}])
    fake.add("b-value", two, references=[{"name": "A", "subject": "a-value", "version": 1}])
    with pytest.raises(RegistryError) as caught:
        road.schema("a-value", 1)
    assert "cycle: a-value:v1 -> b-value:v1 -> a-value:v1" in caught.value.message
    assert caught.value.exit_code == 3


def test_references_deeper_than_the_limit_are_refused(fake, road):
    depth = MAX_REFERENCE_DEPTH + 1
    fake.add("t0-value", {"type": "fixed", "name": "T0", "size": 1})
    for n in range(1, depth + 1):
        field = {"name": "v", "type": f"T{n - 1}"}
        record = {"type": "record", "name": f"T{n}", "fields": [field]}
        ref = {"name": f"T{n - 1}", "subject": f"t{n - 1}-value", "version": 1}
        fake.add(f"t{n}-value", record, references=[ref])
    assert road.schema(f"t{MAX_REFERENCE_DEPTH}-value").loaded  # exactly the limit: read
    with pytest.raises(RegistryError, match=f"nest deeper than {MAX_REFERENCE_DEPTH} levels"):
        road.schema(f"t{depth}-value")


def test_a_reference_the_registry_does_not_have_is_named(fake, road):
    fake.add(
        "orders-v2-value",
        ORDER,
        references=[{"name": "x.Address", "subject": "address-value", "version": 3}],
    )
    with pytest.raises(RegistryError) as caught:
        road.schema("orders-v2-value")
    assert "references x.Address in address-value version 3" in caught.value.message
    assert caught.value.location.source == "orders-v2-value:v1"


def test_a_candidate_takes_its_named_types_from_its_references(fake, road):
    register_two_levels(fake)
    refs = [Reference("x.Address", "address-value", 1)]
    loaded = road.candidate(json.dumps(ORDER), "order.avsc", refs)
    assert loaded.source == "order.avsc" and "x.Color" in loaded.names


# ---- nothing else reads a registry answer's schema text -------------------------------------

SHIPPED = ("schemacli", "spark_avro", "converters")
ROAD = "schemacli/registry/schemas.py"
# the client builds the answers (one method per endpoint); the models define them
BUILDERS = {"schemacli/registry/client.py", "schemacli/registry/models.py", ROAD}
SCHEMA_METHODS = {"get_version", "get_schema", "get_version_schema"}
ANSWER_TYPES = {"SubjectVersion", "SchemaById"}
SHOWN = {"schemacli/commands/subjects.py"}  # `subjects show` prints the registry's text verbatim


def _modules() -> list[Path]:
    return sorted(p for package in SHIPPED for p in (ROOT / package).rglob("*.py"))


def _violations(path: Path, rel: str | None = None) -> list[str]:
    rel = rel or path.relative_to(ROOT).as_posix()
    tree = ast.parse(path.read_text(), rel)
    found = []
    looked_up: set[str] = set()  # names bound to a lookup's answer (a SubjectVersion)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Attribute) and func.attr == "lookup":
                looked_up.update(t.id for t in node.targets if isinstance(t, ast.Name))
    for node in ast.walk(tree):
        where = f"{rel}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in SCHEMA_METHODS:
                found.append(f"{where}: calls the client's {node.func.attr}()")
        elif isinstance(node, ast.ImportFrom) and node.module == "schemacli.registry.models":
            for alias in node.names:
                if alias.name in ANSWER_TYPES:
                    found.append(f"{where}: imports the answer type {alias.name}")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.attr == "schema" and node.value.id in looked_up:
                found.append(f"{where}: reads .schema of a lookup's answer")
            if node.attr == "_text":
                found.append(f"{where}: reads a registry version's raw text")
            if node.attr == "registered_text" and rel not in SHOWN:
                found.append(f"{where}: reads the registry's text verbatim")
    return found


def test_only_the_road_reads_the_schema_text_of_a_registry_answer():
    checked = [p for p in _modules() if p.relative_to(ROOT).as_posix() not in BUILDERS]
    assert len(checked) > 100  # the scan sees the shipped code
    violations = [v for p in checked for v in _violations(p)]
    assert not violations, "read registry schemas through schemacli.registry.schemas:\n" + (
        "\n".join(violations)
    )


def test_the_scan_sees_a_module_that_goes_around_the_road(tmp_path):
    # the rule above is only as good as what it notices
    rogue = tmp_path / "rogue.py"
    rogue.write_text(
        "def f(client):\n"
        "    sv = client.get_version('s', 1)\n"
        "    found = client.lookup('s', '{}')\n"
        "    return sv, found.schema\n"
    )
    kinds = [v.split(": ", 1)[1] for v in _violations(rogue, "converters/rogue.py")]
    assert kinds == ["calls the client's get_version()", "reads .schema of a lookup's answer"]


@pytest.mark.parametrize(
    "module",
    [
        "schemacli/registry/gate.py",
        "schemacli/registry/compare.py",
        "schemacli/registry/snapshot.py",
        "spark_avro/registry.py",
        "converters/mapping/plan.py",
        "converters/mapping/schemas.py",
        "converters/mapping/sampling.py",
        "converters/pipeline/records.py",
        "converters/census/names.py",
        "schemacli/commands/spark.py",
        "schemacli/commands/migrate/common.py",
    ],
)
def test_every_reader_of_registry_schemas_takes_the_road(module):
    source = (ROOT / module).read_text()
    assert "schemacli.registry.schemas" in source
