"""spark_avro: read Confluent-framed Avro from Kafka with PySpark, mixed schema versions included.

The pure parts (``types``, ``wire``, ``codegen``) need no pyspark; the readers import it when
first used, so ``schemacli --help`` and ``schemacli spark ddl`` start without a JVM.
"""

from __future__ import annotations

from typing import Any

_LAZY = {
    "decode_confluent": "spark_avro.decode",
    "split_bad_records": "spark_avro.decode",
    "read_topic": "spark_avro.reader",
    "stream_topic": "spark_avro.reader",
    "resolve_schemas": "spark_avro.reader",
    "encode_confluent": "spark_avro.encode",
    "write_topic": "spark_avro.encode",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'spark_avro' has no attribute {name!r}")
