"""What the migrate commands share: their argument types, reading a mapping (its schemas from the
registry when it names only a subject), finding a deployment's state directory. The Kafka
options they share with other commands are in ``commands.kafka_options``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, overload

import typer

from schemacli.commands.options import DAY, seconds
from schemacli.commands.registry_options import Connection
from schemacli.errors import UsageError

if TYPE_CHECKING:
    from converters.mapping.model import Mapping  # the mapping itself stays lazy: --help

MappingArg = Annotated[Path, typer.Argument(help="The mapping file (YAML, `version: 1`).")]
StateMappingArg = Annotated[
    Path | None, typer.Argument(help="The mapping file (finds the state dir).")
]
StateDir = Annotated[
    Path | None,
    typer.Option(
        "--state-dir",
        help="Where the deployment keeps its state "
        "[default: .schemacli/migrate/<v2 topic>--<v1 topic>].",
    ),
]
# as converters.ops.dependents.WINDOW_SECONDS (not imported: --help stays fast)
WINDOW_SECONDS = 900.0
Window = Annotated[
    float,
    typer.Option(
        "--window",
        metavar="SECONDS",
        click_type=seconds(1, 365 * DAY),
        help="How far back to look for messages written to v1 directly (not by the converter), "
        "1 s to 365 days.",
    ),
]


def load_mapping(conn: Connection, mapping_file: Path) -> Mapping:
    """The mapping with every side's schema: from its file, inline, or (a side naming only a
    ``subject``) from the registry (``converters.mapping.schemas.with_registry_schemas``)."""
    from converters.mapping.reader import load
    from converters.mapping.schemas import missing_schemas, with_registry_schemas
    from schemacli.registry.schemas import RegistrySchemas

    mapping = load(mapping_file)
    if not missing_schemas(mapping):
        return mapping
    return with_registry_schemas(mapping, RegistrySchemas(conn.client))


@overload
def state_of(
    mapping_file: Path, state_dir: Path | None, *, deployed: bool = False
) -> tuple[Path, Mapping]: ...
@overload
def state_of(
    mapping_file: Path | None, state_dir: Path | None, *, deployed: bool = False
) -> tuple[Path, Mapping | None]: ...
def state_of(
    mapping_file: Path | None, state_dir: Path | None, *, deployed: bool = False
) -> tuple[Path, Mapping | None]:
    """The state directory of a deployment (given, or the mapping's default) and the mapping
    (None when only the directory is given), both read locally. ``deployed``: the directory
    must hold a deployment's state (an InputError, exit 2, naming it) — checked here, before
    a command asks Kafka or the registry anything."""
    from converters.mapping.reader import load
    from converters.state import default_state_dir, has_state, no_state

    mapping = load(mapping_file, load_schemas=False) if mapping_file else None
    if state_dir is not None:
        sdir = state_dir
    elif mapping is not None:
        sdir = default_state_dir(mapping)
    else:
        raise UsageError("give the mapping file or --state-dir")
    if deployed and not has_state(sdir):
        raise no_state(sdir)
    return sdir, mapping
