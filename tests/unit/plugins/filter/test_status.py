# -*- coding: utf-8 -*-
"""mm2_status / mm2_status_table: the dashboard's figures from the exporter's text.

The fixture is what a real MirrorMaker 2 served with the role's exporter rules (see its header);
the synthetic cases below change one figure at a time.
"""

from __future__ import annotations

import os

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.kafkaops.mirrormaker.plugins.filter.status import mm2_status, mm2_status_table

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "exporter-mm2-4.3.1.txt")


def recorded():
    with open(FIXTURE) as fh:
        return fh.read()


def test_recorded_exporter_text_gives_the_flow_and_its_topics():
    status = mm2_status([{"host": "mm2-1", "content": recorded()}])
    assert [f["flow"] for f in status["flows"]] == ["A->B"]
    flow = status["flows"][0]
    assert flow["nodes"] == ["mm2-1"]
    assert [t["topic"] for t in flow["topics"]] == ["A.heartbeats", "A.orders"]
    orders = flow["topics"][1]
    assert orders["partitions"] == 2 and orders["records"] == 1000
    assert flow["records"] == sum(t["records"] for t in flow["topics"])
    assert flow["topics_synced"] == 2
    assert flow["completed_rebalances"] == 6 and flow["last_rebalance_seconds_ago"] == 56
    assert flow["task_errors"] == 0
    assert flow["replication_latency_max_ms"] == max(t["replication_latency_max_ms"] for t in flow["topics"])
    node = status["nodes"][0]
    assert node["task_states"] == {"running": 3}


def series(name, value, **labels):
    inner = ",".join('%s="%s"' % kv for kv in sorted(labels.items()))
    return "%s{%s} %s\n" % (name, inner, value)


def node_text(flow=("A", "B"), topic="A.t", rate=10.0, latency=100.0, errors=0, rebalances=2, ago=30):
    src, tgt = flow
    labels = dict(source=src, target=tgt, topic=topic, partition="0")
    return "".join([
        series("kafka_connect_mirror_source_record_count_total", 100, **labels),
        series("kafka_connect_mirror_source_byte_count_total", 2048, **labels),
        series("kafka_connect_mirror_source_record_rate", rate, **labels),
        series("kafka_connect_mirror_source_byte_rate", rate * 20, **labels),
        series("kafka_connect_mirror_source_replication_latency_ms_avg", latency, **labels),
        series("kafka_connect_mirror_source_replication_latency_ms_max", latency * 2, **labels),
        series("kafka_connect_coordinator_rebalance_total", rebalances, client_id="%s->%s" % flow),
        series("kafka_connect_coordinator_last_rebalance_seconds_ago", ago, client_id="%s->%s" % flow),
        series("kafka_connect_task_error_total_record_errors_total", errors, connector="MirrorSourceConnector", task="0"),
        series("kafka_connect_task_status", 1, connector="MirrorSourceConnector", task="0", status="running"),
    ])


def test_two_nodes_of_one_flow_add_up():
    status = mm2_status([{"host": "n1", "content": node_text(rate=10, latency=100, rebalances=2, ago=30)},
                         {"host": "n2", "content": node_text(topic="A.u", rate=30, latency=200, errors=3, rebalances=3, ago=5)}])
    flow = status["flows"][0]
    assert flow["nodes"] == ["n1", "n2"]
    assert flow["records_per_second"] == 40 and flow["records"] == 200 and flow["bytes"] == 4096
    assert flow["topics_synced"] == 2
    # weighted by record rate: (10*100 + 30*200) / 40
    assert flow["replication_latency_avg_ms"] == pytest.approx(175.0)
    assert flow["replication_latency_max_ms"] == 400
    assert flow["completed_rebalances"] == 5 and flow["last_rebalance_seconds_ago"] == 5
    assert flow["task_errors"] == 3


def test_flows_are_kept_apart():
    status = mm2_status([{"host": "n1", "content": node_text(flow=("A", "B")) + node_text(flow=("B", "A"), topic="B.t")}])
    assert [f["flow"] for f in status["flows"]] == ["A->B", "B->A"]
    assert [t["topic"] for t in status["flows"][1]["topics"]] == ["B.t"]


def test_a_window_without_records_reports_no_latency():
    text = node_text().replace("replication_latency_ms_avg{", "ignored{").replace("replication_latency_ms_max{", "ignored2{")
    text += series("kafka_connect_mirror_source_replication_latency_ms_avg", "NaN", source="A", target="B", topic="A.t", partition="0")
    flow = mm2_status([{"host": "n1", "content": text}])["flows"][0]
    assert flow["replication_latency_avg_ms"] is None and flow["replication_latency_max_ms"] is None
    assert "-" in mm2_status_table({"flows": [flow], "nodes": []})[2]


def test_table_has_the_dashboard_columns_and_a_row_per_topic():
    lines = mm2_status_table(mm2_status([{"host": "mm2-1", "content": recorded()}]))
    header = [c.strip() for c in lines[0].split("|")]
    assert header == ["source -> destination", "last rebalance", "completed rebalances", "throughput/s",
                      "topics synced", "bytes transferred", "replication latency", "task errors"]
    assert lines[2].startswith("A -> B")
    assert [line.split("|")[0].strip() for line in lines[3:]] == ["A.heartbeats", "A.orders"]
    assert len({len(line) for line in lines[:2]}) == 1


def test_text_that_is_not_prometheus_format_names_the_host():
    with pytest.raises(AnsibleFilterError, match="mm2-9"):
        mm2_status([{"host": "mm2-9", "content": "this is { not the format\n"}])
