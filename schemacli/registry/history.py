"""A subject's compatibility level as the registry applies it, and "no such subject" in any
registry's words.

The versions themselves (a subject's history as ``LoadedSchema`` records, references resolved)
come from the one road, ``schemacli.registry.schemas.RegistrySchemas``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from schemacli.contracts.evolution.levels import Level
from schemacli.errors import RegistryError
from schemacli.registry.client import RegistryClient
from schemacli.registry.errors import RegistryErrorCode

_NO_SUBJECT = (RegistryErrorCode.SUBJECT_NOT_FOUND, RegistryErrorCode.SUBJECT_SOFT_DELETED)
_NO_SUBJECT_LEVEL = (
    RegistryErrorCode.SUBJECT_LEVEL_COMPATIBILITY_NOT_CONFIGURED,
    RegistryErrorCode.SUBJECT_NOT_FOUND,
)


def is_missing_subject(err: RegistryError) -> bool:
    """True when ``err`` says the subject does not exist (any registry's way of saying it)."""
    return err.error_code in _NO_SUBJECT or (err.status == 404 and err.error_code in (None, 404))


@dataclass(frozen=True)
class SubjectLevel:
    """A subject's compatibility level and where it comes from (``subject`` or ``global``)."""

    level: Level
    source: str


def registry_level(client: RegistryClient, subject: str | None) -> SubjectLevel:
    """The level the registry applies to ``subject``: its own, else the global one (one
    question; a run that asks about many subjects keeps a :class:`Levels`)."""
    return Levels(client).level(subject)


class Levels:
    """The levels the registry applies, asked per subject; the global level (what a subject
    without its own takes) asked once per run.

    For Apicurio, whose ccompat ``/config`` does not report the level it applies, the level is
    read from its own rules API (see ``schemacli.registry.apicurio``). Thread-safe.
    """

    def __init__(self, client: RegistryClient) -> None:
        self.client = client
        self._lock = threading.Lock()
        self._global: dict[bool, SubjectLevel] = {}

    def level(self, subject: str | None) -> SubjectLevel:
        """The level the registry applies to ``subject`` (None: the global level)."""
        return self.level_and_group(subject)[0]

    def level_and_group(self, subject: str | None) -> tuple[SubjectLevel, str | None]:
        """The level and the subject's ``compatibilityGroup`` (Confluent 7.4+; None when it has
        none), from one answer. Apicurio keeps no group (docs/registry.md), so it is not asked."""
        from schemacli.registry import apicurio

        client = self.client
        if apicurio.is_apicurio(client):
            own = apicurio.subject_rule(client, subject) if subject is not None else None
            if own is not apicurio.UNKNOWN:
                if isinstance(own, str):
                    return SubjectLevel(_as_level(own, client), "subject"), None
                found = self._global_level(native=True)
                if found is not None:
                    return found, None
        if subject is not None:
            try:
                answer = client.get_config_document(subject)
            except RegistryError as err:
                if err.error_code not in _NO_SUBJECT_LEVEL and err.status != 404:
                    raise
            else:
                own = answer.get("compatibilityLevel") or answer.get("compatibility")
                group = answer.get("compatibilityGroup")
                group = group if isinstance(group, str) and group else None
                if isinstance(own, str) and own:
                    return SubjectLevel(_as_level(own, client), "subject"), group
        found = self._global_level(native=False)
        assert found is not None  # the ccompat answer always has one
        return found, None

    def _global_level(self, *, native: bool) -> SubjectLevel | None:
        """The global level (Apicurio's own rule when ``native``), asked once: a thread that
        comes while another asks waits for its answer."""
        from schemacli.registry import apicurio

        with self._lock:  # held while asking: the question goes out once
            if native in self._global:
                return self._global[native]
            if native:
                rule = apicurio.global_rule(self.client)
                found = (
                    None if rule is None else SubjectLevel(_as_level(rule, self.client), "global")
                )
            else:
                found = SubjectLevel(_as_level(self.client.get_config(), self.client), "global")
            if found is not None:
                self._global[native] = found
            return found


def _as_level(text: str, client: RegistryClient) -> Level:
    try:
        level = Level(text.upper())
        if not level.in_registry:
            raise ValueError(text)
        return level
    except ValueError:
        raise RegistryError(
            f"The registry at {client.settings.display_url} reports an unknown compatibility "
            f"level {text!r}.",
            hint="Expected one of "
            + ", ".join(level.value for level in Level if level.in_registry)
            + ".",
        ) from None
