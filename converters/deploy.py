"""Operate the converter job: build and run the spark-submit command, report status, stop it.

The state of one deployment lives in a state directory (default
``.schemacli/migrate/<v2 topic>--<v1 topic>``): the resolved mapping (schemas inline, so the
job needs no files but this one), the Python bundle shipped with ``--py-files``, the pid files,
the job's log (detached runs), ``progress.json`` (written by the job) and, unless ``--checkpoint``
points elsewhere, the Spark checkpoint.

Secrets never go on the command line nor into logs: registry credentials reach the driver as
``SCHEMACLI_REGISTRY_*`` environment variables, Kafka client secrets (SASL, TLS passwords) as a
properties file whose path alone is passed. The printed command shows URLs without user info.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Mapping as AnyMapping
from dataclasses import dataclass, field
from pathlib import Path

from converters.clientlog import KAFKA_LOGGER
from converters.mapping import Mapping, to_dict
from converters.statefile import read_state
from schemacli.errors import InputError, UsageError

SPARK_VERSION = "4.0.1"
PACKAGES = (
    f"org.apache.spark:spark-avro_2.13:{SPARK_VERSION}",
    f"org.apache.spark:spark-sql-kafka-0-10_2.13:{SPARK_VERSION}",
)
BUNDLED = ("converters", "spark_avro", "schemacli")
SECRET_ENV_PREFIXES = ("SCHEMACLI_REGISTRY_",)
MASTER = re.compile(r"^(local(\[(\d+|\*)(,\d+)?\])?|yarn|(k8s|spark|mesos)://\S+)$")


def default_state_dir(mapping: Mapping, base: Path | None = None) -> Path:
    base = base or Path(".schemacli") / "migrate"
    return base / f"{mapping.source.topic or 'v2'}--{mapping.target.topic or 'v1'}"


@dataclass(frozen=True)
class DeployConfig:
    """Everything ``deploy`` needs, validated once (``check``)."""

    mapping_path: Path
    bootstrap: str
    registry_url: str
    state_dir: Path
    master: str = "local[2]"
    checkpoint: str | None = None  # a path or a URI (hdfs://, s3a://): kept as given
    jars: tuple[str, ...] = ()  # local jar paths; when empty, --packages (Maven at submit time)
    packages: tuple[str, ...] = PACKAGES
    conf: tuple[str, ...] = ()  # k=v Spark confs
    kafka_properties: Path | None = None
    starting_offsets: str = "earliest"
    trigger_seconds: float = 1.0
    max_offsets_per_trigger: int | None = None
    available_now: bool = False
    spark_submit: str | None = None
    extra_env: AnyMapping[str, str] = field(default_factory=dict, repr=False)

    @property
    def checkpoint_dir(self) -> str:
        return self.checkpoint or str(self.state_dir / "checkpoint")

    def check(self) -> None:
        """Raise UsageError for values spark-submit would choke on later."""
        local = local_checkpoint(self.checkpoint_dir)
        if local is not None and local.exists() and not local.is_dir():
            raise UsageError(
                f"--checkpoint {self.checkpoint_dir!r} is a file, not a directory",
                hint="Name a directory (created if missing), e.g. <state-dir>/checkpoint, or a "
                "URI such as hdfs:///checkpoints/taxi-rides.",
            )
        if not MASTER.match(self.master):
            raise UsageError(
                f"unknown Spark master {self.master!r}",
                hint="Use local[2], yarn, k8s://https://host:port or spark://host:port.",
            )
        for item in self.conf:
            if "=" not in item:
                raise UsageError(
                    f"--conf {item!r} is not key=value", hint="e.g. --conf spark.executor.memory=2g"
                )
        if self.kafka_properties is not None and not self.kafka_properties.is_file():
            raise InputError(
                f"Kafka properties file {str(self.kafka_properties)!r} does not exist",
                hint="Give a file of k=v lines (e.g. security.protocol=SASL_SSL).",
            )
        if self.kafka_properties is not None:
            from converters.job import read_properties

            read_properties(str(self.kafka_properties))  # readable UTF-8, before spark-submit
        if "@" in self.bootstrap:
            raise UsageError(
                "the bootstrap servers must not carry credentials",
                hint="Put SASL settings in a --kafka-properties file.",
            )


def find_spark_submit(explicit: str | None = None) -> str:
    """spark-submit: ``explicit``, $SPARK_HOME/bin, PATH, or the one pyspark ships."""
    if explicit:
        return explicit
    home = os.environ.get("SPARK_HOME")
    if home and (Path(home) / "bin" / "spark-submit").exists():
        return str(Path(home) / "bin" / "spark-submit")
    found = shutil.which("spark-submit")
    if found:
        return found
    try:
        import pyspark
    except ImportError:
        raise UsageError(
            "spark-submit not found", hint="Install pyspark==4.0.1 or set SPARK_HOME."
        ) from None
    return str(Path(pyspark.__file__).parent / "bin" / "spark-submit")


def prepare(cfg: DeployConfig, mapping: Mapping) -> dict[str, Path]:
    """Write the state directory: resolved mapping (schemas inline) and the Python bundle."""
    cfg.state_dir.mkdir(parents=True, exist_ok=True)
    resolved = cfg.state_dir / "mapping.json"
    resolved.write_text(json.dumps(to_dict(mapping, inline_schemas=True), indent=2))
    bundle = cfg.state_dir / "schemacli-bundle.zip"
    root = Path(__file__).resolve().parent.parent
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as zf:
        for package in BUNDLED:
            for path in sorted((root / package).rglob("*.py")):
                zf.write(path, path.relative_to(root).as_posix())
    return {
        "mapping": resolved,
        "bundle": bundle,
        "job": Path(__file__).resolve().parent / "job.py",
    }


def build_command(cfg: DeployConfig, files: AnyMapping[str, Path]) -> list[str]:
    """The spark-submit argv. Holds no secret (see module docstring)."""
    from schemacli.registry.settings import strip_userinfo

    cmd = [
        find_spark_submit(cfg.spark_submit),
        "--master",
        cfg.master,
        "--name",
        f"schemacli-migrate-{cfg.state_dir.name}",
    ]
    if cfg.jars:
        cmd += ["--jars", ",".join(cfg.jars)]
    else:
        cmd += ["--packages", ",".join(cfg.packages)]
    cmd += ["--py-files", str(files["bundle"])]
    if not cfg.master.startswith("local"):
        shipped = [str(files["mapping"])] + (
            [str(cfg.kafka_properties)] if cfg.kafka_properties else []
        )
        cmd += ["--files", ",".join(shipped)]
    for item in ("spark.ui.showConsoleProgress=false", *cfg.conf):
        cmd += ["--conf", item]
    local = cfg.master.startswith("local")
    mapping_arg = str(files["mapping"]) if local else files["mapping"].name
    cmd += [
        str(files["job"]),
        "--mapping",
        mapping_arg,
        "--bootstrap",
        cfg.bootstrap,
        "--registry",
        strip_userinfo(cfg.registry_url),
        "--checkpoint",
        str(cfg.checkpoint_dir),
        "--state-dir",
        str(cfg.state_dir),
        "--starting-offsets",
        cfg.starting_offsets,
        "--trigger-seconds",
        str(cfg.trigger_seconds),
    ]
    if cfg.max_offsets_per_trigger:
        cmd += ["--max-offsets-per-trigger", str(cfg.max_offsets_per_trigger)]
    if cfg.available_now:
        cmd += ["--available-now"]
    if cfg.kafka_properties:
        props = str(cfg.kafka_properties) if local else cfg.kafka_properties.name
        cmd += ["--kafka-properties", props]
    return cmd


def child_env(cfg: DeployConfig) -> dict[str, str]:
    """The environment of spark-submit: ours, the venv's Python for the driver and executors
    (local masters), the registry credentials (from the URL's user info, if any)."""
    from urllib.parse import unquote, urlsplit

    env = dict(os.environ)
    env.update(cfg.extra_env)
    if cfg.master.startswith("local"):
        env.setdefault("PYSPARK_PYTHON", sys.executable)
        env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    parts = urlsplit(cfg.registry_url)
    if parts.username:
        env["SCHEMACLI_REGISTRY_USER"] = unquote(parts.username)
        if parts.password:
            env["SCHEMACLI_REGISTRY_PASSWORD"] = unquote(parts.password)
    return env


def secret_env_names(env: AnyMapping[str, str]) -> list[str]:
    """Names (never values) of the credential variables the job will see."""
    return sorted(
        k for k in env if k.startswith(SECRET_ENV_PREFIXES) and k != "SCHEMACLI_REGISTRY_URL"
    )


def render_command(cmd: list[str]) -> str:
    """The command for people: one ``--option value`` per line, shell-quoted."""
    lines: list[str] = []
    for arg in cmd:
        quoted = shlex.quote(arg)
        opens = bool(lines) and lines[-1].startswith("--") and " " not in lines[-1]
        if opens and not arg.startswith("--"):
            lines[-1] += " " + quoted
        else:
            lines.append(quoted)
    return " \\\n    ".join(lines)


@dataclass(frozen=True)
class Launched:
    pid: int
    log: Path | None
    returncode: int | None = None


def launch(cfg: DeployConfig, cmd: list[str], *, detach: bool) -> Launched:
    """Run spark-submit. Detached: new session, output to ``job.log``, pid in ``submit.pid``,
    returns at once. Foreground: the job's progress lines go to our stderr; returns its exit
    code."""
    env = child_env(cfg)
    pid_file = cfg.state_dir / "submit.pid"
    _refuse_if_running(cfg.state_dir)
    (cfg.state_dir / "deploy.json").write_text(
        json.dumps(
            {
                "command": cmd,
                "checkpoint": str(cfg.checkpoint_dir),
                "bootstrap": cfg.bootstrap,
                "master": cfg.master,
                "started": time.time(),
                "detached": detach,
            },
            indent=2,
        )
    )
    if detach:
        log = cfg.state_dir / "job.log"
        with open(log, "ab") as out:
            proc = subprocess.Popen(
                cmd,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        pid_file.write_text(str(proc.pid))
        return Launched(proc.pid, log)
    proc = subprocess.Popen(
        cmd,
        env=env,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        # spark-submit's PythonRunner copies the driver's stdout and stderr to the JVM's
        # stdout; Spark's own log goes to stderr: read both, keep our lines.
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    pid_file.write_text(str(proc.pid))
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # our progress lines pass; Spark's log noise is kept out
            if (
                line.startswith(
                    ("batch ", "converter ", "SIGTERM", "error:", "  hint:", "Traceback")
                )
                or "Exception" in line
            ):
                sys.stderr.write(line)
        return Launched(proc.pid, None, proc.wait())
    except KeyboardInterrupt:
        stop(cfg.state_dir)
        return Launched(proc.pid, None, proc.wait())
    finally:
        pid_file.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child of ours counts as gone
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _refuse_if_running(state_dir: Path) -> None:
    pid = _read_pid(state_dir / "submit.pid")
    if pid is not None and _alive(pid):
        raise UsageError(
            f"a converter from {state_dir} is already running (pid {pid})",
            hint="Stop it with `schemacli migrate stop`, or use another --state-dir.",
        )


@dataclass(frozen=True)
class Stopped:
    pid: int | None
    how: str  # "not running" | "stopped" | "killed"
    seconds: float


# What a deployment leaves in its state directory (any one of them means there is one).
STATE_FILES = ("deploy.json", "progress.json", "submit.pid", "driver.pid", "checkpoint")


def _no_state(state_dir: Path) -> InputError:
    return InputError(
        f"no converter state in {str(state_dir)!r}",
        hint="Deploy one with `schemacli migrate deploy`, or pass the --state-dir it used.",
    )


def stop(state_dir: Path, *, timeout: float = 60.0) -> Stopped:
    """SIGTERM the job's driver (it stops the query after the current batch, committing it), wait
    up to ``timeout`` s for spark-submit to exit, then SIGKILL its process group."""
    if not state_dir.is_dir():
        raise _no_state(state_dir)
    submit = _read_pid(state_dir / "submit.pid")
    driver = _read_pid(state_dir / "driver.pid")
    start = time.monotonic()
    if submit is None or not _alive(submit):
        for p in ("submit.pid", "driver.pid"):
            (state_dir / p).unlink(missing_ok=True)
        return Stopped(submit, "not running", 0.0)
    target = driver if driver is not None and _alive(driver) else submit
    os.kill(target, signal.SIGTERM)
    while time.monotonic() - start < timeout:
        if not _alive(submit):
            break
        time.sleep(0.2)
    how = "stopped"
    if _alive(submit):
        try:
            os.killpg(submit, signal.SIGKILL)
        except ProcessLookupError:
            pass
        how = "killed"
    for p in ("submit.pid", "driver.pid"):
        (state_dir / p).unlink(missing_ok=True)
    return Stopped(submit, how, round(time.monotonic() - start, 1))


# ---------------------------------------------------------------------------------------------
# Status


@dataclass(frozen=True)
class PartitionStatus:
    topic: str
    partition: int
    end_offset: int | None  # the v2 topic's high watermark (None without --bootstrap)
    committed: int | None  # next offset the job will read, from its last committed batch
    lag: int | None


@dataclass(frozen=True)
class Status:
    state_dir: str
    running: bool
    pid: int | None
    checkpoint: str
    last_committed_batch: int | None
    partitions: tuple[PartitionStatus, ...]
    totals: dict[str, int]
    input_rows_per_second: float | None
    processed_rows_per_second: float | None
    updated: float | None


def local_checkpoint(location: str) -> Path | None:
    """The local directory of a checkpoint given as a path or a ``file:`` URI; None for a remote
    filesystem (hdfs://, s3a://, abfss://, ...), which schemacli does not read."""
    scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", location)
    if scheme is None or len(scheme.group(1)) == 1:  # a path (or a Windows drive letter)
        return Path(location)
    if scheme.group(1).lower() == "file":
        return Path(re.sub(r"^file:(//)?", "", location, flags=re.IGNORECASE))
    return None


def checkpoint_offsets(checkpoint: Path) -> tuple[int | None, dict[str, dict[int, int]]]:
    """(last committed batch id, {topic: {partition: next offset}}) from a Spark checkpoint.

    A batch is committed when ``commits/<id>`` exists; its end offsets are the third line of
    ``offsets/<id>`` (Spark's OffsetSeqLog: version, metadata, one JSON per source)."""
    commits = [int(p.name) for p in (checkpoint / "commits").glob("*") if p.name.isdigit()]
    if not commits:
        return None, {}
    batch = max(commits)
    path = checkpoint / "offsets" / str(batch)
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return batch, {}
    for line in lines[2:]:
        line = line.strip()
        if line.startswith("{"):
            data = json.loads(line)
            return batch, {
                t: {int(p): int(o) for p, o in parts.items()} for t, parts in data.items()
            }
    return batch, {}


def end_offsets(
    bootstrap: str, topic: str, properties: AnyMapping[str, str] | None = None
) -> dict[int, int]:
    """High watermarks of ``topic`` per partition (confluent-kafka)."""
    try:
        from confluent_kafka import Consumer, KafkaException, TopicPartition
    except ImportError:
        raise UsageError(
            "status with --bootstrap needs confluent-kafka", hint="pip install 'schemacli[kafka]'"
        ) from None
    conf = {
        "bootstrap.servers": bootstrap,
        "group.id": "schemacli-migrate-status",
        "enable.auto.commit": False,
        "logger": KAFKA_LOGGER,
        **(properties or {}),
    }
    consumer = Consumer(conf)
    try:
        meta = consumer.list_topics(topic, timeout=10)
        tmeta = meta.topics.get(topic)
        if tmeta is None or tmeta.error is not None:
            raise InputError(
                f"topic {topic!r} not found on {bootstrap}",
                hint="Check the mapping's source.topic and --bootstrap.",
            )
        return {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in sorted(tmeta.partitions)
        }
    except KafkaException as exc:
        from schemacli.errors import NetworkError

        raise NetworkError(
            f"cannot reach Kafka at {bootstrap}: {exc}", hint="Check --bootstrap and the broker."
        ) from exc
    finally:
        consumer.close()


def status(
    state_dir: Path, *, topic: str | None, bootstrap: str | None, checkpoint: str | None = None
) -> Status:
    """Status of the converter deployed in ``state_dir``."""
    if not any((state_dir / name).exists() for name in STATE_FILES) and checkpoint is None:
        raise _no_state(state_dir)  # a typo in --state-dir, not a converter with zero counts
    deploy_info = read_state(state_dir / "deploy.json")
    checkpoint = checkpoint or deploy_info.get("checkpoint") or str(state_dir / "checkpoint")
    local = local_checkpoint(checkpoint)
    # A checkpoint on a remote filesystem is not read (schemacli reads local files only): status
    # then shows the end offsets and the counts, without the committed offsets and the lag.
    batch, committed = checkpoint_offsets(local) if local is not None else (None, {})
    progress = read_state(state_dir / "progress.json")
    if topic is None and len(committed) == 1:  # no mapping given: the checkpoint knows it
        topic = next(iter(committed))
    ends = end_offsets(bootstrap, topic) if bootstrap and topic else {}
    done = committed.get(topic or "", {}) if topic else next(iter(committed.values()), {})
    parts = []
    for p in sorted(set(ends) | set(done)):
        end, com = ends.get(p), done.get(p)
        lag = None if end is None else end - (com or 0)
        parts.append(PartitionStatus(topic or "?", p, end, com, lag))
    pid = _read_pid(state_dir / "submit.pid")
    totals = progress.get("totals") or {}
    return Status(
        state_dir=str(state_dir),
        running=pid is not None and _alive(pid),
        pid=pid,
        checkpoint=str(checkpoint),
        last_committed_batch=batch,
        partitions=tuple(parts),
        totals={k: int(v) for k, v in totals.items()},
        input_rows_per_second=progress.get("input_rows_per_second"),
        processed_rows_per_second=progress.get("processed_rows_per_second"),
        updated=progress.get("updated"),
    )
