"""The rule stage: a decoded PERMISSIVE frame with a contract's compiled rules applied, a record
one of them refuses turned into a bad record of kind ``rule`` (docs/spark.md#data-quality-rules).

The stage works on a plain table, one row of Spark SQL strings per acting rule (its action is
not NONE), in the order the serde runs them: the rule's code (``0`` pass, ``1`` fail, ``2``
error), the reason a failure gives and the one an error gives (SQL string literals: ``rule
<name> failed: ...`` / ``errored: ...``) and its DLQ topic (a SQL string literal, or a typed
NULL). ``spark_avro.rules.rule_table`` builds it from the compiled CEL; ``read_topic(rules=)``,
``stream_topic(rules=)`` and the readers ``schemacli spark codegen --rules`` writes (which embed
the table) run this very code.

Like ``decode.py``, the part after the ``codegen: begin`` marker is copied into generated
readers, so it uses only pyspark, the standard library and ``decode.py``'s names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from spark_avro.decode import ERROR_COLUMN, KIND_COLUMN, RAW_COLUMN, TOMBSTONE_COLUMN

# --- codegen: begin ---
RULE_KIND = "rule"  # decode_error_kind of a record a rule refuses
DLQ_COLUMN = "rule_dlq_topic"  # the DLQ topic the refusing rule names (null otherwise)
VALUE_COLUMN = "_schemacli_value"  # the raw value carried through decode for rule failures
# One acting rule, as Spark SQL: (code: 0 pass, 1 fail, 2 error; the reason if it fails; the
# reason if it errors; its DLQ topic or a typed NULL).
RuleRow = tuple[str, str, str, str]


def _own_stage() -> Column:
    """``decode_error IS NULL AND NOT is_tombstone`` (a record the rules judge), its branch for
    a bad record written as ``exists()`` (false; never evaluated for a good record): Spark runs
    a projection holding a higher-order function without whole-stage code generation, so the
    projection holding it and the rules' codes leaves the decode's generated method (a plan
    boundary that costs no shuffle). With the codes inside it, 20 rules grew that method past
    8,000 bytes of bytecode, the size above which HotSpot never compiles a method
    (HugeMethodLimit): the whole read, decoding included, ran in the bytecode interpreter. Out
    of it, Spark splits the codes' projection into small methods (bench/README.md, issue #40)."""
    return F.expr(
        f"CASE WHEN {ERROR_COLUMN} IS NULL THEN NOT {TOMBSTONE_COLUMN} "
        f"ELSE exists(array({TOMBSTONE_COLUMN}), t -> FALSE) END"
    )


def apply_rules(decoded: DataFrame, rules: Sequence[RuleRow]) -> DataFrame:
    """A decoded PERMISSIVE frame (carrying ``_schemacli_value``) with the rules applied: a good
    record one of them refuses gets ``decode_error`` (the first refusing rule's reason),
    ``decode_error_kind`` ``rule``, ``raw_value`` (the carried value) and ``rule_dlq_topic``;
    the carried column is dropped. Pure DataFrame -> DataFrame."""
    if not rules:
        return decoded.withColumn(DLQ_COLUMN, F.lit(None).cast("string")).drop(VALUE_COLUMN)
    # Each acting rule's code once, in its own column (Spark does not fold a projection whose
    # costly expressions the next one reads twice); then the first refusing rule's place as one
    # int, and its reason and DLQ topic read from constant arrays by that place.
    codes = [f"_rule_{i}" for i in range(len(rules))]
    with_codes = decoded.select(
        "*",
        *(F.expr(row[0]).alias(n) for row, n in zip(rules, codes, strict=True)),
        _own_stage().alias("_rule_good"),
    )
    first = " ".join(f"WHEN `{n}` > 0 THEN {2 * i} + `{n}`" for i, n in enumerate(codes))
    reasons = [reason for _, failed, errored, _ in rules for reason in (failed, errored)]
    topics = [topic for *_, topic in rules]
    at = F.when(F.col("_rule_good"), F.expr(f"CASE {first} END"))
    staged = with_codes.select("*", at.alias("_rule_at")).drop(*codes, "_rule_good")
    place = F.col("_rule_at")
    refused = place.isNotNull()
    # element_at is asked only where a rule refused: Spark's generated code for element_at
    # over a constant array reads a null index as the last element (a good record got the
    # last reason)
    reason = F.when(refused, F.element_at(F.expr(f"array({', '.join(reasons)})"), place))
    topic = F.element_at(
        F.expr(f"array({', '.join(topics)})"), F.floor((place + 1) / 2).cast("int")
    )
    return staged.select(
        *[
            c
            for c in staged.columns
            if c not in (ERROR_COLUMN, KIND_COLUMN, RAW_COLUMN, "_rule_at", VALUE_COLUMN)
        ],
        F.coalesce(F.col(ERROR_COLUMN), reason).alias(ERROR_COLUMN),
        F.when(refused, F.lit(RULE_KIND)).otherwise(F.col(KIND_COLUMN)).alias(KIND_COLUMN),
        F.when(refused, F.col(VALUE_COLUMN)).otherwise(F.col(RAW_COLUMN)).alias(RAW_COLUMN),
        F.when(refused, topic).alias(DLQ_COLUMN),
    )


def decode_with_rules(
    raw: DataFrame,
    decode: Callable[[DataFrame, tuple[str, ...]], DataFrame],
    rules: Sequence[RuleRow],
) -> DataFrame:
    """``decode(frame, passthrough)`` (a PERMISSIVE decode) with the raw value carried through,
    then the rules applied: a pure DataFrame -> DataFrame stage after decoding."""
    carried = raw.withColumn(VALUE_COLUMN, raw["value"])
    return apply_rules(decode(carried, (VALUE_COLUMN,)), rules)
