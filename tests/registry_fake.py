"""An in-process fake of the Confluent Schema Registry REST API, for unit and CLI tests.

A real ``http.server`` on 127.0.0.1 in a thread, so the client's whole HTTP path runs (headers,
encoding, timeouts, retries). It keeps subjects in memory and implements the endpoints the client
uses, with Confluent's error bodies. Tests steer it with:

* ``fail_next(status, body, times=1)`` — answer the next requests with a canned error;
* ``delay`` — seconds to sleep before answering;
* ``stall`` — True, or a predicate of (method, path): such a request is carried out, but its
  answer is held back until the client has hung up (a time-out that fires on any machine,
  however fast or slow, without a sleep that a slow machine could outlast);
* ``require_basic=(user, password)`` / ``require_token=token`` — 401 otherwise;
* ``compat_answer`` — what the compatibility endpoints say;
* ``requests`` — every request seen (method, path, query, headers, body).
"""

from __future__ import annotations

import base64
import json
import re
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit


def _wait_for_hang_up(sock: socket.socket, bound: float = 120.0) -> None:
    """Until the peer closes ``sock`` (the client's time-out fired), bounded so a client that
    never gives up cannot hang the test server."""
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        readable, _, _ = select.select([sock], [], [], 0.05)
        if not readable:
            continue
        try:
            if not sock.recv(1, socket.MSG_PEEK):
                return
        except OSError:
            return
        # the client sent more (a pipelined request): keep waiting for it to hang up


