"""``schemacli spark``: generate a PySpark reader for a subject; print a schema's Spark type.

Both commands are pure: they need no pyspark and start no JVM.
"""

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from schemacli.commands.migrate.common import load_mapping
from schemacli.commands.options import OUTPUT_META_KEY, JsonOutput
from schemacli.commands.outfile import Force, check_out, write_out
from schemacli.commands.registry_options import (
    NO_FLAGS,
    Connection,
    RegistryFlags,
    connect,
    registry_flags,
)
from schemacli.errors import InputError, Location, UsageError
from schemacli.output import OutputFormat, TextOrJson
from schemacli.output.json_out import emit_json
from schemacli.redact import printable
from schemacli.topics import TOPIC_HINT, topic_problem

if TYPE_CHECKING:  # the reader's generator and the core's loader: only when a command runs
    from schemacli.contracts.avro.loader import LoadedSchema
    from schemacli.contracts.rules.model import Contract
    from schemacli.registry.schemas import RegistrySchemas
    from spark_avro.codegen import MigrationSpec, ReaderModuleSpec, RulesSpec, WriterVersion

spark_app = typer.Typer(
    name="spark",
    help="Spark readers for Confluent-framed Avro topics: generate one, or show a Spark schema.",
    no_args_is_help=True,
)


