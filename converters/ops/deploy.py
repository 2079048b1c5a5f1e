"""Deploy the converter job: check its settings, build and run the spark-submit command.

Stopping it is ``converters.ops.stop``, its status ``converters.ops.status``.

The state of one deployment lives in a state directory (default
``.schemacli/migrate/<v2 topic>--<v1 topic>``): the resolved mapping (schemas inline, so the
job needs no files but this one), the Python bundle shipped with ``--py-files``, the pid files,
the job's log (detached runs), ``progress.json`` (written by the job) and, unless ``--checkpoint``
points elsewhere, the Spark checkpoint.

Secrets never go on the command line nor into logs: registry credentials reach the driver as
``SCHEMACLI_REGISTRY_*`` environment variables, Kafka client secrets (SASL, TLS passwords) as a
properties file whose path alone is passed, and a ``--conf`` whose key names a secret (Spark's
redaction pattern) in ``spark-secrets.conf`` (mode 0600, in the state directory), passed with
``--properties-file`` (and ``--load-spark-defaults``, so spark-defaults.conf still counts). The
printed command shows URLs without user info.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Mapping as AnyMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from converters.kafka import settings
from converters.mapping.dump import to_dict
from converters.mapping.model import Mapping
from converters.mapping.sql import compiled_or_fail
from converters.ops import process
from converters.ops.stop import stop
from converters.ops.window import advance
from converters.pipeline import jvmjar
from converters.pipeline.records import resolve_registry
from converters.pipeline.v1rules import compile_v1_rules
from converters.spark import MASTER, PACKAGES
from converters.state import loads, local_checkpoint, read_state, whole, write_text
from schemacli import redact
from schemacli.errors import InputError, Location, UsageError
from schemacli.registry.settings import RegistrySettings, strip_userinfo

if TYPE_CHECKING:
    from schemacli.registry.client import RegistryClient

# Spark's default spark.redaction.regex: the confs whose values Spark masks in its UI and logs
SPARK_REDACTION = re.compile(r"(?i)secret|password|token|access[.]?key")
# also kept off the command line: Kafka's JAAS settings and anything naming a credential
SECRET_CONF = re.compile(SPARK_REDACTION.pattern + r"|jaas|credential")
SECRET_CONFS = "spark-secrets.conf"
BUNDLED = ("converters", "spark_avro", "schemacli")
CONVERTERS = Path(__file__).resolve().parent.parent  # the package: spark-submit runs its job.py
SECRET_ENV_PREFIXES = ("SCHEMACLI_REGISTRY_",)


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
    delivery: str = "exactly-once"  # or "at-least-once" (converters.pipeline.stream.DELIVERIES)
    spark_submit: str | None = None
    extra_env: AnyMapping[str, str] = field(default_factory=dict, repr=False)

    def _check_state_dir(self) -> None:
        problem = _state_dir_problem(self.state_dir)
        if problem is not None:
            raise UsageError(
                f"--state-dir {str(self.state_dir)!r} {problem}",
                hint="Name a directory (created if missing) for the converter's state, e.g. "
                ".schemacli/migrate/<v2 topic>--<v1 topic> (the default).",
            )

    def _check_options(self) -> None:
        problem = bootstrap_problem(self.bootstrap)
        if problem is not None:
            raise UsageError(
                f"--bootstrap {self.bootstrap!r}: {problem}",
                hint="Give HOST:PORT[,HOST:PORT...] of Kafka brokers, e.g. -b broker:9092.",
            )
        if self.checkpoint is not None and not self.checkpoint.strip():
            raise UsageError(
                "--checkpoint is empty",
                hint="Name a directory or a URI (hdfs:///checkpoints/x), or leave the option out "
                "for <state-dir>/checkpoint.",
            )
        problem = starting_offsets_problem(self.starting_offsets)
        if problem is not None:
            raise UsageError(
                f"--starting-offsets {self.starting_offsets!r}: {problem}",
                hint='Give earliest, latest, or JSON such as \'{"taxi-rides-v2": {"0": 42, '
                '"1": -2}}\' (-2 earliest, -1 latest).',
            )
        if self.max_offsets_per_trigger is not None and self.max_offsets_per_trigger < 1:
            raise UsageError(
                f"--max-offsets-per-trigger {self.max_offsets_per_trigger}: must be 1 or more",
                hint="Give the most messages a batch reads, e.g. 100000, or leave it out for "
                "no limit.",
            )
        if not math.isfinite(self.trigger_seconds) or self.trigger_seconds < 0:
            raise UsageError(
                f"--trigger-seconds {self.trigger_seconds}: must be a finite number >= 0",
                hint="Give the micro-batch interval in seconds, e.g. 1 (0: as fast as it can).",
            )
        for jar in self.jars:
            local = local_checkpoint(jar)  # a path or file: URI; other URIs are Spark's to fetch
            if local is not None and not local.is_file():
                raise UsageError(
                    f"--jars: {jar!r} is not a file",
                    hint="Give comma-separated paths of existing jars (spark-avro, "
                    "spark-sql-kafka and their dependencies), or leave --jars out to use "
                    "--packages.",
                )

    @property
    def checkpoint_dir(self) -> str:
        return self.checkpoint or str(self.state_dir / "checkpoint")

    def check(self) -> None:
        """Raise UsageError for values spark-submit would choke on later."""
        self._check_state_dir()
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
            key, _, value = item.partition("=")
            if "=" not in item or not key.strip() or key != key.strip():
                raise UsageError(
                    f"--conf {item!r} is not key=value", hint="e.g. --conf spark.executor.memory=2g"
                )
            if SECRET_CONF.search(key):  # masked wherever we print it, as Spark does
                redact.remember(value)
        if self.kafka_properties is not None:
            # read by the bounded reader (a missing file, a directory, a device or a FIFO is
            # named as what it is, at once), readable UTF-8 and librdkafka's share accepted,
            # before spark-submit; a driver on the cluster opens the files it names there
            settings.load(self.kafka_properties, files=driver_runs_here(self))
        if "@" in self.bootstrap:
            raise UsageError(
                "the bootstrap servers must not carry credentials",
                hint="Put SASL settings in a --kafka-properties file.",
            )
        self._check_options()
        if self.delivery == "exactly-once" and not jvmjar.JAR.is_file():
            raise InputError(
                f"the exactly-once writer's jar {str(jvmjar.JAR)!r} is missing from this "
                "installation",
                hint="Reinstall schemacli (the jar ships in its package), rebuild it with "
                "scripts/build-jvm in a checkout, or deploy with --delivery at-least-once.",
            )


_HOST_PORT = re.compile(r"^(?:[A-Za-z_]+://)?(\[[0-9A-Fa-f:.%]+\]|[0-9A-Za-z.%_-]+):(\d{1,5})$")


def bootstrap_problem(servers: str) -> str | None:
    """Why ``servers`` is not a Kafka bootstrap list (``host:port,...``), or None."""
    if not servers.strip():
        return "no server given"
    for item in servers.split(","):
        m = _HOST_PORT.match(item.strip())
        if m is None:
            return f"{item.strip()!r} is not HOST:PORT"
        if not 1 <= int(m.group(2)) <= 65535:
            return f"port {m.group(2)} of {item.strip()!r} is not 1..65535"
    return None


def starting_offsets_problem(value: str) -> str | None:
    """Why ``value`` is not earliest, latest or Spark's JSON of per-partition offsets."""
    if value in ("earliest", "latest"):
        return None
    if not value.lstrip().startswith("{"):
        return "not earliest, latest or a JSON object"
    try:
        data = loads(value)
    except json.JSONDecodeError as exc:
        return f"not valid JSON ({exc.msg} at character {exc.pos + 1})"
    if not isinstance(data, dict) or not data:
        return "the JSON must map topics to {partition: offset}"
    for topic, parts in data.items():
        if not isinstance(parts, dict) or not parts:
            return f"topic {topic!r} must map partitions to offsets"
        for part, offset in parts.items():
            if not (part.isascii() and part.isdigit()):
                return f"partition {part!r} of {topic!r} is not a number"
            if not whole(offset) or offset < -2:
                return f"offset {json.dumps(offset)} of {topic!r}/{part} is not an offset >= -2"
    return None


