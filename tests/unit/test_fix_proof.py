"""The proof of a suggested fix (contracts/fixes/proof.py): two roads that must agree, a cost
that follows the change, and fixes that are proven but would still be wrong refused.

tests/oracle/test_fix_differential.py proves the kept fixes again with Apache Avro Java,
fastavro and the avro package; these tests need none of them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from schemacli.contracts.avro.canonical import canonical_form
from schemacli.contracts.avro.loader import LoadedSchema, load_schema_text
from schemacli.contracts.evolution.check import check_candidate
from schemacli.contracts.evolution.levels import BACKWARD, Level
from schemacli.contracts.fixes import proof as proof_module
from schemacli.contracts.fixes.edits import Applicability, apply_edits
from schemacli.contracts.fixes.fixing import fix_candidate
from schemacli.contracts.fixes.planners import plans_for
from schemacli.contracts.fixes.plans import locate
from schemacli.contracts.fixes.proof import Budget, Proof
from schemacli.contracts.fixes.suggest import Candidate, FixContext, _candidate, _edits
from schemacli.errors import SchemacliError
from schemacli.kinds import Kind
from tests.oracle.generator import Generator, named_pairs, pairs

LEVELS = (Level.BACKWARD, Level.FORWARD, Level.FULL)
TRANSITIVE = (Level.BACKWARD_TRANSITIVE, Level.FORWARD_TRANSITIVE, Level.FULL_TRANSITIVE)


def text(value) -> str:
    return json.dumps(value, indent=2) + "\n"


def record(*fields, name="R", **extra):
    return {"type": "record", "name": name, "fields": list(fields), **extra}


def loaded(old_values, new_value) -> tuple[list[LoadedSchema], LoadedSchema]:
    history = [
        load_schema_text(text(v), f"v{i}.avsc", version=i) for i, v in enumerate(old_values, 1)
    ]
    return history, load_schema_text(text(new_value), "new.avsc")


def _wide_with_aliases() -> Iterator[tuple[list, dict]]:
    """Wide records whose fields are renamed with aliases, given defaults, changed in type,
    with a named type shared by some fields: the field road's hard cases."""
    enum = {"type": "enum", "name": "E", "symbols": ["A", "B"]}
    old = record(
        {"name": "a", "type": "long"},
        {"name": "b", "type": "int", "aliases": ["bb"]},
        {"name": "c", "type": enum},
        {"name": "d", "type": "E"},
        {"name": "e", "type": ["null", "string"], "default": None},
        {"name": "f", "type": {"type": "array", "items": "int"}},
        name="Wide",
    )
    new = record(
        {"name": "a", "type": "string"},
        {"name": "bb", "type": "long", "aliases": ["b", "x"]},
        {"name": "c", "type": dict(enum, symbols=["A"])},
        {"name": "d", "type": "E"},
        {"name": "e2", "type": "string", "aliases": ["e"]},
        {"name": "f", "type": {"type": "map", "values": "int"}},
        {"name": "x", "type": "boolean"},
        name="Wide",
    )
    yield [old], new
    yield [new], old
    yield [old, new], dict(old, fields=old["fields"][:3])


PLAIN = ["int", "long", "float", "double", "string", "bytes", "boolean"]


def _plain_pairs(seed: int, count: int) -> Iterator[tuple[dict, dict]]:
    """Records of plain fields (primitives, unions, arrays and maps of them) and a mutation:
    types changed, fields renamed with aliases (sometimes two, so a reader field matches two
    writer fields), added with and without defaults, removed, and a shared enum here and there."""
    import random

    rng = random.Random(seed)

    def plain() -> object:
        roll = rng.random()
        if roll < 0.6:
            return rng.choice(PLAIN)
        if roll < 0.8:
            return ["null", rng.choice(PLAIN)]
        kind = rng.choice(["array", "map"])
        return {"type": kind, ("items" if kind == "array" else "values"): rng.choice(PLAIN)}

    for _ in range(count):
        fields = [{"name": f"f{i}", "type": plain()} for i in range(rng.randint(2, 7))]
        if rng.random() < 0.3:
            fields.append(
                {"name": "kind", "type": {"type": "enum", "name": "K", "symbols": ["A", "B"]}}
            )
            fields.append({"name": "kind2", "type": "K"})
        old = record(*fields, name="P")
        new = json.loads(json.dumps(old))
        for f in new["fields"]:
            roll = rng.random()
            if f["name"].startswith("kind"):
                continue
            if roll < 0.25:
                f["type"] = plain()
            elif roll < 0.4:
                f["aliases"] = [f["name"]]
                f["name"] = f["name"] + "x"
            elif roll < 0.45:
                other = rng.choice(new["fields"])["name"]
                f["aliases"] = [other, f["name"] + "y"]
        if rng.random() < 0.5:
            extra = {"name": "added", "type": plain()}
            if rng.random() < 0.5 and isinstance(extra["type"], list):
                extra["default"] = None
            new["fields"].append(extra)
        if rng.random() < 0.3 and len(new["fields"]) > 2:
            del new["fields"][rng.randrange(len(new["fields"]))]
        yield old, new


