"""playbooks/upgrade.yml moves the kraft lab from Kafka 3.9 to the lab's 4.x release under load.

The scenario converges every node on the 3.9 archive (molecule.yml points KAFKA_ARCHIVE at it);
this test, the scenario's last, upgrades it to the lab's own archive (lab/kafka-dist/pom.xml) while
a producer writes to cluster A with acks=all: the controllers of both clusters first (B's one node
is combined), then A's brokers, each with no under-replicated partition left before the next, then
the MirrorMaker node. A second producer writes to cluster B, and the test turns the lab's B->A flow
on for its topic first: between B's restart on the new release and the first of A's brokers running
the new one, MirrorMaker (still on 3.9) copies A (old brokers) to B (new release) and B to A:
records written in that window (their CreateTime) were appended to each mirror in it (the remote
topics are switched to LogAppendTime), in both directions. Afterwards every acknowledged record is
on its cluster, the smoke job's reconcile finds each topic and its mirror equal, each cluster's
metadata.version is finalized at the new release, a second run changes nothing and going back to
3.9 is refused.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import yaml

from conftest import (
    REPO, Producer, ansible_playbook, consume, hosts_of, kafka, node, played, started_at, targets, topics,
    unique, wait_until,
)
import recap  # tests/lib, on the path once conftest is loaded

testinfra_hosts = targets("kafka_a_brokers")[:1]

TARGET_VERSION = re.search(r"<kafka.version>(.*)</kafka.version>",
                           (REPO / "lab/kafka-dist/pom.xml").read_text()).group(1)
TARGET = REPO / ".cache/kafka" / ("kafka_2.13-%s.tgz" % TARGET_VERSION)
# The release the scenario converged on (molecule.yml's KAFKA_ARCHIVE).
FROM = Path(os.environ["KAFKA_ARCHIVE"])
FROM_VERSION = re.search(r"-([0-9.]+)\.tgz$", FROM.name).group(1)


def release_of(h):
    return h.file("/opt/kafka/current").linked_to.rsplit("-", 1)[1]


def epoch_ms(h, monotonic_us):
    """A systemd monotonic timestamp of host h as epoch milliseconds: the lab's containers share
    the kernel's clocks, so one reading of both converts any of them."""
    wall, mono = map(float, h.check_output("python3 -c 'import time; print(time.time(), time.monotonic())'").split())
    return int((wall - mono) * 1000 + monotonic_us / 1000)


def stamped(host, servers, topic, count, kind):
    """Record value -> its timestamp, for the records stamped with `kind` (CreateTime: the producer's
    clock; LogAppendTime: the broker's, once the topic uses it; earlier records keep CreateTime).
    Read with the new release's console consumer: 4.x prints a deprecation line on stdout for the
    --property that 3.9 needs."""
    lines = consume(host, servers, topic, count, 60000, "--formatter-property", "print.timestamp=true")
    return {value: int(stamp.split(":", 1)[1]) for stamp, value in (line.split("\t", 1) for line in lines)
            if stamp.startswith(kind + ":")}


def reverse_flow_vars(path, topic):
    """Extra vars turning the lab's B->A flow on for `topic` alone: the lab's flows as its inventory
    gives them (that file, not a copy), B->A enabled."""
    lab = REPO / "molecule/kraft/inventory/group_vars/mirrormakers/lab.yml"
    flows = [dict(f, enabled=True, topics=[topic]) if (f["source"], f["target"]) == ("B", "A") else f
             for f in yaml.safe_load(lab.read_text())["mirrormaker_flows"]]
    assert [f for f in flows if f["source"] == "B" and f.get("enabled")], flows
    path.write_text(json.dumps({"mirrormaker_flows": flows}))
    return "@%s" % path


def bootstrap(group):
    return ",".join("%s:9092" % h for h in hosts_of(group))


def metadata_version(host, servers):
    out = kafka(host, "kafka-features.sh", "--bootstrap-server", servers, "describe").stdout
    return re.search(r"Feature: metadata.version\s.*FinalizedVersionLevel: (\S+)", out).group(1)


