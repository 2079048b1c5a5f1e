"""``topics check``'s Spark road: the topic read by Spark's Kafka source, each writer's values
decoded with ``spark_avro.decode`` (``from_avro``, PERMISSIVE) and the rule set's CEL CONDITIONs
evaluated as Spark SQL (``spark_avro.rules``, compiled from the CEL; no Python UDF), for a topic
beyond one machine.

The ranges, writers and rule set come from ``check.take_check`` as for the other roads; the
answer has the shape of theirs (``jvmscan.answer``), so the document is the same. What has no
SQL form (CEL_FIELD rules, transforms, ...) is refused before Spark starts (InputError naming the
rule): ``--engine jvm`` runs those.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from converters.census.model import PartitionTally
from converters.spark import local_spark
from schemacli.contracts.avro.parse import parse_schema
from schemacli.contracts.rules.model import Contract, Rule, parse_contract
from schemacli.errors import InputError
from spark_avro.rules import CompiledRule, RulesNotCompiled, compile_rules

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from schemacli.registry.schemas import RegistrySchema

FIRST_ERROR = "the rule's expression failed (the Spark road keeps no message)"


@dataclass(frozen=True)
class WriterRules:
    """One writer's compiled rules, and each one's place in the rule set (its domainRules)."""

    schema: str
    compiled: list[CompiledRule]
    places: list[int]


def compile_for(
    contract: Contract, writers: Mapping[int, RegistrySchema], rule_mode: str
) -> dict[int, WriterRules]:
    """Every writer's rules compiled to SQL; InputError for a rule with no SQL form."""
    domain = contract.rule_set.domain_rules
    out = {}
    for wid, version in writers.items():
        try:
            compiled = compile_rules(contract, parse_schema(json.loads(version.text)), rule_mode)
        except RulesNotCompiled as err:
            raise InputError(
                f"--engine spark cannot run the rule set on {version.subject} version "
                f"{version.number}: {err.message}",
                location=err.location,
                hint="Spark runs CEL and CEL_FIELD CONDITION rules; take --engine jvm (or "
                "python) for the "
                "others.",
            ) from err
        places = [_place(domain, c.rule) for c in compiled]
        out[wid] = WriterRules(version.text, compiled, places)
    return out


def _place(domain: tuple[Rule, ...] | list[Rule], rule: Rule) -> int:
    return next(i for i, r in enumerate(domain) if r is rule)


def contract_of(rule_set: Mapping[str, Any], metadata: Mapping[str, Any], where: str) -> Contract:
    return parse_contract(json.dumps({"ruleSet": rule_set, "metadata": metadata}), where)


