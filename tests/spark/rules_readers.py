"""Test helper: the two readers of one contract's rules on one frame, in both layouts.

``spark codegen --rules`` writes a standalone reader from a store holding the contract; the
generated reader and ``read_topic(rules=PATH)`` then read the same Kafka-shaped frame, flattened
and nested, and must give the same rows. The rules test files each prove it for their own rule
set and go on to check the rows with what their rules must do."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


class KafkaStandIn:
    """What a generated reader's ``read()`` asks of its session: the conf and a batch Kafka
    source, which here gives ``frame``, the records ``read_topic`` is given too."""

    def __init__(self, spark: Any, frame: Any) -> None:
        self.conf, self.read, self.frame = spark.conf, self, frame
        self.options_given: dict[str, str] = {}

    def format(self, name: str) -> KafkaStandIn:
        assert name == "kafka"
        return self

    def options(self, **options: str) -> KafkaStandIn:
        self.options_given = options
        return self

    def load(self) -> Any:
        return self.frame


@dataclass(frozen=True)
class BothReaders:
    """What the comparison leaves to check: the generated module's source, and per layout
    (``flatten`` True, then False) the generated reader's frame and read_topic's (equal)."""

    source: str
    frames: dict[bool, tuple[Any, Any]]


def generated_reader(tmp_path: Path, schema: dict[str, Any], subject: str, topic: str,
                     body: dict[str, Any]) -> tuple[Path, Path, ModuleType]:  # fmt: skip
    """A store holding ``schema`` as v1 of ``subject`` with the contract ``body``, and the reader
    ``spark codegen --rules`` writes from it: (the contract file, the module's file, the module)."""
    from typer.testing import CliRunner

    from schemacli.app import app

    folder = tmp_path / "store" / "subjects" / subject
    folder.mkdir(parents=True)
    (folder / "v1.avsc").write_text(json.dumps(schema, indent=2))
    contract = folder / "v1.contract.json"
    contract.write_text(json.dumps(body, indent=2))
    name = f"{topic}_reader"
    out = tmp_path / f"{name}.py"
    result = CliRunner().invoke(app, [
        "spark", "codegen", "-s", subject, "-t", topic, "--store",
        str(tmp_path / "store"), "--schema-id", "1=1", "--rules", "--out", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    spec = importlib.util.spec_from_file_location(name, out)
    assert spec is not None and spec.loader is not None
    generated = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generated)
    return contract, out, generated


def assert_generated_reader_gives_read_topics_rows(
    spark: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    schema: dict[str, Any],
    subject: str,
    topic: str,
    body: dict[str, Any],
    raw: Any,
) -> BothReaders:
    """The reader ``spark codegen --rules`` writes for the contract ``body`` gives
    ``read_topic(rules=PATH)``'s rows on ``raw`` (a Kafka-shaped frame of schema id 1), row for
    row in offset order, flattened and nested."""
    from pyspark.testing import assertDataFrameEqual

    import spark_avro.reader as reader

    contract, out, generated = generated_reader(tmp_path, schema, subject, topic, body)
    text = json.dumps(schema)
    monkeypatch.setattr(reader, "kafka_source", lambda *a, **k: raw)
    frames = {}
    for flatten in (True, False):
        library = reader.read_topic(
            spark, "unused:9092", topic, schemas={1: text}, reader_schema=text,
            rules=contract, flatten=flatten,
        )  # fmt: skip
        ours = generated.read(KafkaStandIn(spark, raw), "unused:9092", flatten=flatten,
                              time_zone=None)  # fmt: skip
        assertDataFrameEqual(ours.orderBy("offset"), library.orderBy("offset"), checkRowOrder=True)
        frames[flatten] = (ours, library)
    return BothReaders(out.read_text(), frames)
