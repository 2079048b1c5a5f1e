"""``schemacli report --html OUT/``: a static, self-contained site of the store and of
migration windows (``schemacli.site``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from schemacli.commands.options import JsonOutput
from schemacli.commands.store_options import (
    NoCache,
    Store,
    settings_from_flags,
    store_tree,
    verdict_cache,
)
from schemacli.errors import SchemacliError, error_text
from schemacli.output import TextOrJson
from schemacli.output.json_out import emit_json, is_json
from schemacli.output.terminal import echo

if TYPE_CHECKING:  # a state directory's overview reads Kafka's settings: only when one is named
    from converters.ops.overview import Overview


def report_command(
    html: Annotated[
        Path,
        typer.Option(
            "--html",
            metavar="OUT/",
            help="The folder to write the site into: new, empty, or an earlier report's.",
        ),
    ],
    store: Store = None,
    census: Annotated[
        list[Path] | None,
        typer.Option(
            "--census",
            metavar="FILE.json",
            help="A census document (`schemacli topics census TOPIC -o json`): its subjects' "
            "pages chart the versions in the data. Repeatable.",
        ),
    ] = None,
    state_dir: Annotated[
        list[Path] | None,
        typer.Option(
            "--state-dir",
            metavar="DIR",
            help="A migration's state directory (`migrate deploy --state-dir`): a page of its "
            "window, counts and lag over time, dependents and final report. Repeatable. "
            "[default: each one under .schemacli/migrate/]",
        ),
    ] = None,
    no_cache: NoCache = False,
    output: JsonOutput = TextOrJson.text,
) -> None:
    """Write a static HTML site: an index, one page per subject (its version timeline, the
    diff of each version, its level, its declared readers and their verdicts, the census
    chart) and one page per migration. It opens from a file, loads nothing, and needs no
    server. Every input is read before anything is written; nothing is written when one is
    refused. Exit codes: 0 written, 2 usage or input error (a bad census or state file, an
    output path that is a file or a folder of other files).
    """
    from schemacli.site.build import build_site
    from schemacli.site.census import read_census
    from schemacli.site.render import pages
    from schemacli.site.write import write_site

    settings = settings_from_flags(store)
    censuses = [read_census(path) for path in census or ()]
    migrations = _migrations(state_dir)
    site = build_site(
        store_tree(settings.store),
        settings.store,
        settings.levels,
        censuses=censuses,
        migrations=migrations,
        verdicts=verdict_cache(settings, no_cache),
    )
    written = write_site(html, pages(site))
    index = html / "index.html"
    if is_json(output):
        emit_json(
            {
                "out": str(html),
                "index": str(index),
                "pages": [str(p) for p in written if p.suffix == ".html"],
                "subjects": len(site.subjects),
                "migrations": len(site.migrations),
            }
        )
    else:
        for page in site.migrations:
            if page.error is not None:
                echo(f"warning: {page.state_dir}: {page.error}", err=True)
        echo(
            f"report: {len(site.subjects)} subject page(s), {len(site.migrations)} migration "
            f"page(s) written to {html}; open {index}"
        )


def _migrations(named: list[Path] | None) -> list[tuple[str, Overview | None, str | None]]:
    """The migrations' overviews. A named state directory that does not read is an error (exit
    2); without names, each one under ``.schemacli/migrate/`` (deploy's default) is shown, and
    one that does not read gets a page saying why."""
    if named:
        from converters.ops.overview import overview

        return [(str(d), overview(d), None) for d in named]
    base = Path(".schemacli") / "migrate"
    if not base.is_dir():
        return []  # no converter was deployed from here: no Kafka or Spark code is loaded
    from converters.ops.overview import discover, overview

    found: list[tuple[str, Overview | None, str | None]] = []
    for directory in discover(base):
        try:
            found.append((str(directory), overview(directory), None))
        except SchemacliError as err:
            found.append((str(directory), None, error_text(err)))
    return found
