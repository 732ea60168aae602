# -*- coding: utf-8 -*-
"""mm2_status / mm2_status_queries / mm2_status_table and the report files: the 16 charts of Pulse's
dashboard from the exporter's text and Prometheus' answers.

The fixture is what a real MirrorMaker 2 served with the role's exporter rules (recorded by
tests/live/record_exporter.py, see its header); the synthetic cases change one figure at a time.
"""

from __future__ import annotations

import json
import os

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.kafkaops.mirrormaker.plugins.filter.status import mm2_status, mm2_status_queries, mm2_status_table
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import dashboard
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import status as model
from report_files import parse_html, png_panels

HERE = os.path.dirname(__file__)
FIXTURE = os.path.join(HERE, "fixtures", "exporter-mm2-4.3.1.txt")
# The Pulse page's chart table, copied from ../shared/sources/acceldata-pulse-kafka-mirrormaker.txt.
PAGE_CHARTS = os.path.join(HERE, "..", "..", "fixtures", "pulse", "dashboard_charts.txt")


def recorded():
    with open(FIXTURE) as fh:
        return fh.read()


def page_chart_names():
    with open(PAGE_CHARTS) as fh:
        rows = [line.split("|")[0].strip() for line in fh if line.count("|") == 2]
    return [name for name in rows if name not in ("Name", "---")]


def test_the_page_names_sixteen_charts_and_the_report_uses_their_names():
    assert page_chart_names() == list(model.CHARTS)
    assert len(model.CHARTS) == 16


def test_recorded_exporter_text_gives_every_chart():
    status = mm2_status([{"host": "mm2-1", "content": recorded()}])
    assert list(status["charts"]) == list(model.CHARTS)
    assert [f["flow"] for f in status["flows"]] == ["A->B", "B->A"]
    flow = status["flows"][0]
    assert [t["topic"] for t in flow["topics"]] == ["A.heartbeats", "A.orders"]
    orders = flow["topics"][1]
    assert orders["partitions"] == 2 and orders["records"] == 1400
    assert flow["completed_rebalances"] == 6 and flow["last_rebalance_seconds_ago"] == 87
    charts = status["charts"]
    assert charts["Completed Rebalance"]["values"] == {"A->B": 6, "B->A": 6}
    assert charts["Topics Synced"]["values"] == {"A->B": 2, "B->A": 1}
    assert charts["Bytes Transferred"]["values"]["A->B"] == {"bytes": flow["bytes"], "records": flow["records"]}
    # Every table has a row per node and its tasks, with the recorded values.
    tasks = {(r[1], r[2]): r for r in charts["Source Task Metrics"]["rows"]}
    assert set(tasks) == {("MirrorSourceConnector", 0), ("MirrorCheckpointConnector", 0), ("MirrorHeartbeatConnector", 0)}
    assert tasks[("MirrorCheckpointConnector", 0)][3:6] == [0.0, 14.0, 14.0]
    commits = {r[1]: r for r in charts["Connector Task Metrics"]["rows"]}
    columns = charts["Connector Task Metrics"]["columns"]
    assert commits["MirrorSourceConnector"][columns.index("status")] == "running"
    # Kafka's "percentage" is a fraction: 1.0 recorded, 100 % shown.
    assert commits["MirrorSourceConnector"][columns.index("offset commit success %")] == 100.0
    assert commits["MirrorSourceConnector"][columns.index("offset commit failure %")] == 0.0
    errors = charts["Task Error Metrics"]
    assert "total retries" in errors["columns"] and len(errors["rows"]) == 3
    workers = charts["Connect Worker Metrics"]
    assert workers["rows"][0][:3] == ["mm2-1", "MirrorCheckpointConnector", 1.0]
    assert charts["Synced Topics"]["rows"] == [["mm2-1", "A->B", 2, "A.heartbeats, A.orders"],
                                               ["mm2-1", "B->A", 1, "B.heartbeats"]]
    for name in model.OVER_TIME:
        assert charts[name] == {"kind": "line", "available": False, "reason": model.NO_PROMETHEUS, "series": []}


def series(name, value, **labels):
    inner = ",".join('%s="%s"' % kv for kv in sorted(labels.items()))
    return "%s{%s} %s\n" % (name, inner, value)


