"""The smoke job against real MirrorMaker 2 (session MM2: dedicated mode, A<->B, default policy).

Order matters: the last test stops MM2.
"""

import json
import os
import re
import subprocess
import sys
import time

import confluent_kafka
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient

import harness
from jobtools import (JARS_DIR, MM2_FLOWS as MM2_FLOWS_BOTH, make_config, messages, run_job, spark_ready,
                      start_session_mm2, statuses, use_collection)
from report_files import check_report_files

ONE_WAY = [{"source": "A", "target": "B", "topics": ["mm2-smoke.*"], "sync_group_offsets": True}]
BOTH_WAYS = ONE_WAY + [{"source": "B", "target": "A", "topics": ["mm2-smoke.*"]}]
EXPECTED = {"markers", "offsets", "new_topics", "partitions", "configs", "heartbeats"}


def test_clean_one_way_flow_passes_every_check_cli(mm2, tmp_path):
    """python -m mm2_smoke as the role runs it: exit 0, every check passes, report files written."""
    cfg = make_config(mm2, tmp_path, ONE_WAY)
    report_dir = tmp_path / "report"
    env = dict(os.environ, PYTHONPATH=harness.SMOKE_DIR)
    proc = subprocess.run([sys.executable, "-m", "mm2_smoke", "--config", cfg, "--report-dir", str(report_dir)],
                          capture_output=True, text=True, timeout=300, env=env, check=False)
    sys.stderr.write(proc.stdout + proc.stderr[-2000:])
    assert proc.returncode == 0, proc.stdout
    assert "[mm2-smoke " in proc.stderr  # progress lines while waiting
    assert ": PASS, every check that ran passed (" in proc.stdout
    reports = sorted(report_dir.glob("mm2-smoke-smoke-*.json"))
    assert len(reports) == 1
    doc = json.loads(reports[0].read_text())
    assert doc["report_version"] == 2 and doc["verdict"] == "pass" and doc["exit_code"] == 0
    assert {c["check"] for c in doc["checks"]} == EXPECTED | {"cycles"}
    assert all(c["status"] == "pass" for c in doc["checks"] if c["check"] != "cycles"), messages(doc)
    # configured, but a one-way flow cannot cycle: a skip with its reason, so that the counts add up
    cycles = [c for c in doc["checks"] if c["check"] == "cycles"]
    assert [c["status"] for c in cycles] == ["skip"] and "no enabled flow B->A" in cycles[0]["messages"][0]
    markers = [c for c in doc["checks"] if c["check"] == "markers"][0]
    assert markers["remote_topic"] == "A.mm2-smoke" and markers["details"]["found"] == 60
    offsets = [c for c in doc["checks"] if c["check"] == "offsets"][0]
    assert set(offsets["details"]["target_group"]) == {"0", "1", "2"}  # sync.group.offsets.enabled
    assert doc["latency_ms"]["count"] == 60 and doc["latency_ms"]["p95"] is not None
    assert list(doc["latency_ms_by_flow"]) == ["A->B"] and doc["latency_ms_by_flow"]["A->B"]["count"] == 60
    assert doc["summary"]["configured"] == ["markers", "offsets", "configs", "new_topics", "heartbeats", "cycles"]
    assert (doc["summary"]["pass"], doc["summary"]["skip"]) == (len(doc["checks"]) - 1, 1)
    assert_counts_add_up(doc)
    # the session's first run: mm2-smoke is new to MM2, whose discovery is timed apart from latency
    assert [(d["flow"], d["topic"], d["remote_topic"]) for d in doc["discovery"]] == [
        ("A->B", "mm2-smoke", "A.mm2-smoke")]
    assert doc["discovery"][0]["seconds"] > 0 and markers["details"]["discovery_s"] == doc["discovery"][0]["seconds"]
    # Spark computed the verdict, in the job's own process
    assert doc["spark"]["master"] == "local[2]"
    assert check_report_files(doc) == "panels: latency A->B; checks"