def _corpus() -> Iterator[tuple[str, list, dict, tuple[Level, ...]]]:
    for n, (a, b) in enumerate(_plain_pairs(20251124, 250)):
        yield f"plain {n}", [a], b, LEVELS
    for n, (history, candidate) in enumerate(_wide_with_aliases()):
        yield f"wide {n}", history, candidate, LEVELS if len(history) == 1 else TRANSITIVE
    for n, (a, b) in enumerate(pairs(20251122, 300)):
        yield f"pair {n}", [a], b, LEVELS
    for n, (a, b) in enumerate(named_pairs(20251122, 150)):
        yield f"named {n}", [a], b, LEVELS
    gen = Generator(20251123)
    for n in range(30):
        a = gen.schema()
        b = gen.mutate(a)
        yield f"triple {n}", [a, b], gen.mutate(b), TRANSITIVE


def test_the_field_road_and_the_whole_road_prove_the_same_plans():
    compared = by_fields = 0
    for name, old_values, new_value, levels in _corpus():
        try:
            history, candidate = loaded(old_values, new_value)
        except SchemacliError:
            continue  # a generated schema Java refuses too
        shared = Candidate(candidate)
        fast, whole = Proof(shared), Proof(shared, field_road=False)
        for level in levels:
            ctx = FixContext(candidate, history, level)
            for index, direction in ctx.comparisons:
                keys, _ = fast.before(history[index], direction)
                for kind, pointer in keys:
                    backward = direction == BACKWARD
                    old = history[index].schema
                    reader, writer = (
                        (candidate.schema, old) if backward else (old, candidate.schema)
                    )
                    site = locate(reader, writer, pointer)
                    if site is None:
                        continue
                    for plan in plans_for(shared, Kind(kind), backward, site):
                        if plan.applicability is Applicability.DISPLAY:
                            continue
                        try:
                            edits = _edits(shared.editor, plan.ops)
                        except (KeyError, IndexError, TypeError, ValueError, SchemacliError):
                            continue
                        key = (index, direction, kind, pointer)
                        unbounded = Budget(0, 0, left=10**12)
                        answers = [
                            proof.prove(ctx.comparisons, history, unbounded, plan.ops, edits, key)
                            for proof in (fast, whole)
                        ]
                        assert answers[0] == answers[1], (name, level, key, plan.title, answers)
                        compared += 1
        by_fields += len([p for p in fast._plans.values() if p.whole is False])
    assert compared > 4000
    assert by_fields > 1000, "the corpus must send plans down the field road"


def _wide(fields: int, changed: int) -> tuple[list[LoadedSchema], LoadedSchema]:
    old = record(*({"name": f"f{i}", "type": "long"} for i in range(fields)), name="Wide")
    new = json.loads(json.dumps(old))
    for i in range(changed):
        new["fields"][i]["type"] = "string"
    return loaded([old], new)


