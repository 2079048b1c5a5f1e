"""Registry settings: precedence flag > env > file > default, validation, and no secret in repr."""

from __future__ import annotations

import pytest

from schemacli.errors import ConfigError, UsageError
from schemacli.registry.settings import DEFAULT_URL, RegistrySettings, strip_userinfo


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
    with pytest.raises(UsageError) as caught:
        RegistrySettings.build(env={}, file_values={"timeout": "soon"})
    assert "timeout" in caught.value.message


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
