"""``schemacli migrate``: the group of the migrate commands, in the order its --help lists them
(imported by the app only when ``schemacli migrate ...`` runs)."""

from __future__ import annotations

import typer

from schemacli.commands.migrate.deploy import deploy_command
from schemacli.commands.migrate.finish import finish_command
from schemacli.commands.migrate.plan import plan_command
from schemacli.commands.migrate.replay import replay_command
from schemacli.commands.migrate.rules import rules_command
from schemacli.commands.migrate.status import status_command
from schemacli.commands.migrate.stop import stop_command
from schemacli.commands.migrate.validate import validate_command

migrate_app = typer.Typer(
    name="migrate",
    help="Convert a v2 topic back to v1 with a Spark job: plan a mapping, validate it, deploy, "
    "watch and stop the job, replay its dead letters, and finish the migration once nobody "
    "depends on v1; or compile the same mapping into Confluent migration rules (rules)."
    "\n\nExit codes: 0 ok · 1 mapping not deployable / check failed · "
    "2 usage or input error · 3 registry or network error.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

# its commands, in the order `schemacli migrate --help` lists them
migrate_app.command("plan")(plan_command)
migrate_app.command("validate")(validate_command)
migrate_app.command("deploy")(deploy_command)
migrate_app.command("status")(status_command)
migrate_app.command("stop")(stop_command)
migrate_app.command("finish")(finish_command)
migrate_app.command("replay")(replay_command)
migrate_app.command("rules")(rules_command)
