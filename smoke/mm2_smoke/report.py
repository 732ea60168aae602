"""The versioned JSON report, the terminal summary, and the picture (PNG + HTML)."""

import html
import json
import os

from . import png
from . import stats

STATUS_ORDER = {"pass": 0, "skip": 1, "fail": 2, "error": 3}
COLORS = {"pass": (46, 160, 67), "skip": (150, 150, 150), "fail": (207, 34, 46), "error": (191, 135, 0)}


def worst(statuses):
    statuses = list(statuses) or ["pass"]
    return max(statuses, key=lambda s: STATUS_ORDER.get(s, 3))


def verdict(checks):
    """'pass' | 'fail' | 'error' and the exit code (0, 1, 2)."""
    statuses = [c["status"] for c in checks]
    if "fail" in statuses:
        return "fail", 1
    if "error" in statuses or not checks:
        return "error", 2
    return "pass", 0


def topic_status(checks):
    """Per (flow, topic) worst status, in first-seen order."""
    rows, order = {}, []
    for c in checks:
        key = (c["flow"], c.get("topic") or "-")
        if key not in rows:
            order.append(key)
            rows[key] = {"flow": c["flow"], "topic": key[1], "remote_topic": c.get("remote_topic"),
                         "checks": {}, "status": "pass"}
        rows[key]["checks"][c["check"]] = c["status"]
        if c.get("remote_topic"):
            rows[key]["remote_topic"] = c["remote_topic"]
        rows[key]["status"] = worst([rows[key]["status"], c["status"]])
    return [rows[k] for k in order]


def build(meta, checks, latencies):
    name, code = verdict(checks)
    doc = dict(meta)
    doc["report_version"] = 1
    doc["verdict"] = name
    doc["exit_code"] = code
    doc["checks"] = checks
    doc["topics"] = topic_status(checks)
    lat = stats.summary(latencies)
    lat["histogram"] = stats.histogram(latencies)
    doc["latency_ms"] = lat
    return doc


def summary_text(doc):
    lines = ["mm2-smoke %s run %s: %s (%d checks, %.1fs)" % (
        doc.get("mode"), doc.get("run_id"), doc["verdict"].upper(), len(doc["checks"]), doc.get("duration_s", 0))]
    for c in doc["checks"]:
        label = "%-6s %-10s %-8s %s" % (c["status"].upper(), c["check"], c["flow"],
                                        (c.get("topic") or "") + (" -> " + c["remote_topic"]
                                                                  if c.get("remote_topic") else ""))
        lines.append("  " + label.rstrip() + ("  (%.1fs)" % c["duration_s"] if "duration_s" in c else ""))
        for msg in c.get("messages", []):
            lines.append("      " + msg)
    lat = doc.get("latency_ms") or {}
    if lat.get("count"):
        lines.append("  latency ms (produce -> seen on target): p50 %s, p95 %s, max %s over %d records"
                     % (lat["p50"], lat["p95"], lat["max"], lat["count"]))
    for err in doc.get("errors", []):
        lines.append("  ERROR " + err)
    return "\n".join(lines)


MAX_BARS = 48
BLUE = (52, 120, 200)


