"""How closely each registry answers like Confluent Schema Registry: a measured table.

    .venv/bin/python -m tests.stack.faithfulness [--impl apicurio,axonops]

Starts each registry with the stack launcher and sends the same requests; every case carries
the answer Confluent Schema Registry documents for it. Used to choose the CI default and to
document deviations (docs/stack.md). Exit 0 always: it measures, it does not gate.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .probe import REGISTRY_IMPLS
from .registry import start_registry

CT = "application/vnd.schemaregistry.v1+json"


def call(url: str, method: str, path: str, body: object = None) -> tuple[int, object]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url + path, data=data, method=method, headers={"Content-Type": CT}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        raw = error.read()
        try:
            return error.code, json.loads(raw or b"null")
        except ValueError:
            return error.code, raw.decode(errors="replace")[:80]


def record(name: str, *fields: dict, namespace: str = "t") -> dict:
    return {"type": "record", "name": name, "namespace": namespace, "fields": list(fields)}


def f(name: str, type_: object, **extra: object) -> dict:
    return {"name": name, "type": type_, **extra}


def enum(*symbols: str) -> dict:
    return {"type": "enum", "name": "E", "symbols": list(symbols)}


@dataclass(frozen=True)
class Case:
    name: str
    expected: str
    run: Callable[[str, str], str]  # (base url, fresh subject) -> observed answer


def register(url: str, subject: str, schema: dict) -> tuple[int, object]:
    return call(url, "POST", f"/subjects/{subject}/versions", {"schema": json.dumps(schema)})


def compat(level: str, old: dict, new: dict) -> Callable[[str, str], str]:
    def run(url: str, subject: str) -> str:
        call(url, "PUT", f"/config/{subject}", {"compatibility": level})
        register(url, subject, old)
        status, body = call(
            url,
            "POST",
            f"/compatibility/subjects/{subject}/versions/latest",
            {"schema": json.dumps(new)},
        )
        if status != 200:
            return f"HTTP {status}"
        return str(body.get("is_compatible")).lower() if isinstance(body, dict) else str(body)

    return run


def verbose_reasons(url: str, subject: str) -> str:
    register(url, subject, R1)
    new = record("R", f("a", "int"), f("b", "string"))
    status, body = call(
        url,
        "POST",
        f"/compatibility/subjects/{subject}/versions/latest?verbose=true",
        {"schema": json.dumps(new)},
    )
    if status != 200 or not isinstance(body, dict):
        return f"HTTP {status}"
    messages = body.get("messages") or []
    return f"is_compatible={str(body.get('is_compatible')).lower()}, messages={bool(messages)}"


def transitive(level: str) -> Callable[[str, str], str]:
    v1 = record("R", f("a", "int"))
    v2 = record("R", f("a", "int"), f("b", "string", default="x"))
    v3 = record("R", f("a", "int"), f("b", "string"))

    def run(url: str, subject: str) -> str:
        call(url, "PUT", f"/config/{subject}", {"compatibility": "NONE"})
        register(url, subject, v1)
        register(url, subject, v2)
        call(url, "PUT", f"/config/{subject}", {"compatibility": level})
        status, _ = register(url, subject, v3)
        return "registered" if status == 200 else f"HTTP {status}"

    return run


def status_and_code(method: str, path: str, body: object = None) -> Callable[[str, str], str]:
    def run(url: str, subject: str) -> str:
        status, answer = call(url, method, path.format(subject=subject), body)
        code = answer.get("error_code") if isinstance(answer, dict) else None
        return f"{status} {code}" if code is not None else f"{status}"

    return run


def same_id_for_reformatted(url: str, subject: str) -> str:
    schema = record("R", f("a", "int"))
    _, first = register(url, subject, schema)
    spaced = json.dumps(schema, indent=4)
    _, second = call(url, "POST", f"/subjects/{subject}/versions", {"schema": spaced})
    _, versions = call(url, "GET", f"/subjects/{subject}/versions")
    return (
        "same id, 1 version"
        if first == second and versions == [1]
        else (f"{first} vs {second}, versions {versions}")
    )


def lookup_reformatted(url: str, subject: str) -> str:
    schema = record("R", f("a", "int"))
    register(url, subject, schema)
    status, body = call(
        url, "POST", f"/subjects/{subject}", {"schema": json.dumps(schema, indent=2)}
    )
    return "found v1" if status == 200 and body.get("version") == 1 else f"HTTP {status}"


def body_of(method: str, path: str, body: object = None) -> Callable[[str, str], str]:
    def run(url: str, subject: str) -> str:
        status, answer = call(url, method, path.format(subject=subject), body)
        return json.dumps(answer, separators=(",", ":")) if status == 200 else f"HTTP {status}"

    return run


def subject_level_roundtrip(url: str, subject: str) -> str:
    register(url, subject, record("R", f("a", "int")))
    put_status, put = call(url, "PUT", f"/config/{subject}", {"compatibility": "FULL"})
    _, got = call(url, "GET", f"/config/{subject}")
    return (
        json.dumps([put, got], separators=(",", ":")) if put_status == 200 else f"HTTP {put_status}"
    )


def delete_subject(url: str, subject: str) -> str:
    register(url, subject, record("R", f("a", "int")))
    register(url, subject, record("R", f("a", "int"), f("b", "int", default=0)))
    status, body = call(url, "DELETE", f"/subjects/{subject}")
    return json.dumps(body) if status == 200 else f"HTTP {status}"


R1 = record("R", f("a", "int"))
CASES = [
    # REST API shape
    Case("GET /subjects on an empty registry", "[]", body_of("GET", "/subjects")),
    Case(
        "GET /config (global default)",
        '{"compatibilityLevel":"BACKWARD"}',
        body_of("GET", "/config"),
    ),
    Case("GET /mode", '{"mode":"READWRITE"}', body_of("GET", "/mode")),
    Case(
        "unknown subject -> 404 40401",
        "404 40401",
        status_and_code("GET", "/subjects/{subject}/versions"),
    ),
    Case(
        "unknown schema id -> 404 40403", "404 40403", status_and_code("GET", "/schemas/ids/987654")
    ),
    Case(
        "invalid Avro -> 422 42201",
        "422 42201",
        status_and_code(
            "POST",
            "/subjects/{subject}/versions",
            {"schema": json.dumps(record("R", f("a", "nosuchtype")))},
        ),
    ),
    Case("re-register reformatted schema", "same id, 1 version", same_id_for_reformatted),
    Case("lookup reformatted schema", "found v1", lookup_reformatted),
    Case(
        "PUT then GET /config/{subject}",
        '[{"compatibility":"FULL"},{"compatibilityLevel":"FULL"}]',
        subject_level_roundtrip,
    ),
    Case("DELETE /subjects/{subject}", "[1, 2]", delete_subject),
    # compatibility decisions (Avro's SchemaCompatibility, as Confluent applies it)
    Case(
        "BACKWARD add field without default",
        "false",
        compat("BACKWARD", R1, record("R", f("a", "int"), f("b", "string"))),
    ),
    Case(
        "BACKWARD add field with default",
        "true",
        compat("BACKWARD", R1, record("R", f("a", "int"), f("b", "string", default=""))),
    ),
    Case(
        "BACKWARD remove field",
        "true",
        compat("BACKWARD", record("R", f("a", "int"), f("b", "int")), R1),
    ),
    Case("BACKWARD int -> long", "true", compat("BACKWARD", R1, record("R", f("a", "long")))),
    Case("BACKWARD long -> int", "false", compat("BACKWARD", record("R", f("a", "long")), R1)),
    Case(
        "BACKWARD float -> string",
        "false",
        compat("BACKWARD", record("R", f("a", "float")), record("R", f("a", "string"))),
    ),
    Case(
        "BACKWARD enum symbol added",
        "true",
        compat("BACKWARD", record("R", f("e", enum("A"))), record("R", f("e", enum("A", "B")))),
    ),
    Case(
        "BACKWARD enum symbol removed",
        "false",
        compat("BACKWARD", record("R", f("e", enum("A", "B"))), record("R", f("e", enum("A")))),
    ),
    Case(
        "BACKWARD string -> [null,string]",
        "true",
        compat(
            "BACKWARD",
            record("R", f("a", "string")),
            record("R", f("a", ["null", "string"], default=None)),
        ),
    ),
    Case("BACKWARD record renamed", "false", compat("BACKWARD", R1, record("S", f("a", "int")))),
    Case(
        "BACKWARD field renamed with alias",
        "true",
        compat("BACKWARD", R1, record("R", f("z", "int", aliases=["a"]))),
    ),
    Case(
        "FORWARD add field without default",
        "true",
        compat("FORWARD", R1, record("R", f("a", "int"), f("b", "string"))),
    ),
    Case(
        "FORWARD remove field without default",
        "false",
        compat("FORWARD", record("R", f("a", "int"), f("b", "int")), R1),
    ),
    Case(
        "FULL add field with default",
        "true",
        compat("FULL", R1, record("R", f("a", "int"), f("b", "int", default=0))),
    ),
    Case(
        "FULL add field without default",
        "false",
        compat("FULL", R1, record("R", f("a", "int"), f("b", "int"))),
    ),
    Case(
        "verbose=true explains an incompatibility",
        "is_compatible=false, messages=True",
        verbose_reasons,
    ),
    Case("BACKWARD: v3 vs latest only", "registered", transitive("BACKWARD")),
    Case("BACKWARD_TRANSITIVE: v3 vs all", "HTTP 409", transitive("BACKWARD_TRANSITIVE")),
]


def measure(impl: str) -> tuple[float, dict[str, str]]:
    workdir = Path(tempfile.mkdtemp(prefix=f"faithfulness-{impl}-"))
    begin = time.monotonic()
    server = start_registry(impl, workdir)
    started = time.monotonic() - begin
    try:
        answers = {}
        for case in CASES:
            try:
                answers[case.name] = case.run(server.url, f"f-{uuid.uuid4().hex[:10]}-value")
            except Exception as exc:  # noqa: BLE001 - a broken answer is a measured answer
                answers[case.name] = f"error: {exc}"[:60]
        return started, answers
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.stack.faithfulness")
    parser.add_argument("--impl", default=",".join(REGISTRY_IMPLS))
    impls = [i for i in parser.parse_args(argv).impl.split(",") if i]
    results = {impl: measure(impl) for impl in impls}
    print("| case | Confluent | " + " | ".join(impls) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in impls) + " |")
    for case in CASES:
        cells = []
        for impl in impls:
            answer = results[impl][1][case.name]
            cells.append(f"`{answer}`" + ("" if answer == case.expected else " **differs**"))
        print(f"| {case.name} | `{case.expected}` | " + " | ".join(cells) + " |")
    for impl in impls:
        started, answers = results[impl]
        same = sum(answers[c.name] == c.expected for c in CASES)
        print(
            f"\n{impl}: healthy after {started:.1f} s; {same}/{len(CASES)} answers as Confluent",
            end="",
        )
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
