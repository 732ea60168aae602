"""An exactly-once flow's transaction boundary (the flow's ``transaction_boundary`` fields, module_utils/mm2/model.py),
on the session's real brokers, in both layouts: a real Connect worker with exactly-once
(harness.Lab.start_connect) running the source connector as plugins/module_utils/mm2/connect.py derives
it, and dedicated MirrorMaker 2 (connect-mirror-maker.sh) with the mm2.properties model.py renders.

For each boundary the source connector copies records written one every 100 ms, each in its own
poll as a rule. A read_committed reader on B must see every record exactly once, whatever the
boundary. What differs is how many transactions carried them: every committed transaction leaves
one marker in the partition, so the target's end offset minus its records counts them. Per poll,
about one per record; per interval of 3 s, about one per 3 s of copying.

The flow's aliases are EOA and EOB (clusters A and B of the session) so that its worker group and
internal topics are its own, in either layout.
"""

import re
import time
import uuid

import pytest
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

import harness
from jobtools import start_session_mm2
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


BOUNDARIES = [
    ("poll", {"transaction_boundary": "poll"}),
    ("interval", {"transaction_boundary": "interval", "transaction_boundary_interval_ms": INTERVAL_MS}),
]
RENDERED = {"poll": ("poll", None), "interval": ("interval", str(INTERVAL_MS))}


def flow_inputs(lab, topic, fields, glob=None):
    """The collection's flow model's inputs (clusters, flows, globals, options) for the exactly-once
    flow EOA->EOB of ``topic`` with the flow ``fields``, no heartbeats or checkpoints."""
    clusters = [{"alias": SOURCE, "bootstrap_servers": [lab.bootstrap("A")]},
                {"alias": TARGET, "bootstrap_servers": [lab.bootstrap("B")]}]
    flows = [dict({"source": SOURCE, "target": TARGET, "topics": [re.escape(topic)], "replication_policy": "identity",
                   "emit_heartbeats": False, "emit_checkpoints": False}, **fields)]
    glob = dict(harness.HARNESS_GLOBALS, **dict({"refresh.topics.interval.seconds": 5}, **(glob or {})))
    return clusters, flows, glob, {"exactly_once": True, "internal_rest": True, "flow_defaults": {"tasks.max": 1}}


def source_connector(lab, topic, fields):
    """(name, config) of the flow's MirrorSourceConnector for ``topic`` with the flow ``fields``."""
    mm2_model, mm2_connect = harness.load_connect()
    model = mm2_model.load(*flow_inputs(lab, topic, fields))
    assert not model.errors, model.errors
    name = mm2_connect.connector_name(SOURCE, TARGET, "MirrorSourceConnector")
    return name, mm2_connect.connectors(model, SOURCE, TARGET)[name]


def create_topic(lab, topic):
    admin = kafka_util.RetryingAdmin(KafkaAdminClient(bootstrap_servers=lab.bootstrap("A"), client_id=topic), 60)
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    admin.close()


def copy_paced(lab, topic):
    """Once the running flow has copied a first record, write RECORDS more one every PACE_S; returns
    (values a read_committed reader on B finds, B's end offset, seconds spent writing)."""
    producer = KafkaProducer(bootstrap_servers=lab.bootstrap("A"), acks="all")
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
    finally:
        producer.close()
    return values, end, copied_for


def assert_boundary(layout, boundary, values, end, copied_for):
    assert values == [b"first"] + [b"%d" % i for i in range(RECORDS)], "each record once, in order (read_committed)"
    transactions = end - len(values)
    print("EOS %s %s: %d records written over %.1f s after the first, %d transactions committed on B"
          % (layout, boundary, RECORDS, copied_for, transactions))
    if boundary == "poll":
        # about one per record: polls that return more than one record are rare at this pace
        assert transactions >= RECORDS // 3
    else:
        # one per interval while records come, and the first record's
        assert transactions <= copied_for * 1000 / INTERVAL_MS + 3


@pytest.mark.parametrize("boundary, fields", BOUNDARIES)
def test_every_record_once_and_the_boundary_sets_the_transactions(lab, worker, boundary, fields):
    topic = "%s-%s" % (PREFIX, boundary)
    create_topic(lab, topic)
    name, config = source_connector(lab, topic, fields)
    assert (config["transaction.boundary"], config.get("transaction.boundary.interval.ms")) == RENDERED[boundary]
    harness.put_connector(worker, name, config)
    try:
        values, end, copied_for = copy_paced(lab, topic)
        applied = harness.connect_rest("GET", "%s/connectors/%s/config" % (worker, name))[1]
    finally:
        harness.connect_rest("DELETE", "%s/connectors/%s" % (worker, name))
    assert applied["transaction.boundary"] == boundary
    assert_boundary("connect", boundary, values, end, copied_for)


@pytest.mark.parametrize("boundary, fields", BOUNDARIES)
def test_dedicated_every_record_once_and_the_boundary_sets_the_transactions(lab, boundary, fields):
    """The same flow in dedicated MirrorMaker 2: its herder runs the source connector with the flow's
    boundary (MirrorMakerConfig passes ``EOA->EOB.`` keys into the connector's configuration)."""
    topic = "%s-dedicated-%s" % (PREFIX, boundary)
    create_topic(lab, topic)
    # no heartbeat herder EOB->EOA either: it would write into A's heartbeats topic
    glob = dict(harness.internal_rest_globals(), **{"emit.heartbeats.enabled": False})
    props = harness.load_model().build_properties(*flow_inputs(lab, topic, fields, glob))
    flow = "%s->%s." % (SOURCE, TARGET)
    assert ((props[flow + "transaction.boundary"], props.get(flow + "transaction.boundary.interval.ms"))
            == RENDERED[boundary]), props
    assert props[TARGET + ".exactly.once.source.support"] == "enabled", props
    session_mm2 = lab.mm2 is not None and lab.mm2.poll() is None
    lab.stop_mm2()  # the lab runs one MirrorMaker process at a time; the session's is started again below
    try:
        lab.start_mm2_properties(props)
        values, end, copied_for = copy_paced(lab, topic)
    finally:
        lab.stop_mm2()
        if session_mm2:
            start_session_mm2(lab)
    assert_boundary("dedicated", boundary, values, end, copied_for)
