# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The 16 charts of Pulse's MirrorMaker 2 dashboard, named as Pulse's page names them
(../shared/sources/acceldata-pulse-kafka-mirrormaker.txt), from the samples the JMX exporter serves
with the mirrormaker role's rules (roles/mirrormaker/templates/jmx_exporter.yml.j2) and, for the two
charts over time, from Prometheus range queries.

Input: one entry per MirrorMaker node, ``{"host": name, "samples": [(name, labels, value), ...]}``
(parsed Prometheus text), and the answers of the range queries that ``range_queries`` plans. Pure
Python so that it is unit-tested without a JVM; the names read here are the rules file's, and a
rule renamed there must be renamed here.
"""

from __future__ import annotations

import math
import re
from urllib.parse import urlencode

# The page's chart table, in its order.
CHARTS = (
    "Source -> Destination", "Last Rebalance", "Completed Rebalance", "Throughput/Sec", "Topics Synced",
    "Bytes Transferred", "Replication Latency", "Message Count", "Topics Throughput/Sec",
    "Topics Bytes Transferred", "Topics Replication Latency", "Task Error Metrics", "Synced Topics",
    "Source Task Metrics", "Connector Task Metrics", "Connect Worker Metrics",
)
SUMMARY = CHARTS[:7]
OVER_TIME = CHARTS[7:9]
TABLES = CHARTS[9:]
# Not a Pulse chart: shown when the status document carries replication lag (key ``lag``).
LAG = "Replication Lag"
NO_PROMETHEUS = "not available: no Prometheus given (mm2_status_prometheus_url)"

SOURCE = "kafka_connect_mirror_source_"
TASK_ERRORS = ("kafka_connect_task_error_total_record_errors_total",
               "kafka_connect_task_error_total_record_failures_total")
# (column, series) of the per-task tables: the series the rules file names.
TASK_ERROR_COLUMNS = (
    ("total record errors", "kafka_connect_task_error_total_record_errors_total"),
    ("total record failures", "kafka_connect_task_error_total_record_failures_total"),
    ("total retries", "kafka_connect_task_error_total_retries_total"),
    ("total errors logged", "kafka_connect_task_error_total_errors_logged_total"),
    ("total records skipped", "kafka_connect_task_error_total_records_skipped_total"),
)
SOURCE_TASK_COLUMNS = (
    ("source record active count", "kafka_connect_source_task_source_record_active_count"),
    ("source record poll total", "kafka_connect_source_task_source_record_poll_total"),
    ("source record write total", "kafka_connect_source_task_source_record_write_total"),
    ("poll rate/s", "kafka_connect_source_task_source_record_poll_rate"),
    ("write rate/s", "kafka_connect_source_task_source_record_write_rate"),
)
CONNECTOR_TASK_COLUMNS = (
    ("offset commit success %", "kafka_connect_task_offset_commit_success_percentage"),
    ("offset commit failure %", "kafka_connect_task_offset_commit_failure_percentage"),
    ("offset commit avg ms", "kafka_connect_task_offset_commit_avg_time_ms"),
    ("offset commit max ms", "kafka_connect_task_offset_commit_max_time_ms"),
    ("batch size avg", "kafka_connect_task_batch_size_avg"),
    ("pause ratio", "kafka_connect_task_pause_ratio"),
    ("running ratio", "kafka_connect_task_running_ratio"),
)
WORKER_COLUMNS = tuple(("%s tasks" % state, "kafka_connect_worker_connector_%s_task_count" % state)
                       for state in ("total", "running", "paused", "failed", "unassigned", "destroyed", "restarting"))
# The legacy summary table's keys (flows[]), kept for the JSON's readers.
COLUMNS = tuple(zip(("flow", "last_rebalance", "completed_rebalances", "throughput", "topics_synced",
                     "bytes_transferred", "replication_latency"), SUMMARY))


def _number(value):
    """None for the NaN a windowed statistic reports before its first sample."""
    if value is None or (isinstance(value, float) and (math.isnan(value) or math.isinf(value))):
        return None
    return value


def _weighted_latency(parts):
    """Average replication latency over partitions, weighted by their record rate (a partition
    that copied nothing in the window says nothing about latency); max of their maxima."""
    weight = sum(p["records_per_second"] for p in parts if p["latency_avg_ms"] is not None)
    if weight > 0:
        avg = sum(p["latency_avg_ms"] * p["records_per_second"] for p in parts
                  if p["latency_avg_ms"] is not None) / weight
    else:
        known = [p["latency_avg_ms"] for p in parts if p["latency_avg_ms"] is not None]
        avg = sum(known) / len(known) if known else None
    maxima = [p["latency_max_ms"] for p in parts if p["latency_max_ms"] is not None]
    return avg, (max(maxima) if maxima else None)


def _partitions(node):
    """(source, target, topic, partition) -> figures of one node."""
    parts = {}
    for name, labels, value in node["samples"]:
        if not name.startswith(SOURCE):
            continue
        key = (labels.get("source"), labels.get("target"), labels.get("topic"), labels.get("partition"))
        if None in key:
            continue
        figure = name[len(SOURCE):]
        parts.setdefault(key, {})[figure] = _number(value)
    return parts


def _partition_row(partition, fig):
    return {
        "partition": partition,
        "records_per_second": fig.get("record_rate") or 0.0,
        "bytes_per_second": fig.get("byte_rate") or 0.0,
        "records": fig.get("record_count_total") or 0,
        "bytes": fig.get("byte_count_total") or 0,
        "latency_avg_ms": fig.get("replication_latency_ms_avg"),
        "latency_max_ms": fig.get("replication_latency_ms_max"),
        "record_age_max_ms": fig.get("record_age_ms_max"),
    }


def _per_task(samples, columns):
    """(connector, task) -> {column: value} for the series of ``columns``, one node."""
    wanted = dict((series, column) for column, series in columns)
    tasks = {}
    for name, labels, value in samples:
        if name in wanted and "connector" in labels and "task" in labels:
            tasks.setdefault((labels["connector"], labels["task"]), {})[wanted[name]] = _number(value)
    return tasks


def _per_connector(samples, columns):
    wanted = dict((series, column) for column, series in columns)
    out = {}
    for name, labels, value in samples:
        if name in wanted and "connector" in labels:
            out.setdefault(labels["connector"], {})[wanted[name]] = _number(value)
    return out


def _task_key(key):
    connector, task = key
    return (connector, int(task) if str(task).isdigit() else 0, str(task))


# Kafka's offset-commit "percentage" attributes hold a fraction (1.0: every commit): shown as percent.
PERCENT = ("offset commit success %", "offset commit failure %")


def _task_rows(host, tasks, columns, extra=None):
    rows = []
    for key in sorted(tasks, key=_task_key):
        values = tasks[key]
        row = [host, key[0], int(key[1]) if str(key[1]).isdigit() else key[1]]
        if extra:
            row.append(extra.get(key))
        rows.append(row + [values.get(column) * 100.0 if column in PERCENT and values.get(column) is not None
                           else values.get(column) for column, _series in columns])
    return rows


def build(nodes, ranges=None):
    """Every chart of Pulse's dashboard (``charts``, keyed by the page's names), the per-flow and
    per-topic figures (``flows``) and each node's (``nodes``). ``ranges`` are the answers of the
    range queries ``range_queries`` planned (``[{"item": query, "json": answer}]``); None or empty:
    the charts over time are reported as not available."""
    flows = {}
    node_rows = []
    tables = dict((name, []) for name in TABLES)
    for node in sorted(nodes, key=lambda n: n["host"]):
        host = node["host"]
        samples = node["samples"]
        errors = sum(v for n, _l, v in samples if n in TASK_ERRORS and _number(v) is not None)
        states = {}
        task_states = {}
        for name, labels, value in samples:
            if name == "kafka_connect_task_status" and value == 1:
                states[labels.get("status", "?")] = states.get(labels.get("status", "?"), 0) + 1
                task_states[(labels.get("connector"), labels.get("task"))] = labels.get("status")
        coordinator = {}
        for name, labels, value in samples:
            if name.startswith("kafka_connect_coordinator_") and "client_id" in labels:
                coordinator.setdefault(labels["client_id"], {})[name[len("kafka_connect_coordinator_"):]] = _number(value)
        node_flows = set()
        node_topics = {}
        for (source, target, topic, partition), fig in _partitions(node).items():
            flow = "%s->%s" % (source, target)
            node_flows.add(flow)
            entry = flows.setdefault(flow, {"flow": flow, "source": source, "target": target, "nodes": set(),
                                            "topics": {}, "rebalances": {}, "task_errors": 0})
            entry["nodes"].add(host)
            row = _partition_row(partition, fig)
            entry["topics"].setdefault(topic, []).append(row)
            node_topics.setdefault((flow, topic), []).append(row)
        for flow in node_flows:
            flows[flow]["rebalances"][host] = coordinator.get(flow, {})
            flows[flow]["task_errors"] += errors
        for (flow, topic) in sorted(node_topics):
            parts = node_topics[(flow, topic)]
            avg, mx = _weighted_latency(parts)
            tables["Topics Bytes Transferred"].append(
                [host, flow, topic, len(parts), sum(p["bytes"] for p in parts), sum(p["records"] for p in parts)])
            tables["Topics Replication Latency"].append([host, flow, topic, avg, mx])
        for flow in sorted(node_flows):
            topics = sorted(t for f, t in node_topics if f == flow)
            tables["Synced Topics"].append([host, flow, len(topics), ", ".join(topics)])
        tables["Task Error Metrics"].extend(_task_rows(host, _per_task(samples, TASK_ERROR_COLUMNS), TASK_ERROR_COLUMNS))
        tables["Source Task Metrics"].extend(_task_rows(host, _per_task(samples, SOURCE_TASK_COLUMNS), SOURCE_TASK_COLUMNS))
        connector_tasks = _per_task(samples, CONNECTOR_TASK_COLUMNS)
        for key in task_states:
            connector_tasks.setdefault(key, {})
        tables["Connector Task Metrics"].extend(
            _task_rows(host, connector_tasks, CONNECTOR_TASK_COLUMNS, extra=task_states))
        workers = _per_connector(samples, WORKER_COLUMNS)
        for connector in sorted(workers):
            tables["Connect Worker Metrics"].append(
                [host, connector] + [workers[connector].get(column) for column, _series in WORKER_COLUMNS])
        node_rows.append({"host": host, "flows": sorted(node_flows), "task_errors": errors,
                          "task_states": states, "coordinators": coordinator})
    flow_rows = [_flow_row(flows[f]) for f in sorted(flows)]
    charts = _summary_charts(flow_rows)
    charts.update(over_time(ranges))
    for name in TABLES:
        charts[name] = {"kind": "table", "per": "node", "columns": list(TABLE_COLUMNS[name]), "rows": tables[name]}
    return {"charts": dict((name, charts[name]) for name in CHARTS), "flows": flow_rows, "nodes": node_rows}


TABLE_COLUMNS = {
    "Topics Bytes Transferred": ("node", "flow", "topic", "partitions", "bytes transferred", "records"),
    "Topics Replication Latency": ("node", "flow", "topic", "replication latency avg ms", "replication latency max ms"),
    "Synced Topics": ("node", "flow", "topics synced", "topics"),
    "Task Error Metrics": ("node", "connector", "task") + tuple(c for c, _s in TASK_ERROR_COLUMNS),
    "Source Task Metrics": ("node", "connector", "task") + tuple(c for c, _s in SOURCE_TASK_COLUMNS),
    "Connector Task Metrics": ("node", "connector", "task", "status") + tuple(c for c, _s in CONNECTOR_TASK_COLUMNS),
    "Connect Worker Metrics": ("node", "connector") + tuple(c for c, _s in WORKER_COLUMNS),
}


def _summary_charts(flows):
    """The page's seven summary charts, one value per flow."""
    def per_flow(unit, value):
        return {"kind": "per flow", "unit": unit, "values": dict((f["flow"], value(f)) for f in flows)}
    return {
        "Source -> Destination": per_flow("clusters", lambda f: {"source": f["source"], "target": f["target"],
                                                                 "nodes": f["nodes"]}),
        "Last Rebalance": per_flow("seconds ago", lambda f: f["last_rebalance_seconds_ago"]),
        "Completed Rebalance": per_flow("rebalances", lambda f: f["completed_rebalances"]),
        "Throughput/Sec": per_flow("per second", lambda f: {"records": f["records_per_second"],
                                                            "bytes": f["bytes_per_second"]}),
        "Topics Synced": per_flow("topics", lambda f: f["topics_synced"]),
        "Bytes Transferred": per_flow("since the tasks started", lambda f: {"bytes": f["bytes"], "records": f["records"]}),
        "Replication Latency": per_flow("ms", lambda f: {"avg_ms": f["replication_latency_avg_ms"],
                                                         "max_ms": f["replication_latency_max_ms"]}),
    }


