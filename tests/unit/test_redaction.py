"""The one redaction (schemacli.redact): URL user info in any shape, and every secret the process
was given, masked in text and in every string of a report — and the registry settings hand it
every secret from every source before they check anything."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from schemacli import redact
from schemacli.errors import ConfigError, Location, SchemacliError, UsageError
from schemacli.registry.settings import RegistrySettings

SECRET = "hunter2-SECRET"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"http://alice:{SECRET}@host:1", "http://***@host:1"),
        (f"https://alice:{SECRET}@host/x", "https://***@host/x"),
        (f"http:/alice:{SECRET}@h", "http:/***@h"),
        (f"http//alice:{SECRET}@h", "http//***@h"),
        (f"http:alice:{SECRET}@h", "http:***@h"),
        (f"//alice:{SECRET}@h", "//***@h"),
        (f"alice:{SECRET}@host:1", "alice:***@host:1"),
        (f"alice:{SECRET}@host", "alice:***@host"),
        (f"http://alice:{SECRET}/x@h", "http://***@h"),  # a raw '/' in the password
        (f"http://alice:{SECRET}@x@h", "http://***@h"),  # a raw '@' in the password
        (f"http://alice:{SECRET}@[::1]:8081", "http://***@[::1]:8081"),
        (f"http://{SECRET}@host", "http://***@host"),  # a token as the user
        (f"ftp://alice:{SECRET}@host", "ftp://***@host"),
    ],
)
def test_user_info_is_masked_whether_or_not_the_text_parses_as_a_url(text, shown):
    assert redact.redact(text) == shown
    quoted = f"error: --registry: '{text}' is not an http(s) URL."
    assert redact.redact(quoted) == f"error: --registry: '{shown}' is not an http(s) URL."


@pytest.mark.parametrize(
    "text",
    [
        "mail bob@example.com about it",  # an address, not a URL's user info
        "schemas/subjects/a@b/v1.avsc:3:5: error",
        "http://[::1]:8081",
        "error: schemas/a.avsc:1:2: field 'x' (at /fields/0)",
        "--against git:HEAD@{1}: no such ref",  # git's reflog selector
        "git:origin/main@{yesterday}",
    ],
)
def test_text_without_user_info_or_secrets_is_left_as_it_is(text):
    assert redact.redact(text) == text


def test_a_remembered_secret_is_masked_anywhere_and_in_its_escaped_forms():
    secret = 'pa"ss\x1bword'
    redact.remember(secret)
    assert redact.redact(f"x {secret} y") == "x *** y"
    assert redact.redact(f"value {secret!r}") == "value '***'"
    assert redact.redact(json.dumps({"v": secret})) == '{"v": "***"}'
    assert redact.redact('shown as pa"ss\\x1bword') == "shown as ***"  # a terminal's escape


def test_a_short_secret_is_masked_only_as_a_whole_word():
    redact.remember("pw1")
    assert redact.redact("[Errno 111] pw1 spw12") == "[Errno 111] *** spw12"


def test_the_user_info_of_a_mangled_url_is_remembered_as_a_secret():
    redact.remember_url(f"alice:{SECRET}@host:1")
    redact.remember_url("TOKEN-abcdef@host")
    assert redact.redact(f"it was {SECRET} and TOKEN-abcdef") == "it was *** and ***"


def test_the_basic_credential_is_remembered_as_it_travels():
    redact.remember_basic("ci", SECRET)
    import base64

    travels = base64.b64encode(f"ci:{SECRET}".encode()).decode()
    assert redact.redact(f"Authorization: Basic {travels}") == "Authorization: Basic ***"


def test_a_scope_forgets_its_secrets_when_it_ends():
    with redact.scope():
        redact.remember(SECRET)
        assert redact.redact(SECRET) == "***"
    assert redact.redact(SECRET) == SECRET


def test_redaction_of_a_long_run_without_user_info_is_linear():
    # a.a.a.a... then a space and an '@': every '.' starts a would-be scheme
    text = "a." * 200_000 + " @"
    assert redact.redact(text) == text


@dataclass(frozen=True)
class _Row:
    name: str
    where: Location
    values: tuple[object, ...]
    path: Path


def test_scrub_redacts_every_string_of_a_report_and_keeps_its_shape():
    redact.remember(SECRET)
    row = _Row(
        name=f"subject {SECRET}",
        where=Location(source=f"http://alice:{SECRET}@h/x.avsc", line=3),
        values=(1, None, [f"old {SECRET}"], {SECRET: True}),
        path=Path(f"/tmp/{SECRET}"),
    )
    clean = redact.scrub(row)
    assert SECRET not in repr(clean)
    assert clean.where.line == 3 and clean.values[:2] == (1, None)
    assert clean.path == Path("/tmp/***")
    assert clean.values[3] == {"***": True}


# ---- the registry settings remember every secret they are given, before any check ----------

SOURCES = {
    "flag": lambda url: {"url": url, "env": {}},
    "env": lambda url: {"env": {"SCHEMACLI_REGISTRY_URL": url}},
    "file": lambda url: {"env": {}, "file_values": {"url": url}},
}


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize(
    "url",
    [
        f"alice:{SECRET}@host:1",
        f"alice:{SECRET}@host",
        f"http:/alice:{SECRET}@h",
        f"http//alice:{SECRET}@h",
        f"http:alice:{SECRET}@h",
        f"ftp://alice:{SECRET}@h",
        f"http://alice:{SECRET}@h:99999",
        f"http://alice:{SECRET}@[::1",
        f"http://alice:{SECRET}/x@h",
        f"http://alice:{SECRET}#x@h",
        f"http://alice:{SECRET}?x@h",
        f"http://alice:{SECRET}@h?x=1",
        f"http://alice:{SECRET}@bad_host!",
    ],
)
def test_a_malformed_url_is_refused_without_any_piece_of_its_password(source, url):
    with pytest.raises((UsageError, ConfigError)) as caught:
        RegistrySettings.build(**SOURCES[source](url))
    err: SchemacliError = caught.value
    said = f"{err.message} {err.hint}"
    for piece in ("hunter2", "SECRET"):  # the parser's reasons quote pieces ("as 'hunter2-'")
        assert piece not in said
    assert "hunter2" not in redact.redact(f"echo {url} again")  # remembered from now on


def test_a_url_given_without_its_scheme_says_so():
    with pytest.raises(UsageError) as caught:
        RegistrySettings.build(url=f"alice:{SECRET}@host:1", env={})
    assert "no http:// or https:// in front" in caught.value.message


def test_a_password_typed_into_the_user_is_neither_echoed_nor_forgotten():
    with pytest.raises(UsageError) as caught:
        RegistrySettings.build(url="http://h:1", user=f"alice:{SECRET}", env={})
    assert SECRET not in caught.value.message and "contains ':'" in caught.value.message
    assert redact.redact(SECRET) == "***"


@pytest.mark.parametrize(
    ("kwargs", "secret"),
    [
        ({"user": "ci", "password": SECRET, "env": {}}, SECRET),
        ({"token": "tok-abcdef", "env": {}}, "tok-abcdef"),
        ({"env": {"SCHEMACLI_REGISTRY_PASSWORD": SECRET, "SCHEMACLI_REGISTRY_USER": "ci"}}, SECRET),
        ({"env": {"SCHEMACLI_REGISTRY_BASIC_AUTH": f"ci:{SECRET}"}}, SECRET),
        ({"env": {"SCHEMACLI_REGISTRY_TOKEN": "tok-abcdef"}}, "tok-abcdef"),
        ({"env": {}, "file_values": {"user": "ci", "password": SECRET}}, SECRET),
        ({"env": {}, "file_values": {"token": "tok-abcdef"}}, "tok-abcdef"),
        ({"url": f"http://ci:{SECRET}@h:1", "env": {}}, SECRET),
    ],
)
def test_every_secret_given_to_the_settings_is_remembered(kwargs, secret):
    RegistrySettings.build(url=kwargs.pop("url", "http://h:1"), **kwargs)
    assert redact.redact(f"said {secret}") == "said ***"


def test_a_secret_is_remembered_even_from_a_source_that_loses_and_before_a_refusal():
    with pytest.raises(UsageError):  # user and token both: refused
        RegistrySettings.build(
            url="http://h:1",
            user="ci",
            password="flag-password",
            env={"SCHEMACLI_REGISTRY_TOKEN": "env-token-xyz"},
            file_values={"password": "file-password"},
        )
    for secret in ("flag-password", "env-token-xyz", "file-password"):
        assert redact.redact(secret) == "***"


def test_a_kafka_properties_files_secrets_are_remembered_when_it_is_loaded(tmp_path):
    from converters.kafka import settings

    path = tmp_path / "client.properties"
    path.write_text(
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="ci" password="sasl-SECRET-1";\n'
        "ssl.key.password=key-SECRET-2\n"
        "librdkafka.sasl.password=sasl-SECRET-3\n"
    )
    settings.load(path, files=False)
    said = redact.redact("sasl-SECRET-1 key-SECRET-2 sasl-SECRET-3 SASL_SSL PLAIN ci")
    assert said == "*** *** *** SASL_SSL PLAIN ci"


def test_verbose_registry_logs_are_redacted():
    import logging

    redact.remember(SECRET)
    record = logging.LogRecord("schemacli.registry", logging.DEBUG, "", 0, "%s", (SECRET,), None)
    assert redact.formatter("registry: %(message)s").format(record) == "registry: ***"


def test_scrub_returns_a_report_without_secrets_as_it_is_not_a_copy():
    # the usual case: a big report is walked, not rebuilt (cost grows with the report only)
    row = _Row(name="subject", where=Location(source="a.avsc"), values=(1, "x"), path=Path("p"))
    assert redact.scrub(row) is row


def test_scrub_masks_a_string_or_an_object_met_again_as_the_first_time():
    # each distinct string is redacted once and a tuple or dataclass met again is walked once:
    # every place the report holds them still comes out masked
    redact.remember(SECRET)
    where = Location(source=f"http://alice:{SECRET}@h/x.avsc", line=3)
    shared = (f"old {SECRET}", where)
    twin = "".join(["old ", SECRET])  # equal to shared[0], another object
    rows = [_Row(name=twin, where=where, values=shared, path=Path("p")) for _ in range(3)]
    clean = redact.scrub(rows)
    assert SECRET not in repr(clean)
    assert all(row.values is clean[0].values for row in clean)  # shared before, shared after
    assert clean[0].name == "old ***" and clean[0].where.source == "http://***@h/x.avsc"


def test_scrub_keeps_a_string_equal_to_one_seen_as_it_is():
    # a string met again equal to a clean one is given back itself: nothing is rebuilt
    first, second = "".join(["a", "=b"]), "".join(["a=", "b"])  # may hide: '=' in both
    row = _Row(name=first, where=Location(source=second), values=(first, second), path=Path("p"))
    assert redact.scrub(row) is row


# ---- a JSON report holding nothing to mask is written without the walk, and only then ------


def _diff_report(doc: str):
    """A diff whose new schema has ``doc``, as a report (the change's message quotes it)."""
    from schemacli.contracts.evolution.diff import diff
    from schemacli.output import diff_report

    old = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "long"}]}
    new = {**old, "doc": doc, "fields": [{"name": "a", "type": "string"}]}
    return diff_report(diff(json.dumps(old), json.dumps(new)))


