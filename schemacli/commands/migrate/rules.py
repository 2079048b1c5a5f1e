"""`schemacli migrate rules`: the mapping as Confluent migration rules (JSONata), to register."""

import json
from pathlib import Path
from typing import Annotated

import click
import typer

from schemacli.commands.migrate.common import MappingArg, load_mapping
from schemacli.commands.options import JsonOutput, count
from schemacli.commands.outfile import Force, check_out, write_out
from schemacli.commands.registry_options import NO_FLAGS, RegistryFlags, connect, registry_flags
from schemacli.errors import ExitCode, UsageError
from schemacli.output import TextOrJson
from schemacli.output.json_out import emit_json, is_json

MAJOR_MAX = 2**31 - 1


@registry_flags()
def rules_command(
    mapping_file: MappingArg,
    major_version: Annotated[
        int,
        typer.Option(
            "--major-version",
            metavar="N",
            click_type=count(1, MAJOR_MAX),
            help="The major version v2 is registered under (metadata.properties), 1 or more.",
        ),
    ] = 2,
    property_name: Annotated[
        str,
        typer.Option(
            "--property",
            metavar="NAME",
            help="The metadata property holding the major version; the subject's "
            "compatibilityGroup names the same property.",
        ),
    ] = "major_version",
    side: Annotated[
        str,
        typer.Option(
            "--side",
            click_type=click.Choice(["value", "key"]),
            help="value: the mapping's fields; key: its `key:` section (the key subject).",
        ),
    ] = "value",
    client: Annotated[
        str,
        typer.Option(
            "--client",
            click_type=click.Choice(["python", "java"]),
            help="The deserializer that runs the rules: python (confluent-kafka: unions bare) "
            "or java (Confluent's Java serializers: Avro's JSON encoding, unions wrapped).",
        ),
    ] = "python",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Write the JSON here (default: stdout); an existing file needs --force."
        ),
    ] = None,
    force: Force = False,
    output: JsonOutput = TextOrJson.text,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """Compile MAPPING into Confluent migration rules: the body of the register call for v2 in the
    v1 subject (schema, metadata with the major version, ruleSet.migrationRules with a JSONata
    DOWNGRADE rule, and an UPGRADE rule when the mapping can be inverted).

    A record the converter dead-letters makes the DOWNGRADE rule fail ($error, onFailure ERROR).
    Conversions JSONata cannot express exactly are refused, naming the rule's line:col.

    Exit codes: 0 compiled, 2 input error (a conversion without a JSONata form too; nothing is
    written), 3 registry error (a side naming only a subject is fetched from the registry).
    """
    if not property_name.strip() or len(property_name) > 200:
        raise UsageError(
            f"--property {property_name!r} is no property name",
            hint="Give a metadata property name, e.g. major_version or application.major.version.",
        )
    check_out(out, force=force)
    with connect(flags) as conn:
        from converters.mapping.jsonata import compile_rules, register_body

        mapping = load_mapping(conn, mapping_file)
        if side == "key":
            if mapping.key is None:
                raise UsageError(
                    f"--side key: {mapping_file} has no `key:` section",
                    hint="Plan one with `migrate plan --key-from/--key-to`, or drop --side key.",
                )
            mapping = mapping.key
        rules = compile_rules(mapping, client=client)
        body = register_body(
            mapping, rules, major_version=major_version, property_name=property_name
        )
    text = json.dumps(body, indent=2, ensure_ascii=False) + "\n"
    if out is not None:
        write_out(out, text, force=force)
    upgrade = "and UPGRADE" if rules.upgrade else f"(no UPGRADE: {rules.no_upgrade})"
    summary = (
        f"compiled DOWNGRADE {upgrade} for {mapping.source.subject or 'v2'} "
        f"{property_name}={major_version}" + (f"; wrote {out}" if out else "")
    )
    if is_json(output):
        emit_json(
            {
                "register": body if out is None else None,
                "out": str(out) if out else None,
                "downgrade": True,
                "upgrade": rules.upgrade is not None,
                "no_upgrade": rules.no_upgrade,
                "client": client,
            }
        )
        raise typer.Exit(ExitCode.OK)
    if out is None:
        click.echo(text, nl=False)
    click.echo(summary, err=True)
    raise typer.Exit(ExitCode.OK)