def _state_dir_problem(state_dir: Path) -> str | None:
    """Why ``state_dir`` cannot hold a deployment's state, or None (it may not exist yet)."""
    probe = state_dir
    while True:
        if probe.exists() or probe.is_symlink():
            if not probe.is_dir():
                what = "is not a directory" if probe == state_dir else f"is inside {probe}, a file"
                return what
            if probe != state_dir and not os.access(probe, os.W_OK | os.X_OK):
                return f"cannot be created: {probe} is not writable"
            return None
        if probe.parent == probe:
            return None
        probe = probe.parent


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
            "spark-submit not found: deploy runs the converter with Spark, which the base "
            "install leaves out",
            hint="Install the Spark extra: `scripts/bootstrap --all` in a checkout, or "
            "`pip install 'schemacli[spark]'` (pyspark 4.0.1, with spark-submit); or set "
            "SPARK_HOME to a Spark 4.0 installation.",
        ) from None
    return str(Path(pyspark.__file__).parent / "bin" / "spark-submit")


def prepare(cfg: DeployConfig, mapping: Mapping, *, write: bool = True) -> dict[str, Path]:
    """The files the job needs in the state directory: the resolved mapping (schemas inline) and
    the Python bundle. ``write=False`` (a dry run) only names them; nothing is written."""
    resolved = cfg.state_dir / "mapping.json"
    bundle = cfg.state_dir / "schemacli-bundle.zip"
    text = json.dumps(to_dict(mapping, inline_schemas=True), indent=2, allow_nan=False)
    files = {
        "mapping": resolved,
        "bundle": bundle,
        "job": CONVERTERS / "job.py",
    }
    secrets = secret_confs(cfg.conf)
    if secrets:
        files["secret_confs"] = cfg.state_dir / SECRET_CONFS
    if not write:
        return files
    root = CONVERTERS.parent
    try:
        cfg.state_dir.mkdir(parents=True, exist_ok=True)
        write_text(resolved, text)
        if secrets:
            _write_private(files["secret_confs"], properties_text(secrets))
        with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as zf:
            for package in BUNDLED:
                for path in sorted((root / package).rglob("*.py")):
                    zf.write(path, path.relative_to(root).as_posix())
    except OSError as exc:
        raise InputError(
            f"cannot write the state directory {str(cfg.state_dir)!r}: "
            f"{exc.strerror or exc}" + (f" ({exc.filename})" if exc.filename else ""),
            location=Location(source=str(cfg.state_dir)),
            hint="Pass a --state-dir you can create and write (a directory, or a path to "
            "create one at).",
        ) from exc
    return files


