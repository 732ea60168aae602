"""MirrorMaker 2 end to end: records, heartbeats, checkpoints, JMX and a rolling restart under load.

Each check concerns the whole deployment, so it runs once, from the first MirrorMaker host
(testinfra_hosts holds only that host: nothing shows as skipped).
"""

from __future__ import annotations

import base64
import time

import pytest
from conftest import (
    REPO, Producer, ansible_playbook, cluster_bootstrap, consume, hosts_of, kafka, node, played,
    produce, started_at, targets, topics, unique, wait_until,
)
import recap  # tests/lib, on the path once conftest is loaded

testinfra_hosts = targets("mirrormakers")[:1]

BIN = "/opt/kafka/current/bin"


def mm2_property(host, key):
    text = host.file("/etc/kafka-mirrormaker/mm2.properties").content_string
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))[key]


@pytest.fixture(scope="module")
def a_host(host):
    return node(host, hosts_of("kafka_a")[0])


def test_record_produced_on_a_arrives_on_b_under_the_policy_name(host, a_host):
    topic = unique("mm2-e2e")
    a, b = cluster_bootstrap("kafka_a"), cluster_bootstrap("kafka_b")
    kafka(a_host, "kafka-topics.sh", "--bootstrap-server", a, "--create", "--topic", topic,
          "--partitions", "2", "--replication-factor", "1")
    values = [unique("rec%d" % i) for i in range(10)]
    produce(a_host, a, topic, values)
    remote = "A." + topic
    wait_until("remote topic %s on B" % remote, lambda: remote in topics(host, b), timeout=240)
    got = wait_until("10 records in %s" % remote,
                     lambda: sorted(consume(host, b, remote, 10, 20000)) == sorted(values), timeout=240)
    assert got


def test_heartbeats_and_checkpoints_reach_b(host, a_host):
    a, b = cluster_bootstrap("kafka_a"), cluster_bootstrap("kafka_b")
    topic, group = unique("mm2-group"), unique("verify-group")
    kafka(a_host, "kafka-topics.sh", "--bootstrap-server", a, "--create", "--topic", topic,
          "--partitions", "1", "--replication-factor", "1")
    produce(a_host, a, topic, [unique("g%d" % i) for i in range(5)])
    assert len(consume(a_host, a, topic, 5, 30000, "--group", group)) == 5
    wait_until("heartbeats topic on B", lambda: "heartbeats" in topics(host, b), timeout=240)
    wait_until("A.checkpoints.internal on B", lambda: "A.checkpoints.internal" in topics(host, b), timeout=240)
    # sync.group.offsets.enabled: the group itself appears on B with translated offsets.
    wait_until("group %s synced to B" % group,
               lambda: group in kafka(host, "kafka-consumer-groups.sh", "--bootstrap-server", b, "--list").stdout,
               timeout=300)


def test_jmx_answers_with_mm2_mbeans_and_the_jaas_property(host, jmx_probe_class):
    probe = base64.b64encode(jmx_probe_class.read_bytes()).decode("ascii")
    found, properties = [], {}
    for name in hosts_of("mirrormakers"):
        mm2 = node(host, name)
        mm2.check_output("echo %s | base64 -d > /tmp/JmxProbe.class" % probe)
        out = mm2.check_output("java -cp /tmp JmxProbe localhost 9998 'kafka.connect.mirror:*'")
        found += [line.split("\t", 1)[1] for line in out.splitlines() if line.startswith("mbean\t")]
        properties[name] = dict(line.split("\t")[1:3] for line in out.splitlines()
                                if line.startswith("property\t") and line.count("\t") == 2)
    # The source task's metrics live on whichever node runs it.
    assert any(n.startswith("kafka.connect.mirror:type=MirrorSourceConnector,") for n in found), found
    for name, props in properties.items():
        assert props.get("java.security.auth.login.config") == "/etc/kafka-mirrormaker/mm2_jaas.conf", name
        # The JVM got the block's options one by one, not run together.
        assert props.get("com.sun.management.jmxremote.authenticate") == "false", name
        assert props.get("com.sun.management.jmxremote.port") == "9998", name


