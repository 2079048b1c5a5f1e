"""The registry options are declared once and every registry-backed command takes all of them,
packed into one RegistryFlags (schemacli.commands.registry_options.registry_flags)."""

from __future__ import annotations

from typing import Annotated

import click
import pytest
import typer
from typer.testing import CliRunner

from schemacli.app import app
from schemacli.commands.registry_options import NO_FLAGS, RegistryFlags, registry_flags

REGISTRY_OPTIONS = {
    "--registry",
    "--user",
    "--password",
    "--token",
    "--ca",
    "--cert",
    "--key",
    "--insecure",
    "--timeout",
    "--retries",
    "--concurrency",
    "--verbose",
}


def _commands(group: click.Command, path: tuple[str, ...] = ()):
    if isinstance(group, click.Group):
        for name, sub in group.commands.items():
            yield from _commands(sub, (*path, name))
    else:
        yield " ".join(path), group


def test_every_command_with_a_registry_flag_takes_all_the_registry_options():
    root = typer.main.get_command(app)
    taking = {}
    for name, command in _commands(root):
        options = {o for p in command.params for o in p.opts}
        if "--registry" in options:
            taking[name] = REGISTRY_OPTIONS - options
    assert {"check", "gate", "register", "pull", "subjects list", "migrate deploy"} <= set(taking)
    assert {name: missing for name, missing in taking.items() if missing} == {}


def test_the_flags_reach_the_command_as_one_value_after_its_own_options():
    seen: list[tuple[str, RegistryFlags]] = []
    toy = typer.Typer()

    @toy.command()
    @registry_flags()
    def show(  # this module defers annotations: the decorator evaluates them for typer
        name: Annotated[str, typer.Option("--name", "-n")] = "x", flags: RegistryFlags = NO_FLAGS
    ) -> None:
        seen.append((name, flags))

    result = CliRunner().invoke(
        toy, ["-n", "y", "-r", "http://r:8081", "--retries", "0", "--insecure", "-v"]
    )
    assert result.exit_code == 0, result.output
    assert seen == [
        ("y", RegistryFlags(url="http://r:8081", insecure=True, retries=0, verbose=True))
    ]
    params = [p.name for p in typer.main.get_command(toy).params]
    assert params[0] == "name" and params[1:3] == ["registry", "user"]


def test_a_command_without_a_flags_parameter_is_a_mistake_at_import():
    with pytest.raises(TypeError, match="flags"):
        registry_flags()(lambda name: None)
