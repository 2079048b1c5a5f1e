"""The site's one style sheet and one script, inlined in every page (no file to fetch, no CDN).

The pages' Content-Security-Policy allows exactly these two texts (by their SHA-256), and nothing
else: no other script or style runs, and nothing is fetched, even if a user's text slipped past
the escaping. The script draws the charts as SVG from each page's JSON data elements
(``<script type="application/json" data-chart=...>``), building every node with DOM calls and
every label with ``textContent`` (never HTML from data).
"""

from __future__ import annotations

import base64
import hashlib

CSS = """
:root { --fg: #1d2330; --muted: #5b6475; --line: #d9dde6; --bg: #ffffff; --soft: #f4f6fa;
  --ok: #1a7f37; --bad: #c62828; --warn: #9a6700; --accent: #2f5fb3; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--fg); background: var(--bg); }
header { background: #1d2330; color: #fff; padding: 10px 24px; }
header a { color: #fff; text-decoration: none; font-weight: 600; }
header .crumb { color: #aab3c5; margin-left: 8px; }
main { max-width: 1200px; margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 22px; margin: 8px 0 4px; word-break: break-all; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid var(--line);
  padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
table { border-collapse: collapse; width: 100%; margin: 6px 0 12px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { background: var(--soft); padding: 10px; overflow: auto; max-height: 480px;
  border-radius: 4px; }
.muted { color: var(--muted); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px;
  font-weight: 600; border: 1px solid currentColor; white-space: nowrap; }
.ok { color: var(--ok); } .bad { color: var(--bad); } .warn { color: var(--warn); }
.level { color: var(--accent); }
.timeline { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; list-style: none;
  padding: 0; margin: 8px 0; }
.timeline li { border: 1px solid var(--line); border-radius: 6px; padding: 4px 10px;
  background: var(--soft); }
.timeline li.bad { border-color: var(--bad); }
.timeline li + li::before { content: "\\2192"; color: var(--muted); margin: 0 8px 0 -2px; }
.version { border: 1px solid var(--line); border-radius: 6px; padding: 4px 14px 10px;
  margin: 12px 0; }
.error { border-left: 4px solid var(--bad); background: #fdecea; padding: 8px 12px;
  white-space: pre-wrap; }
.chart { margin: 8px 0 16px; overflow-x: auto; }
.chart svg { background: #fff; border: 1px solid var(--line); }
.chart text { font: 11px system-ui, sans-serif; fill: var(--fg); }
.chart .axis { stroke: #98a1b3; stroke-width: 1; }
.chart .grid { stroke: #eef0f4; stroke-width: 1; }
footer { color: var(--muted); font-size: 12px; margin-top: 32px; }
"""

