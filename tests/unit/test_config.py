"""The settings object: precedence flag > env > file > defaults, and strict validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemacli.config import Level, NamingStrategy, load_settings, parse_level
from schemacli.errors import ConfigError, UsageError
from schemacli.registry.settings import RegistryFlags


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_any_config_file_are_schemas_backward_and_topic_names(tmp_path):
    settings = load_settings(cwd=tmp_path, env={})
    assert settings.store == tmp_path.resolve() / "schemas"
    assert settings.default_level is Level.BACKWARD
    assert settings.naming_strategy is NamingStrategy.TOPIC
    assert settings.config_file is None


def test_pyproject_tool_table_is_found_walking_up_from_a_subdirectory(tmp_path):
    write(
        tmp_path / "pyproject.toml",
        '[project]\nname = "x"\n\n[tool.schemacli]\nstore = "contracts"\n'
        'default-level = "FULL"\n\n[tool.schemacli.subjects."taxi-rides-value"]\n'
        'level = "forward_transitive"\n',
    )
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    settings = load_settings(cwd=deep, env={})
    assert settings.config_file == tmp_path.resolve() / "pyproject.toml"
    # A relative store in the file is relative to the file, not to the current directory.
    assert settings.store == tmp_path.resolve() / "contracts"
    assert settings.default_level is Level.FULL
    assert settings.level_for("taxi-rides-value") is Level.FORWARD_TRANSITIVE
    assert settings.level_for("other-value") is Level.FULL


def test_pyproject_without_our_table_is_skipped_in_favour_of_a_parent_schemacli_toml(tmp_path):
    write(tmp_path / "schemacli.toml", 'default-level = "NONE"\n')
    write(tmp_path / "pkg" / "pyproject.toml", '[project]\nname = "x"\n')
    settings = load_settings(cwd=tmp_path / "pkg", env={})
    assert settings.config_file == tmp_path.resolve() / "schemacli.toml"
    assert settings.default_level is Level.NONE


def test_flag_beats_env_beats_file(tmp_path):
    write(tmp_path / "schemacli.toml", 'store = "from-file"\ndefault-level = "FULL"\n')
    env = {"SCHEMACLI_STORE": "from-env", "SCHEMACLI_DEFAULT_LEVEL": "forward"}
    from_env = load_settings(cwd=tmp_path, env=env)
    assert from_env.store == tmp_path.resolve() / "from-env"
    assert from_env.default_level is Level.FORWARD
    from_flag = load_settings(cwd=tmp_path, env=env, flags={"store": Path("from-flag")})
    assert from_flag.store == tmp_path.resolve() / "from-flag"
    from_file = load_settings(cwd=tmp_path, env={})
    assert from_file.store == tmp_path.resolve() / "from-file"


def test_unknown_key_is_rejected_naming_file_line_and_allowed_keys(tmp_path):
    path = write(tmp_path / "schemacli.toml", 'store = "schemas"\ndefault_level = "FULL"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(cwd=tmp_path, env={})
    err = caught.value
    assert "default_level" in err.message
    assert err.location.source == str(path.resolve())
    assert err.location.line == 2
    assert "default-level" in err.hint


def test_bad_level_in_file_names_the_key_and_the_allowed_levels(tmp_path):
    write(tmp_path / "schemacli.toml", '[subjects."orders-value"]\nlevel = "SIDEWAYS"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(cwd=tmp_path, env={})
    err = caught.value
    assert "subjects.orders-value.level" in err.message and "SIDEWAYS" in err.message
    assert "FULL_TRANSITIVE" in err.hint
    assert err.location.line == 1


def test_unknown_key_in_a_subject_table_is_rejected(tmp_path):
    write(tmp_path / "schemacli.toml", '[subjects."orders-value"]\ncompatibility = "FULL"\n')
    with pytest.raises(ConfigError, match="compatibility"):
        load_settings(cwd=tmp_path, env={})


def test_bad_level_from_the_environment_names_the_variable(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load_settings(cwd=tmp_path, env={"SCHEMACLI_DEFAULT_LEVEL": "STRICT"})
    assert "SCHEMACLI_DEFAULT_LEVEL" in caught.value.message


def test_bad_level_flag_is_a_usage_error():
    with pytest.raises(UsageError) as caught:
        parse_level("backwards")
    assert "--level" in caught.value.message and "BACKWARD" in caught.value.hint


def test_naming_strategy_accepts_confluent_class_names(tmp_path):
    write(
        tmp_path / "schemacli.toml",
        'naming-strategy = "io.confluent.kafka.serializers.subject.RecordNameStrategy"\n',
    )
    assert load_settings(cwd=tmp_path, env={}).naming_strategy is NamingStrategy.RECORD


def test_bad_naming_strategy_lists_the_three_strategies(tmp_path):
    write(tmp_path / "schemacli.toml", 'naming-strategy = "SubjectPerFile"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(cwd=tmp_path, env={})
    assert "TopicRecordNameStrategy" in caught.value.hint


def test_invalid_toml_reports_file_line_and_column(tmp_path):
    write(tmp_path / "schemacli.toml", 'store = "schemas"\ndefault-level = \n')
    with pytest.raises(ConfigError) as caught:
        load_settings(cwd=tmp_path, env={})
    assert caught.value.location.line == 2
    assert "TOML" in caught.value.message


def test_registry_table_keys_are_checked_and_values_kept_out_of_repr(tmp_path):
    write(
        tmp_path / "schemacli.toml",
        '[registry]\nurl = "http://localhost:8081"\nuser = "u"\npassword = "s3cret"\n',
    )
    settings = load_settings(cwd=tmp_path, env={}, registry=RegistryFlags())
    assert settings.registry is not None
    assert settings.registry.url == "http://localhost:8081"
    assert "s3cret" not in repr(settings)
    write(tmp_path / "schemacli.toml", '[registry]\nendpoint = "http://x"\n')
    with pytest.raises(ConfigError, match="endpoint"):
        load_settings(cwd=tmp_path, env={})


def test_the_projects_own_pyproject_settings_load(repo_root):
    settings = load_settings(cwd=repo_root, env={})
    assert settings.store == repo_root / "schemas"
    assert settings.default_level is Level.BACKWARD


def test_settings_are_frozen(tmp_path):
    settings = load_settings(cwd=tmp_path, env={})
    with pytest.raises(AttributeError):
        settings.store = Path("elsewhere")  # type: ignore[misc]


def test_a_config_file_that_is_not_utf8_reports_file_line_and_column(tmp_path):
    (tmp_path / "schemacli.toml").write_bytes(b'store = "schemas"\ndefault-level = "\xff"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(cwd=tmp_path, env={})
    assert (caught.value.location.line, caught.value.location.column) == (2, 18)
    assert "UTF-8" in caught.value.message


def test_a_pyproject_that_is_not_utf8_is_an_error_only_when_it_has_our_table(tmp_path):
    (tmp_path / "pyproject.toml").write_bytes(b'[project]\nname = "\xff"\n')
    load_settings(cwd=tmp_path, env={})  # not ours: skipped, as before
    (tmp_path / "pyproject.toml").write_bytes(b'[tool.schemacli]\nstore = "\xff"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(cwd=tmp_path, env={})
    assert caught.value.location.line == 2


@pytest.mark.parametrize(
    "content",
    [
        b"[tool]\nschemacli = 5\n",  # ours, but not a table
        b"[tool]\nschemacli = []\n",
        '[tool.schemacli]\nstore = "s"\n'.encode("utf-16"),  # ours, but not UTF-8
    ],
    ids=["a number", "an array", "utf-16"],
)
def test_a_broken_pyproject_of_ours_is_an_error_not_passed_over_for_a_parents_config(
    tmp_path, content
):
    write(tmp_path / "schemacli.toml", 'default-level = "NONE"\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "pyproject.toml").write_bytes(content)
    with pytest.raises(ConfigError) as caught:
        load_settings(cwd=tmp_path / "pkg", env={})
    assert caught.value.location.source == str(tmp_path.resolve() / "pkg" / "pyproject.toml")


@pytest.mark.parametrize("kind", ["folder", "dangling link", "link loop", "pipe"])
def test_a_config_file_that_is_not_a_regular_file_is_an_error(tmp_path, kind):
    import os

    write(tmp_path / "schemacli.toml", 'default-level = "NONE"\n')
    config = tmp_path / "pkg" / "schemacli.toml"
    config.parent.mkdir()
    if kind == "folder":
        config.mkdir()
    elif kind == "dangling link":
        config.symlink_to(tmp_path / "nowhere.toml")
    elif kind == "link loop":
        config.symlink_to(config)
    else:
        os.mkfifo(config)
    with pytest.raises(ConfigError) as caught:
        load_settings(cwd=config.parent, env={})
    assert "schemacli.toml is not a regular file" in caught.value.message
    assert caught.value.location.source == str(config.parent.resolve() / "schemacli.toml")


def test_toml_nested_too_deeply_for_python_is_a_config_error(tmp_path):
    write(tmp_path / "schemacli.toml", "store = " + "[" * 100_000 + "\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(cwd=tmp_path, env={})
    assert "nested too deeply" in caught.value.message
    assert caught.value.location.source == str(tmp_path.resolve() / "schemacli.toml")
