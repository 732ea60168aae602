"""MirrorMaker 2 in dedicated mode, checked end to end on real brokers and real MM2 nodes."""

from __future__ import annotations

import base64

import pytest
from conftest import (
    ansible_playbook, cluster_bootstrap, consume, hosts_of, kafka, node, produce, targets, topics, unique,
    wait_until,
)

testinfra_hosts = targets("mirrormakers")

BIN = "/opt/kafka/current/bin"
SCRIPT = BIN + "/connect-mirror-maker.sh"
PRODUCER = """import time
for i in range(%d):
    print("seq-%%05d" %% i, flush=True)
    time.sleep(0.03)
"""
MARK_BEGIN = "# BEGIN kafkaops.mirrormaker managed block: JMX and JAAS for MirrorMaker 2"
MARK_END = "# END kafkaops.mirrormaker managed block: JMX and JAAS for MirrorMaker 2"


@pytest.fixture(scope="module")
def a_host(host):
    return node(host, hosts_of("kafka_a")[0])


def first_mm2(host):
    if host.backend.get_hostname() != hosts_of("mirrormakers")[0]:
        pytest.skip("end-to-end checks run once, from %s" % hosts_of("mirrormakers")[0])


def mm2_properties(host):
    text = host.file("/etc/kafka-mirrormaker/mm2.properties").content_string
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))


@pytest.mark.parametrize(
    "path, user, group, mode",
    [
        ("/etc/kafka-mirrormaker", "root", "kafka", 0o750),
        ("/etc/kafka-mirrormaker/mm2.properties", "root", "kafka", 0o640),
        ("/etc/kafka-mirrormaker/mm2_jaas.conf", "root", "kafka", 0o640),
        ("/var/log/kafka-mirrormaker", "kafka", "kafka", 0o750),
        ("/etc/systemd/system/kafka-mirrormaker.service", "root", "root", 0o644),
    ],
)
def test_owners_and_modes(host, path, user, group, mode):
    f = host.file(path)
    assert f.exists, path
    assert (f.user, f.group, f.mode) == (user, group, mode)


def test_mm2_properties_rendered_from_flows(host):
    props = mm2_properties(host)
    assert props["clusters"] == "A,B"
    assert props["A.bootstrap.servers"] == cluster_bootstrap("kafka_a")
    assert props["B.bootstrap.servers"] == cluster_bootstrap("kafka_b")
    assert props["A->B.enabled"] == "true"
    assert props["B->A.enabled"] == "false"
    assert props["A->B.emit.heartbeats.enabled"] == "true"
    assert props["A->B.emit.checkpoints.enabled"] == "true"
    assert props["A->B.sync.group.offsets.enabled"] == "true"
    assert props["dedicated.mode.enable.internal.rest"] == "true"
    name = host.backend.get_hostname()
    assert props["rest.advertised.host.name"] == name
    assert host.file("/opt/kafka/current/config/mm2.properties").linked_to == "/etc/kafka-mirrormaker/mm2.properties"


def test_script_block_sits_once_right_before_exec(host):
    lines = host.file(SCRIPT).content_string.splitlines()
    assert lines.count(MARK_BEGIN) == 1 and lines.count(MARK_END) == 1
    begin, end = lines.index(MARK_BEGIN), lines.index(MARK_END)
    block = lines[begin + 1:end]
    assert lines[end + 1].startswith("exec "), "the managed block must end right before the exec line"
    jmx = [line for line in block if line.startswith("export KAFKA_JMX_OPTS=")]
    assert len(jmx) == 1
    for option in ("-Dcom.sun.management.jmxremote", "-Dcom.sun.management.jmxremote.port=9998",
                   "-Dcom.sun.management.jmxremote.rmi.port=9998", "-Dcom.sun.management.jmxremote.ssl=false",
                   "-Dcom.sun.management.jmxremote.authenticate=false"):
        assert option in jmx[0].split('"')[1].split()
    assert any("-Djava.security.auth.login.config=/etc/kafka-mirrormaker/mm2_jaas.conf" in line
               for line in block if line.startswith("export KAFKA_OPTS="))


def test_jmx_port_does_not_leak_into_other_tools(host):
    # kafka-run-class.sh reads JMX_PORT like upstream; the role's port must live only in MM2's script.
    for tool in ("kafka-run-class.sh", "kafka-topics.sh", "kafka-server-start.sh"):
        assert "jmxremote.port=9998" not in host.file("/opt/kafka/current/bin/" + tool).content_string
    for path in ("/etc/environment", "/etc/profile", "/etc/default/kafka-mirrormaker"):
        if host.file(path).exists:
            assert "KAFKA_JMX_OPTS" not in host.file(path).content_string
    assert "KAFKA_JMX_OPTS" not in host.check_output("systemctl show kafka-mirrormaker -p Environment")
    # A CLI run beside the running MirrorMaker must not try to bind its JMX port.
    kafka(host, "kafka-topics.sh", "--bootstrap-server", cluster_bootstrap("kafka_b"), "--list")


def test_unit_is_hardened_and_running(host):
    svc = host.service("kafka-mirrormaker")
    assert svc.is_running and svc.is_enabled
    show = host.check_output("systemctl show kafka-mirrormaker -p User -p NoNewPrivileges -p ProtectSystem "
                             "-p PrivateTmp -p ExecStart")
    assert "User=kafka" in show and "NoNewPrivileges=yes" in show
    assert "ProtectSystem=strict" in show and "PrivateTmp=yes" in show
    assert "connect-mirror-maker.sh /etc/kafka-mirrormaker/mm2.properties" in show
    assert host.socket("tcp://0.0.0.0:9998").is_listening
    assert host.socket("tcp://0.0.0.0:8083").is_listening


def test_record_produced_on_a_arrives_on_b_under_the_policy_name(host, a_host):
    first_mm2(host)
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
    first_mm2(host)
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
    first_mm2(host)
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
    first_mm2(host)
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
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
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
