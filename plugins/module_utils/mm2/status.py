# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The figures of Pulse's MirrorMaker 2 dashboard, per flow and topic, from the samples the JMX
exporter serves with the mirrormaker role's rules (roles/mirrormaker/templates/jmx_exporter.yml.j2).

Input: one entry per MirrorMaker node, ``{"host": name, "samples": [(name, labels, value), ...]}``
(parsed Prometheus text). Pure Python so that it is unit-tested without a JVM; the names read here
are the rules file's, and a rule renamed there must be renamed here.
"""

from __future__ import annotations

import math

SOURCE = "kafka_connect_mirror_source_"
TASK_ERRORS = ("kafka_connect_task_error_total_record_errors_total",
               "kafka_connect_task_error_total_record_failures_total")
COLUMNS = (
    ("flow", "source -> destination"),
    ("last_rebalance", "last rebalance"),
    ("completed_rebalances", "completed rebalances"),
    ("throughput", "throughput/s"),
    ("topics_synced", "topics synced"),
    ("bytes_transferred", "bytes transferred"),
    ("replication_latency", "replication latency"),
    ("task_errors", "task errors"),
)


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


def build(nodes):
    """Per-flow and per-topic figures from every node's samples (see the module docstring)."""
    flows = {}
    node_rows = []
    for node in sorted(nodes, key=lambda n: n["host"]):
        host = node["host"]
        samples = node["samples"]
        errors = sum(v for n, _l, v in samples if n in TASK_ERRORS and _number(v) is not None)
        states = {}
        for name, labels, value in samples:
            if name == "kafka_connect_task_status" and value == 1:
                states[labels.get("status", "?")] = states.get(labels.get("status", "?"), 0) + 1
        coordinator = {}
        for name, labels, value in samples:
            if name.startswith("kafka_connect_coordinator_") and "client_id" in labels:
                coordinator.setdefault(labels["client_id"], {})[name[len("kafka_connect_coordinator_"):]] = _number(value)
        node_flows = set()
        for (source, target, topic, partition), fig in _partitions(node).items():
            flow = "%s->%s" % (source, target)
            node_flows.add(flow)
            entry = flows.setdefault(flow, {"flow": flow, "source": source, "target": target, "nodes": set(),
                                            "topics": {}, "rebalances": {}, "task_errors": 0})
            entry["nodes"].add(host)
            entry["topics"].setdefault(topic, []).append({
                "partition": partition,
                "records_per_second": fig.get("record_rate") or 0.0,
                "bytes_per_second": fig.get("byte_rate") or 0.0,
                "records": fig.get("record_count_total") or 0,
                "bytes": fig.get("byte_count_total") or 0,
                "latency_avg_ms": fig.get("replication_latency_ms_avg"),
                "latency_max_ms": fig.get("replication_latency_ms_max"),
                "record_age_max_ms": fig.get("record_age_ms_max"),
            })
        for flow in node_flows:
            flows[flow]["rebalances"][host] = coordinator.get(flow, {})
            flows[flow]["task_errors"] += errors
        node_rows.append({"host": host, "flows": sorted(node_flows), "task_errors": errors,
                          "task_states": states, "coordinators": coordinator})
    return {"flows": [_flow_row(flows[f]) for f in sorted(flows)], "nodes": node_rows}


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


def table(status):
    """Text table: one row per flow, then one indented row per topic of it."""
    rows = [[title for _key, title in COLUMNS]]
    for flow in status["flows"]:
        rows.append([
            "%s -> %s" % (flow["source"], flow["target"]),
            _ago(flow["last_rebalance_seconds_ago"]),
            "-" if flow["completed_rebalances"] is None else "%d" % flow["completed_rebalances"],
            "%.1f rec, %s" % (flow["records_per_second"], _bytes(flow["bytes_per_second"])),
            "%d" % flow["topics_synced"],
            "%s (%d records)" % (_bytes(flow["bytes"]), flow["records"]),
            _ms(flow["replication_latency_avg_ms"], flow["replication_latency_max_ms"]),
            "%d" % flow["task_errors"],
        ])
        for topic in flow["topics"]:
            rows.append([
                "  " + topic["topic"],
                "", "",
                "%.1f rec, %s" % (topic["records_per_second"], _bytes(topic["bytes_per_second"])),
                "%d part." % topic["partitions"],
                "%s (%d records)" % (_bytes(topic["bytes"]), topic["records"]),
                _ms(topic["replication_latency_avg_ms"], topic["replication_latency_max_ms"]),
                "",
            ])
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines = [" | ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return lines
