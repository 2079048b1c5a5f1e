"""docker-compose.yml (for users with Docker) agrees with the CLI defaults and the docs.

Docker cannot run here, so this checks the file itself: it parses, runs Kafka in KRaft mode
without ZooKeeper, publishes the ports the CLI and docs/stack.md use, and has health checks.
No integration marker: it needs nothing but PyYAML.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from schemacli.registry.settings import DEFAULT_URL

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTED_BOOTSTRAP = "localhost:9092"


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


@pytest.fixture(scope="module")
def services(compose: dict) -> dict:
    return compose["services"]


def published(service: dict) -> set[int]:
    """Host ports a service publishes ("HOST:CONTAINER" entries)."""
    return {int(str(entry).split(":")[0]) for entry in service.get("ports", [])}


def test_compose_defines_kafka_and_confluent_registry_without_zookeeper(services):
    assert {"kafka", "schema-registry"} <= set(services)
    assert not [name for name in services if "zookeeper" in name.lower()]
    assert not [name for name, svc in services.items() if "zookeeper" in str(svc.get("image", ""))]
    assert services["schema-registry"]["image"].startswith("confluentinc/cp-schema-registry:")


def test_compose_kafka_runs_in_kraft_mode_as_broker_and_controller(services):
    env = services["kafka"]["environment"]
    assert set(env["KAFKA_PROCESS_ROLES"].split(",")) == {"broker", "controller"}
    assert env["KAFKA_CONTROLLER_QUORUM_VOTERS"].startswith(f"{env['KAFKA_NODE_ID']}@")
    assert not [key for key in env if "ZOOKEEPER" in key]


def test_compose_publishes_the_cli_default_registry_url(services):
    default = urlsplit(DEFAULT_URL)
    assert default.hostname == "localhost"
    assert default.port in published(services["schema-registry"])
    listeners = services["schema-registry"]["environment"]["SCHEMA_REGISTRY_LISTENERS"]
    assert urlsplit(listeners).port == default.port


def test_compose_advertises_the_documented_bootstrap_to_host_clients(services):
    env = services["kafka"]["environment"]
    advertised = [
        entry.split("://", 1)[1] for entry in env["KAFKA_ADVERTISED_LISTENERS"].split(",")
    ]
    assert DOCUMENTED_BOOTSTRAP in advertised
    assert int(DOCUMENTED_BOOTSTRAP.rsplit(":", 1)[1]) in published(services["kafka"])


def test_compose_registry_stores_schemas_in_the_composed_kafka(services):
    env = services["kafka"]["environment"]
    internal = {
        entry.split("://", 1)[1]
        for entry in env["KAFKA_ADVERTISED_LISTENERS"].split(",")
        if not entry.split("://", 1)[1].startswith("localhost:")
    }
    store = services["schema-registry"]["environment"][
        "SCHEMA_REGISTRY_KAFKASTORE_BOOTSTRAP_SERVERS"
    ]
    assert store.split("://", 1)[1] in internal
    assert services["schema-registry"]["depends_on"]["kafka"]["condition"] == "service_healthy"


def test_compose_services_have_health_checks_and_pinned_images(services):
    for name, service in services.items():
        assert service.get("healthcheck", {}).get("test"), f"{name} has no health check"
        image = service["image"]
        assert ":" in image and not image.endswith(":latest"), f"{name} image is not pinned"


def test_compose_ui_is_optional(services):
    optional = [name for name, svc in services.items() if svc.get("profiles")]
    assert optional == ["kafka-ui"]


def test_docs_state_the_same_ports_as_compose(services):
    docs = (ROOT / "docs" / "stack.md").read_text()
    assert DEFAULT_URL in docs
    assert DOCUMENTED_BOOTSTRAP in docs
    for port in published(services["kafka-ui"]):
        assert f"localhost:{port}" in docs
