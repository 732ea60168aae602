"""Checkpoint latency: a new consumer group's first offset commit on the source cluster to the first
MirrorMaker 2 checkpoint for that group on the target, in both layouts, idle and under load.

That window is the one in which a new group cannot fail over yet: B has no translated offsets
for it. One run, on two single-node KRaft brokers (A, B) from the lab archive on 127.0.0.1
(tests/live/harness.py), flow A->B in each layout, one layout at a time:

* dedicated   - connect-mirror-maker.sh (Lab.start_mm2_properties) with an mm2.properties rendered
                by plugins/module_utils/mm2/model.py from the mirrormaker role's defaults, as
                bench/mm2_throughput renders its config ``role``; default replication policy
                (checkpoints in A.checkpoints.internal on B, remote topic A.<topic>);
* connect-eos - the disaster-recovery layout as the connect role renders it: two distributed
                Connect workers next to B (Lab.start_connect, exactly.once.source.support=enabled,
                the connect role's worker defaults), MirrorSourceConnector (exactly.once.support=
                required) and MirrorCheckpointConnector from mm2_connect.connectors with the connect
                role's defaults, IdentityReplicationPolicy, offset-syncs.topic.location=target,
                PUT over REST as bench/mm2_throughput does.

Both layouts get the molecule DR lab's intervals (mirrormaker_properties of
molecule/dr/inventory/group_vars/connect_workers.yml) and its flow's emit_heartbeats /
emit_checkpoints / sync_group_offsets, a topic of their own (bench-cp-<layout>, 3 partitions,
100 records, mirrored before anything is timed) and the groups bench-cp-<layout>-.* only. A
warm-up group is committed and checkpointed first (the first group of a cluster creates
__consumer_offsets). Then per round: a new group is committed on A at each partition's end
offset (kafka-python, every partition's answer checked), t0 is taken when the commit has
succeeded, and a read_committed consumer of the checkpoints topic on B (from its end offsets
before the commit) waits until a checkpoint of that group exists for every partition with the
committed upstream offset (smoke/mm2_smoke/formats.py decode_checkpoint); a round that takes
longer than --deadline (180 s) is recorded as a timeout. Rounds run idle, then again next to one
CPU hog (python3 busy loop, bounded by timeout 1h, killed at the end of the phase). Before each
commit the bench waits a random part of refresh.groups.interval.seconds, so that commits fall
at random points of MirrorMaker's group refresh cycle.

Prints a table (layout, load, n, min, median, max seconds) and the ratios of the medians; writes
bench/results/checkpoint_latency-<date>.json with every round.
Needs: the project's venv (PyYAML, kafka-python), java 17, the lab archive (lab/kafka-dist/assemble.sh).

  bench/checkpoint_latency              # 5 groups per layout and load state
  bench/checkpoint_latency --rounds 2   # a quick check
"""

import argparse
import datetime
import json
import os
import platform
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "smoke"))
# mm2_throughput puts tests/live (the harness) on sys.path; the layouts are rendered as it renders them.
import mm2_throughput as mt  # noqa: E402 pylint: disable=wrong-import-position
from harness import Lab, commit_group, find_archive, free_ports, load_connect, load_model, log, put_connector, start_process, stop_process  # noqa: E402 pylint: disable=wrong-import-position
from mm2_smoke import kafka_util as ku  # noqa: E402 pylint: disable=wrong-import-position
from mm2_smoke.formats import FormatError, decode_checkpoint  # noqa: E402 pylint: disable=wrong-import-position

DR_LAB_VARS = os.path.join(REPO, "molecule", "dr", "inventory", "group_vars", "connect_workers.yml")
# The intervals the brief of this bench names; the DR lab's file must still set them.
INTERVAL_KEYS = ("refresh.topics.interval.seconds", "refresh.groups.interval.seconds",
                 "emit.checkpoints.interval.seconds", "sync.group.offsets.interval.seconds")
FLOW_FLAGS = ("emit_heartbeats", "emit_checkpoints", "sync_group_offsets")
LAYOUT_DOCS = OrderedDict([
    ("dedicated", "connect-mirror-maker.sh, the mirrormaker role's defaults (globals, flow defaults, worker "
                  "defaults), default replication policy, exactly-once off"),
    ("connect-eos", "DR layout: distributed Connect workers next to B (mm2_connect.worker_properties + "
                    "connect_worker_default_properties, exactly.once.source.support=enabled), MirrorSourceConnector "
                    "(exactly.once.support=required) and MirrorCheckpointConnector from mm2_connect.connectors with "
                    "the connect role's defaults, IdentityReplicationPolicy, offset-syncs.topic.location=target"),
])
CONNECT_WORKERS = 2
PARTITIONS = 3
RECORDS = 100
GROUP_PREFIX = "bench-cp-"
LOADS = ("idle", "loaded")
HOG = ["timeout", "1h", "python3", "-c", "while True: pass"]
SETUP_TIMEOUT = 300  # layout up, records mirrored, warm-up checkpoint
CLIENT_TIMEOUT = 60  # RetryingAdmin: transient broker errors retried this long