def read_with_spark(
    spark: SparkSession,
    bootstrap: str,
    topic: str,
    tallies: list[PartitionTally],
    rules: Mapping[int, WriterRules],
    *,
    n_rules: int,
    examples: int,
    kafka_options: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The tallies of the other roads (``jvmscan.answer``'s shape), computed by Spark."""
    from pyspark.sql import functions as F

    from spark_avro.decode import ERROR_COLUMN, decode_confluent, header_schema_id

    wanted = [t for t in tallies if t.end > t.start]
    answer: dict[str, Any] = {
        "partitions": {t.partition: (0, True) for t in tallies},
        "null": 0,
        "unframed": 0,
        "unknown": {},
        "writers": {},
    }
    if not wanted:
        return answer
    start = {topic: {str(t.partition): t.start for t in wanted}}
    end = {topic: {str(t.partition): t.end for t in wanted}}
    raw = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .options(**{f"kafka.{k}": v for k, v in (kafka_options or {}).items()})
        .option("assign", json.dumps({topic: [t.partition for t in wanted]}))
        .option("startingOffsets", json.dumps(start))
        .option("endingOffsets", json.dumps(end))
        .load()
        .select("partition", "offset", "value")
    )
    framed = raw.select(
        "partition", "offset", "value", header_schema_id(F.col("value")).alias("_id")
    ).cache()
    try:
        heads = framed.groupBy("partition").agg(
            F.count(F.lit(1)).alias("n"),
            F.sum(F.when(F.col("value").isNull(), 1).otherwise(0)).alias("nulls"),
            F.sum(F.when(F.col("value").isNotNull() & F.col("_id").isNull(), 1).otherwise(0))
            .alias("unframed"),
        )  # fmt: skip
        for row in heads.collect():
            answer["partitions"][row["partition"]] = (row["n"], True)
            answer["null"] += row["nulls"]
            answer["unframed"] += row["unframed"]
        ids = framed.where(F.col("_id").isNotNull()).groupBy("_id").count().collect()
        for row in ids:
            if row["_id"] not in rules:
                answer["unknown"][row["_id"]] = row["count"]
        for wid in sorted(r["_id"] for r in ids if r["_id"] in rules):
            answer["writers"][wid] = _writer(
                decode_confluent,
                framed.where(F.col("_id") == wid).drop("_id"),
                wid,
                rules[wid],
                ERROR_COLUMN,
                n_rules,
                examples,
            )
    finally:
        framed.unpersist()
    return answer


def _writer(
    decode: Any,
    rows: DataFrame,
    wid: int,
    rules: WriterRules,
    error_column: str,
    n_rules: int,
    examples: int,
) -> dict[str, Any]:
    from pyspark.sql import functions as F

    decoded = decode(rows, writer_schemas={wid: rules.schema}, reader_schema=rules.schema)
    columns = [f"_r{i}" for i in range(len(rules.compiled))]
    staged = decoded.select(
        "partition",
        "offset",
        F.col(error_column).alias("_error"),
        *(
            F.when(F.col(error_column).isNull(), F.expr(c.code)).alias(name)
            for c, name in zip(rules.compiled, columns, strict=True)
        ),
    ).cache()
    try:

        def count(condition: Any, alias: str) -> Any:
            return F.sum(F.when(condition, 1).otherwise(0)).alias(alias)

        sums = [F.count(F.lit(1)).alias("records"), count(F.col("_error").isNotNull(), "bad")]
        for name in columns:
            for code, what in ((0, "pass"), (1, "fail"), (2, "error")):
                sums.append(count(F.col(name) == code, f"{name}_{what}"))
        totals = staged.agg(*sums).first()
        assert totals is not None
        records, bad = totals["records"], totals["bad"] or 0
        out: dict[str, Any] = {
            "records": records,
            "undecodable": bad,
            "undecodable_at": None,
            "decode_error": None,
            "rules": [
                {"pass": 0, "fail": 0, "error": 0, "skipped": records - bad, "failed_at": [],
                 "errored_at": [], "first_error": None}
                for _ in range(n_rules)
            ],
        }  # fmt: skip
        if out["undecodable"]:
            first = (
                staged.where(F.col("_error").isNotNull())
                .orderBy("partition", "offset")
                .select("partition", "offset", "_error")
                .first()
            )
            assert first is not None
            out["undecodable_at"] = (first["partition"], first["offset"])
            out["decode_error"] = str(first["_error"])[:400]
        for name, place in zip(columns, rules.places, strict=True):
            tally = out["rules"][place]
            tally.update(
                {
                    "pass": totals[f"{name}_pass"] or 0,
                    "fail": totals[f"{name}_fail"] or 0,
                    "error": totals[f"{name}_error"] or 0,
                    "skipped": 0,
                }
            )
            for code, what, key in ((1, "fail", "failed_at"), (2, "error", "errored_at")):
                if tally[what]:
                    at = (
                        staged.where(F.col(name) == code)
                        .orderBy("partition", "offset")
                        .select("partition", "offset")
                        .limit(examples)
                        .collect()
                    )
                    tally[key] = [(r["partition"], r["offset"]) for r in at]
            if tally["error"]:
                tally["first_error"] = FIRST_ERROR
        return out
    finally:
        staged.unpersist()


def session(master: str) -> SparkSession:
    """A Spark session for ``--engine spark`` (spark-avro and spark-sql-kafka: the jars of
    $SCHEMACLI_SPARK_JARS, else Maven's)."""
    return local_spark("schemacli-topics-check", master=master, kafka=True)