def build_command(cfg: DeployConfig, files: AnyMapping[str, Path]) -> list[str]:
    """The spark-submit argv. Holds no secret (see module docstring)."""
    cmd = [
        find_spark_submit(cfg.spark_submit),
        "--master",
        cfg.master,
        "--name",
        f"schemacli-migrate-{cfg.state_dir.name}",
    ]
    if not cfg.jars:
        cmd += ["--packages", ",".join(cfg.packages)]
    # the exactly-once writer runs on the executors' JVMs: our jar (converters.pipeline.jvmjar)
    ours = (str(jvmjar.JAR),) if cfg.delivery == "exactly-once" else ()
    if cfg.jars or ours:
        cmd += ["--jars", ",".join((*cfg.jars, *ours))]
    cmd += ["--py-files", str(files["bundle"])]
    if not cfg.master.startswith("local"):
        shipped = [str(files["mapping"])] + (
            [str(cfg.kafka_properties)] if cfg.kafka_properties else []
        )
        cmd += ["--files", ",".join(shipped)]
    secrets = secret_confs(cfg.conf)
    for item in ("spark.ui.showConsoleProgress=false", *cfg.conf):
        if item not in secrets:
            cmd += ["--conf", item]
    if secrets:  # the file's path alone; spark-defaults.conf is still read
        cmd += ["--properties-file", str(files["secret_confs"]), "--load-spark-defaults"]
    # A driver on this machine (local masters, client deploy mode) opens the files where they
    # are; one in the cluster (deploy mode cluster) finds the --files copies in its directory.
    local = driver_runs_here(cfg)
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
    if cfg.max_offsets_per_trigger is not None:
        cmd += ["--max-offsets-per-trigger", str(cfg.max_offsets_per_trigger)]
    if cfg.available_now:
        cmd += ["--available-now"]
    cmd += ["--delivery", cfg.delivery]
    if cfg.kafka_properties:
        props = str(cfg.kafka_properties) if local else cfg.kafka_properties.name
        cmd += ["--kafka-properties", props]
    return cmd


