"""Registry settings: precedence flag > env > file > default, validation, and no secret in repr."""

from __future__ import annotations

import math

import pytest

from schemacli.errors import ConfigError, SchemacliError, UsageError
from schemacli.registry.settings import (
    DEFAULT_URL,
    RegistryFlags,
    RegistrySettings,
    strip_userinfo,
)


def test_default_url_when_nothing_is_given():
    assert RegistrySettings.build(env={}).url == DEFAULT_URL


def test_flag_beats_env_beats_file():
    file_values = {"url": "http://file:1", "user": "file-user", "timeout": 7}
    env = {"SCHEMACLI_REGISTRY_URL": "http://env:2", "SCHEMACLI_REGISTRY_USER": "env-user"}
    built = RegistrySettings.build(env=env, file_values=file_values)
    assert (built.url, built.username, built.timeout) == ("http://env:2", "env-user", 7.0)
    flagged = RegistrySettings.build(
        url="http://flag:3", user="flag-user", env=env, file_values=file_values
    )
    assert (flagged.url, flagged.username) == ("http://flag:3", "flag-user")


def test_basic_auth_env_in_confluent_form():
    built = RegistrySettings.build(env={"SCHEMACLI_REGISTRY_BASIC_AUTH": "ci:pa:ss"})
    assert (built.username, built.password) == ("ci", "pa:ss")


def test_basic_auth_env_without_colon_is_a_config_error():
    with pytest.raises(ConfigError) as caught:
        RegistrySettings.build(env={"SCHEMACLI_REGISTRY_BASIC_AUTH": "justauser"})
    assert "user:password" in caught.value.message
    assert "justauser" not in caught.value.message


def test_user_info_in_the_url_moves_into_credentials():
    built = RegistrySettings.build(url="https://ci:p%40ss@registry.example:8081/ccompat", env={})
    assert built.url == "https://registry.example:8081/ccompat"
    assert (built.username, built.password) == ("ci", "p@ss")


def test_strip_userinfo_keeps_everything_else():
    assert strip_userinfo("http://u:p@[::1]:8081/a?b=c") == "http://[::1]:8081/a?b=c"
    assert strip_userinfo("http://host:8081") == "http://host:8081"


def test_token_and_basic_auth_together_are_refused():
    with pytest.raises(UsageError):
        RegistrySettings.build(user="ci", password="x", token="t", env={})


def test_password_without_user_is_refused():
    with pytest.raises(UsageError) as caught:
        RegistrySettings.build(password="hunter2", env={})
    assert "hunter2" not in str(caught.value)


def test_not_an_http_url_is_a_usage_error_without_the_password():
    with pytest.raises(UsageError) as caught:
        RegistrySettings.build(url="ftp://ci:hunter2@host", env={})
    assert "hunter2" not in caught.value.message
    assert "ftp://host" in caught.value.message


def test_missing_ca_bundle_is_named():
    with pytest.raises(UsageError) as caught:
        RegistrySettings.build(ca_bundle="/nope/ca.pem", env={})
    assert "/nope/ca.pem" in caught.value.message


def test_client_key_without_certificate_is_refused(tmp_path):
    key = tmp_path / "k.pem"
    key.write_text("x")
    with pytest.raises(UsageError):
        RegistrySettings.build(client_key=key, env={})


def test_bad_timeout_in_the_file_is_named():
    with pytest.raises(ConfigError) as caught:
        RegistrySettings.build(env={}, file_values={"timeout": "soon"})
    assert "registry.timeout" in caught.value.message


def test_repr_and_str_show_no_secret():
    settings = RegistrySettings.build(url="http://ci:hunter2@h:1", token=None, env={})
    token_settings = RegistrySettings.build(url="http://h:1", token="tok-abcdef", env={})
    for text in (repr(settings), str(settings), repr(token_settings), str(token_settings)):
        assert "hunter2" not in text and "tok-abcdef" not in text
    assert "auth: basic" in str(settings) and "auth: bearer" in str(token_settings)


