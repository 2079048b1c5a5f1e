"""One rule decides where every setting comes from: flag > environment > file > default
(``schemacli.origin.resolve``), for the project's settings and the registry's alike."""

from __future__ import annotations

import typer

from schemacli.commands.registry_options import NO_FLAGS, registry_flags
from schemacli.config import STORE_SETTING, load_settings
from schemacli.errors import Location
from schemacli.origin import Kind, Origin, Setting, Sources, resolve
from schemacli.registry.settings import SETTINGS, RegistryFlags, RegistrySettings

TIMEOUT = Setting("timeout", "SCHEMACLI_X_TIMEOUT", "--timeout")
HERE = Location(source="schemacli.toml", line=3)


def sources(**given: object) -> Sources:
    return Sources(
        flags={"timeout": given.get("flag")},
        env={"SCHEMACLI_X_TIMEOUT": str(given["env"])} if "env" in given else {},
        file={"timeout": given["file"]} if "file" in given else {},
        file_origin=lambda key: Origin.file(f"x.{key}", HERE),
    )


def test_a_flag_wins_over_the_environment_the_file_and_the_default():
    value, origin = resolve(TIMEOUT, sources(flag=1, env=2, file=3), 10)
    assert (value, origin) == (1, Origin.flag("--timeout"))


def test_the_environment_wins_over_the_file_and_an_empty_variable_counts_as_unset():
    assert resolve(TIMEOUT, sources(env=2, file=3), 10) == ("2", Origin.env("SCHEMACLI_X_TIMEOUT"))
    assert resolve(TIMEOUT, sources(env="", file=3), 10)[0] == 3


def test_a_value_from_the_file_carries_its_place_there():
    value, origin = resolve(TIMEOUT, sources(file=3), 10)
    assert value == 3
    assert origin == Origin(Kind.FILE, "x.timeout", HERE)


def test_the_default_is_named_by_the_flag_that_would_change_it():
    value, origin = resolve(TIMEOUT, sources(), 10)
    assert (value, origin.kind, origin.label) == (10, Kind.DEFAULT, "the default --timeout")


def test_project_and_registry_settings_follow_the_same_precedence(tmp_path):
    """The store (config) and the registry's timeout, each given by flag, environment and
    file at once, then with the flag and the environment taken away in turn."""
    (tmp_path / "schemacli.toml").write_text('store = "from-file"\n[registry]\ntimeout = 3\n')
    registry_env = SETTINGS["timeout"].env
    layers = {
        "flag": ({"store": tmp_path / "from-flag"}, RegistryFlags(url="http://r:1", timeout=1.0)),
        "env": ({}, RegistryFlags(url="http://r:1")),
    }
    env = {STORE_SETTING.env: str(tmp_path / "from-env"), registry_env: "2"}
    for layer, expected in (("flag", ("from-flag", 1.0)), ("env", ("from-env", 2.0))):
        flags, registry = layers[layer]
        settings = load_settings(cwd=tmp_path, env=env, flags=flags, registry=registry)
        assert settings.registry is not None
        assert (settings.store.name, settings.registry.timeout) == expected, layer
    settings = load_settings(cwd=tmp_path, env={}, registry=RegistryFlags(url="http://r:1"))
    assert settings.registry is not None
    assert (settings.store.name, settings.registry.timeout) == ("from-file", 3.0)
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "schemacli.toml").write_text("")
    settings = load_settings(cwd=bare, env={}, registry=RegistryFlags(url="http://r:1"))
    assert settings.registry == RegistrySettings.build(url="http://r:1", env={})
    assert settings.store == bare.resolve() / "schemas"


def test_every_registry_flag_is_declared_under_its_settings_name():
    """The registry options take their flags' names from the settings' table: one owner."""

    @registry_flags()
    def probe(flags: RegistryFlags = NO_FLAGS) -> None:
        """A command with the registry options."""

    toy = typer.Typer()
    toy.command()(probe)
    declared = {p.name: p.opts[0] for p in typer.main.get_command(toy).params}
    declared["url"] = declared.pop("registry")
    assert {key: declared[key] for key in SETTINGS} == {k: s.flag for k, s in SETTINGS.items()}