def bar_chart(cv, box, groups):
    """Bars standing on the x axis of ``box``: one slot per group, its (value, colour) bars side by
    side, scaled to the largest value, which labels the y axis."""
    x0, y0, x1, y1 = box
    top = max(n for group in groups for n, _color in group) or 1
    slot = (x1 - x0 - 4) // len(groups)
    for i, group in enumerate(groups):
        bar_w = max(1, (slot - 2) // len(group))
        for j, (n, color) in enumerate(group):
            h = int((y1 - y0 - 10) * n / float(top))
            if n:
                left = x0 + 2 + i * slot + j * bar_w
                cv.rect(left, y1 - max(h, 1), left + bar_w - 1, y1 - 1, color)
    cv.text(10, y0, str(top))
    cv.text(10, y1 - 10, "0")


def partition_bars(cv, doc, box):
    """Reconcile mode: per partition, source and target record counts side by side; False if none."""
    parts = [(c["topic"], p) for c in doc["checks"] if c["check"] == "reconcile"
             for p in (c.get("details") or {}).get("partitions") or []]
    if not parts:
        return False
    x0, _y0, _x1, y1 = box
    bar_chart(cv, box, [[(p["source_count"], BLUE),
                         (p["target_count"], COLORS["pass"] if p.get("match") else COLORS["fail"])]
                        for _topic, p in parts[:MAX_BARS]])
    bad = sum(1 for _t, p in parts if not p.get("match"))
    more = " (FIRST %d)" % MAX_BARS if len(parts) > MAX_BARS else ""
    cv.text(x0, y1 + 6, "RECORDS PER PARTITION: SOURCE BLUE, TARGET GREEN / RED IF DIFFERENT. %d OF %d DIFFER%s"
            % (bad, len(parts), more))
    return True


def picture(doc):
    """PNG bytes: title, latency histogram (reconcile: counts per partition), a status row per flow/topic."""
    rows = doc["topics"]
    width, hist_h = 760, 200
    height = 60 + hist_h + 50 + 26 * max(1, len(rows))
    cv = png.Canvas(width, height)
    cv.text(10, 10, "MM2 SMOKE %s  %s  RUN %s" % (doc.get("mode", ""), doc["verdict"], doc.get("run_id", "")),
            COLORS.get(doc["verdict"], (0, 0, 0)), scale=3)
    hist = (doc.get("latency_ms") or {}).get("histogram") or {}
    x0, y0, x1, y1 = 60, 40, width - 20, 40 + hist_h
    cv.rect(x0, y1, x1, y1, (0, 0, 0))
    cv.rect(x0, y0, x0, y1, (0, 0, 0))
    counts = hist.get("counts") or []
    if counts:
        bar_chart(cv, (x0, y0, x1, y1), [[(n, BLUE)] for n in counts])
        cv.text(x0, y1 + 6, "0 MS")
        end = "%d MS" % hist["edges"][-1]
        cv.text(x1 - 8 * len(end), y1 + 6, end)
        lat = doc["latency_ms"]
        cv.text(x0 + 150, y1 + 6, "LATENCY P50 %s P95 %s MAX %s N %s"
                % (lat["p50"], lat["p95"], lat["max"], lat["count"]))
    elif not partition_bars(cv, doc, (x0, y0, x1, y1)):
        cv.text(x0 + 20, y0 + hist_h // 2, "NO LATENCIES (%s MODE)" % doc.get("mode", ""))
    y = y1 + 30
    for row in rows:
        color = COLORS.get(row["status"], (0, 0, 0))
        cv.rect(10, y, 26, y + 16, color)
        cv.text(36, y + 3, "%s  %s  %s" % (row["flow"], row["topic"], row["status"]))
        y += 26
    return cv.png()


def html_page(doc, png_name):
    esc = html.escape
    rows = []
    for c in doc["checks"]:
        rows.append("<tr class='%s'><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
            esc(c["status"]), esc(c["status"].upper()), esc(c["check"]), esc(c["flow"]),
            esc((c.get("topic") or "") + (" -> " + c["remote_topic"] if c.get("remote_topic") else "")),
            "<br>".join(esc(m) for m in c.get("messages", []))))
    lat = doc.get("latency_ms") or {}
    return """<!doctype html>
<html><head><meta charset="utf-8"><title>mm2-smoke %(run)s: %(verdict)s</title>
<style>body{font-family:sans-serif;margin:1.5em} td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}
table{border-collapse:collapse} tr.pass td:first-child{color:#2ea043} tr.fail td:first-child{color:#cf222e}
tr.error td:first-child{color:#bf8700} tr.skip td:first-child{color:#888}</style></head>
<body><h1>mm2-smoke %(mode)s run %(run)s: %(verdict)s</h1>
<p>Started %(started)s, %(dur)ss. Latency (produce to seen on target), ms: p50 %(p50)s, p95 %(p95)s,
max %(max)s over %(n)s records. Report: <a href="%(json)s">%(json)s</a> (report_version 1).</p>
<p><img src="%(png)s" alt="latency histogram and per-topic status"></p>
<table><tr><th>status</th><th>check</th><th>flow</th><th>topic</th><th>messages</th></tr>
%(rows)s
</table></body></html>
""" % {"run": esc(str(doc.get("run_id"))), "verdict": esc(doc["verdict"].upper()), "mode": esc(str(doc.get("mode"))),
       "started": esc(str(doc.get("started"))), "dur": doc.get("duration_s"), "p50": lat.get("p50"),
       "p95": lat.get("p95"), "max": lat.get("max"), "n": lat.get("count", 0),
       "json": esc(os.path.basename((doc.get("files") or {}).get("json", "report.json"))),
       "png": esc(png_name), "rows": "\n".join(rows)}


def write(doc, report_dir):
    os.makedirs(report_dir, exist_ok=True)
    base = "mm2-smoke-%s-%s" % (doc.get("mode"), doc.get("run_id"))
    files = {"json": os.path.join(report_dir, base + ".json"), "png": os.path.join(report_dir, base + ".png"),
             "html": os.path.join(report_dir, base + ".html")}
    doc["files"] = files
    with open(files["png"], "wb") as fh:
        fh.write(picture(doc))
    with open(files["html"], "w") as fh:
        fh.write(html_page(doc, os.path.basename(files["png"])))
    with open(files["json"], "w") as fh:
        json.dump(doc, fh, indent=2, sort_keys=False, default=str)
        fh.write("\n")
    return files
