"""The versioned JSON report, the terminal summary, and the files an operator opens: the PNG
(picture.py), the HTML page (templates/report.html.j2) and the JUnit XML (junit.py)."""

import json
import os
import pkgutil

from . import EXIT_ERROR, REPORT_VERSION
from . import stats
from .config import PRODUCED_BY

STATUS_ORDER = {"pass": 0, "skip": 1, "fail": 2, "error": 3}
STATUSES = ("pass", "skip", "fail", "error")


def load_lag(path):
    """The report's ``lag`` (rows {flow, topic, partition, records, seconds, end, next}),
    ``lag_by_flow`` and ``lag_measured`` ({at, sources, error}) from the file the mm2_smoke role
    wrote with the mm2_lag_info module's answer. The job derives nothing from them: the figures are
    the module's (plugins/module_utils/mm2/lag.py). A file that cannot be read leaves the rows empty
    and says why; the checks do not depend on it."""
    try:
        with open(path, encoding="utf-8") as fh:
            given = json.load(fh)
        error = given.get("error")
        rows, flows = list(given.get("lag") or []), dict(given.get("flows") or {})
        at, sources = given.get("measured_at"), list(given.get("sources") or [])
    except (OSError, ValueError, AttributeError) as exc:
        rows, flows, at, sources = [], {}, None, []
        error = "reading %s: %s: %s" % (path, type(exc).__name__, exc)
    return {"lag": rows, "lag_by_flow": flows, "lag_measured": {"at": at, "sources": sources, "error": error}}


def lag_lines(doc, listed=5):
    """The terminal's lines of the lag read before the job: one per flow, then the partitions
    behind (the first ``listed``)."""
    measured = doc.get("lag_measured")
    if not measured:
        return []
    if measured.get("error"):
        return ["lag before the job: not measured: %s" % measured["error"]]
    lines = ["lag %s before the job (at %s): %d records, %.3f s behind over %d partitions"
             % (flow, measured.get("at"), f["records"], f["seconds"], f["partitions"])
             for flow, f in sorted((doc.get("lag_by_flow") or {}).items())]
    if not lines:
        lines.append("lag before the job (at %s): MirrorMaker 2 had committed no source offset yet"
                     % measured.get("at"))
    behind = [r for r in doc.get("lag") or [] if r["records"]]
    lines.extend("    %s %s-%d: %d records, %.3f s" % (r["flow"], r["topic"], r["partition"], r["records"], r["seconds"])
                 for r in behind[:listed])
    if len(behind) > listed:
        lines.append("    and %d more partitions behind (all in the JSON)" % (len(behind) - listed))
    return lines


def worst(statuses):
    statuses = list(statuses) or ["pass"]
    return max(statuses, key=lambda s: STATUS_ORDER.get(s, 3))


def verdict(checks):
    """('pass' | 'fail' | 'error', exit code 0 | 1 | 2, why). A run in which no check ran, or
    every check was skipped, proved nothing: that is an error, never a pass."""
    statuses = [c["status"] for c in checks]
    if "fail" in statuses:
        return "fail", 1, "%d of %d checks failed" % (statuses.count("fail"), len(statuses))
    if "error" in statuses:
        return "error", 2, "%d of %d checks could not run" % (statuses.count("error"), len(statuses))
    if not checks:
        return "error", 2, "no check ran"
    if all(s == "skip" for s in statuses):
        return "error", 2, "every check was skipped (%d): nothing was proven" % len(statuses)
    return "pass", 0, "every check that ran passed"


def count(checks, configured):
    """What the summary line and the JUnit suite count: the checks configured, results by status,
    and results by check. ``by_check`` lists every configured check, 0 for one that gave no result
    (a configured check that cannot apply reports a skip, so a 0 is a defect the reader can see),
    then each kind of result no configured check names, with the configured check that made it."""
    configured = list(configured or [])
    out = {"configured": configured, "results": len(checks)}
    for status in STATUSES:
        out[status] = sum(1 for c in checks if c["status"] == status)
    by_check = {name: 0 for name in configured}
    for c in checks:
        by_check[c["check"]] = by_check.get(c["check"], 0) + 1
    out["by_check"] = by_check
    out["produced_by"] = {
        name: next((p for p in PRODUCED_BY.get(name, ()) if p in configured), None)
        for name in by_check if name not in configured}
    return out


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


def latency_block(values):
    block = stats.summary(values)
    block["histogram"] = stats.histogram(values)
    return block


