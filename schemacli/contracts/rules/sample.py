"""A rule set over sample records (``schemacli rules test``): read the records, present each as
Confluent's executors would, run the rules, count per rule and keep the violations.

Records come from JSON lines files (one record per line, in plain JSON: a union's value bare,
``bytes``/``fixed`` as a string of code points 0-255 as in Avro's JSON encoding, a
``timestamp-millis`` as its number) or Avro object container files (recognised by their
``Obj\\x01`` magic; read with the contract's schema as the reader). Each JSON record is
written with the schema by fastavro and read back, so the rules see exactly what the
deserializer hands them, and a record that does not fit the schema is an input error at its
line. Every file is read through the bounded reader.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schemacli.contracts.avro.schema import (
    ArraySchema,
    FixedSchema,
    MapSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from schemacli.contracts.rules.execute import Outcome, RuleRunner
from schemacli.contracts.rules.model import Contract, Rule
from schemacli.errors import InputError, Location
from schemacli.textfile import read_input

RECORDS_LIMIT = 256 * 1024 * 1024  # sample files: generous, never the whole topic
AVRO_MAGIC = b"Obj\x01"
SHOWN_RECORD = 300  # characters of a record shown with a violation


@dataclass(frozen=True)
class Sample:
    source: str
    number: int  # 1-based: the line (JSON lines) or the record's place (Avro)
    record: Any
    is_line: bool = True

    @property
    def location(self) -> Location:
        if self.is_line:
            return Location(source=self.source, line=self.number, column=1)
        return Location(source=self.source, pointer=f"/records/{self.number - 1}")


@dataclass(frozen=True)
class Violation:
    sample: Sample
    outcome: Outcome


@dataclass
class RuleTally:
    rule: Rule
    passed: int = 0
    failed: int = 0
    errored: int = 0
    not_run: int = 0
    violations: list[Violation] = field(default_factory=list)

    @property
    def total_failures(self) -> int:
        return self.failed + self.errored


@dataclass
class SampleReport:
    contract: str
    mode: str
    records: int = 0
    refused: int = 0  # records a serializer would refuse (an ERROR or DLQ action ran)
    dlq: dict[str, int] = field(default_factory=dict)  # DLQ topic -> records sent there
    tallies: list[RuleTally] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(t.total_failures for t in self.tallies)


def _bytes_from_json(schema: Schema, value: Any) -> Any:
    """A plain-JSON record with its bytes/fixed strings turned into bytes (Avro's JSON
    encoding: one code point 0-255 per byte)."""
    if isinstance(schema, UnionSchema):
        for branch in schema.types:
            if branch.type in ("bytes", "fixed") and isinstance(value, str):
                return _latin(value)
        for branch in schema.types:
            if isinstance(branch, RecordSchema | ArraySchema | MapSchema) and isinstance(
                value, dict | list
            ):
                return _bytes_from_json(branch, value)
        return value
    if (schema.type == "bytes" or isinstance(schema, FixedSchema)) and isinstance(value, str):
        return _latin(value)
    if isinstance(schema, RecordSchema) and isinstance(value, dict):
        fields = schema.field_map
        return {
            k: _bytes_from_json(fields[k].type, v) if k in fields else v for k, v in value.items()
        }
    if isinstance(schema, ArraySchema) and isinstance(value, list):
        return [_bytes_from_json(schema.items, v) for v in value]
    if isinstance(schema, MapSchema) and isinstance(value, dict):
        return {k: _bytes_from_json(schema.values, v) for k, v in value.items()}
    return value


def _latin(text: str) -> bytes | str:
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        return text  # fastavro then says the value does not fit


def read_samples(path: Path, schema: Schema, schema_json: Any) -> Iterator[Sample]:
    """The records of one file, presented as the deserializer presents them; InputError
    (file:line) for a line that is not JSON or a record that does not fit the schema."""
    import fastavro

    source = str(path)
    data = read_input(path, limit=RECORDS_LIMIT, what="records file")
    parsed = fastavro.parse_schema(schema_json)
    if data.startswith(AVRO_MAGIC):
        try:
            reader = fastavro.reader(io.BytesIO(data), reader_schema=parsed)
            for n, record in enumerate(reader, start=1):
                yield Sample(source, n, record, is_line=False)
        except (ValueError, EOFError, TypeError, KeyError, IndexError) as err:
            raise InputError(
                f"not a readable Avro container file, or not readable with the contract's "
                f"schema: {err}",
                location=Location(source=source),
                hint="Write samples with the schema (fastavro.writer, avro-tools), or give "
                "JSON lines.",
            ) from None
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(
            f"neither an Avro container file nor UTF-8 JSON lines (byte {err.start})",
            location=Location(source=source),
            hint="Give JSON lines (one record per line) or an Avro object container file.",
        ) from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputError(
                f"line {number} is not JSON: {err.msg}",
                location=Location(source=source, line=number, column=err.colno),
                hint="One record per line, as a JSON object.",
            ) from None
        except RecursionError:
            raise InputError(
                f"line {number} nests too deeply",
                location=Location(source=source, line=number, column=1),
                hint="One record per line, as a JSON object.",
            ) from None
        yield Sample(source, number, _presented(value, schema, parsed, source, number))


def _presented(value: Any, schema: Schema, parsed: Any, source: str, number: int) -> Any:
    import fastavro

    buffer = io.BytesIO()
    try:
        fastavro.schemaless_writer(buffer, parsed, _bytes_from_json(schema, value))
    except Exception as err:  # fastavro raises ValueError, TypeError, ... for a misfit
        raise InputError(
            f"the record on line {number} does not fit the contract's schema: {err}"[:500],
            location=Location(source=source, line=number, column=1),
            hint="A record is a JSON object with the schema's fields (a union's value bare, "
            "bytes as a string of code points 0-255).",
        ) from None
    buffer.seek(0)
    return fastavro.schemaless_reader(buffer, parsed, parsed)


def run_samples(
    contract: Contract,
    schema: Schema,
    schema_json: Any,
    files: Sequence[Path],
    *,
    mode: str = "WRITE",
    keep: int = 20,
    each: Callable[[int], None] | None = None,
) -> SampleReport:
    """Every record of ``files`` through the contract's domain rules in ``mode``; ``keep``
    violations per rule are kept (all are counted); ``each(n)`` after each record."""
    runner = RuleRunner(contract.rule_set, schema, contract.metadata)
    report = SampleReport(contract.source, mode)
    tallies: dict[int, RuleTally] = {}
    for _, prepared in runner.active(mode):
        tallies[id(prepared.rule)] = RuleTally(prepared.rule)
    report.tallies = list(tallies.values())
    for path in files:
        for sample in read_samples(path, schema, schema_json):
            report.records += 1
            result = runner.run(sample.record, mode)
            for outcome in result.outcomes:
                tally = tallies[id(outcome.rule)]
                if outcome.status == "pass":
                    tally.passed += 1
                elif outcome.status == "not-run":
                    tally.not_run += 1
                else:
                    if outcome.status == "fail":
                        tally.failed += 1
                    else:
                        tally.errored += 1
                    if len(tally.violations) < keep:
                        tally.violations.append(Violation(sample, outcome))
            if result.refused_by is not None:
                report.refused += 1
                topic = result.dlq_topic
                if topic is not None:
                    report.dlq[topic] = report.dlq.get(topic, 0) + 1
            if each is not None:
                each(report.records)
    return report


def shown(record: Any) -> str:
    """A record as one short line of JSON (bytes as their code points; long ones cut)."""
    text = json.dumps(record, default=_jsonable, ensure_ascii=False, sort_keys=False)
    return text if len(text) <= SHOWN_RECORD else text[: SHOWN_RECORD - 3] + "..."


def _jsonable(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("latin-1")
    return str(value)