def node_text(flow=("A", "B"), topic="A.t", rate=10.0, latency=100.0, errors=0, rebalances=2, ago=30, retries=0,
              commit_ok=1.0, polled=100, tasks_paused=0):
    src, tgt = flow
    labels = dict(source=src, target=tgt, topic=topic, partition="0")
    task = dict(connector="MirrorSourceConnector", task="0")
    return "".join([
        series("kafka_connect_mirror_source_record_count_total", 100, **labels),
        series("kafka_connect_mirror_source_byte_count_total", 2048, **labels),
        series("kafka_connect_mirror_source_record_rate", rate, **labels),
        series("kafka_connect_mirror_source_byte_rate", rate * 20, **labels),
        series("kafka_connect_mirror_source_replication_latency_ms_avg", latency, **labels),
        series("kafka_connect_mirror_source_replication_latency_ms_max", latency * 2, **labels),
        series("kafka_connect_coordinator_rebalance_total", rebalances, client_id="%s->%s" % flow),
        series("kafka_connect_coordinator_last_rebalance_seconds_ago", ago, client_id="%s->%s" % flow),
        series("kafka_connect_task_error_total_record_errors_total", errors, **task),
        series("kafka_connect_task_error_total_retries_total", retries, **task),
        series("kafka_connect_task_status", 1, status="running", **task),
        series("kafka_connect_task_offset_commit_success_percentage", commit_ok, **task),
        series("kafka_connect_task_offset_commit_failure_percentage", 1 - commit_ok, **task),
        series("kafka_connect_source_task_source_record_poll_total", polled, **task),
        series("kafka_connect_source_task_source_record_write_total", polled - 1, **task),
        series("kafka_connect_source_task_source_record_active_count", 1, **task),
        series("kafka_connect_worker_connector_total_task_count", 1, connector="MirrorSourceConnector"),
        series("kafka_connect_worker_connector_paused_task_count", tasks_paused, connector="MirrorSourceConnector"),
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
    charts = status["charts"]
    assert charts["Last Rebalance"]["values"] == {"A->B": 5}
    assert charts["Throughput/Sec"]["values"] == {"A->B": {"records": 40, "bytes": 800}}
    assert charts["Replication Latency"]["values"]["A->B"] == {"avg_ms": pytest.approx(175.0), "max_ms": 400}
    assert charts["Source -> Destination"]["values"] == {"A->B": {"source": "A", "target": "B", "nodes": ["n1", "n2"]}}


# Each per-node table: the chart, the node's text, the column and the value the table must hold.
@pytest.mark.parametrize("chart, text, column, expected", [
    ("Task Error Metrics", node_text(errors=4), "total record errors", 4),
    ("Task Error Metrics", node_text(retries=7), "total retries", 7),
    ("Source Task Metrics", node_text(polled=500), "source record poll total", 500),
    ("Source Task Metrics", node_text(polled=500), "source record write total", 499),
    ("Source Task Metrics", node_text(), "source record active count", 1),
    ("Connector Task Metrics", node_text(commit_ok=0.75), "offset commit success %", 75.0),
    ("Connector Task Metrics", node_text(commit_ok=0.75), "offset commit failure %", 25.0),
    ("Connector Task Metrics", node_text(), "status", "running"),
    ("Connect Worker Metrics", node_text(tasks_paused=1), "paused tasks", 1),
    ("Connect Worker Metrics", node_text(), "total tasks", 1),
    ("Topics Bytes Transferred", node_text(), "bytes transferred", 2048),
    ("Topics Replication Latency", node_text(latency=40), "replication latency max ms", 80),
    ("Synced Topics", node_text(topic="A.x"), "topics", "A.x"),
])
def test_each_table_holds_its_figure_per_node(chart, text, column, expected):
    status = mm2_status([{"host": "n1", "content": text}, {"host": "n2", "content": text}])
    table = status["charts"][chart]
    assert table["columns"][0] == "node"
    assert [row[0] for row in table["rows"]] == ["n1", "n2"]
    assert [row[table["columns"].index(column)] for row in table["rows"]] == [expected, expected]


def test_flows_are_kept_apart():
    status = mm2_status([{"host": "n1", "content": node_text(flow=("A", "B")) + node_text(flow=("B", "A"), topic="B.t")}])
    assert [f["flow"] for f in status["flows"]] == ["A->B", "B->A"]
    assert [t["topic"] for t in status["flows"][1]["topics"]] == ["B.t"]


def test_a_window_without_records_reports_no_latency():
    text = node_text().replace("replication_latency_ms_avg{", "ignored{").replace("replication_latency_ms_max{", "ignored2{")
    text += series("kafka_connect_mirror_source_replication_latency_ms_avg", "NaN", source="A", target="B", topic="A.t", partition="0")
    status = mm2_status([{"host": "n1", "content": text}])
    flow = status["flows"][0]
    assert flow["replication_latency_avg_ms"] is None and flow["replication_latency_max_ms"] is None
    assert mm2_status_table(status)[2].rstrip().endswith("| -")


def test_table_has_the_page_names_and_a_row_per_topic():
    lines = mm2_status_table(mm2_status([{"host": "mm2-1", "content": recorded()}]))
    header = [c.strip() for c in lines[0].split("|")]
    assert header == list(model.SUMMARY)
    assert lines[2].startswith("A -> B")
    assert [line.split("|")[0].strip() for line in lines[3:5]] == ["A.heartbeats", "A.orders"]
    assert lines[1].count("-+-") == len(model.SUMMARY) - 1
    text = "\n".join(lines)
    for name in model.CHARTS[7:]:
        assert "\n%s: " % name in text


def test_text_that_is_not_prometheus_format_names_the_host():
    with pytest.raises(AnsibleFilterError, match="mm2-9"):
        mm2_status([{"host": "mm2-9", "content": "this is { not the format\n"}])


# ----------------------------------------------------------------- the charts over time

OPTIONS = {"prometheus_url": "http://127.0.0.1:9090", "prometheus_via": "monitor-1", "window": 900, "step": 60}


def test_range_queries_cover_the_window_before_the_end():
    queries = mm2_status_queries(OPTIONS, 10000.7, ["monitor-1", "mm2-1"])
    assert [q["chart"] for q in queries] == ["Message Count", "Topics Throughput/Sec"]
    for q in queries:
        assert (q["start"], q["end"], q["step_seconds"]) == (9100, 10000, 60)
        assert q["url"].startswith("http://127.0.0.1:9090/api/v1/query_range?query=")
        assert "start=9100&end=10000&step=60" in q["url"] and q["via"] == "monitor-1"
        assert "[60s]" in q["query"]


def test_no_prometheus_no_query():
    assert mm2_status_queries(dict(OPTIONS, prometheus_url="", prometheus_via=""), 10000) == []


@pytest.mark.parametrize("change, message", [
    ({"prometheus_url": "127.0.0.1:9090"}, "mm2_status_prometheus_url: '127.0.0.1:9090' is not an http"),
    ({"prometheus_via": "nowhere"}, "mm2_status_prometheus_via: 'nowhere' is not an inventory host"),
    ({"prometheus_url": ""}, "mm2_status_prometheus_via: 'monitor-1' given without mm2_status_prometheus_url"),
    ({"window": "15m"}, "mm2_status_window: '15m' is not a positive number of seconds"),
    ({"step": 0}, "mm2_status_step: 0 is not a positive number of seconds"),
    ({"step": 600}, "mm2_status_step: 600 s leaves fewer than two points in mm2_status_window (900 s)"),
    ({"window": 86400 * 30, "step": 60}, "Prometheus answers at most 11000"),
])
def test_bad_options_are_refused_naming_the_variable(change, message):
    with pytest.raises(AnsibleFilterError, match=message.replace("(", r"\(").replace(")", r"\)")):
        mm2_status_queries(dict(OPTIONS, **change), 10000, ["monitor-1"])


def test_unknown_option_is_refused():
    with pytest.raises(AnsibleFilterError, match="unknown options windw"):
        mm2_status_queries(dict(OPTIONS, windw=1), 10000, ["monitor-1"])


def answer(result, status="success"):
    return {"status": status, "data": {"resultType": "matrix", "result": result}}


def ranges(message_count, throughput):
    queries = mm2_status_queries(OPTIONS, 10000, ["monitor-1"])
    return [{"item": queries[0], "json": message_count}, {"item": queries[1], "json": throughput}]


FLOWING = ranges(
    answer([{"metric": {"source": "A", "target": "B"}, "values": [[9100 + 60 * i, str(600 + i)] for i in range(16)]},
            {"metric": {"source": "B", "target": "A"}, "values": [[9100 + 60 * i, "60"] for i in range(16)]}]),
    answer([{"metric": {"source": "A", "target": "B", "topic": "A.orders"}, "values": [[9100, "10"], [9160, "NaN"]]}]))


@pytest.mark.parametrize("answers, chart, labels, reason", [
    (FLOWING, "Message Count", ["A -> B", "B -> A"], None),
    (FLOWING, "Topics Throughput/Sec", ["A.orders (A -> B)"], None),
    (ranges(answer([]), answer([])), "Message Count", [], "holds no kafka_connect_mirror_source_record_count_total"),
    (ranges({"status": "error", "error": "parse error"}, answer([])), "Message Count", [], "answered parse error"),
    (None, "Topics Throughput/Sec", [], "no Prometheus given"),
])
def test_charts_over_time_from_prometheus_answers(answers, chart, labels, reason):
    line = mm2_status([{"host": "n1", "content": node_text()}], answers)["charts"][chart]
    assert [s["label"] for s in line["series"]] == labels
    assert line["available"] is (reason is None)
    if reason:
        assert reason in line["reason"] and line["reason"].startswith("not available: ")
    else:
        assert line["window_seconds"] == 900 and line["via"] == "monitor-1"


def test_points_keep_their_times_and_a_nan_is_no_value():
    line = mm2_status([{"host": "n1", "content": node_text()}], FLOWING)["charts"]["Topics Throughput/Sec"]
    assert line["series"][0]["points"] == [[9100.0, 10.0], [9160.0, None]]
    count = mm2_status([{"host": "n1", "content": node_text()}], FLOWING)["charts"]["Message Count"]
    assert count["series"][0]["points"][-1] == [10000.0, 615.0]


# ----------------------------------------------------------------- the report files

def report_status(answers=None, lag=None):
    status = mm2_status([{"host": "mm2-1", "content": recorded()}, {"host": "mm2-2", "content": node_text(topic="A.x")}],
                        answers)
    status["generated_at"] = "2026-11-27T17:00:00Z"
    if lag is not None:
        status["lag"] = lag
    return status


LAG = [{"flow": "A->B", "topic": "orders", "partition": 0, "records": 12, "seconds": 1.5}]


@pytest.mark.parametrize("answers, lag, expected_extra", [
    (FLOWING, None, []),
    (None, None, []),
    (FLOWING, LAG, ["Replication Lag"]),
])
def test_dashboard_png_has_every_chart_as_a_panel(tmp_path, answers, lag, expected_extra):
    status = report_status(answers, lag)
    path = str(tmp_path / "mm2-status.png")
    names = dashboard.write_png(status, path)
    width, height, colours, description = png_panels(path)
    assert description == "panels: " + "; ".join(names)
    assert names == [", ".join(model.SUMMARY)] + list(model.CHARTS[7:]) + expected_extra
    for name in page_chart_names():
        assert name in description
    assert width == 1400 and height > 2000
    # Drawn lines (matplotlib's first two colours) only when Prometheus answered.
    assert ((31, 119, 180) in colours) is (answers is not None)


def test_html_page_has_every_chart_the_png_and_the_lag_when_given(tmp_path):
    status = report_status(FLOWING, LAG)
    page = dashboard.html_page(status, "mm2-status.png", "mm2-status.json")
    parsed = parse_html(page)
    assert ("img", "mm2-status.png") in [(t, a.get("src")) for t, a in parsed.seen]
    for name in page_chart_names() + ["Replication Lag"]:
        assert name.replace(">", "&gt;") in page
    assert "A.orders (A -&gt; B)" in page
    no_lag = dashboard.html_page(report_status(), "p.png", "p.json")
    assert "Replication Lag" not in no_lag
    assert model.NO_PROMETHEUS in no_lag


def test_every_chart_name_is_in_the_json_the_table_and_the_report(tmp_path):
    status = report_status(FLOWING)
    document = json.loads(json.dumps(status))
    text = "\n".join(mm2_status_table(status))
    png = str(tmp_path / "s.png")
    dashboard.write_png(status, png)
    description = png_panels(png)[3]
    page = dashboard.html_page(status, "s.png", "s.json")
    for name in page_chart_names():
        assert name in document["charts"], name
        assert name in text, name
        assert name in description, name
        assert name.replace(">", "&gt;") in page, name
