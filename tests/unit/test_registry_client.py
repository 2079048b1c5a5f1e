"""The registry client against an in-process fake registry: endpoints, errors, retries."""

from __future__ import annotations

import json
import logging

import pytest
from registry_fake import free_port

from schemacli.errors import ExitCode, NetworkError, RegistryError, UsageError
from schemacli.registry.client import RegistryClient
from schemacli.registry.errors import RegistryErrorCode, redact
from schemacli.registry.models import Reference
from schemacli.registry.settings import RegistrySettings
from schemacli.registry.transport import CONTENT_TYPE

V1 = json.dumps({"type": "record", "name": "Ride", "fields": [{"name": "id", "type": "int"}]})
V2 = json.dumps(
    {
        "type": "record",
        "name": "Ride",
        "fields": [{"name": "id", "type": "int"}, {"name": "tip", "type": "float", "default": 0.0}],
    }
)


def client_for(url: str, **settings) -> tuple[RegistryClient, list[float]]:
    waits: list[float] = []
    settings.setdefault("retries", 3)
    client = RegistryClient(RegistrySettings(url=url, **settings), sleep=waits.append)
    return client, waits


def test_register_then_get_latest_returns_the_same_schema_and_id(fake):
    client, _ = client_for(fake.url)
    registered = client.register("rides-value", V1)
    latest = client.get_version("rides-value")
    assert (latest.subject, latest.version, latest.id) == ("rides-value", 1, registered.id)
    assert json.loads(latest.schema) == json.loads(V1)
    assert client.list_subjects() == ["rides-value"]
    assert client.list_versions("rides-value") == [1]


def test_a_subject_prefix_filters_even_where_the_registry_ignores_it(fake):
    # the fake, like Apicurio 3.0.9, answers every subject whatever subjectPrefix says
    client, _ = client_for(fake.url)
    for subject in ("orders-value", "orders-key", "rides-value"):
        fake.add(subject, V1)
    assert sorted(client.list_subjects(prefix="orders-")) == ["orders-key", "orders-value"]
    assert fake.requests[-1].query["subjectPrefix"] == ["orders-"]


def test_registering_the_same_schema_twice_returns_the_same_id(fake):
    client, _ = client_for(fake.url)
    first = client.register("rides-value", V1)
    again = client.register("rides-value", V1)
    assert first.id == again.id
    assert client.list_versions("rides-value") == [1]


def test_requests_use_the_registry_content_type(fake):
    client, _ = client_for(fake.url)
    client.register("rides-value", V1)
    seen = fake.requests[-1]
    assert seen.headers["Content-Type"] == CONTENT_TYPE
    assert CONTENT_TYPE in seen.headers["Accept"]


def test_subjects_are_url_encoded_whole_including_context_qualified_names(fake):
    client, _ = client_for(fake.url)
    subject = ":.staging:rides/value"
    client.register(subject, V1)
    assert fake.requests[-1].path == "/subjects/%3A.staging%3Arides%2Fvalue/versions"
    assert client.list_subjects() == [subject]
    assert client.get_version(subject, 1).subject == subject


def test_references_and_normalize_are_sent_on_register(fake):
    client, _ = client_for(fake.url)
    ref = Reference(name="com.acme.Money", subject="money-value", version=2)
    client.register("rides-value", V1, references=[ref], normalize=True)
    seen = fake.requests[-1]
    assert seen.body["references"] == [
        {"name": "com.acme.Money", "subject": "money-value", "version": 2}
    ]
    assert seen.query["normalize"] == ["true"]


def test_lookup_finds_the_version_and_returns_none_for_unknown(fake):
    client, _ = client_for(fake.url)
    fake.add("rides-value", V1)
    fake.add("rides-value", V2)
    found = client.lookup("rides-value", V2)
    assert found is not None and found.version == 2
    assert client.lookup("rides-value", json.dumps({"type": "string"})) is None
    assert client.lookup("nobody-value", V1) is None


def test_compatibility_is_verbose_and_keeps_the_registry_reasons(fake):
    client, _ = client_for(fake.url)
    fake.add("rides-value", V1)
    fake.compat_answer = {
        "is_compatible": False,
        "messages": ["READER_FIELD_MISSING_DEFAULT_VALUE"],
    }
    answer = client.test_compatibility("rides-value", V2)
    assert answer.compatible is False
    assert answer.messages == ("READER_FIELD_MISSING_DEFAULT_VALUE",)
    assert fake.requests[-1].query["verbose"] == ["true"]
    assert fake.requests[-1].path == "/compatibility/subjects/rides-value/versions/latest"
    client.test_compatibility_all("rides-value", V2)
    assert fake.requests[-1].path == "/compatibility/subjects/rides-value/versions"


