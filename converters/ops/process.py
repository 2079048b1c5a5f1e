"""Which process is the converter: its pid files, checked before anything is signalled.

``submit.pid`` names spark-submit (started by ``deploy`` as the leader of its own session and
process group), ``driver.pid`` the Python driver (written by the job). A pid file can outlive its
process, and the kernel reuses pids: signalling whatever process now has that pid could stop an
unrelated program, and ``-1`` or ``0`` would signal every process we may signal or our own group.
So a pid counts as the converter only when

- it is a plausible pid (2 .. :data:`PID_MAX`); anything else is a corrupt pid file (InputError);
- the process is alive and its command line is spark-submit (``spark-submit`` before the script
  execs the JVM, ``SparkSubmit`` after) with this deployment's ``--name``
  (``schemacli-migrate-<state dir name>``);
- it leads its own process group (``deploy`` starts it with ``start_new_session``);
- its start time (``/proc/<pid>/stat``) is the one ``deploy`` recorded in ``deploy.json``
  (deployments made before it was recorded are checked without it).

The driver counts when it is alive, in spark-submit's session and runs ``job.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemacli.errors import InputError, Location
from schemacli.textfile import UnreadableInput, read_input

PID_MAX = 4_194_304  # Linux's PID_MAX_LIMIT; other systems stay far below it
SUBMIT_PID = "submit.pid"
DRIVER_PID = "driver.pid"


def app_name(state_dir: Path) -> str:
    """The ``--name`` spark-submit gets (and how its process is recognised)."""
    return f"schemacli-migrate-{state_dir.name}"


_PID_FILE_LIMIT = 4096  # a pid and a newline; more is a corrupt file, not a pid file


def read_pid(path: Path) -> int | None:
    """The pid in ``path``; None when there is no such file. A file that holds no plausible pid
    is an InputError naming it (it is never signalled)."""
    hint = (
        f"Delete {path}: the converter writes it when it starts. If a converter still runs, "
        "find it with `ps` and stop it by hand."
    )

    try:  # the bounded reader: a FIFO or a device put there is named, never read (or waited on)
        raw = read_input(path, limit=_PID_FILE_LIMIT, what="pid file")
    except UnreadableInput as exc:
        if exc.reason == "missing":
            return None
        raise InputError(
            f"cannot read the pid file: {exc.message}",
            location=exc.location,
            hint="Check the state directory's permissions (--state-dir)."
            if exc.reason == "permission"
            else exc.hint,
        ) from exc
    text = raw.decode("ascii", errors="replace").strip()
    if not text.isdigit() or len(text) > 10 or not 2 <= int(text) <= PID_MAX:
        shown = text if len(text) <= 40 else text[:40] + "…"
        raise InputError(
            f"corrupt pid file: {shown!r} is not a process id (2..{PID_MAX})",
            location=Location(source=str(path), line=1, column=1),
            hint=hint,
        )
    return int(text)


def alive(pid: int) -> bool:
    """Whether ``pid`` exists (a zombie child of ours counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux ``/proc``), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(errors="replace")
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()  # after "pid (comm)": field 3 onwards
    try:
        return int(fields[19])  # field 22, starttime
    except (IndexError, ValueError):
        return None


def command_line(pid: int) -> str | None:
    """The process's arguments joined by spaces (``/proc``, else ``ps``), or None if unknown."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        return raw.replace(b"\0", b" ").decode(errors="replace").strip()
    except FileNotFoundError:
        if Path("/proc/self").exists():
            return None  # a Linux /proc without this pid: gone
    except OSError:
        return None
    if sys.platform == "win32":
        return None
    try:
        out = subprocess.run(
            ["ps", "-o", "args=", "-p", str(pid)], capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


@dataclass(frozen=True)
class JobProcess:
    """What the pid files of a state dir name, checked."""

    submit: int | None  # the pid in submit.pid (None: no file)
    driver: int | None  # the driver's pid, only when it checks out
    running: bool  # submit is alive and is this converter's spark-submit
    stale: str | None = None  # why a live pid in submit.pid is not the converter


def recorded_start(deploy_info: dict[str, Any]) -> tuple[int | None, int | None]:
    """(pid, start time) that ``deploy`` recorded in deploy.json, if any (older: none)."""
    submit = deploy_info.get("submit")
    if not isinstance(submit, dict):
        return None, None
    pid, start = submit.get("pid"), submit.get("start_time")
    ok = isinstance(pid, int) and isinstance(start, int)
    return (pid, start) if ok else (None, None)


def find(state_dir: Path, deploy_info: dict[str, Any]) -> JobProcess:
    """Read and check ``submit.pid``/``driver.pid`` of ``state_dir`` (see module docstring)."""
    submit = read_pid(state_dir / SUBMIT_PID)
    driver = read_pid(state_dir / DRIVER_PID)
    if submit is None or not alive(submit):
        return JobProcess(submit, None, False)
    why = _not_the_job(submit, state_dir, deploy_info)
    if why is not None:
        return JobProcess(submit, None, False, stale=why)
    if driver is not None and not _is_driver(driver, submit):
        driver = None
    return JobProcess(submit, driver, True)


def _not_the_job(pid: int, state_dir: Path, deploy_info: dict[str, Any]) -> str | None:
    recorded_pid, recorded = recorded_start(deploy_info)
    if recorded_pid == pid and recorded is not None:
        now = start_time(pid)
        if now is not None and now != recorded:
            return f"pid {pid} was reused by a process started after the converter's"
    cmd = command_line(pid)
    if cmd is None:
        return f"cannot tell what pid {pid} runs (no /proc, no ps)"
    if "spark-submit" not in cmd and "SparkSubmit" not in cmd:
        return f"pid {pid} is not spark-submit (it runs {_short(cmd)})"
    if app_name(state_dir) not in cmd:
        return f"pid {pid} is spark-submit, but not of this converter ({app_name(state_dir)})"
    try:
        if os.getpgid(pid) != pid:
            return f"pid {pid} does not lead its own process group, as deploy starts it"
    except ProcessLookupError:
        return f"pid {pid} is gone"
    except OSError:
        return f"cannot read the process group of pid {pid}"
    return None


def _is_driver(pid: int, submit: int) -> bool:
    if not alive(pid):
        return False
    try:
        if os.getsid(pid) != submit:
            return False
    except OSError:
        return False
    cmd = command_line(pid)
    return cmd is not None and "job.py" in cmd


def _short(text: str, width: int = 60) -> str:
    return repr(text if len(text) <= width else text[:width] + "…")
