"""`schemacli register SCHEMA --subject S`: register a schema, idempotently."""

from pathlib import Path
from typing import Annotated

import typer

from schemacli.commands.options import JsonOutput
from schemacli.commands.registry_options import NO_FLAGS, RegistryFlags, connect, registry_flags
from schemacli.errors import ExitCode, UsageError
from schemacli.output import TextOrJson
from schemacli.output.json_out import emit_json, is_json
from schemacli.output.terminal import echo
from schemacli.registry.models import Reference

SubjectOpt = Annotated[str, typer.Option("--subject", "-s", help="The subject to register under.")]
ReferenceOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--reference",
        metavar="NAME=SUBJECT:VERSION",
        help="A named type the schema uses, defined by SUBJECT at VERSION (repeatable).",
    ),
]


def parse_references(values: list[str] | None) -> tuple[Reference, ...]:
    """--reference values as References; UsageError naming the bad one."""
    refs = []
    for value in values or ():
        try:
            refs.append(Reference.parse(value))
        except ValueError:
            raise UsageError(
                f"--reference {value!r} is not NAME=SUBJECT:VERSION.",
                hint="For example --reference com.acme.Money=money-value:2",
            ) from None
    return tuple(refs)


@registry_flags()
def register_command(
    schema: Annotated[Path, typer.Argument(help="The .avsc file to register.")],
    subject: SubjectOpt,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Only ask the registry whether it would accept it.")
    ] = False,
    normalize: Annotated[
        bool, typer.Option("--normalize", help="Let the registry normalize the schema first.")
    ] = False,
    reference: ReferenceOpt = None,
    output: JsonOutput = TextOrJson.text,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """Register SCHEMA under --subject. Registering the same schema again changes nothing.

    Exit 0 registered or already registered; 1 the registry refuses it as incompatible;
    2 the file is not a valid schema; 3 registry or network error.
    """
    with connect(flags) as conn:
        from schemacli.registry.compare import schema_text
        from schemacli.registry.history import load_candidate
        from schemacli.registry.publish import register_schema

        refs = parse_references(reference)
        from schemacli.contracts.source import read_text

        loaded = load_candidate(conn.client, read_text(schema, str(schema)), str(schema), refs)
        result = register_schema(
            conn.client,
            subject,
            schema_text(loaded),
            references=refs,
            normalize=normalize,
            dry_run=dry_run,
        )
        if is_json(output):
            emit_json({"registry": conn.url, "schema": str(schema), **_asdict(result)})
        else:
            echo(result.describe())
        raise typer.Exit(ExitCode.OK)


def _asdict(result: object) -> dict:
    from dataclasses import asdict

    return asdict(result)  # type: ignore[call-overload]
