"""mm2_lag_info against a REAL MirrorMaker 2 held back, in both layouts, on the session's real brokers.

Dedicated layout: ``connect-mirror-maker.sh`` with the mm2.properties the flow model renders
(flow LGA->LGB, clusters A and B of the session); held back by stopping its process, released by
starting it again. Connect layout: a real distributed worker with the connectors of the connect
role's plan (mm2_connect.plan, flow LCA->LCB); held back by pausing the MirrorSourceConnector over
REST, released by resuming it. The aliases are the tests' own, so that the herder's group and
offsets topic, and the Connect cluster's, are not the session MirrorMaker 2's.

In each: records are produced and copied (the lag reads 0), MirrorMaker 2 is held back, more
records are produced (the lag reads exactly those, per partition, and its seconds are above 0 and
grow), it is released (the lag returns to 0). The module runs as a user runs it
(``ansible localhost -m kafkaops.mirrormaker.mm2_lag_info``), with the plan as the roles build it.
Beside it the lag exporter (``python -m mm2_smoke.lag_exporter``, as the mm2_smoke role's unit runs
it) is given the same options, and its ``/metrics``, read by Prometheus' own parser, shows the same
records per partition while held back and 0 once released.
The values are printed (``pytest -s``) for the record.
"""

import json
import os
import re
import sys
import time
import urllib.request
import uuid

import pytest
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic
from prometheus_client.parser import text_string_to_metric_families

import harness
from jobtools import run_ansible_module
from repo_paths import COLLECTIONS
from mm2_smoke import kafka_util

PREFIX = "lag-%s" % uuid.uuid4().hex[:6]
PARTITIONS = 2
FIRST, HELD = 30, 25
# the worker's offset.flush.interval.ms: the committed offsets trail the copy by up to this
FLUSH_MS = 1000
WAIT = 150


def say(text):
    harness.log("LAG " + text)
    print("LAG " + text, flush=True)


def create_topic(lab, topic):
    admin = kafka_util.RetryingAdmin(KafkaAdminClient(bootstrap_servers=lab.bootstrap("A"), client_id=PREFIX), 60)
    try:
        admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)])
    finally:
        admin.close()


def produce(lab, topic, count, tag):
    """``count`` records, round robin over the partitions; returns how many went to each."""
    producer = KafkaProducer(bootstrap_servers=lab.bootstrap("A"), acks="all")
    per = dict.fromkeys(range(PARTITIONS), 0)
    for i in range(count):
        producer.send(topic, value=("%s-%d" % (tag, i)).encode(), partition=i % PARTITIONS)
        per[i % PARTITIONS] += 1
    producer.flush(60)
    producer.close()
    return per


def lag_of(args, topic, tolerate=False):
    """The module's result and its rows of ``topic``, {partition: row}; with ``tolerate``, a failed
    run (MirrorMaker 2 starting: no offsets topic, no connector yet) reads as no rows."""
    proc, result = run_ansible_module("kafkaops.mirrormaker.mm2_lag_info", args)
    if tolerate and result.get("failed"):
        return result, {}
    assert proc.returncode == 0 and not result.get("failed"), result.get("msg")
    rows = dict((r["partition"], r) for r in result["lag"] if r["topic"] == topic)
    return result, rows


def show(phase, rows):
    say("%-34s %s" % (phase, "; ".join("p%d records=%d seconds=%.3f next=%d end=%d" % (
        p, r["records"], r["seconds"], r["next"], r["end"]) for p, r in sorted(rows.items()))))


def wait_lag(args, topic, predicate, timeout, phase):
    deadline = time.monotonic() + timeout
    rows, result = {}, {}
    while time.monotonic() < deadline:
        result, rows = lag_of(args, topic, tolerate=True)
        if predicate(rows):
            show(phase, rows)
            return rows
        time.sleep(1)
    show(phase + " (not reached)", rows)
    raise AssertionError("%s: the lag of %s did not reach what was expected within %ds: %s %s"
                         % (phase, topic, timeout, rows, result.get("msg")))


