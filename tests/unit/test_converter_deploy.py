"""deploy/status/stop helpers: the spark-submit command, secrets kept out, checkpoint reading."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from converters.mapping.reader import load
from converters.ops.deploy import DeployConfig, build_command, child_env, prepare, secret_env_names
from converters.ops.status import checkpoint_offsets, status
from converters.ops.stop import stop
from converters.pipeline.jvmjar import JAR
from converters.state import local_checkpoint
from schemacli.errors import InputError, UsageError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"


def cfg(tmp_path: Path, **kw) -> DeployConfig:
    base = dict(
        mapping_path=EXAMPLE,
        bootstrap="broker:9092",
        registry_url="https://alice:s3cret@registry.example:8081",
        state_dir=tmp_path / "state",
        spark_submit="/opt/spark/bin/spark-submit",
    )
    base.update(kw)
    return DeployConfig(**base)


def test_command_runs_the_job_with_the_resolved_mapping_and_no_secret(tmp_path: Path):
    c = cfg(tmp_path, kafka_properties=None)
    files = prepare(c, load(EXAMPLE))
    cmd = build_command(c, files)
    text = " ".join(cmd)
    assert "s3cret" not in text and "alice" not in text
    assert "--registry https://registry.example:8081" in text
    assert cmd[cmd.index("--master") + 1] == "local[2]"
    assert "spark-avro_2.13:4.0.1" in cmd[cmd.index("--packages") + 1]
    resolved = json.loads(Path(cmd[cmd.index("--mapping") + 1]).read_text())
    assert resolved["target"]["schema_json"]["name"] == "TaxiRide"  # the job needs no other file
    assert cmd[cmd.index("--checkpoint") + 1] == str(tmp_path / "state" / "checkpoint")


@pytest.mark.parametrize(
    ("delivery", "jars", "want"),
    [
        ("exactly-once", (), str(JAR)),  # connectors by --packages, our writer by --jars
        ("exactly-once", ("/j/a.jar",), f"/j/a.jar,{JAR}"),
        ("at-least-once", ("/j/a.jar",), "/j/a.jar"),  # Spark's own sink: no jar of ours
        ("at-least-once", (), None),
    ],
)
def test_the_exactly_once_writers_jar_reaches_spark_with_the_connectors(
    tmp_path: Path, delivery: str, jars: tuple[str, ...], want: str | None
):
    c = cfg(tmp_path, delivery=delivery, jars=jars)
    cmd = build_command(c, prepare(c, load(EXAMPLE)))
    assert (cmd[cmd.index("--jars") + 1] if "--jars" in cmd else None) == want
    assert ("--packages" in cmd) == (not jars)


def test_registry_credentials_reach_the_job_through_the_environment(tmp_path: Path):
    env = child_env(cfg(tmp_path))
    assert (
        env["SCHEMACLI_REGISTRY_USER"] == "alice" and env["SCHEMACLI_REGISTRY_PASSWORD"] == "s3cret"
    )
    assert secret_env_names(env) == ["SCHEMACLI_REGISTRY_PASSWORD", "SCHEMACLI_REGISTRY_USER"]


def test_a_secret_conf_goes_in_a_private_properties_file_not_on_the_command_line(tmp_path: Path):
    c = cfg(
        tmp_path,
        conf=(
            "spark.hadoop.fs.s3a.secret.key=XyZ-1",
            "spark.executor.memory=1g",
            'spark.kafka.sasl.jaas.config=org.Login required password="pw2";',
        ),
    )
    files = prepare(c, load(EXAMPLE))
    cmd = build_command(c, files)
    text = " ".join(cmd)
    assert "XyZ-1" not in text and "pw2" not in text and "jaas" not in text
    assert cmd[cmd.index("--conf", cmd.index("--conf") + 1) + 1] == "spark.executor.memory=1g"
    path = Path(cmd[cmd.index("--properties-file") + 1])
    assert path == tmp_path / "state" / "spark-secrets.conf"
    assert "--load-spark-defaults" in cmd  # spark-defaults.conf still counts
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.read_text() == (
        "spark.hadoop.fs.s3a.secret.key=XyZ-1\n"
        'spark.kafka.sasl.jaas.config=org.Login required password="pw2";\n'
    )


def test_without_a_secret_conf_there_is_no_properties_file(tmp_path: Path):
    c = cfg(tmp_path, conf=("spark.executor.memory=1g",))
    cmd = build_command(c, prepare(c, load(EXAMPLE)))
    assert (
        "--properties-file" not in cmd and not (tmp_path / "state" / "spark-secrets.conf").exists()
    )


def test_a_dry_run_names_the_properties_file_and_writes_nothing(tmp_path: Path):
    c = cfg(tmp_path, conf=("spark.ssl.keyPassword=pw3",))
    cmd = build_command(c, prepare(c, load(EXAMPLE), write=False))
    assert "pw3" not in " ".join(cmd) and "--properties-file" in cmd
    assert not (tmp_path / "state").exists()


def test_javas_properties_loader_reads_back_exactly_what_was_given(tmp_path: Path):
    """The file is read by spark-submit's JVM (java.util.Properties over UTF-8): every awkward
    character comes back as it was."""
    from converters.ops.deploy import properties_text

    items = {
        "spark.a.password": " lead space, back\\slash, tab\t, newline\n, é ü ✓ = : # !",
        "spark.b:token": "x=y",
        "spark.c.secret": "",
    }
    conf = tmp_path / "p.conf"
    conf.write_text(properties_text(tuple(f"{k}={v}" for k, v in items.items())), "utf-8")
    source = tmp_path / "Read.java"
    source.write_text(
        "import java.io.*; import java.nio.charset.StandardCharsets; import java.util.*;\n"
        "public class Read { public static void main(String[] a) throws Exception {\n"
        "  Properties p = new Properties();\n"
        "  try (Reader r = new InputStreamReader(new FileInputStream(a[0]),"
        " StandardCharsets.UTF_8)) { p.load(r); }\n"
        '  PrintStream out = new PrintStream(System.out, true, "UTF-8");\n'
        "  for (String k : new TreeSet<>(p.stringPropertyNames()))"
        ' out.print(k + "\\u0000" + p.getProperty(k) + "\\u0000");\n'
        "}}\n"
    )
    import shutil
    import subprocess

    java = shutil.which("java")
    assert java, "java is needed to read the file back (it is installed with Spark's stack)"
    done = subprocess.run([java, str(source), str(conf)], capture_output=True, check=True)
    parts = done.stdout.decode("utf-8").split("\0")[:-1]
    assert dict(zip(parts[::2], parts[1::2], strict=True)) == items


def test_cluster_masters_ship_the_mapping_and_kafka_properties_with_files(tmp_path: Path):
    props = tmp_path / "kafka.properties"
    props.write_text("sasl.jaas.config=secret\n")
    c = cfg(
        tmp_path,
        master="yarn",
        kafka_properties=props,
        jars=("/j/a.jar",),
        conf=("spark.submit.deployMode=cluster",),
    )
    cmd = build_command(c, prepare(c, load(EXAMPLE)))
    assert cmd[cmd.index("--files") + 1].endswith("mapping.json," + str(props))
    # the driver runs in the cluster, in the directory where --files puts its copies
    assert cmd[cmd.index("--mapping") + 1] == "mapping.json"
    assert cmd[cmd.index("--kafka-properties") + 1] == "kafka.properties"
    assert cmd[cmd.index("--jars") + 1] == f"/j/a.jar,{JAR}" and "--packages" not in cmd
    assert "secret" not in " ".join(cmd).replace("s3cret", "")


@pytest.mark.parametrize("master", ["spark://127.0.0.1:7077", "spark://spark-master:7077", "yarn"])
def test_a_client_mode_driver_opens_the_mapping_and_properties_where_they_are(
    tmp_path: Path, master: str
):
    # spark-submit runs a client-mode driver here, in our working directory, where a bare
    # `mapping.json` is not: it gets the full paths (--files still ships them to the cluster).
    props = tmp_path / "kafka.properties"
    props.write_text("security.protocol=PLAINTEXT\n")
    c = cfg(tmp_path, master=master, kafka_properties=props)
    files = prepare(c, load(EXAMPLE))
    cmd = build_command(c, files)
    assert cmd[cmd.index("--mapping") + 1] == str(files["mapping"])
    assert Path(cmd[cmd.index("--mapping") + 1]).is_file()
    assert cmd[cmd.index("--kafka-properties") + 1] == str(props)
    assert "--files" in cmd


def test_the_last_deploy_mode_conf_decides_where_the_driver_runs(tmp_path: Path):
    from converters.ops.deploy import deploy_mode, driver_runs_here

    client = cfg(tmp_path, master="spark://h:7077")
    cluster = cfg(
        tmp_path,
        master="spark://h:7077",
        conf=("spark.submit.deployMode=client", "spark.submit.deployMode=cluster"),
    )
    assert (deploy_mode(client), driver_runs_here(client)) == ("client", True)
    assert (deploy_mode(cluster), driver_runs_here(cluster)) == ("cluster", False)
    assert driver_runs_here(cfg(tmp_path, conf=("spark.submit.deployMode=cluster",)))  # local[2]


@pytest.mark.parametrize(
    ("master", "executors_python"),
    [
        ("local[2]", True),
        ("spark://127.0.0.1:7077", True),  # a loopback master: its workers are on this machine
        ("spark://localhost:7077", True),
        ("spark://spark-master:7077", False),  # workers elsewhere: their Python, not our path
        ("yarn", False),
    ],
)
def test_the_venvs_python_runs_the_driver_here_and_executors_only_on_this_machine(
    tmp_path: Path, monkeypatch, master: str, executors_python: bool
):
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    monkeypatch.delenv("PYSPARK_DRIVER_PYTHON", raising=False)
    env = child_env(cfg(tmp_path, master=master))
    assert env["PYSPARK_DRIVER_PYTHON"] == sys.executable  # client mode: the driver is ours
    assert (env.get("PYSPARK_PYTHON") == sys.executable) is executors_python


def test_an_operators_python_choice_is_kept(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/py/bin/python3")
    env = child_env(cfg(tmp_path, master="spark://127.0.0.1:7077"))
    assert env["PYSPARK_PYTHON"] == "/opt/py/bin/python3"
    cluster = cfg(tmp_path, master="yarn", conf=("spark.submit.deployMode=cluster",))
    monkeypatch.delenv("PYSPARK_DRIVER_PYTHON", raising=False)
    assert "PYSPARK_DRIVER_PYTHON" not in child_env(cluster)  # the cluster starts that driver


@pytest.mark.parametrize(
    ("bad", "names"),
    [
        (dict(master="local2"), "master"),
        (dict(conf=("nokey",)), "--conf"),
        (dict(conf=("=v",)), "--conf"),
        (dict(bootstrap="u:p@broker:9092"), "credentials"),
        (dict(bootstrap=""), "--bootstrap"),
        (dict(bootstrap="no-port"), "--bootstrap"),
        (dict(bootstrap="h:abc"), "--bootstrap"),
        (dict(bootstrap="h:1,h:99999"), "--bootstrap"),
        (dict(starting_offsets="bogus"), "--starting-offsets"),
        (dict(starting_offsets="{bad json"), "--starting-offsets"),
        (dict(starting_offsets='{"t": {"x": 5}}'), "--starting-offsets"),
        (dict(starting_offsets='{"t": {"0": -3}}'), "--starting-offsets"),
        (dict(max_offsets_per_trigger=-5), "--max-offsets-per-trigger"),
        (dict(max_offsets_per_trigger=0), "--max-offsets-per-trigger"),
        (dict(trigger_seconds=-1.0), "--trigger-seconds"),
        (dict(trigger_seconds=float("nan")), "--trigger-seconds"),
        (dict(trigger_seconds=float("inf")), "--trigger-seconds"),
        (dict(jars=("/nonexistent.jar",)), "--jars"),
        (dict(checkpoint=""), "--checkpoint"),
    ],
)
def test_bad_deploy_settings_are_usage_errors_naming_the_option(tmp_path: Path, bad, names):
    with pytest.raises(UsageError) as caught:
        cfg(tmp_path, **bad).check()
    assert names in caught.value.message and caught.value.hint


@pytest.mark.parametrize(
    "good",
    [
        dict(bootstrap="b1:9092,b2:9092"),
        dict(bootstrap="[::1]:9092"),
        dict(starting_offsets="latest"),
        dict(starting_offsets='{"taxi-rides-v2": {"0": 42, "1": -2}}'),
        dict(trigger_seconds=0.0),
        dict(max_offsets_per_trigger=1),
        dict(jars=("hdfs:///jars/spark-avro.jar",)),
    ],
)
def test_valid_deploy_settings_pass(tmp_path: Path, good):
    cfg(tmp_path, **good).check()


@pytest.mark.parametrize("state_dir", ["/dev/null", "file", "file/sub"])
def test_a_state_dir_that_cannot_be_a_directory_is_a_usage_error(tmp_path: Path, state_dir):
    (tmp_path / "file").write_text("x")
    path = Path(state_dir) if state_dir.startswith("/") else tmp_path / state_dir
    with pytest.raises(UsageError, match="--state-dir"):
        cfg(tmp_path, state_dir=path).check()


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs Linux /proc")
def test_a_state_dir_that_cannot_be_created_is_an_input_error_not_a_crash(tmp_path: Path):
    c = cfg(tmp_path, state_dir=Path("/proc/nope"))
    with pytest.raises(InputError, match="cannot write the state directory"):
        prepare(c, load(EXAMPLE))


def test_a_dry_run_writes_nothing_into_the_state_dir(tmp_path: Path):
    c = cfg(tmp_path)
    files = prepare(c, load(EXAMPLE), write=False)
    cmd = build_command(c, files)
    assert cmd[cmd.index("--mapping") + 1] == str(tmp_path / "state" / "mapping.json")
    assert not (tmp_path / "state").exists()


def _checkpoint(root: Path, batches: dict[int, dict], committed: list[int]) -> Path:
    (root / "offsets").mkdir(parents=True)
    (root / "commits").mkdir()
    for b, offsets in batches.items():
        (root / "offsets" / str(b)).write_text(
            'v1\n{"batchWatermarkMs":0}\n' + json.dumps(offsets) + "\n"
        )
    for b in committed:
        (root / "commits" / str(b)).write_text("v1\n{}\n")
    return root


def test_committed_progress_is_the_last_batch_with_a_commit(tmp_path: Path):
    cp = _checkpoint(tmp_path / "cp", {0: {"t": {"0": 5, "1": 7}}, 1: {"t": {"0": 9, "1": 7}}}, [0])
    assert checkpoint_offsets(cp) == (0, {"t": {0: 5, 1: 7}})


def test_status_without_kafka_reports_committed_offsets_and_counts(tmp_path: Path):
    state = tmp_path / "state"
    _checkpoint(state / "checkpoint", {3: {"t": {"0": 40}}}, [3])
    (state / "progress.json").write_text(
        json.dumps(
            {
                "totals": {"in": 40, "converted": 38, "dead_letter": 2, "skipped": 0},
                "processed_rows_per_second": 100.0,
            }
        )
    )
    st = status(state, topic="t", bootstrap=None)
    assert st.last_committed_batch == 3 and not st.running
    assert [(p.partition, p.committed, p.lag) for p in st.partitions] == [(0, 40, None)]
    assert st.totals["dead_letter"] == 2


def fake_spark_submit(state_dir: Path) -> subprocess.Popen:
    """A process that looks like the converter's spark-submit (name, --name, own session) and
    exits cleanly on SIGTERM, like the job."""
    script = state_dir.parent / f"{state_dir.name}-bin" / "spark-submit"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(
        "import signal,sys,time\n"
        "signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))\n"
        "print('up', flush=True)\ntime.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, str(script), "--name", f"schemacli-migrate-{state_dir.name}"],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout.readline() == b"up\n"
    return proc


def test_stop_sends_sigterm_and_waits_for_a_clean_exit(tmp_path: Path):
    proc = fake_spark_submit(tmp_path)
    (tmp_path / "submit.pid").write_text(str(proc.pid))
    result = stop(tmp_path, timeout=10)
    assert result.how == "stopped" and proc.wait(5) == 0
    assert not (tmp_path / "submit.pid").exists()


def test_stop_when_nothing_runs_says_so(tmp_path: Path):
    (tmp_path / "deploy.json").write_text(json.dumps({"checkpoint": str(tmp_path / "cp")}))
    assert stop(tmp_path).how == "not running"


def test_a_kafka_properties_file_that_is_not_utf8_is_refused_before_spark_submit(tmp_path: Path):
    props = tmp_path / "kafka.properties"
    props.write_bytes(b"security.protocol=SASL_SSL\nsasl.jaas.config=\xff\n")
    with pytest.raises(InputError) as caught:
        cfg(tmp_path, kafka_properties=props).check()
    assert caught.value.location.line == 2


def test_a_checkpoint_uri_reaches_spark_submit_unchanged(tmp_path: Path):
    c = cfg(tmp_path, master="yarn", checkpoint="hdfs://namenode:8020/checkpoints/taxi")
    c.check()
    cmd = build_command(c, prepare(c, load(EXAMPLE)))
    assert cmd[cmd.index("--checkpoint") + 1] == "hdfs://namenode:8020/checkpoints/taxi"


def test_a_checkpoint_that_is_a_file_is_refused(tmp_path: Path):
    (tmp_path / "cp").write_text("not a directory")
    with pytest.raises(UsageError) as caught:
        cfg(tmp_path, checkpoint=str(tmp_path / "cp")).check()
    assert "is a file" in caught.value.message


@pytest.mark.parametrize(
    ("location", "local"),
    [
        ("/var/cp", "/var/cp"),
        ("state/cp", "state/cp"),
        ("file:///var/cp", "/var/cp"),
        ("file:/var/cp", "/var/cp"),
        ("hdfs:///cp", None),
        ("s3a://bucket/cp", None),
    ],
)
def test_only_local_checkpoints_are_read_by_status(location, local):
    found = local_checkpoint(location)
    assert (str(found) if found is not None else None) == local


def test_status_with_a_remote_checkpoint_shows_counts_without_offsets(tmp_path: Path):
    (tmp_path / "deploy.json").write_text(json.dumps({"checkpoint": "s3a://bucket/cp"}))
    (tmp_path / "progress.json").write_text(json.dumps({"totals": {"in": 3, "converted": 3}}))
    st = status(tmp_path, topic=None, bootstrap=None)
    assert st.checkpoint == "s3a://bucket/cp" and st.last_committed_batch is None
    assert st.totals["converted"] == 3


def test_an_installation_without_the_writers_jar_is_refused_before_spark_submit(
    tmp_path: Path, monkeypatch
):
    from converters.pipeline import jvmjar

    monkeypatch.setattr(jvmjar, "JAR", tmp_path / "gone.jar")
    with pytest.raises(InputError) as missing:
        cfg(tmp_path, delivery="exactly-once").check()
    assert "gone.jar" in str(missing.value) and "at-least-once" in (missing.value.hint or "")
    cfg(tmp_path, delivery="at-least-once").check()  # Spark's own sink needs no jar of ours


def test_a_kafka_properties_setting_librdkafka_refuses_is_refused_before_spark_submit(
    tmp_path: Path,
):
    props = tmp_path / "kafka.properties"
    props.write_text("security.protocol=SASL_SSL\nlibrdkafka.no.such.setting=1\n")
    with pytest.raises(InputError) as caught:
        cfg(tmp_path, kafka_properties=props).check()
    assert caught.value.location.line == 2 and "no.such.setting" in caught.value.message


def test_a_driver_on_the_cluster_opens_the_files_its_properties_name_itself(tmp_path: Path):
    props = tmp_path / "kafka.properties"
    props.write_text("security.protocol=SSL\nlibrdkafka.ssl.ca.location=/on/the/cluster/ca.pem\n")
    with pytest.raises(InputError):
        cfg(tmp_path, kafka_properties=props).check()  # the driver runs here: its file is missing
    on_cluster = ("spark.submit.deployMode=cluster",)
    cfg(tmp_path, kafka_properties=props, master="spark://m:7077", conf=on_cluster).check()
