"""Renderers of the ``migrate`` results: a plan's summary, a validation (text, json, and the
shared Report for junit / github), a deployment, a status, a stop. Each is a function of the
result the converter core returns; the commands only echo what these return."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from converters.mapping.model import Conversion, Mapping
from schemacli.output import Case, Report
from schemacli.output.json_out import finding_json
from schemacli.output.text import finding_lines

# ---------------------------------------------------------------------------------------------
# plan


def plan_header(request: Any) -> str:
    """The comment a planned mapping file starts with: how it was made, what to do next."""
    keys = (
        f" --key-from {request.key_source} --key-to {request.key_target}"
        if request.key_source is not None and request.key_target is not None
        else ""
    )
    return (
        f"schemacli migrate plan --from {request.source} --to {request.target}{keys}\n"
        "Review every rule; `schemacli migrate validate` checks it and dry-runs it."
    )


def plan_summary(mapping: Mapping, out: Path | None) -> list[str]:
    """Lines for stderr: the count of rules by conversion (the key's too), each ``unresolved``
    marker with its reason."""
    lines = []
    sections = [("", mapping)] + ([("key ", mapping.key)] if mapping.key else [])
    for what, section in sections:
        counts: dict[str, int] = {}
        for r in section.rules:
            counts[r.convert.value] = counts.get(r.convert.value, 0) + 1
        summary = ", ".join(f"{n} {k}" for k, n in counts.items())
        wrote = f"; wrote {out}" if out and section is mapping else ""
        lines.append(f"planned {len(section.rules)} {what}rule(s): {summary}{wrote}")
        for r in section.rules:
            if r.convert is Conversion.UNRESOLVED:
                lines.append(f"unresolved: {what}{r.target}: {r.reason}")
    return lines


def plan_readers_lines(verdicts: Any, subject: str | None) -> list[str]:
    """Which declared readers of the v1 subject the converter's output keeps alive (stderr)."""
    if subject is None:
        return ["declared readers: the v1 side names no subject, so none could be looked up"]
    if not verdicts:  # nothing declared: nothing to say (the JSON says readers: [])
        return []
    lines = [f"declared readers of {subject} (v1), fed by the converter:"]
    for v in verdicts:
        r = v.declared
        who = f"{r.consumer}" + (f" (owner {r.owner})" if r.owner else "")
        groups = ", ".join(r.groups)
        if v.compatible:
            lines.append(f"  kept alive: {who}, group(s) {groups}")
        else:
            lines.append(f"  NOT kept alive: {who}, group(s) {groups}")
            lines += [f"    {f.location}: {f.kind}: {f.message}" for f in v.findings]
    return lines


def plan_readers_json(verdicts: Any) -> list[dict[str, Any]]:
    """The same for machines: one entry per declared reader of the v1 subject."""

    return [
        {
            "consumer": v.declared.consumer,
            "owner": v.declared.owner,
            "contact": v.declared.contact,
            "groups": list(v.declared.groups),
            "subject": v.declared.subject,
            "kept_alive": v.compatible,
            "findings": [finding_json(f) for f in v.findings],
        }
        for v in verdicts
    ]


def plan_json(mapping: Mapping, text: str | None, out: Path | None) -> dict[str, Any]:
    """The plan for machines: where it went (or the mapping itself, parsed from the YAML that
    would have gone to stdout), the rules by conversion, the unresolved markers."""
    import yaml

    sections = [("value", mapping)] + ([("key", mapping.key)] if mapping.key else [])
    summary = {}
    for name, section in sections:
        counts: dict[str, int] = {}
        for r in section.rules:
            counts[r.convert.value] = counts.get(r.convert.value, 0) + 1
        summary[name] = {
            "rules": len(section.rules),
            "by_conversion": counts,
            "unresolved": [
                {"target": r.target, "reason": r.reason}
                for r in section.rules
                if r.convert is Conversion.UNRESOLVED
            ],
        }
    return {
        "out": str(out) if out is not None else None,
        "mapping": yaml.safe_load(text) if text is not None else None,
        **summary,
    }


# ---------------------------------------------------------------------------------------------
# validate


def validate_json(report: Any) -> dict[str, Any]:
    """The validation as JSON data: the value's section, the SQL check, the key's section."""
    from dataclasses import asdict

    def section(r: Any) -> dict[str, Any]:
        return {
            "source": r.source,
            "target": r.target,
            "ok": r.ok,
            "fields": [asdict(f) for f in r.fields],
            "findings": [finding_json(f) for f in r.findings],
            "dry_run": asdict(r.dry_run) if r.dry_run else None,
        }

    return {
        "mapping": report.mapping,
        **section(report),
        "sql_check": report.sql_check,
        "road": report.road,
        "key": section(report.key) if report.key else None,
    }


def validate_report(report: Any) -> Any:
    """The validation as the shared Report (one case for the value, one for the key) for the
    junit and github renderers."""

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


def validate_text(report: Any) -> str:
    """The validation for people: each v1 field's conversion, the dry run, the findings."""

    lines = [f"mapping {report.mapping}: v2 {report.source} -> v1 {report.target}"]
    lines += _section_text(report, "v1 field")
    if report.key is not None:
        lines.append(f"key: v2 {report.key.source} -> v1 {report.key.target}")
        lines += _section_text(report.key, "v1 key field")
    lines.append(f"SQL check: {report.sql_check}")
    if report.road:
        lines.append(f"road (exactly-once): {report.road}")
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
# deploy, status, stop


def deploy_json(deployment: Any, cfg: Any, watch: str) -> dict[str, Any]:
    """A deployment for machines: the command (dry run) or the job's pid, log and exit code."""
    launched = deployment.launched
    return {
        "state_dir": str(cfg.state_dir),
        "dry_run": launched is None,
        "command": list(deployment.command),
        "credential_variables": list(deployment.secret_names),
        "detached": launched is not None and launched.returncode is None,
        "pid": launched.pid if launched else None,
        "log": str(launched.log) if launched and launched.log else None,
        "exit_code": launched.returncode if launched else None,
        "watch": watch,
    }


def deploy_lines(deployment: Any, cfg: Any, watch: str) -> tuple[list[str], list[str]]:
    """(stdout lines, stderr lines) of a deployment: the dry run's command and the credential
    names it passes, a detached job's pid, log and state (and how to ``watch`` it), or the exit
    code of a job run in the foreground."""
    launched = deployment.launched
    if launched is None:
        names = deployment.secret_names
        secrets = [f"# credentials passed in the environment: {', '.join(names)}"] if names else []
        return [render_command(deployment.command), *secrets], []
    if launched.returncode is None:  # detached: it runs on
        return [
            f"converter started: pid {launched.pid}, log {launched.log}, state {cfg.state_dir}"
        ], [f"watch it with `{watch}`"]
    return [f"converter exited with code {launched.returncode}"], []


def json_line(data: Any) -> str:
    """``data`` (dataclasses, tuples and paths allowed) as one compact JSON document on one line,
    for a stream of documents (``status --watch -o json``): ASCII only, so no character in a
    value (a newline, U+2028, NEL) can split the line for a reader that splits on them."""
    from dataclasses import asdict, is_dataclass

    def default(value: Any) -> Any:
        if is_dataclass(value) and not isinstance(value, type):
            return asdict(value)
        if isinstance(value, Path):
            return str(value)
        raise TypeError(f"not JSON-serialisable: {type(value).__name__}")

    return json.dumps(data, default=default, separators=(",", ":"), ensure_ascii=True)


def status_text(st: Any, state_dir: Path) -> str:
    """Status for people: running or not, the checkpoint, a row per partition (end offset,
    committed, lag), the counts and the rate."""
    run = f"running (pid {st.pid})" if st.running else "not running"
    if st.stale:
        pid_file = Path(st.state_dir) / "submit.pid"
        run += f" (stale pid file {pid_file}: {st.stale}; delete it)"
    lines = [
        f"converter {state_dir}: {run}; checkpoint {st.checkpoint}, last committed batch "
        f"{st.last_committed_batch if st.last_committed_batch is not None else '-'}"
    ]
    lines.append(
        f"  {'topic':<24} {'partition':>9} {'end offset':>11} {'committed':>10} {'lag':>8}"
    )

    def show(v: int | None) -> str:
        return "-" if v is None else str(v)

    for p in st.partitions:
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
    if st.window is not None:
        lines.append("  migration: " + window_text(st.window))
    if st.dependents is not None:
        lines += dependents_lines(st.dependents)
    return "\n".join(lines)


def status_dashboard(st: Any, state_dir: Path) -> Any:
    """The live view of ``status --watch`` (a rich renderable): rates in and out, lag per
    partition, counts with dead letters, the window's state and v1's dependents."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    run = f"running (pid {st.pid})" if st.running else "not running"
    state = f" · migration {window_text(st.window)}" if st.window is not None else ""
    head = Text(f"converter {state_dir}: {run}{state}", style="bold")
    t = st.totals
    rates = Text(
        f"in {(st.input_rows_per_second or 0):.0f} msg/s · out "
        f"{(st.processed_rows_per_second or 0):.0f} msg/s · converted {t.get('converted', 0)} · "
        f"dead-lettered {t.get('dead_letter', 0)} · skipped {t.get('skipped', 0)} · "
        f"in total {t.get('in', 0)}"
    )
    lag = Table("topic", "partition", "end offset", "committed", "lag", title="lag")
    for p in st.partitions:
        show = ["-" if v is None else str(v) for v in (p.end_offset, p.committed, p.lag)]
        lag.add_row(p.topic, str(p.partition), *show)
    parts: list[Any] = [head, rates, lag]
    if st.dependents is not None:
        parts.append(Text("\n".join(dependents_lines(st.dependents))))
    return Group(*parts)


def _when(seconds: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


def window_text(window: Any) -> str:
    """``running since ...`` and the states before it, with their times."""
    done = ", ".join(f"{state} {_when(at)}" for state, at in window.since.items())
    return f"{window.state} ({done})"


def dependents_lines(deps: Any) -> list[str]:
    """Who still depends on v1 and who moved to v2, for people (one block)."""
    lines = [f"  v1 {deps.v1_topic}: who still depends on it"]
    active = [g for g in deps.v1_groups if g.active]
    labelled = deps.v1_subject is not None
    for g in active:
        reader = f" [{deps.reader_of(g.group_id)}]" if labelled else ""
        lines.append(
            f"    consumer group {g.group_id} ({g.state}){reader}: " + "; ".join(g.reasons())
        )
        for p in g.partitions:
            if p.lag:
                lines.append(f"      partition {p.partition}: committed {p.committed}, lag {p.lag}")
    idle = len(deps.v1_groups) - len(active)
    if idle:
        lines.append(f"    {idle} more group(s) with old offsets on v1 and nobody reading")
    if deps.first_look:
        lines.append("    (first look: whether a group is moving shows from the next status on)")
    direct = [d for d in deps.direct_writes if d.messages]
    for d in direct:
        more = "+" if d.limited else ""
        keys = f", keys {', '.join(d.key_sample)}" if d.key_sample else ""
        heads = f", headers {', '.join(d.header_names)}" if d.header_names else ""
        lines.append(
            f"    partition {d.partition}: {d.messages}{more} message(s) written directly in the "
            f"last {deps.window_seconds:g} s{keys}{heads}"
        )
    if not active and not direct:
        lines.append("    nobody: no active consumer group, no direct writes in the window")
    if deps.v2_topic:
        moved = ", ".join(g.group_id for g in deps.v2_groups) or "no consumer group yet"
        lines.append(f"  moved to v2 {deps.v2_topic}: {moved}")
    return lines


def stop_text(result: Any, state_dir: Path) -> str:
    """How the converter stopped (or that it was not running)."""
    if result.how == "not running":
        return f"converter {state_dir}: not running"
    return f"converter {state_dir}: {result.how} (pid {result.pid}) after {result.seconds}s"


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


# ---------------------------------------------------------------------------------------------
# replay


def replay_text(report: Any) -> str:
    """A replay for people: the counts, then what still fails, grouped by stage and error."""
    r = report
    verb = "would write" if r.dry_run else "wrote"
    lines = [
        f"replay {r.dead_letter_topic} -> {r.v1_topic} with {r.mapping}"
        + (" (dry run: nothing written)" if r.dry_run else ""),
        f"  read {r.read} dead letter(s): {r.unique} source position(s)",
        f"  converted {r.converted}: {verb} {len(r.would_write)}, already in v1 {r.already_in_v1}",
        f"  still failing {len(r.still_failing)}",
    ]
    for stage, error, count in r.by_error:
        lines.append(f"    {count:>7}  [{stage}] {error}")
    if r.unreadable:
        lines.append(
            f"  not the converter's dead letters (no source position): {len(r.unreadable)}"
        )
        lines += [f"    {what}" for what in r.unreadable[:20]]
        if len(r.unreadable) > 20:
            lines.append(f"    ... and {len(r.unreadable) - 20} more (-o json lists them all)")
    return "\n".join(lines)