@spark_app.command("codegen")
@registry_flags()
def codegen(
    subject: Annotated[
        str, typer.Option("--subject", "-s", help="Subject whose versions to embed.")
    ],
    topic: Annotated[
        str, typer.Option("--topic", "-t", help="Kafka topic the reader subscribes to.")
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Write the module here (default: stdout); an existing file needs --force."
        ),
    ] = None,
    force: Force = False,
    streaming: Annotated[
        bool, typer.Option("--streaming", help="Make the module read as a stream by default.")
    ] = False,
    reader_version: Annotated[
        int | None,
        typer.Option(
            "--reader-version", help="Version to decode every record into [default: latest]."
        ),
    ] = None,
    store: Annotated[
        Path | None,
        typer.Option("--store", help="Take the versions from this local store, not the registry."),
    ] = None,
    schema_ids: Annotated[
        list[str] | None,
        typer.Option(
            "--schema-id",
            metavar="VERSION=ID",
            help="With --store: the registry id of a version (repeat for each version).",
        ),
    ] = None,
    migrate: Annotated[
        Path | None,
        typer.Option(
            "--migrate",
            metavar="MAPPING",
            help="Migrate on read: v2 records converted to v1 by this mapping's Spark SQL, as "
            "the converter does; v1 records read as written.",
        ),
    ] = None,
    rules: Annotated[
        bool,
        typer.Option(
            "--rules",
            help="Apply the reader version's data-quality rules (its CEL and CEL_FIELD "
            "CONDITIONs compiled to Spark SQL): from the registry, or with --store its "
            "v<N>.contract.json. The module then reads PERMISSIVE only.",
        ),
    ] = False,
    output: JsonOutput = TextOrJson.text,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """Write a standalone PySpark module reading TOPIC: every version of SUBJECT embedded by id.

    The module decodes each Confluent-framed record with its own writer schema into one reader
    schema (the latest version unless --reader-version), keeps bad records (PERMISSIVE) or fails
    on them (FAILFAST), and needs only pyspark plus the spark-avro and spark-sql-kafka packages.
    With --migrate MAPPING (a `migrate plan` mapping for SUBJECT) every row is v1: the module
    embeds the mapping's compiled Spark SQL and, from the registry, the versions of the
    mapping's target subject too. With --rules the module applies the reader version's
    data-quality rules as read_topic(rules=...) does: a record a rule refuses is a bad record
    of kind rule. Exit codes: 0 written, 1 the mapping is not deployable, 2 usage or input
    error (an existing --out without --force, a version without rules, a rule with no Spark
    SQL form: nothing is written), 3 registry error.
    """
    check_out(out, force=force)  # before any registry call: a refusal costs nothing
    if migrate is not None and reader_version is not None:
        raise UsageError(
            "--migrate reads every record into the mapping's v1 schema: --reader-version does "
            "not apply",
            hint="Drop --reader-version, or generate a reader without --migrate.",
        )
    if migrate is not None and rules:
        raise UsageError(
            "--rules applies a version's rules to a reader without --migrate "
            "(as read_topic(rules=) refuses migrate=)",
            hint="Generate the migrating reader without --rules, or a reader with rules "
            "without --migrate.",
        )
    with connect(flags, store=store) as conn:
        from schemacli.registry.schemas import RegistrySchemas
        from spark_avro.codegen import ReaderModuleSpec, render_reader_module

        problem = topic_problem(topic)
        if problem:
            raise UsageError(f"--topic {topic!r} {problem}", hint=TOPIC_HINT)
        # one road per run, for what the registry gives (with --store: nothing)
        road = RegistrySchemas(conn.client) if store is None else None
        if store is not None:
            writers = _store_versions(store, subject, _parse_ids(schema_ids or []))
        else:
            if schema_ids:
                raise UsageError(
                    "--schema-id only applies with --store: the registry knows its ids"
                )
            assert road is not None  # without --store
            writers = _registry_versions(road, subject)
        migration = None
        if migrate is not None:
            migration, writers = _migration(conn, road, migrate, subject, writers, store=store)
        chosen = reader_version if reader_version is not None else max(w.version for w in writers)
        if chosen not in {w.version for w in writers}:
            raise UsageError(
                f"subject {subject!r} has no version {chosen}",
                hint=f"Versions: {', '.join(str(w.version) for w in writers)}.",
            )
        spec = ReaderModuleSpec(
            subject=subject,
            topic=topic,
            writers=tuple(writers),
            reader_version=chosen,
            streaming=streaming,
            module_file=out.name if out is not None else "reader.py",
            migration=migration,
        )
        if rules:
            spec = replace(spec, rules=_rules(road, store, subject, spec.reader))
        _check_readable(spec)
        source = render_reader_module(spec)
        if out is not None:
            write_out(out, source, force=force)
        reader = spec.reader
        summary: dict[str, Any] = {
            "out": str(out) if out is not None else None,
            "topic": topic,
            "subject": subject,
            "reader": {"version": reader.version, "id": reader.schema_id},
            "writers": [{"version": w.version, "id": w.schema_id} for w in writers],
            "streaming": streaming,
            "rules": None,
        }
        if spec.rules is not None:
            summary["rules"] = {
                "from": spec.rules.origin,
                "source": spec.rules.source,
                "names": list(spec.rules.applied),
                "not_acted_on": list(spec.rules.not_acted_on),
                "transforms": list(spec.rules.transforms),
            }
        if migration is not None:
            summary["reader"] = {"mapping": str(migrate), "schema": "v1"}
            summary["writers"] = [
                {"version": w.version, "id": w.schema_id, "subject": w.subject or subject}
                for w in writers
            ]
            summary["migrate"] = {
                "mapping": str(migrate),
                "v1_writer_ids": list(migration.v1_ids),
                "incompatible_writer_ids": sorted(migration.incompatible),
            }
        if _wants_json(output):
            emit_json(summary if out is not None else {**summary, "source": source})
            return
        if out is None:
            typer.echo(source, nl=False)
        if spec.rules is not None:
            typer.echo(_rules_line(spec.rules), err=True)
        ids = ", ".join(f"v{w.version}=id {w.schema_id}" for w in writers)
        if migration is not None:
            ids = ", ".join(
                f"{w.subject or subject} v{w.version}=id {w.schema_id}" for w in writers
            )
        typer.echo(
            f"{out if out is not None else 'reader'}: topic {topic}, subject {subject}, "
            f"writers {ids}, "
            + (
                f"reader v{reader.version}"
                if migration is None
                else f"v1 rows by {migrate} (v1 writer ids: "
                f"{', '.join(map(str, migration.v1_ids)) or 'none'})"
            ),
            err=True,
        )


