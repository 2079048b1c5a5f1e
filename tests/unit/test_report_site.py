"""``schemacli.site``: what the pages say, that users' text stays text, and what the census,
the progress history and the output folder refuse."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from converters.ops.overview import MAX_POINTS, overview, read_history
from converters.pipeline.progress import HISTORY, ProgressFile, append_history, source_lag
from schemacli.atomicwrite import WriteError
from schemacli.contracts.evolution.levels import Level, SubjectLevels
from schemacli.contracts.store.tree import FileTree
from schemacli.site.assets import JS
from schemacli.site.build import build_site, slug
from schemacli.site.census import CensusFileError, read_census
from schemacli.site.render import json_data, pages
from schemacli.site.write import MARKER, plan, write_site
from tests.report_site import (
    CENSUS,
    HOSTILE_DOC,
    HOSTILE_NAME,
    HOSTILE_OWNER,
    make_state_dir,
    make_store,
)


def site_pages(tmp_path: Path, *, census: bool = True, state: bool = True) -> dict[str, str]:
    store = make_store(tmp_path)
    migrations = [(str(d), overview(d), None) for d in [make_state_dir(tmp_path)]] if state else []
    site = build_site(
        FileTree(store),
        store,
        SubjectLevels(default=Level.BACKWARD),
        censuses=[read_census(CENSUS)] if census else [],
        migrations=migrations,
        now=1795000000.0,
    )
    return pages(site)


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text inside each <script>."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def parsed(text: str) -> Elements:
    parser = Elements()
    parser.feed(text)
    return parser


def test_every_subject_and_migration_has_a_page_linked_from_the_index(tmp_path):
    files = site_pages(tmp_path)
    index = parsed(files["index.html"])
    links = {a["href"] for tag, a in index.tags if tag == "a"}
    assert {name for name in files if name != "index.html"} <= links
    assert "subject-orders-value.html" in files
    assert any(name.startswith("migration-") for name in files)


def test_the_subject_page_shows_each_versions_diff_its_level_verdict_and_the_readers(tmp_path):
    page = site_pages(tmp_path)["subject-orders-value.html"]
    assert "field &#x27;note&#x27; added" in page  # v2's diff
    assert "type changed from double to string" in page  # v3's diff
    assert page.count("badge level") >= 3 and "BACKWARD" in page
    assert 'href="#v3"' in page and "incompatible" in page  # the timeline marks v3
    assert "billing" in page and "billing-invoicer" in page and "cannot read" in page
    # the finding is placed in the reader's file, line:col
    assert re.search(r"readers/billing/orders-value\.avsc:\d+:\d+", page)


def test_hostile_names_docs_and_owners_stay_text(tmp_path):
    files = site_pages(tmp_path)
    for name, text in files.items():
        tree = parsed(text)
        # only our tags: one script, plus the JSON data elements (never run)
        for tag, attrs in tree.tags:
            assert tag != "img", name
            assert not any(k.startswith("on") for k in attrs), (name, tag, attrs)
            if tag == "script":
                assert attrs.get("type") in (None, "application/json"), name
        runnable = [
            text
            for (tag, attrs), text in zip(
                [t for t in tree.tags if t[0] == "script"], tree.scripts, strict=True
            )
            if "type" not in attrs
        ]
        assert runnable == [JS], name  # the one script that runs is ours, byte for byte
    hostile = next(t for n, t in files.items() if n.startswith("subject-x_"))
    assert "&lt;/script&gt;&lt;script&gt;alert(2)" in hostile  # the doc, escaped
    assert "x&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in hostile  # the subject name
    assert "&lt;b onmouseover=alert(4)&gt;billing&lt;/b&gt;" in files["subject-orders-value.html"]
    assert HOSTILE_DOC not in hostile and HOSTILE_NAME not in hostile
    assert HOSTILE_OWNER not in files["subject-orders-value.html"]


def test_embedded_json_cannot_close_its_element_and_reads_back_the_same():
    value = {"doc": "</script><!-- & \u2028 <b>", "n": [1, 2.5, None, True]}
    text = json_data(value)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == value


def test_the_census_is_embedded_whole_as_the_charts_data(tmp_path):
    page = site_pages(tmp_path)["subject-orders-value.html"]
    data = re.search(
        r'<script type="application/json" id="census-0"[^>]*>(.*?)</script>', page, re.S
    )
    assert data is not None
    assert json.loads(data.group(1)) == json.loads(CENSUS.read_text())
    # the timeline says how much of the data each version wrote
    assert "100 record(s) in orders" in page and "95 record(s) in orders" in page


def test_pages_name_no_network_address(tmp_path):
    for name, text in site_pages(tmp_path).items():
        assert not re.search(
            r"(?i)\b(https?|wss?|ftp):", text.replace("http://www.w3.org/2000/svg", "")
        ), name
        assert 'src="' not in text and "@import" not in text and "url(" not in text, name


def test_the_migration_page_shows_the_window_counts_history_dependents_and_final_report(
    tmp_path,
):
    page = next(t for n, t in site_pages(tmp_path).items() if n.startswith("migration-"))
    assert "finished" in page and "draining" in page
    assert ">75<" in page and ">70<" in page
    history = re.search(r'id="history-data"[^>]*>(.*?)</script>', page, re.S)
    assert history is not None
    points = json.loads(history.group(1))
    assert [p["lag"] for p in points] == [45, 20, 0]
    assert "&lt;i&gt;legacy&lt;/i&gt;-reader" in page
    assert "&lt;script&gt;bad&lt;/script&gt; amount" in page
    assert "billing-invoicer" in page
    assert "v1 data left in <code>orders</code>" in page and "42 record(s)" in page
    assert "All of v1's data is aged out by 2026-11-" in page


def test_slugs_are_safe_file_names_and_never_collide():
    taken: set[str] = set()
    names = ["orders-value", "a/b", "A<b", "a_b", "..", "a b", "ORDERS-value"]
    slugs = [slug(n, taken) for n in names]
    assert len(set(s.lower() for s in slugs)) == len(names)
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", s) and not s.startswith(".") for s in slugs)
    assert slugs[0] == "orders-value"


def test_a_version_that_does_not_load_is_shown_with_its_error(tmp_path):
    store = make_store(tmp_path)
    (store / "subjects" / "orders-value" / "v4.avsc").write_text('{"type": "record"')
    site = build_site(FileTree(store), store, SubjectLevels(default=Level.BACKWARD))
    page = pages(site)["subject-orders-value.html"]
    assert "v4.avsc" in page and 'class="error"' in page


# -- the census file ---------------------------------------------------------------------------


def census_error(path: Path) -> CensusFileError:
    with pytest.raises(CensusFileError) as caught:
        read_census(path)
    return caught.value


def test_the_census_names_its_subjects_and_the_topics_own(tmp_path):
    census = read_census(CENSUS)
    assert census.topic == "orders"
    assert set(census.subjects()) == {"orders-key", "orders-value"}


@pytest.mark.parametrize(
    ("content", "words", "line"),
    [
        (b"", "empty", 1),
        (b'{\n  "topic": \n}', "not JSON", 3),
        (b"[1, 2]", "not an object", 1),
        (b'{"census_format": 2, "topic": "t"}', "census_format is 2", 1),
        (b"\xff\xfe\x00garbage", "UTF-8", 1),
    ],
)
def test_a_file_that_is_not_a_census_is_refused_with_its_line(tmp_path, content, words, line):
    path = tmp_path / "census.json"
    path.write_bytes(content)
    err = census_error(path)
    assert words in err.message
    assert err.location is not None and err.location.line == line
    assert str(path) in str(err.location)


def test_a_census_field_of_the_wrong_type_is_refused_at_its_place(tmp_path):
    data = json.loads(CENSUS.read_text())
    data["values"]["versions"][1]["partitions"][0]["first_offset"] = "60"
    path = tmp_path / "census.json"
    path.write_text(json.dumps(data, indent=2))
    err = census_error(path)
    assert "first_offset" in err.message and "not a whole number" in err.message
    assert err.location.pointer == "/values/versions/1/partitions/0/first_offset"
    assert err.location.line is not None and err.location.line > 1


def test_a_missing_census_a_folder_and_a_huge_file_are_refused(tmp_path):
    assert "no such file" in census_error(tmp_path / "nope.json").message
    assert "is a directory" in census_error(tmp_path).message
    huge = tmp_path / "huge.json"
    with huge.open("wb") as handle:
        handle.truncate(17 * 1024 * 1024)
    assert "larger than 16 MiB" in census_error(huge).message


# -- the progress history ----------------------------------------------------------------------


def test_the_job_leaves_one_history_point_per_batch_with_its_lag(tmp_path):
    progress = ProgressFile(tmp_path / "progress.json")
    sources = [{"endOffset": '{"t":{"0":10,"1":5}}', "latestOffset": '{"t":{"0":14,"1":5}}'}]
    metrics = {"in": 3, "converted": 3, "dead_letter": 0, "skipped": 0}
    for batch in (0, 0, 1):  # a batch seen twice is one point
        progress.record(
            {
                "batchId": batch,
                "observedMetrics": {"schemacli_converter": metrics},
                "sources": sources,
            }
        )
    points = read_history(tmp_path / HISTORY)
    assert [(p.batch, p.totals["in"], p.lag) for p in points] == [(0, 3, 4), (1, 6, 4)]


def test_the_lag_is_unknown_without_both_offsets():
    assert source_lag(None) is None
    assert source_lag([{"endOffset": {"t": {"0": 3}}}]) is None
    assert source_lag([{"endOffset": {"t": {"0": 3}}, "latestOffset": {"t": {"0": 3}}}]) == 0


def test_a_long_history_is_thinned_not_grown_without_bound(tmp_path, monkeypatch):
    import converters.pipeline.progress as progress

    monkeypatch.setattr(progress, "HISTORY_LIMIT", 4000)
    path = tmp_path / HISTORY
    for batch in range(400):
        append_history(
            path, {"time": float(batch), "batch": batch, "totals": {"in": batch}, "lag": 0}
        )
    assert path.stat().st_size <= 4000
    batches = [p.batch for p in read_history(path)]
    assert batches == sorted(batches) and batches[-1] == 399 and batches[0] == 0


def test_a_corrupt_history_line_is_refused_by_line_but_a_cut_last_line_is_left_out(tmp_path):
    path = tmp_path / HISTORY
    good = json.dumps({"time": 1.0, "batch": 0, "totals": {"in": 1}, "lag": None})
    path.write_text(good + "\n" + '{"time": 2.0, "bat')
    assert [p.batch for p in read_history(path)] == [0]
    path.write_text(good + "\n" + '{"time": "x", "batch": 1, "totals": {}, "lag": 0}\n')
    with pytest.raises(Exception) as caught:
        read_history(path)
    assert caught.value.location.line == 2 and "corrupt progress history" in str(caught.value)


def test_a_history_longer_than_the_chart_keeps_is_thinned_evenly(tmp_path):
    path = tmp_path / HISTORY
    path.write_text(
        "".join(
            json.dumps({"time": float(i), "batch": i, "totals": {}, "lag": 0}) + "\n"
            for i in range(MAX_POINTS * 2 + 7)
        )
    )
    points = read_history(path)
    assert len(points) == MAX_POINTS
    assert points[0].batch == 0 and points[-1].batch == MAX_POINTS * 2 + 6


# -- the output folder -------------------------------------------------------------------------


def test_a_file_where_the_folder_must_be_is_refused_and_left_alone(tmp_path):
    out = tmp_path / "out"
    out.write_text("mine")
    with pytest.raises(WriteError, match="is a file, not a folder"):
        write_site(out, {"index.html": "x"})
    assert out.read_text() == "mine"


def test_a_folder_of_other_files_is_never_written_into(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(WriteError, match="not a schemacli report"):
        write_site(tmp_path, {"index.html": "x"})
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_an_earlier_report_is_replaced_in_place(tmp_path):
    out = tmp_path / "site"
    write_site(out, {"index.html": "one", "a.html": "a"})
    write_site(out, {"index.html": "two"})
    assert (out / "index.html").read_text() == "two"
    # a.html, a page of the earlier report this one no longer has, is left and stays listed:
    # the marker names every file of the folder, so the next report may write there again
    assert (out / "a.html").read_text() == "a"
    assert json.loads((out / MARKER).read_text())["files"] == ["a.html", "index.html"]


def test_a_read_only_folder_refuses_before_anything_is_written(tmp_path):
    parent = tmp_path / "ro"
    parent.mkdir()
    parent.chmod(0o555)  # the mode counts even for root (atomicwrite._writable)
    try:
        with pytest.raises(WriteError, match="nothing was written"):
            write_site(parent / "out", {"index.html": "x", "b.html": "y"})
        assert list(parent.iterdir()) == []
    finally:
        parent.chmod(0o755)


def test_every_planned_write_replaces_links_rather_than_writing_through_them(tmp_path):
    writes = plan(tmp_path / "out", {"index.html": "x"})
    assert all(w.replace and not w.follow_link for w in writes)


def test_the_document_topics_census_writes_is_read_and_charted(tmp_path):
    # The census's own builder (converters.census.model.document), not a hand-written file:
    # what `topics census -o json` prints is what report reads.
    from converters.census.model import NULL, Mode, PartitionTally, Registered, Retention, Span
    from converters.census.model import document as census_document

    tallies = []
    for partition, runs in (
        (0, {11: (60, 0, 59), 12: (40, 60, 99)}),
        (1, {12: (5, 0, 4), NULL: (1, 5, 5)}),
    ):
        tally = PartitionTally(partition, 0, 100, 0, 100)
        for kind, (count, first, last) in runs.items():
            span = Span()
            span.add(count, (first, first * 1000), (last, last * 1000))
            tally.values[kind] = span
            tally.scanned += count
        tallies.append(tally)
    doc = census_document(
        topic="orders",
        bootstrap="b:9092",
        scanned_at_ms=1_795_000_000_000,
        duration_s=0.1,
        mode=Mode(),
        retention=Retention(retention_ms=604_800_000, cleanup_policy="delete"),
        partitions=tallies,
        names={11: [Registered("orders-value", 1)], 12: [Registered("orders-value", 2)]},
        resolved_by={"source": "store", "where": "schemas"},
    )
    path = tmp_path / "census.json"
    path.write_text(json.dumps(doc))
    census = read_census(path)
    assert "orders-value" in census.subjects()
    store = make_store(tmp_path)
    page = pages(
        build_site(FileTree(store), store, SubjectLevels(default=Level.BACKWARD), censuses=[census])
    )["subject-orders-value.html"]
    embedded = re.search(r'id="census-0"[^>]*>(.*?)</script>', page, re.S)
    assert embedded is not None and json.loads(embedded.group(1)) == json.loads(json.dumps(doc))
    assert "60 record(s) in orders" in page and "45 record(s) in orders" in page