class Exporter(object):
    """The lag exporter as a process, given ``args`` (the module's options) as its configuration."""

    def __init__(self, args, directory):
        config = os.path.join(directory, "lag-exporter.json")
        with open(config, "w") as fh:
            json.dump(args, fh)
        self.url = "http://127.0.0.1:%d/metrics" % harness.free_ports(1)[0]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([harness.SMOKE_DIR, COLLECTIONS]))
        self.log = os.path.join(directory, "lag-exporter.log")
        self.proc = harness.start_process([sys.executable, "-m", "mm2_smoke.lag_exporter", "--config", config,
                                           "--listen", self.url.split("/")[2]], self.log, env=env)

    def scrape(self, topic):
        """(reading_ok, {partition: (records, seconds)} of ``topic``) from one scrape of /metrics."""
        with urllib.request.urlopen(self.url, timeout=90) as resp:
            text = resp.read().decode("utf-8")
        ok, rows = None, {}
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == "kafkaops_mm2_lag_reading_ok":
                    ok = sample.value
                elif sample.name in ("kafkaops_mm2_lag_records", "kafkaops_mm2_lag_seconds") and \
                        sample.labels["topic"] == topic:
                    figures = rows.setdefault(int(sample.labels["partition"]), [None, None])
                    figures[0 if sample.name.endswith("records") else 1] = sample.value
        return ok, dict((p, tuple(v)) for p, v in rows.items())

    def wait(self, topic, predicate, timeout, phase):
        deadline = time.monotonic() + timeout
        seen = None
        while time.monotonic() < deadline:
            try:
                seen = self.scrape(topic)
            except OSError as exc:  # not listening yet
                seen = exc
            else:
                if seen[0] == 1 and predicate(seen[1]):
                    say("exporter, %-24s %s" % (phase, "; ".join("p%d records=%d seconds=%.3f" % (p, r, s)
                                                                 for p, (r, s) in sorted(seen[1].items()))))
                    return seen[1]
            assert self.proc.poll() is None, "the exporter exited: %s" % open(self.log).read()
            time.sleep(1)
        raise AssertionError("%s: the exporter did not show what was expected within %ds: %s; its log: %s"
                             % (phase, timeout, seen, open(self.log).read()))

    def stop(self):
        harness.stop_process(self.proc, 10)


def caught_up(rows):
    return sorted(rows) == list(range(PARTITIONS)) and all(r["records"] == 0 and r["seconds"] == 0 for r in rows.values())


def held_back_run(args, topic, lab, hold, release, directory):
    """Copied -> held back -> records produced -> released; the readings and their checks, the
    module's and the exporter's."""
    exporter = Exporter(args, directory)
    try:
        return exported_held_back_run(args, topic, lab, hold, release, exporter)
    finally:
        exporter.stop()


def exported_held_back_run(args, topic, lab, hold, release, exporter):
    wait_lag(args, topic, caught_up, WAIT, "copied (before holding back)")
    hold()
    # what the last flush before the hold committed: nothing is left behind by the hold itself
    wait_lag(args, topic, caught_up, 30, "held back, nothing produced yet")
    per = produce(lab, topic, HELD, "held")
    time.sleep(2)
    _result, first = lag_of(args, topic)
    show("held back, %d produced" % HELD, first)
    assert dict((p, r["records"]) for p, r in first.items()) == per
    assert all(r["seconds"] > 0 for r in first.values()), first
    time.sleep(3)
    _result, second = lag_of(args, topic)
    show("held back, 3 s later", second)
    assert dict((p, r["records"]) for p, r in second.items()) == per
    for p in per:
        # the same oldest record, read later: its age grew by the time between the readings
        assert second[p]["seconds"] >= first[p]["seconds"] + 2.5, (first, second)
        assert second[p]["next"] == first[p]["next"] and second[p]["end"] == first[p]["end"]
    # the exporter reads as the module does: the same records behind, an age at least the second reading's
    exported = exporter.wait(topic, lambda rows: sorted(rows) == sorted(per), 60, "held back")
    assert dict((p, r) for p, (r, _s) in exported.items()) == per
    assert all(exported[p][1] >= second[p]["seconds"] for p in per), (exported, second)
    release()
    wait_lag(args, topic, caught_up, WAIT, "released")
    exporter.wait(topic, lambda rows: sorted(rows) == sorted(per) and all(v == (0, 0) for v in rows.values()),
                  60, "released")
    return first, second


