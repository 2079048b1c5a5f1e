"""The converted-from header: one value carrying origin, position (the dedupe key) and timestamp."""

import pytest

from converters.pipeline.headers import MARKER_HEADER, Provenance, marker_value, parse_marker


def test_a_marker_value_reads_back_to_what_was_written():
    value = marker_value("taxi-rides-v2-value", "taxi-rides-v2", 1, 42, 1767225600000)
    assert value == b"taxi-rides-v2-value taxi-rides-v2/1/42 1767225600000"
    assert parse_marker(value) == Provenance(
        "taxi-rides-v2-value", "taxi-rides-v2", 1, 42, 1767225600000
    )


def test_the_dedupe_key_is_the_v2_topic_partition_and_offset():
    marker = parse_marker(b"taxi-rides-v2-value/3 taxi-rides-v2/0/7 1767225600000")
    assert (marker.origin, marker.dedupe_key) == ("taxi-rides-v2-value/3", "taxi-rides-v2/0/7")


def test_a_subject_with_spaces_and_slashes_still_splits_from_the_right():
    marker = parse_marker("my subject/with/slashes/2 a.b_c-d/12/345 -1")
    assert marker == Provenance("my subject/with/slashes/2", "a.b_c-d", 12, 345, -1)


def test_a_forwarded_tombstone_says_so_in_its_origin():
    assert parse_marker(b"tombstone t/0/1 5").origin == "tombstone"


@pytest.mark.parametrize(
    "value",
    [b"taxi-rides-v2-value/1", b"s/1 t/0/x 5", b"s/1 t/0/1", b"s/1 t/1 5", b"s/1 t/0/1 soon", b""],
)
def test_a_value_that_is_not_a_marker_is_refused_with_the_expected_shape(value):
    with pytest.raises(ValueError, match=MARKER_HEADER) as info:
        parse_marker(value)
    assert "<topic>/<partition>/<offset>" in str(info.value)