def _flow_row(entry):
    topics = []
    all_parts = []
    for topic in sorted(entry["topics"]):
        parts = entry["topics"][topic]
        all_parts.extend(parts)
        avg, mx = _weighted_latency(parts)
        topics.append({
            "topic": topic,
            "partitions": len(parts),
            "records_per_second": sum(p["records_per_second"] for p in parts),
            "bytes_per_second": sum(p["bytes_per_second"] for p in parts),
            "records": sum(p["records"] for p in parts),
            "bytes": sum(p["bytes"] for p in parts),
            "replication_latency_avg_ms": avg,
            "replication_latency_max_ms": mx,
            "record_age_max_ms": max([p["record_age_max_ms"] for p in parts if p["record_age_max_ms"] is not None],
                                     default=None),
        })
    avg, mx = _weighted_latency(all_parts)
    ago = [c.get("last_rebalance_seconds_ago") for c in entry["rebalances"].values()
           if c.get("last_rebalance_seconds_ago") is not None]
    done = [c.get("rebalance_total") for c in entry["rebalances"].values() if c.get("rebalance_total") is not None]
    return {
        "flow": entry["flow"],
        "source": entry["source"],
        "target": entry["target"],
        "nodes": sorted(entry["nodes"]),
        # The newest rebalance any node of the flow saw, and the count summed over its nodes.
        "last_rebalance_seconds_ago": min(ago) if ago else None,
        "completed_rebalances": sum(done) if done else None,
        "records_per_second": sum(t["records_per_second"] for t in topics),
        "bytes_per_second": sum(t["bytes_per_second"] for t in topics),
        "records": sum(t["records"] for t in topics),
        "bytes": sum(t["bytes"] for t in topics),
        "topics_synced": len(topics),
        "replication_latency_avg_ms": avg,
        "replication_latency_max_ms": mx,
        # Connect's task metrics carry no flow tag in dedicated mode: the errors of every
        # MirrorMaker task on the flow's nodes.
        "task_errors": entry["task_errors"],
        "topics": topics,
    }