def test_settings_refuse_a_url_with_user_info_when_built_directly():
    with pytest.raises(ValueError):
        RegistrySettings(url="http://ci:hunter2@h:1")


@pytest.mark.parametrize(
    "url", ["http://[::1", "http://alice:s3cret@host:abc", "http://alice:s3cret@[::1"]
)
def test_a_malformed_url_is_a_usage_error_without_the_password(url):
    with pytest.raises(UsageError) as caught:
        RegistrySettings.build(url=url, env={})
    assert "is not a valid URL" in caught.value.message
    assert "s3cret" not in caught.value.message


# ---- values are checked where they come from: flag (exit 2, UsageError), env or file -------

SOURCES = {
    # source -> (how to pass the value to build(), the error type, the words naming the source)
    "flag": (lambda key, value: {key: value}, UsageError, "--"),
    "env": (
        lambda key, value: {"env": {f"SCHEMACLI_REGISTRY_{key.upper()}": str(value)}},
        ConfigError,
        "environment variable SCHEMACLI_REGISTRY_",
    ),
    "file": (lambda key, value: {"file_values": {key: value}}, ConfigError, "registry."),
}


def build_from(source: str, key: str, value: object) -> SchemacliError:
    """The error RegistrySettings.build raises for ``key = value`` given by ``source``."""
    how, error_type, _ = SOURCES[source]
    kwargs = {"env": {}, **how(key, value)}
    with pytest.raises(error_type) as caught:
        RegistrySettings.build(**kwargs)
    return caught.value


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("timeout", [0, 0.0, -1, math.nan, math.inf, 1e300])
def test_a_timeout_that_is_not_finite_and_positive_is_refused_naming_its_source(source, timeout):
    err = build_from(source, "timeout", timeout)
    assert SOURCES[source][2] in err.message
    assert "timeout" in err.message.lower()
    assert err.hint and "10" in err.hint


@pytest.mark.parametrize("timeout", [0.001, 10, "2.5"])
def test_a_positive_finite_timeout_is_accepted(timeout):
    assert RegistrySettings.build(env={"SCHEMACLI_REGISTRY_TIMEOUT": str(timeout)}).timeout == (
        float(timeout)
    )


@pytest.mark.parametrize("value", ["10", True, [10]])
def test_a_timeout_in_the_file_must_be_a_toml_number(value):
    err = build_from("file", "timeout", value)
    assert "must be a number" in err.message
    assert "timeout = 10" in (err.hint or "")


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("retries", [-1, 101, 99999999999999999999])
def test_retries_outside_0_to_100_are_refused_naming_their_source(source, retries):
    err = build_from(source, "retries", retries)
    assert SOURCES[source][2] in err.message
    assert "between 0 and 100" in err.message
    assert err.hint


@pytest.mark.parametrize("retries", ["1.5", "abc", "+3", "1_0", "٣"])
def test_retries_from_the_environment_must_be_a_whole_number(retries):
    err = build_from("env", "retries", retries)
    assert "SCHEMACLI_REGISTRY_RETRIES" in err.message
    assert "whole number" in err.message


@pytest.mark.parametrize("retries", [True, 2.5, "3"])
def test_retries_in_the_file_must_be_a_toml_integer(retries):
    err = build_from("file", "retries", retries)
    assert "whole number" in err.message


def test_retries_at_the_bounds_are_accepted():
    assert RegistrySettings.build(retries=0, env={}).retries == 0
    assert RegistrySettings.build(env={"SCHEMACLI_REGISTRY_RETRIES": " 100 "}).retries == 100


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("concurrency", [0, -1, 65, 99999999999999999999])
def test_a_concurrency_outside_1_to_64_is_refused_naming_its_source(source, concurrency):
    err = build_from(source, "concurrency", concurrency)
    assert SOURCES[source][2] in err.message
    assert "between 1 and 64" in err.message
    assert err.hint and "8" in err.hint