def build(meta, checks, latencies):
    """The report document. ``latencies`` maps a flow's name to its markers' replication latencies
    (ms); ``latency_ms`` sums up all flows, ``latency_ms_by_flow`` each one."""
    name, code, why = verdict(checks)
    doc = dict(meta)
    doc["report_version"] = REPORT_VERSION
    doc["verdict"] = name
    doc["verdict_reason"] = why
    doc["exit_code"] = code
    doc["summary"] = count(checks, meta.get("checks_configured"))
    doc["checks"] = checks
    doc["topics"] = topic_status(checks)
    doc["latency_ms"] = latency_block([v for flow in sorted(latencies) for v in latencies[flow]])
    doc["latency_ms_by_flow"] = {flow: latency_block(values) for flow, values in sorted(latencies.items())}
    return doc


def could_not_run(doc):
    """Mark the document as a job that could not run (exit 2), whatever its checks said."""
    doc["verdict"], doc["exit_code"] = "error", EXIT_ERROR
    doc["verdict_reason"] = "the job could not check: %d error%s" % (
        len(doc["errors"]), "" if len(doc["errors"]) == 1 else "s")


def summary_line(doc):
    s = doc.get("summary") or count(doc["checks"], [])
    configured = s["configured"]
    parts = ["%d %s" % (s[k], k) for k in STATUSES if s[k]]
    made = s.get("produced_by") or {}

    def kind(name, n):
        if name in configured:
            return "%s %d" % (name, n)
        return "%s %d (%s)" % (name, n, "with " + made[name] if made.get(name) else "not configured")

    kinds = [kind(name, n) for name, n in (s.get("by_check") or {}).items()]
    return "%d check%s configured (%s), %d result%s%s: %s" % (
        len(configured), "" if len(configured) == 1 else "s", ", ".join(configured) or "none",
        s["results"], "" if s["results"] == 1 else "s", " (%s)" % ", ".join(kinds) if kinds else "",
        ", ".join(parts) or "none")


def summary_text(doc):
    lines = ["mm2-smoke %s run %s: %s, %s (%.1fs)" % (
        doc.get("mode"), doc.get("run_id"), doc["verdict"].upper(), doc.get("verdict_reason", ""),
        doc.get("duration_s", 0)), "  " + summary_line(doc)]
    for c in doc["checks"]:
        label = "%-6s %-10s %-8s %s" % (c["status"].upper(), c["check"], c["flow"],
                                        (c.get("topic") or "") + (" -> " + c["remote_topic"]
                                                                  if c.get("remote_topic") else ""))
        lines.append("  " + label.rstrip() + ("  (%.1fs)" % c["duration_s"] if "duration_s" in c else ""))
        for msg in c.get("messages", []) + c.get("notes", []):
            lines.append("      " + msg)
    for flow, lat in sorted((doc.get("latency_ms_by_flow") or {}).items()):
        if lat.get("count"):
            lines.append("  latency %s (produce -> readable on target), ms: p50 %s, p95 %s, max %s over %d records"
                         % (flow, lat["p50"], lat["p95"], lat["max"], lat["count"]))
    for item in doc.get("discovery") or []:
        if item.get("seconds") is not None:
            lines.append("  discovery %s: MM2 found new topic %s and delivered its first record as %s in %.1fs "
                         "(its refresh interval, not replication latency)"
                         % (item["flow"], item["topic"], item["remote_topic"], item["seconds"]))
    lines.extend("  " + line for line in lag_lines(doc))
    for alias, keys in sorted((doc.get("unmapped_properties") or {}).items()):
        lines.append("  cluster %s: client properties the job's kafka-python clients do not use: %s"
                     % (alias, ", ".join(keys)))
    for err in doc.get("errors", []):
        lines.append("  ERROR " + err)
    return "\n".join(lines)


def html_page(doc, names):
    """The HTML page from the package's Jinja2 template (read with pkgutil, so it works from the
    --py-files zip too); ``names`` maps json/png/junit to the sibling files' names."""
    import jinja2
    env = jinja2.Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
    source = pkgutil.get_data(__package__, "templates/report.html.j2").decode("utf-8")
    return env.from_string(source).render(doc=doc, names=names, summary=summary_line(doc))


def write(doc, report_dir):
    """Write JSON, PNG, HTML and JUnit XML; returns their paths (also in doc["files"])."""
    from . import junit
    from . import picture
    os.makedirs(report_dir, exist_ok=True)
    base = "mm2-smoke-%s-%s" % (doc.get("mode"), doc.get("run_id"))
    files = {"json": base + ".json", "png": base + ".png", "html": base + ".html", "junit": base + ".xml"}
    paths = {k: os.path.join(report_dir, v) for k, v in files.items()}
    doc["files"] = paths
    picture.write_png(doc, paths["png"])
    with open(paths["junit"], "wb") as fh:
        fh.write(junit.xml_bytes(doc))
    with open(paths["html"], "w", encoding="utf-8") as fh:
        fh.write(html_page(doc, files))
    with open(paths["json"], "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=2, sort_keys=False, default=str)
        fh.write("\n")
    return paths
