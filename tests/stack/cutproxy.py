"""A forwarding TCP proxy in front of a real HTTP server that makes the server "die" on an event.

Not a server of its own: every request it lets through is answered by the real server behind
it (the stack's registry). It reads the client's HTTP/1.1 requests (head and Content-Length
body; requests never pipelines), forwards them over one upstream connection per client
connection, and relays the answers back byte for byte. When a request matches ``trigger``,
the server dies around it, in one of two ways:

* ``"after-answer"``: the request is forwarded and answered; from then on the listening port
  refuses connections, and any further request on a kept-alive connection is cut (reset)
  without being forwarded - as if the server died right after answering.
* ``"before-answer"``: the request is forwarded, and when the server's answer begins (so the
  server has done the work) the client's connection is reset instead of answered; the port
  refuses connections from then on - the server died after doing the work, before answering.

``revive()`` opens the same port again and forwards everything from then on. ``triggered`` is
set the moment the matching request arrives; ``forwarded`` lists every request head let through.
"""

from __future__ import annotations

import contextlib
import re
import selectors
import socket
import struct
import threading
from collections.abc import Callable

MODES = ("after-answer", "before-answer")


def _reset(sock: socket.socket) -> None:
    """Drop a connection as a dying process's kernel does (SO_LINGER 0: a reset). The shutdown
    first wakes a thread blocked reading it (a close alone would not)."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()


class CutProxy:
    def __init__(
        self, upstream: tuple[str, int], trigger: Callable[[str], bool], mode: str
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: one of {MODES}")
        self.upstream = upstream
        self.trigger = trigger
        self.mode = mode
        self.triggered = threading.Event()
        self.forwarded: list[str] = []  # request lines let through, in order
        self._down = threading.Event()
        self._closing = threading.Event()
        self._lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._listener = self._listen(0)
        self.port = self._listener.getsockname()[1]
        self._acceptor = self._start_acceptor()

    @property
    def url_base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ---- listening -----------------------------------------------------------------------

    def _listen(self, port: int) -> socket.socket:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(16)
        return listener

    def _start_acceptor(self) -> threading.Thread:
        listener = self._listener
        thread = threading.Thread(target=self._accept, args=(listener,), daemon=True)
        thread.start()
        return thread

    def _accept(self, listener: socket.socket) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(listener, selectors.EVENT_READ)
            while not self._closing.is_set() and not self._down.is_set():
                try:
                    if not selector.select(timeout=0.1):
                        continue
                    client, _ = listener.accept()
                except (OSError, ValueError):  # closed by _die: the server is gone
                    return
                threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _die(self) -> None:
        """The server is gone: its port refuses connections from now on."""
        self._down.set()
        with contextlib.suppress(OSError):
            self._listener.close()

    def revive(self) -> None:
        """The server is back on the same port: everything is forwarded again."""
        self._acceptor.join(timeout=5)
        self._listener = self._listen(self.port)
        self._down.clear()
        self._acceptor = self._start_acceptor()

    def close(self) -> None:
        self._closing.set()
        self._die()
        with self._lock:
            for conn in list(self._conns):
                _reset(conn)

    # ---- one client connection -----------------------------------------------------------

    def _serve(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        swallow = threading.Event()  # before-answer: the next answer is never relayed
        with self._lock:
            self._conns.add(client)
        buffered = b""
        try:
            while True:
                request, buffered = _read_request(client, buffered)
                if request is None:
                    return
                line = request.split(b"\r\n", 1)[0].decode("latin-1")
                if self._down.is_set():
                    return  # the server is dead: the request is cut, never forwarded
                fires = not self.triggered.is_set() and self.trigger(line)
                if fires:
                    self.triggered.set()
                if upstream is None:
                    upstream = socket.create_connection(self.upstream, timeout=30)
                    upstream.settimeout(None)
                    threading.Thread(
                        target=self._relay, args=(upstream, client, swallow), daemon=True
                    ).start()
                if fires and self.mode == "before-answer":
                    swallow.set()
                self.forwarded.append(line)
                upstream.sendall(request)
                if fires:
                    self._die()
        except OSError:
            return
        finally:
            _reset(client)
            if upstream is not None:
                _reset(upstream)
            with self._lock:
                self._conns.discard(client)

    def _relay(self, upstream: socket.socket, client: socket.socket, swallow: threading.Event):
        with contextlib.suppress(OSError):  # either side hung up: the copy just ends
            while data := upstream.recv(65536):
                if swallow.is_set():
                    # the server answered, so it has done the work: the client never hears
                    _reset(client)
                    return
                client.sendall(data)
        with contextlib.suppress(OSError):
            client.shutdown(socket.SHUT_WR)


_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length:\s*(\d+)", re.IGNORECASE)


def _read_request(sock: socket.socket, buffered: bytes) -> tuple[bytes | None, bytes]:
    """One whole request (head and Content-Length body) and what followed it; None at EOF."""
    while b"\r\n\r\n" not in buffered:
        data = sock.recv(65536)
        if not data:
            return None, b""
        buffered += data
    head, _, rest = buffered.partition(b"\r\n\r\n")
    match = _CONTENT_LENGTH.search(head)
    length = int(match.group(1)) if match else 0
    while len(rest) < length:
        data = sock.recv(65536)
        if not data:
            return None, b""
        rest += data
    return head + b"\r\n\r\n" + rest[:length], rest[length:]