def dr_lab_settings():
    """(intervals, flow flags) of the molecule DR lab, read from its inventory."""
    import yaml  # the project's venv has PyYAML
    with open(DR_LAB_VARS) as fh:
        data = yaml.safe_load(fh)
    intervals = OrderedDict(sorted((data.get("mirrormaker_properties") or {}).items()))
    missing = [k for k in INTERVAL_KEYS if k not in intervals]
    if missing:
        raise RuntimeError("%s sets no %s any more" % (os.path.relpath(DR_LAB_VARS, REPO), ", ".join(missing)))
    flow = (data.get("mirrormaker_flows") or [{}])[0]
    return intervals, OrderedDict((k, flow[k]) for k in FLOW_FLAGS if k in flow)


class Layout(object):
    """One running layout: its flow's names, clients, and a check that it still runs."""

    def __init__(self, name, lab, effective, settings):
        self.name = name
        self.lab = lab
        self.topic = effective["topics"][0]
        self.remote = effective["remote_topic_prefix"] + self.topic
        self.cp_topic = effective["internal_topics"]["checkpoints"]
        self.settings = settings
        self.urls = settings.get("rest_urls") or []
        self.connectors = list(settings.get("connectors") or [])
        self.next_status = 0
        from kafka.admin import KafkaAdminClient
        self.adm_a = ku.RetryingAdmin(KafkaAdminClient(bootstrap_servers=lab.bootstrap("A"), client_id="bench-cp"),
                                      CLIENT_TIMEOUT)
        self.adm_b = ku.RetryingAdmin(KafkaAdminClient(bootstrap_servers=lab.bootstrap("B"), client_id="bench-cp"),
                                      CLIENT_TIMEOUT)

    def consumer(self):
        from kafka import KafkaConsumer
        # read_committed: under exactly-once a checkpoint counts once its transaction is committed
        return KafkaConsumer(bootstrap_servers=self.lab.bootstrap("B"), client_id="bench-cp", group_id=None,
                             enable_auto_commit=False, auto_offset_reset="earliest",
                             isolation_level="read_committed", fetch_max_wait_ms=100)

    def check(self):
        """Raise when the layout's process died or Connect reports a FAILED connector or task."""
        if self.name == "dedicated":
            if self.lab.mm2 is None or self.lab.mm2.poll() is not None:
                raise RuntimeError("dedicated MM2 exited, see %s" % self.lab.mm2_dir)
            return
        for worker in self.lab.workers:
            if worker["proc"].poll() is not None:
                raise RuntimeError("Connect worker %s exited, see %s" % (worker["url"], worker["out"]))
        if time.time() >= self.next_status:
            self.next_status = time.time() + 5
            failures = []
            for cname in self.connectors:
                failures += mt.failed_tasks(mt.connector_status(self.urls[0], cname))
            if failures:
                raise RuntimeError("Connect reports %s" % failures)

    def close(self):
        self.adm_a.close()
        self.adm_b.close()


def flow_fields(name, flags):
    """Topic, groups and the DR lab's flags of a layout's flow: its own topic and groups only."""
    topic = GROUP_PREFIX + name
    return dict(flags, topics=[topic], groups=[re.escape(GROUP_PREFIX + name + "-") + ".*"])


def start_dedicated(lab, intervals, flags):
    clusters, flows, glob, options = mt.mm2_inputs("role", lab.bootstrap("A"), lab.bootstrap("B"), PARTITIONS,
                                                   free_ports(1)[0])
    flows[0].update(flow_fields("dedicated", flags))
    glob.update(intervals)
    model = load_model().load(clusters, flows, glob, options)
    props = lab.start_mm2_properties(model.properties())
    return model.effective_flows()[0], OrderedDict([("mm2_properties", props)])


