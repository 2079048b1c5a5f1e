"""Checking a schema against a subject in the registry: its verdict and ours, side by side.

The registry (verbose) and the local engine (``check_candidate`` over the subject's history from
``schemacli.registry.schemas``) are both
asked, at the level the registry applies to the subject. They should agree case for case (both
follow Apache Avro Java's SchemaCompatibility); when they do not, ``RegistryCheck.agree`` is False
and the commands say so loudly — one of the two has a bug, or the registry deviates from Java.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from schemacli.contracts.avro.loader import LoadedSchema
from schemacli.contracts.evolution.check import CheckReport, check_candidate
from schemacli.contracts.evolution.levels import Level
from schemacli.contracts.findings import Finding, Kind, Severity
from schemacli.errors import Location, RegistryError
from schemacli.registry.client import RegistryClient
from schemacli.registry.errors import RegistryErrorCode
from schemacli.registry.history import is_missing_subject, registry_level
from schemacli.registry.models import CompatibilityAnswer, Reference
from schemacli.registry.schemas import RegistrySchemas


@dataclass(frozen=True)
class RegistryCheck:
    """One candidate checked against one subject: the local report and the registry's answer."""

    subject: str
    level: Level
    level_source: str  # "subject", "global" or "flag"
    local: CheckReport
    registry: CompatibilityAnswer | None  # None when the registry could not be asked meaningfully
    registry_note: str | None = None  # why the registry was not asked, or what it deviates in

    @property
    def compatible(self) -> bool:
        """Compatible only when both say so (a disagreement fails closed)."""
        registry_ok = self.registry is None or self.registry.compatible
        return bool(self.local.compatible) and registry_ok

    @property
    def agree(self) -> bool | None:
        """Whether both verdicts are the same; None when only one verdict exists."""
        if self.registry is None:
            return None
        return bool(self.local.compatible) == self.registry.compatible


def check_against_registry(
    client: RegistryClient,
    candidate: LoadedSchema,
    subject: str,
    *,
    level: Level | None = None,
    references: Sequence[Reference] = (),
    history: Sequence[LoadedSchema] | None = None,
) -> RegistryCheck:
    """Check ``candidate`` (a ``LoadedSchema``) against ``subject``'s history in the registry.

    Without ``level`` the registry's level for the subject is used, so both verdicts are about
    the same question. With a different ``level`` only the local engine can answer (the registry
    always applies its own level); the registry is then not asked.
    """
    configured = registry_level(client, subject)
    chosen = level or configured.level
    source = "flag" if level is not None and level != configured.level else configured.source
    if history is None:
        history = RegistrySchemas(client).history(subject)
    local = check_candidate(candidate, history, subject=subject, level=chosen)

    if chosen != configured.level:
        note = (
            f"the registry applies {configured.level.value} to {subject}, not {chosen.value}; "
            "only the local engine answered"
        )
        return RegistryCheck(subject, chosen, source, local, None, note)
    if local.identical_to is not None:
        found = client.lookup(subject, schema_text(candidate), references=references)
        if found is not None:
            already = CompatibilityAnswer(
                True, (f"already registered as version {found.version}, id {found.id}",)
            )
            return RegistryCheck(subject, chosen, source, local, already)
    answer, why = ask_registry(client, subject, schema_text(candidate), references)
    return RegistryCheck(subject, chosen, source, local, answer, why)


def ask_registry(
    client: RegistryClient, subject: str, text: str, references: Sequence[Reference] = ()
) -> tuple[CompatibilityAnswer | None, str | None]:
    """The registry's verdict on ``text`` (already valid Avro here) against ``subject``'s
    history: (the answer, None), or (None, why the registry could not judge it).

    A subject that does not exist yet takes any first version. A registry that calls a schema
    schemacli parsed invalid (42201) cannot judge it: Apicurio 3.0.9's compatibility test does
    so for every subject whose versions use references (docs/registry.md, "Registry deviations
    found"), though it registers such schemas. Then only the local engine answers, and the
    registry's words are kept in the note.
    """
    try:
        return client.test_compatibility_all(subject, text, references=references), None
    except RegistryError as err:
        if is_missing_subject(err):
            first = "subject does not exist yet: the first version is always compatible"
            return CompatibilityAnswer(True, (first,)), None
        if err.error_code != RegistryErrorCode.INVALID_SCHEMA:
            raise
        said = err.server_message or err.message
        return None, (
            f"the registry could not judge the schema against {subject} (HTTP {err.status} "
            f"{err.error_code}: {said}); only the local engine answered"
        )


