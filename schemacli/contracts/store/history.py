"""A subject's history: its version files, oldest first, without gaps, and parsed."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from schemacli.contracts.avro.loader import LoadedSchema
from schemacli.contracts.store.references import References
from schemacli.contracts.store.tree import (
    SUBJECTS_DIR,
    StoreLayoutError,
    Tree,
    VersionFile,
    sidecar_path,
)
from schemacli.errors import Location

_GAPS_SHOWN = 5  # gaps listed in a message; the rest are counted


def read_versions(
    tree: Tree, subjects: dict[str, dict[int, str]], subject: str, *, deleted: Iterable[int] = ()
) -> list[VersionFile]:
    """A subject's version files, oldest first; InputError for a gap in the numbering.

    ``deleted``: numbers known to be gone (``gate --against`` reports them as deleted
    versions), which are not a gap.
    """
    numbered = version_paths(tree, subjects, subject, deleted=deleted)
    paths = [p for _, p in numbered]
    texts = tree.read(paths)
    sidecars = tree.read([sidecar_path(p) for p in paths], optional=True)
    return [
        VersionFile(subject, n, tree.source(p), texts[p] or "", sidecars[sidecar_path(p)])
        for n, p in numbered
    ]


def version_paths(
    tree: Tree, subjects: dict[str, dict[int, str]], subject: str, *, deleted: Iterable[int] = ()
) -> list[tuple[int, str]]:
    """A subject's versions as (number, path), oldest first, without reading them;
    InputError for a gap in the numbering (``deleted``: as in :func:`read_versions`)."""
    versions = subjects.get(subject, {})
    numbers = sorted(versions)
    gaps = version_gaps(numbers, deleted)
    if gaps:
        shown = ", ".join(
            f"v{lo}" if lo == hi else f"v{lo}..v{hi}" for lo, hi in gaps[:_GAPS_SHOWN]
        )
        more = len(gaps) - _GAPS_SHOWN
        raise StoreLayoutError(
            f"subject {subject!r} has a gap in its versions: {shown} missing"
            + (f" (and {more} more gap(s))" if more > 0 else ""),
            location=Location(source=tree.source(f"{SUBJECTS_DIR}/{subject}")),
            hint="versions run v1, v2, ... without gaps; history is immutable, so restore the "
            "missing file rather than renumbering",
        )
    return [(n, versions[n]) for n in numbers]


def version_gaps(numbers: Sequence[int], deleted: Iterable[int] = ()) -> list[tuple[int, int]]:
    """The runs of numbers missing from 1..max(``numbers``), as (first, last) pairs, oldest
    first; ``deleted`` numbers are not missing. Costs the number of files, not the numbers'
    size (``v20251125.avsc`` alone is one gap, v1..v20251124)."""
    if not numbers:
        return []
    top = max(numbers)
    if top == len(numbers) and len(set(numbers)) == top and min(numbers) == 1:
        return []  # 1..top, each once: the usual history, no gap whatever was deleted
    present = sorted({*numbers, *(n for n in deleted if 0 < n <= top)})
    gaps = []
    previous = 0
    for n in present:
        if n > previous + 1:
            gaps.append((previous + 1, n - 1))
        previous = n
    return gaps


def load_history(tree: Tree, subject: str) -> tuple[LoadedSchema, ...]:
    """The subject's parsed versions, oldest first (empty if the subject has none)."""
    subjects = tree.subjects()
    resolver = References(tree, subjects)
    return tuple(resolver.load(v) for v in read_versions(tree, subjects, subject))