def start_connect_eos(lab, intervals, flags):
    mm2_model, mm2_connect = load_connect()
    clusters, flows, glob, options = mt.connect_inputs("connect-eos", lab.bootstrap("A"), lab.bootstrap("B"))
    flows[0].update(flow_fields("connect-eos", flags))
    glob.update(intervals)
    model = mm2_model.load(clusters, flows, glob, options)
    configs = mm2_connect.connectors(model, "A", "B")  # raises on a model with errors
    refusals = mm2_connect.check_connectors(configs, True, "connector configs", "exactly_once")
    if refusals:
        raise RuntimeError("connect-eos: %s" % refusals)
    urls = lab.start_connect("A", "B", workers=CONNECT_WORKERS, exactly_once=True,
                             extra=mt.connect_role_defaults()[2])
    for cname, config in configs.items():
        put_connector(urls[0], cname, config)
    return model.effective_flows()[0], OrderedDict([
        ("workers", len(urls)), ("rest_urls", urls),
        ("worker_properties", [OrderedDict(w["properties"]) for w in lab.workers]),
        ("connectors", configs)])


STARTERS = OrderedDict([("dedicated", start_dedicated), ("connect-eos", start_connect_eos)])


def fill(layout):
    """Create the layout's topic on A, produce RECORDS records over its partitions, wait until B has
    them all (committed): offset syncs exist then. Returns the end offsets on A (what groups commit)."""
    from kafka import KafkaProducer
    layout.adm_a.create_topics({layout.topic: {"num_partitions": PARTITIONS, "replication_factor": 1}})
    layout.adm_a.wait_for_topics([layout.topic])
    producer = KafkaProducer(bootstrap_servers=layout.lab.bootstrap("A"), acks="all")
    for i in range(RECORDS):
        producer.send(layout.topic, value=b"checkpoint-latency %d" % i, partition=i % PARTITIONS)
    producer.flush(60)
    producer.close()
    ends = ku.end_offsets(layout.adm_a, layout.topic, PARTITIONS)
    cons = layout.consumer()
    seen, assigned, deadline = 0, False, time.time() + SETUP_TIMEOUT
    try:
        while seen < RECORDS:
            if time.time() > deadline:
                raise RuntimeError("%s: %d/%d records of %s on B after %ss" % (layout.name, seen, RECORDS,
                                                                               layout.remote, SETUP_TIMEOUT))
            layout.check()
            assigned = assigned or ku.assign_all(layout.adm_b, cons, layout.remote)
            if not assigned:
                time.sleep(0.5)
                continue
            seen += sum(len(recs) for recs in cons.poll(timeout_ms=500).values())
    finally:
        cons.close()
    return ends


def measure(layout, group, offsets, deadline_s):
    """Commit the new group, then read the checkpoints topic on B until every partition has a checkpoint
    of it. Returns (seconds or None on timeout, {partition: seconds}) from the moment the commit succeeded."""
    from kafka import TopicPartition
    cons = layout.consumer()
    try:
        parts = ku.partitions_of(layout.adm_b, layout.cp_topic)
        assigned = bool(parts)
        if parts:
            # from the end before the commit: all that comes later may be this group's
            starts = ku.end_offsets(layout.adm_b, layout.cp_topic, parts)
            cons.assign([TopicPartition(layout.cp_topic, p) for p in range(parts)])
            for p, off in starts.items():
                cons.seek(TopicPartition(layout.cp_topic, p), off)
            cons.poll(timeout_ms=100)  # connections and fetch positions ready before t0
        commit_group(layout.adm_a, group, layout.topic, offsets, "bench checkpoint_latency")
        t0 = time.monotonic()
        seen = {}
        while len(seen) < len(offsets):
            elapsed = time.monotonic() - t0
            if elapsed > deadline_s:
                return None, seen
            layout.check()
            if not assigned:
                # the topic appeared after the commit: everything in it is read
                assigned = ku.assign_all(layout.adm_b, cons, layout.cp_topic)
                if not assigned:
                    time.sleep(0.2)
                    continue
            for cp in ku.poll_decoded(cons, decode_checkpoint, FormatError):
                if cp.group == group and cp.topic == layout.remote and offsets.get(cp.partition) == cp.upstream_offset:
                    seen.setdefault(cp.partition, round(time.monotonic() - t0, 3))
        return max(seen.values()), seen
    finally:
        cons.close()