def test_active_active_pair_passes_every_check(mm2, tmp_path):
    doc = run_job(make_config(mm2, tmp_path, BOTH_WAYS), tmp_path)
    assert doc["verdict"] == "pass", messages(doc)
    got = statuses(doc)
    for flow in ("A->B", "B->A"):
        assert {c for (c, f, _t) in got if f == flow} == EXPECTED | {"cycles"}
    assert [c["details"]["prefix"] for c in doc["checks"] if c["check"] == "cycles"] == ["A.B.", "B.A."]
    assert_counts_add_up(doc)


def assert_counts_add_up(doc):
    """The summary counts what the report lists: every configured check gave a result, the
    results by status and by check both add up to the listed checks, and a kind of result no
    check was configured for (partitions) names the configured check that made it."""
    from mm2_smoke import report
    summary = doc["summary"]
    assert summary["results"] == len(doc["checks"]) == sum(summary[s] for s in report.STATUSES)
    assert sum(summary["by_check"].values()) == len(doc["checks"])
    assert all(summary["by_check"][name] > 0 for name in summary["configured"]), summary["by_check"]
    extra = {name: summary["produced_by"][name] for name in summary["by_check"] if name not in summary["configured"]}
    assert extra == {"partitions": "new_topics"}, extra


def _fill(bootstrap, topic, records, partitions=3):
    # librdkafka's producer: kafka-python's refuses a header without a value
    prod = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    adm = KafkaAdminClient(bootstrap_servers=bootstrap)
    if topic not in adm.list_topics():
        adm.create_topics({topic: {"num_partitions": partitions, "replication_factor": 1}})
        adm.wait_for_topics([topic])
    adm.close()
    for i in range(records):
        # null keys, no headers and null header values too: the reconcile test compares Spark's
        # record hash with the Python definition on these
        key = None if i % 7 == 3 else b"k%d" % i
        headers = [] if i % 5 == 1 else [("h", b"%d" % i)] + ([("n", None)] if i % 3 == 2 else [])
        prod.produce(topic, key=key, value=os.urandom(100), headers=headers, partition=i % partitions)
    assert prod.flush(30) == 0, "records of %s not delivered" % topic


def _records(bootstrap, topic):
    """Every record of ``topic``, in log order within each partition."""
    cons = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    tps = [TopicPartition(topic, p) for p in sorted(cons.partitions_for_topic(topic) or ())]
    assert tps, "no topic %s on %s" % (topic, bootstrap)
    cons.assign(tps)
    cons.seek_to_beginning()
    ends = cons.end_offsets(tps)
    out = []
    while any(cons.position(tp) < ends[tp] for tp in tps):
        for recs in cons.poll(timeout_ms=500).values():
            out.extend(recs)
    cons.close()
    return out


def _read_all(bootstrap, topic, partitions=3):
    out = {p: [] for p in range(partitions)}
    for rec in _records(bootstrap, topic):
        out[rec.partition].append((rec.key, rec.value, list(rec.headers or [])))
    return out


def _committed_source_offsets(lab, props, topic):
    """The offsets of ``topic`` on A that A->B's MirrorSourceConnector has committed, read from its
    herder's offsets topic on B (named as mm2.properties ``props`` sets it) with the collection's
    reader of that topic."""
    use_collection()
    from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import lag, naming
    offsets_topic = naming.herder_settings(props, "A", "B")["offset.storage.topic"]
    records = [(rec.key, rec.value) for rec in _records(lab.bootstrap("B"), offsets_topic)]
    return dict((where, offset) for where, offset in lag.committed_from_topic(records, "MirrorSourceConnector", "A").items()
                if where[0] == topic)


def _wait_mirrored(lab, topic, records, timeout=60):
    lab.wait_topic("B", "A." + topic, timeout)
    cons = KafkaConsumer(bootstrap_servers=lab.bootstrap("B"))
    deadline = time.time() + timeout
    while time.time() < deadline:
        tps = [TopicPartition("A." + topic, p) for p in range(3)]
        if sum(cons.end_offsets(tps).values()) >= records:
            break
        time.sleep(0.5)
    cons.close()


