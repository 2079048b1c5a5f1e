"""The headers the converter writes, named once: the one a converted message carries (what it
was converted from, and where it was), and a dead letter's.

``schemacli.converted-from: <origin> <topic>/<partition>/<offset> <timestamp-ms>``, where

* ``origin`` is ``<v2 subject>/<version>`` of the writer schema (``tombstone`` for a forwarded
  delete). The header's presence is the loop guard: a message carrying it is never converted
  again;
* ``<topic>/<partition>/<offset>`` is the v2 message's position: the dedupe key, since Spark's
  Kafka sink is at-least-once;
* ``<timestamp-ms>`` is the v2 message's timestamp (Spark's Kafka sink cannot set a record's
  timestamp, so the broker stamps the time of writing).

One header, not three: Spark's Kafka sink turns every header of every row into a ``String`` and a
``RecordHeader``: with three headers the converter ran at about 5/6 of its one-header throughput
(``bench/README.md``). Topic names have no spaces and the other parts are numbers, so the value
splits from the right even if a subject name has spaces. Dead letters keep separate headers
(``schemacli.source``, ``schemacli.source-timestamp``): they are rare, and must not carry the
marker, so that a repaired dead letter can be replayed into the v2 topic.
"""

from __future__ import annotations

from dataclasses import dataclass

MARKER_HEADER = "schemacli.converted-from"
TOMBSTONE = "tombstone"
# A dead letter's headers (beside the v2 message's own): why and where it failed, and where it was
ERROR_HEADER = "schemacli.error"
STAGE_HEADER = "schemacli.error-stage"  # decode, convert, key-decode, key-convert
SOURCE_HEADER = "schemacli.source"  # its v2 position (a converted message's is in the marker)
TIMESTAMP_HEADER = "schemacli.source-timestamp"  # its v2 timestamp
DEAD_LETTER_HEADERS = (ERROR_HEADER, STAGE_HEADER, SOURCE_HEADER, TIMESTAMP_HEADER)


@dataclass(frozen=True)
class Provenance:
    """A converted message's ``schemacli.converted-from`` header, read."""

    origin: str  # "<v2 subject>/<version>", or "tombstone"
    topic: str
    partition: int
    offset: int
    timestamp_ms: int

    @property
    def dedupe_key(self) -> str:
        """``<topic>/<partition>/<offset>``: unique per v2 message."""
        return f"{self.topic}/{self.partition}/{self.offset}"


def marker_value(origin: str, topic: str, partition: int, offset: int, timestamp_ms: int) -> bytes:
    """The header value the converter job writes (the job builds it in Spark SQL; same text)."""
    return f"{origin} {topic}/{partition}/{offset} {timestamp_ms}".encode()


def parse_marker(value: bytes | str) -> Provenance:
    """Read a ``schemacli.converted-from`` value; ``ValueError`` saying what is wrong if not one."""
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    parts = text.rsplit(" ", 2)
    position = parts[1].rsplit("/", 2) if len(parts) == 3 else []
    if len(position) != 3 or not all(_is_int(p) for p in (*position[1:], parts[2])):
        raise ValueError(
            f"not a {MARKER_HEADER} header value: {text!r} "
            "(expected '<subject>/<version> <topic>/<partition>/<offset> <timestamp-ms>')"
        )
    topic, partition, offset = position
    return Provenance(parts[0], topic, int(partition), int(offset), int(parts[2]))


def _is_int(text: str) -> bool:
    return text.removeprefix("-").isdigit()  # a record without a timestamp has -1