@pytest.mark.parametrize("concurrency", ["1.5", "abc", "+3", ""])
def test_a_concurrency_from_the_environment_must_be_a_whole_number(concurrency):
    if not concurrency.strip():  # an empty variable counts as unset
        assert (
            RegistrySettings.build(env={"SCHEMACLI_REGISTRY_CONCURRENCY": concurrency}).concurrency
            == 8
        )
        return
    err = build_from("env", "concurrency", concurrency)
    assert "SCHEMACLI_REGISTRY_CONCURRENCY" in err.message
    assert "whole number" in err.message


@pytest.mark.parametrize("concurrency", [True, 2.5, "3"])
def test_a_concurrency_in_the_file_must_be_a_toml_integer(concurrency):
    err = build_from("file", "concurrency", concurrency)
    assert "whole number" in err.message


def test_concurrency_defaults_to_8_and_its_bounds_are_accepted():
    assert RegistrySettings.build(env={}).concurrency == 8
    assert RegistrySettings.build(concurrency=1, env={}).concurrency == 1
    env = {"SCHEMACLI_REGISTRY_CONCURRENCY": " 64 "}
    assert RegistrySettings.build(env=env).concurrency == 64
    assert (
        RegistrySettings.build(env=env).connection_env()["SCHEMACLI_REGISTRY_CONCURRENCY"] == "64"
    )


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://a b", "invalid host 'a b'"),
        ("http://\\x00", "invalid host"),
        ("http://", "has no host"),
        ("http://host:0", "port 0"),
        ("http://host:99999", "not a valid URL"),
        ("http://host:8081/?x=1", "query or fragment"),
        ("mailto:registry@example.com", "not an http(s) URL"),
    ],
)
def test_a_malformed_url_is_an_input_error_naming_its_source(source, url, words):
    err = build_from(source, "url", url)
    assert err.exit_code == 2
    assert SOURCES[source][2] in err.message
    assert words in err.message
    assert err.hint


@pytest.mark.parametrize("source", SOURCES)
def test_an_explicitly_empty_url_is_refused_not_replaced_by_the_default(source):
    err = build_from(source, "url", "")
    assert "empty" in err.message
    assert DEFAULT_URL in (err.hint or "")


@pytest.mark.parametrize(
    "url",
    [
        "http://[::1]:8081",
        "http://schema_registry:8081/apis/ccompat/v7",
        "https://registry.example.com./",
        "http://bücher.example:8081",
        "http://10.0.0.7:8081",
    ],
)
def test_well_formed_urls_are_accepted(url):
    assert RegistrySettings.build(url=url, env={}).url == url.rstrip("/")


@pytest.mark.parametrize(
    ("key", "value", "kind"),
    [
        ("user", ["a"], "an array"),
        ("token", {"a": 1}, "a table"),
        ("password", 1, "an integer"),
        ("url", 5, "an integer"),
        ("ca", False, "a boolean"),
    ],
)
def test_config_values_of_the_wrong_toml_type_are_refused_without_echoing_them(key, value, kind):
    err = build_from("file", key, value)
    assert err.message == f"registry.{key} (config file): must be a string, not {kind}."
    assert f'{key} = "' in (err.hint or "")


def test_errors_in_the_registry_table_name_the_config_file_and_line(tmp_path):
    config = tmp_path / "pyproject.toml"
    config.write_text(
        '[project]\nname = "x"\n\n[tool.schemacli.registry]\nurl = "http://h:1"\ntimeout = 0\n'
    )
    with pytest.raises(ConfigError) as caught:
        RegistrySettings.build(
            env={}, file_values={"url": "http://h:1", "timeout": 0}, file_source=config
        )
    assert (caught.value.location.source, caught.value.location.line) == (str(config), 6)
    assert "[tool.schemacli.registry]" in (caught.value.hint or "")


