"""Options shared by several commands, declared once as ``Annotated`` aliases."""

from __future__ import annotations

import importlib.util
import math
from typing import TYPE_CHECKING, Annotated, Any

import click
import typer

from schemacli.errors import UsageError
from schemacli.output import OutputFormat, TextOrJson

# Where a command's --output is remembered in click's context, so the error edge (app.py) can
# render an error in the format asked for even when the error comes before the value is parsed.
OUTPUT_META_KEY = "schemacli.output"


def _remember_output(
    ctx: click.Context, value: OutputFormat | TextOrJson | None
) -> OutputFormat | TextOrJson | None:
    # Errors raised later are rendered by SchemacliGroup; it reads the format from ctx.meta.
    if value is not None:
        ctx.meta[OUTPUT_META_KEY] = value.value
    return value


Output = Annotated[
    OutputFormat,
    typer.Option(
        "--output",
        "-o",
        help="Result format: text for people; json for machines; junit / github for CI reports; "
        "sarif for code scanning; gitlab for GitLab code quality.",
        callback=_remember_output,
        case_sensitive=False,
    ),
]

# Commands whose result is not a list of findings: text or json only, so that junit / github
# are refused rather than silently answered with text.
JsonOutput = Annotated[
    TextOrJson,
    typer.Option(
        "--output",
        "-o",
        help="Result format: text for people; json for machines.",
        callback=_remember_output,
        case_sensitive=False,
    ),
]

Strict = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="Treat warnings (things Java accepts but other Avro readers refuse) as errors.",
    ),
]


if TYPE_CHECKING:
    # click 8.4+ types a ParamType by the value it converts to; older ones (the floor is 8.1)
    # cannot be subscripted at run time, so the type checker alone sees the argument.
    NumberParam = click.ParamType[int | float]
    TextParam = click.ParamType[str]
else:
    NumberParam = TextParam = click.ParamType


class Bounded(NumberParam):
    """A number flag: finite, within ``[low, high]`` (``low`` excluded when ``low_open``), or a
    usage error (exit 2) that names the flag, the value and the range.

    click's own FLOAT/INT ranges let ``nan`` through (it compares false with every bound) and take
    ``inf`` or ``1e300`` where no bound is set; then ``time.sleep`` or a deadline overflows deep
    in a command. Every flag that takes a duration, an interval, a window, a limit, a sample count
    or a timeout is parsed by this one type (``seconds`` and ``count`` below)."""

    def __init__(
        self, kind: type[int] | type[float], low: float, high: float, *, low_open: bool = False
    ) -> None:
        self.kind, self.low, self.high, self.low_open = kind, low, high, low_open
        self.name = "integer" if kind is int else "float"

    def range_text(self) -> str:
        low = f"{self.low:g}"
        high = str(int(self.high)) if self.kind is int else f"{self.high:g}"
        what = "a whole number" if self.kind is int else "a number"
        if self.low_open:
            return f"{what} more than {low} and at most {high}"
        return f"{what} from {low} to {high}"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> int | float:
        if isinstance(value, self.kind) and not isinstance(value, bool):
            number: int | float = value  # a default, or a value typer converted already
        else:
            text = str(value).strip()
            try:
                if len(text) > 40:  # int("9" * 5000) is slow and refused anyway
                    raise ValueError(text)
                if not text.isascii():  # int() reads "٢" (an Arabic-Indic two) as 2
                    raise ValueError(text)
                number = int(text, 10) if self.kind is int else float(text)
            except ValueError:
                self.fail(f"{str(value)[:40]!r} is not {self.range_text()}", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{str(value)[:40]!r} is not finite: give {self.range_text()}", param, ctx)
        below = number <= self.low if self.low_open else number < self.low
        if below or number > self.high:
            self.fail(f"{str(value)[:40]} is out of range: give {self.range_text()}", param, ctx)
        return number


def seconds(low: float, high: float, *, low_open: bool = False) -> Bounded:
    """A duration, interval, window or timeout flag, in seconds."""
    return Bounded(float, low, high, low_open=low_open)


def count(low: int, high: int) -> Bounded:
    """A limit or a sample count: a whole number."""
    return Bounded(int, low, high)


DAY = 86_400.0


EXTRAS = {"kafka": "confluent_kafka", "spark": "pyspark"}  # extra -> the module it brings


def require_extras(what: str, *extras: str) -> None:
    """A UsageError (exit 2) naming the extras ``what`` needs that are not installed, and how to
    install them; checked with the local checks, before anything is read from Kafka."""
    missing = [extra for extra in extras if importlib.util.find_spec(EXTRAS[extra]) is None]
    if missing:
        plural = "s" if len(missing) > 1 else ""
        raise UsageError(
            f"{what} needs the {' and '.join(missing)} extra{plural}, which the base install "
            "leaves out",
            hint=f"Install {'them' if plural else 'it'}: `scripts/bootstrap --all` in a "
            f"checkout, or `pip install 'schemacli[{','.join(missing)}]'`.",
        )