JS = r"""
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var PALETTE = ["#2f5fb3", "#d1495b", "#2a9d8f", "#e9a03b", "#7b4fb3", "#5c8001", "#b3541e",
    "#0081a7", "#9c6644", "#6d597a"];

  function el(name, attrs, parent) {
    var node = document.createElementNS(NS, name);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    if (parent) { parent.appendChild(node); }
    return node;
  }
  function text(parent, x, y, words, anchor) {
    var t = el("text", {x: x, y: y, "text-anchor": anchor || "start"}, parent);
    t.textContent = words;
    return t;
  }
  function tip(node, words) { el("title", {}, node).textContent = words; }
  function when(ms) {
    if (ms === null || ms === undefined) { return "-"; }
    return new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
  }
  function short(ms) { return new Date(ms).toISOString().slice(0, 16).replace("T", " "); }
  function label(v) {
    var who = v.subject === null || v.subject === undefined ? "unknown id" :
      v.subject + " v" + v.version;
    return who + " (id " + v.id + ")";
  }
  function scale(lo, hi, a, b) {
    var span = hi > lo ? hi - lo : 1;
    return function (x) { return a + (x - lo) / span * (b - a); };
  }

  // A census: per side, the versions over offsets (one band per partition) and over time.
  function censusChart(data, target) {
    var parts = {};
    (data.partitions || []).forEach(function (p) { parts[p.partition] = p; });
    ["values", "keys"].forEach(function (sideName) {
      var side = data[sideName];
      if (!side || !side.versions || !side.versions.length) { return; }
      var colors = {};
      side.versions.forEach(function (v, i) { colors[v.id] = PALETTE[i % PALETTE.length]; });
      var rows = [];
      Object.keys(parts).map(Number).sort(function (a, b) { return a - b; }).forEach(function (p) {
        side.versions.forEach(function (v) {
          (v.partitions || []).forEach(function (r) {
            if (r.partition === p) { rows.push({part: parts[p], v: v, r: r}); }
          });
        });
      });
      var W = 900, left = 230, right = 20, rowH = 18, top = 34;
      var heading = document.createElement("h3");
      heading.textContent = sideName + ": versions over offsets (per partition)";
      target.appendChild(heading);
      var svg = el("svg", {width: W, height: top + rows.length * rowH + 30, role: "img",
        "data-side": sideName, "data-axis": "offsets"}, target);
      text(svg, left, 14, "offset within each partition's retained range [low, high)");
      rows.forEach(function (row, i) {
        var y = top + i * rowH;
        var x = scale(row.part.low, Math.max(row.part.high - 1, row.part.low + 1), left, W - right);
        text(svg, left - 8, y + 12, "p" + row.r.partition + "  " + label(row.v), "end");
        el("line", {x1: left, x2: W - right, y1: y + rowH / 2, y2: y + rowH / 2,
          "class": "grid"}, svg);
        var x1 = x(row.r.first_offset), x2 = Math.max(x(row.r.last_offset), x1 + 2);
        var bar = el("rect", {x: x1, y: y + 3, width: x2 - x1, height: rowH - 6,
          fill: colors[row.v.id], "data-id": row.v.id, "data-partition": row.r.partition}, svg);
        tip(bar, label(row.v) + ": " + row.r.count + " record(s), offsets " + row.r.first_offset +
          " to " + row.r.last_offset + " of [" + row.part.low + ", " + row.part.high + ")");
      });
      var times = [];
      side.versions.forEach(function (v) {
        if (v.first_timestamp_ms !== null && v.first_timestamp_ms !== undefined) {
          times.push(v.first_timestamp_ms);
        }
        if (v.last_timestamp_ms !== null && v.last_timestamp_ms !== undefined) {
          times.push(v.last_timestamp_ms);
        }
      });
      if (!times.length) { return; }
      var lo = Math.min.apply(null, times), hi = Math.max.apply(null, times);
      var h2 = document.createElement("h3");
      h2.textContent = sideName + ": versions over time (first to last record)";
      target.appendChild(h2);
      var svg2 = el("svg", {width: W, height: top + side.versions.length * rowH + 36, role: "img",
        "data-side": sideName, "data-axis": "time"}, target);
      var xt = scale(lo, hi, left, W - right);
      var bottom = top + side.versions.length * rowH + 4;
      el("line", {x1: left, x2: W - right, y1: bottom, y2: bottom, "class": "axis"}, svg2);
      for (var k = 0; k <= 4; k++) {
        var t = lo + (hi - lo) * k / 4, xx = xt(t);
        el("line", {x1: xx, x2: xx, y1: top - 4, y2: bottom, "class": "grid"}, svg2);
        text(svg2, xx, bottom + 14, short(t), k === 0 ? "start" : (k === 4 ? "end" : "middle"));
      }
      side.versions.forEach(function (v, i) {
        var y = top + i * rowH;
        text(svg2, left - 8, y + 12, label(v), "end");
        if (v.first_timestamp_ms === null || v.first_timestamp_ms === undefined) { return; }
        var x1 = xt(v.first_timestamp_ms), x2 = Math.max(xt(v.last_timestamp_ms), x1 + 2);
        var bar = el("rect", {x: x1, y: y + 3, width: x2 - x1, height: rowH - 6,
          fill: colors[v.id], "data-id": v.id}, svg2);
        tip(bar, label(v) + ": " + v.count + " record(s), " + when(v.first_timestamp_ms) +
          " to " + when(v.last_timestamp_ms));
      });
    });
  }

  // A converter's progress history: counts and lag over time, one line each.
  function historyChart(points, target) {
    if (!points.length) { return; }
    var series = [["in", "#2f5fb3"], ["converted", "#2a9d8f"], ["dead_letter", "#d1495b"],
      ["skipped", "#e9a03b"]];
    draw("counts over time", series.map(function (s) {
      return {name: s[0], color: s[1], values: points.map(function (p) {
        return [p.time * 1000, (p.totals || {})[s[0]] || 0];
      })};
    }));
    draw("v2 lag over time (messages the converter had not read)", [{name: "lag",
      color: "#7b4fb3", values: points.filter(function (p) {
        return p.lag !== null && p.lag !== undefined;
      }).map(function (p) { return [p.time * 1000, p.lag]; })}]);

    function draw(title, lines) {
      var all = [];
      lines.forEach(function (l) { all = all.concat(l.values); });
      if (!all.length) { return; }
      var h = document.createElement("h3");
      h.textContent = title;
      target.appendChild(h);
      var W = 900, H = 240, left = 70, right = 20, top = 16, bottom = 40;
      var svg = el("svg", {width: W, height: H, role: "img", "data-chart": title}, target);
      var t0 = Math.min.apply(null, all.map(function (v) { return v[0]; }));
      var t1 = Math.max.apply(null, all.map(function (v) { return v[0]; }));
      var ymax = Math.max(1, Math.max.apply(null, all.map(function (v) { return v[1]; })));
      var x = scale(t0, t1, left, W - right), y = scale(0, ymax, H - bottom, top);
      el("line", {x1: left, x2: W - right, y1: H - bottom, y2: H - bottom, "class": "axis"}, svg);
      el("line", {x1: left, x2: left, y1: top, y2: H - bottom, "class": "axis"}, svg);
      for (var k = 0; k <= 4; k++) {
        var yy = y(ymax * k / 4);
        el("line", {x1: left, x2: W - right, y1: yy, y2: yy, "class": "grid"}, svg);
        text(svg, left - 6, yy + 4, String(Math.round(ymax * k / 4)), "end");
        var tt = t0 + (t1 - t0) * k / 4;
        text(svg, x(tt), H - bottom + 16, short(tt),
          k === 0 ? "start" : (k === 4 ? "end" : "middle"));
      }
      lines.forEach(function (l, i) {
        if (!l.values.length) { return; }
        var d = l.values.map(function (v) {
          return x(v[0]).toFixed(1) + "," + y(v[1]).toFixed(1);
        });
        var line = el("polyline", {points: d.join(" "), fill: "none", stroke: l.color,
          "stroke-width": 2, "data-series": l.name}, svg);
        tip(line, l.name + ": last " + l.values[l.values.length - 1][1]);
        el("rect", {x: left + 10 + i * 120, y: H - 14, width: 10, height: 10, fill: l.color}, svg);
        text(svg, left + 24 + i * 120, H - 5, l.name);
      });
    }
  }

  var DRAW = {census: censusChart, history: historyChart};
  Array.prototype.forEach.call(
    document.querySelectorAll('script[type="application/json"][data-chart]'),
    function (node) {
      var target = document.getElementById(node.getAttribute("data-target"));
      var draw = DRAW[node.getAttribute("data-chart")];
      if (target && draw) { draw(JSON.parse(node.textContent), target); }
    });
}());
"""


def csp_hash(text: str) -> str:
    """``'sha256-...'``: the CSP source that allows exactly this inline text."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


CSP = (
    "default-src 'none'; "
    f"style-src {csp_hash(CSS)}; "
    f"script-src {csp_hash(JS)}; "
    "img-src 'none'; connect-src 'none'; form-action 'none'; base-uri 'none'"
)
