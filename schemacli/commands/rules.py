"""`schemacli rules test CONTRACT RECORDS...`: a contract's rules over sample records."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from schemacli.commands.options import Output, count
from schemacli.contracts.findings import Finding
from schemacli.errors import ExitCode, InputError, Location, UsageError
from schemacli.kinds import Kind
from schemacli.output import Case, OutputFormat, Report, render
from schemacli.output.terminal import Progress

if TYPE_CHECKING:
    from schemacli.contracts.avro.loader import LoadedSchema
    from schemacli.contracts.rules.model import Contract
    from schemacli.contracts.rules.sample import SampleReport

rules_app = typer.Typer(
    name="rules",
    help="Data-quality rules of a contract: CEL conditions and transforms (docs/rules.md).",
    no_args_is_help=True,
    rich_markup_mode=None,
)

MODES = ("WRITE", "READ")


@rules_app.command("test")
def test_command(
    contract: Annotated[
        Path,
        typer.Argument(
            help="The contract file: v<N>.contract.json beside v<N>.avsc in the store, or a "
            "register body with its schema."
        ),
    ],
    records: Annotated[
        list[Path],
        typer.Argument(help="Sample records: JSON lines files or Avro container files."),
    ],
    schema: Annotated[
        Path | None,
        typer.Option(
            "--schema",
            metavar="FILE",
            help="The .avsc the records follow (default: the contract's own schema, or the "
            "v<N>.avsc beside v<N>.contract.json).",
        ),
    ] = None,
    mode: Annotated[
        str,
        typer.Option(
            "--mode",
            help="Run the rules a serializer runs (WRITE) or a deserializer (READ).",
            case_sensitive=False,
        ),
    ] = "WRITE",
    examples: Annotated[
        int,
        typer.Option(
            "--examples",
            click_type=count(0, 10_000),
            metavar="N",
            help="Violations shown per rule (0-10000).",
        ),
    ] = 20,
    output: Output = OutputFormat.text,
) -> None:
    """Run the contract's domain rules over sample records, as Confluent's serializers run
    them, and print each violation with its record and its rule.

    Exit codes: 0 every record passes every rule; 1 a rule fails (or errors) on a record;
    2 usage or input error (a contract, schema or records file that cannot be used).
    """
    from schemacli.contracts.rules.judge import judge_contract
    from schemacli.contracts.rules.model import read_contract
    from schemacli.contracts.rules.sample import run_samples

    chosen = mode.upper()
    if chosen not in MODES:
        raise UsageError(
            f"--mode {mode!r} is not WRITE or READ",
            hint="WRITE runs what a producer's serializer runs; READ a consumer's.",
        )
    read = read_contract(contract)
    loaded = _schema_of(read, contract, schema)
    static = judge_contract(read, loaded)
    bar = Progress("records")
    try:
        result = run_samples(
            read,
            loaded.schema,
            loaded.value,
            records,
            mode=chosen,
            keep=examples,
            each=lambda n: bar(n, max(n, 1)),
        )
    finally:
        bar.close()
    report = as_report(result, static)
    typer.echo(render(report, OutputFormat(output)), nl=False)
    failed = result.failed or any(f.severity.value == "error" for f in static)
    raise typer.Exit(int(ExitCode.CHECK_FAILED if failed else ExitCode.OK))


def _schema_of(contract: Contract, path: Path, schema: Path | None) -> LoadedSchema:
    from schemacli.contracts.avro.loader import load_schema_file, load_schema_text
    from schemacli.contracts.rules.model import CONTRACT_SUFFIX

    if schema is not None:
        return load_schema_file(schema)
    if contract.schema is not None:
        return load_schema_text(contract.schema, f"{path}#/schema")
    name = path.name
    if name.endswith(CONTRACT_SUFFIX):
        beside = path.with_name(name.removesuffix(CONTRACT_SUFFIX) + ".avsc")
        if beside.is_file():
            return load_schema_file(beside)
    raise InputError(
        f"{path} carries no schema, and no .avsc sits beside it",
        location=Location(source=str(path)),
        hint="Give the records' schema with --schema FILE.",
    )


def as_report(result: SampleReport, static: list[Finding]) -> Report:
    """One case per rule (its counts and violations), and one for the contract's own
    findings when it has any."""
    from schemacli.contracts.rules.sample import shown

    cases = []
    for tally in result.tallies:
        findings = []
        for v in tally.violations:
            o = v.outcome
            kind = {"fail": Kind.RULE_FAILED, "error": Kind.RULE_ERRORED}.get(
                o.status, Kind.RULE_NOT_RUN
            )
            where = f" on field {o.field}" if o.field else ""
            dlq = o.rule.params.get("dlq.topic") if o.action == "DLQ" else None
            action = f"{o.action} -> {dlq}" if dlq else o.action
            findings.append(
                Finding(
                    kind=kind,
                    message=f"record {v.sample.number}: rule {o.rule.label} "
                    f"{'failed' if o.status == 'fail' else 'errored'}{where} "
                    f"(then {action}): {o.message} | {shown(v.sample.record)}",
                    location=v.sample.location,
                    hint=f"The rule is at {result.contract} {o.rule.pointer}.",
                    severity=kind.severity,
                    old=shown(v.sample.record),
                )
            )
        if tally.not_run:
            findings.append(
                Finding(
                    kind=Kind.RULE_NOT_RUN,
                    message=f"rule {tally.rule.label} ({tally.rule.type}) was not run on "
                    f"{tally.not_run} records: schemacli has no {tally.rule.type} executor",
                    location=Location(source=result.contract, pointer=tally.rule.pointer),
                    hint="rules test runs CEL and CEL_FIELD rules.",
                    severity=Kind.RULE_NOT_RUN.severity,
                )
            )
        cases.append(
            Case(
                name=tally.rule.label,
                verdict="incompatible" if tally.total_failures else "compatible",
                findings=tuple(findings),
                columns=(
                    ("pass", tally.passed),
                    ("fail", tally.failed),
                    ("error", tally.errored),
                    ("not run", tally.not_run),
                ),
                source=result.contract,
            )
        )
    if static:
        failing = any(f.severity.value == "error" for f in static)
        cases.append(
            Case(
                name=result.contract,
                verdict="incompatible" if failing else "compatible",
                findings=tuple(static),
                columns=(("pass", ""), ("fail", ""), ("error", ""), ("not run", "")),
                source=result.contract,
            )
        )
    worst = "incompatible" if any(c.verdict == "incompatible" for c in cases) else "compatible"
    notes = [f"{result.records} records, mode {result.mode}; {result.refused} refused"]
    notes += [f"{n} to DLQ topic {t}" for t, n in sorted(result.dlq.items())]
    return Report(
        command="rules test",
        title=f"rules test {result.contract}",
        verdict=worst,
        cases=tuple(cases),
        notes=tuple(notes),
    )