def test_reconcile_clean_then_extra_record_on_target(mm2, tmp_path):
    assert spark_ready(), "pyspark or %s missing: run scripts/bootstrap.sh (lab/spark/fetch.sh)" % JARS_DIR
    topic = "mm2-smoke-rec"
    _fill(mm2.bootstrap("A"), topic, 300)
    _wait_mirrored(mm2, topic, 300)
    cfg = make_config(mm2, tmp_path, ONE_WAY, checks={"reconcile": {"topics": [topic], "settle_s": 20}})
    doc = run_job(cfg, tmp_path, mode="reconcile")
    assert doc["verdict"] == "pass", messages(doc)
    parts = doc["checks"][0]["details"]["partitions"]
    assert [p["source_count"] for p in parts] == [100, 100, 100] and all(p["match"] for p in parts)
    assert check_report_files(doc) == "panels: records per partition A->B mm2-smoke-rec; checks"
    # Spark's digest (SQL built-ins) equals the Python definition over the same records
    from mm2_smoke import digest
    for part, recs in _read_all(mm2.bootstrap("A"), topic).items():
        assert parts[part]["source_digest"] == digest.digest_of(recs)
    # a record written straight to the remote topic: extra on the target
    prod = KafkaProducer(bootstrap_servers=mm2.bootstrap("B"))
    prod.send("A." + topic, key=b"intruder", value=b"not from A", partition=1)
    prod.flush(10)
    prod.close()
    doc = run_job(cfg, tmp_path, mode="reconcile")
    assert doc["verdict"] == "fail" and doc["exit_code"] == 1
    msg = " ".join(messages(doc, "reconcile"))
    assert ("flow A->B topic mm2-smoke-rec -> A.mm2-smoke-rec partition 1: source 100 records, target 101" in msg
            and "extra on target: target offset 100 key 'intruder'" in msg), msg
    bad = [p for p in doc["checks"][0]["details"]["partitions"] if not p["match"]]
    assert [p["partition"] for p in bad] == [1]


def _end_total(bootstrap, topic, partitions=3):
    cons = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        return sum(cons.end_offsets([TopicPartition(topic, p) for p in range(partitions)]).values())
    finally:
        cons.close()


def test_crash_replay_counts_duplicates_not_losses(mm2, tmp_path):
    """kill -9 of MM2 mid-stream: after the restart it replays what it had not committed. Reconcile
    finds 0 missing and N duplicated; at-least-once reports them, duplicates=fail fails on them."""
    topic = "mm2-smoke-crash"
    # Offsets are never flushed before the crash, so everything replicated so far is replayed. But
    # Connect also commits a task's offsets whenever it stops the task, which it does when its
    # connector's configuration changes, and the flush interval changes every connector's (MM2
    # copies the target cluster's keys into them). So a first start stores the configurations, and
    # the second must find them up to date: then only the new topic's discovery restarts the tasks,
    # and that is before they hold any of its partitions.
    worker = {"offset.flush.interval.ms": 600000}
    mm2.stop_mm2()
    mm2.start_mm2(MM2_FLOWS_BOTH, worker=worker)
    mm2.stop_mm2()
    props = mm2.start_mm2(MM2_FLOWS_BOTH, worker=worker)
    with open(mm2.mm2_log(), errors="replace") as fh:
        assert re.search(harness.SOURCE_UP_TO_DATE % ("A", "B"), fh.read()), "the stored A->B configuration was rewritten"
    try:
        _fill(mm2.bootstrap("A"), topic, 300)
        _wait_mirrored(mm2, topic, 300)
        assert _end_total(mm2.bootstrap("B"), "A." + topic) >= 300
        mm2.kill_mm2()
        assert _committed_source_offsets(mm2, props, topic) == {}, "the test's premise: nothing committed before the kill"
        _fill(mm2.bootstrap("A"), topic, 300)
    finally:
        start_session_mm2(mm2)
    _wait_mirrored(mm2, topic, 900)  # 600 records, the first 300 twice
    cfg = make_config(mm2, tmp_path, ONE_WAY, checks={"reconcile": {"topics": [topic], "settle_s": 5}})
    doc = run_job(cfg, tmp_path, mode="reconcile")
    assert doc["verdict"] == "pass", messages(doc)
    det = doc["checks"][0]["details"]
    assert det["source_records"] == 600 and det["missing"] == 0 and det["extra"] == 0
    assert det["duplicated"] == det["target_records"] - 600 >= 300, det
    for part in det["partitions"]:
        assert part["missing_count"] == 0 and part["duplicated_count"] >= 100, part
        assert 0 < len(part["duplicated"]) <= 5  # samples from every partition, not one partition's fill
    assert "duplicates reported, not a failure" in " ".join(doc["checks"][0]["notes"])
    cfg = make_config(mm2, tmp_path, ONE_WAY, checks={"reconcile": {"topics": [topic], "settle_s": 5},
                                                      "duplicates": "fail"}, name="strict.json")
    doc = run_job(cfg, tmp_path, mode="reconcile")
    assert doc["verdict"] == "fail" and doc["exit_code"] == 1
    msg = " ".join(messages(doc, "reconcile"))
    assert "partition 0: source 200 records, target" in msg and ": 0 missing, " in msg, msg


