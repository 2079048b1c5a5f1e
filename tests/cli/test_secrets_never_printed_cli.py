"""A registry URL without a scheme, or with a mangled one, never shows its password.

``alice:SECRET@host:1``, ``http:/alice:SECRET@h``, ``http//alice:SECRET@h`` and the like used to
be echoed whole in the error. They are refused (exit 2) from the flag, the environment,
schemacli.toml and pyproject.toml alike, in text and in every ``-o`` document, which still
parses; the error names the URL with its user info masked. No piece of the password shows
either: the URL parser's own reason can quote one ("as 'hunter2-'").
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from tests.output_documents import FORMATS, parse

PASSWORD = "hunter2-SECRET"
PIECES = ("hunter2", "SECRET")

URLS = {
    "no-scheme-with-port": f"alice:{PASSWORD}@host:1",
    "no-scheme": f"alice:{PASSWORD}@host",
    "one-slash": f"http:/alice:{PASSWORD}@h",
    "no-colon": f"http//alice:{PASSWORD}@h",
    "no-slashes": f"http:alice:{PASSWORD}@h",
    "other-scheme": f"ftp://alice:{PASSWORD}@h",
    "slash-in-password": f"http://alice:{PASSWORD}/x@h",
    "hash-in-password": f"http://alice:{PASSWORD}#x@h",
    "port-out-of-range": f"http://alice:{PASSWORD}@h:99999",
    "unclosed-ipv6": f"http://alice:{PASSWORD}@[::1",
    "query": f"http://alice:{PASSWORD}@h?x=1",
}


def toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@pytest.fixture
def run(tmp_path, monkeypatch, clean_registry_env):
    monkeypatch.chdir(tmp_path)

    def invoke(source: str, url: str, *args: str):
        env: dict[str, str] = {}
        flags: list[str] = []
        if source == "flag":
            flags = ["--registry", url]
        elif source == "env":
            env["SCHEMACLI_REGISTRY_URL"] = url
        elif source == "schemacli.toml":
            (tmp_path / "schemacli.toml").write_text(f"[registry]\nurl = {toml_string(url)}\n")
        else:
            (tmp_path / "pyproject.toml").write_text(
                f'[project]\nname = "x"\n\n[tool.schemacli.registry]\nurl = {toml_string(url)}\n'
            )
        return CliRunner().invoke(app, [*args, *flags], env=env)

    return invoke


SOURCES = ("flag", "env", "schemacli.toml", "pyproject.toml")


def assert_no_piece(*texts: str) -> None:
    for text in texts:
        for piece in PIECES:
            assert piece not in text, text


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("url", URLS.values(), ids=URLS.keys())
def test_a_mangled_registry_url_is_refused_without_its_password(run, source, url, fmt):
    result = run(source, url, "subjects", "list", "-o", fmt)
    assert result.exit_code == 2, result.output
    assert_no_piece(result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    if fmt == "json":
        assert parse("json", result.stdout)["error"]["exit_code"] == 2


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("url", URLS.values(), ids=URLS.keys())
def test_gate_against_a_mangled_url_writes_a_valid_document_without_the_password(run, url, fmt):
    result = run("flag", url, "gate", "-o", fmt)
    assert result.exit_code == 2, result.output
    assert_no_piece(result.stdout, result.stderr)
    parse(fmt, result.stdout)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("source", ["env", "schemacli.toml", "pyproject.toml"])
def test_a_mangled_url_that_a_flag_overrides_is_still_never_printed(run, source, fmt):
    # the flag's URL is the one checked (and refused); the other source's password is masked
    # all the same wherever it could come up
    result = run(source, URLS["no-scheme"], "gate", "--registry", "http//x@h", "-o", fmt)
    assert result.exit_code == 2, result.output
    assert_no_piece(result.stdout, result.stderr)
    parse(fmt, result.stdout)


def test_the_error_names_the_url_with_its_user_info_masked(run):
    result = run("flag", URLS["no-scheme-with-port"], "subjects", "list")
    assert "'alice:***@host:1' is not an http(s) URL" in result.stderr
    assert "no http:// or https:// in front" in result.stderr


def test_a_password_typed_into_the_user_flag_is_not_echoed(run):
    result = run("flag", "http://127.0.0.1:1", "subjects", "list", "--user", f"ci:{PASSWORD}")
    assert result.exit_code == 2
    assert_no_piece(result.stdout, result.stderr)
    assert "contains ':'" in result.stderr
