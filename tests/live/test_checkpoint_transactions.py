"""The disaster-recovery layout's checkpoint task beside an open transaction on its checkpoints
topic, on the session's real brokers and a real Connect worker with exactly-once
(harness.Lab.start_connect), connectors as plugins/module_utils/mm2/connect.py derives them.

Under exactly-once every checkpoint task writes <source>.checkpoints.internal in transactions, and
a new consumer group restarts the checkpoint tasks (docs/disaster_recovery.md). A restarted task
first reads that topic to its high watermark (MirrorCheckpointTask -> CheckpointStore ->
KafkaBasedLog, end offsets READ_UNCOMMITTED) and emits no checkpoint before. A transaction left
open there (a task stopped between its send and its commit stays open until its transactional id
is fenced or transaction.timeout.ms passes) is held here by a kafka-python transactional producer.
The connector as derived checkpoints a new group within the bound all the same; the same
connector with consumer.isolation.level=read_committed (what mm2_connect gave every connector
before) emits nothing for a new group until the transaction ends.

The flow's aliases are TXA and TXB (clusters A and B of the session) so that its checkpoints and
offset-syncs topics, its worker group and internal topics are its own.
"""

import re
import time
import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

import harness
from mm2_smoke import formats, kafka_util

PREFIX = "cp-txn-%s" % uuid.uuid4().hex[:6]
TOPIC = PREFIX + ".orders"
PARTITIONS = 2
RECORDS = 40
SOURCE, TARGET = "TXA", "TXB"
CHECKPOINTS = "%s.checkpoints.internal" % SOURCE
INTERVALS = {"refresh.topics.interval.seconds": 5, "refresh.groups.interval.seconds": 5,
             "emit.checkpoints.interval.seconds": 2}
# The window for a new group (docs/disaster_recovery.md): found within one group refresh,
# checkpointed one emit interval after its task restarted, plus the margin for a loaded machine:
# the wait the smoke job's offsets check is given (module_utils/mm2/smoke_plan.py).
harness.load_connect()  # the collection's module_utils on sys.path
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import smoke_plan as mm2_smoke_plan  # noqa: E402

BOUND = mm2_smoke_plan.timeouts(INTERVALS, {})["offsets"]


@pytest.fixture(scope="module")
def flow(lab):
    """The flow's topic on A with records mirrored to B, a Connect worker with exactly-once running
    the flow's source and checkpoint connectors, and a first group already checkpointed."""
    mm2_model, mm2_connect = harness.load_connect()
    # Retrying: the first group commit on a cluster is refused while __consumer_offsets loads.
    admin_a = kafka_util.RetryingAdmin(KafkaAdminClient(bootstrap_servers=lab.bootstrap("A"), client_id=PREFIX), 60)
    admin_a.create_topics([NewTopic(TOPIC, num_partitions=PARTITIONS, replication_factor=1)])
    producer = KafkaProducer(bootstrap_servers=lab.bootstrap("A"), acks="all")
    for i in range(RECORDS):
        producer.send(TOPIC, value=b"%d" % i, partition=i % PARTITIONS)
    producer.flush(60)
    producer.close()
    clusters = [{"alias": SOURCE, "bootstrap_servers": [lab.bootstrap("A")]},
                {"alias": TARGET, "bootstrap_servers": [lab.bootstrap("B")]}]
    flows = [{"source": SOURCE, "target": TARGET, "topics": [re.escape(TOPIC)], "groups": [re.escape(PREFIX) + "-.*"],
              "replication_policy": "identity", "emit_heartbeats": False, "sync_group_offsets": False}]
    model = mm2_model.load(clusters, flows, dict(harness.HARNESS_GLOBALS, **INTERVALS),
                           {"exactly_once": True, "internal_rest": True, "flow_defaults": {"tasks.max": 1}})
    assert not model.errors, model.errors
    configs = mm2_connect.connectors(model, SOURCE, TARGET)
    names = mm2_connect.names(SOURCE, TARGET)
    checkpoint_connector = mm2_connect.connector_name(SOURCE, TARGET, "MirrorCheckpointConnector")
    url = lab.start_connect("A", "B", workers=1, exactly_once=True, extra={
        "group.id": names["group_id"], "offset.storage.topic": names["offsets"],
        "config.storage.topic": names["configs"], "status.storage.topic": names["status"]})[0]
    log = lab.workers[-1]["dir"] + "/logs/connect.log"
    # The store's own account of its load (DEBUG), through Connect's logger API.
    harness.connect_rest("PUT", url + "/admin/loggers/org.apache.kafka.connect.mirror.CheckpointStore",
                         {"level": "DEBUG"})
    for name, config in configs.items():
        harness.put_connector(url, name, config)
    ends = {p: RECORDS // PARTITIONS for p in range(PARTITIONS)}
    state = {"url": url, "log": log, "configs": configs, "lab": lab, "admin_a": admin_a, "ends": ends,
             "checkpoint_connector": checkpoint_connector}
    try:
        assert checkpointed(state, commit(state, "first"), timeout=180), "no checkpoint of the flow's first group"
        yield state
    finally:
        lab.stop_connect()
        admin_a.close()


def commit(state, name):
    """A new group of the flow committed on A at each partition's end offset; returns its name."""
    group = "%s-%s-%s" % (PREFIX, name, uuid.uuid4().hex[:6])
    harness.commit_group(state["admin_a"], group, TOPIC, state["ends"])
    return group


def checkpointed(state, group, timeout):
    """Seconds until <source>.checkpoints.internal on B holds a checkpoint of ``group`` for every
    partition at its committed offset (read_uncommitted: what the task wrote, whatever the LSO);
    None when ``timeout`` passes first."""
    bootstrap = state["lab"].bootstrap("B")
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id=PREFIX + "-reader")
    t0 = time.monotonic()
    try:
        seen, assigned = set(), False
        while time.monotonic() - t0 < timeout:
            assigned = assigned or kafka_util.assign_all(admin, consumer, CHECKPOINTS)
            if not assigned:
                time.sleep(0.5)
                continue
            for cp in kafka_util.poll_decoded(consumer, formats.decode_checkpoint, formats.FormatError):
                if cp.group == group and cp.topic == TOPIC and cp.upstream_offset == state["ends"].get(cp.partition):
                    seen.add(cp.partition)
            if seen == set(state["ends"]):
                return round(time.monotonic() - t0, 1)
        return None
    finally:
        consumer.close()
        admin.close()


