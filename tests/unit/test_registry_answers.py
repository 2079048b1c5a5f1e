"""Misbehaving registry answers: every one a RegistryError (exit 3) naming the request.

Well-formed but wrong answers come from the in-process fake (``fake.fail_next``); answers that
need control over the wire (a trickle, an endless body) from a tiny server started here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from schemacli.errors import ExitCode, NetworkError, RegistryError
from schemacli.registry import transport
from schemacli.registry.client import RegistryClient
from schemacli.registry.settings import RegistrySettings

SCHEMA = '{"type": "string"}'


def client_for(url: str, **settings) -> RegistryClient:
    settings.setdefault("retries", 0)
    return RegistryClient(RegistrySettings(url=url, **settings), sleep=lambda _: None)


def assert_names_the_request(err: RegistryError, method: str, path: str) -> None:
    assert err.exit_code == ExitCode.REGISTRY_ERROR
    assert f"{method} {path}" in err.message


# ---- answers that cannot be read at all ----------------------------------------------------


def test_json_nested_too_deeply_is_a_registry_error_not_a_recursion_error(fake):
    fake.fail_next(200, b"[" * 200_000)
    with pytest.raises(RegistryError) as caught:
        client_for(fake.url).list_subjects()
    assert_names_the_request(caught.value, "GET", "/subjects")
    assert "nested too deeply" in caught.value.message


def test_an_error_answer_nested_too_deeply_still_names_the_status(fake):
    fake.fail_next(400, b"[" * 200_000)
    with pytest.raises(RegistryError) as caught:
        client_for(fake.url).list_subjects()
    assert caught.value.status == 400


# ---- ids, versions, schemas and verdicts of the wrong type or range -------------------------

VERSION = {"subject": "foo", "version": 1, "id": 1, "schema": SCHEMA}

BAD_ANSWERS = [
    ("get_version", ("foo", 1), "GET", "/subjects/foo/versions/1", {**VERSION, "id": 1e400}),
    ("get_version", ("foo", 1), "GET", "/subjects/foo/versions/1", {**VERSION, "version": True}),
    ("get_version", ("foo", 1), "GET", "/subjects/foo/versions/1", {**VERSION, "id": -1}),
    ("get_version", ("foo", 1), "GET", "/subjects/foo/versions/1", {**VERSION, "id": 2**31}),
    ("get_version", ("foo", 1), "GET", "/subjects/foo/versions/1", {**VERSION, "version": 1.9}),
    ("get_version", ("foo", 1), "GET", "/subjects/foo/versions/1", {**VERSION, "schema": None}),
    (
        "get_version",
        ("foo", 1),
        "GET",
        "/subjects/foo/versions/1",
        {**VERSION, "schema": {"type": "int"}},
    ),
    ("list_versions", ("foo",), "GET", "/subjects/foo/versions", [True, 1.5]),
    ("list_versions", ("foo",), "GET", "/subjects/foo/versions", [0]),
    ("list_versions", ("foo",), "GET", "/subjects/foo/versions", [-1]),
    ("register", ("foo", SCHEMA), "POST", "/subjects/foo/versions", {"id": 1e400}),
    ("register", ("foo", SCHEMA), "POST", "/subjects/foo/versions", {"id": -7, "version": 0}),
    ("register", ("foo", SCHEMA), "POST", "/subjects/foo/versions", {"id": 3, "version": 0}),
    (
        "test_compatibility_all",
        ("foo", SCHEMA),
        "POST",
        "/compatibility/subjects/foo/versions",
        {"is_compatible": "false"},
    ),
    (
        "test_compatibility_all",
        ("foo", SCHEMA),
        "POST",
        "/compatibility/subjects/foo/versions",
        {},
    ),
    ("delete_subject", ("foo",), "DELETE", "/subjects/foo", b""),
    ("delete_subject", ("foo",), "DELETE", "/subjects/foo", []),
    ("delete_version", ("foo", 1), "DELETE", "/subjects/foo/versions/1", b""),
    ("get_schema", (1,), "GET", "/schemas/ids/1", {"schema": None}),
    (
        "get_schema_versions",
        (1,),
        "GET",
        "/schemas/ids/1/versions",
        [{"subject": "f", "version": 0}],
    ),
]


@pytest.mark.parametrize(
    ("method", "args", "verb", "path", "answer"), BAD_ANSWERS, ids=lambda x: str(x)[:40]
)
def test_an_answer_with_a_value_of_the_wrong_type_or_range_is_a_registry_error(
    fake, method, args, verb, path, answer
):
    fake.fail_next(200, answer)
    with pytest.raises(RegistryError) as caught:
        getattr(client_for(fake.url), method)(*args)
    assert_names_the_request(caught.value, verb, path)
    assert "Traceback" not in caught.value.message


def test_a_boolean_verdict_is_read_as_it_is(fake):
    fake.add("foo", SCHEMA)
    fake.compat_answer = {"is_compatible": False, "messages": ["reader cannot read"]}
    answer = client_for(fake.url).test_compatibility_all("foo", SCHEMA)
    assert answer.compatible is False and answer.messages == ("reader cannot read",)


def test_a_register_answer_without_a_version_keeps_the_id(fake):
    fake.fail_next(200, {"id": 7})
    registered = client_for(fake.url).register("foo", SCHEMA)
    assert (registered.id, registered.version) == (7, None)


# ---- answers that never end, or end too slowly ---------------------------------------------


@pytest.fixture
def wire() -> Iterator[Callable[[Callable[[BaseHTTPRequestHandler], None]], str]]:
    """Start a server whose every answer is written by the given function; returns its URL."""
    servers: list[ThreadingHTTPServer] = []

    def start(answer: Callable[[BaseHTTPRequestHandler], None]) -> str:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                """Quiet: the tests read the answers, not the server's request log."""

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                try:
                    answer(self)
                except OSError:
                    pass  # the client gave up, as it should

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _trickle(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", "100000")
    handler.end_headers()
    for _ in range(100_000):  # 5,000 s: only the client's cut-off ends it
        handler.wfile.write(b" ")
        handler.wfile.flush()
        time.sleep(0.05)


def test_an_answer_trickling_in_is_cut_off_at_twice_the_timeout(wire):
    client = client_for(wire(_trickle), timeout=0.3)
    started = time.monotonic()
    with pytest.raises(NetworkError) as caught:
        client.list_subjects()
    # cut off, not read to its end (5,000 s): the bound is one only a hang reaches
    assert time.monotonic() - started < 120
    assert "did not finish answering GET /subjects within 0.6 s" in caught.value.message
    assert "--timeout" in (caught.value.hint or "")


def test_an_answer_trickling_in_is_retried_like_any_timeout_on_a_get(wire):
    client = client_for(wire(_trickle), timeout=0.2, retries=1)
    with pytest.raises(NetworkError):
        client.list_subjects()
    assert client.retry_count == 1


def _endless_chunked(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    block = b"[" + b"1," * 4000
    while True:
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(block), block))
        block = b"1," * 4000


