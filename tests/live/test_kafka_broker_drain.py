"""kafka_broker_drain against the session's REAL broker A (harness.Lab, one combined KRaft node).

A one-broker cluster has nowhere to move replicas to: what this shows is the module's reading of a
real cluster (every partition with a replica on the broker, internal topics included; whether the
controllers have it registered) and its refusals, in a run and in check mode. The moves themselves,
under a producer's load, are tests/integration/kraft/test_taking_a_broker_out.py's.
"""

import re
import subprocess

import pytest

from jobtools import run_ansible_module, use_collection

use_collection()
from ansible_collections.kafkaops.mirrormaker.plugins.modules.kafka_broker_drain import SHOWN  # noqa: E402  pylint: disable=wrong-import-position

TOPIC = "drain.orders"   # 2 partitions, 1 replica each, on broker 1


def join_a_group(bootstrap, timeout=60):
    """A consumer group joins: the broker creates __consumer_offsets (50 partitions) if it has none."""
    import time
    from kafka import KafkaConsumer
    consumer = KafkaConsumer(TOPIC, bootstrap_servers=bootstrap, group_id="drain-test")
    try:
        deadline = time.monotonic() + timeout
        while not consumer.assignment():
            assert time.monotonic() < deadline, "the group got no partitions within %d s" % timeout
            consumer.poll(timeout_ms=1000)
    finally:
        consumer.close()


@pytest.fixture(scope="module")
def broker_a(lab):
    from kafka.admin import KafkaAdminClient, NewTopic

    bootstrap = lab.bootstrap("A")
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="drain-test")
    try:
        admin.create_topics([NewTopic(TOPIC, 2, 1)])
        brokers = [b["broker_id"] for b in admin.describe_cluster()["brokers"]]
    finally:
        admin.close()
    join_a_group(bootstrap)
    return {"bootstrap": bootstrap, "id": brokers[0]}


def on_broker(lab, broker):
    """Every partition with a replica on the broker, as Apache's kafka-topics.sh describes them, named as
    the module names them (topic-partition, in topic then partition order)."""
    out = subprocess.run([lab.bin("kafka-topics.sh"), "--bootstrap-server", broker["bootstrap"], "--describe"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    found = []
    for line in out.splitlines():
        fields = dict(re.findall(r"(\w+): (\S+)", line))
        if "Partition" in fields and str(broker["id"]) in fields["Replicas"].split(","):
            found.append((fields["Topic"], int(fields["Partition"])))
    return ["%s-%d" % tp for tp in sorted(found)]


def drain(args, *extra):
    return run_ansible_module("kafkaops.mirrormaker.kafka_broker_drain", args, *extra)


@pytest.mark.parametrize("check", [False, True], ids=["run", "check_mode"])
def test_a_broker_holding_replicas_is_refused_naming_them(lab, broker_a, check):
    proc, result = drain({"bootstrap_servers": broker_a["bootstrap"], "broker_id": broker_a["id"]},
                         *(["--check"] if check else []))
    assert proc.returncode == 2, result
    assert result["msg"].startswith("move: broker %d still holds replicas of " % broker_a["id"]), result["msg"]
    # by name, internal topics included (the lab's broker gives __consumer_offsets 4 partitions);
    # the session's other tests leave their topics on this broker too, so the whole list is the
    # broker's own metadata, read apart from the module
    held = on_broker(lab, broker_a)
    assert {"__consumer_offsets-%d" % p for p in range(4)} | {TOPIC + "-0", TOPIC + "-1"} <= set(held)
    assert result["held"] == held
    shown = ", ".join(held[:SHOWN]) + (" and %d more" % (len(held) - SHOWN) if len(held) > SHOWN else "")
    assert result["msg"] == ("move: broker %d still holds replicas of %d partitions (%s); it must not stop before "
                             "they move off (move=true moves them)" % (broker_a["id"], len(held), shown))
    assert result["registered"] is True


def test_replicas_with_no_broker_to_take_them_are_refused_before_anything_moves(broker_a):
    proc, result = drain({"bootstrap_servers": broker_a["bootstrap"], "broker_id": broker_a["id"], "move": True})
    assert proc.returncode == 2, result
    assert ("%s-0: its replicas are on brokers %d; no broker that stays (none) is free to take broker %d's replica"
            % (TOPIC, broker_a["id"], broker_a["id"])) in result["msg"], result["msg"]
    # still where it was
    proc, result = drain({"bootstrap_servers": broker_a["bootstrap"], "broker_id": broker_a["id"]})
    assert TOPIC + "-1" in result["held"]


def test_a_broker_the_cluster_never_had_holds_nothing(broker_a):
    proc, result = drain({"bootstrap_servers": broker_a["bootstrap"], "broker_id": broker_a["id"] + 40, "move": True})
    assert proc.returncode == 0, result
    assert result["changed"] is False and result["held"] == [] and result["moves"] == []
    assert result["registered"] is False
    assert result["msg"] == "broker %d holds no replica" % (broker_a["id"] + 40)


def test_bad_input_is_refused_naming_each_option():
    proc, result = drain({"bootstrap_servers": "localhost:1", "broker_id": -1, "throttle": -5, "wait_timeout": 0})
    assert proc.returncode == 2, result
    assert result["msg"] == ("broker_id: must be a node id, 0 or more (is -1); throttle: must be bytes per second, "
                             "0 (no throttle) or more (is -5); wait_timeout: must be 1 second or more (is 0)")
