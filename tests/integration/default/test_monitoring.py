"""The dashboard's figures without Pulse: the JMX exporter in each real MirrorMaker 2 JVM, the lab's
real Prometheus (Debian's package) scraping them, and playbooks/status.yml reading them while
records flow.

Runs once, from the first MirrorMaker host's test module; the other hosts are reached by name.
"""

from __future__ import annotations

import json
import re
import shlex
from urllib.parse import quote

import pytest
from conftest import BIN, ansible_playbook, cluster_bootstrap, hosts_of, kafka, node, targets, unique, wait_until

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


def test_prometheus_scrapes_every_mm2_node(host, traffic):
    monitor = node(host, hosts_of("prometheus")[0])
    targets_now = json.loads(http_get(monitor, "http://127.0.0.1:9090/api/v1/targets"))["data"]["activeTargets"]
    mm2 = {t["labels"]["instance"]: t["health"] for t in targets_now if t["labels"]["job"] == "mirrormaker"}
    assert mm2 == {"%s:%d" % (h, EXPORTER_PORT): "up" for h in hosts_of("mirrormakers")}

    def records_of_probe_topic():
        query = 'sum(kafka_connect_mirror_source_record_count_total{topic="%s"})' % traffic
        answer = json.loads(http_get(monitor, "http://127.0.0.1:9090/api/v1/query?query=" + quote(query)))
        result = answer["data"]["result"]
        return float(result[0]["value"][1]) if result else 0.0

    count = wait_until("Prometheus holding records of %s" % traffic, records_of_probe_topic, timeout=60, interval=5)
    assert count > 0
    # Its own status page is served too (Debian's package carries the classic UI only).
    assert "Prometheus" in http_get(monitor, "http://127.0.0.1:9090/classic/status")


def newest_smoke_latency(host):
    """The smoke job's measured end-to-end latencies (ms) from its newest report on this host."""
    listing = host.run("ls -1t /var/tmp/kafkaops-mm2-smoke/*/mm2-smoke-smoke-*.json /var/tmp/kafkaops-mm2-smoke/mm2-smoke-smoke-*.json 2>/dev/null")
    paths = [p for p in listing.stdout.split() if p]
    assert paths, "no smoke report on %s" % host.backend.get_pseudo_hostname()
    report = json.loads(host.file(paths[0]).content_string)
    return report["latency_ms"]


def test_status_playbook_prints_and_writes_the_figures_while_records_flow(host, traffic, tmp_path):
    result = ansible_playbook("kafkaops.mirrormaker.status", "-e", "mm2_status_dir=%s" % tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    for column in ("source -> destination", "last rebalance", "completed rebalances", "throughput/s", "topics synced",
                   "bytes transferred", "replication latency", "task errors"):
        assert column in output
    print("\n".join(line for line in output.splitlines() if " | " in line or "-+-" in line))
    status = json.loads((tmp_path / "mm2-status.json").read_text())
    flow = {f["flow"]: f for f in status["flows"]}["A->B"]
    topic = {t["topic"]: t for t in flow["topics"]}[traffic]
    assert flow["records_per_second"] > 0 and flow["bytes"] > 0 and flow["records"] > 0
    assert topic["records_per_second"] > 0 and topic["records"] > 0
    assert flow["topics_synced"] >= 2
    assert flow["completed_rebalances"] >= 1 and flow["last_rebalance_seconds_ago"] is not None
    assert flow["task_errors"] == 0
    assert flow["nodes"] and set(flow["nodes"]) <= set(hosts_of("mirrormakers"))
    # MM2's replication latency (record timestamp on A to the target's ack) is part of what the
    # smoke job measures end to end (produced on A to consumed on B): it may not exceed it.
    smoke = newest_smoke_latency(host)
    latency = topic["replication_latency_avg_ms"]
    print("status replication latency of %s: %.1f ms avg, %s ms max; smoke job end to end: min %s, p50 %s, max %s ms"
          % (traffic, latency, topic["replication_latency_max_ms"], smoke["min"], smoke["p50"], smoke["max"]))
    assert 0 < latency <= smoke["max"]
