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


def effective_level(client: RegistryClient, subject: str | None) -> tuple[str, str] | None:
    """(level, source) as Apicurio applies it, or None if its own API cannot tell us."""
    base = native_base(client)
    try:
        if subject is not None:
            try:
                rule = client._call(
                    "GET",
                    f"/groups/default/artifacts/{quote(subject, safe='')}/rules/COMPATIBILITY",
                    base=base,
                    context={"subject": subject},
                )
                return str(rule["config"]), "subject"
            except RegistryError as err:
                if err.status != 404:
                    raise
        rule = client._call("GET", "/admin/rules/COMPATIBILITY", base=base)
        return str(rule["config"]), "global"
    except (RegistryError, KeyError, TypeError):
        return None  # no access to the native API (auth, roles, other version): keep ccompat's
