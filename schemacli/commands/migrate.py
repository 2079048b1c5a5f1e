"""`schemacli migrate plan|validate|deploy|status|stop`: the v2 -> v1 converter, end to end.

Each command parses its arguments, calls ``converters`` (the pure core) and renders; the
mapping format and the job are described in docs/migration.md.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Annotated, Any

import click
import typer

from schemacli.commands.options import JsonOutput, Output
from schemacli.commands.registry_options import Connection, emit_json, is_json, with_registry
from schemacli.errors import ExitCode, InputError, Location, UsageError
from schemacli.output import OutputFormat, TextOrJson

migrate_app = typer.Typer(
    name="migrate",
    help="Convert a v2 topic back to v1 with a Spark job: plan a mapping, validate it, deploy, "
    "watch and stop the job.\n\nExit codes: 0 ok · 1 mapping not deployable / check failed · "
    "2 usage or input error · 3 registry or network error.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

MappingArg = Annotated[Path, typer.Argument(help="The mapping file (YAML, `version: 1`).")]
Bootstrap = Annotated[
    str | None,
    typer.Option("--bootstrap", "-b", metavar="HOST:PORT", help="Kafka bootstrap servers."),
]
StateDir = Annotated[
    Path | None,
    typer.Option(
        "--state-dir",
        help="Where the deployment keeps its state "
        "[default: .schemacli/migrate/<v2 topic>--<v1 topic>].",
    ),
]
_STORE_PATH = re.compile(r"(?:^|/)subjects/(?P<subject>[^/]+)/v(?P<version>\d+)\.avsc$")


def register(app: typer.Typer) -> None:
    migrate_app.command("plan")(plan_command)
    migrate_app.command("validate")(validate_command)
    migrate_app.command("deploy")(deploy_command)
    migrate_app.command("status")(status_command)
    migrate_app.command("stop")(stop_command)
    app.add_typer(migrate_app, name="migrate")


# ---------------------------------------------------------------------------------------------
# plan


def _side(conn: Connection, spec: str, out_dir: Path) -> tuple[Any, dict[str, Any]]:
    """Schema JSON and endpoint fields for ``--from``/``--to``: an .avsc file, or SUBJECT[:VERSION]
    in the registry."""
    path = Path(spec)
    if path.suffix in (".avsc", ".json") or path.exists():
        from schemacli.contracts.loader import load_schema_file

        loaded = load_schema_file(path)
        fields: dict[str, Any] = {"schema": os.path.relpath(path.resolve(), out_dir.resolve())}
        m = _STORE_PATH.search(path.as_posix())
        if m:  # the store's layout names the subject and version
            fields.update(subject=m["subject"], version=int(m["version"]))
        return loaded.document.value, fields
    subject, _, version = spec.partition(":")
    ver: int | str = int(version) if version.isdigit() else (version or "latest")
    sv = conn.client.get_version(subject, ver)
    from schemacli.contracts.loader import load_schema_text

    loaded = load_schema_text(sv.schema, f"{subject}:{sv.version}")
    return loaded.document.value, {"subject": subject, "version": sv.version, "inline": True}


def _topic_of(subject: str | None) -> str | None:
    # TopicNameStrategy: <topic>-value
    if subject and subject.endswith("-value"):
        return subject.removesuffix("-value")
    return None


@with_registry
def plan_command(
    conn: Connection,
    source: Annotated[
        str,
        typer.Option(
            "--from",
            metavar="V2",
            help="v2 (what the converter reads): an .avsc file or SUBJECT[:VERSION].",
        ),
    ],
    target: Annotated[
        str,
        typer.Option(
            "--to", metavar="V1", help="v1 (what it writes): an .avsc file or SUBJECT[:VERSION]."
        ),
    ],
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the mapping here (default: stdout).")
    ] = None,
    source_subject: Annotated[
        str | None,
        typer.Option("--source-subject", help="Registry subject of v2 (when --from is a file)."),
    ] = None,
    target_subject: Annotated[
        str | None,
        typer.Option(
            "--target-subject",
            help="Registry subject of v1 (when --to is a file; inferred from "
            "schemas/subjects/<s>/vN.avsc).",
        ),
    ] = None,
    source_topic: Annotated[
        str | None,
        typer.Option("--source-topic", help="The v2 topic [default: subject without -value]."),
    ] = None,
    target_topic: Annotated[
        str | None,
        typer.Option("--target-topic", help="The v1 topic [default: subject without -value]."),
    ] = None,
    dead_letter_topic: Annotated[
        str | None, typer.Option("--dead-letter-topic", help="[default: <v2 topic>.dead-letter]")
    ] = None,
    key_source: Annotated[
        str | None,
        typer.Option(
            "--key-from",
            metavar="V2_KEY",
            help="Also convert Kafka keys: the v2 key schema, an .avsc file or SUBJECT[:VERSION] "
            "(with --key-to). Without it keys are copied byte for byte.",
        ),
    ] = None,
    key_target: Annotated[
        str | None,
        typer.Option(
            "--key-to",
            metavar="V1_KEY",
            help="The v1 key schema: an .avsc file or SUBJECT[:VERSION].",
        ),
    ] = None,
) -> None:
    """Derive a mapping from v2 to v1: each v1 field matched by name or alias, a conversion
    where one is safe, v1 defaults for what v2 lacks, `unresolved` markers elsewhere.
    With --key-from/--key-to the Kafka key gets a `key:` section planned the same way.

    Exit codes: 0 planned (unresolved markers are listed on stderr; validate refuses them),
    2 input error, 3 registry error.
    """
    from converters.mapping import Conversion, Endpoint, dumps
    from converters.plan import plan, plan_key

    if (key_source is None) != (key_target is None):
        raise UsageError(
            "--key-from and --key-to go together",
            hint="Give both to convert keys, or neither to copy keys byte for byte.",
        )
    out_dir = out.parent if out is not None else Path.cwd()
    src_json, src = _side(conn, source, out_dir)
    tgt_json, tgt = _side(conn, target, out_dir)
    if source_subject:
        src["subject"] = source_subject
    if target_subject:
        tgt["subject"] = target_subject
    src_inline, tgt_inline = src.pop("inline", False), tgt.pop("inline", False)
    mapping = plan(
        src_json,
        tgt_json,
        source=Endpoint(topic=source_topic or _topic_of(src.get("subject")), **src),
        target=Endpoint(topic=target_topic or _topic_of(tgt.get("subject")), **tgt),
        dead_letter_topic=dead_letter_topic,
    )
    key_inline = (False, False)
    keys = ""
    if key_source is not None and key_target is not None:
        ksrc_json, ksrc = _side(conn, key_source, out_dir)
        ktgt_json, ktgt = _side(conn, key_target, out_dir)
        key_inline = (ksrc.pop("inline", False), ktgt.pop("inline", False))
        # TopicNameStrategy: the key's subject is the value's with -key for -value
        for side, value_side in ((ksrc, src), (ktgt, tgt)):
            subject = value_side.get("subject") or ""
            if "subject" not in side and subject.endswith("-value"):
                side["subject"] = subject.removesuffix("-value") + "-key"
        mapping = plan_key(
            mapping, ksrc_json, ktgt_json, source=Endpoint(**ksrc), target=Endpoint(**ktgt)
        )
        keys = f" --key-from {key_source} --key-to {key_target}"
    text = dumps(
        mapping,
        header=(
            f"schemacli migrate plan --from {source} --to {target}{keys}\n"
            "Review every rule; `schemacli migrate validate` checks it and dry-runs it."
        ),
        inline=(src_inline, tgt_inline),
        key_inline=key_inline,
    )
    if out is None:
        click.echo(text, nl=False)
    else:
        try:
            out.write_text(text)
        except OSError as exc:
            raise InputError(
                f"cannot write {out}: {exc.strerror}", location=Location(str(out))
            ) from exc
    sections = [("", mapping)] + ([("key ", mapping.key)] if mapping.key else [])
    for what, section in sections:
        counts: dict[str, int] = {}
        for r in section.rules:
            counts[r.convert.value] = counts.get(r.convert.value, 0) + 1
        summary = ", ".join(f"{n} {k}" for k, n in counts.items())
        wrote = f"; wrote {out}" if out and section is mapping else ""
        click.echo(f"planned {len(section.rules)} {what}rule(s): {summary}{wrote}", err=True)
        for r in section.rules:
            if r.convert is Conversion.UNRESOLVED:
                click.echo(f"unresolved: {what}{r.target}: {r.reason}", err=True)
    raise typer.Exit(ExitCode.OK)


# ---------------------------------------------------------------------------------------------
# validate


@with_registry
def validate_command(
    conn: Connection,
    mapping_file: MappingArg,
    sample: Annotated[
        int | None,
        typer.Option(
            "--sample",
            metavar="N",
            help="Dry-run on N records read from the v2 topic (needs --bootstrap and the "
            "registry).",
        ),
    ] = None,
    bootstrap: Bootstrap = None,
    generate: Annotated[
        int,
        typer.Option(
            "--generate",
            metavar="N",
            help="Dry-run on N records generated from the v2 schema (when --sample is not given).",
        ),
    ] = 20,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the generated records.")] = 0,
    spark: Annotated[
        bool,
        typer.Option(
            "--spark",
            help="Also parse and run the compiled Spark SQL in a local Spark (slow start, exact).",
        ),
    ] = False,
    output: Output = OutputFormat.text,
) -> None:
    """Check that MAPPING is deployable and show what each v1 field becomes.

    Every v1 field must be produced with the right type by a known conversion, no `unresolved`
    marker may remain, expressions must parse; then a dry run converts sample records and
    encodes them with the v1 schema (fastavro).

    Exit codes: 0 deployable, 1 not deployable (each problem named), 2 input error,
    3 registry or network error.
    """
    from converters.validate import validate

    mapping = _load_mapping(conn, mapping_file)
    samples = origin = None
    if sample is not None:
        if not bootstrap:
            raise UsageError("--sample reads the v2 topic: give --bootstrap too")
        from converters.sampling import read_samples

        samples = read_samples(bootstrap, mapping, conn.client, sample)
        origin = f"{len(samples)} record(s) read from topic {mapping.source.topic}"
    session = None
    if spark:
        session = _local_spark()
    report = validate(
        mapping, samples=samples, sample_count=generate, seed=seed, origin=origin, spark=session
    )
    if is_json(output):
        from dataclasses import asdict

        from schemacli.output.json_out import finding_json

        def section(r: Any) -> dict[str, Any]:
            return {
                "source": r.source,
                "target": r.target,
                "ok": r.ok,
                "fields": [asdict(f) for f in r.fields],
                "findings": [finding_json(f) for f in r.findings],
                "dry_run": asdict(r.dry_run) if r.dry_run else None,
            }

        emit_json(
            {
                "mapping": report.mapping,
                **section(report),
                "sql_check": report.sql_check,
                "key": section(report.key) if report.key else None,
            }
        )
    elif output in (OutputFormat.junit, OutputFormat.github):
        from schemacli.output import render

        click.echo(render(_validate_report(report), output), nl=False)
    else:
        click.echo(_validate_text(report))
    raise typer.Exit(ExitCode.OK if report.ok else ExitCode.CHECK_FAILED)


def _validate_report(report: Any) -> Any:
    """The validation as the shared Report (one case for the value, one for the key) for the
    junit and github renderers."""
    from schemacli.output import Case, Report

    def case(section: Any, what: str) -> Case:
        return Case(
            name=f"{what}: v2 {section.source} -> v1 {section.target}",
            verdict="compatible" if section.ok else "incompatible",
            findings=section.findings,
            source=report.mapping,
        )

    cases = [case(report, "value")] + ([case(report.key, "key")] if report.key else [])
    return Report(
        command="migrate validate",
        title=f"migrate validate {report.mapping}",
        verdict="compatible" if report.ok else "incompatible",
        cases=tuple(cases),
    )


def _load_mapping(conn: Connection, mapping_file: Path) -> Any:
    """The mapping with every side's schema: from its file, inline, or (a side naming only a
    ``subject``) from the registry."""
    from converters.mapping import load, missing_schemas, with_registry_schemas
    from schemacli.errors import RegistryError

    mapping = load(mapping_file)
    if not missing_schemas(mapping):
        return mapping

    def fetch(subject: str, version: int | str) -> tuple[str, str]:
        try:
            sv = conn.client.get_version(subject, version)
        except RegistryError as err:
            err.message = (
                f"a side of the mapping names only subject {subject!r} (no `schema:`), so its "
                f"schema comes from the registry: {err.message}"
            )
            err.hint = (
                f"{err.hint + ' ' if err.hint else ''}Or add `schema: <file.avsc>` to that side."
            )
            raise
        return sv.schema, f"{subject}:{sv.version}"

    return with_registry_schemas(mapping, fetch)


def _local_spark() -> Any:
    """A local Spark session with spark-avro (jars from SCHEMACLI_SPARK_JARS or Maven)."""
    from pyspark.sql import SparkSession

    jars = os.environ.get("SCHEMACLI_SPARK_JARS")
    builder = (
        SparkSession.builder.master("local[1]")
        .appName("schemacli-migrate-validate")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
    )
    if jars:
        builder = builder.config("spark.jars", jars)
    else:
        from converters.deploy import PACKAGES

        builder = builder.config("spark.jars.packages", PACKAGES[0])
    return builder.getOrCreate()


def _validate_text(report: Any) -> str:
    from schemacli.output.text import finding_lines

    lines = [f"mapping {report.mapping}: v2 {report.source} -> v1 {report.target}"]
    lines += _section_text(report, "v1 field")
    if report.key is not None:
        lines.append(f"key: v2 {report.key.source} -> v1 {report.key.target}")
        lines += _section_text(report.key, "v1 key field")
    lines.append(f"SQL check: {report.sql_check}")
    findings = [*report.findings, *(report.key.findings if report.key else ())]
    for f in findings:
        lines += finding_lines(f)
    errors = sum(1 for f in findings if f.severity.value == "error")
    lines.append(
        "ok: the mapping is deployable" if report.ok else f"not deployable: {errors} problem(s)"
    )
    return "\n".join(lines)


def _section_text(report: Any, title: str) -> list[str]:
    lines: list[str] = []
    if report.fields:
        w = max(len(title), *(len(f.target) for f in report.fields))
        lines.append(
            f"  {title.ljust(w)}  {'type':<18} {'from':<18} {'conversion':<15} on error  Spark SQL"
        )
        for f in report.fields:
            lines.append(
                f"  {f.target.ljust(w)}  {f.type:<18} {(f.source or '-'):<18} "
                f"{f.conversion:<15} {(f.on_error or '-'):<9} {f.sql}"
            )
    dry = report.dry_run
    if dry is not None:
        if dry.skipped_reason:
            lines.append(f"dry run skipped: {dry.skipped_reason}")
        else:
            lines.append(
                f"dry run ({dry.engine}) on {dry.total} record(s) {dry.origin}: "
                f"{dry.converted} converted and encoded with v1, {dry.dead_lettered} to "
                "the dead letter"
            )
            for s in dry.samples:
                shown = json.dumps(s.input, ensure_ascii=False)
                if s.output is not None:
                    lines.append(f"  {shown}\n    -> {json.dumps(s.output, ensure_ascii=False)}")
                else:
                    lines.append(f"  {shown}\n    -> dead letter: {'; '.join(s.errors)}")
    return lines


# ---------------------------------------------------------------------------------------------
# deploy


@with_registry
def deploy_command(
    conn: Connection,
    mapping_file: MappingArg,
    bootstrap: Annotated[
        str, typer.Option("--bootstrap", "-b", metavar="HOST:PORT", help="Kafka bootstrap servers.")
    ],
    master: Annotated[
        str,
        typer.Option(
            "--master", help="local[2] | yarn | k8s://https://host:port | spark://host:port"
        ),
    ] = "local[2]",
    checkpoint: Annotated[
        str | None,
        typer.Option(
            "--checkpoint",
            help="Spark checkpoint directory or URI, e.g. hdfs:///checkpoints/x (a restart "
            "resumes from it) [default: <state-dir>/checkpoint].",
        ),
    ] = None,
    state_dir: StateDir = None,
    jars: Annotated[
        str | None,
        typer.Option(
            "--jars",
            help="Comma-separated local jars (spark-avro, spark-sql-kafka and deps) "
            "instead of --packages from Maven.",
        ),
    ] = None,
    conf: Annotated[
        list[str] | None, typer.Option("--conf", help="Extra Spark conf key=value (repeatable).")
    ] = None,
    kafka_properties: Annotated[
        Path | None,
        typer.Option(
            "--kafka-properties",
            help="File of Kafka client properties (SASL, TLS): its path is passed, never "
            "its content.",
        ),
    ] = None,
    starting_offsets: Annotated[
        str,
        typer.Option(
            "--starting-offsets",
            help="earliest | latest | Spark's JSON (first start only; a checkpoint wins).",
        ),
    ] = "earliest",
    max_offsets_per_trigger: Annotated[
        int | None, typer.Option("--max-offsets-per-trigger")
    ] = None,
    trigger_seconds: Annotated[
        float, typer.Option("--trigger-seconds", help="Micro-batch interval in seconds.")
    ] = 1.0,
    available_now: Annotated[
        bool,
        typer.Option(
            "--available-now", help="Convert what is in the topic now, then stop (backfill)."
        ),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the spark-submit command and exit.")
    ] = False,
    detach: Annotated[
        bool,
        typer.Option("--detach", help="Run in the background (pid file and log in the state dir)."),
    ] = False,
) -> None:
    """Run the converter job for MAPPING with spark-submit.

    Before starting: the mapping must be deployable, and the v1 schema registered under the
    target subject (its id goes into every converted message). Secrets stay off the command
    line: registry credentials go to the job as SCHEMACLI_REGISTRY_* environment variables,
    Kafka secrets in a --kafka-properties file.

    Exit codes: 0 started (detached) / finished, 1 mapping not deployable or job failed,
    2 usage or input error, 3 registry error.
    """
    from converters import deploy
    from converters.transform import compiled_or_fail

    mapping = _load_mapping(conn, mapping_file)
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
    env = {}
    reg = conn.registry
    if reg.username:
        env["SCHEMACLI_REGISTRY_USER"] = reg.username
    if reg.password:
        env["SCHEMACLI_REGISTRY_PASSWORD"] = reg.password
    if reg.token:
        env["SCHEMACLI_REGISTRY_TOKEN"] = reg.token
    cfg = deploy.DeployConfig(
        mapping_path=mapping_file,
        bootstrap=bootstrap,
        registry_url=reg.url,
        state_dir=state_dir or deploy.default_state_dir(mapping),
        master=master,
        checkpoint=checkpoint,
        jars=tuple(j for j in (jars or "").split(",") if j),
        conf=tuple(conf or ()),
        kafka_properties=kafka_properties,
        starting_offsets=starting_offsets,
        trigger_seconds=trigger_seconds,
        max_offsets_per_trigger=max_offsets_per_trigger,
        available_now=available_now,
        extra_env=env,
    )
    cfg.check()
    if not dry_run:
        from converters.job import resolve_registry

        resolve_registry(mapping, conn.client)  # fails now, clearly, if v1 is not registered
    files = deploy.prepare(cfg, mapping, write=not dry_run)  # a dry run writes nothing
    cmd = deploy.build_command(cfg, files)
    secret_names = deploy.secret_env_names(deploy.child_env(cfg))
    if dry_run:
        click.echo(deploy.render_command(cmd))
        if secret_names:
            click.echo(f"# credentials passed in the environment: {', '.join(secret_names)}")
        raise typer.Exit(ExitCode.OK)
    launched = deploy.launch(cfg, cmd, detach=detach)
    if detach:
        click.echo(
            f"converter started: pid {launched.pid}, log {launched.log}, state {cfg.state_dir}"
        )
        click.echo(
            f"watch it with `schemacli migrate status {mapping_file} -b {bootstrap}`", err=True
        )
        raise typer.Exit(ExitCode.OK)
    click.echo(f"converter exited with code {launched.returncode}")
    raise typer.Exit(ExitCode.OK if launched.returncode == 0 else ExitCode.CHECK_FAILED)


# ---------------------------------------------------------------------------------------------
# status and stop


def _state(mapping_file: Path | None, state_dir: Path | None) -> tuple[Path, Any]:
    from converters import deploy
    from converters.mapping import load

    if mapping_file is None and state_dir is None:
        raise UsageError("give the mapping file or --state-dir")
    mapping = load(mapping_file, load_schemas=False) if mapping_file else None
    return state_dir or deploy.default_state_dir(mapping), mapping


def status_command(
    mapping_file: Annotated[
        Path | None, typer.Argument(help="The mapping file (finds the state dir).")
    ] = None,
    bootstrap: Bootstrap = None,
    state_dir: StateDir = None,
    output: JsonOutput = TextOrJson.text,
) -> None:
    """Per partition: the v2 end offset, the job's committed progress and the lag; converted,
    dead-lettered and skipped counts; the rate.

    Exit codes: 0 reported, 2 no such deployment, 3 Kafka unreachable.
    """
    from converters import deploy

    sdir, mapping = _state(mapping_file, state_dir)
    topic = mapping.source.topic if mapping else None
    st = deploy.status(sdir, topic=topic, bootstrap=bootstrap)
    if is_json(output):
        emit_json(st)
        raise typer.Exit(ExitCode.OK)
    run = f"running (pid {st.pid})" if st.running else "not running"
    if st.stale:
        pid_file = Path(st.state_dir) / "submit.pid"
        run += f" (stale pid file {pid_file}: {st.stale}; delete it)"
    lines = [
        f"converter {sdir}: {run}; checkpoint {st.checkpoint}, last committed batch "
        f"{st.last_committed_batch if st.last_committed_batch is not None else '-'}"
    ]
    lines.append(
        f"  {'topic':<24} {'partition':>9} {'end offset':>11} {'committed':>10} {'lag':>8}"
    )
    for p in st.partitions:

        def show(v: int | None) -> str:
            return "-" if v is None else str(v)

        lines.append(
            f"  {p.topic:<24} {p.partition:>9} {show(p.end_offset):>11} "
            f"{show(p.committed):>10} {show(p.lag):>8}"
        )
    t = st.totals
    lines.append(
        f"  in {t.get('in', 0)}, converted {t.get('converted', 0)}, dead-lettered "
        f"{t.get('dead_letter', 0)}, skipped (already converted) {t.get('skipped', 0)}"
    )
    if st.processed_rows_per_second is not None:
        lines.append(
            f"  rate: {st.processed_rows_per_second:.0f} msg/s processed in the last batch, "
            f"{(st.input_rows_per_second or 0):.0f} msg/s arriving"
        )
    click.echo("\n".join(lines))
    raise typer.Exit(ExitCode.OK)


def stop_command(
    mapping_file: Annotated[
        Path | None, typer.Argument(help="The mapping file (finds the state dir).")
    ] = None,
    state_dir: StateDir = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait before SIGKILL.")
    ] = 60.0,
) -> None:
    """Stop the converter: SIGTERM (the current batch finishes and is committed), wait, report.

    Only the process that `deploy` started is signalled: a pid file naming another process
    (the pid was reused) is reported as stale and nothing is signalled.

    Exit codes: 0 stopped or not running, 1 had to be killed, 2 usage error, no converter
    state in the state dir, or a corrupt or stale pid file.
    """
    from converters import deploy

    sdir, _ = _state(mapping_file, state_dir)
    result = deploy.stop(sdir, timeout=timeout)
    if result.how == "not running":
        click.echo(f"converter {sdir}: not running")
    else:
        click.echo(f"converter {sdir}: {result.how} (pid {result.pid}) after {result.seconds}s")
    raise typer.Exit(ExitCode.CHECK_FAILED if result.how == "killed" else ExitCode.OK)


_ = sys  # stdout/stderr discipline: results via click.echo, progress with err=True
