"""The dashboard's figures without Pulse: the JMX exporter in each real MirrorMaker 2 JVM, the lab's
real Prometheus (Debian's package) scraping them, and playbooks/status.yml reading both while
records flow: all 16 charts of Pulse's page, the two over time from Prometheus range queries, and
the PNG dashboard and HTML page it writes (kept under ARTIFACTS/default/status for docs/samples).

Runs once, from the first MirrorMaker host's test module; the other hosts are reached by name.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from urllib.parse import quote

import pytest
from conftest import ARTIFACTS, BIN, REPO, ansible_playbook, cluster_bootstrap, hosts_of, kafka, node, targets, unique, wait_until

sys.path.insert(0, str(REPO / "tests" / "lib"))
from report_files import parse_html, png_panels  # noqa: E402 pylint: disable=wrong-import-position

testinfra_hosts = targets("mirrormakers")[:1]

EXPORTER_PORT = 9404


def http_get(host, url):
    cmd = ("python3 -c 'import sys, urllib.request; "
           "sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=20).read().decode())' %s" % shlex.quote(url))
    result = host.run(cmd)
    assert result.rc == 0, "GET %s failed: %s" % (url, result.stderr)
    return result.stdout


def series(text, name):
    return [line for line in text.splitlines() if line.startswith(name + "{") or line.startswith(name + " ")]


def exporter_text(mm2):
    """What the JMX exporter in this MirrorMaker host's JVM serves."""
    return http_get(mm2, "http://127.0.0.1:%d/metrics" % EXPORTER_PORT)


def herders_reported(mm2):
    """The exporter's text once it holds the herders' task states, else None."""
    text = exporter_text(mm2)
    return text if series(text, "kafka_connect_task_status") else None


@pytest.fixture(scope="module")
def traffic(host):
    """Records flowing A -> B on a new topic (mirrored: the lab's flow takes .*). Produced only
    once MM2 copies the topic: records written before its discovery would be copied late, and
    that catch-up, not replication, would fill the latency window."""
    a = node(host, hosts_of("kafka_a")[0])
    topic = unique("status-probe")
    remote = "A." + topic
    partitions = 2
    kafka(a, "kafka-topics.sh", "--bootstrap-server", cluster_bootstrap("kafka_a"), "--create", "--topic", topic,
          "--partitions", partitions)

    def remote_series(name):
        """The lines of figure ``name`` for the remote topic, from every MirrorMaker node's exporter."""
        return [line for h in hosts_of("mirrormakers") for line in series(exporter_text(node(host, h)), name)
                if 'topic="%s"' % remote in line]

    wait_until("%s assigned to an MM2 task (its series in an exporter)" % remote,
               lambda: remote_series("kafka_connect_mirror_source_record_count_total"), timeout=120, interval=5)
    cmd = ("nohup timeout 200 %s/kafka-producer-perf-test.sh --topic %s --num-records 30000 --throughput 200 "
           "--record-size 200 --producer-props bootstrap.servers=%s >/tmp/%s.log 2>&1 &"
           % (BIN, topic, cluster_bootstrap("kafka_a"), topic))
    assert a.run(cmd).rc == 0

    def flowing():
        """The partitions of the remote topic whose record rate, a windowed figure, is above 0."""
        return {re.search(r'partition="(\d+)"', line).group(1)
                for line in remote_series("kafka_connect_mirror_source_record_rate")
                if float(line.rsplit(" ", 1)[1]) > 0}

    # Rates and latencies are windowed: the figures are read once every partition's window holds
    # the steady flow (the producer runs for 150 s at 200 records/s).
    wait_until("a record rate on every partition of %s" % remote, lambda: len(flowing()) == partitions,
               timeout=120, interval=5)
    return remote


