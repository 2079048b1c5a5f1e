"""Parsing Canonical Form and fingerprints agree with fastavro and with Apache Avro Java."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

import fastavro.schema
import pytest

from schemacli.contracts.avro.canonical import fingerprints
from schemacli.contracts.avro.loader import load_schema_file
from schemacli.contracts.avro.parse import parse_schema

ROOT = Path(__file__).resolve().parents[2]
PRIMITIVES = ["null", "boolean", "int", "long", "float", "double", "bytes", "string"]


class _Generator:
    """Seeded random schemas using every construct canonical form cares about."""

    def __init__(self, seed: int) -> None:
        self.rnd = random.Random(seed)
        self.named: list[str] = []
        self.counter = 0

    def name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def schema(self, depth: int, namespace: str | None) -> Any:
        r = self.rnd.random()
        if depth <= 0 or r < 0.3:
            # A null-namespace type cannot be named from inside a namespace (only Java falls
            # back to the null namespace), so refer to those only from the null namespace.
            usable = [n for n in self.named if "." in n or namespace is None]
            if usable and self.rnd.random() < 0.3:
                return self.rnd.choice(usable)
            prim = self.rnd.choice(PRIMITIVES)
            if self.rnd.random() < 0.2:
                return {"type": prim, "doc": "wrapped primitive"}
            return prim
        if r < 0.45:
            return self.record(depth - 1, namespace)
        if r < 0.55:
            full = self.define(namespace, "E")
            return {
                "type": "enum",
                "name": full,
                "symbols": [f"S{i}" for i in range(self.rnd.randint(1, 4))],
                "doc": "an enum",
                "aliases": ["OldEnum"],
            }
        if r < 0.62:
            full = self.define(namespace, "F")
            return {"type": "fixed", "name": full, "size": self.rnd.randint(1, 16)}
        if r < 0.72:
            return {"type": "array", "items": self.schema(depth - 1, namespace)}
        if r < 0.8:
            return {"type": "map", "values": self.schema(depth - 1, namespace)}
        if r < 0.85:
            return {"type": "long", "logicalType": "timestamp-millis"}
        branches: list[Any] = ["null"]
        keys = {json.dumps("null")}
        for _ in range(self.rnd.randint(1, 3)):
            known = len(self.named)
            branch = self.schema(depth - 1, namespace)
            key = json.dumps(_union_key(branch, namespace))
            if isinstance(branch, list) or key in keys:
                del self.named[known:]  # forget types defined only in the dropped branch
                continue
            keys.add(key)
            branches.append(branch)
        return branches

    def define(self, namespace: str | None, prefix: str) -> str:
        simple = self.name(prefix)
        full = f"{namespace}.{simple}" if namespace else simple
        self.named.append(full)
        return simple if self.rnd.random() < 0.5 else full

    def record(self, depth: int, namespace: str | None, *, top: bool = False) -> dict[str, Any]:
        own_ns = namespace
        node: dict[str, Any] = {"type": "record"}
        if top and namespace:
            node["namespace"] = namespace
        elif self.rnd.random() < 0.3:
            own_ns = self.rnd.choice(["com.acme", "org.example.deep", "x"])
            node["namespace"] = own_ns
        simple = self.name("R")
        full = f"{own_ns}.{simple}" if own_ns else simple
        node["name"] = simple
        node["doc"] = "a record"
        node["fields"] = [
            {
                "name": f"f{i}",
                "type": self.schema(depth, own_ns),
                "doc": "a field",
                "order": "descending",
                "aliases": [f"old_f{i}"],
            }
            for i in range(self.rnd.randint(0, 5))
        ]
        self.named.append(full)
        return node


def _union_key(branch: Any, namespace: str | None) -> Any:
    if isinstance(branch, dict):
        t = branch.get("type")
        if t in ("record", "enum", "fixed"):
            space = branch.get("namespace", namespace)
            if "." in branch["name"] or not space:
                return branch["name"]
            return f"{space}.{branch['name']}"
        return t
    return branch


def _generated(count: int) -> list[Any]:
    out = []
    for seed in range(count):
        gen = _Generator(seed)
        out.append(gen.record(4, "com.example" if seed % 2 else None, top=True))
    return out


def _fastavro_form(value: Any) -> tuple[str, str]:
    form = fastavro.schema.to_parsing_canonical_form(value)
    return form, fastavro.schema.fingerprint(form, "CRC-64-AVRO")


@pytest.mark.parametrize("seed_schema", _generated(300), ids=lambda s: s["name"])
def test_canonical_form_and_crc64_match_fastavro_on_generated_schemas(seed_schema: Any) -> None:
    ours = fingerprints(parse_schema(seed_schema))
    form, crc = _fastavro_form(seed_schema)
    assert ours.canonical == form
    assert ours.crc64_le_hex == crc


def test_canonical_form_matches_fastavro_on_every_example_contract() -> None:
    files = sorted((ROOT / "schemas").rglob("*.avsc"))
    assert files
    for path in files:
        value = json.loads(path.read_text())
        ours = fingerprints(load_schema_file(path).schema)
        form, crc = _fastavro_form(value)
        assert (ours.canonical, ours.crc64_le_hex) == (form, crc), path


# Values printed by Apache Avro Java 1.12.0 (SchemaNormalization.toParsingForm and
# Long.toHexString(parsingFingerprint64)) for these schemas.
JAVA_REFERENCE = [
    (
        {
            "type": "error",
            "name": "Err",
            "namespace": "a.b",
            "fields": [
                {
                    "name": "x",
                    "type": {
                        "type": "record",
                        "name": "In",
                        "fields": [{"name": "y", "type": ["null", "In"]}],
                    },
                },
                {"name": "z", "type": "a.b.In"},
            ],
        },
        '{"name":"a.b.Err","type":"record","fields":[{"name":"x","type":{"name":"a.b.In",'
        '"type":"record","fields":[{"name":"y","type":["null","a.b.In"]}]}},'
        '{"name":"z","type":"a.b.In"}]}',
        "760ebb51a29e2079",
    ),
    (
        {
            "type": "record",
            "name": "Fahrt\u00e4",
            "fields": [
                {
                    "name": "e",
                    "type": {
                        "type": "enum",
                        "name": "E",
                        "namespace": "",
                        "symbols": ["A", "B"],
                        "default": "A",
                    },
                    "default": "A",
                    "doc": "d",
                    "order": "descending",
                    "aliases": ["q"],
                }
            ],
        },
        '{"name":"Fahrt\u00e4","type":"record","fields":[{"name":"e","type":{"name":"E",'
        '"type":"enum","symbols":["A","B"]}}]}',
        "b064d585c7c1b937",
    ),
]


@pytest.mark.parametrize("schema,form,java_hex", JAVA_REFERENCE, ids=["error_type", "unicode"])
def test_canonical_form_and_fingerprint_match_java(schema: Any, form: str, java_hex: str) -> None:
    ours = fingerprints(parse_schema(schema))
    assert ours.canonical == form
    assert ours.crc64_hex == java_hex


def test_error_type_is_canonicalised_as_record_like_java() -> None:
    ours = fingerprints(parse_schema(JAVA_REFERENCE[0][0]))
    assert '"type":"error"' not in ours.canonical


def test_md5_and_sha256_are_of_the_canonical_form_bytes() -> None:
    ours = fingerprints(parse_schema({"type": "fixed", "name": "F", "size": 3}))
    data = ours.canonical.encode()
    assert ours.md5 == hashlib.md5(data).hexdigest()
    assert ours.sha256 == hashlib.sha256(data).hexdigest()
    assert ours.canonical == '{"name":"F","type":"fixed","size":3}'


def test_signed_fingerprint_is_javas_long() -> None:
    ours = fingerprints(parse_schema(JAVA_REFERENCE[0][0]))
    assert ours.crc64_signed == ours.crc64  # 0x76... < 2**63
    unicode = fingerprints(parse_schema(JAVA_REFERENCE[1][0]))
    assert unicode.crc64_signed == unicode.crc64 - 2**64  # 0xb0... is negative as a long


def test_referenced_types_are_inlined_at_first_use(repo_root: Path) -> None:
    loaded = load_schema_file(repo_root / "tests/fixtures/avsc/refs/customer.avsc")
    form = fingerprints(loaded.schema).canonical
    assert form.count('"name":"com.acme.Address","type":"record"') == 1
    assert '"type":["null","com.acme.Address"]' in form


@pytest.mark.parametrize(
    "name,java_hex",
    [("customer.avsc", "806ad7df70724e40"), ("invoice.avsc", "950c14d9e9201a2a")],
)
def test_fingerprint_with_references_matches_java_parsing_the_files_in_order(
    repo_root: Path, name: str, java_hex: str
) -> None:
    # Java: one Schema.Parser parses the referenced file, then this one (how references work).
    loaded = load_schema_file(repo_root / "tests/fixtures/avsc/refs" / name)
    assert fingerprints(loaded.schema).crc64_hex == java_hex