def schema_text(candidate: LoadedSchema) -> str:
    """The JSON we send for a loaded schema: its value, compact (comments and layout dropped)."""
    return json.dumps(candidate.value, separators=(",", ":"), ensure_ascii=False)


# -- as findings, for the check command's renderers ------------------------------------------


def registry_findings(check: RegistryCheck) -> tuple[Finding, ...]:
    """The registry's side of ``check`` as findings, placed at the candidate's file.

    An incompatible registry verdict is an error finding carrying the registry's messages; a
    disagreement with the local engine is an error too (fail closed), saying which side said what.
    """
    where = Location(source=check.local.candidate, line=1, column=1)
    found: list[Finding] = []
    if check.registry is None:
        if check.registry_note:
            found.append(
                Finding(
                    kind=Kind.REGISTRY_NOT_ASKED,
                    message=check.registry_note,
                    location=where,
                    severity=Severity.WARNING,
                    subject=check.subject,
                )
            )
        return tuple(found)
    if not check.registry.compatible:
        reasons = "; ".join(check.registry.messages) or (
            "no reasons given (the registry sent no verbose messages)"
        )
        found.append(
            Finding(
                kind=Kind.REGISTRY_INCOMPATIBLE,
                message=f"the registry says incompatible at {check.level.value}: {reasons}",
                location=where,
                hint="the registry would refuse this schema with HTTP 409",
                subject=check.subject,
                new=tuple(check.registry.messages),
            )
        )
    if check.agree is False:
        local = "compatible" if check.local.compatible else "incompatible"
        remote = "compatible" if check.registry.compatible else "incompatible"
        found.append(
            Finding(
                kind=Kind.REGISTRY_DISAGREEMENT,
                message=f"DISAGREEMENT at {check.level.value}: the registry says {remote}, the "
                f"local engine says {local}",
                location=where,
                hint="one of the two deviates from Apache Avro Java's SchemaCompatibility; "
                "treated as a failure until resolved — please report it with both schemas",
                subject=check.subject,
                old=local,
                new=remote,
            )
        )
    return tuple(found)


def merged_report(check: RegistryCheck) -> CheckReport:
    """The local CheckReport with the registry's findings added (its verdict then covers both)."""
    from dataclasses import replace

    return replace(check.local, findings=check.local.findings + registry_findings(check))


def check_with_registry(
    client: RegistryClient,
    candidate: LoadedSchema,
    subject: str,
    *,
    level: Level | None = None,
    references: Sequence[Reference] = (),
) -> tuple[CheckReport, str]:
    """``schemacli check --registry URL``: (a CheckReport covering both verdicts, a summary line).

    ``client`` is built at the edge from the registry flags, environment and config file.
    Raises RegistryError / NetworkError (exit 3).
    """
    check = check_against_registry(client, candidate, subject, level=level, references=references)
    return merged_report(check), both_verdicts(check, client.settings.display_url)


def both_verdicts(check: RegistryCheck, url: str) -> str:
    """One line with both verdicts, e.g. for stderr next to the rendered report."""
    local = "compatible" if check.local.compatible else "incompatible"
    if check.registry is None:
        remote = f"not asked ({check.registry_note})"
    else:
        remote = "compatible" if check.registry.compatible else "incompatible"
    level = f"{check.level.value} ({check.level_source})"
    verdict = {True: "agree", False: "DISAGREE", None: "only the local engine answered"}
    return (
        f"{check.subject} at {level}: registry {url} says {remote}; local engine says {local} "
        f"-> {verdict[check.agree]}"
    )
