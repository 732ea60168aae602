"""MirrorMaker 2 in dedicated mode, checked end to end on real brokers and real MM2 nodes."""

from __future__ import annotations

import pytest
from conftest import cluster_bootstrap, kafka, targets

testinfra_hosts = targets("mirrormakers")

BIN = "/opt/kafka/current/bin"
SCRIPT = BIN + "/connect-mirror-maker.sh"
MARK_BEGIN = "# BEGIN kafkaops.mirrormaker managed block: JMX and JAAS for MirrorMaker 2"
MARK_END = "# END kafkaops.mirrormaker managed block: JMX and JAAS for MirrorMaker 2"


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
    # Worker settings reach a herder only under the target's alias (MirrorMakerConfig.workerConfig).
    assert props["B.scheduled.rebalance.max.delay.ms"] == "30000"
    assert props["B.offset.flush.interval.ms"] == "10000"
    # B->A is disabled but emits heartbeats, so it runs a herder too (MirrorMakerConfig.clusterPairs)
    assert props["A.scheduled.rebalance.max.delay.ms"] == "30000"
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
