"""The one road from a registry's answer to a schema: what every reader of registry schemas uses.

The registry hands out a schema as text plus Confluent *references* (``{name, subject,
version}``: the named type ``name`` is defined by that subject version, whose own references
may name more). Everything schemacli does with a registered schema goes through
:class:`RegistrySchemas`:

* :meth:`RegistrySchemas.schema` -- one subject version, self-contained: its references
  resolved to any depth (each referenced version fetched once per run), a cycle refused with
  the chain that closes it, no deeper than :data:`MAX_REFERENCE_DEPTH`;
* :meth:`RegistrySchemas.writers` -- a subject's writer schemas by id (every live version),
  and :meth:`RegistrySchemas.schema_by_id` -- the writer of one id (a Confluent frame's);
* :meth:`RegistrySchemas.versions` -- the raw versions, for what stores them as the registry
  has them (``pull``: text, references and data contract, references *not* inlined).

A :class:`RegistrySchema` carries the registry's own text parsed (``loaded``: positions in that
text, the referenced versions as its ``references``, their named types as its ``names``), and
the same schema with every referenced type defined inline (``value``, ``text``:
``schemacli.contracts.avro.inline``) for what takes one schema text (Spark's ``from_avro``,
fastavro, a generated reader, the converter). Nothing else in the repository reads the
``schema`` text of a registry answer (``tests/unit/test_registry_road.py`` checks it).

Requests: raw answers about immutable facts (a subject's version N, the schema of id N) are
fetched once per :class:`RegistrySchemas` and shared between threads (the second asker waits
for the first's answer); lists and ``latest`` are asked when asked. :meth:`RegistrySchemas.map`
runs work over many subjects with at most ``settings.concurrency`` requests in flight.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, TypeVar, cast

from schemacli.contracts.avro.inline import inlined
from schemacli.contracts.avro.loader import LoadedSchema, load_schema_text
from schemacli.contracts.avro.schema import Names
from schemacli.errors import InputError, Location, RegistryError, SchemacliError
from schemacli.registry.client import RegistryClient, Version
from schemacli.registry.history import is_missing_subject
from schemacli.registry.models import Reference, SchemaById, SubjectVersion, SubjectVersionRef

MAX_REFERENCE_DEPTH = 32  # references nested deeper than this are a mistake, or a cycle

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class RegistryVersion:
    """A registry's answer about one version (or one id), as the registry holds it: its
    references not resolved. What ``pull`` stores; :meth:`RegistrySchemas.resolve` turns it
    into a :class:`RegistrySchema`."""

    subject: str | None  # None for a schema fetched by id alone
    version: int | None
    id: int
    schema_type: str
    references: tuple[Reference, ...]
    _text: str = field(repr=False)
    metadata: Mapping[str, Any] | None = field(default=None, compare=False)
    rule_set: Mapping[str, Any] | None = field(default=None, compare=False)

    @property
    def source(self) -> str:
        """``subject:vN``, or ``schema id N``: how errors and findings name it."""
        if self.subject is None:
            return f"schema id {self.id}"
        return f"{self.subject}:v{self.version}"

    @property
    def registered_text(self) -> str:
        """The registry's text verbatim, for showing it (``subjects show``); what reads the
        schema takes :meth:`RegistrySchemas.resolve`'s."""
        return self._text

    def stored_text(self) -> str:
        """The registry's text as the store keeps it: JSON pretty-printed (two spaces, a final
        newline); text that is not JSON as it is."""
        try:
            return json.dumps(json.loads(self._text), indent=2, ensure_ascii=False) + "\n"
        except (ValueError, RecursionError):  # too deep or a number too long for Python: as it is
            return self._text if self._text.endswith("\n") else self._text + "\n"


