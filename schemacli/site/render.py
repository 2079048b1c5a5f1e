"""The site's pages as HTML text: ``pages(site)`` -> {file name: text}.

Every text that comes from a user (subject and consumer names, schema docs and JSON, census
fields, state files) goes through ``esc``; JSON embedded for the charts goes through
``json_data``, which escapes ``<``, ``>`` and ``&`` so no text can close its element. Pages link
to each other by relative file names, load nothing, and carry a Content-Security-Policy that
allows only the site's own inline style and script (``assets``).
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Collection, Iterable
from typing import Any

from schemacli import __version__
from schemacli.contracts.evolution.levels import Level
from schemacli.contracts.findings import Finding
from schemacli.errors import Location
from schemacli.redact import redact
from schemacli.site.assets import CSP, CSS, JS
from schemacli.site.model import (
    CensusEntry,
    MigrationPage,
    Site,
    SubjectPage,
    VersionEntry,
)

INDEX = "index.html"


def esc(value: object) -> str:
    """Text safe between tags and inside double-quoted attributes."""
    return html.escape(str(value), quote=True)


def json_data(value: Any) -> str:
    """JSON to embed in a ``<script type="application/json">``: ``<``, ``>`` and ``&`` as
    ``\\u`` escapes, so the text cannot end the element or open a comment; JSON.parse reads
    back the same value."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def subject_file(page: SubjectPage) -> str:
    return f"subject-{page.slug}.html"


def migration_file(page: MigrationPage) -> str:
    return f"{page.slug}.html"


def pages(site: Site) -> dict[str, str]:
    """Every page of the site: file name (relative to the output folder) -> HTML."""
    out = {INDEX: _index(site)}
    for page in site.subjects:
        out[subject_file(page)] = _subject(site, page)
    for migration in site.migrations:
        out[migration_file(migration)] = _migration(site, migration)
    return out


# -- the frame -------------------------------------------------------------------------------


def _frame(site: Site, title: str, crumb: str | None, body: str) -> str:
    generated = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(site.generated))
    crumb_html = f'<span class="crumb">/ {esc(crumb)}</span>' if crumb else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f'<meta name="generator" content="schemacli {esc(__version__)}">\n'
        f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f'<header><a href="{INDEX}">schemacli report</a>{crumb_html}</header>\n'
        f"<main>\n{body}\n"
        f"<footer>Generated {esc(generated)} by schemacli {esc(__version__)} from the store "
        f"<code>{esc(site.store)}</code>. A static page: it loads nothing.</footer>\n"
        f"</main>\n<script>{JS}</script>\n</body>\n</html>\n"
    )


def _badge(ok: bool | None, yes: str = "compatible", no: str = "incompatible") -> str:
    if ok is None:
        return '<span class="badge warn">invalid</span>'
    return f'<span class="badge {"ok" if ok else "bad"}">{esc(yes if ok else no)}</span>'


def _level(level: Level) -> str:
    return f'<span class="badge level">{esc(level.value)}</span>'


def _where(location: Location) -> str:
    return f"<code>{esc(location)}</code>" if location.source or location.line else ""