@pytest.mark.parametrize("source", ["flag", "env", "file"])
def test_a_bearer_token_outside_printable_ascii_is_refused_without_echoing_it(source):
    for token in ("tök€n-value", "tok en", "token\n"):
        err = build_from(source, "token", token)
        assert "bearer token" in err.message
        text = f"{err.message} {err.hint}"
        assert token not in text and "tök" not in text


def test_a_password_outside_latin_1_is_accepted_for_utf8_basic_auth():
    env = {"SCHEMACLI_REGISTRY_USER": "ci", "SCHEMACLI_REGISTRY_PASSWORD": "s3cr€t"}
    assert RegistrySettings.build(env=env).password == "s3cr€t"


def test_a_user_containing_a_colon_is_refused():
    with pytest.raises(UsageError) as caught:
        RegistrySettings.build(user="ci:x", password="pw-1234", env={})
    assert "':'" in caught.value.message


# ---- RegistryFlags: the one input every registry-backed command (and the job) builds from ----


def test_flags_build_the_same_settings_with_the_same_precedence():
    file_values = {"url": "http://file:1", "timeout": 7, "retries": 1}
    env = {"SCHEMACLI_REGISTRY_URL": "http://env:2", "SCHEMACLI_REGISTRY_TOKEN": "env-token"}
    flags = RegistryFlags(url="http://flag:3", timeout=0.5)
    built = flags.resolve(file_values, env=env)
    assert (built.url, built.timeout, built.retries, built.token) == (
        "http://flag:3",
        0.5,
        1,
        "env-token",
    )
    assert RegistryFlags().resolve(env={}) == RegistrySettings.build(env={})


def test_bad_flags_are_usage_errors_naming_the_flag():
    with pytest.raises(UsageError) as caught:
        RegistryFlags(retries=-1).resolve(env={})
    assert "--retries" in caught.value.message


def test_flags_repr_holds_no_secret():
    text = repr(RegistryFlags(user="ci", password="pa55", token="t0k"))
    assert "pa55" not in text and "t0k" not in text


def test_credentials_env_rebuilds_the_same_credentials_in_another_process():
    basic = RegistrySettings.build(url="http://ci:p%40ss@registry:8081", env={})
    assert basic.credentials_env() == {
        "SCHEMACLI_REGISTRY_USER": "ci",
        "SCHEMACLI_REGISTRY_PASSWORD": "p@ss",
    }
    rebuilt = RegistryFlags(url=basic.url).resolve(env=basic.credentials_env())
    assert rebuilt == basic
    bearer = RegistrySettings.build(token="t0k", env={})
    assert bearer.credentials_env() == {"SCHEMACLI_REGISTRY_TOKEN": "t0k"}
    assert RegistrySettings.build(env={}).credentials_env() == {}


def test_connection_env_carries_tls_files_and_non_default_time_outs_to_the_job(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    given = RegistrySettings.build(
        url="https://registry:8081", token="t0k", ca_bundle=ca, timeout=2.5, retries=0, env={}
    )
    env = given.connection_env()
    assert env == {
        "SCHEMACLI_REGISTRY_TOKEN": "t0k",
        "SCHEMACLI_REGISTRY_CA": str(ca),
        "SCHEMACLI_REGISTRY_TIMEOUT": "2.5",
        "SCHEMACLI_REGISTRY_RETRIES": "0",
    }
    assert RegistryFlags(url=given.url).resolve(env=env) == given
    assert RegistrySettings.build(env={}).connection_env() == {}


@pytest.mark.parametrize("name", ["x" * 5000 + ".pem", "nul\x00.pem"])
def test_an_impossible_tls_file_name_is_a_usage_error_not_an_oserror(name):
    with pytest.raises(UsageError) as caught:
        RegistrySettings.build(url="http://h:1", ca_bundle=name, env={})
    assert "does not exist or is not a file" in caught.value.message
