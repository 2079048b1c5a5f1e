"""Registering schemas: idempotently, one at a time, or all-or-nothing for the gate.

``register_schema`` first looks the schema up (same schema -> same id, no new version); on a
dry run it only asks the registry whether it would accept it. An incompatible schema is a
``CheckFailed`` (exit 1) carrying the registry's verbose reasons, not a bare 409.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from schemacli.errors import CheckFailed, RegistryError
from schemacli.registry.client import RegistryClient
from schemacli.registry.errors import RegistryErrorCode, TransportError
from schemacli.registry.history import is_missing_subject
from schemacli.registry.models import Reference


class Outcome(StrEnum):
    REGISTERED = "registered"
    ALREADY_REGISTERED = "already-registered"
    WOULD_REGISTER = "would-register"  # --dry-run: compatible, not registered


@dataclass(frozen=True)
class RegisterResult:
    """What happened to one schema: outcome, id and version (None when not known)."""

    subject: str
    outcome: Outcome
    id: int | None
    version: int | None
    messages: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.outcome is Outcome.ALREADY_REGISTERED:
            return f"{self.subject}: already registered as version {self.version}, id {self.id}"
        if self.outcome is Outcome.WOULD_REGISTER:
            return f"{self.subject}: compatible; would be registered as a new version (dry run)"
        version = f"version {self.version}, " if self.version is not None else ""
        return f"{self.subject}: registered as {version}id {self.id}"


def register_schema(
    client: RegistryClient,
    subject: str,
    text: str,
    *,
    references: Sequence[Reference] = (),
    normalize: bool = False,
    dry_run: bool = False,
) -> RegisterResult:
    """Register ``text`` under ``subject`` unless it is already there.

    Raises CheckFailed (exit 1) when the registry refuses it as incompatible (409), with the
    registry's verbose reasons as the hint; RegistryError / NetworkError otherwise.
    """
    found = client.lookup(subject, text, references=references, normalize=normalize)
    if found is not None:
        return RegisterResult(subject, Outcome.ALREADY_REGISTERED, found.id, found.version)
    if dry_run:
        try:
            answer = client.test_compatibility_all(
                subject, text, references=references, normalize=normalize
            )
        except RegistryError as err:
            if not is_missing_subject(err):
                raise
            return RegisterResult(
                subject,
                Outcome.WOULD_REGISTER,
                None,
                1,
                ("subject does not exist yet: this would be its version 1",),
            )
        if not answer.compatible:
            raise _incompatible(client, subject, answer.messages)
        return RegisterResult(subject, Outcome.WOULD_REGISTER, None, None, answer.messages)
    try:
        registered = client.register(subject, text, references=references, normalize=normalize)
    except RegistryError as err:
        if may_have_registered(err):
            err.message += (
                f" The registration of {subject} was sent: the registry may have stored it "
                "although no answer came."
            )
            err.hint = (
                f"Check with `schemacli subjects show {subject}` (or run the same register "
                "again: it finds the schema if it was stored, and registers it if not)."
            )
            raise
        if err.error_code == RegistryErrorCode.INCOMPATIBLE_SCHEMA or err.status == 409:
            reasons = _reasons(client, subject, text, references)
            if not reasons and err.server_message:  # e.g. Apicurio: reasons only in the 409
                reasons = (err.server_message,)
            raise _incompatible(client, subject, reasons) from err
        raise
    version = registered.version
    if version is None:  # the registry said only the id (Apicurio, older Confluent): ask for it
        try:
            # where that id is registered: one question, not the lookup again (asked above)
            found_at = client.get_schema_versions(registered.id)
        except RegistryError:
            # The schema IS registered: a failed follow-up question must not hide that (the
            # gate would report "nothing registered" and leave it behind). The version stays
            # unknown; the result says "registered as id N".
            found_at = []
        version = max((r.version for r in found_at if r.subject == subject), default=None)
    return RegisterResult(subject, Outcome.REGISTERED, registered.id, version)


def may_have_registered(err: RegistryError) -> bool:
    """Whether a failed ``register`` call may still have been carried out by the registry: the
    request was sent but no answer came (a timeout, a dropped connection), or the registry
    failed on its side (5xx) — possibly after storing the schema."""
    if isinstance(err, TransportError):
        return err.may_have_arrived
    return err.status is not None and err.status >= 500


def _reasons(
    client: RegistryClient, subject: str, text: str, references: Sequence[Reference]
) -> tuple[str, ...]:
    try:
        return client.test_compatibility_all(subject, text, references=references).messages
    except RegistryError:
        return ()  # the 409 itself is the answer; the reasons are a courtesy


def _incompatible(client: RegistryClient, subject: str, messages: Sequence[str]) -> CheckFailed:
    reasons = "; ".join(messages) if messages else "the registry gave no reasons"
    return CheckFailed(
        f"The registry at {client.settings.display_url} refuses the schema for subject "
        f"'{subject}': incompatible with its history at the subject's level. "
        f"Registry says: {reasons}",
        hint=f"Run `schemacli check SCHEMA --subject {subject} --registry URL` for the local "
        "engine's findings with line:col; evolve compatibly (new fields need defaults), or "
        "publish under a new subject.",
    )


def register_all(
    client: RegistryClient,
    items: Sequence[tuple[str, str, Sequence[Reference]]],
    *,
    on_done: Callable[[RegisterResult], None] | None = None,
) -> list[RegisterResult]:
    """Register (subject, text, references) items in order; stops at the first failure.

    Callers must check every item first (the gate does): this only registers. A failure after
    some items were registered raises RegistryError naming what was and was not registered.
    """
    done: list[RegisterResult] = []
    for subject, text, refs in items:
        try:
            result = register_schema(client, subject, text, references=refs)
        except (RegistryError, CheckFailed) as err:
            if done:
                err.message += (
                    f" ({len(done)} schema(s) were registered before this failure: "
                    + ", ".join(
                        f"{r.subject} v{r.version}"
                        if r.version is not None
                        else f"{r.subject} id {r.id}"
                        for r in done
                    )
                    + ")"
                )
            raise
        done.append(result)
        if on_done is not None:
            on_done(result)
    return done
