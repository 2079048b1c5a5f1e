"""The converter job: ``spark-submit converters/job.py --mapping mapping.json ...``.

Reads the v2 topic, decodes each value with its writer schema (by the id in the Confluent header,
``spark_avro.decode_confluent``), converts it with the mapping's Spark SQL
(``pipeline.transform.convert``), encodes it with ``to_avro`` against the v1 schema behind the
v1 schema id (looked up in the registry; the job stops at once if v1 is not registered) and
writes it to the v1 topic with the original key (or, when the mapping has a ``key:`` section,
the key decoded, converted and framed with the v1 key schema's id the same way) and headers plus:

* ``schemacli.converted-from``: ``<v2 subject>/<version> <topic>/<partition>/<offset>
  <timestamp-ms>`` (``pipeline.headers``): the loop guard (a message that carries it is never
  converted again; it is counted as skipped), the v2 message's position and its timestamp (the
  broker stamps the time of writing).

Messages whose value or key fails to decode or convert go to the dead-letter topic with the raw
bytes as value, the original key and headers, plus ``schemacli.error``, ``schemacli.error-stage``
(``decode``, ``convert``, ``key-decode``, ``key-convert``) and
``schemacli.source`` / ``schemacli.source-timestamp`` (the same position and timestamp, not the
marker, so that a repaired dead letter can be replayed). One query writes both topics (a
``topic`` column per row), so one checkpoint covers both and a restart resumes both together.

Delivery (``--delivery``): exactly-once by default, each batch written through
``pipeline.txsink`` by the JVM writer on the executors (one Kafka transaction per v2 partition,
fenced and resumed by the converter's committed offsets; the counts committed with the records;
its jar on Spark's classpath, ``converters.pipeline.jvmjar``); or
at-least-once, with Spark's own Kafka sink and the counts from Spark's observed metrics. Either
way the counts (in, converted, dead-lettered, skipped, tombstone) land in
``<state-dir>/progress.json`` (``pipeline.progress``), which ``schemacli migrate status`` reads.

Road (``--road``): exactly-once delivery converts a mapping whose every rule the JVM writer
interprets (``converters.mapping.recordplan``) Avro to Avro in the writer's task
(``pipeline.fastroad``), and any other mapping through Spark SQL; ``--road sql`` forces the SQL
road. The job says which road it took on stderr.
"""

from __future__ import annotations

import argparse
import sys

from converters.pipeline import stream
from schemacli.errors import SchemacliError, error_text


def _args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="converters/job.py", description=__doc__.splitlines()[0])
    p.add_argument("--mapping", required=True, help="mapping with inline schemas (JSON or YAML)")
    p.add_argument("--bootstrap", required=True)
    p.add_argument(
        "--registry", required=True, help="registry URL (credentials: SCHEMACLI_REGISTRY_* env)"
    )
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--state-dir", required=True)
    p.add_argument("--starting-offsets", default="earliest")
    p.add_argument("--trigger-seconds", type=float, default=1.0)
    p.add_argument("--max-offsets-per-trigger", type=int, default=None)
    p.add_argument("--available-now", action="store_true", help="process what is there, then stop")
    p.add_argument(
        "--delivery",
        choices=stream.DELIVERIES,
        default="exactly-once",
        help="exactly-once: Kafka transactions (pipeline.txsink); at-least-once: Spark's sink",
    )
    p.add_argument(
        "--road",
        choices=stream.ROADS,
        default="auto",
        help="auto: the fast road (Avro to Avro in the JVM writer) when every rule of the "
        "mapping has one and delivery is exactly-once, else the SQL road; sql: always the SQL road",
    )
    p.add_argument(
        "--kafka-properties",
        default=None,
        help="file of Kafka client properties (k=v lines), e.g. SASL settings; kept off "
        "the command line",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the converter; its exit code. A ``SchemacliError`` (the mapping, the registry, the
    writer's jar, Kafka before Spark starts) is said in one line here, with its exit code."""
    args = _args(sys.argv[1:] if argv is None else argv)
    try:
        return stream.start(args)
    except SchemacliError as err:
        print(error_text(err), file=sys.stderr, flush=True)
        return int(err.exit_code)


if __name__ == "__main__":
    sys.exit(main())
