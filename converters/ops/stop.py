"""Stop the converter deployed in a state directory: SIGTERM, wait, SIGKILL if it must.

Only the process that ``deploy`` started is signalled (``converters.ops.process`` checks who a
pid names); the pid files are removed once it is gone.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from converters.ops import process
from converters.state import has_state, no_state, read_state
from schemacli.errors import InputError, Location


@dataclass(frozen=True)
class Stopped:
    pid: int | None
    how: str  # "not running" | "stopped" | "killed"
    seconds: float


class StalePidFile(InputError):
    """``submit.pid`` names a live process that is not the converter: nothing is signalled."""


def stop(state_dir: Path, *, timeout: float = 60.0) -> Stopped:
    """SIGTERM the job's driver (it stops the query after the current batch, committing it), wait
    up to ``timeout`` s for spark-submit to exit, then SIGKILL its process group.

    Only a process that checks out as this converter is signalled (``converters.ops.process``):
    a corrupt pid file is an InputError, a pid now used by another process a StalePidFile.
    """
    if not has_state(state_dir):
        raise no_state(state_dir)
    proc = process.find(state_dir, read_state(state_dir / "deploy.json"))
    pid_file = state_dir / process.SUBMIT_PID
    if proc.stale is not None:
        raise StalePidFile(
            f"stale pid file: {proc.stale}; nothing was signalled",
            location=Location(source=str(pid_file)),
            hint=f"The converter is not running under that pid: delete {pid_file} (and "
            f"{process.DRIVER_PID} next to it). If a converter still runs, find it with "
            "`ps` and stop it by hand.",
        )
    start = time.monotonic()
    submit = proc.submit
    if submit is None or not proc.running:
        for p in (process.SUBMIT_PID, process.DRIVER_PID):
            (state_dir / p).unlink(missing_ok=True)
        return Stopped(submit, "not running", 0.0)
    os.kill(proc.driver if proc.driver is not None else submit, signal.SIGTERM)
    while time.monotonic() - start < timeout:
        if not process.alive(submit):
            break
        time.sleep(0.2)
    how = "stopped"
    if process.alive(submit):
        try:
            # spark-submit leads its own group (checked by process.find): never another's
            if os.getpgid(submit) == submit:
                os.killpg(submit, signal.SIGKILL)
            else:
                os.kill(submit, signal.SIGKILL)
        except ProcessLookupError:
            pass
        how = "killed"
    for p in (process.SUBMIT_PID, process.DRIVER_PID):
        (state_dir / p).unlink(missing_ok=True)
    return Stopped(submit, how, round(time.monotonic() - start, 1))
