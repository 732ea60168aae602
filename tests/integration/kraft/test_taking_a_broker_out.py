"""kafka_broker_state: absent on cluster A's fourth broker, while a producer writes with acks=all.

Without kafka_broker_move_replicas the run refuses, naming the partitions the broker holds, and the
broker keeps running. With it, the run moves them to the three brokers that stay (a throttled
reassignment through the Admin API), stops the broker, unregisters it from the KRaft controllers
and removes its unit, configuration and data; nothing acknowledged is lost, and the smoke job's
reconcile (Spark, on the MirrorMaker host) finds A's topic and its mirror on B equal. A second run
changes nothing; the broker then comes back with a run without the variable.

The moves run from the MirrorMaker host with the smoke job's Python (kafka-python): the lab's
controller cannot resolve the lab's host names (docs/lab.md).
"""

from __future__ import annotations

import re
import time

from conftest import (
    Producer, ansible_playbook, consume, hosts_of, kafka, node, played, targets, unique, wait_until,
)
import recap  # tests/lib, on the path once conftest is loaded

testinfra_hosts = targets("kafka_a_brokers")[:1]

SMOKE_PYTHON = "/opt/kafkaops-mm2-smoke/venv/bin/python"


def bootstrap(group):
    return ",".join("%s:9092" % h for h in hosts_of(group))


def taken_out(tmp_path, name, move):
    path = tmp_path / ("taken-out-%s.yml" % ("move" if move else "stay"))
    path.write_text(
        "all:\n  hosts:\n    %s:\n      kafka_broker_state: absent\n      kafka_broker_move_replicas: %s\n"
        "      kafka_broker_move_throttle: 10485760\n      kafka_broker_admin_delegate_to: %s\n"
        "      kafka_broker_admin_python: %s\n"
        % (name, "true" if move else "false", hosts_of("mirrormakers")[0], SMOKE_PYTHON))
    return str(path)


def replicas_on(host, servers, node_id):
    """Partitions (topic-partition) of every topic, internal ones included, with a replica on node_id."""
    out = kafka(host, "kafka-topics.sh", "--bootstrap-server", servers, "--describe").stdout
    found = []
    for line in out.splitlines():
        match = re.search(r"Topic: (\S+)\s+Partition: (\d+)\s+Leader: \S+\s+Replicas: (\S+)", line)
        if match and str(node_id) in match.group(3).split(","):
            found.append("%s-%s" % match.group(1, 2))
    return found


def test_a_broker_taken_out_moves_its_replicas_off_under_load_and_comes_back(host, tmp_path):
    names = hosts_of("kafka_a_brokers")
    leave_name = names[-1]
    leave = node(host, leave_name)
    props = dict(line.split("=", 1) for line in leave.file("/etc/kafka/server.properties").content_string.splitlines()
                 if line and not line.startswith("#"))
    node_id = int(props["node.id"])
    a, stay = bootstrap("kafka_a_brokers"), ",".join("%s:9092" % h for h in names[:-1])
    topic = unique("kraft-out")
    # four partitions of three replicas on four brokers: the leaving one holds three of them
    kafka(host, "kafka-topics.sh", "--bootstrap-server", a, "--create", "--topic", topic, "--partitions", "4",
          "--replication-factor", "3", "--config", "min.insync.replicas=2")
    held = replicas_on(host, a, node_id)
    assert len([p for p in held if p.startswith(topic + "-")]) == 3, held

    refused = ansible_playbook("kafkaops.mirrormaker.kafka", "-i", taken_out(tmp_path, leave_name, False))
    assert refused.returncode != 0
    message = "move: broker %d still holds replicas of %d partitions (" % (node_id, len(held))
    assert message in refused.stdout + refused.stderr, played(refused)
    assert leave.service("kafka").is_running

    producer = Producer(host, a, topic, interval=0.02)
    try:
        moved = taken_out(tmp_path, leave_name, True)
        started = time.monotonic()
        result = ansible_playbook("kafkaops.mirrormaker.kafka", "-i", moved)
        took = time.monotonic() - started
        assert result.returncode == 0, played(result)
        producer.writing("the run")
        assert replicas_on(host, stay, node_id) == []
        assert not leave.service("kafka").is_running
        assert not leave.file("/etc/systemd/system/kafka.service").exists
        assert not leave.file("/etc/kafka").exists and not leave.file("/var/lib/kafka/data").exists
        # the controllers no longer have it: a second unregistration finds nothing
        again = kafka(host, "kafka-cluster.sh", "unregister", "--bootstrap-server", stay, "--id", node_id, check=False)
        # (4.x: "... is not currently registered"; 3.9: "The given broker ID was not registered.")
        assert again.rc != 0 and re.search(r"is not currently registered|BrokerIdNotRegisteredException",
                                           again.stderr), (again.stdout, again.stderr)
        print("broker %d taken out in a %.0f s run, %d partitions moved off it, while %s was written"
              % (node_id, took, len(held), topic))
        rerun = ansible_playbook("kafkaops.mirrormaker.kafka", "-i", moved)
        assert rerun.returncode == 0, played(rerun)
        assert recap.changed(rerun.stdout)[leave_name] == 0, played(rerun)
        producer.finish("the second run", timeout=600)
        expected = producer.records
        count = len(expected)
        on_a = set(consume(host, stay, topic, count, 60000))
        assert on_a == expected, "lost on A: %s" % sorted(expected - on_a)[:20]
        remote = "A." + topic
        wait_until("%d records mirrored to %s" % (count, remote),
                   lambda: len(set(consume(host, bootstrap("kafka_b"), remote, count, 20000))) >= count,
                   timeout=300, interval=5)
        smoke = ansible_playbook("kafkaops.mirrormaker.smoke", "-e", "mm2_smoke_mode=reconcile",
                                 "-e", '{"mm2_smoke_reconcile_topics": ["%s"]}' % topic)
        assert smoke.returncode == 0, played(smoke)
        assert re.search(r"PASS\s+reconcile\s+A->B\s+%s -> %s" % (re.escape(topic), re.escape(remote)),
                         smoke.stdout), smoke.stdout[-3000:]
    finally:
        producer.stop()
        back = ansible_playbook("kafkaops.mirrormaker.kafka")
        assert back.returncode == 0, played(back)
    assert leave.service("kafka").is_running and leave.service("kafka").is_enabled
    listed = kafka(host, "kafka-broker-api-versions.sh", "--bootstrap-server", stay).stdout
    assert "(id: %d " % node_id in listed, listed[-2000:]
