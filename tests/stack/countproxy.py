"""A forwarding TCP proxy in front of a real HTTP server that counts requests and can add latency.

Not a server of its own: every request is answered by the real server behind it (the stack's
registry). It reads each client connection's HTTP/1.1 requests (head and Content-Length body;
requests never pipelines), forwards them over one upstream connection per client connection,
and relays the answers back byte for byte. ``delay`` seconds are added before a new connection
is served and before each request is forwarded: a far registry's round trip, injected in front
of a near one. ``requests`` lists every request line let through (``"GET /subjects HTTP/1.1"``),
``connections`` counts the client connections (keep-alive: far fewer than requests).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from urllib.parse import urlsplit, urlunsplit

from tests.stack.cutproxy import _read_request, _reset


class CountProxy:
    def __init__(self, upstream_url: str, *, delay: float = 0.0) -> None:
        import socket

        parts = urlsplit(upstream_url)
        self._parts = parts
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.delay = delay
        self.requests: list[str] = []
        self.connections = 0
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._conns: set[socket.socket] = set()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        self._acceptor = threading.Thread(target=self._accept, daemon=True)
        self._acceptor.start()

    @property
    def url(self) -> str:
        """The upstream URL (its path too) with the proxy's host and port."""
        p = self._parts
        return urlunsplit((p.scheme, f"127.0.0.1:{self.port}", p.path, p.query, p.fragment))

    def take(self) -> list[str]:
        """The request lines seen since the last take (and forget them)."""
        with self._lock:
            seen, self.requests = self.requests, []
            self.connections = 0
        return seen

    def repeated(self, seen: list[str]) -> dict[str, int]:
        """The request lines of ``seen`` that were sent more than once."""
        return {line: n for line, n in Counter(seen).items() if n > 1}

    def close(self) -> None:
        self._closing.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        with self._lock:
            for conn in list(self._conns):
                _reset(conn)

    def __enter__(self) -> CountProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client) -> None:  # type: ignore[no-untyped-def]
        import socket

        upstream = None
        with self._lock:
            self._conns.add(client)
            self.connections += 1
        buffered = b""
        try:
            if self.delay:
                time.sleep(self.delay)  # the connection's handshake, far away
            while True:
                request, buffered = _read_request(client, buffered)
                if request is None:
                    return
                line = request.split(b"\r\n", 1)[0].decode("latin-1")
                with self._lock:
                    self.requests.append(line)
                if self.delay:
                    time.sleep(self.delay)  # the request's round trip
                if upstream is None:
                    upstream = socket.create_connection(self.upstream, timeout=60)
                    upstream.settimeout(None)
                    threading.Thread(
                        target=self._relay, args=(upstream, client), daemon=True
                    ).start()
                upstream.sendall(request)
        except OSError:
            return
        finally:
            _reset(client)
            if upstream is not None:
                _reset(upstream)
            with self._lock:
                self._conns.discard(client)

    @staticmethod
    def _relay(upstream, client) -> None:  # type: ignore[no-untyped-def]
        import socket

        with contextlib.suppress(OSError):
            while data := upstream.recv(65536):
                client.sendall(data)
        with contextlib.suppress(OSError):
            client.shutdown(socket.SHUT_WR)