def test_config_get_set_delete_global_and_per_subject(fake):
    client, _ = client_for(fake.url)
    assert client.get_config() == "BACKWARD"
    assert client.set_config("full", "rides-value") == "FULL"
    assert fake.requests[-1].body == {"compatibility": "FULL"}
    assert client.get_config("rides-value") == "FULL"
    assert client.delete_config("rides-value") == "FULL"
    assert client.get_config("rides-value", default_to_global=True) == "BACKWARD"
    assert client.set_config("NONE") == "NONE"
    assert client.get_mode() == "READWRITE"


def test_schema_by_id_and_where_it_is_used(fake):
    client, _ = client_for(fake.url)
    schema_id = fake.add("rides-value", V1)
    fake.add("other-value", V1)
    assert json.loads(client.get_schema(schema_id).schema) == json.loads(V1)
    assert client.get_schema_subjects(schema_id) == ["other-value", "rides-value"]
    assert {(r.subject, r.version) for r in client.get_schema_versions(schema_id)} == {
        ("rides-value", 1),
        ("other-value", 1),
    }


def test_soft_then_permanent_delete(fake):
    client, _ = client_for(fake.url)
    fake.add("rides-value", V1)
    fake.add("rides-value", V2)
    assert client.delete_version("rides-value", 2) == 2
    assert client.list_versions("rides-value") == [1]
    assert client.list_versions("rides-value", deleted=True) == [1, 2]
    with pytest.raises(RegistryError) as permanent_first:
        client.delete_subject("rides-value", permanent=True)
    assert permanent_first.value.error_code == RegistryErrorCode.SUBJECT_NOT_SOFT_DELETED
    assert client.delete_subject("rides-value") == [1, 2]
    assert client.delete_subject("rides-value", permanent=True) == [1, 2]
    assert fake.requests[-1].query["permanent"] == ["true"]
    assert client.list_subjects(deleted=True) == []


# ---- error codes ---------------------------------------------------------------------------

ERROR_CASES = [
    # (status, error_code, call, words the message must contain)
    (404, 40401, lambda c: c.get_version("ghost-value"), "Subject 'ghost-value' not found"),
    (404, 40402, lambda c: c.get_version("rides-value", 7), "Version 7 of subject 'rides-value'"),
    (404, 40403, lambda c: c.get_schema(99), "Schema id 99 not found"),
    (409, 409, lambda c: c.register("rides-value", V2), "incompatible"),
    (422, 42201, lambda c: c.register("rides-value", V2), "not valid"),
    (422, 42202, lambda c: c.get_version("rides-value", 0), "not a valid version"),
    (500, 50001, lambda c: c.register("rides-value", V2), "backend store"),
    (500, 50002, lambda c: c.register("rides-value", V2), "timed out"),
    (500, 50003, lambda c: c.register("rides-value", V2), "forward"),
    (401, 401, lambda c: c.list_subjects(), "refused the credentials"),
    (403, 403, lambda c: c.list_subjects(), "does not allow"),
]


@pytest.mark.parametrize(
    ("status", "code", "call", "words"), ERROR_CASES, ids=[str(c[1]) for c in ERROR_CASES]
)
def test_registry_error_codes_become_clear_registry_errors(fake, status, code, call, words):
    client, _ = client_for(fake.url, retries=0)
    fake.fail_next(status, {"error_code": code, "message": f"server says {code}"})
    with pytest.raises(RegistryError) as caught:
        call(client)
    err = caught.value
    assert (err.status, err.error_code) == (status, code)
    assert words in err.message
    assert err.server_message == f"server says {code}"
    assert err.hint
    assert err.exit_code == ExitCode.REGISTRY_ERROR


def test_unknown_error_bodies_still_name_the_status_and_keep_the_text(fake):
    client, _ = client_for(fake.url, retries=0)
    fake.fail_next(418, b"<html>teapot</html>")
    with pytest.raises(RegistryError) as caught:
        client.list_subjects()
    assert caught.value.status == 418
    assert "HTTP 418" in caught.value.message
    assert caught.value.server_message == "<html>teapot</html>"


def test_a_non_registry_url_answering_html_is_reported_not_crashed(fake):
    client, _ = client_for(fake.url, retries=0)
    fake.fail_next(200, b"<html>welcome</html>")
    with pytest.raises(RegistryError) as caught:
        client.list_subjects()
    assert "not JSON" in caught.value.message


# ---- transport failures and retries ------------------------------------------------------


