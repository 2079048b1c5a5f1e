"""Bad mapping input is refused clearly, with file:line:col: YAML the loader must not expand or
recurse into, names that would be paths or loops, values JSON cannot carry."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from converters.mapping.reader import load, loads
from schemacli.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
GOOD = (ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml").read_text()


def error(text: str) -> InputError:
    with pytest.raises(InputError) as caught:
        loads(text, source="m.yaml")
    assert caught.value.location.source == "m.yaml"
    return caught.value


def test_yaml_nested_deeper_than_java_reads_is_refused_not_a_recursion_error():
    err = error(GOOD + "x: " + "[" * 20000 + "]" * 20000 + "\n")
    assert "nested more than 1000 levels" in err.message and err.location.line is not None


@pytest.mark.parametrize(
    "number", ["9" * 5000, "1" * 5000 + ".5", "-" + "7" * 1001, "1.0e+" + "9" * 1001]
)
def test_a_number_longer_than_java_reads_is_refused_not_a_value_error(number):
    err = error(GOOD + f"x: {number}\n")
    assert "digits; Apache Avro Java (Jackson) reads at most 1000" in err.message
    assert err.location.line is not None


def test_an_alias_bomb_is_refused_quickly():
    bomb = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        bomb += f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]\n"
    assert "expands to more than" in error(bomb).message


def test_a_recursive_alias_is_refused():
    assert "cycle" in error("a: &a [*a]\n").message


def test_ordinary_anchors_and_aliases_still_work():
    text = GOOD.replace("{from: vendorId, convert: copy}", "&copy {from: vendorId, convert: copy}")
    assert loads(text).rule("vendorId").source == "vendorId"


def test_a_complex_key_is_refused_at_its_line():
    err = error(GOOD + "  ? [a, b]\n  : {from: vendorId}\n")
    assert "plain name" in err.message and err.location.pointer == "/fields"


@pytest.mark.parametrize("tag", ["!!python/object:os.system", "!!binary", "!!set", "!custom"])
def test_yaml_tags_are_refused_not_dropped(tag):
    err = error(GOOD.replace("{from: vendorId, convert: copy}", f"{tag} {{from: vendorId}}"))
    assert "unsupported YAML tag" in err.message and err.location.pointer == "/fields/vendorId"


def test_a_date_is_shown_as_written():
    err = error(GOOD.replace("on_error: fail", "on_error: 2024-01-01", 1))
    assert "'2024-01-01'" in err.message and "datetime" not in err.message


def test_a_missing_format_version_is_named_missing():
    err = error(GOOD.replace("version: 1\n", "", 1))
    assert err.message == "the mapping format version is missing"
    assert "version: 1" in err.hint


def test_expr_on_a_conversion_other_than_sql_is_refused():
    err = error(
        GOOD.replace(
            "{from: vendorId, convert: copy}", "{from: vendorId, expr: x + 1, convert: copy}"
        )
    )
    assert err.location.pointer == "/fields/vendorId/expr" and "convert: sql" in err.message


@pytest.mark.parametrize(
    "topic", ["../../../escaped", "a b", "x'\\\"\\n$(id)", ".", "..", "t" * 250, "a/b"]
)
def test_topics_are_held_to_kafkas_naming_rule(topic):
    err = error(GOOD.replace("topic: taxi-rides-v2\n", f'topic: "{topic}"\n', 1))
    assert "invalid topic name" in err.message and err.location.pointer == "/source/topic"
    assert err.location.line is not None


def test_a_dead_letter_topic_equal_to_the_source_topic_is_a_loop():
    err = error(
        GOOD.replace(
            "dead_letter_topic: taxi-rides-v2.dead-letter", "dead_letter_topic: taxi-rides-v2"
        )
    )
    assert err.location.pointer == "/dead_letter_topic" and "forever" in err.message


def test_a_v1_topic_equal_to_the_v2_topic_is_a_loop():
    err = error(GOOD.replace("topic: taxi-rides\n", "topic: taxi-rides-v2\n"))
    assert err.location.pointer == "/target/topic" and "read what it writes" in err.message


def test_a_version_beyond_the_registrys_range_is_refused():
    err = error(GOOD.replace("  version: 1\n", "  version: 99999999999999999999999\n"))
    assert err.location.pointer == "/target/version"


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_non_finite_defaults_are_refused(value):
    err = error(
        GOOD.replace("{from: vendorId, convert: copy}", f"{{convert: default, default: {value}}}")
    )
    assert "NaN or Infinity" in err.message and err.location.pointer == "/fields/vendorId/default"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_as_not_a_regular_file(tmp_path: Path):
    fifo = tmp_path / "m.yaml"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        load(fifo)
