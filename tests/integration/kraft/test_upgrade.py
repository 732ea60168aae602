"""playbooks/upgrade.yml moves the kraft lab from Kafka 3.9 to the lab's 4.x release under load.

The scenario converges every node on the 3.9 archive (molecule.yml points KAFKA_ARCHIVE at it);
this test, the scenario's last, upgrades it to the lab's own archive (lab/kafka-dist/pom.xml)
while a producer writes to cluster A with acks=all: the controllers of both clusters first (B's
one node is combined), then A's brokers, each with no under-replicated partition left before the
next, then the MirrorMaker node. MirrorMaker keeps copying A (old brokers) to B (new release)
through that window. Afterwards every acknowledged record is on A, the smoke job's reconcile finds
A's topic and its mirror on B equal, each cluster's metadata.version is finalized at the new
release, a second run changes nothing and going back to 3.9 is refused.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from conftest import (
    REPO, Producer, ansible_playbook, changed_by_host, consume, hosts_of, kafka, node, played, targets, unique,
    wait_until,
)

testinfra_hosts = targets("kafka_a_brokers")[:1]

TARGET_VERSION = re.search(r"<kafka.version>(.*)</kafka.version>",
                           (REPO / "lab/kafka-dist/pom.xml").read_text()).group(1)
TARGET = REPO / ".cache/kafka" / ("kafka_2.13-%s.tgz" % TARGET_VERSION)
# The release the scenario converged on (molecule.yml's KAFKA_ARCHIVE).
FROM = Path(os.environ["KAFKA_ARCHIVE"])
FROM_VERSION = re.search(r"-([0-9.]+)\.tgz$", FROM.name).group(1)


def release_of(h):
    return h.file("/opt/kafka/current").linked_to.rsplit("-", 1)[1]


def started_at(h, unit):
    return int(h.check_output("systemctl show -p ActiveEnterTimestampMonotonic --value %s" % unit))


def bootstrap(group):
    return ",".join("%s:9092" % h for h in hosts_of(group))


def metadata_version(host, servers):
    out = kafka(host, "kafka-features.sh", "--bootstrap-server", servers, "describe").stdout
    return re.search(r"Feature: metadata.version\s.*FinalizedVersionLevel: (\S+)", out).group(1)


def test_upgrade_from_3_9_under_load_loses_nothing_and_finalizes(host):
    kafka_nodes = hosts_of("kafka_controllers") + hosts_of("kafka_b") + hosts_of("kafka_a_brokers")
    mm2 = hosts_of("mirrormakers")
    everyone = kafka_nodes + mm2
    assert {release_of(node(host, n)) for n in everyone} == {FROM_VERSION}
    a, b = bootstrap("kafka_a_brokers"), bootstrap("kafka_b")
    assert metadata_version(host, a).startswith(FROM_VERSION.rsplit(".", 1)[0])
    upgrade = ("kafkaops.mirrormaker.upgrade", "-e", "lab_kafka_archive=%s" % TARGET)

    dry = ansible_playbook(*upgrade, "--check")
    assert dry.returncode == 0, played(dry)
    plan = [line.strip().strip('",') for line in dry.stdout.splitlines()
            if re.match(r'\s*"\S+ (controller|broker|connect|mirrormaker) ', line)]
    expected = ["%s %s %s %s upgrade" % (n, kind, FROM_VERSION, TARGET_VERSION) for kinds in (
        [(n, "controller") for n in hosts_of("kafka_controllers") + hosts_of("kafka_b")],
        [(n, "broker") for n in hosts_of("kafka_a_brokers")], [(n, "mirrormaker") for n in mm2]) for n, kind in kinds]
    assert sorted(plan, key=lambda s: [e.split()[0] for e in expected].index(s.split()[0])) == plan
    assert sorted(plan) == sorted(expected), dry.stdout[-3000:]
    assert "then finalize the feature levels at release %s" % TARGET_VERSION.rsplit(".", 1)[0] in dry.stdout
    assert {release_of(node(host, n)) for n in everyone} == {FROM_VERSION}, "the dry run changed a node"

    topic = unique("kraft-upgrade")
    kafka(host, "kafka-topics.sh", "--bootstrap-server", a, "--create", "--topic", topic, "--partitions", "3",
          "--replication-factor", "3", "--config", "min.insync.replicas=2")
    before = {n: started_at(node(host, n), "kafka") for n in kafka_nodes}
    producer = Producer(host, a, topic, interval=0.02)
    try:
        started = time.monotonic()
        # Nine nodes one at a time: 558 s idle, over 900 s beside the dr scenario (2026-11-29);
        # each node's own waits are bounded by the roles, this only catches a hang.
        result = ansible_playbook(*upgrade, timeout=240 * len(plan))
        took = time.monotonic() - started
        assert result.returncode == 0, played(result)
        producer.finish("the upgrade", timeout=900)
    finally:
        producer.stop()
    assert {release_of(node(host, n)) for n in everyone} == {TARGET_VERSION}
    after = {n: started_at(node(host, n), "kafka") for n in kafka_nodes}
    assert all(after[n] > before[n] for n in kafka_nodes), (before, after)
    # one at a time, in the plan's order
    order = hosts_of("kafka_controllers") + hosts_of("kafka_b") + hosts_of("kafka_a_brokers")
    assert sorted(order, key=after.get) == order, after
    first = min(after.values())
    print("upgrade %s -> %s in a %.0f s run; restarts (s after the first): %s"
          % (FROM_VERSION, TARGET_VERSION, took, ", ".join("%s +%.0f" % (n, (after[n] - first) / 1e6) for n in order)))
    assert metadata_version(host, a).startswith(TARGET_VERSION.rsplit(".", 1)[0])
    assert metadata_version(host, b).startswith(TARGET_VERSION.rsplit(".", 1)[0])

    expected_records = producer.records
    count = len(expected_records)
    print("%d records written with acks=all during the upgrade" % count)
    on_a = set(consume(host, a, topic, count, 60000))
    assert on_a == expected_records, "lost on A: %s" % sorted(expected_records - on_a)[:20]
    remote = "A." + topic
    wait_until("%d records mirrored to %s" % (count, remote),
               lambda: len(set(consume(host, b, remote, count, 20000))) >= count, timeout=300, interval=5)
    smoke = ansible_playbook("kafkaops.mirrormaker.smoke", "-e", "lab_kafka_archive=%s" % TARGET,
                             "-e", "mm2_smoke_mode=reconcile", "-e", '{"mm2_smoke_reconcile_topics": ["%s"]}' % topic)
    assert smoke.returncode == 0, played(smoke)
    assert re.search(r"PASS\s+reconcile\s+A->B\s+%s -> %s" % (re.escape(topic), re.escape(remote)),
                     smoke.stdout), smoke.stdout[-3000:]

    again = ansible_playbook(*upgrade)
    assert again.returncode == 0, played(again)
    assert set(changed_by_host(again.stdout).values()) == {0}, played(again)

    back = ansible_playbook("kafkaops.mirrormaker.upgrade", "-e", "lab_kafka_archive=%s" % FROM)
    assert back.returncode != 0
    assert ("kafka_common_version: %s is older than cluster A's finalized metadata.version %s"
            % (FROM_VERSION, TARGET_VERSION.rsplit(".", 1)[0])) in back.stdout + back.stderr, played(back)
    assert {release_of(node(host, n)) for n in everyone} == {TARGET_VERSION}
