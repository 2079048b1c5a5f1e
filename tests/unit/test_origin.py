"""Where a setting came from decides the error: a flag is a usage error, the environment and
the file are configuration errors, the file's at its line."""

from __future__ import annotations

from pathlib import Path

from schemacli.errors import ConfigError, Location, UsageError
from schemacli.origin import Origin
from schemacli.tomlfile import Table, TomlFile


def test_a_bad_flag_value_is_a_usage_error_named_by_its_option():
    err = Origin.flag("store").error("'' is not valid", "allowed: a directory path")
    assert isinstance(err, UsageError)
    assert err.message == "--store: '' is not valid"
    assert Origin.flag("LEVEL").name == "LEVEL"  # an argument's metavar stays as it is


def test_a_bad_environment_value_is_a_config_error_naming_the_variable_without_a_location():
    err = Origin.env("SCHEMACLI_STORE").error("'' is not valid", "allowed: a path")
    assert isinstance(err, ConfigError) and err.location is None
    assert err.message == "environment variable SCHEMACLI_STORE: '' is not valid"


def test_a_bad_file_value_is_a_config_error_at_the_files_line_or_says_config_file():
    where = Location(source="schemacli.toml", line=3)
    located = Origin.file("registry.timeout", where).error("0 is not valid.", "Give 10.")
    assert isinstance(located, ConfigError) and located.location == where
    assert located.message == "registry.timeout: 0 is not valid."
    unknown = Origin.file("registry.timeout", None).error("0 is not valid.", "Give 10.")
    assert unknown.message == "registry.timeout (config file): 0 is not valid."


def test_a_table_of_the_file_knows_where_its_keys_are_and_hides_its_values():
    text = '[registry]\nurl = "http://r:8081"\npassword = "s3cret"\n'
    file = TomlFile(Path("schemacli.toml"), text, {"registry": {"password": "s3cret"}})
    table = Table({"password": "s3cret"}, file, ("registry",))
    assert table.location("password") == Location(source="schemacli.toml", line=3)
    assert table["password"] == "s3cret" and dict(table) == {"password": "s3cret"}
    assert "s3cret" not in repr(table)
    assert Table().location("password") is None
