"""A Spark standalone cluster: one master and N workers, from pyspark's own distribution.

pyspark from PyPI is a whole Spark: ``bin/spark-class`` starts the standalone daemons
(``org.apache.spark.deploy.master.Master``, ``...deploy.worker.Worker``). Each daemon runs in
its own process group, bound to 127.0.0.1 on free ports (the master's on ``port``/``webui_port``
when given), with 1 core and a bounded memory per worker. A worker starts its executors as
child processes (``ExecutorRunner``'s ``ProcessBuilder``), so they share its process group:
stopping or SIGKILLing the group takes the executors with it.

Healthy means: the master's ``/json/`` lists every worker ALIVE.

Executors run Python with the interpreter the *driver* names (``PYSPARK_PYTHON`` or
``spark.pyspark.python`` on submit, see converters/deploy.child_env); the workers get
``PYSPARK_PYTHON`` too, for tools that read it from the worker's environment. Connector jars
reach executors through the application's ``--jars`` / ``spark.jars`` (``tests.stack.spark
.spark_jars()``), served by the driver: the cluster itself needs no extra jar.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from .common import (
    JVM_BASE_OPTS,
    ComponentUnavailable,
    ManagedProcess,
    free_port,
    java,
    spawn,
    tail,
    wait_until,
)

START_TIMEOUT = 240.0  # only a hang takes longer, even on a slow machine
DAEMON_MEMORY = "256m"  # heap of the master and worker daemons themselves (not executors)


def spark_home() -> Path:
    """pyspark's directory, which is a Spark distribution (bin/, jars/). Raises
    ComponentUnavailable when pyspark is not installed."""
    try:
        import pyspark
    except ImportError as exc:
        raise ComponentUnavailable(
            "spark-cluster", "pyspark is not installed (pip install pyspark==4.0.1)"
        ) from exc
    home = Path(pyspark.__file__).resolve().parent
    if not (home / "bin" / "spark-class").is_file():
        raise ComponentUnavailable("spark-cluster", f"no bin/spark-class in {home}")
    return home


def master_json(webui_port: int, timeout: float = 5.0) -> dict:
    """The master's state as its web UI serves it (workers, active and completed apps)."""
    url = f"http://127.0.0.1:{webui_port}/json/"
    with urllib.request.urlopen(url, timeout=timeout) as answer:  # noqa: S310 - loopback
        return json.load(answer)


def _daemon_env(workdir: Path) -> dict[str, str]:
    conf = workdir / "conf"  # empty: no spark-defaults.conf or spark-env.sh of the machine's
    conf.mkdir(parents=True, exist_ok=True)
    home = spark_home()
    javabin = Path(java()).resolve()
    return {
        "SPARK_HOME": str(home),
        "SPARK_CONF_DIR": str(conf),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOCAL_HOSTNAME": "127.0.0.1",
        "SPARK_DAEMON_MEMORY": DAEMON_MEMORY,
        "SPARK_DAEMON_JAVA_OPTS": " ".join(JVM_BASE_OPTS),
        "JAVA_HOME": str(javabin.parent.parent),
        "PYSPARK_PYTHON": sys.executable,
    }


