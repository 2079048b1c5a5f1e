"""A census document (``schemacli topics census -o json``, format 1: docs/census.md) read for the
site: bounded, parsed with positions, and checked as far as the chart reads it, so a bad file
is refused naming its line:col rather than drawn wrong.

The document itself is what the page embeds (as a JSON data element) and what its chart draws
from: this module only says which subjects it concerns and that the fields the chart uses have
the types the format promises.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemacli.contracts.jsontext.document import Document
from schemacli.contracts.jsontext.source import read_json_file
from schemacli.errors import InputError
from schemacli.textfile import DOCUMENT_LIMIT, UnreadableInput

FORMAT = 1
SIDES = ("keys", "values")
_HINT = (
    "pass the JSON that `schemacli topics census TOPIC -b HOST:PORT -o json` writes "
    "(docs/census.md)"
)


class CensusFileError(InputError):
    """A census file that cannot be read, or is not a census document of a known format."""


@dataclass(frozen=True)
class Census:
    source: str
    topic: str
    data: Any  # the document, as parsed

    def subjects(self) -> tuple[str, ...]:
        """The subjects the census names (its versions' subjects), and the topic's own subjects
        by TopicNameStrategy (``<topic>-key``, ``<topic>-value``), which unknown ids belong to."""
        found = {f"{self.topic}-key", f"{self.topic}-value"}
        for side in SIDES:
            for entry in self.data[side]["versions"]:
                if isinstance(entry.get("subject"), str):
                    found.add(entry["subject"])
        return tuple(sorted(found))


def read_census(path: Path) -> Census:
    """Read and check one census file. Raises CensusFileError (file, line:col, hint)."""
    try:
        document = read_json_file(
            path, limit=DOCUMENT_LIMIT, what="census file", hint=_HINT, error=CensusFileError
        )
    except UnreadableInput as err:
        raise CensusFileError(
            f"cannot read the census: {err.message}", location=err.location, hint=_HINT
        ) from err
    _check(document)
    return Census(document.source, document.value["topic"], document.value)


def _check(document: Document) -> None:
    value = document.value
    _expect(document, "", value, dict, "an object")
    if type(value.get("census_format")) is not int or value["census_format"] != FORMAT:
        _bad(
            document,
            "/census_format" if "census_format" in value else "",
            f"census_format is {_shown(value.get('census_format'))}; this schemacli reads format "
            f"{FORMAT}",
        )
    _expect(document, "/topic", value.get("topic"), str, "a topic name")
    parts = value.get("partitions")
    _expect(document, "/partitions", parts, list, "an array")
    for i, part in enumerate(parts):
        where = f"/partitions/{i}"
        _expect(document, where, part, dict, "an object")
        for key in ("partition", "low", "high"):
            _whole(document, f"{where}/{key}", part.get(key))
    for side in SIDES:
        block = value.get(side)
        _expect(document, f"/{side}", block, dict, "an object (a side: docs/census.md)")
        versions = block.get("versions")
        _expect(document, f"/{side}/versions", versions, list, "an array")
        for i, entry in enumerate(versions):
            where = f"/{side}/versions/{i}"
            _expect(document, where, entry, dict, "an object")
            _whole(document, f"{where}/id", entry.get("id"))
            _whole(document, f"{where}/count", entry.get("count"))
            if entry.get("subject") is not None:
                _expect(document, f"{where}/subject", entry.get("subject"), str, "a string")
            if entry.get("version") is not None:
                _whole(document, f"{where}/version", entry.get("version"))
            ranges = entry.get("partitions")
            _expect(document, f"{where}/partitions", ranges, list, "an array")
            for j, span in enumerate(ranges):
                at = f"{where}/partitions/{j}"
                _expect(document, at, span, dict, "an object")
                for key in ("partition", "count", "first_offset", "last_offset"):
                    _whole(document, f"{at}/{key}", span.get(key))
                for key in ("first_timestamp_ms", "last_timestamp_ms"):
                    if span.get(key) is not None:
                        _whole(document, f"{at}/{key}", span.get(key))


def _whole(document: Document, pointer: str, value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        _bad(
            document,
            pointer,
            f"{pointer.rsplit('/', 1)[-1]} is {_shown(value)}, not a whole number",
        )


def _expect(document: Document, pointer: str, value: Any, kind: type, what: str) -> None:
    if not isinstance(value, kind):
        _bad(document, pointer, f"{pointer or 'the document'} is {_shown(value)}, not {what}")


def _shown(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False) if value is not None else "missing or null"
    return text if len(text) <= 40 else text[:37] + "..."


def _bad(document: Document, pointer: str, message: str) -> None:
    # the nearest existing value: a missing member is placed at its object
    raise CensusFileError(
        f"not a census document: {message}",
        location=document.location(pointer),
        hint=_HINT,
    )
