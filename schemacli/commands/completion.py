"""Values the shell can complete (``schemacli --install-completion`` for bash, zsh and fish).

Output formats complete by themselves (they are choices); levels and subjects are plain text
options parsed by us, so they get completers here (typer's ``autocompletion=``: it passes the
context and the text typed so far by their annotations). A completer never fails: a broken
config or a missing store completes nothing rather than printing an error into the shell.
"""

from __future__ import annotations

from pathlib import Path

import click


def complete_level(incomplete: str) -> list[str]:
    """Confluent's compatibility levels that start with what was typed (any case)."""
    from schemacli.contracts.levels import Level

    typed = incomplete.upper()
    return [level.value for level in Level if level.value.startswith(typed)]


def complete_subject(ctx: click.Context, incomplete: str) -> list[str]:
    """The subjects of the local store (its ``subjects/`` folders) that start with the text."""
    try:
        from schemacli.config import load_settings

        store = ctx.params.get("store") or load_settings().store
        subjects = Path(store) / "subjects"
        names = sorted(p.name for p in subjects.iterdir() if p.is_dir())
    except Exception:  # completion must never break the shell: nothing to offer
        return []
    return [name for name in names if name.startswith(incomplete)]
