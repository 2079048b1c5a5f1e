"""Unions of many named branches against Apache Avro Java: the engine's index by name must give
Java's verdict and every (kind, location) Java reports, including the locations Java replays
from pairs it memoised while trying union branches."""

from __future__ import annotations

import random
from typing import Any

import pytest

from .test_differential import java_compat, our_compat, report, same

pytestmark = pytest.mark.oracle


def _record(name: str, fields: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"type": "record", "name": name, **extra, "fields": fields}


def _branch(rng: random.Random, name: str, defined: list[str]) -> Any:
    """A named branch: a leaf record, an enum, a fixed, or a record using a defined type."""
    pick = rng.random()
    namespace = rng.choice([None, "a", "b"])
    extra = {"namespace": namespace} if namespace else {}
    if rng.random() < 0.2:
        extra["aliases"] = [rng.choice(["a.", "b.", ""]) + f"N{rng.randrange(12)}"]
    if pick < 0.15:
        return {"type": "enum", "name": name, **extra, "symbols": rng.sample("XYZW", 2)}
    if pick < 0.25:
        return {"type": "fixed", "name": name, **extra, "size": rng.choice([2, 4])}
    fields: list[dict[str, Any]] = [{"name": "x", "type": rng.choice(["int", "long", "string"])}]
    if rng.random() < 0.3:
        fields.append({"name": "y", "type": ["null", "int"], "default": None})
    if defined and rng.random() < 0.25:
        fields.append({"name": "z", "type": rng.choice(defined)})
    if rng.random() < 0.1:
        fields[0]["aliases"] = ["y"]
    return _record(name, fields, **extra)


def _union_pair(rng: random.Random) -> tuple[Any, Any]:
    """A record holding a union of named branches and references to them, and a variant."""

    def side(names: list[str]) -> Any:
        branches: list[Any] = []
        defined: list[str] = []
        for name in names:
            branch = _branch(rng, name, defined)
            branches.append(branch)
            full = branch.get("namespace", "") + "." + name if branch.get("namespace") else name
            defined.append(full)
        if rng.random() < 0.3:
            branches.insert(rng.randrange(len(branches) + 1), rng.choice(["null", "string"]))
        fields = [{"name": "u", "type": branches}]
        for i in range(rng.randrange(3)):
            fields.append({"name": f"v{i}", "type": rng.choice(defined)})
        return _record("Top", fields)

    names = [f"N{i}" for i in range(rng.randrange(2, 12))]
    other = [n for n in names if rng.random() < 0.8] or names[:1]
    if rng.random() < 0.3:
        rng.shuffle(other)
    a, b = side(names), side(other)
    if rng.random() < 0.3:  # a non-union writer for the union: the branch trial itself
        b["fields"][0]["type"] = next(t for t in b["fields"][0]["type"] if isinstance(t, dict))
    return a, b


def test_unions_of_named_branches_agree_with_java_both_ways(oracle):
    rng = random.Random(20261124)
    requests = []
    for _ in range(600):
        a, b = _union_pair(rng)
        requests.append({"op": "compat", "reader": a, "writer": b})
        requests.append({"op": "compat", "reader": b, "writer": a})
    # Small chunks: these answers are long, and a full pipe both ways would block.
    answers = oracle.ask_many(requests, chunk=10)
    disagreements = []
    for request, answer in zip(requests, answers, strict=True):
        java = java_compat(answer)
        ours = our_compat(request["reader"], request["writer"])
        if not same(ours, java):
            disagreements.append(
                ({"reader": request["reader"], "writer": request["writer"]}, java, ours)
            )
    assert not disagreements, report(disagreements)


def test_a_union_of_500_records_missing_one_agrees_with_java(oracle):
    branches = [_record(f"B{i}", [{"name": "a", "type": "int"}], namespace="u") for i in range(500)]
    fewer = branches[:321] + branches[322:]
    for reader, writer in ((fewer, branches), (branches, fewer)):
        java = java_compat(oracle.compat(reader, writer))
        assert same(our_compat(reader, writer), java), java


def test_a_pair_tried_in_a_union_and_met_again_reports_java_s_trial_location(oracle):
    reader = _record(
        "R",
        [
            {
                "name": "u",
                "type": [
                    _record("A", [{"name": "x", "type": "int"}]),
                    _record("B", [{"name": "x", "type": "int"}]),
                ],
            },
            {"name": "v", "type": "A"},
        ],
    )
    writer = _record(
        "R",
        [
            {"name": "u", "type": _record("B", [{"name": "x", "type": "int"}])},
            {"name": "v", "type": "B"},
        ],
    )
    java = java_compat(oracle.compat(reader, writer))
    assert java == {"compatible": False, "incompatibilities": [("NAME_MISMATCH", "/name")]}
    assert same(our_compat(reader, writer), java)