@spark_app.command("ddl")
def ddl(
    schema: Annotated[Path, typer.Argument(help="The Avro schema (.avsc).")],
    permissive: Annotated[
        bool,
        typer.Option(
            "--permissive",
            help="Every field nullable, as from_avro PERMISSIVE (and the reader) returns it.",
        ),
    ] = False,
    stable_union_names: Annotated[
        bool,
        typer.Option(
            "--stable-union-names",
            help="Union members named member_<type> (from_avro's "
            "enableStableIdentifiersForUnionType), as spark_avro's readers name them.",
        ),
    ] = False,
    output: JsonOutput = TextOrJson.text,
) -> None:
    """Print the Spark type Spark's from_avro gives SCHEMA: as a DDL string and as StructType JSON.

    The mapping is Spark 4.0's (SchemaConverters.toSqlType): logical types, decimals, unions to
    nullable types or struct member0..N (member_<type> with --stable-union-names: what
    spark_avro's readers return, with --permissive), enums to string, fixed/bytes to binary.
    Exit codes: 0 printed, 2 input error (unreadable, invalid or recursive schema).
    """
    from schemacli.contracts.avro.loader import load_schema_file
    from spark_avro.types import UnsupportedForSpark, as_nullable, avro_to_spark, to_ddl

    loaded = load_schema_file(schema)
    try:
        spark_type, _ = avro_to_spark(
            loaded.value, source=loaded.source, stable_union_names=stable_union_names
        )
    except UnsupportedForSpark as err:
        pointer = err.location.pointer if err.location is not None else None
        raise err.with_location(loaded.location(pointer)) from None
    if permissive:
        spark_type = as_nullable(spark_type)
    text = to_ddl(spark_type)
    if _wants_json(output):
        emit_json({"schema": loaded.source, "ddl": text, "struct_type": spark_type})
        return
    typer.echo(f"DDL:\n{text}\n\nStructType JSON:\n{json.dumps(spark_type, indent=2)}")


def _wants_json(output: OutputFormat | TextOrJson | None) -> bool:
    # typer 0.24 turns the enum the shared --output callback returns into None; the callback
    # also records the format in ctx.meta, so read it there when the value was lost.
    if output is None:
        import click

        return click.get_current_context().meta.get(OUTPUT_META_KEY) == OutputFormat.json.value
    return output is not None and output.value == OutputFormat.json.value


_MAX_ID = 2**31 - 1  # the Confluent header holds a 4-byte id; registries give positive ints


def _parse_ids(pairs: list[str]) -> dict[int, int]:
    ids: dict[int, int] = {}
    for pair in pairs:
        version, sep, schema_id = pair.partition("=")
        if not sep or not version.strip().lstrip("v").isdigit() or not schema_id.strip().isdigit():
            raise UsageError(
                f"--schema-id {pair!r} is not VERSION=ID", hint="For example --schema-id 1=7."
            )
        number, given = int(version.strip().lstrip("v")), int(schema_id)
        if not 1 <= given <= _MAX_ID or number < 1:
            raise UsageError(
                f"--schema-id {pair!r}: versions start at 1 and ids are 1 to {_MAX_ID} "
                "(the Confluent header holds a 4-byte id)",
                hint="Give the version number and the id the registry gave it.",
            )
        if ids.get(number, given) != given:
            raise UsageError(
                f"--schema-id gives version {number} two ids: {ids[number]} and {given}",
                hint="Give each version once, with the id the registry gave it.",
            )
        shared = [v for v, i in ids.items() if i == given and v != number]
        if shared:
            raise UsageError(
                f"--schema-id gives id {given} to versions {shared[0]} and {number}",
                hint="Within a subject each version has its own id: check the registry's ids "
                "(schemacli subjects show SUBJECT --version N).",
            )
        ids[number] = given
    return ids


