"""The rule stage: a decoded PERMISSIVE frame with a contract's compiled rules applied, a record
one of them refuses turned into a bad record of kind ``rule`` (docs/spark.md#data-quality-rules).

The stage works on a plain table, one row of Spark SQL strings per rule a deserializer acts on
(a CONDITION whose onFailure is not NONE, and every TRANSFORM), in the order the serde runs
them: the rule's code (``0`` pass, ``1`` fail, ``2`` error), the reason a failure gives and the
one an error gives (SQL string literals: ``rule <name> failed: ...`` / ``errored: ...``), its
DLQ topic (a SQL string literal, or a typed NULL), whether its failure is acted on, and a
TRANSFORM's new value of each column it replaces. Each rule reads the record the rules before it
left (a TRANSFORM that passes replaces its columns; one that errs leaves them as they were); a
record a rule refuses is not transformed further. ``spark_avro.rules.rule_table`` builds the
table from the compiled CEL; ``read_topic(rules=)``, ``stream_topic(rules=)`` and the readers
``schemacli spark codegen --rules`` writes (which embed the table) run this very code.

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
GOOD_COLUMN = "_rule_good"  # the record is one the rules judge (decoded, not a tombstone)
AT_COLUMN = "_rule_at"  # 2 * place + code of the first rule that refused the record, else null
# One rule as Spark SQL: (code: 0 pass, 1 fail, 2 error; the reason if it fails; the reason
# if it errors; its DLQ topic or a typed NULL; whether its failure is acted on (onFailure is
# not NONE); a TRANSFORM's new value of each column it replaces, {} for a CONDITION).
RuleRow = tuple[str, str, str, str, bool, dict[str, str]]


def code_column(place: int) -> str:
    """The name of the column holding the code of the rule at ``place`` (``rule_codes``)."""
    return f"_rule_{place}"


def _own_stage() -> Column:
    """``decode_error IS NULL AND NOT is_tombstone`` (a record the rules judge), its branch for
    a bad record written as ``exists()`` (false; never evaluated for a good record): Spark runs
    a projection holding a higher-order function without whole-stage code generation, so the
    projection holding it and the rules' codes leaves the decode's generated method (a plan
    boundary that costs no shuffle). With the codes inside it, 20 rules grew that method past
    8,000 bytes of bytecode, the size above which HotSpot never compiles a method
    (HugeMethodLimit): the whole read, decoding included, ran in the bytecode interpreter. Out
    of it, Spark splits the codes' projection into small methods (bench/README.md, issue #40).

    The good branch also holds ``rand(0) * 0 = 0`` (always true; a form Spark's OptimizeRand
    leaves alone): a projection holding a nondeterministic expression is one Spark pushes no
    filter through. Without it, a filter on the result (``split_bad_records``, a ``where`` on
    ``decode_error_kind``) was pushed down to the raw records with every column it names
    written out as the expressions that made it, ``from_avro`` among them hundreds of times:
    each record decoded as often, 20-150x the unfiltered read. Above it, the filter reads the
    rules' codes (tests/spark/test_rules_sql_equals_python.py)."""
    return F.expr(
        f"CASE WHEN {ERROR_COLUMN} IS NULL THEN NOT {TOMBSTONE_COLUMN} AND rand(0) * 0 = 0 "
        f"ELSE exists(array({TOMBSTONE_COLUMN}), t -> FALSE) END"
    )


def _segments(rules: Sequence[RuleRow]) -> list[list[int]]:
    """The rules' places cut after each TRANSFORM: a segment's codes read the same record, so
    they are computed in one projection; the next segment reads the transformed one."""
    out: list[list[int]] = [[]]
    for place, row in enumerate(rules):
        out[-1].append(place)
        if row[5]:
            out.append([])
    return [segment for segment in out if segment]