# ----------------------------------------------------------------- the charts over time (Prometheus)

# increase() and rate() over a window of one step: each point covers the step before it.
QUERIES = {
    "Message Count": ("sum by (source, target) (increase(kafka_connect_mirror_source_record_count_total[%ds]))",
                      "records copied per %d s", ("source", "target")),
    "Topics Throughput/Sec": ("sum by (source, target, topic) (rate(kafka_connect_mirror_source_record_count_total[%ds]))",
                              "records/s (average over %d s)", ("source", "target", "topic")),
}
# Prometheus refuses a range query of more than 11,000 points per series.
MAX_POINTS = 11000
URL = re.compile(r"^https?://[^/\s?#]+(/[^\s?#]*)?$")


def _seconds(value):
    """A positive whole number of seconds, else 0."""
    if isinstance(value, bool):
        return 0
    try:
        number = int(str(value).strip())
    except ValueError:
        return 0
    return max(number, 0)


def range_queries(url, window, step, end, via="", hosts=()):
    """(queries, errors): the range queries of the charts over time, for the Prometheus at ``url``
    (read from the inventory host ``via``, or the controller when empty), over the ``window`` seconds
    before ``end`` (epoch seconds) in steps of ``step`` seconds. No queries without a URL. Each error
    names the status playbook's variable at fault."""
    errors = []
    url = (url or "").strip()
    if url and not URL.match(url):
        errors.append("mm2_status_prometheus_url: %r is not an http(s)://host[:port][/path] URL" % url)
    if via and hosts and via not in hosts:
        errors.append("mm2_status_prometheus_via: %r is not an inventory host" % via)
    if via and not url:
        errors.append("mm2_status_prometheus_via: %r given without mm2_status_prometheus_url" % via)
    win, stp = _seconds(window), _seconds(step)
    if not win:
        errors.append("mm2_status_window: %r is not a positive number of seconds" % (window,))
    if not stp:
        errors.append("mm2_status_step: %r is not a positive number of seconds" % (step,))
    if win and stp:
        if stp * 2 > win:
            errors.append("mm2_status_step: %d s leaves fewer than two points in mm2_status_window (%d s)" % (stp, win))
        if win // stp > MAX_POINTS:
            errors.append("mm2_status_step: %d s gives %d points over mm2_status_window (%d s); Prometheus answers "
                          "at most %d" % (stp, win // stp, win, MAX_POINTS))
    if errors or not url:
        return [], errors
    end = int(float(end))
    start = end - win
    queries = []
    for chart in OVER_TIME:
        query, unit, _labels = QUERIES[chart]
        query = query % stp
        queries.append({
            "chart": chart, "query": query, "unit": unit % stp, "window_seconds": win, "step_seconds": stp,
            "start": start, "end": end, "prometheus": url, "via": via or "the controller",
            "url": "%s/api/v1/query_range?%s" % (url.rstrip("/"), urlencode(
                (("query", query), ("start", start), ("end", end), ("step", stp)))),
        })
    return queries, []


def _label(chart, metric):
    flow = "%s -> %s" % (metric.get("source", "?"), metric.get("target", "?"))
    return flow if chart == "Message Count" else "%s (%s)" % (metric.get("topic", "?"), flow)


def _value(text):
    try:
        return _number(float(text))
    except (TypeError, ValueError):
        return None


def over_time(ranges):
    """The two charts over time from the range queries' answers; not available (with the reason)
    when no Prometheus was given or it answered no data."""
    charts = dict((name, {"kind": "line", "available": False, "reason": NO_PROMETHEUS, "series": []})
                  for name in OVER_TIME)
    for item in ranges or []:
        query = item.get("item") or {}
        chart = query.get("chart")
        if chart not in charts:
            continue
        answer = item.get("json") or {}
        out = dict((k, query[k]) for k in ("query", "unit", "window_seconds", "step_seconds", "start", "end",
                                           "prometheus", "via") if k in query)
        out.update(kind="line", series=[])
        data = answer.get("data") or {}
        if answer.get("status") != "success" or data.get("resultType") != "matrix":
            out.update(available=False, reason="not available: %s answered %s" % (
                query.get("prometheus"), answer.get("error") or answer.get("status") or "no JSON"))
            charts[chart] = out
            continue
        for result in data.get("result") or []:
            points = [[float(t), _value(v)] for t, v in result.get("values") or []]
            out["series"].append({"label": _label(chart, result.get("metric") or {}), "metric": result.get("metric") or {},
                                  "points": points})
        out["series"].sort(key=lambda s: s["label"])
        if out["series"]:
            out["available"] = True
        else:
            out.update(available=False, reason="not available: %s holds no %s in the window"
                       % (query.get("prometheus"), "kafka_connect_mirror_source_record_count_total"))
        charts[chart] = out
    return charts


# ----------------------------------------------------------------- rendering as text cells

def _bytes(n):
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.1f %s" % (n, unit))
        n /= 1024
    return "%.1f TiB" % n  # pragma: no cover


def _ms(avg, mx):
    if avg is None and mx is None:
        return "-"
    return "%s avg, %s max" % ("-" if avg is None else "%.0f ms" % avg, "-" if mx is None else "%.0f ms" % mx)


def _ago(seconds):
    if seconds is None:
        return "-"
    seconds = int(seconds)
    if seconds < 120:
        return "%d s ago" % seconds
    if seconds < 7200:
        return "%d min ago" % (seconds // 60)
    return "%.1f h ago" % (seconds / 3600.0)


def cell(value):
    """A table cell as text: '-' for a figure not reported, integers without a fraction."""
    if value is None:
        return "-"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return "%d" % value
        return "%.2f" % value
    return str(value)


def summary_rows(status):
    """The seven summary charts as (headers, rows): a row per flow, an indented row per topic."""
    rows = []
    for flow in status["flows"]:
        rows.append([
            "%s -> %s" % (flow["source"], flow["target"]),
            _ago(flow["last_rebalance_seconds_ago"]),
            "-" if flow["completed_rebalances"] is None else "%d" % flow["completed_rebalances"],
            "%.1f rec, %s" % (flow["records_per_second"], _bytes(flow["bytes_per_second"])),
            "%d" % flow["topics_synced"],
            "%s (%d records)" % (_bytes(flow["bytes"]), flow["records"]),
            _ms(flow["replication_latency_avg_ms"], flow["replication_latency_max_ms"]),
        ])
        for topic in flow["topics"]:
            rows.append([
                "  " + topic["topic"],
                "", "",
                "%.1f rec, %s" % (topic["records_per_second"], _bytes(topic["bytes_per_second"])),
                "%d part." % topic["partitions"],
                "%s (%d records)" % (_bytes(topic["bytes"]), topic["records"]),
                _ms(topic["replication_latency_avg_ms"], topic["replication_latency_max_ms"]),
            ])
    return list(SUMMARY), rows


def line_rows(chart):
    """A chart over time as (headers, rows): one row per series with its points' summary."""
    headers = ["series", "points", "first", "last", "min", "max"]
    rows = []
    for series in chart.get("series") or []:
        values = [v for _t, v in series["points"] if v is not None]
        rows.append([series["label"], "%d" % len(series["points"])] + [
            cell(x) for x in ((values[0], values[-1], min(values), max(values)) if values else (None,) * 4)])
    return headers, rows


def line_caption(chart):
    if not chart.get("available"):
        return chart.get("reason") or NO_PROMETHEUS
    return "%s, over %d s in steps of %d s, from %s (queried from %s)" % (
        chart["unit"], chart["window_seconds"], chart["step_seconds"], chart["prometheus"], chart["via"])


def table_rows(chart):
    return list(chart["columns"]), [[cell(v) for v in row] for row in chart["rows"]]


def lag_rows(lag):
    """The replication-lag rows another part of the status document may carry (key ``lag``)."""
    headers = ["flow", "topic", "partition", "records behind", "seconds behind"]
    return headers, [[cell(item.get(k)) for k in ("flow", "topic", "partition", "records", "seconds")] for item in lag]


def panels(status):
    """What every report shows, in the page's order: (name, kind, caption, headers, rows). The summary
    charts are one panel whose columns are their names; ``Replication Lag`` follows when the status
    carries ``lag``."""
    charts = status["charts"]
    out = [(", ".join(SUMMARY), "summary", "one row per flow (Source -> Destination), then per remote topic")
           + summary_rows(status)]
    for name in OVER_TIME:
        out.append((name, "line", line_caption(charts[name])) + line_rows(charts[name]))
    for name in TABLES:
        out.append((name, "table", "per node") + table_rows(charts[name]))
    if isinstance(status.get("lag"), list):
        out.append((LAG, "table", "per flow, topic and partition") + lag_rows(status["lag"]))
    return out


def _aligned(headers, rows):
    widths = [max(len(r[i]) for r in [headers] + rows) for i in range(len(headers))]
    lines = [" | ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip() for row in [headers] + rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return lines


def table(status):
    """Text lines: the summary charts (a row per flow, then per topic), then every other chart
    under its name."""
    lines = []
    for name, kind, caption, headers, rows in panels(status):
        if kind != "summary":
            lines += ["", "%s: %s" % (name, caption)]
            if kind == "line" and not rows:
                continue
        lines += _aligned(headers, rows) if rows else ["(no rows)"]
    return lines
