"""Version numbers in the store's file names: bounded like a registry's (a Java int), gaps found
from the sorted list of files (costing the number of files, never the numbers' size), and a
store path naming its subject."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemacli.contracts.store.history import read_versions, version_gaps
from schemacli.contracts.store.naming import NamingStrategy, store_version, subject_for_file
from schemacli.contracts.store.tree import (
    MAX_VERSION,
    FileTree,
    StoreLayoutError,
    StoreLayoutErrors,
)


def test_gaps_are_ranges_of_the_missing_numbers():
    assert version_gaps([1, 2, 3]) == []
    assert version_gaps([1, 4, 5, 9]) == [(2, 3), (6, 8)]
    assert version_gaps([3]) == [(1, 2)]
    assert version_gaps([]) == []


def test_deleted_versions_are_no_gap():
    assert version_gaps([1, 5], deleted=[2, 3, 4]) == []
    assert version_gaps([1, 5], deleted=[3, 7]) == [(2, 2), (4, 4)]


def test_a_gap_to_the_largest_version_is_one_range():
    assert version_gaps([1, MAX_VERSION]) == [(2, MAX_VERSION - 1)]


def test_max_version_is_a_java_int():
    assert MAX_VERSION == 2**31 - 1


def _store(tmp_path: Path, *names: str) -> FileTree:
    folder = tmp_path / "subjects" / "s"
    folder.mkdir(parents=True)
    for name in names:
        (folder / name).write_text('"int"')
    return FileTree(tmp_path, display_root="store")


def test_a_version_past_a_java_int_is_a_layout_error_and_the_rest_is_listed(tmp_path):
    tree = _store(tmp_path, "v1.avsc", "v2147483648.avsc", "v" + "9" * 200 + ".avsc")
    with pytest.raises(StoreLayoutErrors) as caught:
        tree.subjects()
    problems = caught.value.problems
    assert len(problems) == 2 and all("past the largest version" in p.message for p in problems)
    assert all(len(p.message) < 200 for p in problems)  # a 200-digit name is shortened
    assert caught.value.index == {"s": {1: "subjects/s/v1.avsc"}}


def test_the_gap_message_lists_a_few_ranges_and_counts_the_rest(tmp_path):
    names = [f"v{n}.avsc" for n in range(1, 40, 3)]  # v1, v4, v7, ...: 12 gaps of two
    tree = _store(tmp_path, *names)
    with pytest.raises(StoreLayoutError) as caught:
        read_versions(tree, tree.subjects(), "s")
    message = caught.value.message
    assert message == (
        "subject 's' has a gap in its versions: v2..v3, v5..v6, v8..v9, v11..v12, v14..v15 "
        "missing (and 7 more gap(s))"
    )


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("schemas/subjects/taxi-rides-value/v2.avsc", ("taxi-rides-value", 2)),
        ("/abs/store/subjects/com.acme.Order/v10.avsc", ("com.acme.Order", 10)),
        ("schemas/subjects/s/v02.avsc", None),  # not a version file name
        ("schemas/subjects/s/notes.avsc", None),
        ("schemas/migration/v2.avsc", None),
        ("v2.avsc", None),
        ("-", None),
    ],
)
def test_a_store_path_names_its_subject_and_version(path, expected):
    assert store_version(Path(path)) == expected


def test_a_version_file_inside_a_subjects_folder_takes_the_folder_as_subject(tmp_path, monkeypatch):
    folder = tmp_path / "subjects" / "taxi-rides-value"
    folder.mkdir(parents=True)
    monkeypatch.chdir(folder)
    for strategy in NamingStrategy:
        assert subject_for_file(Path("v2.avsc"), {"type": "string"}, strategy) == (
            "taxi-rides-value"
        )
