"""`schemacli register SCHEMA --subject S`: register a schema, idempotently."""

from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer

from schemacli.commands.options import JsonOutput, count
from schemacli.commands.registry_options import NO_FLAGS, RegistryFlags, connect, registry_flags
from schemacli.errors import ExitCode, InputError, Location, UsageError
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
    major_version: Annotated[
        int | None,
        typer.Option(
            "--major-version",
            metavar="N",
            click_type=count(1, 2**31 - 1),
            help="Register SCHEMA as major version N of the subject (metadata.properties); "
            "with --rules, Confluent's migration rules go with it. Read back: a registry that "
            "drops metadata or rules is an error (exit 3).",
        ),
    ] = None,
    rules: Annotated[
        Path | None,
        typer.Option(
            "--rules",
            metavar="FILE",
            help="With --major-version: the JSON `schemacli migrate rules` writes (migration "
            "rules). Without: a contract file (v<N>.contract.json: domain rules, metadata "
            "tags), docs/rules.md. Its ruleSet and metadata go with SCHEMA and are read back.",
        ),
    ] = None,
    compatibility_group: Annotated[
        bool,
        typer.Option(
            "--compatibility-group",
            help="First set the subject's compatibilityGroup to the major-version property, so "
            "major versions are not checked against each other.",
        ),
    ] = False,
    property_name: Annotated[
        str,
        typer.Option("--property", metavar="NAME", help="The major-version metadata property."),
    ] = "major_version",
    output: JsonOutput = TextOrJson.text,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """Register SCHEMA under --subject. Registering the same schema again changes nothing.

    With --major-version N (and --rules FILE from `schemacli migrate rules`) SCHEMA becomes
    major version N of the same subject, carrying its migration rules.

    Exit 0 registered or already registered; 1 the registry refuses it as incompatible;
    2 the file is not a valid schema; 3 registry or network error (a registry that drops the
    metadata, rules or compatibilityGroup it was given, too).
    """
    if major_version is None and compatibility_group:
        raise UsageError(
            "--compatibility-group registers a major version: give --major-version N",
            hint="For example: --major-version 2 --rules rules.json --compatibility-group",
        )
    if major_version is None and rules is not None:
        if dry_run or normalize or reference:
            raise UsageError(
                "--rules does not combine with --dry-run, --normalize or --reference",
                hint="Register the version with its rules alone; check it first with "
                "`schemacli check` (it judges the rules too).",
            )
        _register_rule_set(schema, subject, rules, output, flags)
    if major_version is not None and (dry_run or normalize or reference):
        raise UsageError(
            "--major-version does not combine with --dry-run, --normalize or --reference",
            hint="Register the major version alone; check it first with `schemacli check`.",
        )
    if not property_name.strip() or not property_name.isprintable():
        raise UsageError(
            f"--property {property_name!r} is not a metadata property name",
            hint="Name the property the major version is kept in, e.g. --property major_version.",
        )
    rule_set, metadata = (None, {}) if rules is None else read_rules(rules)
    with connect(flags) as conn:
        if major_version is not None:
            from schemacli.contracts.jsontext.source import read_text
            from schemacli.registry.compare import schema_text
            from schemacli.registry.majorversion import register_major_version
            from schemacli.registry.schemas import RegistrySchemas

            loaded = RegistrySchemas(conn.client).candidate(
                read_text(schema, str(schema)), str(schema)
            )
            props = {**(metadata.get("properties") or {}), property_name: str(major_version)}
            done = register_major_version(
                conn.client,
                subject,
                schema_text(loaded),
                metadata={**metadata, "properties": props},
                rule_set=rule_set,
                property_name=property_name,
                major_version=major_version,
                compatibility_group=compatibility_group,
            )
            if is_json(output):
                emit_json({"registry": conn.url, "schema": str(schema), **asdict(done)})
            else:
                echo(done.describe())
            raise typer.Exit(ExitCode.OK)
        from schemacli.registry.compare import schema_text
        from schemacli.registry.publish import register_schema
        from schemacli.registry.schemas import RegistrySchemas

        refs = parse_references(reference)
        from schemacli.contracts.jsontext.source import read_text

        loaded = RegistrySchemas(conn.client).candidate(
            read_text(schema, str(schema)), str(schema), refs
        )
        result = register_schema(
            conn.client,
            subject,
            schema_text(loaded),
            references=refs,
            normalize=normalize,
            dry_run=dry_run,
        )
        if is_json(output):
            emit_json({"registry": conn.url, "schema": str(schema), **asdict(result)})
        else:
            echo(result.describe())
        raise typer.Exit(ExitCode.OK)


def _register_rule_set(
    schema: Path, subject: str, rules: Path, output: TextOrJson, flags: RegistryFlags
) -> None:
    """``register --rules CONTRACT`` without --major-version: the contract's rule set and
    metadata with the schema, read back (docs/rules.md)."""
    from schemacli.contracts.jsontext.source import read_text
    from schemacli.contracts.rules.model import read_contract
    from schemacli.registry.compare import schema_text
    from schemacli.registry.ruleset import register_with_rules
    from schemacli.registry.schemas import RegistrySchemas

    contract = read_contract(rules)
    document = contract.document.value
    with connect(flags) as conn:
        loaded = RegistrySchemas(conn.client).candidate(read_text(schema, str(schema)), str(schema))
        done = register_with_rules(
            conn.client,
            subject,
            schema_text(loaded),
            metadata=document.get("metadata") or None,
            rule_set=document.get("ruleSet") or {},
        )
        if is_json(output):
            emit_json({"registry": conn.url, "schema": str(schema), **asdict(done)})
        else:
            echo(done.describe())
    raise typer.Exit(ExitCode.OK)


RULES_LIMIT = 4 * 1024 * 1024  # a rule set is a few KB; JSONata of a wide schema some 100 KB


def read_rules(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(ruleSet, metadata) from a `schemacli migrate rules` file; InputError with line:col."""
    from schemacli.contracts.jsontext.source import read_json_file

    doc = read_json_file(
        path,
        limit=RULES_LIMIT,
        what="rules file",
        hint="Write it with `schemacli migrate rules MAPPING --out FILE`.",
    ).value
    rule_set = doc.get("ruleSet") if isinstance(doc, dict) else None
    metadata = doc.get("metadata", {}) if isinstance(doc, dict) else None
    rules = rule_set.get("migrationRules") if isinstance(rule_set, dict) else None
    if (
        not isinstance(rules, list)
        or not rules
        or not all(isinstance(r, dict) and isinstance(r.get("expr"), str) for r in rules)
        or not isinstance(metadata, dict)
        or not isinstance(metadata.get("properties", {}), dict)
    ):
        raise InputError(
            "the rules file has no ruleSet.migrationRules (a list of rules, each with an expr), "
            "or its metadata is not an object",
            location=Location(source=str(path), pointer="/ruleSet/migrationRules"),
            hint="Write it with `schemacli migrate rules MAPPING --out FILE`.",
        )
    assert isinstance(rule_set, dict)  # checked above, with `rules`
    return rule_set, metadata