def _findings(findings: Iterable[Finding]) -> str:
    rows = []
    for f in findings:
        where = _where(f.location)
        if f.reader is not None:
            where = f"writer {where}<br>reader {_where(f.reader.location)}"
        rows.append(
            f"<tr><td><code>{esc(f.kind)}</code></td><td>{esc(f.message)}"
            + (f'<div class="muted">{esc(f.hint)}</div>' if f.hint else "")
            + f"</td><td>{where}</td></tr>"
        )
    if not rows:
        return ""
    return (
        "<table><thead><tr><th>kind</th><th>finding</th><th>where</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def _when(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


def _when_ms(ms: Any) -> str:
    if not isinstance(ms, int) or isinstance(ms, bool):
        return "-"
    return _when(ms / 1000)


def _table(
    head: Iterable[str], rows: Iterable[Iterable[str]], *, nums: Collection[int] = ()
) -> str:
    """A table whose cells are HTML already (each caller escapes its texts)."""
    num = ' class="num"'
    th = "".join(f"<th{num if i in nums else ''}>{h}</th>" for i, h in enumerate(head))
    body = "".join(
        "<tr>"
        + "".join(f"<td{num if i in nums else ''}>{c}</td>" for i, c in enumerate(r))
        + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


# -- the index -------------------------------------------------------------------------------


def _index(site: Site) -> str:
    parts = [f"<h1>Store <code>{esc(site.store)}</code></h1>"]
    if site.readers_error:
        parts.append(
            f'<p class="error">The declared readers could not be read:\n{esc(site.readers_error)}'
            "</p>"
        )
    rows = []
    for page in site.subjects:
        latest = page.latest
        if page.error is not None:
            verdict = '<span class="badge warn">unreadable</span>'
        elif latest is None:
            verdict = "-"
        elif latest.check is None:
            verdict = _badge(None)
        else:
            verdict = _badge(latest.check.compatible)
        readers = "-"
        if page.readers:
            broken = page.broken_readers
            readers = f"{len(page.readers)} " + (
                f'<span class="badge bad">{broken} broken</span>'
                if broken
                else '<span class="badge ok">all read the latest</span>'
            )
        rows.append(
            [
                f'<a href="{esc(subject_file(page))}">{esc(page.subject)}</a>',
                _level(page.level),
                str(len(page.versions)),
                esc(latest.name) if latest is not None else "-",
                verdict,
                readers,
                str(len(page.censuses)) if page.censuses else "-",
            ]
        )
    parts.append(f"<h2>Subjects ({len(site.subjects)})</h2>")
    if rows:
        parts.append(
            _table(
                [
                    "subject",
                    "level",
                    "versions",
                    "latest type",
                    "latest at its level",
                    "declared readers",
                    "censuses",
                ],
                rows,
                nums={2},
            )
        )
    else:
        parts.append('<p class="muted">The store holds no subjects.</p>')
    if site.migrations:
        parts.append("<h2>Migrations</h2>")
        parts.append(
            _table(
                ["state directory", "window", "in", "converted", "dead-lettered"],
                [
                    [
                        f'<a href="{esc(migration_file(m))}">{esc(m.state_dir)}</a>',
                        *_migration_cells(m),
                    ]
                    for m in site.migrations
                ],
                nums={2, 3, 4},
            )
        )
    if site.unmatched_censuses:
        parts.append("<h2>Censuses of no subject in the store</h2><ul>")
        parts += [
            f"<li><code>{esc(c.source)}</code>: topic <code>{esc(c.topic)}</code></li>"
            for c in site.unmatched_censuses
        ]
        parts.append("</ul>")
    return _frame(site, f"schemacli report: {site.store}", None, "\n".join(parts))


def _migration_cells(m: MigrationPage) -> list[str]:
    if m.overview is None:
        return ['<span class="badge warn">unreadable</span>', "-", "-", "-"]
    totals = m.overview.status.totals
    return [
        esc(m.overview.window.state if m.overview.window else "not deployed"),
        *(str(totals.get(k, 0)) for k in ("in", "converted", "dead_letter")),
    ]


# -- a subject -------------------------------------------------------------------------------


def _subject(site: Site, page: SubjectPage) -> str:
    parts = [
        f"<h1>{esc(page.subject)}</h1>",
        f"<p>Level {_level(page.level)} · {len(page.versions)} version(s)</p>",
    ]
    if page.error is not None:
        parts.append(f'<p class="error">{esc(page.error)}</p>')
    if page.versions:
        parts.append("<h2>Timeline</h2>")
        parts.append(_timeline(page))
    parts.append("<h2>Declared readers</h2>")
    parts.append(_readers(page))
    for i, census in enumerate(page.censuses):
        parts.append(_census(census, i))
    if page.versions:
        parts.append("<h2>Versions</h2>")
        parts += [_version(page, v) for v in reversed(page.versions)]
    return _frame(site, f"{page.subject} - schemacli report", page.subject, "\n".join(parts))


def _timeline(page: SubjectPage) -> str:
    items = []
    for v in page.versions:
        if v.error is not None:
            items.append(f'<li class="bad"><a href="#v{v.number}">v{v.number}</a> invalid</li>')
            continue
        ok = v.check.compatible if v.check is not None else None
        changes = len(v.diff.changes) if v.diff is not None else 0
        what = "first version" if v.number == 1 else f"{changes} change(s)"
        data = "".join(
            f' <span class="muted">· {esc(count)} record(s) in {esc(topic)}</span>'
            for topic, count in _in_data(page, v.number)
        )
        items.append(
            f'<li class="{"" if ok else "bad"}"><a href="#v{v.number}">v{v.number}</a> '
            f'<span class="muted">{esc(what)}</span> '
            f"{_badge(ok) if v.number > 1 else ''}{data}</li>"
        )
    return f'<ol class="timeline">{"".join(items)}</ol>'


def _in_data(page: SubjectPage, number: int) -> list[tuple[str, int]]:
    """(topic, records) for each census that counts records written with this version."""
    found = []
    for census in page.censuses:
        count = sum(
            entry.get("count") or 0
            for side in ("keys", "values")
            for entry in (census.data.get(side) or {}).get("versions") or []
            if entry.get("subject") == page.subject and entry.get("version") == number
        )
        if count:
            found.append((census.topic, count))
    return found


def _readers(page: SubjectPage) -> str:
    if not page.readers:
        return (
            '<p class="muted">No consumer declares a reader schema for this subject '
            "(<code>readers/&lt;consumer&gt;/" + esc(page.subject) + ".avsc</code>).</p>"
        )
    numbers = [v.number for v in page.versions if v.error is None]
    head = ["consumer", "owner", "contact", "groups"] + [f"reads v{n}" for n in numbers]
    rows = []
    details = []
    for entry in page.readers:
        r = entry.reader
        cells = [
            f"<code>{esc(r.consumer)}</code>",
            esc(r.owner or "-"),
            esc(r.contact or "-"),
            ", ".join(f"<code>{esc(g)}</code>" for g in r.groups),
        ]
        if entry.error is not None:
            cells.append('<span class="badge warn">invalid reader schema</span>')
            details.append(f'<h3>{esc(r.consumer)}</h3><p class="error">{esc(entry.error)}</p>')
        else:
            by_version = {v.version: v for v in entry.verdicts}
            for n in numbers:
                verdict = by_version.get(n)
                cells.append(_badge(verdict.compatible, "reads", "cannot read") if verdict else "-")
            for verdict in entry.verdicts:
                if not verdict.compatible:
                    details.append(
                        f"<h3>{esc(r.consumer)} cannot read v{verdict.version}</h3>"
                        + _findings(verdict.findings)
                    )
        rows.append(cells)
    return _table(head, rows) + "".join(details)


def _census(census: CensusEntry, i: int) -> str:
    data = census.data
    parts = [
        f"<h2>Census of topic <code>{esc(census.topic)}</code></h2>",
        f'<p class="muted">From <code>{esc(census.source)}</code>, scanned '
        f"{esc(data.get('scanned_at') or '-')}; "
        f"{esc((data.get('totals') or {}).get('messages', '-'))} record(s) read"
        + ("" if data.get("complete", True) else " (incomplete: the read timed out)")
        + ".</p>",
    ]
    for side in ("values", "keys"):
        block = data.get(side) or {}
        versions = block.get("versions") or []
        rows = [
            [
                esc(v.get("subject") if v.get("subject") is not None else "unknown"),
                esc(v.get("version") if v.get("version") is not None else "-"),
                esc(v.get("id")),
                esc(v.get("count")),
                esc(_when_ms(v.get("first_timestamp_ms"))),
                esc(_when_ms(v.get("last_timestamp_ms"))),
                esc(_when_ms(v.get("all_aged_out_at_ms"))),
                esc(
                    ", ".join(
                        f"p{r.get('partition')}: {r.get('first_offset')}..{r.get('last_offset')}"
                        for r in v.get("partitions") or []
                    )
                ),
            ]
            for v in versions
        ]
        other = []
        for kind in ("unframed", "null"):
            count = (block.get(kind) or {}).get("count")
            if count:
                name = "tombstones" if (kind, side) == ("null", "values") else f"{kind}"
                other.append(f"{esc(count)} {esc(name)}")
        if rows or other:
            parts.append(f"<h3>{esc(side)}</h3>")
        if rows:
            parts.append(
                _table(
                    [
                        "subject",
                        "version",
                        "id",
                        "records",
                        "first",
                        "last",
                        "all aged out at",
                        "offsets per partition",
                    ],
                    rows,
                    nums={3},
                )
            )
        if other:
            parts.append(f'<p class="muted">Also: {", ".join(other)}.</p>')
    target = f"census-chart-{i}"
    parts.append(f'<div class="chart" id="{target}"></div>')
    parts.append(
        f'<script type="application/json" id="census-{i}" data-chart="census" '
        f'data-target="{target}">{json_data(data)}</script>'
    )
    return "\n".join(parts)


def _version(page: SubjectPage, v: VersionEntry) -> str:
    parts = [f'<section class="version" id="v{v.number}">', f"<h3>v{v.number}</h3>"]
    parts.append(f'<p class="muted"><code>{esc(v.source)}</code></p>')
    if v.error is not None:
        parts.append(f'<p class="error">{esc(v.error)}</p></section>')
        return "\n".join(parts)
    parts.append(
        f"<p>Type <code>{esc(v.name)}</code> · fingerprint (CRC-64-AVRO) "
        f"<code>{esc(v.fingerprint)}</code></p>"
    )
    if v.doc:
        parts.append(f"<p>{esc(v.doc)}</p>")
    if v.check is not None and v.number > 1:
        against = ", ".join(f"v{n}" for n in v.check.checked_against) or "none"
        parts.append(
            f"<p>At {_level(page.level)} (against {esc(against)}): {_badge(v.check.compatible)}"
            + (f" identical to v{v.check.identical_to}" if v.check.identical_to else "")
            + "</p>"
        )
        parts.append(_findings(f for f in v.check.findings))
    if v.diff is not None:
        verdicts = " ".join(
            f"{esc(lv.level.value)} {_badge(lv.compatible)}"
            for lv in v.diff.verdicts
            if lv.level is not Level.NONE
        )
        parts.append(f"<p>From v{v.number - 1}: {verdicts}</p>")
        if v.diff.changes:
            parts.append(
                _table(
                    ["change", "what", "where"],
                    [
                        [f"<code>{esc(c.kind)}</code>", esc(c.message), _where(c.location)]
                        for c in v.diff.changes
                    ],
                )
            )
        else:
            parts.append('<p class="muted">No change in the schema\'s JSON that Avro reads.</p>')
    parts.append(f"<details><summary>Schema</summary><pre>{esc(v.schema_text)}</pre></details>")
    parts.append("</section>")
    return "\n".join(parts)


# -- a migration -----------------------------------------------------------------------------


def _migration(site: Site, page: MigrationPage) -> str:
    parts = [f"<h1>Migration <code>{esc(page.state_dir)}</code></h1>"]
    o = page.overview
    if o is None:
        parts.append(f'<p class="error">{esc(page.error or "not read")}</p>')
        return _frame(
            site, f"migration {page.state_dir} - schemacli report", "migration", "\n".join(parts)
        )
    st = o.status
    window = o.window
    if window is None:
        parts.append('<p class="muted">No window recorded (never deployed).</p>')
    else:
        parts.append(f'<p>Window: <span class="badge level">{esc(window.state)}</span></p>')
        items = "".join(
            f'<li>{esc(state)} <span class="muted">{esc(_when(window.since.get(state)))}</span>'
            "</li>"
            for state in ("planned", "running", "draining", "finished")
            if state in window.since
        )
        parts.append(f'<ol class="timeline">{items}</ol>')
    parts.append("<h2>Counts</h2>")
    totals = st.totals
    parts.append(
        _table(
            ["in", "converted", "dead-lettered", "skipped", "tombstones"],
            [
                [
                    esc(totals.get(k, 0))
                    for k in ("in", "converted", "dead_letter", "skipped", "tombstone")
                ]
            ],
            nums={0, 1, 2, 3, 4},
        )
    )
    parts.append(
        f"<p>Converter {'running' if st.running else 'not running'}"
        + (f" (pid {esc(st.pid)})" if st.running and st.pid else "")
        + "; last committed batch "
        + esc(st.last_committed_batch if st.last_committed_batch is not None else "-")
        + f"; updated {esc(_when(st.updated))}</p>"
    )
    if st.partitions:
        parts.append("<h3>Committed v2 offsets (from the checkpoint)</h3>")
        parts.append(
            _table(
                ["topic", "partition", "next offset"],
                [[esc(p.topic), esc(p.partition), esc(p.committed)] for p in st.partitions],
                nums={1, 2},
            )
        )
    parts.append("<h2>Over time</h2>")
    if o.history:
        points = [
            {"time": p.time, "batch": p.batch, "totals": p.totals, "lag": p.lag} for p in o.history
        ]
        parts.append('<div class="chart" id="history-chart"></div>')
        parts.append(
            '<script type="application/json" id="history-data" data-chart="history" '
            f'data-target="history-chart">{json_data(points)}</script>'
        )
        last = o.history[-1]
        parts.append(
            f'<p class="muted">{len(o.history)} point(s), the last at batch {esc(last.batch)} '
            f"({esc(_when(last.time))}), lag {esc(last.lag if last.lag is not None else '-')}.</p>"
        )
    else:
        parts.append(
            '<p class="muted">No progress history yet (the converter writes '
            "<code>progress-history.jsonl</code> after each batch).</p>"
        )
    parts.append("<h2>Dependents of v1 (the last look)</h2>")
    parts.append(_dependents(o.dependents))
    parts.append("<h2>Final report</h2>")
    parts.append(_final(o.final_report))
    return _frame(
        site, f"migration {page.state_dir} - schemacli report", "migration", "\n".join(parts)
    )


def _dependents(deps: dict[str, Any] | None) -> str:
    if not deps:
        return (
            '<p class="muted">Not looked at yet: <code>schemacli migrate status -b '
            "HOST:PORT</code> looks, and keeps what it saw.</p>"
        )
    found = deps.get("groups")
    groups: dict[str, Any] = found if isinstance(found, dict) else {}
    when = deps.get("looked_at")
    rows = []
    for group, offsets in sorted(groups.items()):
        shown = (
            ", ".join(f"{k}: {v}" for k, v in sorted(offsets.items()))
            if isinstance(offsets, dict)
            else str(offsets)
        )
        rows.append([f"<code>{esc(group)}</code>", esc(shown)])
    looked = _when(when) if isinstance(when, int | float) and not isinstance(when, bool) else "-"
    head = f'<p class="muted">Looked at {esc(looked)}.</p>'
    if not rows:
        return head + '<p class="muted">No consumer group had offsets on v1.</p>'
    return head + _table(["consumer group", "committed offsets (topic/partition: offset)"], rows)


_FINAL_KNOWN = (
    "v2_topic",
    "v1_topic",
    "dead_letter_topic",
    "window_start",
    "window_end",
    "totals",
    "dead_letters_by_error",
    "moved_groups",
    "forced",
    "overridden",
    "v1_data",
)


def _final(report: dict[str, Any] | None) -> str:
    if not report:
        return (
            '<p class="muted">The window is not finished '
            "(<code>schemacli migrate finish</code>).</p>"
        )
    parts = [
        f"<p><code>{esc(report.get('v2_topic'))}</code> &#8594; "
        f"<code>{esc(report.get('v1_topic'))}</code>: window "
        f"{esc(_when(_number(report.get('window_start'))))} to "
        f"{esc(_when(_number(report.get('window_end'))))}</p>"
    ]
    totals = report.get("totals") if isinstance(report.get("totals"), dict) else {}
    if totals:
        parts.append(_table(list(map(esc, totals)), [[esc(v) for v in totals.values()]]))
    errors = report.get("dead_letters_by_error")
    if isinstance(errors, dict) and errors:
        topic = esc(report.get("dead_letter_topic"))
        parts.append(f"<h3>Dead letters in <code>{topic}</code></h3>")
        parts.append(
            _table(["records", "error"], [[esc(n), esc(e)] for e, n in errors.items()], nums={0})
        )
    moved = report.get("moved_groups")
    if isinstance(moved, list):
        parts.append(
            "<p>Consumer groups on v2: "
            + (", ".join(f"<code>{esc(g)}</code>" for g in moved) or "none seen")
            + "</p>"
        )
    v1_data = report.get("v1_data")
    if isinstance(v1_data, dict):
        parts.append(_v1_data(v1_data))
    if report.get("forced"):
        parts.append('<p class="warn">Finished with --force past:</p><ul>')
        parts += [f"<li>{esc(r)}</li>" for r in report.get("overridden") or []]
        parts.append("</ul>")
    extra = {k: v for k, v in report.items() if k not in _FINAL_KNOWN}
    if extra:
        parts.append("<h3>More</h3>")
        shown = redact(json.dumps(extra, indent=2, ensure_ascii=False, default=str))
        parts.append(f"<pre>{esc(shown)}</pre>")
    return "\n".join(parts)


def _v1_data(data: dict[str, Any]) -> str:
    """What v1 still held when the window finished (``finish.v1_data_left``: a census of v1)."""
    partial = "" if data.get("complete", True) else " (read cut short: a lower bound)"
    parts = [
        f"<h3>v1 data left in <code>{esc(data.get('topic'))}</code></h3>",
        f"<p>{esc(data.get('records'))} record(s){esc(partial)}, scanned "
        f"{esc(data.get('scanned_at') or '-')}.</p>",
    ]
    versions = data.get("versions")
    if isinstance(versions, list) and versions:
        parts.append(
            _table(
                ["writer id", "records", "first", "last", "oldest ages out", "all aged out"],
                [
                    [esc(v.get("id")), esc(v.get("count"))]
                    + [
                        esc(_when_ms(v.get(k)))
                        for k in (
                            "first_timestamp_ms",
                            "last_timestamp_ms",
                            "oldest_ages_out_at_ms",
                            "all_aged_out_at_ms",
                        )
                    ]
                    for v in versions
                    if isinstance(v, dict)
                ],
                nums={0, 1},
            )
        )
    if data.get("unframed") or data.get("tombstones"):
        parts.append(
            f'<p class="muted">Also: {esc(data.get("unframed") or 0)} unframed, '
            f"{esc(data.get('tombstones') or 0)} tombstones.</p>"
        )
    if data.get("all_aged_out_at_ms") is not None:
        parts.append(
            f"<p>All of v1's data is aged out by "
            f"{esc(_when_ms(data.get('all_aged_out_at_ms')))}.</p>"
        )
    elif data.get("kept"):
        parts.append(f"<p>v1's data is kept until deleted ({esc(data.get('kept'))}).</p>")
    return "\n".join(parts)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
