"""What every component launcher shares: the cache, Maven resolution, ports, processes, logs.

Everything downloaded lives under ``.cache/`` (git-ignored) of the work tree, so pytest fixtures
and ``scripts/devstack`` use the same files. Resolution is offline-friendly: a resolved
component is recognised by a stamp file and never asks the network again.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STACK_DIR = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("SCHEMACLI_STACK_CACHE", ROOT / ".cache"))
JARS = CACHE / "jars"

# JVMs share a 2-core, 24 GiB machine with Spark and the Java oracle: keep them small and quiet.
JVM_BASE_OPTS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto")


@dataclass(frozen=True)
class Readiness:
    """Whether a component can start here (tools and cached files present), and why (not)."""

    ready: bool
    detail: str


class ComponentUnavailable(RuntimeError):
    """A component could not be obtained or started. ``log_tail`` says why, when there is a log."""

    def __init__(self, component: str, message: str, *, log_tail: str = "") -> None:
        self.component = component
        self.log_tail = log_tail
        text = f"{component}: {message}"
        if log_tail:
            text += f"\n--- last lines of the {component} log ---\n{log_tail}"
        super().__init__(text)


@contextlib.contextmanager
def cache_lock(name: str) -> Iterator[None]:
    """Serialise resolution of one component across processes (several test runs share .cache)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f".{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _stamp_of(*inputs: Path) -> str:
    digest = hashlib.sha256()
    for path in inputs:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def maven_copy(
    component: str, pom: Path, dest: Path, *, keep: Callable[[Path], bool] = bool
) -> list[Path]:
    """Resolve the runtime dependencies of ``pom`` into ``dest`` once; return the jars there.

    A stamp (hash of the pom) marks a completed resolution, so later calls touch neither Maven
    nor the network. Maven is tried offline first (the local repository may already hold
    everything), then online. Raises ComponentUnavailable when mvn is missing or fails.
    """
    stamp = dest / ".resolved"
    wanted = _stamp_of(pom)
    if stamp.is_file() and stamp.read_text() == wanted:
        return sorted(dest.glob("*.jar"))
    with cache_lock(f"mvn-{dest.name}"):
        if stamp.is_file() and stamp.read_text() == wanted:
            return sorted(dest.glob("*.jar"))
        mvn = shutil.which("mvn")
        if mvn is None:
            raise ComponentUnavailable(component, "`mvn` is not on PATH; install Maven 3.8+")
        staging = dest.with_name(dest.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        log = CACHE / "logs" / f"mvn-{dest.name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        base = [
            mvn,
            "-B",
            "-f",
            str(pom),
            "dependency:copy-dependencies",
            f"-DoutputDirectory={staging}",
            "-DincludeScope=runtime",
        ]
        for attempt in (["-o"], []):
            with open(log, "w") as out:
                done = subprocess.run(
                    base + attempt, stdout=out, stderr=subprocess.STDOUT, cwd=STACK_DIR, check=False
                )
            if done.returncode == 0:
                break
        else:
            raise ComponentUnavailable(
                component, f"mvn could not resolve {pom.name}", log_tail=tail(log)
            )
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        for jar in sorted(staging.glob("*.jar")):
            if keep(jar):
                jar.rename(dest / jar.name)
        shutil.rmtree(staging, ignore_errors=True)
        stamp.write_text(wanted)
        return sorted(dest.glob("*.jar"))


