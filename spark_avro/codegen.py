"""Write a standalone PySpark reader module for one subject: schemas embedded, no schemacli import.

The module is ``templates/reader_module.py.tmpl`` filled in, with the body of
``spark_avro/decode.py`` copied in after its ``codegen: begin`` marker, so the generated reader
and ``spark_avro.read_topic`` decode with the very same code. The output is ruff-clean and laid
out as ``ruff format`` would (tests check both).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Any

from spark_avro.compat import incompatible_writers

CODEGEN_MARKER = "# --- codegen: begin ---\n"
DEFAULT_SPARK_VERSION = "4.0.1"
LINE_LENGTH = 100


@dataclass(frozen=True)
class WriterVersion:
    """One registered version of the subject: its registry id, version and schema (parsed JSON)."""

    schema_id: int
    version: int
    schema: Any


@dataclass(frozen=True)
class ReaderModuleSpec:
    """Everything the generated module embeds; ``reader_version`` must be one of ``writers``."""

    subject: str
    topic: str
    writers: tuple[WriterVersion, ...]
    reader_version: int
    streaming: bool = False
    module_file: str = "reader.py"
    spark_version: str = DEFAULT_SPARK_VERSION

    @property
    def reader(self) -> WriterVersion:
        for writer in self.writers:
            if writer.version == self.reader_version:
                return writer
        raise ValueError(f"reader version {self.reader_version} is not among the writer versions")


def render_reader_module(spec: ReaderModuleSpec) -> str:
    """The source text of the reader module for ``spec``."""
    writers = sorted(spec.writers, key=lambda w: w.schema_id)
    reader = spec.reader
    constants = []
    for writer in sorted(spec.writers, key=lambda w: w.version):
        name = _constant_name(writer)
        constants.append(
            f"# Version {writer.version} of {_doc_text(spec.subject)}, "
            f"registry id {writer.schema_id}.\n"
            f"{name} = {python_literal(writer.schema, indent=0, prefix=len(name) + 3)}\n"
        )
    entries = "\n".join(
        f"    {w.schema_id}: json.dumps({_constant_name(w)}),  # version {w.version}"
        for w in writers
    )
    ids = ", ".join(str(w.schema_id) for w in writers)
    unreadable = incompatible_writers(
        {w.schema_id: json.dumps(w.schema) for w in writers}, json.dumps(reader.schema)
    )
    incompatible = "{}"
    if unreadable:
        lines = [
            f"    {schema_id}: {python_literal(text, indent=4, prefix=len(str(schema_id)) + 2)},"
            for schema_id, text in sorted(unreadable.items())
        ]
        incompatible = "{\n" + "\n".join(lines) + "\n}"
    fields = dict(
        topic_repr=_string(spec.topic),
        subject_repr=_string(spec.subject),
        topic=_doc_text(spec.topic),
        subject=_doc_text(spec.subject),
        spark_version=spec.spark_version,
        writer_summary=f"ids {ids}" if len(writers) > 1 else f"id {ids}",
        reader_summary=f"version {reader.version} (id {reader.schema_id})",
        module_file=_doc_text(spec.module_file),
        streaming=str(spec.streaming),
        schema_constants="\n".join(constants).rstrip("\n"),
        writer_entries=entries,
        reader_constant=_constant_name(reader),
        incompatible_entries=incompatible,
        decode_body=decode_body(),
    )
    return Template(_template()).substitute(fields)


def decode_body() -> str:
    """The part of ``spark_avro/decode.py`` after its codegen marker."""
    text = resources.files("spark_avro").joinpath("decode.py").read_text(encoding="utf-8")
    _, marker, body = text.partition(CODEGEN_MARKER)
    if not marker:
        raise RuntimeError("spark_avro/decode.py lost its codegen marker")
    return body.rstrip("\n") + "\n"


def _template() -> str:
    path = resources.files("spark_avro").joinpath("templates", "reader_module.py.tmpl")
    return path.read_text(encoding="utf-8")


def _constant_name(writer: WriterVersion) -> str:
    return f"SCHEMA_V{writer.version}"


def _doc_text(text: str) -> str:
    """``text`` as written in the module's docstring and comments: as is if plain, else quoted
    with escapes (a subject may hold quotes, backslashes or line breaks)."""
    return text if _PLAIN.fullmatch(text) else json.dumps(text)


_PLAIN = re.compile(r"[\w.:/@+ -]+", re.ASCII)


def _string(text: str) -> str:
    # JSON string escapes are all valid Python escapes; double quotes as ruff format writes them.
    return json.dumps(text)


_SPLIT_AT = re.compile(r"(?<= )")


def python_literal(value: Any, *, indent: int, prefix: int = 0) -> str:
    """``value`` (parsed JSON) as a Python literal laid out like ``ruff format`` would.

    ``indent`` is the column of the line the literal starts on, ``prefix`` how many characters
    precede it on that line. Long strings are split into implicitly concatenated parts.
    """
    flat = _flat(value)
    if indent + prefix + len(flat) + 1 <= LINE_LENGTH:  # +1 for a trailing comma or bracket
        return flat
    pad = " " * (indent + 4)
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            head = f"{_string(key)}: "
            items.append(f"{pad}{head}{python_literal(item, indent=indent + 4, prefix=len(head))},")
        return "{\n" + "\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(value, list):
        items = [f"{pad}{python_literal(item, indent=indent + 4)}," for item in value]
        return "[\n" + "\n".join(items) + "\n" + " " * indent + "]"
    if isinstance(value, str):
        width = LINE_LENGTH - indent - 4 - 2
        parts, current = [], ""
        for word in _SPLIT_AT.split(value):
            if current and len(_string(current + word)) > width:
                parts.append(current)
                current = ""
            current += word
        parts.append(current)
        if len(parts) == 1:
            return flat
        body = "\n".join(f"{pad}{_string(part)}" for part in parts)
        return "(\n" + body + "\n" + " " * indent + ")"
    return flat


def _flat(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_string(k)}: {_flat(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flat(v) for v in value) + "]"
    if isinstance(value, str):
        return _string(value)
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        return repr(value)
    return str(value)