def test_connection_refused_is_a_network_error_after_retries():
    client, waits = client_for(f"http://127.0.0.1:{free_port()}", retries=2)
    with pytest.raises(NetworkError) as caught:
        client.list_subjects()
    assert "Cannot connect" in caught.value.message
    assert caught.value.exit_code == ExitCode.REGISTRY_ERROR
    assert "refused" in (caught.value.server_message or "").lower()
    assert len(waits) == 2


def test_slow_registry_times_out_with_a_clear_error(fake):
    fake.stall = True  # answered only once the client has given up
    client, _ = client_for(fake.url, retries=0, timeout=0.2)
    with pytest.raises(NetworkError) as caught:
        client.list_subjects()
    assert "did not answer within 0.2 s" in caught.value.message


def test_503_is_retried_then_succeeds_with_growing_jittered_waits(fake):
    fake.add("rides-value", V1)
    fake.fail_next(503, {"error_code": 50003, "message": "no leader"}, times=2)
    client, waits = client_for(fake.url, retries=3)
    assert client.list_subjects() == ["rides-value"]
    assert len(waits) == 2
    assert all(0 <= w <= client.settings.backoff * 2**i for i, w in enumerate(waits))


def test_429_honours_retry_after(fake):
    fake.fail_next(429, {"error_code": 429, "message": "slow down"})
    fake.extra_headers["Retry-After"] = "2"
    client, waits = client_for(fake.url, retries=1)
    assert client.list_subjects() == []
    assert waits == [2.0]  # the server's wish, not our (shorter) jittered backoff


def test_retry_after_is_capped(fake):
    fake.fail_next(429, {"error_code": 429, "message": "slow down"})
    fake.extra_headers["Retry-After"] = "3600"
    client, waits = client_for(fake.url, retries=1)
    client.list_subjects()
    assert waits == [client.settings.backoff_max]


def test_register_is_never_retried_on_a_500(fake):
    fake.fail_next(500, {"error_code": 50001, "message": "store failed"})
    client, waits = client_for(fake.url, retries=3)
    with pytest.raises(RegistryError) as caught:
        client.register("rides-value", V1)
    assert caught.value.error_code == 50001
    assert waits == []
    assert [r.method for r in fake.requests] == ["POST"]


def test_lookup_and_compatibility_posts_are_retried_because_they_are_idempotent(fake):
    fake.add("rides-value", V1)
    client, waits = client_for(fake.url, retries=2)
    fake.fail_next(503)
    assert client.lookup("rides-value", V1) is not None
    fake.fail_next(502)
    assert client.test_compatibility("rides-value", V2).compatible
    assert len(waits) == 2


def test_retries_give_up_after_the_configured_count(fake):
    fake.fail_next(503, {"error_code": 50003, "message": "no leader"}, times=5)
    client, waits = client_for(fake.url, retries=2)
    with pytest.raises(RegistryError) as caught:
        client.list_subjects()
    assert caught.value.error_code == 50003
    assert len(waits) == 2


# ---- auth ----------------------------------------------------------------------------------


def test_basic_auth_is_sent_and_accepted(fake):
    fake.require_basic = ("ci", "s3cret-pass")
    client, _ = client_for(fake.url, username="ci", password="s3cret-pass")
    assert client.list_subjects() == []


def test_wrong_password_is_a_401_with_a_hint_about_credentials(fake):
    fake.require_basic = ("ci", "s3cret-pass")
    client, _ = client_for(fake.url, username="ci", password="wrong-pass", retries=0)
    with pytest.raises(RegistryError) as caught:
        client.list_subjects()
    assert caught.value.status == 401
    assert "credentials" in caught.value.message
    assert "wrong-pass" not in str(caught.value) + (caught.value.hint or "")


def test_basic_auth_credentials_outside_latin_1_are_sent_as_utf8(fake):
    fake.require_basic = ("çi-ü", "s3cr€t")  # the fake decodes the header as UTF-8, as RFC 7617
    client, _ = client_for(fake.url, username="çi-ü", password="s3cr€t")
    assert client.list_subjects() == []
    assert "s3cr€t" not in repr(client)


def test_bearer_token_is_sent(fake):
    fake.require_token = "tok-123456"
    client, _ = client_for(fake.url, token="tok-123456")
    assert client.list_subjects() == []


def test_verbose_log_names_method_url_and_status_but_no_credentials(fake, caplog):
    client, _ = client_for(fake.url, username="ci", password="s3cret-pass")
    with caplog.at_level(logging.DEBUG):
        client.list_subjects()
    assert f"GET {fake.url}/subjects -> 200" in caplog.text
    assert "s3cret-pass" not in caplog.text


