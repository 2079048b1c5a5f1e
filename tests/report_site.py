"""A store, a census and a migration state directory for the ``schemacli report`` tests: three
versions of ``orders-value`` (v3 breaks BACKWARD), a subject and a reader whose names, docs and
owner are hostile HTML, and a converter state directory with a progress history."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CENSUS = ROOT / "tests/fixtures/census/orders.json"

# Text a page must show as text, never run: a subject folder name (no "/" in a file name) and
# schema docs, reader owners and contacts, which may hold anything.
HOSTILE_NAME = 'x"><img src=x onerror=alert(1)>'
HOSTILE_DOC = '</script><script>alert(2)</script><img src=x onerror=alert(3)> & "q" \u2028'
HOSTILE_OWNER = "<b onmouseover=alert(4)>billing</b>"


def record(fields: list[dict], doc: str | None = None, name: str = "Order") -> str:
    schema: dict = {"type": "record", "name": name, "namespace": "com.acme", "fields": fields}
    if doc is not None:
        schema["doc"] = doc
    return json.dumps(schema, indent=2)


ID = {"name": "id", "type": "string"}
AMOUNT = {"name": "amount", "type": "double"}
NOTE = {"name": "note", "type": ["null", "string"], "default": None}


def make_store(root: Path) -> Path:
    """The store under ``root``; returns it."""
    store = root / "schemas"
    orders = store / "subjects" / "orders-value"
    orders.mkdir(parents=True)
    (orders / "v1.avsc").write_text(record([ID, AMOUNT], doc="An order."))
    (orders / "v2.avsc").write_text(record([ID, AMOUNT, NOTE], doc="An order."))
    # v3: amount becomes a string, which no reader of v2 can read: BACKWARD fails
    (orders / "v3.avsc").write_text(
        record([ID, {"name": "amount", "type": "string"}, NOTE], doc="An order.")
    )
    hostile = store / "subjects" / HOSTILE_NAME
    hostile.mkdir()
    (hostile / "v1.avsc").write_text(
        record([{"name": "x", "type": "int", "doc": HOSTILE_DOC}], doc=HOSTILE_DOC, name="Evil")
    )
    billing = store / "readers" / "billing"
    billing.mkdir(parents=True)
    (billing / "reader.json").write_text(
        json.dumps(
            {
                "owner": HOSTILE_OWNER,
                "contact": "billing@acme.example",
                "groups": ["billing-invoicer"],
            }
        )
    )
    (billing / "orders-value.avsc").write_text(record([ID, AMOUNT]))
    (root / "schemacli.toml").write_text('store = "schemas"\n')
    return store


def make_state_dir(root: Path) -> Path:
    """A finished migration window's state directory, as the converter and finish leave it."""
    state = root / "orders-v2--orders"
    (state / "checkpoint" / "commits").mkdir(parents=True)
    (state / "checkpoint" / "offsets").mkdir()
    (state / "checkpoint" / "commits" / "2").write_text("v1\n{}\n")
    (state / "checkpoint" / "offsets" / "2").write_text(
        'v1\n{"batchWatermarkMs":0}\n{"orders-v2":{"0":40,"1":35}}\n'
    )
    (state / "deploy.json").write_text(
        json.dumps(
            {
                "checkpoint": str(state / "checkpoint"),
                "bootstrap": "broker:9092",
                "master": "local[2]",
                "started": 1795000000.0,
                "detached": True,
            }
        )
    )
    (state / "migration.json").write_text(
        json.dumps(
            {
                "state": "finished",
                "since": {
                    "planned": 1794990000.0,
                    "running": 1795000000.0,
                    "draining": 1795003000.0,
                    "finished": 1795003600.0,
                },
            }
        )
    )
    totals = {"in": 75, "converted": 70, "dead_letter": 3, "skipped": 2, "tombstone": 0}
    (state / "progress.json").write_text(
        json.dumps(
            {
                "totals": totals,
                "last_batch": 2,
                "updated": 1795003500.0,
                "counted_by": "transactions",
            }
        )
    )
    history = [
        {
            "time": 1795000100.0,
            "batch": 0,
            "rows": 30,
            "lag": 45,
            "totals": {"in": 30, "converted": 29, "dead_letter": 1, "skipped": 0, "tombstone": 0},
        },
        {
            "time": 1795001100.0,
            "batch": 1,
            "rows": 25,
            "lag": 20,
            "totals": {"in": 55, "converted": 52, "dead_letter": 2, "skipped": 1, "tombstone": 0},
        },
        {"time": 1795002100.0, "batch": 2, "rows": 20, "lag": 0, "totals": totals},
    ]
    (state / "progress-history.jsonl").write_text("".join(json.dumps(p) + "\n" for p in history))
    (state / "dependents.json").write_text(
        json.dumps(
            {
                "looked_at": 1795003000.0,
                "groups": {"<i>legacy</i>-reader": {"orders/0": 12, "orders/1": 9}},
            }
        )
    )
    (state / "final-report.json").write_text(
        json.dumps(
            {
                "v2_topic": "orders-v2",
                "v1_topic": "orders",
                "dead_letter_topic": "orders-v2.dlq",
                "window_start": 1795000000.0,
                "window_end": 1795003600.0,
                "totals": totals,
                "dead_letters_by_error": {"<script>bad</script> amount": 3},
                "moved_groups": ["billing-invoicer"],
                "forced": False,
                "overridden": [],
                "v1_data": {
                    "topic": "orders",
                    "scanned_at": "2026-11-18T12:06:40.000Z",
                    "complete": True,
                    "records": 42,
                    "retention": {"retention_ms": 604800000},
                    "versions": [
                        {
                            "id": 11,
                            "count": 42,
                            "first_timestamp_ms": 1795000000000,
                            "last_timestamp_ms": 1795003000000,
                            "oldest_ages_out_at_ms": 1795604800000,
                            "all_aged_out_at_ms": 1795607800000,
                        }
                    ],
                    "unframed": 0,
                    "tombstones": 1,
                    "all_aged_out_at_ms": 1795607800000,
                    "kept": None,
                },
            }
        )
    )
    return state
