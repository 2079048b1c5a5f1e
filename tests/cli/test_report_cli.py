"""`schemacli report --html OUT/`: what it writes, and every input it refuses (exit 2, a message
naming the place, no traceback, nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from tests.report_site import CENSUS, make_state_dir, make_store


@pytest.fixture
def site_project(tmp_path, monkeypatch):
    """A store with hostile names, readers, and a migration state directory; the current
    directory."""
    make_store(tmp_path)
    make_state_dir(tmp_path)
    monkeypatch.chdir(tmp_path)
    for name in ("SCHEMACLI_STORE", "SCHEMACLI_DEFAULT_LEVEL", "SCHEMACLI_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def refused(result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for word in words:
        assert word in result.stderr, result.stderr


def test_report_writes_an_index_and_a_page_per_subject_and_migration(site_project):
    result = run("report", "--html", "out", "--census", CENSUS, "--state-dir", "orders-v2--orders")
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in (site_project / "out").iterdir())
    assert "index.html" in names and "subject-orders-value.html" in names
    assert any(n.startswith("migration-") for n in names)
    assert "2 subject page(s), 1 migration page(s)" in result.stdout


def test_report_json_lists_the_pages(site_project):
    result = run("report", "--html", "out", "-o", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["subjects"] == 2 and document["migrations"] == 0
    assert all(Path(p).is_file() for p in document["pages"])


def test_a_second_report_replaces_the_first(site_project):
    assert run("report", "--html", "out").exit_code == 0
    result = run("report", "--html", "out", "--census", CENSUS)
    assert result.exit_code == 0, result.output
    assert "census-0" in (site_project / "out" / "subject-orders-value.html").read_text()


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda d: d / "missing.json", ["missing.json", "no such file"]),
        (lambda d: d, ["is a directory"]),
        (lambda d: _write(d / "bad.json", b'{"topic": \n'), ["bad.json:2", "not JSON"]),
        (lambda d: _write(d / "bin.json", b"\x00\x01\xff"), ["bin.json"]),
        (
            lambda d: _write(d / "other.json", b'{"census_format": 1, "topic": 5}'),
            ["other.json:1", "not a topic name"],
        ),
        (
            lambda d: _write(d / "true.json", b'{"census_format": true, "topic": "t"}'),
            ["true.json:1", "census_format is true"],
        ),
        (lambda d: _write(d / "deep.json", b"[" * 5000 + b"]" * 5000), ["deep.json:1", "nested"]),
        (
            lambda d: _write(d / "huge.json", b'{"census_format": ' + b"9" * 5000 + b"}"),
            ["huge.json:1", "5000 digits"],
        ),
        (
            lambda d: _write(d / "inf.json", b'{"census_format": 1e400}'),
            ["inf.json:1", "too large for a double"],
        ),
    ],
)
def test_a_bad_census_is_refused_and_nothing_is_written(site_project, make, words):
    result = run("report", "--html", "out", "--census", make(site_project))
    refused(result, *words)
    assert not (site_project / "out").exists()


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_a_state_dir_without_converter_state_is_refused(site_project):
    (site_project / "empty").mkdir()
    refused(run("report", "--html", "out", "--state-dir", "empty"), "no converter state")
    assert not (site_project / "out").exists()


def test_a_corrupt_progress_file_is_refused_naming_it(site_project):
    (site_project / "orders-v2--orders" / "progress.json").write_text('{"totals": {"in": -1}}')
    refused(
        run("report", "--html", "out", "--state-dir", "orders-v2--orders"),
        "progress.json",
        "whole number",
    )
    assert not (site_project / "out").exists()


def test_a_corrupt_history_line_is_refused_naming_its_line(site_project):
    history = site_project / "orders-v2--orders" / "progress-history.jsonl"
    history.write_text(history.read_text() + "[1]\n{}\n")
    refused(
        run("report", "--html", "out", "--state-dir", "orders-v2--orders"),
        "progress-history.jsonl:4",
        "corrupt progress history",
    )


def test_an_output_path_that_is_a_file_is_refused_and_kept(site_project):
    (site_project / "out").write_text("keep me")
    refused(run("report", "--html", "out"), "is a file, not a folder", "nothing was written")
    assert (site_project / "out").read_text() == "keep me"


def test_an_output_folder_of_other_files_is_refused(site_project):
    (site_project / "out").mkdir()
    (site_project / "out" / "notes.md").write_text("mine")
    refused(run("report", "--html", "out"), "not a schemacli report", "notes.md")
    assert [p.name for p in (site_project / "out").iterdir()] == ["notes.md"]


def test_a_missing_store_is_refused(site_project):
    refused(run("report", "--html", "out", "--store", "nowhere"), "does not exist")
    assert not (site_project / "out").exists()


def test_html_is_required(site_project):
    result = run("report")
    assert result.exit_code == 2 and "--html" in result.output


def test_an_error_in_json_mode_is_a_json_document(site_project):
    result = run("report", "--html", "out", "--census", "missing.json", "-o", "json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["type"] == "CensusFileError"


def test_migrations_under_the_default_state_folder_are_found_without_naming_them(site_project):
    base = site_project / ".schemacli" / "migrate"
    base.mkdir(parents=True)
    (site_project / "orders-v2--orders").rename(base / "orders-v2--orders")
    broken = base / "broken--v1"
    broken.mkdir()
    (broken / "progress.json").write_text("{not json")
    (base / "empty").mkdir()  # no converter state: not a migration
    result = run("report", "--html", "out")
    assert result.exit_code == 0, result.output
    assert "2 migration page(s)" in result.stdout
    assert "warning:" in result.stderr and "progress.json" in result.stderr
    pages = {p.name: p.read_text() for p in (site_project / "out").glob("migration-*.html")}
    assert len(pages) == 2
    broken_page = next(t for n, t in pages.items() if "broken" in n)
    assert "corrupt converter state" in broken_page


# -- the output folder: an earlier report's, or refused ------------------------------------------


@pytest.mark.parametrize(
    "marker",
    [b"", b"{}", b"[]", b'{"generator": "someone", "files": ["index.html"]}', b"\x00" * 10],
)
def test_a_marker_that_a_report_did_not_write_never_lets_report_replace_a_users_file(
    site_project, marker
):
    out = site_project / "out"
    out.mkdir()
    (out / "index.html").write_text("my own page")
    (out / ".schemacli-report.json").write_bytes(marker)
    refused(run("report", "--html", "out"), "not the marker a schemacli report writes")
    assert (out / "index.html").read_text() == "my own page"


def test_a_file_an_earlier_report_did_not_write_stops_the_next_one(site_project):
    assert run("report", "--html", "out").exit_code == 0
    (site_project / "out" / "notes.txt").write_text("mine")
    refused(run("report", "--html", "out"), "did not write", "notes.txt")
    assert (site_project / "out" / "notes.txt").read_text() == "mine"


def test_a_page_an_earlier_report_left_stays_listed_and_the_next_report_runs(site_project):
    assert run("report", "--html", "out").exit_code == 0
    marker = site_project / "out" / ".schemacli-report.json"
    old = json.loads(marker.read_text())
    (site_project / "out" / "subject-gone.html").write_text("a subject deleted since")
    marker.write_text(json.dumps({**old, "files": [*old["files"], "subject-gone.html"]}))
    assert run("report", "--html", "out").exit_code == 0
    assert run("report", "--html", "out").exit_code == 0
    assert "subject-gone.html" in json.loads(marker.read_text())["files"]


def test_an_output_folder_name_longer_than_the_file_system_allows_is_refused(site_project):
    refused(run("report", "--html", "d" * 300), "the name is too long")
    refused(run("report", "--html", "d" * 300, "-o", "json"), "the name is too long")
