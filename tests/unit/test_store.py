"""The local store: layout, histories (working tree and git), re-submission, the gate."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from schemacli.config import Settings
from schemacli.contracts.avro.loader import load_schema_file, load_schema_text
from schemacli.contracts.evolution.check import Verdict, check_candidate
from schemacli.contracts.evolution.levels import Level, SubjectLevels
from schemacli.contracts.gate.gate import gate
from schemacli.contracts.store.history import load_history
from schemacli.contracts.store.naming import NamingStrategy, subject_for_file
from schemacli.contracts.store.tree import FileTree, StoreLayoutErrors
from schemacli.errors import InputError, SchemaParseError, UsageError
from schemacli.gittree import git_tree
from schemacli.kinds import Kind


def ride(*extra: dict, total_type: str = "float") -> dict:
    return {
        "type": "record",
        "name": "Ride",
        "namespace": "t",
        "fields": [
            {"name": "id", "type": "int"},
            {"name": "total_amount", "type": total_type},
            *extra,
        ],
    }


TIP = {"name": "tip", "type": "float", "default": 0.0}
NO_DEFAULT = {"name": "zone", "type": "string"}


def make_store(root: Path, subjects: dict[str, list]) -> Path:
    for subject, versions in subjects.items():
        directory = root / "subjects" / subject
        directory.mkdir(parents=True, exist_ok=True)
        for n, schema in enumerate(versions, start=1):
            text = schema if isinstance(schema, str) else json.dumps(schema, indent=2)
            (directory / f"v{n}.avsc").write_text(text, encoding="utf-8")
    return root


def levels_for(store: Path, **levels: Level) -> SubjectLevels:
    return Settings(store=store, subject_levels=levels).levels


def loaded(schema: dict, version: int | None = None, source: str = "x.avsc"):
    return load_schema_text(json.dumps(schema, indent=2), source, version=version)


# -- layout ----------------------------------------------------------------------------------


def test_history_is_read_oldest_first(tmp_path):
    store = make_store(tmp_path, {"rides-value": [ride(), ride(TIP)]})
    history = load_history(FileTree(store), "rides-value")
    assert [h.version for h in history] == [1, 2]
    assert [len(h.value["fields"]) for h in history] == [2, 3]


def test_unknown_subject_has_an_empty_history(tmp_path):
    store = make_store(tmp_path, {"rides-value": [ride()]})
    assert load_history(FileTree(store), "nobody-value") == ()


def test_gap_in_versions_is_a_layout_error_naming_the_missing_version(tmp_path):
    store = make_store(tmp_path, {"rides-value": [ride(), ride(TIP), ride(TIP)]})
    (store / "subjects" / "rides-value" / "v2.avsc").unlink()
    with pytest.raises(InputError) as caught:
        load_history(FileTree(store), "rides-value")
    assert "v2 missing" in caught.value.message
    assert caught.value.location.source.endswith("subjects/rides-value")


def test_badly_named_version_file_is_rejected_with_the_naming_rule(tmp_path):
    store = make_store(tmp_path, {"rides-value": [ride()]})
    (store / "subjects" / "rides-value" / "version2.avsc").write_text("{}")
    with pytest.raises(InputError) as caught:
        FileTree(store).subjects()
    assert "version2.avsc" in caught.value.message
    assert "v1.avsc, v2.avsc" in caught.value.hint


@pytest.mark.parametrize("name", ["v02.avsc", "v\u0662.avsc", "v\u00b2.avsc", "v.avsc", "V2.avsc"])
def test_a_version_name_that_is_not_v_and_ascii_digits_without_a_leading_zero_is_a_problem(
    tmp_path, name
):
    store = make_store(tmp_path, {"rides-value": [ride()]})
    (store / "subjects" / "rides-value" / name).write_text("{}")
    with pytest.raises(StoreLayoutErrors) as caught:
        FileTree(store).subjects()
    assert [p.location.source.rsplit("/", 1)[1] for p in caught.value.problems] == [name]
    assert caught.value.index == {"rides-value": {1: "subjects/rides-value/v1.avsc"}}


def test_invalid_version_is_reported_with_file_line_and_column(tmp_path):
    store = make_store(tmp_path, {"rides-value": ['{\n  "type": "record",\n  "name": 5\n}']})
    with pytest.raises(SchemaParseError) as caught:
        load_history(FileTree(store), "rides-value")
    loc = caught.value.location
    assert loc.source.endswith("subjects/rides-value/v1.avsc")
    assert (loc.line, loc.pointer) == (3, "/name")


def test_missing_store_directory_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        FileTree(tmp_path / "nowhere").subjects()


def test_a_store_path_that_is_a_file_is_named_as_such(tmp_path):
    (tmp_path / "schemas").write_text("")
    with pytest.raises(InputError, match="is a file, not a directory"):
        FileTree(tmp_path / "schemas").subjects()


# -- one candidate ---------------------------------------------------------------------------


def test_first_version_always_passes():
    report = check_candidate(loaded(ride()), [], subject="s", level=Level.FULL_TRANSITIVE)
    assert report.verdict is Verdict.COMPATIBLE and report.checked_against == ()


def test_resubmitting_an_identical_schema_is_not_a_new_version():
    v1, v2 = loaded(ride(), 1), loaded(ride(TIP), 2)
    # The same schema, laid out differently and with keys in another order.
    again = load_schema_text(json.dumps(ride(), sort_keys=True), "again.avsc")
    report = check_candidate(again, [v1, v2], subject="s", level=Level.BACKWARD)
    assert report.identical_to == 1
    assert report.verdict is Verdict.COMPATIBLE


def test_primitive_written_as_an_object_is_the_same_schema():
    spelled_out = ride()
    spelled_out["fields"][0]["type"] = {"type": "int"}
    report = check_candidate(
        loaded(spelled_out), [loaded(ride(), 1)], subject="s", level=Level.FULL
    )
    assert report.identical_to == 1


def test_doc_change_is_a_new_version_as_in_confluent():
    with_doc = {**ride(), "doc": "a ride"}
    report = check_candidate(loaded(with_doc), [loaded(ride(), 1)], subject="s", level=Level.NONE)
    assert report.identical_to is None


def test_level_none_compares_with_nothing():
    report = check_candidate(
        loaded(ride(total_type="string")), [loaded(ride(), 1)], subject="s", level=Level.NONE
    )
    assert report.checked_against == () and report.verdict is Verdict.COMPATIBLE


def test_removing_a_field_breaks_forward():
    report = check_candidate(
        loaded({**ride(), "fields": ride()["fields"][:1]}),
        [loaded(ride(), 1)],
        subject="s",
        level=Level.FORWARD,
    )
    assert report.verdict is Verdict.INCOMPATIBLE
    assert report.findings[0].kind == "READER_FIELD_MISSING_DEFAULT_VALUE"


def test_non_transitive_level_compares_with_the_latest_version_only():
    history = [loaded(ride(), 1), loaded(ride(TIP), 2)]
    report = check_candidate(loaded(ride(TIP)), history, subject="s", level=Level.BACKWARD)
    assert report.identical_to == 2
    adds_zone = loaded(ride(TIP, {**NO_DEFAULT, "default": "?"}))
    report = check_candidate(adds_zone, history, subject="s", level=Level.BACKWARD)
    assert report.checked_against == (2,)
    report = check_candidate(adds_zone, history, subject="s", level=Level.BACKWARD_TRANSITIVE)
    assert report.checked_against == (1, 2)


def test_transitive_level_finds_the_break_with_an_older_version():
    # v1 -> v2 drops the default of tip (still BACKWARD with v2), but v1 data has no tip at all.
    v1 = loaded(ride(), 1)
    v2 = loaded(ride(TIP), 2)
    v3 = loaded(ride({"name": "tip", "type": "float"}))
    latest = check_candidate(v3, [v1, v2], subject="s", level=Level.BACKWARD)
    assert latest.verdict is Verdict.COMPATIBLE
    transitive = check_candidate(v3, [v1, v2], subject="s", level=Level.BACKWARD_TRANSITIVE)
    assert transitive.verdict is Verdict.INCOMPATIBLE
    assert "written with s v1" in transitive.findings[0].message


def test_incompatibility_is_located_in_the_candidate_file():
    candidate = loaded(ride(total_type="string"), source="cand.avsc")
    report = check_candidate(candidate, [loaded(ride(), 1)], subject="s", level=Level.BACKWARD)
    finding = report.findings[0]
    assert finding.kind == "TYPE_MISMATCH"
    assert finding.subject == "s"
    assert finding.location.source == "cand.avsc"
    assert finding.location.line is not None


# -- the gate --------------------------------------------------------------------------------


def test_gate_passes_a_compatible_history(tmp_path):
    store = make_store(tmp_path, {"rides-value": [ride(), ride(TIP)], "rides-key": [ride()]})
    report = gate(FileTree(store), levels_for(store))
    assert report.verdict is Verdict.COMPATIBLE
    assert [(r.subject, r.checked) for r in report.subjects] == [
        ("rides-key", ()),
        ("rides-value", (2,)),
    ]


def test_gate_lists_every_violation_not_only_the_first(tmp_path):
    store = make_store(
        tmp_path,
        {
            "a-value": [ride(), ride(total_type="string")],
            "b-value": [ride(), ride(NO_DEFAULT), ride(NO_DEFAULT, total_type="long")],
            "c-value": [ride(), ride(TIP)],
        },
    )
    report = gate(FileTree(store), levels_for(store))
    assert report.verdict is Verdict.INCOMPATIBLE
    verdicts = {r.subject: r.verdict for r in report.subjects}
    assert verdicts == {
        "a-value": Verdict.INCOMPATIBLE,
        "b-value": Verdict.INCOMPATIBLE,
        "c-value": Verdict.COMPATIBLE,
    }
    kinds = sorted(f.kind for f in report.findings)
    assert kinds == ["READER_FIELD_MISSING_DEFAULT_VALUE", "TYPE_MISMATCH", "TYPE_MISMATCH"]


def test_gate_uses_each_subjects_configured_level(tmp_path):
    store = make_store(tmp_path, {"a-value": [ride(), ride(total_type="string")]})
    report = gate(FileTree(store), levels_for(store, **{"a-value": Level.NONE}))
    assert report.verdict is Verdict.COMPATIBLE
    assert report.subjects[0].level is Level.NONE


def test_gate_reports_every_invalid_file_as_an_input_error(tmp_path):
    store = make_store(
        tmp_path,
        {"a-value": [ride(), '{"type": "record",}'], "b-value": ['{"type": "enum"}']},
    )
    report = gate(FileTree(store), levels_for(store))
    assert report.verdict is Verdict.INVALID
    assert [f.kind for f in report.findings] == [Kind.INVALID_SCHEMA, Kind.INVALID_SCHEMA]
    assert all(f.location.line is not None for f in report.findings)


def test_gate_flags_a_version_identical_to_an_earlier_one(tmp_path):
    store = make_store(tmp_path, {"a-value": [ride(), ride(TIP), ride()]})
    report = gate(FileTree(store), levels_for(store))
    assert [f.kind for f in report.findings] == [Kind.DUPLICATE_VERSION]


def test_gate_reports_a_gap_as_a_layout_problem_and_still_checks_other_subjects(tmp_path):
    store = make_store(
        tmp_path, {"a-value": [ride(), ride(), ride()], "b-value": [ride(), ride(TIP)]}
    )
    (store / "subjects" / "a-value" / "v2.avsc").unlink()
    report = gate(FileTree(store), levels_for(store))
    assert {r.subject: r.verdict for r in report.subjects} == {
        "a-value": Verdict.INVALID,
        "b-value": Verdict.COMPATIBLE,
    }
    assert report.findings[0].kind == Kind.STORE_LAYOUT


def test_gate_refuses_a_folder_named_like_a_version_instead_of_skipping_it(tmp_path):
    store = make_store(tmp_path, {"a-value": [ride()], "b-value": [ride()]})
    (store / "subjects" / "a-value" / "v2.avsc").mkdir()
    report = gate(FileTree(store), levels_for(store))
    assert {r.subject: r.verdict for r in report.subjects} == {
        "a-value": Verdict.INVALID,
        "b-value": Verdict.COMPATIBLE,
    }
    assert "is a directory" in report.findings[0].message
    assert report.findings[0].location.source.endswith("subjects/a-value/v2.avsc")


# -- git -------------------------------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path):
    if shutil.which("git") is None:
        pytest.fail("git is needed for the --against tests")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "t@example.com")
    git(tmp_path, "config", "user.name", "t")
    make_store(tmp_path / "schemas", {"rides-value": [ride()], "old-value": [ride()]})
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    git(tmp_path, "tag", "base")
    return tmp_path


def test_history_at_a_git_ref_is_the_history_committed_there(repo):
    store = repo / "schemas"
    make_store(store, {"rides-value": [ride(), ride(TIP)]})
    history = load_history(git_tree("git:base", store), "rides-value")
    assert [h.version for h in history] == [1]
    assert history[0].source == "base:schemas/subjects/rides-value/v1.avsc"


def test_gate_against_a_ref_checks_only_new_versions(repo):
    store = repo / "schemas"
    # v1 of old-value breaks nothing new; a new rides-value v2 is incompatible.
    make_store(store, {"rides-value": [ride(), ride(total_type="string")]})
    report = gate(FileTree(store), levels_for(store), base=git_tree("git:base", store))
    rows = {r.subject: r for r in report.subjects}
    assert rows["rides-value"].checked == (2,)
    assert rows["old-value"].checked == ()
    assert [f.kind for f in report.findings] == ["TYPE_MISMATCH"]


def test_gate_against_a_ref_rejects_a_rewritten_version_and_warns_of_a_deleted_subject(repo):
    store = repo / "schemas"
    make_store(store, {"rides-value": [ride(TIP)]})  # v1 edited in place
    shutil.rmtree(store / "subjects" / "old-value")
    report = gate(FileTree(store), levels_for(store), base=git_tree("git:base", store))
    assert [(f.kind, f.severity.value) for f in report.findings] == [
        (Kind.SUBJECT_DELETED, "warning"),
        (Kind.HISTORY_REWRITTEN, "error"),
    ]
    assert report.verdict is Verdict.INCOMPATIBLE


def test_version_deleted_since_the_ref_is_a_violation(repo):
    store = repo / "schemas"
    make_store(store, {"rides-value": [ride(), ride(TIP)]})
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "v2")
    (store / "subjects" / "rides-value" / "v2.avsc").unlink()
    report = gate(FileTree(store), levels_for(store), base=git_tree("git:HEAD", store))
    assert [f.kind for f in report.findings] == [Kind.VERSION_DELETED]


def test_unknown_git_ref_is_an_input_error_with_a_hint(repo):
    with pytest.raises(InputError) as caught:
        git_tree("git:origin/nope", repo / "schemas")
    assert "unknown git ref 'origin/nope'" in caught.value.message
    assert "git fetch" in caught.value.hint


@pytest.mark.parametrize(
    ("ref", "hint"),
    [
        ("HEAD~5", "HEAD has fewer ancestors than that"),
        ("v9.9.9", "name an existing branch, tag or commit"),
        ("origin/release", "git fetch origin release"),
    ],
)
def test_an_unknown_ref_gets_the_hint_its_shape_calls_for(repo, ref, hint):
    with pytest.raises(InputError) as caught:
        git_tree(f"git:{ref}", repo / "schemas")
    assert hint in caught.value.hint


def test_a_ref_that_looks_like_an_option_never_reaches_git(repo):
    with pytest.raises(InputError) as caught:
        git_tree("git:--output=/tmp/x", repo / "schemas")
    assert "'--output=/tmp/x' is not a git ref" in caught.value.message


def test_a_repository_without_commits_says_so(tmp_path):
    store = make_store(tmp_path / "schemas", {"a-value": [ride()]})
    git(tmp_path, "init", "-q")
    with pytest.raises(InputError) as caught:
        git_tree("git:HEAD", store)
    assert "no commits yet" in caught.value.hint


def test_a_ref_missing_from_a_shallow_clone_says_to_fetch_more_history(repo, tmp_path_factory):
    make_store(repo / "schemas", {"rides-value": [ride(), ride(TIP)]})
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "v2")
    shallow = tmp_path_factory.mktemp("clone") / "shallow"
    git(shallow.parent, "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow))
    with pytest.raises(InputError) as caught:
        git_tree("git:HEAD~1", shallow / "schemas")
    assert caught.value.hint.startswith("this clone is shallow")
    assert "fetch-depth: 0" in caught.value.hint
    with pytest.raises(InputError) as deep:  # a full clone: no word about depth
        git_tree("git:origin/nope", repo / "schemas")
    assert "shallow" not in deep.value.hint


def test_against_outside_a_git_repository_is_an_input_error(tmp_path):
    store = make_store(tmp_path / "plain", {"a-value": [ride()]})
    with pytest.raises(InputError, match="not inside a git repository"):
        git_tree("git:main", store)


def test_against_without_the_git_prefix_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="expected git:REF"):
        git_tree("origin/main", tmp_path)


# -- subjects of files outside subjects/ ------------------------------------------------------


def test_topic_name_strategy_takes_the_subject_from_the_file_name():
    assert subject_for_file(Path("x/rides-value.avsc"), ride(), NamingStrategy.TOPIC) == (
        "rides-value"
    )
    with pytest.raises(UsageError, match="<topic>-value.avsc"):
        subject_for_file(Path("x/ride.avsc"), ride(), NamingStrategy.TOPIC)


def test_record_name_strategy_uses_the_full_record_name():
    assert subject_for_file(Path("any.avsc"), ride(), NamingStrategy.RECORD) == "t.Ride"


def test_topic_record_name_strategy_needs_topic_dash_full_name_file():
    path = Path("rides-t.Ride.avsc")
    assert subject_for_file(path, ride(), NamingStrategy.TOPIC_RECORD) == "rides-t.Ride"
    with pytest.raises(UsageError):
        subject_for_file(Path("rides.avsc"), ride(), NamingStrategy.TOPIC_RECORD)


def test_the_example_store_loads(repo_root):
    history = load_history(FileTree(repo_root / "schemas"), "taxi-rides-value")
    assert [h.version for h in history] == [1, 2]
    breaking = load_schema_file(repo_root / "schemas/migration/taxi-ride-v2-breaking.avsc")
    assert breaking.value["name"] == "TaxiRide"


# -- declared references ---------------------------------------------------------------------

MONEY = {
    "type": "record",
    "name": "Money",
    "namespace": "m",
    "fields": [{"name": "cents", "type": "long"}],
}


def priced(*extra: dict) -> dict:
    return {
        "type": "record",
        "name": "Priced",
        "namespace": "t",
        "fields": [{"name": "price", "type": "m.Money"}, *extra],
    }


def with_references(store: Path, subject: str, version: int, refs: list) -> None:
    path = store / "subjects" / subject / f"v{version}.references.json"
    path.write_text(json.dumps(refs))


def test_version_uses_a_type_of_another_subject_through_declared_references(tmp_path):
    store = make_store(tmp_path, {"money-value": [MONEY], "priced-value": [priced(), priced(TIP)]})
    for v in (1, 2):
        with_references(
            store,
            "priced-value",
            v,
            [{"name": "m.Money", "subject": "money-value", "version": "latest"}],
        )
    history = load_history(FileTree(store), "priced-value")
    assert [h.version for h in history] == [1, 2]
    assert gate(FileTree(store), levels_for(store)).verdict is Verdict.COMPATIBLE


def test_reference_by_path_is_relative_to_the_subject_folder(tmp_path):
    store = make_store(tmp_path, {"priced-value": [priced()]})
    (store / "common").mkdir()
    (store / "common" / "Money.avsc").write_text(json.dumps(MONEY))
    with_references(
        store, "priced-value", 1, [{"name": "m.Money", "path": "../../common/Money.avsc"}]
    )
    assert load_history(FileTree(store), "priced-value")[0].version == 1


def test_unresolvable_reference_is_an_invalid_schema_in_the_gate(tmp_path):
    store = make_store(tmp_path, {"priced-value": [priced()]})
    with_references(
        store, "priced-value", 1, [{"name": "m.Money", "subject": "money-value", "version": 1}]
    )
    report = gate(FileTree(store), levels_for(store))
    assert report.verdict is Verdict.INVALID
    finding = report.findings[0]
    assert "money-value" in finding.message and finding.location.line == 1


def test_reference_naming_a_type_the_file_does_not_define_is_rejected(tmp_path):
    store = make_store(tmp_path, {"money-value": [MONEY], "priced-value": [priced()]})
    with_references(
        store, "priced-value", 1, [{"name": "m.Cash", "subject": "money-value", "version": 1}]
    )
    with pytest.raises(InputError, match="does not define 'm.Cash'"):
        load_history(FileTree(store), "priced-value")


def test_circular_references_are_named(tmp_path):
    a = {"type": "record", "name": "A", "fields": [{"name": "b", "type": ["null", "B"]}]}
    b = {"type": "record", "name": "B", "fields": [{"name": "a", "type": ["null", "A"]}]}
    store = make_store(tmp_path, {"a-value": [a], "b-value": [b]})
    with_references(store, "a-value", 1, [{"name": "B", "subject": "b-value", "version": 1}])
    with_references(store, "b-value", 1, [{"name": "A", "subject": "a-value", "version": 1}])
    with pytest.raises(InputError, match="circular references"):
        load_history(FileTree(store), "a-value")


def test_references_resolve_at_the_git_ref(repo):
    store = repo / "schemas"
    make_store(store, {"money-value": [MONEY], "priced-value": [priced()]})
    with_references(
        store, "priced-value", 1, [{"name": "m.Money", "subject": "money-value", "version": 1}]
    )
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "priced")
    # The working tree's money-value v1 is broken; the committed one is what --against reads.
    (store / "subjects" / "money-value" / "v1.avsc").write_text("{")
    history = load_history(git_tree("git:HEAD", store), "priced-value")
    assert history[0].source == "HEAD:schemas/subjects/priced-value/v1.avsc"


def test_schema_file_directly_in_subjects_is_a_layout_error(tmp_path):
    store = make_store(tmp_path, {"a-value": [ride()]})
    (store / "subjects" / "b-value.avsc").write_text(json.dumps(ride()))
    report = gate(FileTree(store), levels_for(store))
    assert report.verdict is Verdict.INVALID
    assert "subjects/b-value/v1.avsc" in report.findings[0].hint


def test_json_comments_in_a_candidate_are_a_warning_that_does_not_fail_the_check():
    text = "// the next version\n" + json.dumps(ride(TIP), indent=2)
    candidate = load_schema_text(text, "next.avsc")
    report = check_candidate(candidate, [loaded(ride(), 1)], subject="s", level=Level.BACKWARD)
    assert report.verdict is Verdict.COMPATIBLE
    assert [(f.kind, f.severity.value, f.location.line) for f in report.findings] == [
        ("JSON_COMMENT", "warning", 1)
    ]


# -- named types from other subjects (the store's names) -------------------------------------

POSITION = {
    "type": "record",
    "name": "Position",
    "namespace": "com.acme",
    "fields": [{"name": "lat", "type": "double"}, {"name": "lon", "type": "double"}],
}


def order(*extra: dict) -> dict:
    return {
        "type": "record",
        "name": "Order",
        "namespace": "com.acme",
        "fields": [{"name": "id", "type": "long"}, {"name": "at", "type": "Position"}, *extra],
    }


def position(*extra: dict, lat: str = "double") -> dict:
    fields = [{"name": "lat", "type": lat}, {"name": "lon", "type": "double"}, *extra]
    return {**POSITION, "fields": fields}


def test_a_type_used_but_not_declared_comes_from_the_subject_that_defines_it(tmp_path):
    store = make_store(tmp_path, {"orders-value": [order()], "positions-value": [POSITION]})
    (v1,) = load_history(FileTree(store), "orders-value")
    assert [r.source for r in v1.references] == [f"{store}/subjects/positions-value/v1.avsc"]
    assert v1.schema.fields[1].type.fullname == "com.acme.Position"
    assert gate(FileTree(store), levels_for(store)).verdict is Verdict.COMPATIBLE


def test_the_store_names_come_from_each_subjects_latest_version(tmp_path):
    store = make_store(
        tmp_path,
        {"orders-value": [order()], "positions-value": [POSITION, position(lat="float")]},
    )
    (v1,) = load_history(FileTree(store), "orders-value")
    assert v1.references[0].source.endswith("positions-value/v2.avsc")
    assert v1.schema.fields[1].type.fields[0].type.type == "float"


def test_a_breaking_change_in_the_shared_type_is_seen_by_the_dependent_subject(tmp_path):
    # orders-value v1 embeds Position; v2 uses it by name, and the subject that defines it
    # changed lat from double to string since: v2 cannot read v1's positions.
    v1 = order()
    v1["fields"][1]["type"] = POSITION
    store = make_store(
        tmp_path,
        {"orders-value": [v1, order()], "positions-value": [position(lat="string")]},
    )
    report = gate(FileTree(store), levels_for(store))
    rows = {r.subject: r for r in report.subjects}
    assert rows["orders-value"].verdict is Verdict.INCOMPATIBLE
    assert [f.kind for f in rows["orders-value"].findings] == ["TYPE_MISMATCH"]
    assert "lat" in rows["orders-value"].findings[0].message
    # The same v2 against a Position that did not change passes.
    (store / "subjects" / "positions-value" / "v1.avsc").write_text(json.dumps(POSITION))
    assert gate(FileTree(store), levels_for(store)).verdict is Verdict.COMPATIBLE


def test_a_cached_verdict_is_not_reused_when_the_shared_type_changes(tmp_path):
    from schemacli.contracts.evolution.verdicts import VerdictCache

    cache = tmp_path / "cache"
    store = make_store(
        tmp_path / "st",
        {"orders-value": [order(), order(TIP)], "positions-value": [POSITION]},
    )
    levels = levels_for(store, **{"orders-value": Level.FULL})
    first = gate(FileTree(store), levels, verdicts=VerdictCache(cache, min_cost=0))
    assert first.verdict is Verdict.COMPATIBLE
    # Same texts for orders-value; Position changes incompatibly under it (lat: double ->
    # string). v1 and v2 resolve the same Position, so they stay compatible with each other,
    # but the cache must not answer from the old Position either way: compare with no cache.
    (store / "subjects" / "positions-value" / "v1.avsc").write_text(
        json.dumps(position(lat="string"))
    )
    again = gate(FileTree(store), levels, verdicts=VerdictCache(cache, min_cost=0))
    fresh = gate(FileTree(store), levels)
    assert again.subjects == fresh.subjects
    (v1, _) = load_history(FileTree(store), "orders-value")
    assert v1.schema.fields[1].type.fields[0].type.type == "string"


def test_a_gate_row_that_used_the_store_names_is_never_served_from_the_cache(tmp_path):
    from schemacli.contracts.evolution.verdicts import VerdictCache

    cache = tmp_path / "cache"
    store = make_store(tmp_path / "st", {"orders-value": [order()]})
    levels = levels_for(store)
    first = gate(FileTree(store), levels, verdicts=VerdictCache(cache, min_cost=0))
    assert first.verdict is Verdict.INVALID  # Position is defined nowhere yet
    make_store(store, {"positions-value": [POSITION]})
    again = gate(FileTree(store), levels, verdicts=VerdictCache(cache, min_cost=0))
    assert again.verdict is Verdict.COMPATIBLE


def test_a_name_two_subjects_define_differently_is_an_error_naming_both_files(tmp_path):
    store = make_store(
        tmp_path,
        {
            "orders-value": [order()],
            "positions-value": [POSITION],
            "places-value": [position(lat="float")],
        },
    )
    report = gate(FileTree(store), levels_for(store))
    row = next(r for r in report.subjects if r.subject == "orders-value")
    assert row.verdict is Verdict.INVALID
    (finding,) = row.findings
    assert "com.acme.Position is defined differently by 2 subjects" in finding.message
    assert f"{store}/subjects/places-value/v1.avsc:1:1" in finding.message
    assert f"{store}/subjects/positions-value/v1.avsc:1:1" in finding.message
    assert finding.location.source.endswith("orders-value/v1.avsc")
    assert finding.location.pointer == "/fields/1/type"
    assert "references file" in finding.hint
    assert '"subject": "places-value", "version": 1' in finding.hint


def test_a_name_two_subjects_define_identically_resolves(tmp_path):
    store = make_store(
        tmp_path,
        {"orders-value": [order()], "positions-value": [POSITION], "places-value": [POSITION]},
    )
    (v1,) = load_history(FileTree(store), "orders-value")
    assert v1.references[0].source.endswith("places-value/v1.avsc")  # the first by name


def test_declared_references_take_precedence_over_the_store_names(tmp_path):
    store = make_store(
        tmp_path,
        {
            "orders-value": [order()],
            "positions-value": [POSITION],
            "places-value": [position(lat="float")],
        },
    )
    with_references(
        store,
        "orders-value",
        1,
        [{"name": "com.acme.Position", "subject": "places-value", "version": 1}],
    )
    (v1,) = load_history(FileTree(store), "orders-value")
    assert [r.source for r in v1.references] == [f"{store}/subjects/places-value/v1.avsc"]


def test_a_subjects_own_later_version_does_not_define_names_for_its_earlier_ones(tmp_path):
    v2 = order()
    v2["fields"][1]["type"] = POSITION
    store = make_store(tmp_path, {"orders-value": [order(), v2]})
    with pytest.raises(SchemaParseError, match="Undefined name: com.acme.Position") as caught:
        load_history(FileTree(store), "orders-value")
    assert "No other subject's latest version in the store" in caught.value.hint
    assert "v1.references.json" in caught.value.hint


def test_an_undefined_name_stays_a_located_invalid_schema_in_the_gate(tmp_path):
    store = make_store(tmp_path, {"orders-value": [order()], "rides-value": [ride()]})
    report = gate(FileTree(store), levels_for(store))
    (finding,) = report.findings
    assert finding.kind == Kind.INVALID_SCHEMA
    assert "Undefined name: com.acme.Position" in finding.message
    assert (finding.location.line, finding.location.pointer) == (12, "/fields/1/type")


def test_subjects_whose_latest_versions_need_each_other_are_a_named_cycle(tmp_path):
    uses_order = {**POSITION, "fields": [{"name": "of", "type": ["null", "Order"]}]}
    store = make_store(tmp_path, {"orders-value": [order()], "positions-value": [uses_order]})
    with pytest.raises(InputError, match="circular references") as caught:
        load_history(FileTree(store), "orders-value")
    message = caught.value.message
    assert "orders-value/v1.avsc -> " in message and "positions-value/v1.avsc -> " in message


def test_a_type_from_another_subject_resolves_as_it_was_at_the_git_ref(repo):
    store = repo / "schemas"
    make_store(store, {"orders-value": [order()], "positions-value": [POSITION]})
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "orders")
    # The working tree's Position is different; --against reads the committed one.
    (store / "subjects" / "positions-value" / "v1.avsc").write_text(
        json.dumps(position(lat="string"))
    )
    (v1,) = load_history(git_tree("git:HEAD", store), "orders-value")
    assert v1.references[0].source == "HEAD:schemas/subjects/positions-value/v1.avsc"
    assert v1.schema.fields[1].type.fields[0].type.type == "double"


def test_gate_against_a_ref_checks_a_new_version_with_the_types_at_each_side(repo):
    store = repo / "schemas"
    make_store(store, {"orders-value": [order()], "positions-value": [POSITION]})
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "orders")
    make_store(store, {"orders-value": [order(), order(NO_DEFAULT)]})
    report = gate(FileTree(store), levels_for(store), base=git_tree("git:HEAD", store))
    rows = {r.subject: r for r in report.subjects}
    assert rows["orders-value"].checked == (2,)
    assert [f.kind for f in rows["orders-value"].findings] == ["READER_FIELD_MISSING_DEFAULT_VALUE"]


def test_a_text_parsed_in_two_trees_shares_its_model_only_with_the_same_types_found(tmp_path):
    from schemacli.contracts.store.history import read_versions
    from schemacli.contracts.store.references import References

    def first_version(root: Path, lat: str, memo: dict):
        store = make_store(
            root, {"orders-value": [order()], "positions-value": [position(lat=lat)]}
        )
        tree = FileTree(store)
        subjects = tree.subjects()
        (v1,) = read_versions(tree, subjects, "orders-value")
        return References(tree, subjects).load(v1, memo)

    memo: dict = {}
    at_ref = first_version(tmp_path / "ref", "double", memo)
    same = first_version(tmp_path / "same", "double", memo)
    other = first_version(tmp_path / "other", "string", memo)
    assert same.schema is at_ref.schema  # parsed once
    assert other.schema.fields[1].type.fields[0].type.type == "string"
    assert other.references[0].source.startswith(str(tmp_path / "other"))


def test_a_type_the_own_subject_defines_identically_still_resolves_from_the_other(tmp_path):
    # orders-value's latest embeds the same Position that positions-value defines: its v1
    # (which uses Position by name) takes it from positions-value, never from itself.
    v2 = order()
    v2["fields"][1]["type"] = POSITION
    store = make_store(tmp_path, {"orders-value": [order(), v2], "positions-value": [POSITION]})
    v1, _ = load_history(FileTree(store), "orders-value")
    assert v1.references[0].source.endswith("positions-value/v1.avsc")


def test_a_gate_row_with_declared_references_is_cached_until_a_file_it_leads_to_changes(
    tmp_path, monkeypatch
):
    from schemacli.contracts.evolution.verdicts import VerdictCache
    from schemacli.contracts.gate import gate as gate_module

    cache = tmp_path / "cache"
    store = make_store(
        tmp_path / "st", {"money-value": [MONEY], "priced-value": [priced(), priced(TIP)]}
    )
    for v in (1, 2):
        refs = [{"name": "m.Money", "subject": "money-value", "version": 1}]
        with_references(store, "priced-value", v, refs)
    levels = levels_for(store, **{"priced-value": Level.FULL_TRANSITIVE})
    checked: list[str] = []
    real = gate_module._check_subject

    def counting(subject, *args, **kwargs):
        checked.append(subject)
        return real(subject, *args, **kwargs)

    monkeypatch.setattr(gate_module, "_check_subject", counting)
    first = gate(FileTree(store), levels, verdicts=VerdictCache(cache, min_cost=0))
    assert first.verdict is Verdict.COMPATIBLE and "priced-value" in checked
    checked.clear()
    again = gate(FileTree(store), levels, verdicts=VerdictCache(cache, min_cost=0))
    assert again.subjects == first.subjects and "priced-value" not in checked
    # The referenced file changes (Money no longer defined there): the row is checked again.
    (store / "subjects" / "money-value" / "v1.avsc").write_text(
        json.dumps(dict(MONEY, name="Cash"))
    )
    changed = gate(FileTree(store), levels, verdicts=VerdictCache(cache, min_cost=0))
    assert "priced-value" in checked
    assert changed.subjects == gate(FileTree(store), levels).subjects
    assert changed.verdict is Verdict.INVALID