@dataclass
class Seen:
    method: str
    path: str  # still percent-encoded, as sent
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class FakeRegistry:
    subjects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # subject -> versions
    schemas: dict[int, dict[str, Any]] = field(default_factory=dict)  # id -> {schema, refs}
    configs: dict[str, str] = field(default_factory=dict)
    global_level: str = "BACKWARD"
    compat_answer: dict[str, Any] = field(default_factory=lambda: {"is_compatible": True})
    delay: float = 0.0
    stall: Any = False  # True or (method, path) -> bool: answered only once the client hung up
    require_basic: tuple[str, str] | None = None
    require_token: str | None = None
    requests: list[Seen] = field(default_factory=list)
    _canned: list[tuple[int, Any]] = field(default_factory=list)
    prefix: str = ""
    ssl_context: Any = None  # an ssl.SSLContext (server side) to serve https

    url: str = ""

    extra_headers: dict[str, str] = field(default_factory=dict)  # sent with every answer
    # Keep a version's data contract (metadata, ruleSet) as AxonOps does; by default it is
    # dropped, as Apicurio's ccompat API drops it.
    keeps_rule_sets: bool = False

    def fail_next(self, status: int, body: Any = None, times: int = 1) -> None:
        for _ in range(times):
            self._canned.append((status, body))

    def add(self, subject: str, schema: str | dict[str, Any], **extra: Any) -> int:
        """Register directly (test setup); returns the id."""
        status, body = self._register(
            subject, {"schema": schema if isinstance(schema, str) else json.dumps(schema), **extra}
        )
        assert status == 200, body
        return body["id"]

    # ---- the API ---------------------------------------------------------------------------

    def handle(
        self, method: str, path: str, query: dict[str, list[str]], body: Any
    ) -> tuple[int, Any]:
        if self._canned:
            return self._canned.pop(0)
        parts = [unquote(p) for p in path.strip("/").split("/")]
        deleted = query.get("deleted", ["false"])[0] == "true"
        permanent = query.get("permanent", ["false"])[0] == "true"
        match parts:
            case ["subjects"] if method == "GET":
                return 200, [s for s, vs in self.subjects.items() if _live(vs) or deleted]
            case ["subjects", s, "versions"] if method == "GET":
                vs = self._versions(s, deleted)
                return (
                    (200, [v["version"] for v in vs])
                    if vs
                    else _err(40401, f"Subject '{s}' not found.")
                )
            case ["subjects", s, "versions"] if method == "POST":
                return self._register(s, body)
            case ["subjects", s, "versions", v] | ["subjects", s, "versions", v, "schema"] if (
                method == "GET"
            ):
                found = self._version(s, v, deleted)
                if isinstance(found, tuple):
                    return found
                if len(parts) == 5:
                    return 200, json.loads(found["schema"])
                return 200, {k: found[k] for k in ("subject", "version", "id", "schema")} | {
                    k: found[k] for k in ("references", "metadata", "ruleSet") if found.get(k)
                }
            case ["subjects", s] if method == "POST":
                for v in self._versions(s, deleted):
                    if _same(v["schema"], body["schema"]):  # with its contract, as Confluent
                        return 200, {k: v[k] for k in ("subject", "version", "id", "schema")} | {
                            k: v[k] for k in ("references", "metadata", "ruleSet") if v.get(k)
                        }
                if not self._versions(s, True):
                    return _err(40401, f"Subject '{s}' not found.")
                return _err(40403, "Schema not found")
            case ["subjects", s] if method == "DELETE":
                vs = self._versions(s, True)
                if not vs:
                    return _err(40401, f"Subject '{s}' not found.")
                if permanent:
                    if _live(vs):
                        return _err(
                            40405,
                            f"Subject '{s}' was not deleted first before being permanently deleted",
                        )
                    del self.subjects[s]
                    return 200, [v["version"] for v in vs]
                if not _live(vs):
                    return _err(40404, f"Subject '{s}' was soft deleted.")
                for v in vs:
                    v["deleted"] = True
                return 200, [v["version"] for v in vs]
            case ["subjects", s, "versions", v] if method == "DELETE":
                found = self._version(s, v, True)
                if isinstance(found, tuple):
                    return found
                if permanent:
                    self.subjects[s].remove(found)
                    if not self.subjects[s]:
                        del self.subjects[s]
                else:
                    found["deleted"] = True
                return 200, found["version"]
            case ["schemas", "ids", i]:
                if int(i) not in self.schemas:
                    return _err(40403, "Schema not found")
                known = self.schemas[int(i)]
                answer = {"schema": known["schema"]}
                if known.get("references"):  # as Confluent answers: only when there are some
                    answer["references"] = known["references"]
                return 200, answer
            case ["schemas", "ids", i, "subjects"]:
                return 200, sorted(
                    {s for s, vs in self.subjects.items() for v in vs if v["id"] == int(i)}
                )
            case ["schemas", "ids", i, "versions"]:
                return 200, [
                    {"subject": s, "version": v["version"]}
                    for s, vs in self.subjects.items()
                    for v in vs
                    if v["id"] == int(i)
                ]
            case ["compatibility", "subjects", s, "versions", *_]:
                if not self._versions(s, False) and parts[-1] != "versions":
                    return _err(40401, f"Subject '{s}' not found.")
                return 200, self.compat_answer
            case ["config"] if method == "GET":
                return 200, {"compatibilityLevel": self.global_level}
            case ["config"] if method == "PUT":
                self.global_level = body["compatibility"]
                return 200, {"compatibility": self.global_level}
            case ["config", s] if method == "GET":
                if s in self.configs:
                    return 200, {"compatibilityLevel": self.configs[s]}
                if query.get("defaultToGlobal", ["false"])[0] == "true":
                    return 200, {"compatibilityLevel": self.global_level}
                return _err(
                    40408, f"Subject '{s}' does not have subject-level compatibility configured"
                )
            case ["config", s] if method == "PUT":
                level = body["compatibility"]
                if level not in (
                    "NONE",
                    "BACKWARD",
                    "BACKWARD_TRANSITIVE",
                    "FORWARD",
                    "FORWARD_TRANSITIVE",
                    "FULL",
                    "FULL_TRANSITIVE",
                ):
                    return _err(42203, "Invalid compatibility level")
                self.configs[s] = level
                return 200, {"compatibility": level}
            case ["config", s] if method == "DELETE":
                if s not in self.configs:
                    return _err(40401, f"Subject '{s}' not found.")
                return 200, {"compatibilityLevel": self.configs.pop(s)}
            case ["mode"] | ["mode", _]:
                return 200, {"mode": "READWRITE"}
        return 404, {"error_code": 404, "message": "HTTP 404 Not Found"}

    def _versions(self, subject: str, deleted: bool) -> list[dict[str, Any]]:
        return [v for v in self.subjects.get(subject, []) if deleted or not v.get("deleted")]

    def _version(
        self, subject: str, version: str, deleted: bool
    ) -> dict[str, Any] | tuple[int, Any]:
        vs = self._versions(subject, deleted)
        if not self._versions(subject, True):
            return _err(40401, f"Subject '{subject}' not found.")
        if version == "latest":
            return vs[-1] if vs else _err(40402, "Version not found.")
        if not version.lstrip("-").isdigit() or int(version) < 1:
            return _err(42202, f"The specified version '{version}' is not a valid version id.")
        for v in vs:
            if v["version"] == int(version):
                return v
        return _err(40402, f"Version {version} not found.")

    def _register(self, subject: str, body: dict[str, Any]) -> tuple[int, Any]:
        try:
            parsed = json.loads(body["schema"])
        except (ValueError, KeyError, TypeError):
            return _err(42201, "Invalid schema: not JSON")
        if isinstance(parsed, dict) and parsed.get("type") not in (
            "record",
            "enum",
            "fixed",
            "array",
            "map",
            "string",
            "int",
            "long",
            "float",
            "double",
            "boolean",
            "bytes",
            "null",
        ):
            return _err(42201, f"Invalid schema {body['schema']}")
        if not self.compat_answer.get("is_compatible", True) and self._versions(subject, False):
            return _err(409, "Schema being registered is incompatible with an earlier schema")
        for v in self._versions(subject, False):
            if _same(v["schema"], body["schema"]):
                return 200, {"id": v["id"]}
        schema_id = next(
            (i for i, s in self.schemas.items() if _same(s["schema"], body["schema"])),
            len(self.schemas) + 1,
        )
        self.schemas[schema_id] = {
            "schema": body["schema"],
            "references": body.get("references") or [],
        }
        versions = self.subjects.setdefault(subject, [])
        number = max((v["version"] for v in versions), default=0) + 1
        versions.append(
            {
                "subject": subject,
                "version": number,
                "id": schema_id,
                "schema": body["schema"],
                "references": body.get("references") or [],
            }
            # a data contract registered with the version (docs/rules.md)
            | {k: body[k] for k in ("metadata", "ruleSet") if self.keeps_rule_sets and body.get(k)}
        )
        return 200, {"id": schema_id}

    # ---- serving ---------------------------------------------------------------------------

    def start(self) -> FakeRegistry:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _serve(self) -> None:
                split = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                fake.requests.append(
                    Seen(self.command, split.path, parse_qs(split.query), dict(self.headers), body)
                )
                if fake.delay:
                    time.sleep(fake.delay)
                status, answer = fake._authorize(self.headers.get("Authorization"))
                if status == 200:
                    path = split.path[len(fake.prefix) :] if fake.prefix else split.path
                    status, answer = fake.handle(self.command, path, parse_qs(split.query), body)
                payload = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
                stalled = fake.stall is True or (
                    callable(fake.stall) and fake.stall(self.command, split.path)
                )
                if stalled:
                    _wait_for_hang_up(self.connection)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in fake.extra_headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            do_GET = do_POST = do_PUT = do_DELETE = _serve

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        scheme = "http"
        if self.ssl_context is not None:
            self._server.socket = self.ssl_context.wrap_socket(
                self._server.socket, server_side=True
            )
            scheme = "https"
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), daemon=True
        )
        self._thread.start()
        self.url = f"{scheme}://127.0.0.1:{self._server.server_address[1]}{self.prefix}"
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _authorize(self, header: str | None) -> tuple[int, Any]:
        if self.require_basic is not None:
            expected = "Basic " + base64.b64encode(":".join(self.require_basic).encode()).decode()
            if header != expected:
                return 401, {"error_code": 401, "message": "Unauthorized"}
        if self.require_token is not None and header != f"Bearer {self.require_token}":
            return 401, {"error_code": 401, "message": "Unauthorized"}
        return 200, None


def _err(code: int, message: str) -> tuple[int, Any]:
    return (code if code < 1000 else code // 100), {"error_code": code, "message": message}


def _live(versions: list[dict[str, Any]]) -> bool:
    return any(not v.get("deleted") for v in versions)


def _same(a: str, b: str) -> bool:
    return json.loads(a) == json.loads(b)


def free_port() -> int:
    """A loopback port nobody listens on (connection refused)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


URL_RE = re.compile(r"http://127\.0\.0\.1:\d+")