def log_count(state, pattern):
    with open(state["log"], errors="replace") as fh:
        return len(re.findall(pattern, fh.read()))


@pytest.fixture
def open_transaction(lab):
    """A transaction on the checkpoints topic that stays open until the test aborts it (at the
    latest when the test ends): a valid checkpoint of a group the flow does not have, not committed."""
    producer = KafkaProducer(bootstrap_servers=lab.bootstrap("B"), transactional_id=PREFIX + "-open-" + uuid.uuid4().hex[:6],
                             transaction_timeout_ms=600000)
    producer.init_transactions()
    producer.begin_transaction()
    key, value = formats.encode_checkpoint(formats.Checkpoint(PREFIX + "-elsewhere", TOPIC, 0, 1, 1, ""))
    producer.send(CHECKPOINTS, key=key, value=value, partition=0)
    producer.flush(30)
    try:
        yield producer
    finally:
        try:
            producer.abort_transaction()
        except Exception:  # noqa: BLE001 - the test aborted it already
            pass
        producer.close()


def test_a_new_group_is_checkpointed_while_a_transaction_is_open(flow, open_transaction):
    """The derived checkpoint connector (no read_committed): its restarted task loads the
    checkpoints topic past the open transaction and checkpoints the new group within the bound."""
    assert "consumer.isolation.level" not in flow["configs"][flow["checkpoint_connector"]]
    group = commit(flow, "beside-open")
    took = checkpointed(flow, group, BOUND)
    assert took is not None, "no checkpoint of %s within %ss beside an open transaction" % (group, BOUND)
    # The task that emitted it was started for the new group, after the transaction was opened.
    assert log_count(flow, r"checkpointing \d+ consumer groups %s->%s: \[[^\]]*%s" % (SOURCE, TARGET, group)) >= 1
    print("new group checkpointed %.1f s after its commit, beside an open transaction" % took)


def test_read_committed_checkpoint_tasks_wait_for_the_open_transaction(flow, open_transaction):
    """The contrast: consumer.isolation.level=read_committed on the checkpoint connector. Its
    restarted task cannot read the checkpoints topic to its end while the transaction is open, so
    a new group gets no checkpoint within the bound; once the transaction is aborted it does."""
    url, name = flow["url"], flow["checkpoint_connector"]
    derived = flow["configs"][name]
    try:
        harness.put_connector(url, name, dict(derived, **{"consumer.isolation.level": "read_committed"}))
        group = commit(flow, "read-committed")
        loads = log_count(flow, r"CheckpointStore started")
        assert checkpointed(flow, group, BOUND) is None, "checkpointed although a transaction is open"
        # The task did start for the group: it waits in its store's load, not in the group refresh.
        assert log_count(flow, r"checkpointing \d+ consumer groups %s->%s: \[[^\]]*%s" % (SOURCE, TARGET, group)) >= 1
        assert log_count(flow, r"CheckpointStore started") == loads, "the store loaded past the open transaction"
        open_transaction.abort_transaction()
        took = checkpointed(flow, group, BOUND)
        assert took is not None, "no checkpoint of %s within %ss after the transaction ended" % (group, BOUND)
        print("read_committed: checkpoint %.1f s after the open transaction was aborted" % took)
    finally:
        harness.put_connector(url, name, derived)