def _diff_json(doc: str) -> str:
    from schemacli.output import OutputFormat, render

    return render(_diff_report(doc), OutputFormat.json)


@pytest.mark.parametrize(
    ("doc", "remembered", "hidden"),
    [
        (f"see http://alice:{SECRET}@host/x", None, SECRET),  # user info: an '@'
        (f"see https://host/x?token={SECRET}", None, SECRET),  # a query secret: an '='
        (f"kept by {SECRET}", SECRET, SECRET),  # a remembered secret, no '@' and no '='
    ],
)
def test_a_json_report_that_may_hold_a_secret_is_scrubbed_before_it_is_written(
    doc, remembered, hidden
):
    if remembered:
        redact.remember(remembered)
    shown = _diff_json(doc)
    assert hidden not in shown
    assert redact.MASK in shown
    json.loads(shown)


def test_a_json_report_with_nothing_to_mask_is_written_as_the_scrubbed_one_without_the_walk(
    monkeypatch,
):
    from schemacli import output
    from schemacli.output import json_out

    walked = []
    monkeypatch.setattr(output, "scrub", lambda value: walked.append(value) or value)
    shown = _diff_json("the rides of a day")
    assert walked == []  # no '@', no '=', no secret: the walk was not taken
    assert redact.nothing_to_mask(shown)
    monkeypatch.undo()
    report = _diff_report("the rides of a day")
    assert shown == json_out.render(redact.scrub(report))  # what the walk would have given


def test_only_a_format_that_writes_every_string_whole_skips_the_walk():
    from schemacli.output import OutputFormat
    from schemacli.output.formats import FORMATS

    whole = {fmt for fmt, module in FORMATS.items() if getattr(module, "WHOLE_STRINGS", False)}
    assert whole == {OutputFormat.json}  # text shortens and styles; gitlab hashes messages


def test_nothing_to_mask_only_without_an_at_an_equals_sign_or_a_remembered_secret():
    assert redact.nothing_to_mask("field 'a': type changed from long to string")
    assert not redact.nothing_to_mask("x@y")
    assert not redact.nothing_to_mask("a=b")
    redact.remember("hunter22")
    assert not redact.nothing_to_mask("field 'a'")