def secret_confs(conf: tuple[str, ...]) -> tuple[str, ...]:
    """The ``key=value`` items of ``conf`` whose key names a secret (kept off the argv)."""
    return tuple(item for item in conf if SECRET_CONF.search(item.partition("=")[0]))


def properties_text(items: tuple[str, ...]) -> str:
    """``key=value`` items as a Java properties file (what ``--properties-file`` reads, UTF-8):
    backslashes, line breaks and a leading space escaped; ``=``/``:`` escaped in keys."""

    def escape(text: str, *, key: bool) -> str:
        out = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
        out = out.replace("\t", "\\t").replace("\f", "\\f")
        if key:
            out = out.replace("=", "\\=").replace(":", "\\:").replace(" ", "\\ ")
            out = out.replace("#", "\\#").replace("!", "\\!")
        elif out.startswith(" "):
            out = "\\" + out
        return out

    lines = []
    for item in items:
        key, _, value = item.partition("=")
        lines.append(f"{escape(key, key=True)}={escape(value, key=False)}")
    return "".join(line + "\n" for line in lines)


def _write_private(path: Path, text: str) -> None:
    """Write ``path`` readable by its owner alone (0600 from the start), through a rename."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(tmp, path)


def deploy_mode(cfg: DeployConfig) -> str:
    """``client`` or ``cluster``: where spark-submit starts the driver (the last
    ``spark.submit.deployMode`` among ``--conf``; Spark's default is client)."""
    mode = "client"
    for item in cfg.conf:
        key, _, value = item.partition("=")
        if key.strip() == "spark.submit.deployMode":
            mode = value.strip()
    return mode


def driver_runs_here(cfg: DeployConfig) -> bool:
    """Whether the driver is a process on this machine (local masters, or client deploy mode)."""
    return cfg.master.startswith("local") or deploy_mode(cfg) != "cluster"


_LOOPBACK_MASTER = re.compile(r"^spark://(127\.0\.0\.1|localhost|\[::1\]):\d+$")


def executors_run_here(cfg: DeployConfig) -> bool:
    """Whether the executors are processes on this machine: a local master, or a standalone
    master on loopback (whose workers can only be on this machine too)."""
    return cfg.master.startswith("local") or bool(_LOOPBACK_MASTER.match(cfg.master))


def child_env(cfg: DeployConfig) -> dict[str, str]:
    """The environment of spark-submit: ours; the venv's Python for a driver on this machine
    and for executors on this machine (see ``executors_run_here``; elsewhere the cluster's
    Python is the operator's choice: ``PYSPARK_PYTHON`` or ``--conf spark.pyspark.python``);
    the registry credentials (from the URL's user info, if any)."""
    env = dict(os.environ)
    env.update(cfg.extra_env)
    if executors_run_here(cfg):
        env.setdefault("PYSPARK_PYTHON", sys.executable)
    if driver_runs_here(cfg):
        # the driver imports schemacli's dependencies (the bundle has only our packages)
        env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # Credentials in the URL's user info reach the job as SCHEMACLI_REGISTRY_* (never argv),
    # through the same settings the job rebuilds from them.

    env.update(RegistrySettings.build(url=cfg.registry_url, env={}).credentials_env())
    return env


def secret_env_names(env: AnyMapping[str, str]) -> list[str]:
    """Names (never values) of the credential variables the job will see."""
    return sorted(
        k for k in env if k.startswith(SECRET_ENV_PREFIXES) and k != "SCHEMACLI_REGISTRY_URL"
    )


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
    pid_file = cfg.state_dir / process.SUBMIT_PID
    _refuse_if_running(cfg.state_dir)

    advance(cfg.state_dir, "running", planned_at=_mtime(cfg.mapping_path))
    info = {
        "command": cmd,
        "checkpoint": str(cfg.checkpoint_dir),
        "bootstrap": cfg.bootstrap,
        "master": cfg.master,
        "started": time.time(),
        "detached": detach,
    }
    deploy_json = cfg.state_dir / "deploy.json"
    write_text(deploy_json, json.dumps(info, indent=2))
    (cfg.state_dir / process.DRIVER_PID).unlink(missing_ok=True)  # the job writes its own

    def started(proc: subprocess.Popen[bytes] | subprocess.Popen[str]) -> None:
        # who spark-submit is: `stop` signals the pid only while it still names this process
        write_text(pid_file, str(proc.pid))
        info["submit"] = {"pid": proc.pid, "start_time": process.start_time(proc.pid)}
        write_text(deploy_json, json.dumps(info, indent=2))

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
        started(proc)
        return Launched(proc.pid, log)
    child = subprocess.Popen(
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
    started(child)
    try:
        assert child.stdout is not None
        for line in child.stdout:  # our progress lines pass; Spark's log noise is kept out
            if (
                line.startswith(
                    ("batch ", "converter ", "SIGTERM", "error:", "  hint:", "Traceback")
                )
                or "Exception" in line
            ):
                sys.stderr.write(line)
        return Launched(child.pid, None, child.wait())
    except KeyboardInterrupt:
        stop(cfg.state_dir)
        return Launched(child.pid, None, child.wait())
    finally:
        pid_file.unlink(missing_ok=True)


def _refuse_if_running(state_dir: Path) -> None:
    proc = process.find(state_dir, read_state(state_dir / "deploy.json"))
    if proc.running:
        raise UsageError(
            f"a converter from {state_dir} is already running (pid {proc.submit})",
            hint="Stop it with `schemacli migrate stop`, or use another --state-dir.",
        )


def check_deployable(mapping: Mapping) -> None:
    """Raise UsageError when a side of ``mapping`` lacks the ``topic`` or ``subject`` the job
    needs, CheckFailed when the mapping (or its key's) does not compile to deployable SQL."""
    for side in ("source", "target"):
        ep = getattr(mapping, side)
        if not ep.topic or not ep.subject:
            raise UsageError(
                f"the mapping's {side} needs `topic:` and `subject:` to deploy",
                location=mapping.location(f"/{side}"),
                hint="The job reads ids from the registry subject and topics from Kafka.",
            )
    compiled_or_fail(mapping)
    if mapping.key is not None:
        compiled_or_fail(mapping.key)


@dataclass(frozen=True)
class Deployment:
    """What ``deploy`` did: the spark-submit command, the names of the credential variables it
    sees, and the launched job (None for a dry run, which writes and starts nothing)."""

    command: list[str]
    secret_names: list[str]
    launched: Launched | None = None


def deploy(
    cfg: DeployConfig,
    mapping: Mapping,
    client: RegistryClient,
    *,
    dry_run: bool = False,
    detach: bool = False,
) -> Deployment:
    """Check ``cfg``, check that v1 is registered and that Spark can run v1's WRITE rules
    (``client``; not for a dry run), write the state directory and run spark-submit (detached:
    returns once it started). Raises UsageError / InputError for settings (RulesNotCompiled for
    a v1 rule with no Spark SQL form, named), CheckFailed when v1 is not registered,
    RegistryError."""
    cfg.check()
    if not dry_run:
        plan = resolve_registry(mapping, client)  # fails now, clearly, if v1 is not registered
        # the job compiles v1's rules the same way at start: refuse here, before anything is
        # written, rather than in a job that already has a state directory
        compile_v1_rules(plan.target_rules, plan.target_schema, mapping.target.subject or "v1")
        if mapping.key is not None and plan.key is not None:
            compile_v1_rules(
                plan.key.target_rules, plan.key.target_schema, mapping.key.target.subject or "v1"
            )
    files = prepare(cfg, mapping, write=not dry_run)  # a dry run writes nothing
    cmd = build_command(cfg, files)
    secret_names = secret_env_names(child_env(cfg))
    if dry_run:
        return Deployment(cmd, secret_names)
    return Deployment(cmd, secret_names, launch(cfg, cmd, detach=detach))


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None