def java() -> str:
    """The java launcher (JAVA_HOME first). Raises ComponentUnavailable without a JDK."""
    home = os.environ.get("JAVA_HOME")
    candidate = Path(home, "bin", "java") if home else None
    if candidate and candidate.is_file():
        return str(candidate)
    found = shutil.which("java")
    if found is None:
        raise ComponentUnavailable("java", "no `java` on PATH and no JAVA_HOME; install a JDK 17+")
    return found


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def tail(path: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of a log file, or a note that it does not exist."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"(no log at {path})"
    return "\n".join(text.splitlines()[-lines:])


# --- processes -------------------------------------------------------------------------------

_LIVE: dict[int, ManagedProcess] = {}
# Set when the session ends: starts still waiting for health give up at once.
SHUTTING_DOWN = threading.Event()


@dataclass
class ManagedProcess:
    """A component's OS process, started in its own session so stopping it kills the whole group."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    _stopped: bool = field(default=False, repr=False)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM the process group, SIGKILL it after ``timeout`` seconds. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        _LIVE.pop(self.pid, None)
        stop_group(self.pid, timeout=timeout)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=1)


def stop_group(pid: int, timeout: float = 15.0) -> None:
    """Stop the process group led by ``pid`` (as started by ``spawn``): TERM, wait, KILL."""
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return
        # A child of ours stays a zombie (and killpg(0) keeps succeeding) until reaped.
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def spawn(
    name: str,
    argv: list[str],
    *,
    log: Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    detach: bool = False,
) -> ManagedProcess:
    """Start ``argv`` in a new session with stdout+stderr appended to ``log``.

    Unless ``detach`` (scripts/devstack), the process is registered for stopping at interpreter
    exit and on SIGTERM/SIGINT/SIGHUP, so neither a failing test nor Ctrl-C leaves a JVM behind.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        popen = subprocess.Popen(
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
    process = ManagedProcess(name, popen, log)
    if not detach:
        install_stop_handlers()
        _LIVE[popen.pid] = process
    return process


def stop_all() -> None:
    """Stop every process ``spawn`` registered, newest first; abandon starts in progress."""
    SHUTTING_DOWN.set()
    for process in reversed(list(_LIVE.values())):
        process.stop()


_ATEXIT_INSTALLED = False
_SIGNALS_INSTALLED = False


def install_stop_handlers() -> None:
    """Stop registered components at interpreter exit and on SIGTERM/SIGHUP. Idempotent.

    Signal handlers can only be set from the main thread; call this there before starting
    components from other threads (atexit alone covers them otherwise).
    """
    global _ATEXIT_INSTALLED, _SIGNALS_INSTALLED
    if not _ATEXIT_INSTALLED:
        _ATEXIT_INSTALLED = True
        atexit.register(stop_all)
    if _SIGNALS_INSTALLED or threading.current_thread() is not threading.main_thread():
        return
    _SIGNALS_INSTALLED = True
    for signum in (signal.SIGTERM, signal.SIGHUP):
        previous = signal.getsignal(signum)

        def handler(sig: int, frame: object, previous: object = previous) -> None:
            stop_all()
            if callable(previous):
                previous(sig, frame)
            else:
                # Like Ctrl-C: pytest aborts the session (a SystemExit raised inside a test
                # would only fail that test and carry on) and unwinds the fixtures.
                raise KeyboardInterrupt(f"signal {sig}")

        signal.signal(signum, handler)
    # SIGINT stays Python's KeyboardInterrupt: pytest unwinds fixtures (which stop their
    # components) and atexit catches anything left.


def wait_until(
    component: str, check: Callable[[], bool], *, process: ManagedProcess, timeout: float, what: str
) -> None:
    """Poll ``check`` until it returns True; fail fast if the process dies, slow after timeout."""
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while time.monotonic() < deadline:
        if SHUTTING_DOWN.is_set():
            raise ComponentUnavailable(component, f"start abandoned before {what}: shutting down")
        if not process.alive():
            raise ComponentUnavailable(
                component,
                f"exited with code {process.popen.returncode} before {what}",
                log_tail=tail(process.log),
            )
        try:
            if check():
                return
        except Exception as exc:  # noqa: BLE001 - any failure of a probe just means "not yet"
            last_error = exc
        time.sleep(0.25)
    reason = f" (last probe error: {last_error})" if last_error else ""
    raise ComponentUnavailable(
        component, f"not {what} after {timeout:.0f} s{reason}", log_tail=tail(process.log)
    )