def _mirrored_topic(host, a_host, topic):
    """`topic` made on A with two partitions; its remote topic's name once it exists on B."""
    kafka(a_host, "kafka-topics.sh", "--bootstrap-server", cluster_bootstrap("kafka_a"), "--create", "--topic", topic,
          "--partitions", "2", "--replication-factor", "1")
    remote = "A." + topic
    wait_until("remote topic %s on B" % remote, lambda: remote in topics(host, cluster_bootstrap("kafka_b")),
               timeout=240)
    return remote


def _all_arrive(host, producer, remote):
    """Every record the finished producer wrote is in `remote` on B (duplicates allowed)."""
    wait_until("all %d records in %s" % (producer.count, remote),
               lambda: producer.records <= set(consume(host, cluster_bootstrap("kafka_b"), remote, producer.count * 2,
                                                       20000)) or None, timeout=300)


def test_rolling_restart_of_both_nodes_loses_no_record(host, a_host):
    a = cluster_bootstrap("kafka_a")
    topic = unique("mm2-rolling")
    remote = _mirrored_topic(host, a_host, topic)
    # Records keep flowing into A while both MirrorMaker nodes restart one after the other.
    producer = Producer(a_host, a, topic)
    started = {n: started_at(node(host, n), "kafka-mirrormaker") for n in hosts_of("mirrormakers")}
    result = ansible_playbook("kafkaops.mirrormaker.restart", "--limit", "mirrormakers")
    assert result.returncode == 0, played(result)
    for name, before in started.items():
        assert started_at(node(host, name), "kafka-mirrormaker") > before, "%s was not restarted" % name
    producer.finish("the restarts")
    _all_arrive(host, producer, remote)


def _running_tasks(mm2):
    """connector -> tasks this node runs, from its JMX (Kafka's JmxTool, as the role's health check)."""
    out = mm2.run("%s/kafka-run-class.sh org.apache.kafka.tools.JmxTool --jmx-url "
                  "service:jmx:rmi:///jndi/rmi://127.0.0.1:9998/jmxrmi --object-name "
                  "'kafka.connect:type=connect-worker-metrics,connector=*' --attributes connector-running-task-count "
                  "--one-time true --report-format properties" % BIN).stdout
    counts = {}
    for line in out.splitlines():
        if ",connector=" in line and line.endswith(tuple("0123456789")):
            name = line.split(",connector=", 1)[1].split(":", 1)[0]
            counts[name] = counts.get(name, 0) + int(float(line.rsplit("=", 1)[1]))
    return counts


def _taken_out(tmp_path, name):
    """An inventory source that takes `name` out (mirrormaker_state: absent), given after Molecule's."""
    path = tmp_path / "taken-out.yml"
    path.write_text("all:\n  hosts:\n    %s:\n      mirrormaker_state: absent\n" % name)
    return str(path)