def test_upgrade_from_3_9_under_load_loses_nothing_and_finalizes(host, tmp_path):
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

    topic, back_topic = unique("kraft-upgrade"), unique("kraft-reverse")
    remote, back_remote = "A." + topic, "B." + back_topic
    kafka(host, "kafka-topics.sh", "--bootstrap-server", a, "--create", "--topic", topic, "--partitions", "3",
          "--replication-factor", "3", "--config", "min.insync.replicas=2")
    kafka(host, "kafka-topics.sh", "--bootstrap-server", b, "--create", "--topic", back_topic, "--partitions", "3",
          "--replication-factor", "1")
    flows = ("-e", reverse_flow_vars(tmp_path / "flows.json", back_topic))
    upgrade += flows
    turned_on = ansible_playbook("kafkaops.mirrormaker.mirrormaker", *flows)
    assert turned_on.returncode == 0, played(turned_on)
    for servers, name in ((b, remote), (a, back_remote)):
        wait_until("MirrorMaker to create %s" % name, lambda: name in topics(host, servers), timeout=180, interval=5)
        # MirrorMaker does not copy message.timestamp.type (DefaultConfigPropertyFilter) and alters
        # topic configs incrementally: the mirror keeps its own append times.
        kafka(host, "kafka-configs.sh", "--bootstrap-server", servers, "--alter", "--entity-type", "topics",
              "--entity-name", name, "--add-config", "message.timestamp.type=LogAppendTime")
    before = {n: started_at(node(host, n), "kafka") for n in kafka_nodes}
    producer = Producer(host, a, topic, interval=0.02)
    reverse = Producer(host, b, back_topic, interval=0.05)
    try:
        started = time.monotonic()
        # Nine nodes one at a time: 558 s idle, over 900 s beside the dr scenario (2026-11-29);
        # each node's own waits are bounded by the roles, this only catches a hang.
        result = ansible_playbook(*upgrade, timeout=240 * len(plan))
        took = time.monotonic() - started
        assert result.returncode == 0, played(result)
        producer.finish("the upgrade", timeout=900)
        reverse.finish("the upgrade", timeout=900)
    finally:
        producer.stop()
        reverse.stop()
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

    # The mixed-version window: from B's restart on the new release until the first of A's brokers
    # runs it, every append on A is an old broker's.
    window = (epoch_ms(host, max(after[n] for n in hosts_of("kafka_b"))),
              epoch_ms(host, min(after[n] for n in hosts_of("kafka_a_brokers"))))
    assert window[0] < window[1], (window, after)
    directions = ((producer, a, topic, b, remote), (reverse, b, back_topic, a, back_remote))
    for p, servers, source, mirror_servers, mirror in directions:
        expected_records = p.records
        count = len(expected_records)
        print("%d records written to %s with acks=all during the upgrade" % (count, source))
        written = stamped(host, servers, source, count, "CreateTime")
        assert set(written) == expected_records, "lost on %s: %s" % (source, sorted(expected_records - set(written))[:20])
        wait_until("%d records mirrored to %s" % (count, mirror),
                   lambda: len(set(consume(host, mirror_servers, mirror, count, 20000))) >= count,
                   timeout=300, interval=5)
        # written after B's restart and copied before any of A's brokers ran the new release
        inside = [v for v, t in stamped(host, mirror_servers, mirror, count, "LogAppendTime").items()
                  if window[0] <= written[v] and t < window[1]]
        seconds = (window[1] - window[0]) / 1000
        print("%s: %d records written and copied in the %.0f s mixed-version window" % (mirror, len(inside), seconds))
        assert inside, "MirrorMaker copied nothing to %s while B ran the new release and A the old" % mirror
    smoke = ansible_playbook("kafkaops.mirrormaker.smoke", "-e", "lab_kafka_archive=%s" % TARGET, *flows,
                             "-e", "mm2_smoke_mode=reconcile",
                             "-e", json.dumps({"mm2_smoke_extra_checks": {"reconcile": {"topics": {
                                 "A->B": [topic], "B->A": [back_topic]}}}}))
    assert smoke.returncode == 0, played(smoke)
    for flow, source, mirror in (("A->B", topic, remote), ("B->A", back_topic, back_remote)):
        assert re.search(r"PASS\s+reconcile\s+%s\s+%s -> %s" % (flow, re.escape(source), re.escape(mirror)),
                         smoke.stdout), smoke.stdout[-3000:]

    again = ansible_playbook(*upgrade)
    assert again.returncode == 0, played(again)
    assert set(recap.changed(again.stdout).values()) == {0}, played(again)

    back = ansible_playbook("kafkaops.mirrormaker.upgrade", "-e", "lab_kafka_archive=%s" % FROM)
    assert back.returncode != 0
    assert ("kafka_common_version: %s is older than cluster A's finalized metadata.version %s"
            % (FROM_VERSION, TARGET_VERSION.rsplit(".", 1)[0])) in back.stdout + back.stderr, played(back)
    assert {release_of(node(host, n)) for n in everyone} == {TARGET_VERSION}