def test_a_netrc_entry_never_replaces_the_bearer_token(fake, tmp_path, monkeypatch):
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login someone password other-secret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    fake.require_token = "tok-123456"
    client, _ = client_for(fake.url, token="tok-123456")
    assert client.list_subjects() == []


def test_redirects_are_not_followed_and_name_the_target(fake):
    fake.fail_next(307, {"message": "moved"})
    fake.extra_headers["Location"] = "http://u:p4ss@elsewhere:8081/subjects"
    client, _ = client_for(fake.url, retries=0)
    with pytest.raises(RegistryError) as caught:
        client.list_subjects()
    assert "http://elsewhere:8081/subjects" in caught.value.message
    assert "p4ss" not in caught.value.message


# ---- answers of the wrong shape (a proxy, another API, a broken registry) -----------------

WRONG_SHAPES = [
    ("list_subjects", (), {"subjects": ["a"]}),
    ("list_subjects", (), ["a", None, 3]),
    ("list_versions", ("s",), ["one", "two"]),
    ("get_version", ("s",), ["not", "an", "object"]),
    ("get_version", ("s",), {"subject": "s", "version": "x", "id": 1, "schema": "{}"}),
    ("get_schema", (1,), [1, 2]),
    ("get_schema_versions", (1,), [{"subject": "s"}]),
    ("register", ("s", '{"type": "string"}'), {"identifier": 3}),
    ("get_config", (), ["BACKWARD"]),
    ("test_compatibility", ("s", '{"type": "string"}'), [True]),
]


@pytest.mark.parametrize(("method", "args", "answer"), WRONG_SHAPES, ids=lambda x: str(x)[:30])
def test_an_answer_of_the_wrong_shape_is_a_registry_error_naming_the_request(
    fake, method, args, answer
):
    client, _ = client_for(fake.url, retries=0)
    fake.fail_next(200, answer)
    with pytest.raises(RegistryError) as caught:
        getattr(client, method)(*args)
    assert "not what a Confluent-compatible registry answers" in caught.value.message
    assert fake.url in caught.value.message


@pytest.mark.parametrize("subject", ["", "  "])
def test_an_empty_subject_name_is_a_usage_error_before_any_request(fake, subject):
    client, _ = client_for(fake.url, retries=0)
    with pytest.raises(UsageError) as caught:
        client.register(subject, '{"type": "string"}')
    assert "empty" in caught.value.message
    assert fake.requests == []


# ---- redaction -----------------------------------------------------------------------------


def test_a_secret_is_redacted_wherever_it_occurs():
    assert redact("login ci/hunter22 refused (hunter22)", ["hunter22"]) == (
        "login ci/*** refused (***)"
    )


def test_a_short_secret_is_redacted_only_where_it_stands_alone():
    # a password "1" must not turn "[Errno 111]" into "[Errno *********]"
    assert redact("[Errno 111] Connection refused", ["1"]) == "[Errno 111] Connection refused"
    assert redact("bad login ci/1 on port 8081", ["1"]) == "bad login ci/*** on port 8081"


def test_connection_refused_with_a_one_character_password_keeps_the_errno():
    client, _ = client_for(f"http://127.0.0.1:{free_port()}", username="u", password="1", retries=0)
    with pytest.raises(NetworkError) as caught:
        client.list_subjects()
    assert "[Errno 111]" in (caught.value.server_message or "")


def test_a_time_out_after_retries_says_the_attempts_and_the_whole_time(fake):
    fake.stall = True  # answered only once the client has given up
    client, _ = client_for(fake.url, retries=2, timeout=0.2)
    with pytest.raises(NetworkError) as caught:
        client.list_subjects()
    message = caught.value.message
    assert "did not answer within 0.2 s on any of 3 attempts" in message
    seconds = float(message.split("attempts (")[1].split(" s in all")[0])
    assert seconds >= 0.6  # three time-outs of 0.2 s at least: the time the user waited
    assert "(GET /subjects)" in message


def test_a_not_found_on_a_call_without_a_subject_names_the_call_not_a_question_mark(fake):
    fake.fail_next(404, {"error_code": 40401, "message": "Subject not found."})
    client, _ = client_for(fake.url, retries=0)
    with pytest.raises(RegistryError) as caught:
        client.get_schema_subjects(7)
    message = caught.value.message
    assert "'?'" not in message and "?" not in (caught.value.hint or "")
    assert "HTTP 404 (error 40401) to GET /schemas/ids/7/subjects" in message
    assert caught.value.server_message == "Subject not found."
