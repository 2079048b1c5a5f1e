"""A --kafka-properties file librdkafka refuses stops deploy before spark-submit: exit 2, the
file and line named, no traceback."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from schemacli.app import app
from tests.extras import require

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"


def test_deploy_refuses_a_properties_file_librdkafka_refuses_naming_its_line(tmp_path):
    require("pyspark", "spark")  # the dry run names pyspark's own spark-submit
    props = tmp_path / "kafka.properties"
    props.write_text("security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsecurity.protocol=TLS\n")
    r = CliRunner().invoke(
        app,
        [
            "migrate", "deploy", str(EXAMPLE), "-b", "localhost:9092", "--registry",
            "http://localhost:8081", "--state-dir", str(tmp_path / "s"), "--kafka-properties",
            str(props), "--dry-run",
        ],
    )  # fmt: skip
    assert r.exit_code == 2, r.output
    assert f"{props}:3" in r.output and "security.protocol" in r.output
    assert "Traceback" not in r.output
    assert not (tmp_path / "s").exists()  # nothing written for a deploy that never started


PROPERTIES = (
    "security.protocol=SASL_SSL\n"
    "sasl.mechanism=SCRAM-SHA-512\n"
    "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
    'username="conv" password="pw";\n'
)
SASL = {"security.protocol": "SASL_SSL", "sasl.username": "conv", "sasl.password": "pw"}


class Unreachable:
    """A Kafka client that records its settings and finds no broker (unit level: the broker's
    side of SASL is not what is tested here, the settings reaching the client are)."""

    made: list[dict] = []

    def __init__(self, conf: dict) -> None:
        self.made.append(conf)

    def list_topics(self, *args, **kwargs):
        from confluent_kafka import KafkaError, KafkaException

        raise KafkaException(KafkaError(KafkaError._TRANSPORT, "no broker here"))

    def close(self) -> None:
        """Nothing was opened."""


def _deployment(tmp_path: Path) -> tuple[Path, Path]:
    state = tmp_path / "s"
    state.mkdir()
    (state / "progress.json").write_text('{"totals": {"in": 0}}')
    props = tmp_path / "kafka.properties"
    props.write_text(PROPERTIES)
    return state, props


def test_status_talks_to_kafka_with_the_properties_file(tmp_path, monkeypatch):
    import confluent_kafka

    state, props = _deployment(tmp_path)
    Unreachable.made = []
    monkeypatch.setattr(confluent_kafka, "Consumer", Unreachable)
    r = CliRunner().invoke(
        app,
        ["migrate", "status", str(EXAMPLE), "--state-dir", str(state), "-b", "broker:9093",
         "--kafka-properties", str(props)],
    )  # fmt: skip
    assert r.exit_code == 3, r.output  # the broker is unreachable, as the fake says
    status_clients = [
        c for c in Unreachable.made if c.get("group.id") == "schemacli-migrate-status"
    ]
    assert status_clients and all(SASL.items() <= c.items() for c in status_clients)


def test_finish_looks_at_v1s_dependents_with_the_properties_file(tmp_path, monkeypatch):
    import confluent_kafka.admin

    state, props = _deployment(tmp_path)
    Unreachable.made = []
    monkeypatch.setattr(confluent_kafka.admin, "AdminClient", Unreachable)
    r = CliRunner().invoke(
        app,
        ["migrate", "finish", str(EXAMPLE), "--state-dir", str(state), "-b", "broker:9093",
         "--kafka-properties", str(props), "--interval", "0"],
    )  # fmt: skip
    assert r.exit_code == 3, r.output
    assert Unreachable.made and SASL.items() <= Unreachable.made[0].items()


def test_status_refuses_a_properties_file_librdkafka_refuses(tmp_path):
    state, props = _deployment(tmp_path)
    props.write_text("security.protocol=SASL_SSL\nlibrdkafka.no.such=1\n")
    r = CliRunner().invoke(
        app,
        ["migrate", "status", "--state-dir", str(state), "--kafka-properties", str(props)],
    )
    assert r.exit_code == 2 and f"{props}:2" in r.output, r.output
