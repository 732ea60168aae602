"""MirrorMaker 2 end to end: records, heartbeats, checkpoints, JMX and a rolling restart under load.

Each check concerns the whole deployment, so it runs once, from the first MirrorMaker host
(testinfra_hosts holds only that host: nothing shows as skipped).
"""

from __future__ import annotations

import base64
import time

import pytest
from conftest import (
    REPO, ansible_playbook, cluster_bootstrap, consume, hosts_of, kafka, node, played, produce, targets, topics, unique,
    wait_until,
)

testinfra_hosts = targets("mirrormakers")[:1]

BIN = "/opt/kafka/current/bin"
PRODUCER = """import time
for i in range(%d):
    print("seq-%%05d" %% i, flush=True)
    time.sleep(0.03)
"""


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


def test_rolling_restart_of_both_nodes_loses_no_record(host, a_host):
    a, b = cluster_bootstrap("kafka_a"), cluster_bootstrap("kafka_b")
    topic, count = unique("mm2-rolling"), 1500
    kafka(a_host, "kafka-topics.sh", "--bootstrap-server", a, "--create", "--topic", topic,
          "--partitions", "2", "--replication-factor", "1")
    remote = "A." + topic
    wait_until("remote topic %s on B" % remote, lambda: remote in topics(host, b), timeout=240)
    # Records keep flowing into A while both MirrorMaker nodes restart one after the other.
    unit = unique("producer")
    a_host.run_expect([0], "cat > /tmp/%s.py <<'EOF'\n%sEOF" % (unit, PRODUCER % count))
    a_host.run_expect([0], "systemd-run --unit %s /bin/sh -c 'python3 /tmp/%s.py | %s/kafka-console-producer.sh "
                      "--bootstrap-server %s --topic %s'" % (unit, unit, BIN, a, topic))
    started = {n: node(host, n)
               .check_output("systemctl show -p ActiveEnterTimestampMonotonic --value kafka-mirrormaker")
               for n in hosts_of("mirrormakers")}
    result = ansible_playbook("kafkaops.mirrormaker.restart", "--limit", "mirrormakers")
    assert result.returncode == 0, played(result)
    for name, before in started.items():
        after = node(host, name).check_output(
            "systemctl show -p ActiveEnterTimestampMonotonic --value kafka-mirrormaker")
        assert int(after) > int(before), "%s was not restarted" % name
    wait_until("producer %s to finish" % unit,
               lambda: a_host.run("systemctl is-active %s" % unit).stdout.strip() != "active", timeout=300)
    expected = {"seq-%05d" % i for i in range(count)}
    got = wait_until("all %d records in %s" % (count, remote),
                     lambda: expected <= set(consume(host, b, remote, count * 2, 20000)) or None, timeout=300)
    assert got


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


def test_a_stopped_node_hands_its_tasks_over_within_the_rebalance_delay(host):
    """Scale-in: stop one node; the other runs every task within scheduled.rebalance.max.delay.ms (+ margin)."""
    names = hosts_of("mirrormakers")
    keep, leave = node(host, names[0]), node(host, names[1])
    delay_s = int(mm2_property(host, "B.scheduled.rebalance.max.delay.ms")) / 1000
    before = [_running_tasks(keep), _running_tasks(leave)]
    total = {c: before[0].get(c, 0) + before[1].get(c, 0) for c in set(before[0]) | set(before[1])}
    leave.run_expect([0], "systemctl stop kafka-mirrormaker")
    try:
        started = time.monotonic()
        wait_until("%s to run all tasks %s" % (names[0], total),
                   lambda: all(_running_tasks(keep).get(c, 0) >= n for c, n in total.items()),
                   timeout=delay_s + 90, interval=2)
        moved = time.monotonic() - started
        print("tasks of %s moved to %s in %.1f s (scheduled.rebalance.max.delay.ms %d s): %s"
              % (names[1], names[0], moved, delay_s, total))
        assert moved < delay_s + 90
    finally:
        leave.run_expect([0], "systemctl start kafka-mirrormaker")


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
