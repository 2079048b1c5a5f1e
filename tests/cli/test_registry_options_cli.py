"""Bad values of the registry options, through the CLI: exit 2 naming where the value came from
(flag, environment variable, config file:line) with a hint — never a traceback, never exit 3
for a value that could be refused before any request, never a secret in the output."""

from __future__ import annotations

import pytest
from registry_fake import free_port
from typer.testing import CliRunner

from schemacli.app import app


@pytest.fixture
def cli(tmp_path, monkeypatch, clean_registry_env):
    """Run schemacli in an empty directory; the registry URL points at a closed port."""
    monkeypatch.chdir(tmp_path)
    dead = f"http://127.0.0.1:{free_port()}"

    def run(*args: str, env: dict[str, str] | None = None):
        return CliRunner().invoke(
            app, list(args), env={"SCHEMACLI_REGISTRY_URL": dead, **(env or {})}
        )

    return run


def assert_input_error(result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "hint:" in result.stderr
    for word in words:
        assert word in result.stderr


# ---- 1. timeouts ---------------------------------------------------------------------------


@pytest.mark.parametrize("timeout", ["0", "nan", "inf", "-1"])
def test_a_timeout_flag_that_is_not_positive_and_finite_exits_2(cli, timeout):
    result = cli("subjects", "list", "--timeout", timeout)
    assert_input_error(result, "--timeout:", "--timeout 10")


@pytest.mark.parametrize("timeout", ["0", "nan"])
def test_a_bad_timeout_in_the_environment_exits_2_naming_the_variable(cli, timeout):
    result = cli("subjects", "list", env={"SCHEMACLI_REGISTRY_TIMEOUT": timeout})
    assert_input_error(result, "environment variable SCHEMACLI_REGISTRY_TIMEOUT")


def test_a_bad_timeout_in_the_config_file_exits_2_naming_file_and_line(cli, tmp_path):
    (tmp_path / "schemacli.toml").write_text('store = "schemas"\n\n[registry]\ntimeout = 0\n')
    result = cli("subjects", "list")
    assert_input_error(result, f"{tmp_path / 'schemacli.toml'}:4: registry.timeout", "timeout = 10")


# ---- 2. credentials outside Latin-1 ----------------------------------------------------------


def test_a_password_outside_latin_1_is_sent_as_utf8(cli, fake):
    fake.require_basic = ("u", "s3cr€t")
    env = {
        "SCHEMACLI_REGISTRY_URL": fake.url,
        "SCHEMACLI_REGISTRY_USER": "u",
        "SCHEMACLI_REGISTRY_PASSWORD": "s3cr€t",
    }
    result = cli("subjects", "list", env=env)
    assert result.exit_code == 0, result.output


def test_a_password_outside_latin_1_against_a_dead_registry_is_a_network_error(cli):
    env = {"SCHEMACLI_REGISTRY_USER": "u", "SCHEMACLI_REGISTRY_PASSWORD": "s3cr€t"}
    result = cli("subjects", "list", "--retries", "0", env=env)
    assert result.exit_code == 3
    assert "Cannot connect" in result.stderr
    assert "s3cr€t" not in result.output


@pytest.mark.parametrize("how", ["env", "flag"])
def test_a_token_outside_ascii_exits_2_without_printing_it(cli, how):
    args, env = (
        (["--token", "tök€n"], {}) if how == "flag" else ([], {"SCHEMACLI_REGISTRY_TOKEN": "tök€n"})
    )
    result = cli("subjects", "list", *args, "-o", "json", env=env)
    assert result.exit_code == 2
    assert "bearer token" in result.stdout
    assert "tök" not in result.output


def test_a_one_character_password_does_not_garble_error_messages(cli):
    env = {"SCHEMACLI_REGISTRY_USER": "u", "SCHEMACLI_REGISTRY_PASSWORD": "1"}
    result = cli("subjects", "list", "--retries", "0", env=env)
    assert result.exit_code == 3
    assert "[Errno 111] Connection refused" in result.stderr


# ---- 4. URLs -------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["http://a b", "http://\\x00", "http://", "ftp://host"])
def test_a_malformed_registry_url_exits_2_not_3(cli, url):
    result = cli("subjects", "list", "-r", url)
    assert_input_error(result, "--registry:")


def test_a_malformed_url_in_the_environment_names_the_variable(cli):
    result = cli("subjects", "list", env={"SCHEMACLI_REGISTRY_URL": "http://a b"})
    assert_input_error(result, "environment variable SCHEMACLI_REGISTRY_URL", "invalid host")


@pytest.mark.parametrize("how", ["flag", "env"])
def test_an_empty_registry_url_exits_2_instead_of_using_the_default(cli, how):
    args, env = (["-r", ""], {}) if how == "flag" else ([], {"SCHEMACLI_REGISTRY_URL": ""})
    result = cli("subjects", "list", *args, env=env)
    assert_input_error(result, "the registry URL is empty", "http://localhost:8081")


# ---- 3. retries ----------------------------------------------------------------------------


def test_unbounded_retries_exit_2_before_any_request(cli):
    result = cli("subjects", "list", "--retries", "99999999999999999999")
    assert_input_error(result, "--retries:", "between 0 and 100")


def test_fractional_retries_in_the_environment_exit_2(cli):
    result = cli("subjects", "list", env={"SCHEMACLI_REGISTRY_RETRIES": "1.5"})
    assert_input_error(result, "environment variable SCHEMACLI_REGISTRY_RETRIES", "whole number")


def test_a_concurrency_of_0_exits_2_before_any_request(cli, fake):
    result = cli("subjects", "list", "--concurrency", "0", env={"SCHEMACLI_REGISTRY_URL": fake.url})
    assert_input_error(result, "--concurrency:", "between 1 and 64")
    assert fake.requests == []


def test_a_concurrency_that_is_no_number_in_the_environment_exits_2(cli):
    result = cli("subjects", "list", env={"SCHEMACLI_REGISTRY_CONCURRENCY": "many"})
    assert_input_error(
        result, "environment variable SCHEMACLI_REGISTRY_CONCURRENCY", "whole number"
    )


# ---- 5. versions ---------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["abc", "-1", "0", "2147483648", "1.0"])
@pytest.mark.parametrize("command", ["show", "delete"])
def test_a_bad_version_exits_2_before_any_request(cli, fake, command, version):
    extra = ["--yes"] if command == "delete" else []
    result = cli(
        "subjects", command, "taxi-rides-value", "--version", version, *extra,
        env={"SCHEMACLI_REGISTRY_URL": fake.url},
    )  # fmt: skip
    assert_input_error(result, "--version:", "latest")
    assert fake.requests == []


def test_version_latest_is_accepted_in_any_case(cli, fake):
    fake.add("taxi-rides-value", '{"type": "string"}')
    result = cli(
        "subjects", "show", "taxi-rides-value", "--version", "LATEST",
        env={"SCHEMACLI_REGISTRY_URL": fake.url},
    )  # fmt: skip
    assert result.exit_code == 0, result.output


# ---- 6. the config file's [registry] table -------------------------------------------------


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ('user = ["a"]', "registry.user: must be a string, not an array"),
        ("token = {a = 1}", "registry.token: must be a string, not a table"),
        ("password = 1", "registry.password: must be a string, not an integer"),
        ("retries = true", "registry.retries: retries must be a whole number, not a boolean"),
        (
            'concurrency = "8"',
            "registry.concurrency: the concurrency must be a whole number, not a string",
        ),
        ("url = 5", "registry.url: must be a string, not an integer"),
        ('timeout = "abc"', "registry.timeout: the timeout must be a number of seconds"),
    ],
)
def test_a_wrong_type_in_the_registry_table_exits_2_naming_file_and_line(
    cli, tmp_path, line, words
):
    config = tmp_path / "schemacli.toml"
    config.write_text(f'store = "schemas"\n[registry]\n{line}\n')
    result = cli("subjects", "list")  # the file's types are checked even where env wins
    assert_input_error(result, f"{config}:3: {words}")


def test_an_empty_subject_argument_is_named_as_the_argument(cli):
    result = cli("subjects", "show", "")
    assert_input_error(result, "SUBJECT:", "first argument")
    assert "--subject" not in result.stderr
