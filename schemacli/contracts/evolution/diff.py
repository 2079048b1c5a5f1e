"""What changed between two versions of a schema, field by field, and the verdict at every level.

The walk compares the schemas' JSON the way Avro resolution pairs them: record fields by name
(or by a reader alias naming the writer's field), union branches by type name, named types by
full name. It describes; the verdicts come from the compatibility engine, never from here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from schemacli.contracts.avro.facts import NAMED_SPELLINGS, PRIMITIVE_TYPES
from schemacli.contracts.avro.loader import LoadedSchema, load_schema_text
from schemacli.contracts.evolution.check import check_candidate
from schemacli.contracts.evolution.levels import Level
from schemacli.contracts.evolution.verdicts import VerdictCache
from schemacli.contracts.findings import Finding
from schemacli.errors import Location

# The levels a diff reports; for a single pair, X_TRANSITIVE is the same as X.
DIFF_LEVELS = (Level.NONE, Level.BACKWARD, Level.FORWARD, Level.FULL)


@dataclass(frozen=True)
class Change:
    """One difference: its kind, where (in the new schema, or the old one for removals), values."""

    kind: str
    message: str
    location: Location
    old: Any = None
    new: Any = None


@dataclass(frozen=True)
class LevelVerdict:
    level: Level
    compatible: bool
    findings: tuple[Finding, ...]


@dataclass(frozen=True)
class SchemaDiff:
    """The changes from ``old`` to ``new`` and the compatibility verdict at each level."""

    old: str
    new: str
    changes: tuple[Change, ...]
    verdicts: tuple[LevelVerdict, ...]

    def verdict(self, level: Level) -> LevelVerdict:
        base = Level(level.value.removesuffix("_TRANSITIVE"))
        return next(v for v in self.verdicts if v.level is base)


def diff(old: LoadedSchema | str | Any, new: LoadedSchema | str | Any) -> SchemaDiff:
    """Compare two schemas (loaded, JSON text or parsed JSON).

    Returns the changes and the verdict at NONE, BACKWARD, FORWARD and FULL. Raises InputError
    (or SchemaParseError) if either schema is invalid.
    """
    old_s, new_s = _loaded(old, "old"), _loaded(new, "new")
    changes = tuple(_Walker(old_s, new_s).run())
    return SchemaDiff(old_s.source, new_s.source, changes, _verdicts(old_s, new_s))


def _verdicts(old: LoadedSchema, new: LoadedSchema) -> tuple[LevelVerdict, ...]:
    """The verdict at each of DIFF_LEVELS, checking each direction once.

    FULL is BACKWARD and FORWARD together (``levels``' table: BACKWARD's findings first); when
    both pass it reuses their (empty) verdicts, otherwise FULL is checked itself so that its
    findings' fixes are proven in both directions. NONE checks nothing and keeps only the
    notes about the JSON text, which every level's report starts with.
    """
    verdicts = VerdictCache(by_content=False)  # FULL asks the pairs BACKWARD and FORWARD did
    backward = check_candidate(new, [old], subject="", level=Level.BACKWARD, verdicts=verdicts)
    forward = check_candidate(new, [old], subject="", level=Level.FORWARD, verdicts=verdicts)
    none = check_candidate(new, [old], subject="", level=Level.NONE, verdicts=verdicts)
    notes = none.findings
    if backward.compatible and forward.compatible:
        full = notes  # nothing to fix: the fast path stays one check per direction
    else:  # each direction's fixes were proven for that direction: FULL's must hold for both
        full = check_candidate(new, [old], subject="", level=Level.FULL, verdicts=verdicts).findings
    return (
        LevelVerdict(Level.NONE, none.compatible, notes),
        LevelVerdict(Level.BACKWARD, backward.compatible, backward.findings),
        LevelVerdict(Level.FORWARD, forward.compatible, forward.findings),
        LevelVerdict(Level.FULL, backward.compatible and forward.compatible, full),
    )


def _loaded(value: Any, label: str) -> LoadedSchema:
    if isinstance(value, LoadedSchema):
        return value
    text = value if isinstance(value, str) else json.dumps(value, indent=2)
    return load_schema_text(text, f"<{label}>")


def _plain(node: Any) -> bool:
    """Whether the type ``node`` (JSON) is made of primitives only (with their attributes),
    through unions, arrays and maps: it defines and names no type, so the walk of two equal
    ones finds nothing and marks no named type as seen."""
    if isinstance(node, str):
        return node in PRIMITIVE_TYPES
    if isinstance(node, list):
        return all(_plain(branch) for branch in node)
    if isinstance(node, dict):
        kind = node.get("type")
        if kind == "array":
            return _plain(node.get("items"))
        if kind == "map":
            return _plain(node.get("values"))
        return isinstance(kind, str) and kind in PRIMITIVE_TYPES
    return False


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


class _Walker:
    def __init__(self, old: LoadedSchema, new: LoadedSchema) -> None:
        self.old, self.new = old, new
        self.seen: set[tuple[str, str]] = set()  # pairs of named types already compared

    def run(self) -> Iterator[Change]:
        yield from self.compare(self.old.value, self.new.value, "", "", None, None)

    # -- locations ---------------------------------------------------------------------------
    def at_new(self, pointer: str) -> Location:
        return self.new.location(pointer)

    def at_old(self, pointer: str) -> Location:
        return self.old.location(pointer)

    # -- type descriptions -------------------------------------------------------------------
    @staticmethod
    def full_name(node: dict[str, Any], namespace: str | None) -> str:
        name = str(node.get("name", ""))
        if "." in name:
            return name
        ns = node.get("namespace", namespace)
        return f"{ns}.{name}" if ns else name

    def describe(self, node: Any, namespace: str | None) -> str:
        """A short, comparable description: ``int``, ``com.x.Ride``, ``array<string>``, ..."""
        if isinstance(node, str):
            if node in PRIMITIVE_TYPES or "." in node or not namespace:
                return node
            return f"{namespace}.{node}"
        if isinstance(node, list):
            return "union[" + ", ".join(self.describe(b, namespace) for b in node) + "]"
        if isinstance(node, dict):
            kind = node.get("type")
            if kind in NAMED_SPELLINGS:
                return self.full_name(node, namespace)
            if kind == "array":
                return f"array<{self.describe(node.get('items'), namespace)}>"
            if kind == "map":
                return f"map<{self.describe(node.get('values'), namespace)}>"
            base = self.describe(kind, namespace)
            logical = node.get("logicalType")
            return f"{base} ({logical})" if logical else base
        return _show(node)

    @staticmethod
    def kind_of(node: Any) -> str:
        if isinstance(node, list):
            return "union"
        if isinstance(node, dict):
            kind = node.get("type")
            return "record" if kind == "error" else str(kind) if isinstance(kind, str) else "?"
        return "named" if isinstance(node, str) and node not in PRIMITIVE_TYPES else str(node)

    # -- the walk ----------------------------------------------------------------------------
    def compare(
        self, old: Any, new: Any, op: str, np: str, old_ns: str | None, new_ns: str | None
    ) -> Iterator[Change]:
        old_kind, new_kind = self.kind_of(old), self.kind_of(new)
        if old_kind == "union" and new_kind == "union":
            yield from self.union(old, new, op, np, old_ns, new_ns)
            return
        if old_kind != new_kind or old_kind in PRIMITIVE_TYPES or old_kind == "named":
            old_d, new_d = self.describe(old, old_ns), self.describe(new, new_ns)
            if old_d != new_d:
                yield Change(
                    "TYPE_CHANGED",
                    f"type changed from {old_d} to {new_d}",
                    self.at_new(np),
                    old_d,
                    new_d,
                )
            elif isinstance(old, dict) and isinstance(new, dict):
                yield from self.attributes(old, new, np, ("logicalType", "precision", "scale"))
            return
        if old_kind in ("record", "enum", "fixed"):
            old_name, new_name = self.full_name(old, old_ns), self.full_name(new, new_ns)
            if (old_name, new_name) in self.seen:
                return
            self.seen.add((old_name, new_name))
            if old_name != new_name:
                aliased = old_name in self.aliases(new, new_ns)
                yield Change(
                    "NAME_CHANGED",
                    f"{old_kind} renamed from {old_name} to {new_name}"
                    + (
                        " (the new name lists the old one in aliases)"
                        if aliased
                        else " without an alias for the old name"
                    ),
                    self.at_new(f"{np}/name"),
                    old_name,
                    new_name,
                )
            yield from self.attributes(old, new, np, ("doc", "aliases"))
            next_old_ns = old_name.rpartition(".")[0] or None
            next_new_ns = new_name.rpartition(".")[0] or None
            if old_kind == "record":
                yield from self.record(old, new, op, np, next_old_ns, next_new_ns)
            elif old_kind == "enum":
                yield from self.enum(old, new, np)
            else:
                yield from self.attributes(
                    old, new, np, ("size", "logicalType", "precision", "scale")
                )
            return
        if old_kind == "array":
            yield from self.compare(
                old.get("items"), new.get("items"), f"{op}/items", f"{np}/items", old_ns, new_ns
            )
        elif old_kind == "map":
            yield from self.compare(
                old.get("values"),
                new.get("values"),
                f"{op}/values",
                f"{np}/values",
                old_ns,
                new_ns,
            )

    def aliases(self, node: dict[str, Any], namespace: str | None) -> set[str]:
        ns = self.full_name(node, namespace).rpartition(".")[0]
        return {a if "." in a or not ns else f"{ns}.{a}" for a in node.get("aliases") or ()}

    def attributes(
        self, old: dict[str, Any], new: dict[str, Any], np: str, keys: tuple[str, ...]
    ) -> Iterator[Change]:
        for key in keys:
            if old.get(key) != new.get(key):
                what = "doc" if key == "doc" else key
                if key not in new:
                    yield Change(
                        f"{what.upper()}_REMOVED",
                        f"{what} removed (was {_show(old[key])})",
                        self.at_new(np),
                        old.get(key),
                        None,
                    )
                elif key not in old:
                    yield Change(
                        f"{what.upper()}_ADDED",
                        f"{what} added: {_show(new[key])}",
                        self.at_new(f"{np}/{key}"),
                        None,
                        new.get(key),
                    )
                else:
                    yield Change(
                        f"{what.upper()}_CHANGED",
                        f"{what} changed from {_show(old[key])} to {_show(new[key])}",
                        self.at_new(f"{np}/{key}"),
                        old.get(key),
                        new.get(key),
                    )

    def record(
        self,
        old: dict[str, Any],
        new: dict[str, Any],
        op: str,
        np: str,
        old_ns: str | None,
        new_ns: str | None,
    ) -> Iterator[Change]:
        old_fields = [f for f in old.get("fields") or () if isinstance(f, dict)]
        new_fields = [f for f in new.get("fields") or () if isinstance(f, dict)]
        by_name = {f.get("name"): i for i, f in enumerate(old_fields)}
        matched: set[int] = set()
        pairs: list[tuple[int | None, int]] = []
        for j, field in enumerate(new_fields):
            i = by_name.get(field.get("name"))
            if i is None:  # a reader alias naming the writer's field: Avro's rename
                i = next((by_name[a] for a in field.get("aliases") or () if a in by_name), None)
                if i in matched:
                    i = None
            if i is not None:
                matched.add(i)
            pairs.append((i, j))
        for i, f in enumerate(old_fields):
            if i not in matched:
                default = f" (it had default {_show(f['default'])})" if "default" in f else ""
                yield Change(
                    "FIELD_REMOVED",
                    f"field {f.get('name')!r} removed{default}",
                    self.at_old(f"{op}/fields/{i}"),
                    f.get("name"),
                    None,
                )
        same_space = old_ns == new_ns
        for i, j in pairs:
            nf = new_fields[j]
            if i is not None and same_space and old_fields[i] == nf and _plain(nf.get("type")):
                continue  # the same field, naming no type: nothing to tell (a wide record's most)
            fp = f"{np}/fields/{j}"
            name = nf.get("name")
            if i is None:
                default = f", default {_show(nf['default'])}" if "default" in nf else ", no default"
                yield Change(
                    "FIELD_ADDED",
                    f"field {name!r} added (type {self.describe(nf.get('type'), new_ns)}{default})",
                    self.at_new(fp),
                    None,
                    name,
                )
                continue
            of = old_fields[i]
            ofp = f"{op}/fields/{i}"
            if of.get("name") != name:
                yield Change(
                    "FIELD_RENAMED",
                    f"field {of.get('name')!r} renamed to {name!r} (alias {of.get('name')!r})",
                    self.at_new(f"{fp}/name"),
                    of.get("name"),
                    name,
                )
            for change in self.compare(
                of.get("type"), nf.get("type"), f"{ofp}/type", f"{fp}/type", old_ns, new_ns
            ):
                yield Change(
                    change.kind,
                    f"field {name!r}: {change.message}",
                    change.location,
                    change.old,
                    change.new,
                )
            yield from self.field_attributes(of, nf, fp, name)

    def field_attributes(
        self, of: dict[str, Any], nf: dict[str, Any], fp: str, name: object
    ) -> Iterator[Change]:
        for key, label in (
            ("default", "default"),
            ("doc", "doc"),
            ("aliases", "aliases"),
            ("order", "order"),
        ):
            if of.get(key, _MISSING) == nf.get(key, _MISSING):
                continue
            if key not in nf:
                kind, text = "REMOVED", f"{label} removed (was {_show(of[key])})"
                where = self.at_new(fp)
            elif key not in of:
                kind, text = "ADDED", f"{label} added: {_show(nf[key])}"
                where = self.at_new(f"{fp}/{key}")
            else:
                kind, text = "CHANGED", f"{label} changed from {_show(of[key])} to {_show(nf[key])}"
                where = self.at_new(f"{fp}/{key}")
            yield Change(
                f"{label.upper()}_{kind}",
                f"field {name!r}: {text}",
                where,
                of.get(key),
                nf.get(key),
            )

    def enum(self, old: dict[str, Any], new: dict[str, Any], np: str) -> Iterator[Change]:
        old_symbols = list(old.get("symbols") or ())
        new_symbols = list(new.get("symbols") or ())
        added = [s for s in new_symbols if s not in old_symbols]
        removed = [s for s in old_symbols if s not in new_symbols]
        if added:
            yield Change(
                "ENUM_SYMBOLS_ADDED",
                f"enum symbols added: {', '.join(added)}",
                self.at_new(f"{np}/symbols"),
                None,
                added,
            )
        if removed:
            yield Change(
                "ENUM_SYMBOLS_REMOVED",
                f"enum symbols removed: {', '.join(removed)}",
                self.at_new(f"{np}/symbols"),
                removed,
                None,
            )
        yield from self.attributes(old, new, np, ("default",))

    def union(
        self,
        old: list[Any],
        new: list[Any],
        op: str,
        np: str,
        old_ns: str | None,
        new_ns: str | None,
    ) -> Iterator[Change]:
        old_desc = [self.branch_key(b, old_ns) for b in old]
        new_desc = [self.branch_key(b, new_ns) for b in new]
        # Position of each key's first branch: lookups by key, not scans (unions may be wide).
        old_at: dict[str, int] = {}
        for i, key in enumerate(old_desc):
            old_at.setdefault(key, i)
        new_keys = set(new_desc)
        for i, key in enumerate(old_desc):
            if key not in new_keys:
                yield Change(
                    "UNION_BRANCH_REMOVED",
                    f"union branch {self.describe(old[i], old_ns)} removed",
                    self.at_new(np),
                    self.describe(old[i], old_ns),
                    None,
                )
        for j, key in enumerate(new_desc):
            if key not in old_at:
                yield Change(
                    "UNION_BRANCH_ADDED",
                    f"union branch {self.describe(new[j], new_ns)} added",
                    self.at_new(f"{np}/{j}"),
                    None,
                    self.describe(new[j], new_ns),
                )
            else:
                i = old_at[key]
                yield from self.compare(old[i], new[j], f"{op}/{i}", f"{np}/{j}", old_ns, new_ns)
        if [k for k in old_desc if k in new_keys] != [k for k in new_desc if k in old_at]:
            yield Change(
                "UNION_BRANCHES_REORDERED",
                "union branches reordered (the first branch is the one a default must match)",
                self.at_new(np),
                [self.describe(b, old_ns) for b in old],
                [self.describe(b, new_ns) for b in new],
            )

    def branch_key(self, node: Any, namespace: str | None) -> str:
        # Branches pair by type name: records by full name, arrays/maps by kind, others by type.
        kind = self.kind_of(node)
        if kind in ("array", "map"):
            return kind
        if kind in ("record", "enum", "fixed"):
            return self.full_name(node, namespace)
        return self.describe(node, namespace).split(" (")[0]


_MISSING = object()
