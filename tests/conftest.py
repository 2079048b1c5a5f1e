"""Shared test configuration: stack options, the availability header, the ``spark`` fixture.

Kafka and registry fixtures live in tests/integration/conftest.py; the launchers themselves in
tests/stack/ (shared with scripts/devstack).

Missing components: with CI=true a component that cannot start fails the run with its log
tail; elsewhere the tests that need it are skipped, and the pytest header and the final
summary say so, so a green run is never misread as complete.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # makes `tests.stack` importable from every test module
    sys.path.insert(0, str(ROOT))

from tests import filecosts  # noqa: E402
from tests.stack.common import ComponentUnavailable  # noqa: E402
from tests.stack.harness import UNAVAILABLE, abandon_pending, in_ci, obtain  # noqa: E402
from tests.stack.probe import REGISTRY_IMPLS, probe  # noqa: E402


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("schemacli stack")
    group.addoption(
        "--registry-impl",
        choices=REGISTRY_IMPLS,
        default=os.environ.get("SCHEMACLI_REGISTRY_IMPL", "apicurio"),
        help="Confluent-API schema registry the integration tests start "
        "(default: $SCHEMACLI_REGISTRY_IMPL or apicurio)",
    )
    group.addoption(
        "--file-costs",
        action="store_true",
        help="print each test file's seconds at the end, in the format of "
        "tests/file-costs.txt (the table that orders the files, dearest first)",
    )


# Registries that keep a schema's rule set and metadata (Apicurio's ccompat API drops them).
KEEPS_RULE_SETS = frozenset({"axonops"})


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A `rule_sets` test cannot run against a registry that drops rule sets: it is deselected
    (reported as such), never skipped, so a pass that can run it never shows it as a skip.
    Then the files go dearest first (tests/filecosts.py), so the workers start the long ones
    at once."""
    if config.getoption("--registry-impl") not in KEEPS_RULE_SETS:
        kept, dropped = [], []
        for item in items:
            (dropped if item.get_closest_marker("rule_sets") else kept).append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept
    try:
        costs = filecosts.load_costs()
    except filecosts.CostTableError as exc:
        raise pytest.UsageError(str(exc)) from exc
    if costs:
        order = filecosts.dearest_first((item.nodeid for item in items), costs)
        items[:] = [items[i] for i in order]


_SECONDS: list[tuple[str, float]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # On the xdist controller this sees every worker's reports: set-up, call and tear-down.
    _SECONDS.append((report.nodeid, report.duration))


def pytest_report_header(config: pytest.Config) -> list[str]:
    impl = config.getoption("--registry-impl")
    lines = [f"schemacli stack: registry={impl}, CI={'yes' if in_ci() else 'no'}"]
    for name, state in probe(impl).items():
        mark = (
            "ready"
            if state.ready
            else ("MISSING -> FAILS (CI)" if in_ci() else "MISSING -> tests SKIPPED")
        )
        lines.append(f"  {name:<9} {mark}: {state.detail}")
    return lines


def pytest_sessionfinish(session: pytest.Session) -> None:
    # Kafka/registry started early for tests that then never ran (-x, Ctrl-C, deselected).
    abandon_pending()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if terminalreporter.config.getoption("--file-costs") and not hasattr(
        terminalreporter.config, "workerinput"
    ):
        terminalreporter.section("seconds by file (the format of tests/file-costs.txt)")
        for line in filecosts.render_costs(filecosts.seconds_by_file(_SECONDS)):
            terminalreporter.write_line(line)
    if not UNAVAILABLE:
        return
    terminalreporter.section("stack components that did not start", sep="!", yellow=True, bold=True)
    for name, why in UNAVAILABLE.items():
        terminalreporter.write_line(f"{name}: {why.splitlines()[0]}")
    terminalreporter.write_line(
        "tests needing them were SKIPPED (they FAIL when CI=true): "
        "this run does not cover the integration suite completely"
    )


@pytest.fixture(autouse=True)
def _own_verdict_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch) -> None:
    """Each test its own verdict cache: never the developer's, never another test's."""
    monkeypatch.setenv("SCHEMACLI_CACHE_DIR", str(tmp_path_factory.mktemp("verdict-cache")))


@pytest.fixture(autouse=True)
def _own_secrets() -> Iterator[None]:
    """Each test its own set of secrets to redact (schemacli.redact): a password one test plants
    is never masked in another test's output."""
    from schemacli import redact

    with redact.scope():
        yield


@pytest.fixture
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """A local[2] SparkSession with spark-avro and spark-sql-kafka, shared by the whole session."""
    from tests.stack.spark import make_spark_session

    def start() -> object:
        try:
            return make_spark_session("schemacli-tests")
        except ComponentUnavailable:
            raise
        except Exception as exc:  # JVM did not start: report it like any other missing component
            raise ComponentUnavailable("spark", f"SparkSession did not start: {exc}") from exc

    session = obtain("spark", start)
    yield session
    session.stop()


@pytest.fixture
def fake():
    """An in-process fake of the Confluent REST API, for unit tests of error paths (never in
    integration tests: those use the real registries)."""
    from registry_fake import FakeRegistry

    registry = FakeRegistry().start()
    yield registry
    registry.stop()