def _store_versions(store: Path, subject: str, ids: dict[int, int]) -> "list[WriterVersion]":
    from schemacli.contracts.store.history import load_history
    from schemacli.contracts.store.tree import FileTree
    from spark_avro.codegen import WriterVersion

    history = load_history(FileTree(store), subject)
    if not history:
        raise InputError(
            f"subject {subject!r} has no versions in the store",
            location=Location(source=str(store / "subjects" / subject)),
            hint="Check the subject name, or add v1.avsc there.",
        )
    unknown = sorted(set(ids) - {loaded.version for loaded in history})
    if unknown:
        raise UsageError(
            f"--schema-id names version(s) {', '.join(map(str, unknown))}, which the store does "
            f"not hold for {subject!r}",
            hint="Versions in the store: "
            + ", ".join(str(loaded.version) for loaded in history)
            + ".",
        )
    missing = [str(loaded.version) for loaded in history if loaded.version not in ids]
    if missing:
        raise UsageError(
            f"the store does not know registry ids; no --schema-id for version(s) "
            f"{', '.join(missing)} of {subject!r}",
            hint="Pass --schema-id VERSION=ID for every version (the ids the registry gave them),"
            " or read the versions from the registry with --registry URL.",
        )
    writers = []
    for loaded in history:
        assert loaded.version is not None  # a store's version file always has its number
        writers.append(WriterVersion(ids[loaded.version], loaded.version, _embedded(loaded)))
    return writers


def _embedded(loaded: "LoadedSchema") -> Any:
    """A store version as one schema: the named types its references define, inline."""
    from schemacli.contracts.avro.inline import inlined

    return inlined(loaded)


def _registry_versions(road: "RegistrySchemas", subject: str) -> list[Any]:
    """The subject's writers from the registry, self-contained (references inlined): the
    module needs no registry to run."""
    from spark_avro.codegen import WriterVersion

    writers = []
    for found in road.writers(subject).values():
        assert found.number is not None  # a subject's version has its number
        writers.append(WriterVersion(found.id, found.number, found.value))
    if not writers:
        raise InputError(
            f"subject {subject!r} has no versions in the registry",
            location=Location(source=f"{road.client.settings.display_url} {subject}"),
            hint="Register a version first (schemacli register SCHEMA --subject SUBJECT), or "
            "check the subject's name (schemacli subjects list).",
        )
    return writers


def _migration(
    conn: Connection,
    road: "RegistrySchemas | None",
    path: Path,
    subject: str,
    writers: "list[WriterVersion]",
    *,
    store: Path | None,
) -> "tuple[MigrationSpec, list[WriterVersion]]":
    """The MigrationSpec of the mapping at ``path`` and the writers with the mapping's target
    subject's versions added (from the registry; with --store, SUBJECT's alone). Raises what
    ``converters.onread`` raises: the mapping is checked against SUBJECT's schemas."""
    from converters.onread import load_migration
    from spark_avro import onread
    from spark_avro.codegen import MigrationSpec, WriterVersion

    migration = load_migration(load_mapping(conn, path))
    subjects = onread.subjects_to_read(migration, subject)
    if road is not None:
        for other in subjects[1:]:
            known = {w.schema_id for w in writers}
            writers = writers + [
                WriterVersion(w.schema_id, w.version, w.schema, subject=other)
                for w in _registry_versions(road, other)
                if w.schema_id not in known
            ]
    texts = {w.schema_id: json.dumps(w.schema) for w in writers}
    onread.require_source_among(migration, texts, f"subject {subject!r}")
    spec = MigrationSpec(
        mapping_file=path.name,
        source_schema=migration.source_json,
        target_schema=migration.target_json,
        v1_ids=onread.v1_writer_ids(migration, texts),
        columns=migration.columns,
        error_sql=migration.error_sql,
        incompatible=onread.v2_incompatible(migration, texts),
    )
    return spec, writers


