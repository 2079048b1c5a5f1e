"""How often the cyclic garbage collector runs in a schemacli process: a switch for the edge.

Parsing and checking schemas allocate many small objects that all stay alive until a subject
is done. With Python's default thresholds (700 allocations) the collector rescans them again and
again for nothing: on a long history it took half the gate's time. The library leaves the
collector alone (it is the process's, not ours); the CLI's entry point, which owns its
short-lived process, calls :func:`collect_rarely` once. Memory stays bounded: the collector still
runs, only less often.
"""

from __future__ import annotations

import gc

# Young-generation collections every 100,000 net allocations instead of 700; the older
# generations scale with it. Measured on the gate at 100 subjects x 100 versions (bench/README.md).
THRESHOLDS = (100_000, 50, 100)


def collect_rarely() -> None:
    """Set the process's collector to :data:`THRESHOLDS`."""
    gc.set_threshold(*THRESHOLDS)