def fingerprint_of(text: str) -> str:
    """SHA-256 of a file's text: ``pull`` records it for each version's file
    (:meth:`RegistryVersion.stored_text`), so a later run knows a store file it finds unchanged
    is that version without asking again (a file edited, or only reformatted, is asked for
    again)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class RegistrySchema:
    """One registered Avro schema with everything its references name."""

    version: RegistryVersion
    loaded: LoadedSchema  # the registry's text; references = the referenced versions' schemas

    @property
    def id(self) -> int:
        return self.version.id

    @property
    def subject(self) -> str | None:
        return self.version.subject

    @property
    def number(self) -> int | None:
        """The subject's version number (None for a schema fetched by id)."""
        return self.version.version

    @property
    def source(self) -> str:
        return self.version.source

    @cached_property
    def value(self) -> Any:
        """The schema as parsed JSON, every referenced named type defined inline at its first
        use: one schema that stands alone."""
        return inlined(self.loaded)

    @cached_property
    def text(self) -> str:
        """:attr:`value` as JSON text."""
        return json.dumps(self.value)


class RegistrySchemas:
    """The registry's schemas for one run, over one client (see the module's docstring).

    Thread-safe: :meth:`map` calls it from several threads, and two threads asking for the same
    version share one request.
    """

    def __init__(self, client: RegistryClient) -> None:
        self.client = client
        self._lock = threading.Lock()
        self._answers: dict[tuple[str, Any, Any], Future[Any]] = {}
        self._resolved: dict[tuple[Any, ...], RegistrySchema] = {}
        self._depth: dict[tuple[Any, ...], int] = {}  # reference hops below a resolved schema

    def __repr__(self) -> str:
        return f"RegistrySchemas({self.client!r})"

    # ---- raw answers, each asked once -------------------------------------------------------

    def _once(self, key: tuple[str, Any, Any], fetch: Callable[[], T]) -> T:
        """``fetch()``'s answer, asked once for ``key`` however many threads want it; an error
        is not kept (a later asker tries again)."""
        with self._lock:
            found = self._answers.get(key)
            mine = found is None
            if mine:
                found = self._answers[key] = Future()
        assert found is not None
        if not mine:
            # one table serves every kind of answer: the key's first item names the kind, and
            # so the type fetch() gave it
            return cast(T, found.result())
        try:
            answer = fetch()
        except BaseException as exc:
            with self._lock:
                self._answers.pop(key, None)
            found.set_exception(exc)
            raise
        found.set_result(answer)
        return answer

    def version(self, subject: str, version: Version = "latest") -> RegistryVersion:
        """``GET /subjects/{s}/versions/{v}``, unresolved; a numbered version once per run
        (``latest`` is asked each time, and its answer kept under its number)."""
        if isinstance(version, int):
            return self._once(
                ("version", subject, version),
                lambda: _from_version(self.client.get_version(subject, version)),
            )
        found = _from_version(self.client.get_version(subject, version))
        with self._lock:
            key = ("version", subject, found.version)
            if key not in self._answers:
                done: Future[Any] = Future()
                done.set_result(found)
                self._answers[key] = done
        return found

    def version_numbers(self, subject: str) -> list[int] | None:
        """``GET /subjects/{s}/versions``: the live version numbers, ascending; None when the
        subject does not exist."""
        try:
            return self.client.list_versions(subject)
        except RegistryError as err:
            if is_missing_subject(err):
                return None
            raise

    def versions(self, subject: str, numbers: Iterable[int] | None = None) -> list[RegistryVersion]:
        """Every live version of ``subject`` (or those ``numbers``), oldest first, unresolved;
        empty when the subject does not exist."""
        if numbers is None:
            numbers = self.version_numbers(subject) or []
        return [self.version(subject, n) for n in numbers]

    def by_id(self, schema_id: int) -> RegistryVersion:
        """``GET /schemas/ids/{id}``, unresolved, once per run."""

        def fetch() -> RegistryVersion:
            return _from_id(self.client.get_schema(schema_id))

        return self._once(("id", schema_id, None), fetch)

    def registrations(self, schema_id: int) -> list[SubjectVersionRef]:
        """``GET /schemas/ids/{id}/versions``: where ``schema_id`` is registered (subject,
        version), once per run; empty when the registry does not know the id."""

        def fetch() -> list[SubjectVersionRef]:
            try:
                return self.client.get_schema_versions(schema_id)
            except RegistryError as err:
                if err.status == 404:  # 40403: schema not found
                    return []
                raise

        return self._once(("registrations", schema_id, None), fetch)

    # ---- self-contained schemas ------------------------------------------------------------

    def schema(self, subject: str, version: Version = "latest") -> RegistrySchema:
        """THE subject version, self-contained (see :class:`RegistrySchema`).

        Raises RegistryError (exit 3): the registry cannot answer, the version or a referenced
        one does not exist, the schema is not Avro, is not valid Avro, or its references form a
        cycle or nest deeper than MAX_REFERENCE_DEPTH.
        """
        return self.resolve(self.version(subject, version))

    def schema_by_id(self, schema_id: int) -> RegistrySchema:
        """The writer schema of records framed with ``schema_id``, self-contained."""
        return self.resolve(self.by_id(schema_id))

    def writers(self, subject: str) -> dict[int, RegistrySchema]:
        """THE writer schemas of ``subject``: every live version, self-contained, by id (oldest
        first). A subject that does not exist is the registry's error (40401)."""
        numbers = self.client.list_versions(subject)
        return {s.id: s for s in (self.resolve(v) for v in self.versions(subject, numbers))}

    def history(self, subject: str) -> tuple[LoadedSchema, ...]:
        """The subject's live versions as the compatibility engine reads them (oldest first,
        source ``subject:vN``, positions in the registry's text)."""
        return tuple(self.resolve(v).loaded for v in self.versions(subject))

    def candidate(
        self, text: str, source: str, references: Sequence[Reference] = ()
    ) -> LoadedSchema:
        """A schema of the user's (``register``, ``check --registry``) whose named types come
        from the registry's ``references``: parsed with them, as the registry will parse it.
        Raises InputError / SchemaParseError (the user's text, exit 2), RegistryError (a
        reference the registry cannot give, exit 3)."""
        deps = tuple(self._reference(ref, source, (source,)) for ref in references)
        names = _names(deps)
        loaded = load_schema_text(text, source, names=names or None)
        return replace(loaded, references=tuple(d.loaded for d in deps), names=names)

    def resolve(self, version: RegistryVersion) -> RegistrySchema:
        """``version`` with its references resolved (see :meth:`schema`)."""
        return self._resolve(version, ())

    def _resolve(self, version: RegistryVersion, chain: tuple[str, ...]) -> RegistrySchema:
        key = _key(version)
        with self._lock:
            done, below = self._resolved.get(key), self._depth.get(key, 0)
        if done is not None:
            if chain and len(chain) + below > MAX_REFERENCE_DEPTH:  # known, but now deeper
                raise _too_deep(chain, version.source)
            return done
        chain = (*chain, version.source)
        if version.schema_type != "AVRO":
            raise RegistryError(
                f"The registry at {self.client.settings.display_url} holds a "
                f"{version.schema_type} schema at {version.source}; schemacli reads Avro only.",
                location=Location(source=version.source),
                hint="Point it at an Avro subject.",
            )
        deps = tuple(self._reference(ref, version.source, chain) for ref in version.references)
        names = _names(deps)
        try:
            loaded = load_schema_text(
                version._text, version.source, version=version.version, names=names or None
            )
        except SchemacliError as err:
            raise unreadable_registry_schema(self.client, version.source, err) from err
        resolved = RegistrySchema(
            version, replace(loaded, references=tuple(d.loaded for d in deps), names=names)
        )
        try:
            resolved.value  # noqa: B018  # inlining fails here, not later in a reader
        except InputError as err:
            raise unreadable_registry_schema(self.client, version.source, err) from err
        with self._lock:
            self._resolved.setdefault(key, resolved)
            self._depth[key] = max(
                (1 + self._depth.get(_key(d.version), 0) for d in deps), default=0
            )
        return resolved

    def _reference(self, ref: Reference, what: str, chain: tuple[str, ...]) -> RegistrySchema:
        target = f"{ref.subject}:v{ref.version}"
        if target in chain:
            cycle = " -> ".join((*chain[chain.index(target) :], target))
            raise RegistryError(
                f"The references of {chain[0]} form a cycle: {cycle}.",
                location=Location(source=chain[0]),
                hint="A schema cannot reference itself, directly or through others; fix the "
                "references of the subjects named.",
            )
        if len(chain) > MAX_REFERENCE_DEPTH:
            raise _too_deep(chain, target)
        try:
            found = self.version(ref.subject, ref.version)
        except RegistryError as err:
            if err.status != 404:
                raise
            raise RegistryError(
                f"{what} references {ref.name} in {ref.subject} version {ref.version}, which "
                f"the registry at {self.client.settings.display_url} does not have.",
                status=err.status,
                error_code=err.error_code,
                server_message=err.server_message,
                location=Location(source=what),
                hint="Register that version, or fix the reference (name, subject, version).",
            ) from err
        return self._resolve(found, chain)

    # ---- many at once ------------------------------------------------------------------------

    def map(self, work: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """``work(item)`` for every item, in order, with at most ``settings.concurrency`` of
        them running at once (each makes its own requests; the answers are shared). ``items``
        is consumed as the work is handed out, so a generator that prepares each item (reading
        the store, say) runs while the first items' requests are in flight. Yields the results
        in the items' order; the first error (in that order) is raised and the work not yet
        started is cancelled.

        Closed before its end (a caller that stopped reading, say on an error of its own), it
        cancels the work not yet started and returns without waiting for the requests in
        flight: an abandoned generator is closed by the garbage collector, in whatever thread
        it runs and wherever, inside threading's own locks too (a thread's start), where
        joining the workers deadlocked the process."""
        workers = self.client.settings.concurrency
        if workers <= 1:
            yield from (work(item) for item in items)
            return
        pool = ThreadPoolExecutor(workers, thread_name_prefix="registry")
        futures: list[Future[R]] = []
        wait = True
        try:
            futures.extend(pool.submit(work, item) for item in items)
            for future in futures:
                yield future.result()
        except GeneratorExit:
            wait = False
            raise
        finally:
            for future in futures:
                future.cancel()
            pool.shutdown(wait=wait, cancel_futures=True)


def unreadable_registry_schema(
    client: RegistryClient, source: str, err: SchemacliError
) -> RegistryError:
    """A RegistryError for a schema the registry holds at ``source`` (``subject:vN``) that is not
    valid Avro: the registry's data is at fault, so exit 3, never the input-error exit 2."""
    where = f" at {err.location}" if err.location is not None else ""
    subject, _, number = source.rpartition(":v")
    inspect = (
        f"Inspect it with `schemacli subjects show {subject} --version {number}`; "
        if subject
        else ""
    )
    return RegistryError(
        f"The registry at {client.settings.display_url} holds a schema at {source} that is not "
        f"valid Avro{where}: {err.message}",
        location=Location(source=source),
        hint=f"{inspect}the registry's history must be repaired (or that version deleted) "
        "before schemas can be read from it.",
    )


def _key(version: RegistryVersion) -> tuple[Any, ...]:
    """What a resolved schema is kept under: its subject version, else its id."""
    return (version.subject, version.version) if version.subject else ("id", version.id)


def _too_deep(chain: tuple[str, ...], target: str) -> RegistryError:
    return RegistryError(
        f"The references of {chain[0]} nest deeper than {MAX_REFERENCE_DEPTH} levels "
        f"(at {target}).",
        location=Location(source=chain[0]),
        hint="Check the references of the subjects involved.",
    )


def _names(deps: Iterable[RegistrySchema]) -> Names:
    """Every named type the referenced schemas ``deps`` define or see (the first definition of
    a name wins, as the registry's parser keeps it)."""
    names = Names()
    for dep in deps:
        names = Names({**dep.loaded.names.types, **names.types}).including(dep.loaded.schema)
    return names


def _from_version(answer: SubjectVersion) -> RegistryVersion:
    return RegistryVersion(
        subject=answer.subject,
        version=answer.version,
        id=answer.id,
        schema_type=answer.schema_type,
        references=answer.references,
        _text=answer.schema,
        metadata=answer.metadata,
        rule_set=answer.rule_set,
    )


def _from_id(answer: SchemaById) -> RegistryVersion:
    return RegistryVersion(
        subject=None,
        version=None,
        id=answer.id,
        schema_type=answer.schema_type,
        references=answer.references,
        _text=answer.schema,
    )
