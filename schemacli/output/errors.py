"""Turn a SchemacliError into words for stderr. The one place errors become text."""

from __future__ import annotations

import dataclasses
import json

from schemacli.errors import RegistryError, SchemacliError


def error_text(err: SchemacliError) -> str:
    """``error: <where>: <what>`` then an optional ``hint:`` line. Never a traceback."""
    where = f"{err.location}: " if err.location is not None else ""
    lines = [f"error: {where}{err.message}"]
    server = err.server_message if isinstance(err, RegistryError) else None
    if server and server not in err.message:
        code = f" {err.error_code}" if err.error_code is not None else ""
        status = f"HTTP {err.status}" if err.status is not None else "registry"
        lines.append(f"  {status}{code}: {server}")
    if err.hint:
        lines.append(f"  hint: {err.hint}")
    return "\n".join(lines)


def error_json(err: SchemacliError) -> str:
    loc = err.location
    payload = {
        "error": {
            "type": type(err).__name__,
            "message": err.message,
            "hint": err.hint,
            "exit_code": int(err.exit_code),
            "location": None if loc is None else dataclasses.asdict(loc),
        }
    }
    if isinstance(err, RegistryError):
        payload["error"].update(
            status=err.status, error_code=err.error_code, server_message=err.server_message
        )
    return json.dumps(payload, indent=2)