def test_every_node_exports_mm2_and_connect_figures(host):
    for name in hosts_of("mirrormakers"):
        # A node restarted by an earlier test serves the JVM's figures before its herders start.
        text = wait_until("the Connect herders of %s in its exporter" % name,
                          lambda n=name: herders_reported(node(host, n)), timeout=180, interval=5)
        # Every node runs a Connect herder per flow and reports its tasks' states.
        assert series(text, "kafka_connect_coordinator_rebalance_total"), name
        # (The exporter drops the _total of the gauge completed-rebalances-total.)
        assert series(text, "kafka_connect_worker_rebalance_completed_rebalances"), name
        states = series(text, "kafka_connect_task_status")
        assert states and all('status="running"' in s for s in states), (name, states)
        # Nothing outside the rules file: no client or JVM MBeans (the scrape stays small).
        assert not series(text, "kafka_producer_producer_metrics_record_send_total"), name
    # The source tasks are spread over the nodes; together they report replicated partitions.
    merged = "".join(exporter_text(node(host, n)) for n in hosts_of("mirrormakers"))
    assert series(merged, "kafka_connect_mirror_source_record_count_total")
    assert series(merged, "kafka_connect_mirror_source_replication_latency_ms_avg")


def prometheus_query(monitor, query):
    """The series an instant query answers on the lab's Prometheus (its result list)."""
    return json.loads(http_get(monitor, "http://127.0.0.1:9090/api/v1/query?query=" + quote(query)))["data"]["result"]


def prometheus_value(monitor, query):
    """The first value an instant query answers on the lab's Prometheus, None when it holds none."""
    result = prometheus_query(monitor, query)
    return float(result[0]["value"][1]) if result else None


def target_health(monitor, job):
    """{instance: health} of the lab Prometheus' active targets of `job`."""
    targets_now = json.loads(http_get(monitor, "http://127.0.0.1:9090/api/v1/targets"))["data"]["activeTargets"]
    return {t["labels"]["instance"]: t["health"] for t in targets_now if t["labels"]["job"] == job}


def test_prometheus_scrapes_every_mm2_node(host, traffic):
    monitor = node(host, hosts_of("prometheus")[0])
    assert target_health(monitor, "mirrormaker") == {"%s:%d" % (h, EXPORTER_PORT): "up" for h in hosts_of("mirrormakers")}

    query = 'sum(kafka_connect_mirror_source_record_count_total{topic="%s"})' % traffic
    count = wait_until("Prometheus holding records of %s" % traffic,
                       lambda: prometheus_value(monitor, query) or 0.0, timeout=60, interval=5)
    assert count > 0
    # Its own status page is served too (Debian's package carries the classic UI only).
    assert "Prometheus" in http_get(monitor, "http://127.0.0.1:9090/classic/status")


LAG_EXPORTER_PORT = 9405


def test_prometheus_scrapes_the_lag_exporter(host, traffic):
    """The smoke role's lag exporter on this host (the smoke host), a service of the job's user, its
    configuration readable by that user's group only; the lab's Prometheus scrapes it and holds the
    probe topic's lag per partition (records and seconds at or above 0 while records flow)."""
    unit = host.service("kafkaops-mm2-lag-exporter")
    assert unit.is_running and unit.is_enabled
    assert host.run("systemctl show -p User --value kafkaops-mm2-lag-exporter").stdout.strip() == "mm2-smoke"
    config = host.file("/opt/kafkaops-mm2-smoke/mm2-lag-exporter.json")
    assert (config.user, config.group, config.mode) == ("root", "mm2-smoke", 0o640)
    text = http_get(host, "http://127.0.0.1:%d/metrics" % LAG_EXPORTER_PORT)
    assert "kafkaops_mm2_lag_reading_ok 1.0" in text.splitlines(), text

    monitor = node(host, hosts_of("prometheus")[0])
    assert target_health(monitor, "mm2_lag") == {"%s:%d" % (hosts_of("mirrormakers")[0], LAG_EXPORTER_PORT): "up"}

    source_topic = traffic[len("A."):]  # the lag is per source topic

    def probe_lag():
        query = 'kafkaops_mm2_lag_records{flow="A->B",topic="%s"}' % source_topic
        rows = {r["metric"]["partition"]: float(r["value"][1]) for r in prometheus_query(monitor, query)}
        return rows if sorted(rows) == ["0", "1"] else None
    records = wait_until("Prometheus holding the lag of %s per partition" % source_topic, probe_lag, timeout=90,
                         interval=5)
    seconds = prometheus_value(monitor, 'max(kafkaops_mm2_lag_seconds{flow="A->B",topic="%s"})' % source_topic)
    print("replication lag of %s in Prometheus: records %s, at most %s s" % (source_topic, records, seconds))
    assert all(value >= 0 for value in records.values()) and seconds is not None and seconds >= 0
    assert prometheus_value(monitor, 'min(kafkaops_mm2_lag_reading_ok)') == 1