def _check_readable(spec: "ReaderModuleSpec") -> None:
    """Every embedded schema must map to Spark types, and the reader must be a record."""
    from spark_avro.types import avro_to_spark

    for writer in spec.writers:
        avro_to_spark(writer.schema, source=f"{spec.subject}:{writer.version}")
    if spec.migration is not None:
        return  # the reader is the mapping's v1 schema, a record (checked when it was read)
    reader = spec.reader.schema
    if not (isinstance(reader, dict) and reader.get("type") == "record"):
        raise InputError(
            f"version {spec.reader_version} of {spec.subject!r} is not a record",
            location=Location(source=f"{spec.subject}:{spec.reader_version}", pointer=""),
            hint="The reader turns the record's fields into columns; read a record subject.",
        )


def _rules(
    road: "RegistrySchemas | None", store: Path | None, subject: str, reader: "WriterVersion"
) -> "RulesSpec":
    """The reader version's rule set (the registry's, or with --store its contract file),
    compiled for both layouts the module's read() offers. InputError for a version without
    rules, RulesNotCompiled for a rule with no Spark SQL form (both exit 2)."""
    from schemacli.contracts.avro.loader import load_schema_text
    from spark_avro.codegen import RulesSpec
    from spark_avro.rules import compile_rules, registry_contract, rule_table

    where = f"{subject}:{reader.version}"
    if road is not None:
        contract = registry_contract(road.version(subject, reader.version))
        origin, source = "registry", where
    else:
        assert store is not None  # the versions came from the store
        contract, source = _store_contract(store, subject, reader.version)
        origin = "store"
    if not contract.rule_set.domain_rules:
        raise InputError(
            f"version {reader.version} of {subject!r} has no data-quality rules (its rule set "
            "has no domainRules)",
            location=(
                contract.location("/ruleSet")
                if contract.document.pointer_exists("/ruleSet")
                else Location(source=contract.source)
            ),
            hint="Generate the reader without --rules, or give the version a rule set of CEL "
            "CONDITIONs (docs/rules.md).",
        )
    schema = load_schema_text(json.dumps(reader.schema), where).schema
    flat = compile_rules(contract, schema, "READ", root="", transforms=True)
    nested = compile_rules(contract, schema, "READ", root="`record`", transforms=True)
    conditions = [c for c in flat if c.rule.is_condition]
    return RulesSpec(
        origin=origin,
        source=source,
        applied=tuple(c.rule.label for c in conditions if c.action_on_failure != "NONE"),
        not_acted_on=tuple(c.rule.label for c in conditions if c.action_on_failure == "NONE"),
        flat=rule_table(flat),
        nested=rule_table(nested),
        transforms=tuple(c.rule.label for c in flat if not c.rule.is_condition),
    )


def _store_contract(store: Path, subject: str, version: int) -> "tuple[Contract, str]":
    """The store's contract file of ``subject``'s ``version`` and its path in the store
    (InputError when it has none)."""
    from schemacli.contracts.rules.store import contract_paths, read_store_contracts
    from schemacli.contracts.store.tree import FileTree

    tree = FileTree(store)
    versions = {version: tree.subjects()[subject][version]}
    found = read_store_contracts(tree, versions)
    path = contract_paths(versions)[version]
    if version not in found:
        raise InputError(
            f"version {version} of {subject!r} has no contract file in the store, so no rules",
            location=Location(source=tree.source(path)),
            hint="Pull the version's data contract (schemacli pull), write the file "
            "(docs/rules.md), or generate the reader without --rules.",
        )
    return found[version], path


def _rules_line(rules: "RulesSpec") -> str:
    """One line on stderr: which rules the module applies, from where (the names are the
    contract's text: shown printable)."""
    applied = ", ".join(rules.applied) or "none (no READ CONDITION acts on a failure)"
    line = f"rules of {rules.source} in the {rules.origin}: {applied}"
    if rules.not_acted_on:
        line += f"; not acted on (onFailure NONE): {', '.join(rules.not_acted_on)}"
    if rules.transforms:
        line += f"; transforms: {', '.join(rules.transforms)}"
    return printable(line)
