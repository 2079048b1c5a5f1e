"""The site ``schemacli report --html`` writes, opened from files in a real headless Chromium:
every page loads with no console error and asks nothing of the network, the charts draw from
data equal to the census and the progress history, and users' text never runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from tests.report_site import CENSUS, HOSTILE_DOC, HOSTILE_NAME, make_state_dir, make_store

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("site")
    store = make_store(root)
    state = make_state_dir(root)
    out = root / "out"
    result = CliRunner().invoke(
        app,
        [
            "report",
            "--html",
            str(out),
            "--store",
            str(store),
            "--census",
            str(CENSUS),
            "--state-dir",
            str(state),
        ],
    )
    assert result.exit_code == 0, result.output
    return out


def pages_of(site: Path) -> list[Path]:
    return sorted(site.glob("*.html"))


def test_every_page_loads_from_a_file_without_errors_or_network(browser, site, artifacts):
    assert len(pages_of(site)) == 4
    for page in pages_of(site):
        load = browser.load(page.as_uri())
        assert load.errors == [], (page.name, load.errors)
        assert load.blocked == [], (page.name, load.blocked)
        assert all(url.startswith(("file:", "data:", "about:")) for url in load.requests), (
            page.name,
            load.requests,
        )
        assert browser.evaluate("document.querySelector('main') !== null")
        browser.screenshot(artifacts / f"{page.stem}.png")


def test_the_census_chart_reads_the_census_and_draws_every_range(browser, site):
    browser.load((site / "subject-orders-value.html").as_uri())
    embedded = browser.evaluate("JSON.parse(document.getElementById('census-0').textContent)")
    census = json.loads(CENSUS.read_text())
    assert embedded == census
    bars = browser.evaluate(
        "Array.from(document.querySelectorAll('#census-chart-0 svg[data-axis=offsets] rect'))"
        ".map(r => [Number(r.dataset.id), Number(r.dataset.partition)])"
    )
    expected = [
        [v["id"], r["partition"]] for v in census["values"]["versions"] for r in v["partitions"]
    ]
    assert sorted(bars) == sorted(expected)
    over_time = browser.evaluate(
        "document.querySelectorAll('#census-chart-0 svg[data-axis=time] rect').length"
    )
    assert over_time == len(census["values"]["versions"])


def test_the_migration_chart_reads_the_progress_history(browser, site):
    page = next(site.glob("migration-*.html"))
    browser.load(page.as_uri())
    points = browser.evaluate("JSON.parse(document.getElementById('history-data').textContent)")
    state_history = Path(site.parent / "orders-v2--orders" / "progress-history.jsonl")
    history = [json.loads(line) for line in state_history.read_text().splitlines()]
    assert [(p["batch"], p["totals"], p["lag"]) for p in points] == [
        (h["batch"], h["totals"], h["lag"]) for h in history
    ]
    lines = browser.evaluate(
        "Array.from(document.querySelectorAll('#history-chart polyline'))"
        ".map(l => l.dataset.series)"
    )
    assert lines == ["in", "converted", "dead_letter", "skipped", "lag"]


def test_hostile_names_and_docs_are_shown_as_text_and_never_run(browser, site):
    page = next(site.glob("subject-x_*.html"))
    load = browser.load(page.as_uri())
    assert load.errors == []
    assert browser.evaluate("document.querySelectorAll('img').length") == 0
    assert browser.evaluate("document.querySelector('h1').textContent") == HOSTILE_NAME
    assert HOSTILE_DOC.replace("\u2028", "") in browser.evaluate(
        "document.body.textContent"
    ).replace("\u2028", "")


def test_the_harness_sees_a_console_error_and_a_network_request(browser, tmp_path):
    # The canary: a page that breaks its own rules is caught, so a clean run means clean pages.
    noisy = tmp_path / "noisy.html"
    noisy.write_text(
        "<!DOCTYPE html><html><body><script>console.error('boom');"
        "fetch('http://example.invalid/x').catch(function () {});</script></body></html>"
    )
    load = browser.load(noisy.as_uri())
    assert any("boom" in e for e in load.errors)
    assert any(url.startswith("http://example.invalid") for url in load.blocked + load.requests)


def test_the_pages_policy_stops_a_script_that_slipped_in(browser, site, tmp_path):
    # Were escaping ever to fail, the Content-Security-Policy still runs only our own script.
    page = (site / "index.html").read_text()
    tampered = tmp_path / "index.html"
    tampered.write_text(page.replace("<main>", "<main><script>document.title='owned'</script>"))
    load = browser.load(tampered.as_uri())
    assert browser.evaluate("document.title") != "owned"
    assert any("Content Security Policy" in e for e in load.errors), load.errors