def test_an_endless_answer_is_refused_beyond_the_size_limit(wire, monkeypatch):
    monkeypatch.setattr(transport, "MAX_ANSWER_BYTES", 2**20)
    with pytest.raises(RegistryError) as caught:
        client_for(wire(_endless_chunked), timeout=5).list_subjects()
    assert_names_the_request(caught.value, "GET", "/subjects")
    assert "more than 1 MiB" in caught.value.message


def test_an_answer_declaring_a_size_beyond_the_limit_is_refused_before_reading(fake, monkeypatch):
    monkeypatch.setattr(transport, "MAX_ANSWER_BYTES", 100)
    fake.fail_next(200, ["x" * 200])
    with pytest.raises(RegistryError) as caught:
        client_for(fake.url).list_subjects()
    assert "schemacli stopped reading" in caught.value.message
    assert caught.value.status == 200


# ---- credentials echoed by the server ------------------------------------------------------


def test_a_basic_credential_echoed_by_the_server_is_redacted_in_base64_too(fake):
    import base64

    credential = base64.b64encode(b"bob:hunter2pass").decode()
    fake.fail_next(400, {"error_code": 40000, "message": f"got auth Basic {credential}"})
    client = client_for(fake.url, username="bob", password="hunter2pass")
    with pytest.raises(RegistryError) as caught:
        client.list_subjects()
    assert credential not in (caught.value.server_message or "")
    assert "got auth Basic ***" in (caught.value.server_message or "")