def test_unreachable_cluster_is_one_error_naming_it(lab, tmp_path):
    """One error per cluster that does not answer, naming alias, side and bootstrap list; the flows
    on it do not run, and the run could not prove anything: exit 2."""
    closed = "127.0.0.1:%d" % harness.free_ports(1)[0]
    cfg_path = make_config(lab, tmp_path, BOTH_WAYS, checks={"timeouts": {"bootstrap": 3}})
    cfg = json.loads(open(cfg_path).read())
    cfg["clusters"]["B"]["bootstrap_servers"] = closed
    for flow in cfg["flows"]:
        for side in ("source", "target"):
            if flow[side] == "B":
                flow[side + "_bootstrap_servers"] = closed
    open(cfg_path, "w").write(json.dumps(cfg))
    t0 = time.time()
    doc = run_job(cfg_path, tmp_path)
    assert time.time() - t0 < 60
    assert doc["verdict"] == "error" and doc["exit_code"] == 2
    assert doc["errors"] == ["cluster B (target of A->B, source of B->A) unreachable at bootstrap servers %s within "
                             "3.0s: KafkaTimeoutError: Unable to bootstrap from ['%s']" % (closed, closed)], doc["errors"]
    assert doc["checks"] == []


def test_group_never_committed_has_no_checkpoint(mm2, tmp_path):
    cfg = make_config(mm2, tmp_path, ONE_WAY, checks={
        "enabled": ["markers", "offsets"], "group": "never-committed-{run_id}", "offsets": {"commit": False},
        "records": 12, "timeouts": {"offsets": 12}})
    doc = run_job(cfg, tmp_path)
    assert doc["verdict"] == "fail"
    msg = " ".join(messages(doc, "offsets"))
    run_id = doc["run_id"]
    assert ("flow A->B group never-committed-%s: no checkpoint for A.mm2-smoke partition 0 in "
            "A.checkpoints.internal on target B after 12s (the group has no committed offset on source A for "
            "mm2-smoke-0: it never committed)" % run_id) in msg, msg


def test_mm2_stopped_markers_missing(mm2, tmp_path):
    """Runs last: stops the session's MirrorMaker 2."""
    mm2.stop_mm2()
    cfg = make_config(mm2, tmp_path, ONE_WAY, checks={"enabled": ["markers", "heartbeats"], "records": 20,
                                                      "timeouts": {"markers": 10, "heartbeats": 5}})
    doc = run_job(cfg, tmp_path)
    assert doc["verdict"] == "fail" and doc["exit_code"] == 1
    msg = " ".join(messages(doc, "markers"))
    assert "flow A->B topic mm2-smoke -> A.mm2-smoke: 20 of 20 markers missing after 10s: seq 0 (source " \
           "partition 0 offset" in msg, msg
    hb = " ".join(messages(doc, "heartbeats"))
    assert "flow A->B: heartbeats A->B in topic heartbeats on target B not advancing within 5s" in hb, hb