def run_rounds(layout, load, args, offsets, refresh_s):
    out = []
    for i in range(1, args.rounds + 1):
        pause = round(random.uniform(0, refresh_s), 2)
        time.sleep(pause)
        group = "%s%s-%s-%d-%s" % (GROUP_PREFIX, layout.name, load, i, uuid.uuid4().hex[:6])
        load1 = os.getloadavg()[0]
        seconds, parts = measure(layout, group, offsets, args.deadline)
        out.append(OrderedDict([("layout", layout.name), ("load", load), ("round", i), ("group", group),
                                ("status", "ok" if seconds is not None else "timeout"),
                                ("seconds", round(seconds, 3) if seconds is not None else None),
                                ("partitions_seconds", OrderedDict((str(p), s) for p, s in sorted(parts.items()))),
                                ("pause_before_s", pause), ("loadavg_1m", round(load1, 2))]))
        log("%s %s round %d: %s" % (layout.name, load, i,
                                    "%.2fs" % seconds if seconds is not None else
                                    "TIMEOUT after %ss (%d/%d partitions)" % (args.deadline, len(parts), len(offsets))))
    return out


def bench_layout(name, lab, args, intervals, flags, tmp):
    """Start one layout, fill, warm up, rounds idle then loaded; stop it. Returns its result."""
    t_start = time.time()
    log("%s: %s" % (name, LAYOUT_DOCS[name]))
    layout = None
    try:
        effective, settings = STARTERS[name](lab, intervals, flags)
        layout = Layout(name, lab, effective, settings)
        offsets = fill(layout)
        t_mirrored = time.time()
        log("%s: %d records of %s mirrored to B:%s %.1fs after the start"
            % (name, RECORDS, layout.topic, layout.remote, t_mirrored - t_start))
        warm_s, _parts = measure(layout, "%s%s-warmup" % (GROUP_PREFIX, name), offsets, SETUP_TIMEOUT)
        if warm_s is None:
            raise RuntimeError("%s: no checkpoint of the warm-up group in %s after %ss"
                               % (name, layout.cp_topic, SETUP_TIMEOUT))
        log("%s: warm-up group checkpointed in %.2fs" % (name, warm_s))
        refresh_s = float(intervals["refresh.groups.interval.seconds"])
        rounds = run_rounds(layout, "idle", args, offsets, refresh_s)
        hog = start_process(HOG, os.path.join(tmp, "hog-%s.log" % name))
        try:
            log("%s: CPU hog started (pid %d)" % (name, hog.pid))
            time.sleep(2)
            rounds += run_rounds(layout, "loaded", args, offsets, refresh_s)
        finally:
            stop_process(hog, 5)
        statuses = OrderedDict((c, mt.connector_status(layout.urls[0], c)) for c in layout.connectors)
        return OrderedDict([
            ("description", LAYOUT_DOCS[name]), ("source_topic", layout.topic), ("remote_topic", layout.remote),
            ("checkpoints_topic", layout.cp_topic), ("committed_offsets", offsets),
            ("start_to_mirrored_s", round(t_mirrored - t_start, 2)), ("warmup_s", round(warm_s, 3)),
            ("rounds", rounds), ("settings", settings), ("connector_status", statuses),
        ])
    finally:
        if layout is not None:
            layout.close()
        lab.stop_connect()
        lab.stop_mm2()


def summary(rounds, layout, load):
    values = [r["seconds"] for r in rounds if r["layout"] == layout and r["load"] == load and r["seconds"] is not None]
    timeouts = sum(1 for r in rounds if r["layout"] == layout and r["load"] == load and r["seconds"] is None)
    if not values:
        return OrderedDict([("n", 0), ("timeouts", timeouts), ("min", None), ("median", None), ("max", None)])
    return OrderedDict([("n", len(values)), ("timeouts", timeouts), ("min", min(values)),
                        ("median", round(statistics.median(values), 3)), ("max", max(values))])


def ratio(num, den):
    return round(num / den, 2) if num is not None and den else None


def fmt_ratio(value):
    return "n/a" if value is None else "%.1fx" % value


