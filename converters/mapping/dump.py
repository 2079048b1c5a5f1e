"""A mapping written back as its YAML file (``migrate plan``) or as plain data (the resolved
mapping ``deploy`` ships, schemas inline)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from enum import StrEnum
from typing import Any

from converters.mapping.model import Endpoint, Mapping, Rule, _written


def to_dict(
    mapping: Mapping,
    *,
    inline_schemas: bool = False,
    inline: tuple[bool, bool] = (False, False),
    key_inline: tuple[bool, bool] = (False, False),
) -> dict[str, Any]:
    """The mapping as plain data in the file format, derived from the dataclasses' fields (see
    ``_written``). ``inline_schemas`` embeds ``schema_json`` for every side; ``inline`` /
    ``key_inline`` per side of the value / key, for schemas that came from the registry."""
    embed = {
        "/source": inline[0],
        "/target": inline[1],
        "/key/source": key_inline[0],
        "/key/target": key_inline[1],
    }
    return _fields(mapping, "", lambda pointer: inline_schemas or embed.get(pointer, False))


def _dump(obj: Any, pointer: str, embed: Callable[[str], bool]) -> Any:
    """A dataclass of the mapping as file data: each written field under its key, rules as
    ``{target: rule}``, enums as their value."""
    if isinstance(obj, tuple) and all(isinstance(r, Rule) for r in obj):  # the rules
        return {r.target: _dump(r, f"{pointer}/{r.target}", embed) for r in obj}
    if isinstance(obj, StrEnum):
        return obj.value
    if not isinstance(obj, (Mapping, Endpoint, Rule)):
        return obj
    return _fields(obj, pointer, embed)


def _fields(
    obj: Mapping | Endpoint | Rule, pointer: str, embed: Callable[[str], bool]
) -> dict[str, Any]:
    """One dataclass of the mapping: each written field under its key."""
    out: dict[str, Any] = {}
    for f in fields(obj):
        spec = f.metadata or _written()
        value = getattr(obj, f.name)
        if spec.get("skip") or (spec["top_only"] and pointer):
            continue
        written = spec["when"](obj) if spec["when"] else value is not None
        if not written or (spec["inline"] and not embed(pointer)):
            continue
        key = spec["key"] or f.name
        out[key] = _dump(value, f"{pointer}/{key}", embed)
    return out


def dumps(
    mapping: Mapping,
    *,
    header: str | None = None,
    inline: tuple[bool, bool] = (False, False),
    key_inline: tuple[bool, bool] = (False, False),
) -> str:
    """YAML text of ``mapping``: block style, but one flow line per field rule, in v1 field order
    (the key's last)."""
    import yaml

    def block(data: dict[str, Any], indent: str) -> list[str]:
        rules = data.pop("fields")
        text = yaml.safe_dump(data, sort_keys=False, default_flow_style=False, width=100)
        return [indent + line for line in text.rstrip().splitlines()] + [
            f"{indent}fields:",
            *_rule_lines(rules, indent + "  "),
        ]

    data = to_dict(mapping, inline=inline, key_inline=key_inline)
    key = data.pop("key", None)
    lines = [f"# {line}".rstrip() for line in (header or "").splitlines()]
    lines += block(data, "")
    if key is not None:
        lines += ["key:", *block(key, "  ")]
    return "\n".join(lines) + "\n"


def _rule_lines(rules: dict[str, Any], indent: str) -> list[str]:
    import yaml

    lines = []
    for target, spec in rules.items():
        flow = yaml.safe_dump(spec, default_flow_style=True, sort_keys=False, width=10_000).strip()
        key = yaml.safe_dump(target, default_flow_style=True).strip().removesuffix("\n...").strip()
        lines.append(f"{indent}{key}: {flow}")
    return lines
