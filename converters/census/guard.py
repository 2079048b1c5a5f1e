"""What a census says about one schema id: where the topic's data still holds records written
with it, and when they age out. ``subjects delete --version`` refuses on it; ``migrate finish``
reports the v1 topic's versions with it."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

SIDES = ("keys", "values")


@dataclass(frozen=True)
class Holding:
    """Records of one side written with the id: how many, where, and when they age out."""

    side: str
    count: int
    partitions: tuple[dict[str, Any], ...]  # the census's ranges
    oldest_ages_out_at_ms: int | None
    all_aged_out_at_ms: int | None

    def text(self, retention: dict[str, Any]) -> str:
        where = ", ".join(
            f"partition {r['partition']} offsets {r['first_offset']}..{r['last_offset']} "
            f"({r['count']})"
            for r in self.partitions
        )
        if self.all_aged_out_at_ms is None:
            until = f"kept until deleted ({kept_because(retention)})"
        else:
            until = (
                f"ages out from {stamp(self.oldest_ages_out_at_ms)}, "
                f"all of it by {stamp(self.all_aged_out_at_ms)}"
            )
        return f"{self.count} {self.side[:-1]}(s) in {where}; {until}"


def stamp(ms: int | None) -> str:
    if ms is None:
        return "-"
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def kept_because(retention: dict[str, Any]) -> str:
    if retention.get("retention_ms") is not None and retention["retention_ms"] < 0:
        return "retention.ms=-1"
    policy = retention.get("cleanup_policy")
    if policy and "delete" not in policy:
        return f"cleanup.policy={policy}"
    return "no timestamp"


def holdings(doc: dict[str, Any], schema_id: int) -> list[Holding]:
    """Where the census ``doc`` found records written with ``schema_id`` (keys, values)."""
    found = []
    for side in SIDES:
        for v in doc[side]["versions"]:
            if v["id"] == schema_id and v["count"]:
                found.append(
                    Holding(
                        side=side,
                        count=v["count"],
                        partitions=tuple(v["partitions"]),
                        oldest_ages_out_at_ms=v["oldest_ages_out_at_ms"],
                        all_aged_out_at_ms=v["all_aged_out_at_ms"],
                    )
                )
    return found


def topic_of(subject: str) -> str | None:
    """The topic whose keys or values ``subject`` names by TopicNameStrategy
    (``orders-value``, ``orders-key``: ``orders``), None for another naming."""
    for suffix in ("-value", "-key"):
        if subject.endswith(suffix) and len(subject) > len(suffix):
            return subject[: -len(suffix)]
    return None