# ------------------------------------------------------------------ dedicated layout


@pytest.fixture(scope="module")
def dedicated(lab):
    model = harness.load_model()
    topic = PREFIX + ".dedicated"
    create_topic(lab, topic)
    clusters = [{"alias": "LGA", "bootstrap_servers": [lab.bootstrap("A")], "broker_count": 1,
                 "properties": {"plugin.discovery": "service_load"}},
                {"alias": "LGB", "bootstrap_servers": [lab.bootstrap("B")], "broker_count": 1,
                 "properties": {"plugin.discovery": "service_load"}}]
    flows = [{"source": "LGA", "target": "LGB", "topics": [re.escape(topic)], "emit_heartbeats": False,
              "emit_checkpoints": False}]
    glob = dict(harness.HARNESS_GLOBALS, **harness.FAST_INTERVALS)
    glob.update({"plugin.discovery": "service_load", "listeners": "http://127.0.0.1:%d" % harness.free_ports(1)[0],
                 "rest.advertised.host.name": "127.0.0.1"})
    options = {"exactly_once": False, "internal_rest": True, "worker_defaults": {"offset.flush.interval.ms": FLUSH_MS}}
    loaded = model.load(clusters, flows, glob, options)
    assert not loaded.errors, loaded.errors
    props = loaded.properties()
    assert props["LGB.offset.flush.interval.ms"] == str(FLUSH_MS)
    # what the mirrormaker role registers as __mirrormaker_model and hands to the module
    plan = {"properties": dict(props), "flows": loaded.effective_flows(), "clients": loaded.clients()}
    d = os.path.join(lab.tmp, PREFIX + "-mm2")
    os.makedirs(d)
    path = os.path.join(d, "mm2.properties")
    with open(path, "w") as fh:
        fh.write(harness.format_properties(props) + "\n")
    state = {"proc": None, "count": 0}

    def start():
        state["count"] += 1
        env = dict(os.environ, LOG_DIR=os.path.join(d, "logs"), KAFKA_HEAP_OPTS=lab.heap)
        state["proc"] = harness.start_process([lab.bin("connect-mirror-maker.sh"), path],
                                              os.path.join(d, "stdout-%d.log" % state["count"]), env=env)

    def stop():
        harness.stop_process(state["proc"], 60)

    produce(lab, topic, FIRST, "first")
    start()
    try:
        yield {"plan": plan, "topic": topic, "start": start, "stop": stop, "lab": lab, "dir": d}
    finally:
        if state["proc"] is not None and state["proc"].poll() is None:
            stop()


def test_dedicated_lag_grows_while_mirrormaker_is_stopped_and_returns_to_zero(dedicated):
    args = {"layout": "dedicated", "plan": dedicated["plan"], "timeout": 60}
    held_back_run(args, dedicated["topic"], dedicated["lab"], dedicated["stop"], dedicated["start"],
                  dedicated["dir"])
    result, _rows = lag_of(args, dedicated["topic"])
    assert result["sources"] == [{"flow": "LGA->LGB", "isolation_level": "read_uncommitted",
                                  "offsets": "topic mm2-offsets.LGA.internal on LGB (%s)" % dedicated["lab"].bootstrap("B")}]
    say("rows of every topic of the flow: %s" % result["lag"])


