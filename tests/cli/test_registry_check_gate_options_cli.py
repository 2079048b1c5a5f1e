"""`check --registry` and `gate --registry` take the same registry options as `register`, `pull`
and `subjects`: time-out, retries, credentials (TLS: tests/unit/test_registry_tls.py)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app

ROOT = Path(__file__).resolve().parents[2]
V1 = ROOT / "schemas/subjects/taxi-rides-value/v1.avsc"
V2 = ROOT / "schemas/subjects/taxi-rides-value/v2.avsc"
SUBJECT = "taxi-rides-value"


@pytest.fixture
def run(project, clean_registry_env):
    """schemacli in a copy of the example project, with no SCHEMACLI_REGISTRY_* set."""
    runner = CliRunner()
    return lambda *args: runner.invoke(app, [str(a) for a in args])


def check(fake, *options: str) -> list[str]:
    return ["check", V2, "--subject", SUBJECT, "--registry", fake.url, *options]


def gate(fake, *options: str) -> list[str]:
    return ["gate", "--quiet", "--registry", fake.url, *options]


@pytest.mark.parametrize("command", [check, gate], ids=["check", "gate"])
def test_a_slow_registry_fails_fast_with_a_short_timeout_and_no_retries(run, fake, command):
    fake.stall = True  # it answers only once the client has given up: no answer ever comes
    result = run(*command(fake, "--timeout", "0.5", "--retries", "0"))
    assert result.exit_code == 3, result.output
    assert "did not answer within 0.5 s" in result.output
    # one attempt per request, given up after its time-out (the gate asks about the store's
    # subjects together: one request each in flight, none repeated)
    asked = [(r.method, r.path) for r in fake.requests]
    assert asked and len(set(asked)) == len(asked)
    assert len(asked) == (1 if command is check else 2)


@pytest.mark.parametrize("command", [check, gate], ids=["check", "gate"])
@pytest.mark.parametrize(
    ("retries", "exit_code", "attempts"),
    [("2", 0, 3), ("0", 3, 1)],
    ids=["retries-ride-out-a-flaky-registry", "no-retries-means-one-attempt"],
)
def test_retries_flag_sets_how_often_a_failing_call_is_tried(
    run, fake, command, retries, exit_code, attempts
):
    fake.add(SUBJECT, V1.read_text())
    fake.fail_next(503, {"error_code": 50301, "message": "busy"}, times=2)
    # one request at a time, so the failures meet one call (the gate asks about subjects
    # together by default)
    result = run(*command(fake, "--retries", retries, "--concurrency", "1"))
    assert result.exit_code == exit_code, result.output
    first = fake.requests[0].path
    assert [r.path for r in fake.requests[:attempts]] == [first] * attempts
    if exit_code:
        assert len(fake.requests) == attempts


@pytest.mark.parametrize("command", [check, gate], ids=["check", "gate"])
def test_a_token_reaches_the_registry_as_a_bearer_header(run, fake, command):
    fake.add(SUBJECT, V1.read_text())
    fake.require_token = "t0ken-for-ci"
    result = run(*command(fake, "--token", "t0ken-for-ci"))
    assert result.exit_code == 0, result.output
    assert fake.requests
    assert {r.headers.get("Authorization") for r in fake.requests} == {"Bearer t0ken-for-ci"}
    assert "t0ken-for-ci" not in result.output


@pytest.mark.parametrize("command", [check, gate], ids=["check", "gate"])
def test_user_and_password_reach_the_registry_as_basic_auth(run, fake, command):
    fake.add(SUBJECT, V1.read_text())
    fake.require_basic = ("ci", "pa55word")
    result = run(*command(fake, "--user", "ci", "--password", "pa55word"))
    assert result.exit_code == 0, result.output
    expected = "Basic " + base64.b64encode(b"ci:pa55word").decode()
    assert {r.headers.get("Authorization") for r in fake.requests} == {expected}
    assert "pa55word" not in result.output


@pytest.mark.parametrize("command", [check, gate], ids=["check", "gate"])
def test_wrong_credentials_exit_3(run, fake, command):
    fake.require_token = "the-right-one"
    result = run(*command(fake, "--token", "a-wrong-one"))
    assert result.exit_code == 3, result.output


@pytest.mark.parametrize("command", [check, gate], ids=["check", "gate"])
def test_a_bad_timeout_flag_exits_2_naming_it_before_any_request(run, fake, command):
    result = run(*command(fake, "--timeout", "0"))
    assert result.exit_code == 2, result.output
    assert "--timeout" in result.stderr
    assert fake.requests == []


@pytest.mark.parametrize(
    "args",
    [
        ["check", V2, "--subject", SUBJECT, "--timeout", "0.5", "--token", "t"],
        ["gate", "--quiet", "--timeout", "0.5", "--token", "t"],
    ],
    ids=["check", "gate"],
)
def test_registry_options_without_registry_stay_offline(run, fake, args):
    result = run(*args, "-o", "json")
    assert result.exit_code == 0, result.output
    assert fake.requests == []


def test_offline_check_and_gate_do_not_import_the_http_client(project):
    """The registry options cost nothing without --registry: `requests` stays unimported."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from schemacli.app import app\n"
        "runner = CliRunner()\n"
        f"check = runner.invoke(app, ['check', {str(V2)!r}, '--subject', {SUBJECT!r},"
        " '--timeout', '1'])\n"
        "gate = runner.invoke(app, ['gate', '--quiet', '--retries', '0'])\n"
        "print(check.exit_code, gate.exit_code, 'requests' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["0", "0", "False"], done.stderr
