"""A broker rolling restart of cluster A under a producer's load loses nothing.

The restart is the collection's own (playbooks/restart.yml: one node at a time, each healthy
before the next); the producer writes with acks=all to a topic of three replicas that need two
in sync; afterwards every acknowledged record is on A, and the smoke job's reconcile mode (Spark
on the MirrorMaker host) finds A's topic and its mirror on B equal, partition by partition.
"""

from __future__ import annotations

import re

from conftest import (ansible_playbook, consume, hosts_of, kafka, node, played, started_at, targets, unique,
                      wait_until)

testinfra_hosts = targets("kafka_a_brokers")[:1]

BIN = "/opt/kafka/current/bin"
PRODUCER = """import time
for i in range(%d):
    print("seq-%%05d" %% i, flush=True)
    time.sleep(0.02)
"""


def bootstrap(group):
    return ",".join("%s:9092" % h for h in hosts_of(group))


def test_quorum_has_three_voters_and_each_broker_observing(host):
    out = kafka(host, "kafka-metadata-quorum.sh", "--bootstrap-server", bootstrap("kafka_a_brokers"),
                "describe", "--replication").stdout
    statuses = [line.split()[-1] for line in out.splitlines()[1:] if line.strip()]
    assert statuses.count("Leader") == 1 and statuses.count("Follower") == 2, out
    assert statuses.count("Observer") == len(hosts_of("kafka_a_brokers")), out


def test_broker_rolling_restart_under_load_loses_nothing(host):
    a, b = bootstrap("kafka_a_brokers"), bootstrap("kafka_b")
    topic, count = unique("kraft-rolling"), 3000
    kafka(host, "kafka-topics.sh", "--bootstrap-server", a, "--create", "--topic", topic, "--partitions", "3",
          "--replication-factor", "3", "--config", "min.insync.replicas=2")
    unit = unique("producer")
    host.run_expect([0], "cat > /tmp/%s.py <<'EOF'\n%sEOF" % (unit, PRODUCER % count))
    host.run_expect([0], "systemd-run --remain-after-exit --unit %s /bin/sh -c 'python3 /tmp/%s.py | "
                    "%s/kafka-console-producer.sh --bootstrap-server %s --topic %s --producer-property acks=all "
                    "--producer-property enable.idempotence=true --producer-property delivery.timeout.ms=600000'"
                    % (unit, unit, BIN, a, topic))
    nodes = hosts_of("kafka_a")
    before = {n: started_at(node(host, n), "kafka") for n in nodes}
    result = ansible_playbook("kafkaops.mirrormaker.restart", "--limit", "kafka_a")
    assert result.returncode == 0, played(result)
    for name, stamp in before.items():
        assert started_at(node(host, name), "kafka") > stamp, "%s was not restarted" % name
    # Each node was waited for before the next: the play restarted them in a sequence.
    assert len(re.findall(r"TASK \[kafkaops\.mirrormaker\.kafka_common : Restart the service on ", result.stdout)) \
        == len(nodes), result.stdout[-3000:]
    wait_until("producer %s to finish" % unit,
               lambda: host.run("systemctl show -p SubState --value %s" % unit).stdout.strip() == "exited",
               timeout=600, interval=5)
    assert host.check_output("systemctl show -p ExecMainStatus --value %s" % unit) == "0"
    expected = {"seq-%05d" % i for i in range(count)}
    on_a = set(consume(host, a, topic, count, 60000))
    assert on_a == expected, "lost on A: %s" % sorted(expected - on_a)[:20]
    remote = "A." + topic
    wait_until("%d records mirrored to %s" % (count, remote),
               lambda: len(set(consume(host, b, remote, count, 20000))) >= count, timeout=300, interval=5)
    result = ansible_playbook("kafkaops.mirrormaker.smoke", "-e", "mm2_smoke_mode=reconcile",
                              "-e", '{"mm2_smoke_reconcile_topics": ["%s"]}' % topic)
    assert result.returncode == 0, played(result)
    assert re.search(r"mm2-smoke reconcile run \S+: PASS", result.stdout), result.stdout[-3000:]
    assert re.search(r"PASS\s+reconcile\s+A->B\s+%s -> %s" % (re.escape(topic), re.escape(remote)),
                     result.stdout), result.stdout[-3000:]
