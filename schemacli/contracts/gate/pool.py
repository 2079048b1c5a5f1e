"""The gate's subjects checked in worker processes: the machine's cores for a big cold store.

A subject's row is a function of its own files, the store's names and the level, so subjects
are checked apart. ``subject_rows`` hands chunks of subjects to ``jobs`` forked workers, each
with the parent's trees and resolvers as they were at the fork, and gives the rows back in the
order asked (the document is the serial road's, byte for byte:
``tests/unit/test_gate_pool.py``). Each worker keeps its own bounded memos, so memory grows
with the workers, not with the store. Workers ignore Ctrl-C: the parent's KeyboardInterrupt
ends them (``Pool.terminate``) and the command's edge reports it once. An error a worker
cannot turn into a row (a ``SchemacliError`` other than an input error) comes back as a value
and is raised in the parent, where the edge renders every error.

Only the road that shares nothing between runs goes to the workers: no verdict cache on disk
(its row table is one file the parent writes), no base (a git tree's ``cat-file`` pipe is not
to be shared by two processes), and a platform that forks (elsewhere the road is serial).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar, cast

from schemacli.errors import SchemacliError

# A pool pays for itself above this many version files (a worker's start is ~10-50 ms; a
# version's check ~1 ms): smaller stores are checked in the parent.
MIN_VERSIONS = 2000
# Subjects per task: enough to make a task's round trip small beside its work, few enough that
# the workers finish together.
MAX_CHUNK = 32

R = TypeVar("R")

# The work of the current pool, set in the parent before the fork (the workers inherit it; it
# is never pickled).
_work: Callable[[str], object] | None = None


def default_jobs() -> int:
    """The processes a gate uses by default: the CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def forks() -> bool:
    """Whether worker processes can be forked here: on Linux (cheap, and they inherit the
    parent's state; elsewhere the gate stays in one process), from a process running one
    thread (a fork copies only the calling thread: a lock another thread holds, such as a
    stream's, would stay held in the child for ever)."""
    import multiprocessing  # ~8 ms: only for a store big enough to ask

    return (
        sys.platform.startswith("linux")
        and "fork" in multiprocessing.get_all_start_methods()
        and threading.active_count() == 1
    )


def pooled(jobs: int, versions: int) -> bool:
    """Whether a gate of ``versions`` version files is worth ``jobs`` processes."""
    return jobs > 1 and versions >= MIN_VERSIONS and forks()


def in_workers(work: Callable[[str], R], subjects: Sequence[str], jobs: int) -> list[R]:
    """``work(subject)`` for every subject, computed in ``jobs`` forked processes, in the order
    of ``subjects`` (in this process where :func:`forks` says no). A ``SchemacliError`` raised
    by ``work`` is raised here. A list, not a generator: a generator left suspended with its
    pool open would be closed by the garbage collector wherever it runs, and the pool's
    shutdown joins threads (closed inside threading's own locks, a suspended registry map
    deadlocked a CI run; schemacli/registry/schemas.py)."""
    global _work
    if not forks():
        return [work(subject) for subject in subjects]
    import multiprocessing

    chunk = max(1, min(MAX_CHUNK, len(subjects) // (jobs * 8)))
    chunks = [list(subjects[i : i + chunk]) for i in range(0, len(subjects), chunk)]
    _work = work
    out: list[R] = []
    try:
        context = multiprocessing.get_context("fork")
        with context.Pool(min(jobs, len(chunks)), initializer=_ignore_interrupts) as pool:
            for results in pool.imap(_run_chunk, chunks):
                for result in results:
                    if isinstance(result, _Raised):
                        raise result.error
                    out.append(cast(R, result))
    finally:
        _work = None
    return out


class _Raised:
    """An error a worker met, carried back to the parent to be raised there."""

    def __init__(self, error: SchemacliError) -> None:
        self.error = error


def _run_chunk(subjects: list[str]) -> list[object]:
    assert _work is not None, "the pool's work is set before the fork"
    out: list[object] = []
    for subject in subjects:
        try:
            out.append(_work(subject))
        except SchemacliError as err:
            out.append(_Raised(err))
            break  # the parent raises it: the rest of the chunk is not needed
    return out


def _ignore_interrupts() -> None:
    # Ctrl-C reaches the whole process group: the parent answers it, and ends the workers
    # (Pool.terminate's SIGTERM, whatever the parent had made of that signal).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