def newest_smoke_latency(host):
    """The smoke job's measured end-to-end latencies (ms) from its newest report on this host."""
    listing = host.run("ls -1t /var/tmp/kafkaops-mm2-smoke/*/mm2-smoke-smoke-*.json /var/tmp/kafkaops-mm2-smoke/mm2-smoke-smoke-*.json 2>/dev/null")
    paths = [p for p in listing.stdout.split() if p]
    assert paths, "no smoke report on %s" % host.backend.get_pseudo_hostname()
    report = json.loads(host.file(paths[0]).content_string)
    return report["latency_ms"]


# The page's chart table (tests/unit/fixtures/pulse/dashboard_charts.txt, from Pulse's page).
PULSE_CHARTS = [line.split("|")[0].strip() for line in (REPO / "tests" / "unit" / "fixtures" / "pulse" / "dashboard_charts.txt")
                .read_text().splitlines() if line.count("|") == 2][2:]


def column(chart, name):
    return [row[chart["columns"].index(name)] for row in chart["rows"]]


def test_status_playbook_gives_all_sixteen_charts_while_records_flow(host, traffic, tmp_path):
    prometheus = hosts_of("prometheus")[0]
    step = 30
    # A rate over one step needs two scrapes of the probe topic within it: until Prometheus holds
    # them, the range query has no point for the topic (a topic created a minute ago has none).
    rate = 'sum(rate(kafka_connect_mirror_source_record_count_total{topic="%s"}[%ds]))' % (traffic, step)
    wait_until("Prometheus holding a rate of %s over %d s" % (traffic, step),
               lambda: (prometheus_value(node(host, prometheus), rate) or 0.0) > 0, timeout=120, interval=5)
    # The lab's Prometheus answers inside its container: the range queries go from its host.
    result = ansible_playbook("kafkaops.mirrormaker.status", "-e", "mm2_status_dir=%s" % tmp_path,
                              "-e", "mm2_status_prometheus_url=http://127.0.0.1:9090",
                              "-e", "mm2_status_prometheus_via=%s" % prometheus,
                              "-e", "mm2_status_window=600", "-e", "mm2_status_step=%d" % step)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert len(PULSE_CHARTS) == 16
    for name in PULSE_CHARTS:
        assert name in output, name
    print("\n".join(line for line in output.splitlines() if " | " in line or "-+-" in line or ": " in line[:40]))
    status = json.loads((tmp_path / "mm2-status.json").read_text())
    charts = status["charts"]
    # The JSON is written with sorted keys: the same names, in another order.
    assert sorted(charts) == sorted(PULSE_CHARTS)
    flow = {f["flow"]: f for f in status["flows"]}["A->B"]
    topic = {t["topic"]: t for t in flow["topics"]}[traffic]
    mm2_hosts = set(hosts_of("mirrormakers"))
    # The seven summary charts, for the flow.
    assert charts["Source -> Destination"]["values"]["A->B"]["source"] == "A"
    assert set(charts["Source -> Destination"]["values"]["A->B"]["nodes"]) <= mm2_hosts
    assert charts["Last Rebalance"]["values"]["A->B"] is not None
    assert charts["Completed Rebalance"]["values"]["A->B"] >= 1
    assert charts["Throughput/Sec"]["values"]["A->B"]["records"] > 0
    assert charts["Topics Synced"]["values"]["A->B"] >= 2
    assert charts["Bytes Transferred"]["values"]["A->B"]["bytes"] > 0
    assert charts["Replication Latency"]["values"]["A->B"]["avg_ms"] > 0
    assert topic["records_per_second"] > 0 and topic["records"] > 0
    assert flow["task_errors"] == 0
    # Not a Pulse chart: the replication lag of the probe topic's partitions, read from the herder's
    # committed offsets while the producer writes (mm2_lag_info), in records and seconds.
    # Lag rows name the source topic (the remote topic is A.<topic>).
    source_topic = traffic[len("A."):]
    probe_lag = [row for row in status["lag"] if row["flow"] == "A->B" and row["topic"] == source_topic]
    print("replication lag of %s: %s" % (source_topic, probe_lag))
    assert sorted(str(row["partition"]) for row in probe_lag) == ["0", "1"], status["lag"]
    assert all(row["records"] >= 0 and row["seconds"] >= 0 for row in probe_lag), probe_lag
    # The charts over time, from Prometheus' range queries: the probe's records in them.
    count = charts["Message Count"]
    assert count["available"], count
    assert count["via"] == prometheus and count["step_seconds"] == step
    ab = {s["label"]: s for s in count["series"]}["A -> B"]
    assert max(v for _t, v in ab["points"] if v is not None) > 0
    throughput = charts["Topics Throughput/Sec"]
    probe = {s["label"]: s for s in throughput["series"]}["%s (A -> B)" % traffic]
    # The producer sends 200 records/s: a 30 s step's average is above 0 and not above that.
    peak = max(v for _t, v in probe["points"] if v is not None)
    assert 0 < peak <= 200 * 1.2, probe["points"]
    # The tables, per node.
    assert traffic in column(charts["Topics Bytes Transferred"], "topic")
    assert max(b for t, b in zip(column(charts["Topics Bytes Transferred"], "topic"),
                                 column(charts["Topics Bytes Transferred"], "bytes transferred")) if t == traffic) > 0
    assert any(t == traffic and v is not None
               for t, v in zip(column(charts["Topics Replication Latency"], "topic"),
                               column(charts["Topics Replication Latency"], "replication latency avg ms")))
    assert any(traffic in topics for topics in column(charts["Synced Topics"], "topics"))
    # Each node reports the tasks it runs (Connect spreads them over the nodes).
    seen = set()
    for name in ("Task Error Metrics", "Source Task Metrics", "Connector Task Metrics", "Connect Worker Metrics"):
        nodes = set(column(charts[name], "node"))
        assert nodes and nodes <= mm2_hosts, (name, nodes)
        seen |= nodes
    assert seen == mm2_hosts
    assert set(column(charts["Task Error Metrics"], "total record errors")) == {0}
    assert set(column(charts["Task Error Metrics"], "total retries")) == {0}
    assert max(column(charts["Source Task Metrics"], "source record poll total")) > 0
    assert max(column(charts["Source Task Metrics"], "source record write total")) > 0
    assert set(column(charts["Connector Task Metrics"], "status")) == {"running"}
    assert max(column(charts["Connector Task Metrics"], "offset commit success %")) == 100
    assert sum(column(charts["Connect Worker Metrics"], "running tasks")) >= 3
    assert sum(column(charts["Connect Worker Metrics"], "failed tasks")) == 0
    # MM2's replication latency (record timestamp on A to the target's ack) is part of what the
    # smoke job measures end to end (produced on A to consumed on B): it may not exceed it.
    smoke = newest_smoke_latency(host)
    latency = topic["replication_latency_avg_ms"]
    print("status replication latency of %s: %.1f ms avg, %s ms max; smoke job end to end: min %s, p50 %s, max %s ms"
          % (traffic, latency, topic["replication_latency_max_ms"], smoke["min"], smoke["p50"], smoke["max"]))
    assert 0 < latency <= smoke["max"]
    # The dashboard: a PNG whose panels are the charts (decoded as the smoke report's is) and an
    # HTML page with every chart and the PNG.
    _w, _h, _colours, description = png_panels(str(tmp_path / "mm2-status.png"))
    for name in PULSE_CHARTS:
        assert name in description, (name, description)
    page = (tmp_path / "mm2-status.html").read_text()
    assert ("img", "mm2-status.png") in [(t, a.get("src")) for t, a in parse_html(page).seen]
    for name in PULSE_CHARTS:
        assert name.replace(">", "&gt;") in page, name
    keep = ARTIFACTS / "default" / "status"
    keep.mkdir(parents=True, exist_ok=True)
    for name in ("mm2-status.json", "mm2-status.png", "mm2-status.html"):
        shutil.copy(tmp_path / name, keep / name)
    print("status report kept in %s" % keep)


def test_status_without_prometheus_says_so(tmp_path):
    result = ansible_playbook("kafkaops.mirrormaker.status", "-e", "mm2_status_dir=%s" % tmp_path)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    charts = json.loads((tmp_path / "mm2-status.json").read_text())["charts"]
    for name in ("Message Count", "Topics Throughput/Sec"):
        assert charts[name]["available"] is False
        assert charts[name]["reason"] == "not available: no Prometheus given (mm2_status_prometheus_url)"
    assert "Message Count: not available: no Prometheus given" in result.stdout