def rule_codes(decoded: DataFrame, rules: Sequence[RuleRow]) -> DataFrame:
    """The decoded frame with the rules run in order, each on the record the ones before it
    left: each rule's code in its column (``code_column``), ``_rule_good`` and ``_rule_at``
    (2 * place + code of the first rule acted on that refused the record, null when none did).
    A TRANSFORM that passes replaces its columns in a good record no rule refused yet; a
    refused record keeps the values it had when refused. Pure DataFrame -> DataFrame."""
    frame = decoded
    good, at = F.col(GOOD_COLUMN), F.col(AT_COLUMN)
    for number, segment in enumerate(_segments(rules)):
        # Each rule's code once, in its own column (Spark does not fold a projection whose
        # costly expressions the next one reads twice)
        codes = [F.expr(rules[p][0]).alias(code_column(p)) for p in segment]
        frame = frame.select(
            "*", *codes, *([_own_stage().alias(GOOD_COLUMN)] if number == 0 else [])
        )
        first = " ".join(
            f"WHEN `{code_column(p)}` > 0 THEN {2 * p} + `{code_column(p)}`"
            for p in segment
            if rules[p][4]
        )
        refused = F.when(good, F.expr(f"CASE {first} END")) if first else F.lit(None).cast("int")
        frame = frame.select(
            *[c for c in frame.columns if c != AT_COLUMN],
            (refused if number == 0 else F.coalesce(at, refused)).alias(AT_COLUMN),
        )
        replaced = rules[segment[-1]][5]
        if replaced:
            keep = good & at.isNull() & (F.col(code_column(segment[-1])) == 0)
            frame = frame.select(
                *[
                    F.when(keep, F.expr(replaced[c])).otherwise(F.col(c)).alias(c)
                    if c in replaced
                    else F.col(c)
                    for c in frame.columns
                ]
            )
    return frame


def refusal(rules: Sequence[RuleRow]) -> tuple[Column, Column]:
    """(the reason, the DLQ topic) of the first rule that refused a record, read by its place
    in ``_rule_at`` (``rule_codes``) from constant arrays of the table's SQL; both null where no
    rule refused it. ``apply_rules`` and the migration converter's v1 rules use it."""
    reasons = [reason for _, failed, errored, *_ in rules for reason in (failed, errored)]
    topics = [row[3] for row in rules]
    place = F.col(AT_COLUMN)
    refused = place.isNotNull()
    # element_at is asked only where a rule refused: Spark's generated code for element_at
    # over a constant array reads a null index as the last element (a good record got the
    # last reason)
    reason = F.when(refused, F.element_at(F.expr(f"array({', '.join(reasons)})"), place))
    topic = F.element_at(
        F.expr(f"array({', '.join(topics)})"), F.floor((place + 1) / 2).cast("int")
    )
    return reason, F.when(refused, topic)


def apply_rules(decoded: DataFrame, rules: Sequence[RuleRow]) -> DataFrame:
    """A decoded PERMISSIVE frame (carrying ``_schemacli_value``) with the rules applied in
    order: TRANSFORMs replace values, and a good record a rule refuses gets ``decode_error``
    (the first refusing rule's reason), ``decode_error_kind`` ``rule``, ``raw_value`` (the
    carried value) and ``rule_dlq_topic``; the carried column is dropped. Pure DataFrame ->
    DataFrame."""
    if not rules:
        return decoded.withColumn(DLQ_COLUMN, F.lit(None).cast("string")).drop(VALUE_COLUMN)
    staged = rule_codes(decoded, rules)
    staged = staged.drop(*(code_column(p) for p in range(len(rules))), GOOD_COLUMN)
    reason, topic = refusal(rules)
    refused = F.col(AT_COLUMN).isNotNull()
    return staged.select(
        *[
            c
            for c in staged.columns
            if c not in (ERROR_COLUMN, KIND_COLUMN, RAW_COLUMN, AT_COLUMN, VALUE_COLUMN)
        ],
        F.coalesce(F.col(ERROR_COLUMN), reason).alias(ERROR_COLUMN),
        F.when(refused, F.lit(RULE_KIND)).otherwise(F.col(KIND_COLUMN)).alias(KIND_COLUMN),
        F.when(refused, F.col(VALUE_COLUMN)).otherwise(F.col(RAW_COLUMN)).alias(RAW_COLUMN),
        topic.alias(DLQ_COLUMN),
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
