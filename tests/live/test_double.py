"""Faults real MirrorMaker 2 cannot be made to show, from the copier test double (copier_double.py).

The double copies A:<topic> -> B:A.<topic> (topics dbl-*, which the session's MM2 does not
mirror) and drops, corrupts, reorders, duplicates, delays, misnames or adds a record of the run
that no marker is; the smoke job's markers
check must catch each with a message naming flow, topic, partition and sequence/offset.
"""

import re

from copier_double import CopierDouble
from jobtools import make_config, messages, run_job

PARTITIONS = 2
RECORDS = 30


def run_with_double(lab, tmp_path, name, timeout=8, duplicates="auto", **faults):
    topic = "dbl-" + name
    flows = [{"source": "A", "target": "B", "topics": ["dbl-.*"]}]
    # the double creates the remote topic before it copies (but for misname): MM2's discovery wait
    # (new_topic) matters only when it is missing
    cfg = make_config(lab, tmp_path, flows, checks={
        "topics": [topic], "records": RECORDS, "partitions": PARTITIONS, "enabled": ["markers"],
        "timeouts": {"markers": timeout, "new_topic": timeout}, "duplicates": duplicates},
        name="config-%s-%s.json" % (name, duplicates))
    double = CopierDouble(lab.bootstrap("A"), lab.bootstrap("B"), topic, "A." + topic, PARTITIONS, **faults)
    double.start()
    try:
        doc = run_job(cfg, tmp_path)
    finally:
        double.stop()
    return doc


def test_double_clean_copy_passes(lab, tmp_path):
    doc = run_with_double(lab, tmp_path, "clean")
    assert doc["verdict"] == "pass", messages(doc)
    det = doc["checks"][0]["details"]
    assert det["found"] == RECORDS and det["missing"] == 0 and det["duplicates"] == 0


def test_double_drop(lab, tmp_path):
    doc = run_with_double(lab, tmp_path, "drop", drop={7})
    assert doc["verdict"] == "fail" and doc["exit_code"] == 1
    msg = " ".join(messages(doc, "markers"))
    # seq 7 went to partition 1 (seq % partitions), the 4th record there
    assert re.search(r"flow A->B topic dbl-drop -> A\.dbl-drop: 1 of 30 markers missing after 8s: "
                     r"seq 7 \(source partition 1 offset 3\)", msg), msg


def test_double_corrupt(lab, tmp_path):
    doc = run_with_double(lab, tmp_path, "corrupt", corrupt={4})
    msg = " ".join(messages(doc, "markers"))
    assert re.search(r"A\.dbl-corrupt partition 0 offset 2 \(seq 4, source offset 2\): value differs from source "
                     r"\(byte 0: 0x[0-9a-f]{2} != source 0x[0-9a-f]{2}\)", msg), msg


def test_double_reorder(lab, tmp_path):
    doc = run_with_double(lab, tmp_path, "reorder", reorder={2})
    msg = " ".join(messages(doc, "markers"))
    assert "order not kept: partition 0: seq 4 (source offset 2) is at target offset 1, before seq 2" in msg, msg


def test_double_duplicate(lab, tmp_path):
    dup = "1 markers duplicated: seq 5 seen 2 times (target partition 1 offset 2, partition 1 offset 3)"
    # at-least-once (the flow has no exactly-once): reported, not a failure
    doc = run_with_double(lab, tmp_path, "duplicate", duplicate={5})
    assert doc["verdict"] == "pass", messages(doc)
    notes = " ".join(doc["checks"][0].get("notes", []))
    assert dup in notes and "(reported, not a failure: at-least-once delivery)" in notes, notes
    # duplicates=fail (as exactly-once flows have under auto): the same copy fails the check
    doc = run_with_double(lab, tmp_path, "duplicate-fail", duplicates="fail", duplicate={5})
    assert doc["verdict"] == "fail" and doc["exit_code"] == 1
    assert dup in " ".join(messages(doc, "markers")), messages(doc)


def test_double_extra(lab, tmp_path):
    doc = run_with_double(lab, tmp_path, "extra", extra={3, 6})
    assert doc["verdict"] == "fail" and doc["exit_code"] == 1
    det = doc["checks"][0]["details"]
    assert det["found"] == RECORDS and det["extra"] == 2 and det["missing"] == 0, det
    # seq 3 is the 2nd record of partition 1, seq 6 the 4th of partition 0; each extra right behind it
    msg = " ".join(messages(doc, "markers"))
    assert ("flow A->B topic dbl-extra -> A.dbl-extra: 2 unexpected records carrying this run's id: "
            "partition 0 offset 4, partition 1 offset 2") in msg, msg


def test_double_misname(lab, tmp_path):
    doc = run_with_double(lab, tmp_path, "misname", misname="A_dbl-misname")
    msg = " ".join(messages(doc, "markers"))
    assert ("flow A->B: remote topic 'A.dbl-misname' (default replication policy) does not exist on target B "
            "after 8s; topics there ending in 'dbl-misname': A_dbl-misname") in msg, msg


def test_double_delay_shows_in_latency(lab, tmp_path):
    doc = run_with_double(lab, tmp_path, "delay", timeout=30, delay_s=2.0)
    assert doc["verdict"] == "pass", messages(doc)
    assert doc["latency_ms"]["p50"] >= 2000, doc["latency_ms"]


def test_double_delay_beyond_timeout_is_missing(lab, tmp_path):
    doc = run_with_double(lab, tmp_path, "late", timeout=3, delay_s=6.0)
    msg = " ".join(messages(doc, "markers"))
    assert "flow A->B topic dbl-late -> A.dbl-late: 30 of 30 markers missing after 3s" in msg, msg