def _proving_cost(fields: int, changed: int) -> tuple[int, int, int]:
    """(units of proving spent, whole re-parses, findings) of a FULL check."""
    history, candidate = _wide(fields, changed)
    ctx_budgets: list[Budget] = []
    real_init = FixContext.__init__

    def spy(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        ctx_budgets.append(self.budget)

    FixContext.__init__ = spy  # type: ignore[method-assign]
    try:
        report = check_candidate(candidate, history, subject="s", level=Level.FULL)
    finally:
        FixContext.__init__ = real_init  # type: ignore[method-assign]
    (budget,) = ctx_budgets
    start = Budget(fields, 2).left
    shared = _candidate(candidate)  # the one the check used
    assert shared.proof._plans, "the check proved plans"
    reparsed = sum(1 for plan in shared.proof._plans.values() if plan.whole is not False)
    return start - budget.left, reparsed, len(report.findings)


def test_a_wide_change_is_proven_field_by_field_at_a_cost_linear_in_the_findings():
    small_cost, small_whole, small_findings = _proving_cost(200, 100)
    big_cost, big_whole, big_findings = _proving_cost(800, 400)
    assert (small_findings, big_findings) == (200, 800)
    assert small_whole == big_whole == 0  # no plan re-parsed or re-checked the whole schema
    assert big_cost <= 4.5 * small_cost  # 4x the findings: about 4x the work, not 16x


def test_ten_changed_fields_of_ten_thousand_cost_what_ten_fields_cost():
    cost, whole, findings = _proving_cost(10_000, 10)
    assert findings == 20 and whole == 0
    assert cost < 200  # units: fields looked at, whatever the record's width


def test_fixes_past_the_bound_say_they_were_not_proven_and_check_fix_still_gets_there(
    monkeypatch,
):
    monkeypatch.setattr(proof_module, "BUDGET_PER_FIELD", 0)
    monkeypatch.setattr(proof_module, "BUDGET_FLOOR", 30)  # two whole re-checks of 7 fields
    enum = {"type": "enum", "name": "E", "symbols": ["A", "B"]}
    old = record(*({"name": f"e{i}", "type": dict(enum, name=f"E{i}")} for i in range(6)))
    new = record(
        *({"name": f"e{i}", "type": dict(enum, name=f"E{i}", symbols=["A"])} for i in range(6))
    )
    history, candidate = loaded([old], new)
    report = check_candidate(candidate, history, subject="s", level=Level.BACKWARD)
    unproven = [f for f in report.findings if f.fixes[0].title.startswith("Not proven here")]
    assert unproven and len(unproven) < len(report.findings)
    assert all(not f.fixes[0].applies for f in unproven)
    fixed = fix_candidate(candidate, history, subject="s", level=Level.BACKWARD)
    assert fixed.report.compatible and fixed.passes > 1


# -- fixes that the engine and Java accept but that are still wrong ---------------------------


MONEY_OLD = {
    "type": "record",
    "name": "Order",
    "namespace": "com.example.shop",
    "fields": [
        {"name": "discount", "type": {"type": "fixed", "name": "Money", "size": 8}},
        {"name": "total", "type": "Money"},
    ],
}
MONEY_NEW = {
    "type": "record",
    "name": "Order",
    "namespace": "com.example.shop",
    "fields": [
        {
            "name": "inner",
            "type": {
                "type": "record",
                "name": "Inner",
                "namespace": "",
                "fields": [{"name": "m", "type": {"type": "fixed", "name": "Money", "size": 8}}],
            },
        },
        {"name": "discount", "type": "string"},
        {"name": "total", "type": "Money"},  # the null-namespace Money, by Java's fallback
    ],
}


@pytest.mark.parametrize("level", [Level.BACKWARD, Level.FULL])
def test_a_fix_that_would_change_a_field_it_does_not_touch_is_not_offered(level):
    history, candidate = loaded([MONEY_OLD], MONEY_NEW)
    total = canonical_form(candidate.schema.fields[2].type)
    report = check_candidate(candidate, history, subject="s", level=level)
    offered = [fix for f in report.findings for fix in f.fixes if fix.applies]
    assert offered  # the new field 'inner' still gets its default
    for fix in offered:
        after = load_schema_text(apply_edits(candidate.document.text, fix.edits), "fixed.avsc")
        (now,) = [f for f in after.schema.fields if f.name == "total"]
        assert canonical_form(now.type) == total, fix.title
    mismatch = next(f for f in report.findings if f.kind == Kind.TYPE_MISMATCH)
    assert [fix.applicability for fix in mismatch.fixes] == [Applicability.DISPLAY]


def test_a_fix_refers_to_a_named_type_the_file_defines_instead_of_defining_it_again():
    fixed = {"type": "fixed", "name": "F", "namespace": "other.ns", "size": 8}
    old = record({"name": "count", "type": fixed}, name="other.ns.R")
    new = record(
        {"name": "count", "type": fixed},
        {"name": "flag", "type": "string", "default": "x", "aliases": ["count"]},
        name="other.ns.R",
    )
    history, candidate = loaded([old], new)
    report = check_candidate(candidate, history, subject="s", level=Level.BACKWARD)
    (finding,) = report.findings
    titles = [fix.title for fix in finding.fixes]
    assert len(titles) == len(set(titles))  # two fixes of one finding never share a title
    revert = next(fix for fix in finding.fixes if fix.title.startswith("Keep the earlier type"))
    value = json.loads(apply_edits(candidate.document.text, revert.edits))
    assert value["fields"][1]["type"] == "other.ns.F"  # by name: defined once, above
    assert "default" not in value["fields"][1]  # the string default went with the string type


def test_no_fix_adds_what_fastavro_or_the_avro_package_refuse():
    # the earlier version's decimal is one Java ignores and fastavro refuses: restoring the
    # removed field as it was would bring it into the candidate
    bad = {"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 5}
    old = record({"name": "a", "type": "int"}, {"name": "payload", "type": bad})
    new = record({"name": "a", "type": "int"})
    history, candidate = loaded([old], new)
    report = check_candidate(candidate, history, subject="s", level=Level.FORWARD)
    (finding,) = report.findings
    assert not any(fix.applies for fix in finding.fixes)


def test_a_split_field_keeps_null_first_so_its_null_default_fits():
    old = record({"name": "vendor", "type": "int"})
    new = record({"name": "vendor", "type": ["long", "null"]})
    history, candidate = loaded([old], new)
    report = check_candidate(candidate, history, subject="s", level=Level.FORWARD)
    split = next(
        fix for f in report.findings for fix in f.fixes if fix.title.startswith("Keep field")
    )
    value = json.loads(apply_edits(candidate.document.text, split.edits))
    assert value["fields"][1] == {"name": "vendor_long", "type": ["null", "long"], "default": None}


def test_check_fix_repeats_until_nothing_more_applies_beyond_ten_passes():
    # Twelve earlier names, one alias each: the fixes add one member to one object, so they
    # go one a pass (written together they would repeat the key "aliases").
    versions = [record({"name": "a", "type": "int"}, name=f"R{i}") for i in range(1, 13)]
    history, candidate = loaded(versions, record({"name": "a", "type": "int"}, name="R13"))
    fixed = fix_candidate(candidate, history, subject="s", level=Level.BACKWARD_TRANSITIVE)
    assert fixed.passes == 12 and len(fixed.applied) == 12
    assert fixed.report.compatible and fixed.dropped == ()
    value = json.loads(fixed.text)
    assert sorted(value["aliases"]) == sorted(f"R{i}" for i in range(1, 13))
    assert fixed.text.count('"aliases"') == 1


def test_fixes_that_do_not_go_together_are_dropped_one_by_one_and_the_others_apply():
    old = record({"name": "a", "type": "int"}, {"name": "b", "type": "int"})
    new = record({"name": "a", "type": "int"}, {"name": "b", "type": "int"})
    new["fields"] += [{"name": "n1", "type": "string"}, {"name": "n2", "type": "string"}]
    history, candidate = loaded([old], new)
    report = check_candidate(candidate, history, subject="s", level=Level.BACKWARD)
    assert [f.kind for f in report.findings] == [Kind.READER_FIELD_MISSING_DEFAULT_VALUE] * 2
    # Each default was proven alone; pretend the file refuses the second one's result.
    from schemacli.contracts.fixes import fixing

    real = fixing._refusal

    def refusal(current, text):
        n2 = json.loads(text)["fields"][3]
        return "n2 may not have a default" if "default" in n2 else real(current, text)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fixing, "_refusal", refusal)
        fixed = fix_candidate(candidate, history, subject="s", level=Level.BACKWARD)
    assert [fix.title for fix in fixed.applied] == [report.findings[0].fixes[0].title]
    (dropped,) = fixed.dropped
    assert dropped.fix.title.startswith("Give field 'n2'") and "n2 may not" in dropped.reason
    assert not fixed.report.compatible


def _shapes_repeated(seed: int, count: int) -> Iterator[tuple[list, dict, tuple[Level, ...]]]:
    """Wide records whose fields repeat a few shapes (what one verdict per shape serves), with
    what must keep a field out of it: aliases (its own, another field's naming it), a
    non-ASCII name, a named type, a default validate warns about, a name that a field split
    would take (``<name>_string``), a field missing from a version, and two versions."""
    import random

    rng = random.Random(seed)
    shapes = ["long", "long", "int", ["null", "long"], {"type": "array", "items": "int"}]
    for n in range(count):
        old_fields: list[dict] = []
        for i in range(rng.randint(10, 40)):
            f: dict = {"name": f"f{i}", "type": rng.choice(shapes)}
            if rng.random() < 0.1:
                f["default"] = 0 if f["type"] in ("long", "int", "float") else None
            old_fields.append(f)
        if rng.random() < 0.5:
            old_fields.append({"name": "f1_string", "type": "string"})
        if rng.random() < 0.3:
            old_fields.append({"name": "g", "type": "long", "aliases": ["f2"]})
        if rng.random() < 0.3:
            old_fields.append({"name": "f\u00e9", "type": "long"})
        if rng.random() < 0.3:
            enum = {"type": "enum", "name": "E", "symbols": ["A", "B"]}
            old_fields.append({"name": "e", "type": enum})
        old = record(*old_fields, name="Wide")
        new = json.loads(json.dumps(old))
        for f in new["fields"]:
            roll = rng.random()
            if roll < 0.5 and f["name"] != "e":
                f["type"] = rng.choice(["string", "string", "int", ["null", "string"]])
                f.pop("default", None)
            elif roll < 0.55:
                f["aliases"] = ["zz"]
            elif roll < 0.6 and f["type"] in ("long", "int"):
                f["default"] = "x"  # validate warns: a default of another type
        if rng.random() < 0.3:
            del new["fields"][rng.randrange(len(new["fields"]))]
        if n % 4 == 3:
            middle = json.loads(json.dumps(new))
            yield [old, middle], dict(new, fields=new["fields"][::-1]), TRANSITIVE
        else:
            yield [old], new, LEVELS


def _every_plan(history, candidate, levels, proofs):
    """(name of the answer, each proof's verdict) for every plan of every finding."""
    shared = Candidate(candidate)
    made = [make(shared) for make in proofs]
    for level in levels:
        ctx = FixContext(candidate, history, level)
        for index, direction in ctx.comparisons:
            keys, _ = made[0].before(history[index], direction)
            backward = direction == BACKWARD
            old = history[index].schema
            reader, writer = (candidate.schema, old) if backward else (old, candidate.schema)
            for kind, pointer in keys:
                site = locate(reader, writer, pointer)
                if site is None:
                    continue
                for plan in plans_for(shared, Kind(kind), backward, site):
                    if plan.applicability is Applicability.DISPLAY:
                        continue
                    try:
                        edits = _edits(shared.editor, plan.ops)
                    except (KeyError, IndexError, TypeError, ValueError, SchemacliError):
                        continue
                    key = (index, direction, kind, pointer)
                    unbounded = Budget(0, 0, left=10**12)
                    yield (
                        (level, key, plan.title),
                        [
                            p.prove(ctx.comparisons, history, unbounded, plan.ops, edits, key)
                            for p in made
                        ],
                    )


def test_a_verdict_shared_by_the_fields_of_one_shape_is_the_one_proven_plan_by_plan():
    compared = shared_answers = 0
    corpus = [(h, c, levels) for _, h, c, levels in _corpus()]
    corpus += list(_shapes_repeated(20261128, 60))
    for old_values, new_value, levels in corpus:
        try:
            history, candidate = loaded(old_values, new_value)
        except SchemacliError:
            continue
        by_shape = [lambda c: Proof(c), lambda c: Proof(c, by_shape=False)]
        for what, (shared, alone) in _every_plan(history, candidate, levels, by_shape):
            assert shared == alone, what
            compared += 1
    # how often a verdict was found for another field of its shape and reused
    history, candidate = _wide(60, 60)
    proof = Proof(Candidate(candidate))
    planned = sum(1 for _ in _every_plan(history, candidate, LEVELS, [lambda c: proof]))
    assert planned > 0  # every plan of the wide change proven once through one Proof
    shared_answers = sum(1 for _ in proof._by_shape)
    assert compared > 6000
    assert 0 < shared_answers < 60, "the wide change's fields share their verdicts by shape"


def test_a_verdict_shared_by_shape_is_kept_apart_for_each_compared_version_it_was_for():
    # one candidate proven against the same two versions given in either order: the finding's
    # version is history[0] both times, which is X the first time and Y the second
    was_long = load_schema_text(text(record({"name": "f", "type": "long"})), "x.avsc", version=1)
    was_bool = load_schema_text(text(record({"name": "f", "type": "boolean"})), "y.avsc", version=2)
    candidate = load_schema_text(text(record({"name": "f", "type": "string"})), "new.avsc")
    shared = Candidate(candidate)
    ops = (("replace", "/fields/0/type", "long"),)  # mends X, leaves Y's mismatch as it was
    edits = _edits(shared.editor, ops)
    key = (0, BACKWARD, Kind.TYPE_MISMATCH.value, "/fields/0/type")
    orders = [
        ([was_long, was_bool], [(0, BACKWARD), (1, BACKWARD)]),
        ([was_bool, was_long], [(1, BACKWARD), (0, BACKWARD)]),
    ]
    for by_shape in (True, False):
        proof = Proof(shared, by_shape=by_shape)
        answers = [
            proof.prove(comparisons, history, Budget(0, 0, left=10**6), ops, edits, key).value
            for history, comparisons in orders
        ]
        assert answers == ["proven", "refuted"], by_shape
