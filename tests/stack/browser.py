"""Headless Chromium (Debian's ``chromium`` package, installed by scripts/ci-setup), driven over
the DevTools protocol on a pipe (``--remote-debugging-pipe``: commands on fd 3, answers on fd 4,
each a JSON text ended by NUL). No chromedriver, no websocket, no PyPI package: the standard
library speaks it.

A ``Browser`` opens one tab; ``load(url)`` navigates and waits for the load event, recording
every console error, uncaught exception and log error, and every request the page makes.
Requests other than ``file:``/``data:``/``about:`` are failed before they leave the browser
(``Fetch`` intercepts them), and the browser's own background traffic is switched off by flags
and a proxy that goes nowhere: a page that asks the network fails its test, it never waits.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .common import ComponentUnavailable, Readiness

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")
TIMEOUT = 60.0  # seconds: only a hung browser reaches it


def executable() -> str | None:
    override = os.environ.get("SCHEMACLI_CHROMIUM")
    if override:
        return override if shutil.which(override) else None
    return next((found for name in CANDIDATES if (found := shutil.which(name))), None)


def probe_browser() -> Readiness:
    found = executable()
    if found is None:
        return Readiness(False, "chromium not on PATH (scripts/ci-setup installs Debian's package)")
    return Readiness(True, found)


@dataclass
class PageLoad:
    """What one page did while it loaded."""

    url: str
    errors: list[str] = field(default_factory=list)  # console errors, exceptions, log errors
    requests: list[str] = field(default_factory=list)  # every URL it asked for
    blocked: list[str] = field(default_factory=list)  # network URLs failed by Fetch


class Browser:
    """One headless Chromium with one tab. ``close()`` ends the process."""

    def __init__(self, *, width: int = 1280, height: int = 900) -> None:
        exe = executable()
        if exe is None:
            raise ComponentUnavailable("browser", probe_browser().detail)
        self.profile = tempfile.mkdtemp(prefix="schemacli-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def fds() -> None:  # in the child: the protocol's fds are 3 (in) and 4 (out)
            high_r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)  # out of 3's and 4's way
            high_w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
            os.dup2(high_r, 3)  # dup2 makes them inheritable
            os.dup2(high_w, 4)

        args = [
            exe,
            "--headless",
            "--remote-debugging-pipe",
            "--no-sandbox",  # root in CI: Chromium refuses its sandbox there
            "--disable-gpu",
            "--disable-dev-shm-usage",
            f"--user-data-dir={self.profile}",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-default-apps",
            "--disable-sync",
            "--disable-extensions",
            "--metrics-recording-only",
            "--mute-audio",
            # anything that still tries to leave goes to a closed port, never out
            "--proxy-server=127.0.0.1:9",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        self.log = Path(self.profile) / "chromium.log"
        with open(self.log, "wb") as log:
            try:
                self.proc = subprocess.Popen(
                    args,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    close_fds=False,  # our own fds are not inheritable (PEP 446); 3 and 4 are
                    preexec_fn=fds,
                )
            except OSError as exc:
                raise ComponentUnavailable("browser", f"{exe} did not start: {exc}") from exc
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        try:
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.call(
                "Target.attachToTarget", {"targetId": target, "flatten": True}
            )["sessionId"]
            for domain in ("Runtime", "Log", "Page", "Network"):
                self.call(f"{domain}.enable", session=self.session)
            self.call(
                "Fetch.enable",
                {
                    "patterns": [
                        {"urlPattern": "http*"},
                        {"urlPattern": "ws*"},
                        {"urlPattern": "ftp*"},
                    ]
                },
                session=self.session,
            )
            self.call(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                session=self.session,
            )
        except Exception as exc:
            tail = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            self.close()
            raise ComponentUnavailable(
                "browser", f"no DevTools answer: {exc}", log_tail=tail
            ) from exc

    # -- the protocol ------------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the browser did not answer in time")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise ConnectionError("the browser closed its DevTools pipe")
                self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def call(
        self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None
    ) -> dict[str, Any]:
        """Send one command and return its result (events that arrive meanwhile are kept)."""
        self._next_id += 1
        ident = self._next_id
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        self._send(message)
        deadline = time.monotonic() + TIMEOUT
        while True:
            answer = self._receive(deadline)
            if answer.get("id") == ident:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self._events.append(answer)

    def _handle(self, event: dict[str, Any], load: PageLoad) -> None:
        """Record what an event says about the page; fail an intercepted network request."""
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            words = " ".join(
                str(a.get("value", a.get("description", ""))) for a in params.get("args", [])
            )
            load.errors.append(f"console.{params['type']}: {words}")
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            described = (details.get("exception") or {}).get("description") or details.get("text")
            load.errors.append(f"uncaught: {described}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            where = entry.get("url", "")
            load.errors.append(f"log ({entry.get('source')}): {entry.get('text')} {where}")
        elif method == "Network.requestWillBeSent":
            load.requests.append(params.get("request", {}).get("url", ""))
        elif method == "Fetch.requestPaused":
            load.blocked.append(params.get("request", {}).get("url", ""))
            self.call(
                "Fetch.failRequest",
                {"requestId": params["requestId"], "errorReason": "BlockedByClient"},
                session=self.session,
            )

    # -- what tests use ----------------------------------------------------------------------
    def load(self, url: str) -> PageLoad:
        """Navigate the tab to ``url`` and wait for its load event (and the script it runs)."""
        load = PageLoad(url)
        self._events.clear()
        result = self.call("Page.navigate", {"url": url}, session=self.session)
        if result.get("errorText"):
            load.errors.append(f"navigation: {result['errorText']}")
            return load
        deadline = time.monotonic() + TIMEOUT
        loaded = False
        while not loaded:
            while self._events:
                event = self._events.pop(0)
                self._handle(event, load)
                loaded = loaded or event.get("method") == "Page.loadEventFired"
            if not loaded:
                self._events.append(self._receive(deadline))
        # what arrived with the load event: a last round trip flushes the queue
        self.evaluate("1")
        while self._events:
            self._handle(self._events.pop(0), load)
        return load

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-able values)."""
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=self.session,
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        """A PNG of the whole page (beyond the viewport)."""
        data = self.call(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True},
            session=self.session,
        )["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        with contextlib.suppress(OSError):  # the browser is gone already: nothing to close
            self._send({"id": 0, "method": "Browser.close"})
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):  # closed already (the browser went first)
                os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)
