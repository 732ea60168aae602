"""An exactly-once flow's transaction boundary (the flow's ``transaction_boundary`` fields, module_utils/mm2/model.py),
on the session's real brokers and a real Connect worker with exactly-once (harness.Lab.start_connect), the
source connector as plugins/module_utils/mm2/connect.py derives it.

For each boundary the source connector copies records written one every 100 ms, each in its own
poll as a rule. A read_committed reader on B must see every record exactly once, whatever the
boundary. What differs is how many transactions carried them: every committed transaction leaves
one marker in the partition, so the target's end offset minus its records counts them. Per poll,
about one per record; per interval of 3 s, about one per 3 s of copying.

The flow's aliases are EOA and EOB (clusters A and B of the session) so that its worker group and
internal topics are its own.
"""

import re
import time
import uuid

import pytest
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

import harness
from mm2_smoke import kafka_util

PREFIX = "eos-tb-%s" % uuid.uuid4().hex[:6]
SOURCE, TARGET = "EOA", "EOB"
RECORDS = 60
PACE_S = 0.1
INTERVAL_MS = 3000


@pytest.fixture(scope="module")
def worker(lab):
    """One Connect worker with exactly-once for the flow EOA->EOB, next to B."""
    _model, mm2_connect = harness.load_connect()
    names = mm2_connect.names(SOURCE, TARGET)
    url = lab.start_connect("A", "B", workers=1, exactly_once=True, extra={
        "group.id": names["group_id"], "offset.storage.topic": names["offsets"],
        "config.storage.topic": names["configs"], "status.storage.topic": names["status"]})[0]
    try:
        yield url
    finally:
        lab.stop_connect()


def source_connector(lab, topic, fields):
    """(name, config) of the flow's MirrorSourceConnector for ``topic`` with the flow ``fields``."""
    mm2_model, mm2_connect = harness.load_connect()
    clusters = [{"alias": SOURCE, "bootstrap_servers": [lab.bootstrap("A")]},
                {"alias": TARGET, "bootstrap_servers": [lab.bootstrap("B")]}]
    flows = [dict({"source": SOURCE, "target": TARGET, "topics": [re.escape(topic)], "replication_policy": "identity",
                   "emit_heartbeats": False, "emit_checkpoints": False}, **fields)]
    model = mm2_model.load(clusters, flows, dict(harness.HARNESS_GLOBALS, **{"refresh.topics.interval.seconds": 5}),
                           {"exactly_once": True, "internal_rest": True, "flow_defaults": {"tasks.max": 1}})
    assert not model.errors, model.errors
    name = mm2_connect.connector_name(SOURCE, TARGET, "MirrorSourceConnector")
    return name, mm2_connect.connectors(model, SOURCE, TARGET)[name]


@pytest.mark.parametrize("boundary, fields", [
    ("poll", {"transaction_boundary": "poll"}),
    ("interval", {"transaction_boundary": "interval", "transaction_boundary_interval_ms": INTERVAL_MS}),
])
def test_every_record_once_and_the_boundary_sets_the_transactions(lab, worker, boundary, fields):
    topic = "%s-%s" % (PREFIX, boundary)
    admin = kafka_util.RetryingAdmin(KafkaAdminClient(bootstrap_servers=lab.bootstrap("A"), client_id=topic), 60)
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    admin.close()
    name, config = source_connector(lab, topic, fields)
    expected = {"poll": ("poll", None), "interval": ("interval", str(INTERVAL_MS))}[boundary]
    assert (config["transaction.boundary"], config.get("transaction.boundary.interval.ms")) == expected
    producer = KafkaProducer(bootstrap_servers=lab.bootstrap("A"), acks="all")
    harness.put_connector(worker, name, config)
    try:
        # The connector is copying once the first record is committed on B; then one record each PACE_S.
        producer.send(topic, value=b"first").get(60)
        values, _end = harness.committed_values(lab.bootstrap("B"), topic, 1, timeout=180)
        assert values == [b"first"], "the connector copied nothing within 180 s"
        started = time.monotonic()
        for i in range(RECORDS):
            producer.send(topic, value=b"%d" % i).get(30)
            time.sleep(PACE_S)
        copied_for = time.monotonic() - started
        values, end = harness.committed_values(lab.bootstrap("B"), topic, RECORDS + 1, timeout=120)
        applied = harness.connect_rest("GET", "%s/connectors/%s/config" % (worker, name))[1]
    finally:
        producer.close()
        harness.connect_rest("DELETE", "%s/connectors/%s" % (worker, name))
    assert values == [b"first"] + [b"%d" % i for i in range(RECORDS)], "each record once, in order (read_committed)"
    assert applied["transaction.boundary"] == boundary
    transactions = end - len(values)
    print("EOS %s: %d records written over %.1f s after the first, %d transactions committed on B"
          % (boundary, RECORDS, copied_for, transactions))
    if boundary == "poll":
        # about one per record: polls that return more than one record are rare at this pace
        assert transactions >= RECORDS // 3
    else:
        # one per interval while records come, and the first record's
        assert transactions <= copied_for * 1000 / INTERVAL_MS + 3
