"""The v1 subject's data-quality rules on what the converter writes (a stage of its own).

The converter publishes v1 records that v1's producers never wrote, so it does to each converted
record what a v1 producer's serializer does before it writes: v1's WRITE rules (its CEL domain
rules, docs/rules.md), in the serde's order, compiled to Spark SQL by ``spark_avro.rules`` (no
Python on the data path). A CONDITION that refuses the record, or a CEL_FIELD TRANSFORM that
errs, makes it a dead letter: ``error`` ``rule <name> failed|errored: ...``, ``error_stage``
``rule``; a rule whose action is NONE does not refuse (as in the serializer), and a DLQ action is
the converter's dead letter too. A CEL_FIELD TRANSFORM (masking a PII-tagged field) replaces the
values of the fields its tags select in what is written, each rule reading what the ones before
it left: the very stage ``read_topic(rules=)`` runs (``spark_avro.rulestage.rule_codes`` over
``spark_avro.rules.rule_table``), on the ``v1`` struct column.

The rule set is the one registered with the v1 schema (``RegistryPlan.target_rules``, fetched
with the v1 id). With rules, the fast road (which never builds Spark rows) is not taken; with
CONDITIONs alone the stage is one projection (``refusal_sql``), as before transforms were taken.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from converters.pipeline.transform import ERROR, STAGE, V1
from schemacli.contracts.avro.loader import load_schema_text
from schemacli.contracts.rules.model import parse_contract
from spark_avro.rules import CompiledRule, compile_rules, refusal_sql, rule_table

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from spark_avro.rulestage import RuleRow

RULE_STAGE = "rule"


def contract_text(
    metadata: Mapping[str, Any] | None, rule_set: Mapping[str, Any] | None
) -> str | None:
    """The v1 version's contract as JSON text, when its rule set has domain rules."""
    if not rule_set or not rule_set.get("domainRules"):
        return None
    return json.dumps({"metadata": dict(metadata or {}), "ruleSet": dict(rule_set)}, indent=2)


def compile_v1_rules(
    target_rules: str | None, target_schema: str, subject: str
) -> list[CompiledRule]:
    """v1's WRITE CONDITIONs and CEL_FIELD TRANSFORMs compiled over the converted record (the
    ``v1`` struct column), in the serde's order; RulesNotCompiled naming the first rule without
    a SQL form (a CEL TRANSFORM, a transform of a field of another type, ...: exit 2, the job
    refuses to start)."""
    if target_rules is None:
        return []
    contract = parse_contract(target_rules, f"{subject} (the v1 rule set)")
    schema = load_schema_text(target_schema, f"{subject} (v1)").schema
    return compile_rules(contract, schema, "WRITE", root=f"`{V1}`", transforms=True)


def apply_v1_rules(converted: DataFrame, rules: Sequence[CompiledRule]) -> DataFrame:
    """``converted`` (``pipeline.transform.convert_rows``'s columns) with v1's TRANSFORMs
    applied to every converted record and every one a v1 rule refuses turned into a failed one
    (``error``, ``error_stage`` = rule, no ``v1``). Pure DataFrame -> DataFrame; the identity
    without rules."""
    if not rules:
        return converted
    if any(not c.rule.is_condition for c in rules):
        return _with_transforms(converted, rule_table(rules))
    from pyspark.sql import functions as F

    reason_sql, _ = refusal_sql(rules)
    reason = F.when(F.col(ERROR).isNull() & F.col(V1).isNotNull(), F.expr(reason_sql))
    staged = converted.withColumn("_v1_rule", reason)
    refused = F.col("_v1_rule").isNotNull()
    return (
        staged.withColumn(V1, F.when(refused, F.lit(None)).otherwise(F.col(V1)))
        .withColumn(ERROR, F.coalesce(F.col(ERROR), F.col("_v1_rule")))
        .withColumn(STAGE, F.when(refused, F.lit(RULE_STAGE)).otherwise(F.col(STAGE)))
        .drop("_v1_rule")
    )


def _with_transforms(converted: DataFrame, table: Sequence[RuleRow]) -> DataFrame:
    """The rule stage of the readers over the ``v1`` column: the rules judge a record the
    mapping converted (``error`` null, no tombstone), as the readers' stage judges a record that
    decoded; the first refusing rule's reason becomes the dead letter's."""
    from pyspark.sql import functions as F

    from spark_avro.decode import ERROR_COLUMN, TOMBSTONE_COLUMN
    from spark_avro.rulestage import AT_COLUMN, refusal, rule_codes

    columns = converted.columns
    tombstone = [] if TOMBSTONE_COLUMN in columns else [F.lit(False).alias(TOMBSTONE_COLUMN)]
    judged = converted.select("*", F.col(ERROR).alias(ERROR_COLUMN), *tombstone)
    coded = rule_codes(judged, table)
    reason, _ = refusal(table)  # a DLQ action is the converter's dead letter, not a topic
    refused = F.col(AT_COLUMN).isNotNull()
    out = {
        V1: F.when(~refused, F.col(V1)),
        ERROR: F.coalesce(F.col(ERROR), reason),
        STAGE: F.when(refused, F.lit(RULE_STAGE)).otherwise(F.col(STAGE)),
    }
    return coded.select(*[out[c].alias(c) if c in out else F.col(c) for c in columns])
