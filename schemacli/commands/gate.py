"""``schemacli gate``: the CI compatibility gate over the whole local store."""

import os
import sys
from typing import Annotated

import typer

from schemacli.commands.check import Against, Store
from schemacli.commands.options import Output
from schemacli.commands.registry_options import (
    Ca,
    Cert,
    Insecure,
    Key,
    Password,
    RegistryMode,
    Retries,
    Timeout,
    Token,
    User,
    Verbose,
)
from schemacli.output import OutputFormat


def register(app: typer.Typer) -> None:
    @app.command("gate")
    def gate(
        store: Store = None,
        against: Against = None,
        output: Output = OutputFormat.text,
        quiet: Annotated[
            bool, typer.Option("--quiet", "-q", help="No progress messages on stderr.")
        ] = False,
        registry: RegistryMode = None,
        register_: Annotated[
            bool,
            typer.Option(
                "--register",
                help="With --registry: register every new version, only if every check passed "
                "(all or nothing).",
            ),
        ] = False,
        user: User = None,
        password: Password = None,
        token: Token = None,
        ca: Ca = None,
        cert: Cert = None,
        key: Key = None,
        insecure: Insecure = False,
        timeout: Timeout = None,
        retries: Retries = None,
        verbose: Verbose = False,
    ) -> None:
        """Check every subject's versions at the subject's compatibility level.

        Without --against: every version against the versions before it. With --against
        git:REF: only versions new since REF, against the history at REF; an existing version
        that changed or disappeared is a violation (history is immutable). Lists every
        violation. With --output github inside GitHub Actions, the summary table also goes to
        $GITHUB_STEP_SUMMARY. Exit codes: 0 pass, 1 incompatible, 2 usage or input error (e.g.
        an invalid .avsc file).
        """
        from schemacli.commands.check import store_tree
        from schemacli.config import load_settings
        from schemacli.contracts.gate import gate as check_store
        from schemacli.contracts.store import git_tree
        from schemacli.output import gate_report, render

        settings = load_settings(flags={"store": store})
        head = store_tree(settings.store)
        if registry is not None or register_:
            from schemacli.commands.registry_gate import gate_with_registry
            from schemacli.registry.settings import RegistryFlags

            flags = RegistryFlags(
                registry, user, password, token, ca, cert, key, insecure, timeout, retries, verbose
            )
            gate_with_registry(flags, settings, head, against, register_, output, quiet)
        base = git_tree(against, settings.store) if against else None
        if not quiet:
            where = f" against {base.label}" if base else ""
            typer.echo(f"gate: checking {head.source('').rstrip('/')}{where}", err=True)
        result = check_store(head, settings.levels, base=base)
        report = gate_report(result)
        typer.echo(render(report, output, color=sys.stdout.isatty()), nl=False)
        summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
        if output is OutputFormat.github and summary_file:
            # In GitHub Actions, also leave the table on the run's summary page.
            from schemacli.output.github import step_summary

            with open(summary_file, "a", encoding="utf-8") as handle:
                handle.write(step_summary(report))
        raise typer.Exit(int(result.verdict.exit_code))