@dataclass
class SparkCluster:
    """A running standalone cluster. ``master_url`` is what ``--master`` takes; ``workers[i]``
    is worker i's process (None once killed or stopped); ``webui_port`` serves ``/json/``."""

    workdir: Path
    master_port: int
    webui_port: int
    master: ManagedProcess
    cores: int
    memory: str
    detach: bool = False
    workers: list[ManagedProcess | None] = field(default_factory=list)
    worker_ui_ports: list[int] = field(default_factory=list)

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.master_port}"

    @property
    def log(self) -> Path:
        """The master's log (the fixture's tail on failure); workers log to worker-N.log."""
        return self.master.log

    def state(self) -> dict:
        """The master's JSON: ``workers``, ``activeapps``, ``completedapps``, ..."""
        return master_json(self.webui_port)

    def alive_workers(self) -> list[int]:
        """Indices of this cluster's workers the master lists ALIVE."""
        ports = {f"http://127.0.0.1:{p}": i for i, p in enumerate(self.worker_ui_ports)}
        alive = [
            ports[w["webuiaddress"]]
            for w in self.state().get("workers", [])
            if w.get("state") == "ALIVE" and w.get("webuiaddress") in ports
        ]
        return sorted(alive)

    def start_worker(self, *, wait: bool = True) -> int:
        """Start one more worker; return its index. ``wait``: until the master lists it ALIVE.
        Raises ComponentUnavailable (with the worker's log tail) if it does not register."""
        index = len(self.workers)
        ui_port = free_port()
        work = self.workdir / f"worker-{index}"
        work.mkdir(parents=True, exist_ok=True)
        argv = [
            str(spark_home() / "bin" / "spark-class"),
            "org.apache.spark.deploy.worker.Worker",
            "--host",
            "127.0.0.1",
            "--cores",
            str(self.cores),
            "--memory",
            self.memory,
            "--webui-port",
            str(ui_port),
            "--work-dir",
            str(work),
            self.master_url,
        ]
        process = spawn(
            f"spark-worker-{index}",
            argv,
            log=self.workdir / f"worker-{index}.log",
            cwd=work,
            env=_daemon_env(self.workdir),
            detach=self.detach,
        )
        self.workers.append(process)
        self.worker_ui_ports.append(ui_port)
        if wait:
            self._wait_alive(process, {index})
        return index

    def wait_worker(self, index: int) -> None:
        """Until the master lists worker ``index`` (started with ``wait=False``) ALIVE. Raises
        ComponentUnavailable (with the worker's log tail) if it does not register."""
        process = self.workers[index]
        assert process is not None, f"worker {index} was stopped"
        self._wait_alive(process, {index})

    def _wait_alive(self, process: ManagedProcess, indices: set[int]) -> None:
        wait_until(
            "spark-cluster",
            lambda: indices <= set(self.alive_workers()) and self.master.alive(),
            process=process,
            timeout=START_TIMEOUT,
            what=f"registered with the master as ALIVE (workers {sorted(indices)})",
        )

    def kill_worker(self, index: int) -> None:
        """SIGKILL worker ``index`` and its whole process group, its executors with it (they
        are its children, in its group). The master sees it go at once (connection lost)."""
        process = self.workers[index]
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):  # the group already died on its own
            os.killpg(process.pid, signal.SIGKILL)
        process.popen.wait(timeout=120)  # SIGKILLed: only a hang takes longer
        process.stop(timeout=1)  # unregisters it; the group is already gone
        self.workers[index] = None

    def executors(self) -> list[int]:
        """Pids of the executor JVMs on this cluster's live workers (each is in its worker's
        process group)."""
        return [pid for w in self.workers if w is not None for pid in executors_of(w.pid)]

    def stop(self) -> None:
        """Stop every worker (executors included), then the master: TERM, then KILL. Idempotent."""
        for index, process in enumerate(self.workers):
            if process is not None:
                process.stop(timeout=10)
                self.workers[index] = None
        self.master.stop(timeout=10)


def executors_of(group: int) -> list[int]:
    """Pids of executor JVMs in process group ``group``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            pgid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[2])
        except (OSError, ValueError, IndexError):
            continue
        if pgid == group and b"CoarseGrainedExecutorBackend" in cmdline:
            found.append(int(proc.name))
    return found


def start_spark_cluster(
    workdir: Path,
    workers: int = 2,
    cores: int = 1,
    memory: str = "1g",
    detach: bool = False,
    *,
    port: int | None = None,
    webui_port: int | None = None,
) -> SparkCluster:
    """Start a master and ``workers`` workers (``cores`` cores, ``memory`` for executors each)
    on 127.0.0.1; return once the master lists them all ALIVE.

    ``detach`` leaves the daemons running after this process exits (scripts/devstack).
    Raises ComponentUnavailable (with the log tail) if a daemon cannot start or register; what
    did start is stopped first.
    """
    home = spark_home()
    workdir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    webui_port = webui_port or free_port()
    env = _daemon_env(workdir)
    master = spawn(
        "spark-master",
        [
            str(home / "bin" / "spark-class"),
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            str(webui_port),
        ],
        log=workdir / "master.log",
        cwd=workdir,
        env=env,
        detach=detach,
    )
    cluster = SparkCluster(workdir, port, webui_port, master, cores, memory, detach)
    try:
        wait_until(
            "spark-cluster",
            lambda: master_json(webui_port).get("status") == "ALIVE",
            process=master,
            timeout=START_TIMEOUT,
            what="serving its state on the web UI",
        )
        # workers start side by side, then wait together: one JVM start, not N in a row
        started = [cluster.start_worker(wait=False) for _ in range(workers)]
        for index in started:
            process = cluster.workers[index]
            assert process is not None
            cluster._wait_alive(process, set(started))
    except ComponentUnavailable as exc:
        cluster.stop()
        logs = "\n".join(f"--- {p.name} ---\n{tail(p, 15)}" for p in sorted(workdir.glob("*.log")))
        raise ComponentUnavailable("spark-cluster", str(exc).split("\n")[0], log_tail=logs) from exc
    except BaseException:
        cluster.stop()
        raise
    return cluster


def wait_for_app(
    cluster: SparkCluster, name_part: str, *, completed: bool, timeout: float = 300.0
) -> dict:
    """The master's record of the first application whose name contains ``name_part``
    (active, or ``completed``); raises AssertionError after ``timeout`` s."""
    key = "completedapps" if completed else "activeapps"
    deadline = time.monotonic() + timeout
    apps: list[dict] = []
    while time.monotonic() < deadline:
        apps = cluster.state().get(key, [])
        for app in apps:
            if name_part in str(app.get("name", "")):
                return app
        time.sleep(0.5)
    names = [a.get("name") for a in apps]
    raise AssertionError(f"no {key} entry named *{name_part}* after {timeout:.0f} s: {names}")