def test_a_node_taken_out_by_the_variable_hands_its_tasks_over_and_loses_nothing(host, a_host, tmp_path):
    """mirrormaker_state: absent on the second node, while a producer writes into A: the run stops it,
    removes its unit and files, and returns only once the node that stays runs every task both ran,
    after scheduled.rebalance.max.delay.ms; no record is lost. A run limited to the leaving node is
    refused before anything changes; a second run changes nothing; the node then comes back."""
    names = hosts_of("mirrormakers")
    keep, leave = node(host, names[0]), node(host, names[1])
    extra = _taken_out(tmp_path, names[1])
    refused = ansible_playbook("kafkaops.mirrormaker.mirrormaker", "-i", extra, "--limit", names[1])
    assert refused.returncode != 0
    assert ("mirrormaker_state: absent on %s, but %s, which take over its tasks, are not in this run"
            % (names[1], names[0])) in refused.stdout + refused.stderr, played(refused)
    assert leave.service("kafka-mirrormaker").is_running

    a = cluster_bootstrap("kafka_a")
    topic = unique("mm2-scale-in")
    remote = _mirrored_topic(host, a_host, topic)
    before = [_running_tasks(keep), _running_tasks(leave)]
    total = {c: before[0].get(c, 0) + before[1].get(c, 0) for c in set(before[0]) | set(before[1])}
    producer = Producer(a_host, a, topic, interval=0.05)
    try:
        started = time.monotonic()
        result = ansible_playbook("kafkaops.mirrormaker.mirrormaker", "-i", extra)
        took = time.monotonic() - started
        assert result.returncode == 0, played(result)
        # read at once: the run itself waited until the node that stays ran them
        after = _running_tasks(keep)
        assert all(after.get(c, 0) >= n for c, n in total.items()), (total, after)
        producer.writing("the run")
        assert not leave.file("/etc/systemd/system/kafka-mirrormaker.service").exists
        assert not leave.service("kafka-mirrormaker").is_running
        assert not leave.file("/etc/kafka-mirrormaker").exists and not leave.file("/var/log/kafka-mirrormaker").exists
        assert "managed block" not in leave.file(BIN + "/connect-mirror-maker.sh").content_string
        print("%s taken out in a %.0f s run; %s runs every task: %s (before: %s)"
              % (names[1], took, names[0], after, before))
        again = ansible_playbook("kafkaops.mirrormaker.mirrormaker", "-i", extra)
        assert again.returncode == 0, played(again)
        changed = recap.changed(again.stdout)
        assert changed[names[1]] == 0 and changed[names[0]] == 0, played(again)
        producer.finish("the second run")
        _all_arrive(host, producer, remote)
    finally:
        producer.stop()
        back = ansible_playbook("kafkaops.mirrormaker.mirrormaker")
        assert back.returncode == 0, played(back)
    assert leave.service("kafka-mirrormaker").is_running and leave.service("kafka-mirrormaker").is_enabled


def test_the_smoke_job_ran_on_spark_as_its_unprivileged_user(host):
    """Converge ran playbooks/smoke.yml on this host: its reports were written by mm2-smoke, not
    root, and say Spark computed the verdict."""
    import json
    user = host.user("mm2-smoke")
    assert user.exists and user.shell == "/usr/sbin/nologin" and user.uid < 1000
    reports = host.check_output("ls -1 /var/tmp/kafkaops-mm2-smoke/mm2-smoke-smoke-*.json").split()
    assert reports
    for path in reports:
        assert host.file(path).user == "mm2-smoke"
    doc = json.loads(host.file(reports[-1]).content_string)
    assert doc["verdict"] == "pass", doc["checks"]
    assert doc["spark"]["master"] == "local[2]" and doc["spark"]["version"] == "4.2.0"
    assert doc["report_version"] == 2 and doc["summary"]["pass"] == len(doc["checks"]) - 1 > 0
    # cycles is configured, but the lab's B->A flow is not enabled: a skip with its reason
    assert [(c["check"], c["status"]) for c in doc["checks"] if c["status"] != "pass"] == [("cycles", "skip")]
    # the JUnit XML the host wrote is what a CI system reads: valid for Jenkins' schema, a case per check
    import xml.etree.ElementTree as ET
    import xmlschema
    junit = host.file(reports[-1][:-len(".json")] + ".xml").content
    xmlschema.XMLSchema(str(REPO / ".cache" / "junit" / "junit-10.xsd")).validate(junit.decode("utf-8"))
    assert ET.fromstring(junit).find("testsuite").get("tests") == str(len(doc["checks"]))
    assert host.file("/opt/kafkaops-mm2-smoke/mm2-smoke.json").mode == 0o640
    assert host.file("/opt/kafkaops-mm2-smoke/mm2-smoke.json").group == "mm2-smoke"
