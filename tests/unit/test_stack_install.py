"""scripts/ci-setup's installer (tests.stack.install): the Go build runs beside the Maven fetches,
and a component that fails is reported without stopping the others."""

from __future__ import annotations

import threading

import pytest

from tests.stack import install
from tests.stack.common import ComponentUnavailable


def _stub_steps(monkeypatch: pytest.MonkeyPatch, *, failing: str = "") -> list[str]:
    """Replace every step by one that records its name (and raises for ``failing``); the Go build
    waits until a Maven step has started, so the run hangs unless the two lanes overlap."""
    ran: list[str] = []
    maven_started = threading.Event()

    def step(name: str, *, maven: bool = True) -> object:
        def run(*_: object) -> None:
            if maven:
                maven_started.set()
            else:
                assert maven_started.wait(timeout=60), "the Go build did not run beside Maven"
            ran.append(name)
            if name == failing:
                raise ComponentUnavailable(name, "could not be fetched", log_tail="last line")

        return run

    for name in ("spark_jars", "kafka_jars", "census_jars", "jsonata_jars", "quality_jars"):
        monkeypatch.setattr(install, name, step(name))

    def obtain(impl: str) -> None:
        step(impl, maven=impl != "axonops")()

    monkeypatch.setattr(install.registry, "obtain", obtain)
    return ran


def test_the_go_build_runs_beside_the_maven_fetches_and_every_step_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _stub_steps(monkeypatch)
    assert install.main(["--registry-impl", "apicurio,axonops"]) == 0
    assert sorted(ran) == sorted(
        ["spark_jars", "kafka_jars", "census_jars", "jsonata_jars", "quality_jars"]
        + ["apicurio", "axonops"]
    )
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 7 and all(line.startswith("ci-setup: ") for line in lines)


def test_a_failing_component_is_reported_with_its_log_and_the_others_still_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _stub_steps(monkeypatch, failing="kafka_jars")
    assert install.main([]) == 1
    assert "quality_jars" in ran and "axonops" in ran and "apicurio" in ran
    err = capsys.readouterr().err
    assert "ci-setup: kafka broker jars: FAILED\nkafka_jars: could not be fetched" in err
    assert "last line" in err
