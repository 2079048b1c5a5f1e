"""The v1 subject's data-quality rules on what the converter writes (a stage of its own).

The converter publishes v1 records that v1's producers never wrote; a record that breaks one
of v1's WRITE CONDITIONs (its CEL domain rules, docs/rules.md) would be one a v1 producer's
serializer refuses. So after the mapping's conversion, each converted record is checked against
the v1 version's rule set, compiled to Spark SQL by ``spark_avro.rules`` (no Python on the
data path), and one a rule refuses becomes a dead letter: ``error`` ``rule <name> failed: ...``,
``error_stage`` ``rule``. A rule whose action is NONE does not refuse (as in the serializer).

The rule set is the one registered with the v1 schema (``RegistryPlan.target_rules``, fetched
with the v1 id). With rules, the fast road (which never builds Spark rows) is not taken.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from converters.pipeline.transform import ERROR, STAGE, V1
from schemacli.contracts.avro.loader import load_schema_text
from schemacli.contracts.rules.model import parse_contract
from spark_avro.rules import CompiledRule, compile_rules, refusal_sql

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

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
    """v1's WRITE CONDITIONs compiled over the converted record (the ``v1`` struct column);
    RulesNotCompiled for a rule without a SQL form (the job refuses to start)."""
    if target_rules is None:
        return []
    contract = parse_contract(target_rules, f"{subject} (the v1 rule set)")
    schema = load_schema_text(target_schema, f"{subject} (v1)").schema
    return compile_rules(contract, schema, "WRITE", root=f"`{V1}`")


def apply_v1_rules(converted: DataFrame, rules: Sequence[CompiledRule]) -> DataFrame:
    """``converted`` (``pipeline.transform.convert_rows``'s columns) with every converted
    record a v1 rule refuses turned into a failed one (``error``, ``error_stage`` = rule, no
    ``v1``). Pure DataFrame -> DataFrame; the identity without rules."""
    if not rules:
        return converted
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
