"""`schemacli migrate validate`: is a mapping deployable, and what does each field become?"""

from typing import Annotated

import click
import typer

from schemacli.commands.kafka_options import Bootstrap
from schemacli.commands.migrate.common import MappingArg, load_mapping
from schemacli.commands.options import Output, count, require_extras
from schemacli.commands.registry_options import NO_FLAGS, RegistryFlags, connect, registry_flags
from schemacli.errors import ExitCode, UsageError
from schemacli.output import OutputFormat
from schemacli.output import render as render_report
from schemacli.output.json_out import emit_json, is_json

SAMPLE_MAX = 100_000  # records a dry run reads or generates


@registry_flags()
def validate_command(
    mapping_file: MappingArg,
    sample: Annotated[
        int | None,
        typer.Option(
            "--sample",
            metavar="N",
            click_type=count(1, SAMPLE_MAX),
            help="Dry-run on N records read from the v2 topic (needs --bootstrap and the "
            "registry), 1 to 100000.",
        ),
    ] = None,
    bootstrap: Bootstrap = None,
    generate: Annotated[
        int,
        typer.Option(
            "--generate",
            metavar="N",
            click_type=count(0, SAMPLE_MAX),
            help="Dry-run on N records generated from the v2 schema (when --sample is not "
            "given), 0 to 100000.",
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
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """Check that MAPPING is deployable and show what each v1 field becomes.

    Every v1 field must be produced with the right type by a known conversion, no `unresolved`
    marker may remain, expressions must parse; then a dry run converts sample records and
    encodes them with the v1 schema (fastavro).

    Exit codes: 0 deployable, 1 not deployable (each problem named), 2 input error,
    3 registry or network error.
    """
    with connect(flags) as conn:
        from converters.mapping.check import validate
        from converters.pipeline.dryrun import SparkDryRun
        from converters.spark import local_spark
        from schemacli.output import migrate as render

        if sample is not None and not bootstrap:  # before the registry is asked anything
            raise UsageError("--sample reads the v2 topic: give --bootstrap too")
        if sample is not None:
            require_extras("--sample", "kafka")
        if spark:
            require_extras("--spark", "spark")
        mapping = load_mapping(conn, mapping_file)
        samples = origin = None
        if sample is not None and bootstrap:  # checked above: --sample comes with --bootstrap
            from converters.mapping.sampling import read_samples

            samples = read_samples(bootstrap, mapping, conn.client, sample)
            origin = f"{len(samples)} record(s) read from topic {mapping.source.topic}"
        report = validate(
            mapping,
            samples=samples,
            sample_count=generate,
            seed=seed,
            origin=origin,
            spark=SparkDryRun(local_spark()) if spark else None,
        )
        if is_json(output):
            emit_json(render.validate_json(report))
        elif output is OutputFormat.text:
            click.echo(render.validate_text(report))
        else:  # junit, github, sarif, gitlab: the shared report of findings
            click.echo(render_report(render.validate_report(report), output), nl=False)
        raise typer.Exit(ExitCode.OK if report.ok else ExitCode.CHECK_FAILED)