def test_dedicated_refuses_a_flow_the_plan_does_not_have(dedicated):
    proc, result = run_ansible_module("kafkaops.mirrormaker.mm2_lag_info",
                                      {"layout": "dedicated", "plan": dedicated["plan"], "flows": ["LGB->LGA"]})
    assert result.get("failed") and proc.returncode != 0
    assert result["msg"] == "flows: LGB->LGA is not an enabled flow of the plan (LGA->LGB)"


# ------------------------------------------------------------------ Connect layout


@pytest.fixture(scope="module")
def connect(lab, tmp_path_factory):
    _model, mm2_connect = harness.load_connect()
    topic = PREFIX + ".connect"
    create_topic(lab, topic)
    tmp = tmp_path_factory.mktemp("lag-connect")
    clusters = [{"alias": "LCA", "bootstrap_servers": [lab.bootstrap("A")], "broker_count": 1},
                {"alias": "LCB", "bootstrap_servers": [lab.bootstrap("B")], "broker_count": 1}]
    flows = [{"source": "LCA", "target": "LCB", "topics": [re.escape(topic)], "emit_heartbeats": False}]
    glob = dict((k, v) for k, v in dict(harness.HARNESS_GLOBALS, **harness.FAST_INTERVALS).items()
                if not mm2_connect.WORKER_KEYS.match(k))
    port = harness.free_ports(1)[0]
    settings = {"rest": {"port": port, "advertised_host": "127.0.0.1", "bind_host": "127.0.0.1"},
                "secrets_dir": str(tmp / "secrets"),
                "worker_defaults": {"offset.flush.interval.ms": FLUSH_MS, "offset.storage.replication.factor": 1,
                                    "config.storage.replication.factor": 1, "status.storage.replication.factor": 1}}
    plan = mm2_connect.plan(clusters, flows, glob, {"exactly_once": False, "internal_rest": True,
                                                    "flow_defaults": {"tasks.max": 1}}, "LCA", "LCB", settings)
    assert plan["errors"] == []
    worker = lab.start_worker(plan["worker_properties"])
    url, proc = worker["url"], worker["proc"]
    source = mm2_connect.connector_name("LCA", "LCB", "MirrorSourceConnector")
    try:
        produce(lab, topic, FIRST, "first")
        for name, config in plan["connectors"].items():
            harness.put_connector(url, name, config)
        yield {"plan": plan, "topic": topic, "url": url, "lab": lab, "source": source, "dir": str(tmp)}
    finally:
        harness.stop_process(proc, 60)


def test_connect_lag_grows_while_the_connector_is_paused_and_returns_to_zero(connect):
    name = connect["source"]
    assert connect["plan"]["connectors"][name]["connector.class"].endswith(".MirrorSourceConnector")
    args = {"layout": "connect", "plan": connect["plan"], "url": connect["url"], "timeout": 60}

    def pause():
        harness.connect_rest("PUT", "%s/connectors/%s/pause" % (connect["url"], name))
        deadline = time.monotonic() + 60
        while harness.get_json("%s/connectors/%s/status" % (connect["url"], name))["connector"]["state"] != "PAUSED":
            assert time.monotonic() < deadline, "%s not PAUSED" % name
            time.sleep(0.5)
        # a task finishing its last poll may still copy what it fetched; the hold starts after a flush
        time.sleep(2 * FLUSH_MS / 1000.0 + 1)

    def resume():
        harness.connect_rest("PUT", "%s/connectors/%s/resume" % (connect["url"], name))

    held_back_run(args, connect["topic"], connect["lab"], pause, resume, connect["dir"])
    result, _rows = lag_of(args, connect["topic"])
    assert result["sources"] == [{"flow": "LCA->LCB", "isolation_level": "read_uncommitted",
                                  "offsets": "GET %s/connectors/%s/offsets" % (connect["url"], name)}]
