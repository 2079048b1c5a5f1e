"""Apicurio Registry's ccompat API: where its compatibility levels deviate, and the workaround.

Apicurio (3.x) serves the Confluent API under ``/apis/ccompat/v7`` but maps levels onto its own
rules, which changes what ``/config`` says (checked against 3.0.9, see docs/registry.md):

* ``GET /config`` and ``GET /config/{s}`` report ``NONE`` when no rule is stored, although the
  server's *default* global rule (``apicurio.rules.global.compatibility``) still applies.
* ``PUT /config/{s}`` with ``NONE`` deletes the subject's rule instead of disabling checks, so
  the global rule applies again: a subject cannot be set to NONE while a global rule exists.
* ``GET /config/{s}`` never answers 40408 ("no subject level"): it reports the global value.

So, for a registry under ``/apis/ccompat/``, the effective level is read from Apicurio's own API:
the artifact's COMPATIBILITY rule if it has one, else the global rule (default included).
"""

from __future__ import annotations

from urllib.parse import quote

from schemacli.errors import RegistryError
from schemacli.registry.client import RegistryClient

MARKER = "/apis/ccompat/"


def is_apicurio(client: RegistryClient) -> bool:
    return MARKER in client.settings.url


def native_base(client: RegistryClient) -> str:
    return client.settings.url.split(MARKER, 1)[0] + "/apis/registry/v3"


UNKNOWN = object()  # what subject_rule answers when Apicurio's own API cannot tell


def subject_rule(client: RegistryClient, subject: str) -> str | None | object:
    """The subject's own COMPATIBILITY rule (a level), None when it has none, or UNKNOWN when
    Apicurio's own API cannot be read (auth, roles, another version): then ccompat's answer
    is all there is."""
    try:
        rule = client._call(
            "GET",
            f"/groups/default/artifacts/{quote(subject, safe='')}/rules/COMPATIBILITY",
            base=native_base(client),
            context={"subject": subject},
        )
        return str(rule["config"])
    except RegistryError as err:
        return None if err.status == 404 else UNKNOWN
    except (KeyError, TypeError):
        return UNKNOWN


def global_rule(client: RegistryClient) -> str | None:
    """The global COMPATIBILITY rule Apicurio applies (its default included), or None when its
    own API cannot tell."""
    try:
        rule = client._call("GET", "/admin/rules/COMPATIBILITY", base=native_base(client))
        return str(rule["config"])
    except (RegistryError, KeyError, TypeError):
        return None