def report(results, kafka_version):
    rounds = [r for res in results.values() for r in res["rounds"]]
    stats = OrderedDict((name, OrderedDict((load, summary(rounds, name, load)) for load in LOADS)) for name in results)
    lines = ["", "checkpoint_latency: new group's commit on A -> its checkpoint on B for every partition; Kafka %s, "
                 "%d cores" % (kafka_version, os.cpu_count()),
             "%-12s %-7s %3s %8s %8s %8s %8s" % ("layout", "load", "n", "timeouts", "min s", "median s", "max s")]
    for name, by_load in stats.items():
        for load, s in by_load.items():
            cells = ["%8.2f" % s[k] if s[k] is not None else "%8s" % "n/a" for k in ("min", "median", "max")]
            lines.append("%-12s %-7s %3d %8d %s" % (name, load, s["n"], s["timeouts"], " ".join(cells)))
    ratios = OrderedDict()
    for name, by_load in stats.items():
        ratios["%s loaded/idle" % name] = ratio(by_load["loaded"]["median"], by_load["idle"]["median"])
        lines.append("checkpoint_latency: %s loaded/idle median = %s" % (name, fmt_ratio(ratios["%s loaded/idle" % name])))
    if "dedicated" in stats and "connect-eos" in stats:
        for load in LOADS:
            ratios["connect-eos/dedicated %s" % load] = ratio(stats["connect-eos"][load]["median"],
                                                              stats["dedicated"][load]["median"])
        lines.append("checkpoint_latency: connect-eos/dedicated median idle = %s, loaded = %s"
                     % (fmt_ratio(ratios["connect-eos/dedicated idle"]), fmt_ratio(ratios["connect-eos/dedicated loaded"])))
    print("\n".join(lines))
    return stats, ratios


def machine(load_start):
    java = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30, check=False)
    return OrderedDict([("cpus", os.cpu_count()), ("platform", platform.platform()),
                        ("java", java.stderr.splitlines()[0] if java.stderr else None),
                        ("loadavg_start", [round(x, 2) for x in load_start]),
                        ("loadavg_end", [round(x, 2) for x in os.getloadavg()])])


def bench(args, lab, tmp):
    t_begin = time.time()
    load_start = os.getloadavg()
    intervals, flags = dr_lab_settings()
    log("unpacking %s into %s" % (os.path.basename(lab.archive), tmp))
    lab.start_brokers()
    kafka_version = re.search(r"kafka_2\.13-(.*)$", lab.dist).group(1)
    results = OrderedDict()
    for name in STARTERS:
        results[name] = bench_layout(name, lab, args, intervals, flags, tmp)
    stats, ratios = report(results, kafka_version)
    doc = OrderedDict([
        ("bench", "checkpoint_latency"),
        ("date", datetime.datetime.now().astimezone().isoformat(timespec="seconds")),
        ("kafka_version", kafka_version), ("archive", os.path.basename(lab.archive)),
        ("rounds_per_state", args.rounds), ("deadline_s", args.deadline), ("partitions", PARTITIONS),
        ("records", RECORDS), ("intervals", intervals), ("flow_flags", flags),
        ("intervals_from", os.path.relpath(DR_LAB_VARS, REPO)),
        ("load", "one CPU hog: %s" % " ".join(HOG)),
        ("machine", machine(load_start)),
        ("summary", stats), ("ratios", ratios),
        ("layouts", results),
        ("elapsed_s", round(time.time() - t_begin, 1)),
    ])
    if not args.no_json:
        outdir = os.path.join(HERE, "results")
        os.makedirs(outdir, exist_ok=True)
        path = os.path.join(outdir, "checkpoint_latency-%s.json" % time.strftime("%Y%m%d-%H%M%S"))
        with open(path, "w") as fh:
            json.dump(doc, fh, indent=2)
            fh.write("\n")
        print("results: %s" % os.path.relpath(path, REPO))
    timeouts = sum(s["timeouts"] for by_load in stats.values() for s in by_load.values())
    return 2 if timeouts else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--rounds", type=int, default=5, help="new groups per layout and load state (default 5)")
    ap.add_argument("--deadline", type=int, default=180, help="seconds a round may take (default 180)")
    ap.add_argument("--no-json", action="store_true", help="write no results file")
    ap.add_argument("--keep-tmp", action="store_true", help="keep the temp dir (broker, MM2 and worker logs)")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    archive = find_archive()  # $KAFKA_ARCHIVE (scripts/env.sh), else .cache/kafka/kafka_2.13-*.tgz
    if not archive:
        ap.error("no lab archive in .cache/kafka; run lab/kafka-dist/assemble.sh")

    def on_signal(_signum, _frame):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    tmp = tempfile.mkdtemp(prefix="checkpoint_latency.")
    lab = Lab(archive, workdir=tmp)  # the harness's heap, as the DR lab's (-Xmx512m)
    rc = 1
    try:
        rc = bench(args, lab, tmp)
    except KeyboardInterrupt:
        log("interrupted")
        rc = 130
    except Exception as exc:  # noqa: BLE001 - report, then clean up
        log("ERROR: %s" % exc)
        traceback.print_exc()
    finally:
        lab.stop()
        if args.keep_tmp:
            log("kept %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
