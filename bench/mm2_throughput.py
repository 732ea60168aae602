"""MirrorMaker 2 replication rate vs a plain consume-then-produce client copy.

One run: two single-node KRaft brokers (A, B) from the lab archive on 127.0.0.1, topic
``bench`` on A filled with N records, then

* client copy  - bench/mm2_throughput.d/BenchTool.java (kafka-clients only) copies
                 A:bench -> B:copy.bench; rate from its first poll to the last ack;
* MirrorMaker 2 - connect-mirror-maker.sh (dedicated mode) with an mm2.properties
                 rendered by plugins/module_utils/mm2/model.py, once per --configs entry;
                 rate from the first record of A.bench (bench with the identity policy) seen on B to the last one
                 (end offsets polled every --poll-ms), startup delay reported apart; configs role-eos and
                 role-eos-interval with exactly-once, then the delay below, MirrorMaker still running;
* Connect      - configs connect / connect-eos / connect-eos-interval: the DR layout, MirrorSourceConnector and
                 MirrorCheckpointConnector on a distributed Connect worker next to B
                 (tests/live/harness.py Lab.start_connect, worker properties and connector
                 configs from plugins/module_utils/mm2/connect.py), identity policy, the
                 collection's defaults, created with PUT /connectors/<name>/config; A:dr-bench
                 (dr-bench-eos...) -> B:dr-bench (dr-bench-eos...), measured like dedicated mode;
                 then, with the connectors still running, the delay until a read_committed reader on
                 B sees a record written to A (records written one every 50 ms, the delay from
                 each record's timestamp, which MirrorMaker keeps, to its arrival): p50 and p99;
* exactly-once - each layout's EOS configs against its EOS-off config (role, connect) in the same run.

Prints a table and writes bench/results/mm2_throughput-<date>.json.
Needs: the project's venv (PyYAML; kafka-python through tests/live/harness.py), java + javac 17, the lab
archive (lab/kafka-dist/assemble.sh).

  bench/mm2_throughput                      # 200000 x 1 KB, the DEFAULT_CONFIGS below
  bench/mm2_throughput --quick              # 20000 records, smoke test
  bench/mm2_throughput --configs stock,tuned-cluster,tuned-global --records 50000
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
# Brokers and processes are started the same way as for the live-broker tests (tests/live).
sys.path.insert(0, os.path.join(REPO, "tests", "live"))
from harness import (HARNESS_GLOBALS, Lab, connect_rest, find_archive, format_properties, free_ports,  # noqa: E402 pylint: disable=wrong-import-position
                     internal_rest_globals, load_connect, load_model, load_tuning, log, put_connector, start_process,
                     stop_process as stop)
TOOL_SRC = os.path.join(HERE, "mm2_throughput.d", "BenchTool.java")
ROLE_DEFAULTS = os.path.join(REPO, "roles", "mirrormaker", "defaults", "main.yml")
CONNECT_ROLE_DEFAULTS = os.path.join(REPO, "roles", "connect", "defaults", "main.yml")

TOPIC = "bench"
COPY_TOPIC = "copy.bench"
THREADS_COPY_TOPIC = "copy-threads.bench"
CONNECT_PRODUCER_COPY_TOPIC = "copy-threads-cp.bench"
PERF_TOPIC = "perf.bench"
CEILING_TOPICS = (COPY_TOPIC, THREADS_COPY_TOPIC, CONNECT_PRODUCER_COPY_TOPIC, PERF_TOPIC)

# The client tuning under test; the client copy uses the same producer settings and
# the same raised consumer fetch settings, so only the copy machinery differs.
PRODUCER_TUNING = OrderedDict([("batch.size", "1048576"), ("linger.ms", "20"), ("compression.type", "lz4")])
CONSUMER_TUNING = OrderedDict([("fetch.max.bytes", "52428800"), ("max.partition.fetch.bytes", "10485760"),
                               ("max.poll.records", "5000")])
# The Connect worker's task producer is created with enable.idempotence=false,
# max.in.flight.requests.per.connection=1 (Worker.baseProducerConfigs); a plain client has
# idempotence on and 5 requests in flight, which keeps per-partition order just the same.
INFLIGHT = OrderedDict([("enable.idempotence", "true"), ("max.in.flight.requests.per.connection", "5")])

# MirrorSourceTask sends an offset sync each time a partition's translated offset would lag
# offset.lag.max (100) records behind (OffsetSyncWriter.PartitionState.update), to the source cluster
# in dedicated mode and to the target in the Connect layout (offset-syncs.topic.location=target):
# the lever configs space them a hundred times wider.
SYNC_LAG = 10000

CONFIG_DOCS = OrderedDict([
    ("stock", "MM2 defaults (tasks.max=1, Connect worker producer, default consumer)"),
    ("role", "the mirrormaker role's defaults (mirrormaker_default_properties, mirrormaker_flow_default_properties "
             "and mirrormaker_worker_properties read from roles/mirrormaker/defaults/main.yml)"),
    ("role-inflight", "role + A->B.producer.override.enable.idempotence=true, max.in.flight.requests.per.connection=5 "
                      "(the client copies' producer: Connect's task producer has idempotence off, 1 in flight)"),
    ("role-one-herder", "role + B->A.emit.heartbeats.enabled=false: one herder (A->B) instead of two; by default "
                        "MirrorMaker also runs B->A to emit heartbeats into A (MirrorMakerConfig.clusterPairs)"),
    ("role-identity", "role + the flow's replication_policy: identity (the Connect layout's policy): A's bench "
                      "is written to B as bench, not A.bench"),
    ("role-sync-lag", "role + A->B.offset.lag.max=%d instead of 100: a hundredth of the offset syncs "
                      "(MirrorSourceTask -> OffsetSyncWriter)" % SYNC_LAG),
    ("role-eos", "role with exactly-once as the collection derives it in dedicated mode (mirrormaker_exactly_once: "
                 "true): B.exactly.once.source.support=enabled, the flow's default transaction.boundary=poll, and "
                 "A.consumer.isolation.level=read_committed as the flow model's warning asks"),
    ("role-eos-interval", "role-eos with the flow's transaction_boundary: interval (one transaction a second, "
                          "A->B.transaction.boundary.interval.ms=1000)"),
    ("tasks", "tasks.max = partitions, no client overrides"),
    ("tuned", "tasks.max = partitions + per-flow A->B.producer.override.* and A->B.consumer.*"),
    ("tuned-inflight", "tuned + A->B.producer.override.enable.idempotence=true, max.in.flight=5"),
    ("tuned-cluster", "tuned, overrides as per-cluster B.producer.* and A.consumer.* instead"),
    ("tuned-global", "tuned, overrides as global producer.* / consumer.* keys (expected NOT to reach clients)"),
    ("tuned-inflight-sl", "tuned-inflight + plugin.discovery=service_load (global and per cluster: faster start)"),
    ("connect", "DR layout on distributed Connect: one connect-distributed.sh worker next to B "
                "(mm2_connect.worker_properties + connect_worker_default_properties), MirrorSourceConnector and "
                "MirrorCheckpointConnector from mm2_connect.connectors, identity policy, the connect role's defaults "
                "(roles/connect/defaults/main.yml), EOS off"),
    ("connect-eos", "connect with exactly-once as the collection derives it: worker exactly.once.source.support="
                    "enabled; source connector exactly.once.support=required, consumer.isolation.level=read_committed; "
                    "the flow's default transaction.boundary=poll (one transaction per batch a task returns)"),
    ("connect-eos-interval", "connect-eos with the flow's transaction_boundary: interval (one transaction a second, "
                             "transaction.boundary.interval.ms=1000)"),
    ("connect-inflight", "connect + producer.override.enable.idempotence=true, max.in.flight.requests.per.connection=5 "
                         "in the flow (the client copies' producer)"),
    ("connect-sync-lag", "connect + offset.lag.max=%d in the flow instead of 100: a hundredth of the offset syncs"
                         % SYNC_LAG),
    ("connect-tasks-cores", "connect with tasks.max = this machine's CPU cores, the Red Hat guide's rule for a "
                            "one-worker Connect cluster (\"Aim for as many tasks as CPU cores in the Kafka Connect "
                            "clusters\")"),
    ("connect-tasks-30", "connect with tasks.max = 30, the value of the Red Hat guide's examples"),
])
DEFAULT_CONFIGS = "stock,role,tuned-inflight,tuned-inflight-sl,connect,connect-eos,connect-eos-interval"
# The configuration the role ships; its ratio has a line of its own.
ROLE_DEFAULT = "role"
# Connect layout configs: name -> (exactly_once, source topic, tasks.max or None for the role's
# default, the flow's own fields). Identity replication writes the same name on B, so each has a topic
# of its own that no other config writes on B.
CONNECT_CONFIGS = OrderedDict([("connect", (False, "dr-bench", None, {})),
                               ("connect-eos", (True, "dr-bench-eos", None, {})),
                               ("connect-eos-interval", (True, "dr-bench-eos-iv", None,
                                                         {"transaction_boundary": "interval"})),
                               ("connect-inflight", (False, "dr-bench-if", None, {"properties": OrderedDict(
                                   ("producer.override." + k, v) for k, v in INFLIGHT.items())})),
                               ("connect-sync-lag", (False, "dr-bench-sl", None, {"properties": OrderedDict(
                                   [("offset.lag.max", str(SYNC_LAG))])})),
                               ("connect-tasks-cores", (False, "dr-bench-tc", os.cpu_count(), {})),
                               ("connect-tasks-30", (False, "dr-bench-t30", 30, {}))])
# The delay until visible: records written to A this far apart, this many.
VISIBLE_RECORDS = 200
VISIBLE_PACE_S = 0.05
# What dedicated MirrorMaker and the Connect layout do besides the copy, one lever at a time: each
# lever config against the config it changes, in the same run (rate and the machine's CPU per record).
LEVERS = OrderedDict([("role-one-herder", "role"), ("role-identity", "role"), ("role-sync-lag", "role"),
                      ("connect-sync-lag", "connect")])
# The dedicated-mode config the Connect layout is compared with (first one run): the role's defaults.
DEDICATED_REFERENCE = ("role", "tuned")
# Dedicated exactly-once configs: name -> the flow's own fields.
DEDICATED_EOS = OrderedDict([("role-eos", {}), ("role-eos-interval", {"transaction_boundary": "interval"})])
# Dedicated configs made of the role's shipped defaults.
ROLE_BASED = ("role", "role-inflight", "role-one-herder", "role-identity", "role-sync-lag") + tuple(DEDICATED_EOS)
# Dedicated configs whose run ends with the delay until a read_committed reader sees a record (every
# Connect config's does): exactly-once and what it is held against.
DEDICATED_VISIBLE = (ROLE_DEFAULT,) + tuple(DEDICATED_EOS)
# Each layout's exactly-once configs: (layout, EOS off, EOS per poll, EOS per interval).
EOS_SETS = (("dedicated", ROLE_DEFAULT, "role-eos", "role-eos-interval"),
            ("Connect", "connect", "connect-eos", "connect-eos-interval"))
# Goals reported against (printed, never enforced): DR layout with EOS off >= 0.8x the client
# copy; EOS costs at most 30 % of the EOS-off Connect rate; each layout's defaults >= 0.9x the
# client copy with as many threads as MirrorMaker tasks.
GOAL_CONNECT_RATIO = 0.8
GOAL_EOS_COST = 0.30
GOAL_THREADS_RATIO = 0.9
# The collection's defaults in each layout, and each with the copies' producer, held against the fair ceilings.
LAYOUT_DEFAULTS = (("dedicated layout, defaults", ROLE_DEFAULT),
                   ("dedicated layout, defaults + 5 in flight", "role-inflight"),
                   ("Connect layout, defaults", "connect"), ("Connect layout, defaults + 5 in flight", "connect-inflight"))
# Connect's task producer (Worker.baseProducerConfigs) where it differs from a client's defaults.
CONNECT_PRODUCER = OrderedDict([("enable.idempotence", "false"), ("max.in.flight.requests.per.connection", "1")])
# EOS: once the target is reached, the watcher goes on until the end offsets stay put this long
# (transaction markers take offsets too; the last change is the last commit).
EOS_SETTLE_MS = 3000

PROCS = []  # every Popen this script started (each in its own session/process group)


def _yaml(path):
    try:
        import yaml  # the project's venv has PyYAML (ansible-core depends on it)
    except ImportError:
        raise RuntimeError("configs 'role' and 'connect*' need PyYAML: run under the project's venv (. scripts/env.sh)")
    with open(path) as fh:
        return yaml.safe_load(fh)


def _role_yaml(path):
    """A role's defaults file with the collection's shared settings resolved (mm2_defaults lookup)."""
    tuning = load_tuning()
    return {key: tuning.role_default(value) for key, value in _yaml(path).items()}


def role_defaults():
    """The mirrormaker role's shipped defaults, so the bench follows the role when it changes:
    (mirrormaker_default_properties, mirrormaker_flow_default_properties, mirrormaker_worker_properties)."""
    data = _role_yaml(ROLE_DEFAULTS)
    return (data["mirrormaker_default_properties"] or {}, data["mirrormaker_flow_default_properties"] or {},
            data.get("mirrormaker_worker_properties") or {})


def connect_role_defaults():
    """The connect role's shipped defaults (connector keys, flow defaults, worker keys on top of the
    role's own), as the role combines them when no inventory variable is set."""
    data = _role_yaml(CONNECT_ROLE_DEFAULTS)
    return (data["connect_default_properties"] or {}, data["connect_flow_default_properties"] or {},
            data.get("connect_worker_default_properties") or {})


def start(cmd, logfile, env=None):
    proc = start_process(cmd, logfile, env)
    PROCS.append(proc)
    return proc


def run(cmd, timeout, logfile=None, env=None):
    """Run to completion (own process group, killed on timeout); return stdout text."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env=env, start_new_session=True)
    PROCS.append(proc)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(proc, 5)
        raise RuntimeError("timed out after %ss: %s" % (timeout, " ".join(cmd[:4])))
    if logfile:
        with open(logfile, "ab") as fh:
            fh.write(out + err)
    if proc.returncode != 0:
        raise RuntimeError("failed (%d): %s\n%s" % (proc.returncode, " ".join(cmd[:6]),
                                                    (err or out).decode(errors="replace")[-3000:]))
    return out.decode()


def machine_jiffies():
    """(busy, total) CPU jiffies of the whole machine since boot (/proc/stat)."""
    with open("/proc/stat") as fh:
        fields = [int(x) for x in fh.readline().split()[1:9]]
    user, nice, system, idle, iowait, irq, softirq, steal = fields
    busy = user + nice + system + irq + softirq + steal
    return busy, busy + idle + iowait


class Watcher(object):
    """BenchTool watch in the background: (epoch_ms, sum of end offsets, machine jiffies) samples; the
    jiffies are read as each sample arrives, so CPU and records come from the same window."""

    def __init__(self, java, bootstrap, topic, target, interval_ms, timeout_s, logfile, settle_ms=0):
        self.samples = []
        extra = ["read_committed", str(settle_ms)] if settle_ms else []
        self.proc = subprocess.Popen(java + ["watch", bootstrap, topic, str(target), str(interval_ms), str(timeout_s)]
                                     + extra,
                                     stdout=subprocess.PIPE, stderr=open(logfile, "ab"), stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        PROCS.append(self.proc)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            parts = line.decode().split()
            if len(parts) == 2 and parts[0].isdigit():
                self.samples.append((int(parts[0]) / 1000.0, int(parts[1]), machine_jiffies()))

    def wait(self, timeout):
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            stop(self.proc, 5)
            rc = -1
        self.thread.join(5)
        return rc

    def rate(self, target):
        """(first_seen_epoch, records/s between the first non-zero sample and the target)."""
        seen = [(t, n) for t, n, _cpu in self.samples if n > 0]
        if not seen or seen[-1][1] < target:
            return (seen[0][0] if seen else None), None
        (t1, n1), (t2, n2) = seen[0], seen[-1]
        if t2 <= t1 or n2 <= n1:
            return t1, None
        return t1, (n2 - n1) / (t2 - t1)

    def cpu(self):
        """The whole machine's CPU over the window rate() measures (brokers, the copier and the watcher
        included): busy cores on average and CPU milliseconds per 1000 records."""
        seen = [(n, cpu) for _t, n, cpu in self.samples if n > 0]
        if len(seen) < 2 or seen[-1][0] <= seen[0][0] or seen[-1][1][1] <= seen[0][1][1]:
            return None
        (n1, (b1, t1)), (n2, (b2, t2)) = seen[0], seen[-1]
        cpu_s = (b2 - b1) / os.sysconf("SC_CLK_TCK")
        return OrderedDict([("busy_cores", round(os.cpu_count() * (b2 - b1) / (t2 - t1), 2)),
                            ("cpu_ms_per_1000_records", round(1e6 * cpu_s / (n2 - n1), 1))])


def mm2_inputs(name, a_bs, b_bs, partitions, rest_port):
    """(clusters, flows, globals, options) for one configuration, in the role's variable shapes."""
    clusters = [{"alias": "A", "bootstrap_servers": [a_bs], "broker_count": 1, "properties": {}},
                {"alias": "B", "bootstrap_servers": [b_bs], "broker_count": 1, "properties": {}}]
    flow = {"source": "A", "target": "B", "topics": [TOPIC], "properties": OrderedDict()}
    flows = [flow]
    options = {"exactly_once": False, "internal_rest": True}
    glob = OrderedDict()
    if name in ROLE_BASED:
        role_globals, options["flow_defaults"], options["worker_defaults"] = role_defaults()
        glob.update(role_globals)
    glob.update(HARNESS_GLOBALS)
    glob.update(internal_rest_globals(rest_port))
    if name not in ("stock",) + ROLE_BASED:
        flow["tasks_max"] = partitions
    if name in ("tuned", "tuned-inflight", "tuned-inflight-sl"):
        # per flow: A->B.producer.override.* (Connect's connector-level client override, policy
        # All by default) reaches the worker's task producers; A->B.consumer.* reaches
        # MirrorSourceTask's replication consumer (MirrorSourceConfig.sourceConsumerConfig)
        for k, v in PRODUCER_TUNING.items():
            flow["properties"]["producer.override." + k] = v
        for k, v in CONSUMER_TUNING.items():
            flow["properties"]["consumer." + k] = v
    if name in ("tuned-inflight", "tuned-inflight-sl", "role-inflight"):
        for k, v in INFLIGHT.items():
            flow["properties"]["producer.override." + k] = v
    if name == "role-one-herder":
        flows.append({"source": "B", "target": "A", "enabled": False, "emit_heartbeats": False})
    if name == "role-identity":
        flow["replication_policy"] = "identity"
    if name == "role-sync-lag":
        flow["properties"]["offset.lag.max"] = str(SYNC_LAG)
    if name in DEDICATED_EOS:
        options["exactly_once"] = True
        flow.update(DEDICATED_EOS[name])
        clusters[0]["properties"]["consumer.isolation.level"] = "read_committed"
    if name == "tuned-inflight-sl":
        # MirrorMaker scans the classpath for plugins once, then each herder (worker config =
        # the target alias' keys) again; every Apache jar has ServiceLoader manifests.
        glob["plugin.discovery"] = "service_load"
        for cluster in clusters:
            cluster["properties"]["plugin.discovery"] = "service_load"
    if name == "tuned-cluster":
        for k, v in PRODUCER_TUNING.items():
            clusters[1]["properties"]["producer." + k] = v
        for k, v in CONSUMER_TUNING.items():
            clusters[0]["properties"]["consumer." + k] = v
    if name == "tuned-global":
        for k, v in PRODUCER_TUNING.items():
            glob["producer." + k] = v
        for k, v in CONSUMER_TUNING.items():
            glob["consumer." + k] = v
    return clusters, flows, glob, options


def target_topic(plan):
    """The name the flow A->B writes A's bench to on B, as the collection's flow model derives it."""
    flow = next(f for f in plan.effective_flows() if (f["source"], f["target"]) == ("A", "B"))
    return flow["remote_topic_prefix"] + TOPIC


def cpu_per_record(res):
    """A run's machine CPU ms per 1000 records, None where it was not measured."""
    return (res.get("machine_cpu") or {}).get("cpu_ms_per_1000_records")


def round_entry(res):
    """What a config's run in one round keeps beside the median: its place, rate, completion, sync
    time and CPU per record (the counted rounds and the warm-up round alike)."""
    return OrderedDict([("place", res.get("place_in_round")), ("records_per_s", res["records_per_s"]),
                        ("completed", res.get("completed", True)),
                        ("sync_before_s", res.get("sync_before_s")),
                        ("cpu_ms_per_1000_records", cpu_per_record(res))])


def connect_inputs(name, a_bs, b_bs):
    """(clusters, flows, globals, options) of a Connect layout config: the collection's defaults,
    the DR layout's identity policy, this config's own source topic."""
    exactly_once, topic, tasks_max, fields = CONNECT_CONFIGS[name]
    role_globals, flow_defaults, _worker = connect_role_defaults()
    if tasks_max is not None:
        flow_defaults = dict(flow_defaults, **{"tasks.max": tasks_max})
    clusters = [{"alias": "A", "bootstrap_servers": [a_bs], "broker_count": 1, "properties": {}},
                {"alias": "B", "bootstrap_servers": [b_bs], "broker_count": 1, "properties": {}}]
    flow = dict({"source": "A", "target": "B", "topics": [topic], "replication_policy": "identity",
                 "properties": OrderedDict()}, **fields)
    options = {"exactly_once": exactly_once, "internal_rest": True, "flow_defaults": flow_defaults}
    return clusters, [flow], OrderedDict(role_globals), options


def visibility(a_bs, b_bs, source, target, count, pace_s, timeout):
    """How long after its write to ``source`` on A a read_committed reader of ``target`` on B sees a
    record: ``count`` records written ``pace_s`` apart (acks=all, one at a time), each record's delay from
    its timestamp (the producer's CreateTime, which MirrorMaker keeps) to its arrival at the reader;
    seconds, p50 and p99."""
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=b_bs, isolation_level="read_committed", enable_auto_commit=False,
                             fetch_max_wait_ms=100)
    producer = KafkaProducer(bootstrap_servers=a_bs, acks="all", linger_ms=0)
    # its own tag each time: a later round copies the records an earlier one wrote here all over again
    tag = b"visible-%d-%d-" % (os.getpid(), time.time_ns())
    try:
        parts = [TopicPartition(target, p) for p in sorted(consumer.partitions_for_topic(target) or ())]
        consumer.assign(parts)
        consumer.seek_to_end()
        for part in parts:
            consumer.position(part)  # the end now, before the first write

        def write():
            for i in range(count):
                producer.send(source, value=tag + b"%d" % i).get(30)
                time.sleep(pace_s)
        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        delays = []
        deadline = time.time() + timeout
        while len(delays) < count and time.time() < deadline:
            for records in consumer.poll(timeout_ms=200).values():
                now_ms = time.time() * 1000
                delays.extend((now_ms - r.timestamp) / 1000.0 for r in records if r.value.startswith(tag))
        writer.join(30)
    finally:
        producer.close()
        consumer.close()
    delays.sort()

    def pct(q):
        return round(delays[min(len(delays) - 1, int(q * len(delays)))], 3) if delays else None
    return OrderedDict([("records", len(delays)), ("p50_s", pct(0.5)), ("p99_s", pct(0.99)),
                        ("max_s", round(delays[-1], 3) if delays else None)])


def measure_visible(name, a_bs, b_bs, source, target, args):
    """``visibility`` of a running config, logged."""
    visible = visibility(a_bs, b_bs, source, target, VISIBLE_RECORDS, VISIBLE_PACE_S, args.timeout)
    log("%s: a record written to A is seen by a read_committed reader on B after p50 %ss, p99 %ss (%d records)"
        % (name, visible["p50_s"], visible["p99_s"], visible["records"]))
    return visible


def source_records(bootstrap, topic):
    """The records ``topic`` holds (the sum of its end offsets: nothing writes transactions to A)."""
    from kafka import KafkaConsumer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        parts = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        return sum(consumer.end_offsets(parts).values())
    finally:
        consumer.close()


def committed_rate(name, java, a_bs, b_bs, source, target, rate, args):
    """An exactly-once run's rate in records: transaction markers take offsets on B, so its records are
    counted (not timed) and the rate scaled by records / end offsets. Returns (rate, the count)."""
    counted = json.loads(run(java + ["count", b_bs, target, str(args.timeout)], args.timeout + 60)
                         .strip().splitlines()[-1])
    if counted["end_offsets"]:
        rate = rate * counted["records"] / counted["end_offsets"]
    written = source_records(a_bs, source)
    log("%s: %d committed records on B:%s (%s), end offsets %d (transaction markers: %d)"
        % (name, counted["records"], target, "exactly the source's" if counted["records"] == written
           else "source has %d" % written, counted["end_offsets"], counted["end_offsets"] - counted["records"]))
    return rate, counted


def connector_status(url, name):
    try:
        return connect_rest("GET", "%s/connectors/%s/status" % (url, name), timeout=10)[1]
    except Exception as exc:  # noqa: BLE001 - reported as it is
        return {"error": str(exc)}


def failed_tasks(status):
    """The FAILED connector/tasks of a status document, with the first line of their traces."""
    out = []
    for part in [status.get("connector") or {}] + list(status.get("tasks") or []):
        if part.get("state") == "FAILED":
            out.append("%s %s: %s" % (status.get("name"), part.get("id", "connector"),
                                      (part.get("trace") or "").strip().splitlines()[:1]))
    return out


CHECK_KEYS = list(PRODUCER_TUNING) + list(INFLIGHT) + ["acks"] + list(CONSUMER_TUNING) + ["isolation.level"]


def client_dumps(logfile):
    """Parse 'ProducerConfig values:' / 'ConsumerConfig values:' dumps from a Kafka log."""
    dumps = []
    cur = None
    with open(logfile, errors="replace") as fh:
        for line in fh:
            m = re.search(r"(ProducerConfig|ConsumerConfig) values:\s*$", line)
            if m:
                cur = {"kind": m.group(1), "values": {}}
                dumps.append(cur)
                continue
            if cur is not None:
                kv = re.match(r"^\t([a-z0-9.\-]+) = ?(.*?)\s*$", line)
                if kv:
                    cur["values"][kv.group(1)] = kv.group(2)
                else:
                    cur = None
    return dumps


def replication_clients(logfile):
    """Effective settings of MirrorSourceTask's consumers and the Connect task producers."""
    out = {"producers": [], "consumers": []}
    for d in client_dumps(logfile):
        cid = d["values"].get("client.id", "")
        # dedicated: connector-producer-MirrorSourceConnector-N; Connect: connector-producer-A-to-B-MirrorSourceConnector-N
        if d["kind"] == "ProducerConfig" and cid.startswith("connector-producer-") and "MirrorSourceConnector" in cid:
            out["producers"].append(cid)
            key = "producer"
        elif d["kind"] == "ConsumerConfig" and "MirrorSourceConnector" in cid and "replication" in cid:
            out["consumers"].append(cid)
            key = "consumer"
        else:
            continue
        vals = dict((k, d["values"].get(k)) for k in CHECK_KEYS if k in d["values"])
        if d["kind"] == "ProducerConfig":
            vals["transactional.id"] = "null" if d["values"].get("transactional.id") in (None, "null") else "set"
        out.setdefault(key + "_values", [])
        if vals not in out[key + "_values"]:
            out[key + "_values"].append(vals)
    return out


def watched(java, b_bs, topic, args, tmp, cmd):
    """Run ``cmd`` to completion while a watcher samples B:topic's end offsets: (its stdout, the rate the
    watcher saw, the machine's CPU in that window), measured the way MirrorMaker's are."""
    w = Watcher(java, b_bs, topic, args.records, args.poll_ms, args.timeout, os.path.join(tmp, "watch-%s.log" % topic))
    time.sleep(2)  # watcher JVM up before the writes start
    out = run(cmd, args.timeout + 60, logfile=os.path.join(tmp, "%s.log" % topic))
    w.wait(60)
    return out, w.rate(args.records)[1], w.cpu()


def client_copy(java, a_bs, b_bs, topic, threads, args, tmp, producer=None):
    """BenchTool copy A:bench -> B:topic with ``threads`` threads, the tuned clients (``producer``: settings
    on top); rate from the first poll to the last ack, and the same rate the way MirrorMaker's is measured
    (end offsets watched on B)."""
    producer = OrderedDict(PRODUCER_TUNING, **(producer or {}))
    log("client copy A:%s -> B:%s, %d thread(s)" % (TOPIC, topic, threads))
    copy_args = (["producer.%s=%s" % kv for kv in producer.items()]
                 + ["consumer.%s=%s" % kv for kv in CONSUMER_TUNING.items()])
    out, watch_rate, cpu = watched(java, b_bs, topic, args, tmp,
                                   java + ["copy", a_bs, b_bs, TOPIC, topic, str(args.timeout), str(threads)] + copy_args)
    copy = json.loads(out.strip().splitlines()[-1])
    rate = copy["total"] / copy["seconds_first_poll_to_last_ack"]
    log("client copy, %d thread(s): %d records/s (watcher %s)" % (copy["threads"], rate, watch_rate and round(watch_rate)))
    return OrderedDict([
        ("records_per_s", round(rate)), ("mb_per_s", round(rate * args.record_size / 1e6, 2)),
        ("seconds", round(copy["seconds_first_poll_to_last_ack"], 3)),
        ("records_per_s_watcher", round(watch_rate) if watch_rate else None),
        ("machine_cpu", cpu),
        ("threads", copy["threads"]), ("target_topic", topic),
        ("detail", copy),
        ("settings", OrderedDict([("producer", dict(producer)), ("consumer", dict(CONSUMER_TUNING)),
                                  ("note", "producer otherwise default (acks=all, idempotence on, 5 in flight); "
                                           "consumer: manual assignment, partitions dealt round-robin over the "
                                           "threads, a consumer and a producer per thread")])),
    ])


def perf_test(java, bin_, b_bs, args, tmp):
    """What one producer with the copies' producer tuning writes into B (kafka-producer-perf-test.sh,
    records of the source's size and kind): the target's physical ceiling for this machine."""
    log("kafka-producer-perf-test -> B:%s" % PERF_TOPIC)
    out, watch_rate, cpu = watched(java, b_bs, PERF_TOPIC, args, tmp,
                                   [os.path.join(bin_, "kafka-producer-perf-test.sh"), "--topic", PERF_TOPIC,
                                    "--num-records", str(args.records), "--record-size", str(args.record_size),
                                    "--throughput", "-1", "--producer-props", "bootstrap.servers=" + b_bs]
                                   + ["%s=%s" % kv for kv in PRODUCER_TUNING.items()])
    summary = out.strip().splitlines()[-1]
    m = re.match(r"(\d+) records sent, ([\d.]+) records/sec", summary)
    if not m:
        raise RuntimeError("kafka-producer-perf-test: no summary line in %r" % summary)
    rate = float(m.group(2))
    log("kafka-producer-perf-test: %s" % summary)
    return OrderedDict([("records_per_s", round(rate)), ("mb_per_s", round(rate * args.record_size / 1e6, 2)),
                        ("records_per_s_watcher", round(watch_rate) if watch_rate else None),
                        ("machine_cpu", cpu),
                        ("summary", summary), ("target_topic", PERF_TOPIC),
                        ("settings", OrderedDict([("producer", dict(PRODUCER_TUNING)),
                                                  ("note", "one producer, otherwise default: acks=all, "
                                                           "idempotence on, 5 in flight")]))])


def run_connect(name, args, lab, java, a_bs, b_bs, tmp):
    """One Connect layout config: worker(s) up, connectors PUT, watch B, connectors deleted, worker
    stopped. Returns the result fields (rates are relative to nothing yet)."""
    exactly_once, topic, _tasks_max, _fields = CONNECT_CONFIGS[name]
    mm2_model, mm2_connect = load_connect()
    clusters, flows, glob, options = connect_inputs(name, a_bs, b_bs)
    model = mm2_model.load(clusters, flows, glob, options)
    if model.errors:
        raise RuntimeError("%s: the flow model refuses the inputs: %s" % (name, model.errors))
    configs = mm2_connect.connectors(model, "A", "B")
    refusals = mm2_connect.check_connectors(configs, exactly_once, "connector configs", "exactly_once")
    if refusals:
        raise RuntimeError("%s: %s" % (name, refusals))
    worker_extra = connect_role_defaults()[2]
    d = os.path.join(tmp, name)
    os.makedirs(d)
    with open(os.path.join(d, "connectors.json"), "w") as fh:
        json.dump(configs, fh, indent=2)
    log("%s: %s" % (name, CONFIG_DOCS[name]))
    # identity policy: the same topic name on B
    w = Watcher(java, b_bs, topic, args.records, args.poll_ms, args.timeout, os.path.join(d, "watch.log"),
                settle_ms=EOS_SETTLE_MS if exactly_once else 0)
    time.sleep(2)
    t_worker = time.time()
    try:
        urls = lab.start_connect("A", "B", workers=1, exactly_once=exactly_once, extra=worker_extra)
    finally:
        PROCS.extend(wk["proc"] for wk in lab.workers if wk["proc"] not in PROCS)
    worker = lab.workers[-1]
    url = urls[0]
    t_start = time.time()
    log("%s: worker up in %.1fs; PUT %s" % (name, t_start - t_worker, ", ".join(configs)))
    for cname, config in configs.items():
        put_connector(url, cname, config)
    # wait for the watcher; give up early if Connect reports a failed connector or task
    deadline = time.time() + args.timeout + 30
    failures = []
    next_check = 0
    while w.proc.poll() is None and time.time() < deadline and not failures:
        time.sleep(0.5)
        if time.time() >= next_check:
            next_check = time.time() + 3
            for cname in configs:
                failures += failed_tasks(connector_status(url, cname))
    if failures:
        log("%s: Connect reports %s" % (name, failures))
    wrc = w.wait(0 if failures else max(1, deadline - time.time()))
    visible = None
    if wrc == 0 and not failures:
        visible = measure_visible(name, a_bs, b_bs, topic, topic, args)
    statuses = OrderedDict((cname, connector_status(url, cname)) for cname in configs)
    worker_alive = worker["proc"].poll() is None
    for cname in configs:
        try:
            connect_rest("DELETE", "%s/connectors/%s" % (url, cname))
        except Exception as exc:  # noqa: BLE001 - the worker stops next anyway
            log("DELETE %s: %s" % (cname, exc))
    lab.stop_connect()
    first_seen, rate = w.rate(args.records)
    counted = None
    if exactly_once and rate:
        rate, counted = committed_rate(name, java, a_bs, b_bs, topic, topic, rate, args)
    # Lab.start_connect names a worker's directory connect-<n> by the workers running now, so the
    # next config's worker would get the same one: move it into this config's directory
    wdir = os.path.join(d, "worker")
    os.rename(worker["dir"], wdir)
    clients = replication_clients(os.path.join(wdir, os.path.basename(worker["out"])))
    return OrderedDict([
        ("records_per_s", round(rate) if rate else None),
        ("mb_per_s", round(rate * args.record_size / 1e6, 2) if rate else None),
        ("startup_delay_s", round(first_seen - t_start, 2) if first_seen else None),
        ("machine_cpu", w.cpu()),
        ("worker_start_s", round(t_start - t_worker, 2)),
        ("seconds_first_to_last", round(w.samples[-1][0] - first_seen, 3) if rate else None),
        ("completed", wrc == 0 and not failures), ("worker_alive_at_end", worker_alive),
        ("samples", len(w.samples)),
        ("records_on_target", counted),
        ("visible", visible),
        ("failures", failures),
        ("description", CONFIG_DOCS[name]),
        ("source_topic", topic), ("target_topic", topic),
        ("model_warnings", list(model.warnings)),
        ("kafka_heap_opts", lab.heap),
        ("worker_properties", OrderedDict(worker["properties"])),
        ("connectors", configs),
        ("connector_status", statuses),
        ("effective_clients", clients),
    ])


def set_delete_delay(bin_, bootstrap, delay_ms, tmp):
    """Set the cluster-wide default of how long a broker keeps a deleted log's files (a dynamic broker
    config; 60 s by default): each round deletes the last round's ceiling topics, gigabytes on B."""
    tool, key = os.path.join(bin_, "kafka-configs.sh"), "log.segment.delete.delay.ms"
    logfile = os.path.join(tmp, "configs.log")
    run([tool, "--bootstrap-server", bootstrap, "--alter", "--entity-type", "brokers", "--entity-default",
         "--add-config", "%s=%d" % (key, delay_ms)], 120, logfile=logfile)
    shown = run([tool, "--bootstrap-server", bootstrap, "--describe", "--entity-type", "brokers", "--entity-default"],
                120, logfile=logfile)
    if "%s=%d" % (key, delay_ms) not in shown:
        raise RuntimeError("%s: %s=%d not in the brokers' default config: %s" % (bootstrap, key, delay_ms, shown))
    log("%s: %s=%d" % (bootstrap, key, delay_ms))


def flush(args):
    """With --sync, the seconds the kernel took to write out the dirty pages the runs before left (the
    copies write gigabytes into B): that writeback then no longer competes with the next timed run."""
    if not args.sync:
        return None
    t0 = time.time()
    os.sync()
    seconds = round(time.time() - t0, 2)
    log("sync before the next run: %.2fs" % seconds)
    return seconds


def run_round(order, copy_threads, mirrormaker_heap, sources, rest, java, bin_, lab, a_bs, b_bs, model, args, tmp):
    """One round: the ceilings into fresh topics on B, then each MirrorMaker config of ``order`` alone.
    Returns name -> result fields, rates not yet relative to anything, each with its place in the round."""
    out = OrderedDict()
    run(java + ["reset", b_bs, ""], 120)
    for topic in CEILING_TOPICS:
        run(java + ["create", b_bs, topic, str(args.partitions)], 90)
    # the ceilings: client copies with one thread and with as many as MirrorMaker runs tasks,
    # and what one producer with the same tuning writes into B
    ceilings = [
        ("client-copy", lambda: client_copy(java, a_bs, b_bs, COPY_TOPIC, 1, args, tmp)),
        ("client-copy-threads", lambda: client_copy(java, a_bs, b_bs, THREADS_COPY_TOPIC, copy_threads, args, tmp)),
        # the same with the producer settings Connect gives a task: what of the gap is the producer's
        ("client-copy-threads-cp", lambda: client_copy(java, a_bs, b_bs, CONNECT_PRODUCER_COPY_TOPIC, copy_threads,
                                                       args, tmp, producer=CONNECT_PRODUCER)),
        ("producer-perf-test", lambda: perf_test(java, bin_, b_bs, args, tmp))]
    for name, measure in ceilings:
        sync_s = flush(args)
        out[name] = measure()
        out[name]["sync_before_s"] = sync_s
    for place, name in enumerate(order, 1):
        # everything but the source topics and the copies goes (MM2's and Connect's internal topics too)
        run(java + ["reset", a_bs, ",".join(sources)], 120)
        run(java + ["reset", b_bs, ",".join(CEILING_TOPICS)], 120)
        sync_s = flush(args)
        if name in CONNECT_CONFIGS:
            res = run_connect(name, args, lab, java, a_bs, b_bs, tmp)
        else:
            res = run_dedicated(name, mirrormaker_heap, rest, java, bin_, a_bs, b_bs, model, args, tmp)
        res["place_in_round"] = place
        res["sync_before_s"] = sync_s
        out[name] = res
        clients = res["effective_clients"]
        log("%s: %s records/s, startup %ss%s, task producers %d, replication consumers %d"
            % (name, res["records_per_s"], res["startup_delay_s"],
               " (worker start %ss apart)" % res["worker_start_s"] if "worker_start_s" in res else "",
               len(clients["producers"]), len(clients["consumers"])))
        for kind in ("producer", "consumer"):
            for vals in clients.get(kind + "_values", []):
                log("   %s: %s" % (kind, " ".join("%s=%s" % kv for kv in sorted(vals.items()))))
    return out


def run_dedicated(name, mirrormaker_heap, rest, java, bin_, a_bs, b_bs, model, args, tmp):
    """One dedicated-mode config: connect-mirror-maker.sh with its mm2.properties until B holds every record."""
    d = os.path.join(tmp, "mm2-" + name)
    os.makedirs(d)
    clusters, flows, glob, options = mm2_inputs(name, a_bs, b_bs, args.partitions, rest)
    plan = model.load(clusters, flows, glob, options)
    props = plan.properties()
    text = format_properties(props) + "\n"
    with open(os.path.join(d, "mm2.properties"), "w") as fh:
        fh.write(text)
    log("MM2 %s: %s" % (name, CONFIG_DOCS[name]))
    target = target_topic(plan)
    exactly_once = name in DEDICATED_EOS
    w = Watcher(java, b_bs, target, args.records, args.poll_ms, args.timeout, os.path.join(d, "watch.log"),
                settle_ms=EOS_SETTLE_MS if exactly_once else 0)
    time.sleep(2)
    # the role's heap, as the Connect worker runs with the bench's (the same -Xms1g -Xmx1g as the
    # connect role's): connect-mirror-maker.sh alone starts at 256 MB and grows while it copies
    env = dict(os.environ, LOG_DIR=os.path.join(d, "logs"), KAFKA_HEAP_OPTS=mirrormaker_heap)
    out = os.path.join(d, "stdout.log")
    t_start = time.time()
    mm2 = start([os.path.join(bin_, "connect-mirror-maker.sh"), os.path.join(d, "mm2.properties")], out, env=env)
    wrc = w.wait(args.timeout + 30)
    visible = None
    if wrc == 0 and name in DEDICATED_VISIBLE:
        visible = measure_visible(name, a_bs, b_bs, TOPIC, target, args)
    mm2_alive = mm2.poll() is None
    stop(mm2, 30)
    first_seen, rate = w.rate(args.records)
    counted = None
    if exactly_once and rate:
        rate, counted = committed_rate(name, java, a_bs, b_bs, TOPIC, target, rate, args)
    clients = replication_clients(out)
    res = OrderedDict([
        ("records_per_s", round(rate) if rate else None),
        ("mb_per_s", round(rate * args.record_size / 1e6, 2) if rate else None),
        ("startup_delay_s", round(first_seen - t_start, 2) if first_seen else None),
        ("machine_cpu", w.cpu()),
        ("seconds_first_to_last", round(w.samples[-1][0] - first_seen, 3) if rate else None),
        ("completed", wrc == 0), ("mm2_alive_at_end", mm2_alive),
        ("samples", len(w.samples)),
        ("records_on_target", counted),
        ("visible", visible),
        ("description", CONFIG_DOCS[name]),
        ("kafka_heap_opts", mirrormaker_heap),
        ("mm2_properties", OrderedDict((k, v) for k, v in props.items())),
        ("effective_clients", clients),
    ])
    return res


def median_results(rounds):
    """Per config, the round whose rate is the median (the lower middle one of an even count), with
    every round's rate, CPU per record and place beside it."""
    results = OrderedDict()
    for name in list(rounds[0]):
        runs = [r[name] for r in rounds]
        ranked = sorted(range(len(runs)), key=lambda i: runs[i]["records_per_s"] or 0)
        res = OrderedDict(runs[ranked[(len(runs) - 1) // 2]])
        if len(runs) > 1:
            res["rounds"] = [OrderedDict([("round", i + 1)], **round_entry(run_)) for i, run_ in enumerate(runs)]
        results[name] = res
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--records", type=int, default=200000)
    ap.add_argument("--record-size", type=int, default=1024)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--copy-threads", type=int, default=None,
                    help="threads of the second client copy (default: the tasks MirrorMaker runs with the role's "
                         "tasks.max, min(tasks.max, partitions))")
    ap.add_argument("--configs", default=DEFAULT_CONFIGS, help="comma list of: " + ", ".join(CONFIG_DOCS))
    ap.add_argument("--rounds", type=int, default=1,
                    help="ceilings and configs this many times, each round starting the configs' list at "
                         "another one; each config's median round is reported (default 1)")
    ap.add_argument("--warmup", action="store_true",
                    help="one round of the ceilings and configs first whose rates count nowhere (printed and kept "
                         "in the JSON as warmup_round)")
    ap.add_argument("--sync", action="store_true",
                    help="write out dirty pages (sync) before each timed copy and config, its seconds recorded "
                         "(sync_before_s)")
    ap.add_argument("--delete-delay-ms", type=int, default=None,
                    help="the brokers' log.segment.delete.delay.ms (default: Kafka's, 60000): how long a deleted "
                         "topic's files stay before the broker removes them")
    ap.add_argument("--quick", action="store_true", help="20000 records (unless --records is given)")
    ap.add_argument("--poll-ms", type=int, default=100, help="end-offset poll interval on B (default 100)")
    ap.add_argument("--timeout", type=int, default=600, help="per copy/MM2 run, seconds (default 600)")
    ap.add_argument("--archive", default=None,
                    help="lab archive (default $KAFKA_ARCHIVE, else .cache/kafka/kafka_2.13-*.tgz)")
    ap.add_argument("--keep-tmp", action="store_true", help="keep the temp dir (logs) for inspection")
    ap.add_argument("--no-json", action="store_true")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds: at least 1, not %d" % args.rounds)
    if args.quick and "--records" not in sys.argv:
        args.records = 20000
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    bad = [c for c in configs if c not in CONFIG_DOCS]
    if bad:
        ap.error("unknown config(s) %s; known: %s" % (bad, ", ".join(CONFIG_DOCS)))

    archive = args.archive or find_archive()
    if not archive:
        ap.error("no lab archive in .cache/kafka; run lab/kafka-dist/assemble.sh")
    model = load_model()

    tmp = tempfile.mkdtemp(prefix="mm2_throughput.")
    interrupted = []

    def on_signal(signum, _frame):
        interrupted.append(signum)
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    rc = 1
    try:
        rc = bench(args, configs, archive, model, tmp)
    except KeyboardInterrupt:
        log("interrupted")
        rc = 130
    except Exception as exc:  # noqa: BLE001 - report, then clean up
        log("ERROR: %s" % exc)
        rc = 1
    finally:
        for proc in reversed(PROCS):
            stop(proc, 30)
        if args.keep_tmp:
            log("kept %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return rc


def bench(args, configs, archive, model, tmp):
    t_begin = time.time()
    log("unpacking %s into %s" % (os.path.basename(archive), tmp))
    # kafka-server-start.sh's own default heap, as the bench always ran its brokers
    lab = Lab(archive, workdir=tmp, heap="-Xmx1G -Xms1G")
    lab.unpack()
    dist = lab.dist
    bin_ = os.path.join(dist, "bin")
    libs = os.path.join(dist, "libs")
    kafka_version = re.search(r"kafka_2\.13-(.*)$", dist).group(1)

    classes = os.path.join(tmp, "classes")
    os.makedirs(classes)
    run(["javac", "-nowarn", "-cp", libs + "/*", "-d", classes, TOOL_SRC], 180)
    java = ["java", "-Xmx1G", "-cp", classes + ":" + libs + "/*", "BenchTool"]

    # ---- brokers (stopped with every other process of the run, in main)
    rest = free_ports(1)[0]
    try:
        lab.start_brokers()
    finally:
        PROCS.extend(b["proc"] for b in lab.brokers.values())
    a_bs, b_bs = lab.bootstrap("A"), lab.bootstrap("B")
    if args.delete_delay_ms is not None:
        for bs in (a_bs, b_bs):
            set_delete_delay(bin_, bs, args.delete_delay_ms, tmp)

    # ---- fill (not timed): bench, and the Connect configs' own source topics
    sources = [TOPIC] + [CONNECT_CONFIGS[n][1] for n in configs if n in CONNECT_CONFIGS]
    for topic in sources:
        run(java + ["create", a_bs, topic, str(args.partitions)], 90)
    # the fair ceiling has as many threads as MirrorSourceConnector starts tasks: min(tasks.max, partitions)
    copy_threads = args.copy_threads or min(int(role_defaults()[1]["tasks.max"]), args.partitions)
    for topic in sources:
        log("filling %s with %d x %d B records" % (topic, args.records, args.record_size))
        fill = run([os.path.join(bin_, "kafka-producer-perf-test.sh"), "--topic", topic,
                    "--num-records", str(args.records), "--record-size", str(args.record_size), "--throughput", "-1",
                    "--producer-props", "bootstrap.servers=" + a_bs, "acks=1", "batch.size=1048576", "linger.ms=20"],
                   args.timeout, logfile=os.path.join(tmp, "fill.log"))
        log("fill %s: %s" % (topic, fill.strip().splitlines()[-1]))

    payload_mb = args.records * args.record_size / 1e6
    mirrormaker_heap = _role_yaml(ROLE_DEFAULTS)["mirrormaker_heap_opts"]
    warmup = None
    if args.warmup:
        # the first minutes on fresh brokers are slow for everything (README, "What dedicated MirrorMaker
        # does besides the copy"): one round in the list's order whose rates count nowhere
        log("warm-up round (not counted): %s" % ", ".join(configs))
        rtmp = os.path.join(tmp, "warmup")
        os.makedirs(rtmp)
        warmup = run_round(configs, copy_threads, mirrormaker_heap, sources, rest, java, bin_, lab, a_bs, b_bs,
                           model, args, rtmp)
    rounds = []
    for number in range(args.rounds):
        # each round starts the list at another config, so that no config is always first: the one run
        # first after the ceilings has been the slowest of its run, whichever it was (README, "The order matters");
        # spread over the list while there are fewer rounds than configs, each config in turn when more
        if args.rounds <= len(configs):
            shift = number * len(configs) // args.rounds
        else:
            shift = number % len(configs)
        order = list(configs[shift:]) + list(configs[:shift])
        rtmp = tmp if args.rounds == 1 and not warmup else os.path.join(tmp, "round-%d" % (number + 1))
        os.makedirs(rtmp, exist_ok=True)
        if args.rounds > 1:
            log("round %d of %d: %s" % (number + 1, args.rounds, ", ".join(order)))
        rounds.append(run_round(order, copy_threads, mirrormaker_heap, sources, rest, java, bin_, lab, a_bs, b_bs,
                                model, args, rtmp))
    results = median_results(rounds)
    copy_rate, copy_watch_rate = results["client-copy"]["records_per_s"], results["client-copy"]["records_per_s_watcher"]
    for name in configs:
        res, rate = results[name], results[name]["records_per_s"]
        ratios = OrderedDict([
            ("ratio_to_client_copy", round(rate / copy_rate, 3) if rate else None),
            # both rates by the end-offset watcher on B (same method on both sides)
            ("ratio_to_client_copy_watcher", round(rate / copy_watch_rate, 3) if rate and copy_watch_rate else None)])
        results[name] = OrderedDict(list(res.items())[:2] + list(ratios.items()) + list(res.items())[2:])

    # ---- report
    def cpu(name):
        use = results[name].get("machine_cpu")
        return "%9.1f %5.2f" % (use["cpu_ms_per_1000_records"], use["busy_cores"]) if use else "%9s %5s" % ("-", "-")

    lines = ["", "mm2_throughput: %d records x %d B, %d partitions, Kafka %s, 2 brokers + clients on %d cores"
             % (args.records, args.record_size, args.partitions, kafka_version, os.cpu_count()),
             "%-22s %10s %7s %20s %9s %14s %9s %5s" % ("config", "records/s", "MB/s", "ratio", "startup",
                                                       "ratio(watcher)", "CPU ms/1k", "cores")]
    for name in ("client-copy", "client-copy-threads", "client-copy-threads-cp", "producer-perf-test"):
        r = results[name]
        lines.append("%-22s %10d %7.2f %20s %9s %14s %s" % (
            name, r["records_per_s"], r["mb_per_s"], "%.2fx client copy" % (r["records_per_s"] / copy_rate), "-",
            "(%s rec/s)" % r["records_per_s_watcher"], cpu(name)))
    for name in configs:
        r = results[name]
        if r["records_per_s"]:
            lines.append("%-22s %10d %7.2f %20s %8.1fs %13.2fx %s" % (
                name, r["records_per_s"], r["mb_per_s"], "%.2fx client copy" % r["ratio_to_client_copy"],
                r["startup_delay_s"], r["ratio_to_client_copy_watcher"] or 0, cpu(name)))
        else:
            lines.append("%-22s %10s %7s %20s %9s" % (name, "n/a", "n/a", "incomplete", r["startup_delay_s"]))
    for name in configs:
        if name in CONNECT_CONFIGS:
            lines.append("  %s: startup = connectors PUT -> first record on B; the worker took %.1fs to start before"
                         % (name, results[name]["worker_start_s"]))
    role = results.get(ROLE_DEFAULT)
    ratio = "%.2fx" % role["ratio_to_client_copy"] if role and role["ratio_to_client_copy"] else "n/a"
    lines.append("mm2_throughput: role defaults = %s client copy" % ratio
                 + ("" if role else " (config %r not run)" % ROLE_DEFAULT))
    ratios = connect_ratios(results, copy_rate)
    lines.extend(ratios.pop("lines"))
    eos = eos_ratios(results, copy_rate)
    lines.extend(eos.pop("lines"))
    ceilings = ceiling_ratios(results, configs)
    lines.extend(ceilings.pop("lines"))
    levers = lever_ratios(results)
    lines.extend(levers.pop("lines"))
    if args.rounds > 1:
        lines.append("mm2_throughput: each round's records/s (place in its round), medians above:")
        for name, res in results.items():
            lines.append("  %-22s %s" % (name, "  ".join(
                "%s (%s)" % (r["records_per_s"], r["place"] or "-") for r in res["rounds"])))
    if warmup:
        lines.append("mm2_throughput: the warm-up round's records/s (place in its round), counted nowhere:")
        for name, res in warmup.items():
            lines.append("  %-22s %s (%s)" % (name, res["records_per_s"], res.get("place_in_round") or "-"))
    print("\n".join(lines))

    doc = OrderedDict([
        ("bench", "mm2_throughput"),
        ("date", datetime.datetime.now().astimezone().isoformat(timespec="seconds")),
        ("kafka_version", kafka_version), ("archive", os.path.basename(archive)),
        ("records", args.records), ("record_size", args.record_size), ("partitions", args.partitions),
        ("payload_mb", payload_mb), ("quick", args.quick), ("rounds", args.rounds),
        ("warmup", args.warmup), ("sync", args.sync), ("delete_delay_ms", args.delete_delay_ms), ("poll_ms", args.poll_ms),
        ("machine", OrderedDict([("cpus", os.cpu_count()), ("platform", platform.platform()),
                                 ("java", subprocess.run(["java", "-version"], capture_output=True, text=True,
                                                         timeout=30, check=False).stderr.splitlines()[0])])),
        ("role_default_config", ROLE_DEFAULT), ("role_default_ratio", role and role["ratio_to_client_copy"]),
        ("connect_ratios", ratios),
        ("eos_ratios", eos),
        ("ceiling_ratios", ceilings),
        ("lever_ratios", levers),
        ("results", results),
        ("warmup_round", OrderedDict((name, round_entry(res)) for name, res in warmup.items()) if warmup else None),
        ("elapsed_s", round(time.time() - t_begin, 1)),
    ])
    if not args.no_json:
        outdir = os.path.join(HERE, "results")
        os.makedirs(outdir, exist_ok=True)
        path = os.path.join(outdir, "mm2_throughput-%s%s.json"
                            % (time.strftime("%Y%m%d-%H%M%S"), "-quick" if args.quick else ""))
        with open(path, "w") as fh:
            json.dump(doc, fh, indent=2)
            fh.write("\n")
        print("results: %s" % os.path.relpath(path, REPO))
    # a config that failed in any round (the warm-up one too) fails the run, whichever round its median is
    ok = all(r["completed"] for n in configs for r in results[n].get("rounds", [results[n]])) and all(
        r.get("completed", True) for r in (warmup or {}).values())
    return 0 if ok else 2


def fmt(value):
    """A ratio as the report prints it."""
    return "n/a" if value is None else "%.2fx" % value


def verdict(ok):
    """A goal's verdict as the report prints it."""
    return "not measured" if ok is None else ("holds" if ok else "does NOT hold")


def eos_ratios(results, copy_rate):
    """Per layout, each exactly-once boundary against the same layout with EOS off in this run (its
    cost, goal <= GOAL_EOS_COST) and against the client copy, and the delay until a read_committed
    reader on B sees a record, EOS off beside it."""
    out, lines = OrderedDict(), []
    for layout, off, poll, interval in EOS_SETS:
        base = (results.get(off) or {}).get("records_per_s")
        for name in (off, poll, interval):
            if name not in results:
                continue
            rate = results[name]["records_per_s"]
            entry = OrderedDict([("layout", layout), ("eos_off", off),
                                 ("to_client_copy", round(rate / copy_rate, 3) if rate else None)])
            if name != off:
                entry["to_eos_off"] = round(rate / base, 3) if rate and base else None
                entry["cost"] = None if entry["to_eos_off"] is None else round(1 - entry["to_eos_off"], 3)
                entry["goal_holds"] = None if entry["cost"] is None else entry["cost"] <= GOAL_EOS_COST
                lines.append("mm2_throughput: %s layout, %s / %s = %s, EOS costs %s (goal <= %d%%: %s); %s client copy"
                             % (layout, name, off, fmt(entry["to_eos_off"]),
                                "n/a" if entry["cost"] is None else "%d%%" % round(100 * entry["cost"]),
                                round(100 * GOAL_EOS_COST), verdict(entry["goal_holds"]),
                                fmt(entry["to_client_copy"])))
            entry["visible"] = results[name].get("visible")
            out[name] = entry
        for name in (off, poll, interval):
            visible = (out.get(name) or {}).get("visible")
            if visible and visible["records"]:
                lines.append("mm2_throughput: %s: written to A -> seen on B by a read_committed reader: p50 %.2f s, "
                             "p99 %.2f s (%d records)" % (name, visible["p50_s"], visible["p99_s"], visible["records"]))
    out["goal_eos_cost"] = GOAL_EOS_COST
    out["lines"] = lines
    return out


def ceiling_ratios(results, configs):
    """Each layout's defaults against the fair ceilings of this run: the client copy with as many threads
    as MirrorMaker tasks (goal >= GOAL_THREADS_RATIO) and one producer writing into B. Ratios by the end-offset
    watcher on B, MirrorMaker's own method, on both sides; the copies' own timing (first poll to last ack)
    in the ``*_own_timing`` fields."""
    threads, perf, single = results["client-copy-threads"], results["producer-perf-test"], results["client-copy"]
    connect_producer = results["client-copy-threads-cp"]

    def ratio(num, den):
        return round(num / den, 3) if num and den else None

    out = OrderedDict([("copy_threads", threads["threads"]),
                       ("threads_copy_to_client_copy", ratio(threads["records_per_s_watcher"],
                                                             single["records_per_s_watcher"])),
                       ("perf_test_to_threads_copy", ratio(perf["records_per_s_watcher"],
                                                           threads["records_per_s_watcher"])),
                       ("threads_copy_connect_producer_to_threads_copy",
                        ratio(connect_producer["records_per_s_watcher"], threads["records_per_s_watcher"])),
                       ("goal_to_threads_copy", GOAL_THREADS_RATIO)])
    lines = ["mm2_throughput: client copy with %d threads = %s the one-thread copy; kafka-producer-perf-test "
             "into B = %s the %d-thread copy (end offsets on B)"
             % (threads["threads"], fmt(out["threads_copy_to_client_copy"]), fmt(out["perf_test_to_threads_copy"]),
                threads["threads"]),
             "mm2_throughput: the %d-thread copy with Connect's task producer settings (%s) = %s the %d-thread copy"
             % (threads["threads"], ", ".join("%s=%s" % kv for kv in CONNECT_PRODUCER.items()),
                fmt(out["threads_copy_connect_producer_to_threads_copy"]), threads["threads"])]
    for layout, name in LAYOUT_DEFAULTS:
        if name not in configs:
            continue
        rate = results[name]["records_per_s"]
        entry = OrderedDict([("config", name), ("to_threads_copy", ratio(rate, threads["records_per_s_watcher"])),
                             ("to_perf_test", ratio(rate, perf["records_per_s_watcher"])),
                             ("to_threads_copy_connect_producer", ratio(rate, connect_producer["records_per_s_watcher"])),
                             ("to_threads_copy_own_timing", ratio(rate, threads["records_per_s"])),
                             ("to_perf_test_own_timing", ratio(rate, perf["records_per_s"]))])
        entry["goal_holds"] = None if entry["to_threads_copy"] is None else entry["to_threads_copy"] >= GOAL_THREADS_RATIO
        out[name] = entry
        lines.append("mm2_throughput: %s (%s) = %s the %d-thread client copy (goal >= %.1fx: %s), %s kafka-producer-perf-test "
                     "into B, %s the copy with Connect's producer; against the first two's own timings %s and %s"
                     % (layout, name, fmt(entry["to_threads_copy"]), threads["threads"], GOAL_THREADS_RATIO,
                        {None: "not measured", True: "holds", False: "does NOT hold"}[entry["goal_holds"]],
                        fmt(entry["to_perf_test"]), fmt(entry["to_threads_copy_connect_producer"]),
                        fmt(entry["to_threads_copy_own_timing"]),
                        fmt(entry["to_perf_test_own_timing"])))
    out["lines"] = lines
    return out


def lever_ratios(results):
    """Each lever config run against the config it changes, both run here: rates and CPU per record."""
    out, lines = OrderedDict(), []
    for name, base in LEVERS.items():
        if not (name in results and base in results):
            continue
        rate, base_rate = results[name]["records_per_s"], results[base]["records_per_s"]
        cpu, base_cpu = (cpu_per_record(results[n]) for n in (name, base))
        out[name] = OrderedDict([("against", base), ("ratio", round(rate / base_rate, 3) if rate and base_rate else None),
                                 ("cpu_ms_per_1000_records", cpu), ("against_cpu_ms_per_1000_records", base_cpu)])
        lines.append("mm2_throughput: %s / %s = %s (CPU ms per 1000 records %s against %s)"
                     % (name, base, fmt(out[name]["ratio"]), cpu if cpu is not None else "n/a",
                        base_cpu if base_cpu is not None else "n/a"))
    out["lines"] = lines
    return out


def connect_ratios(results, copy_rate):
    """The Connect layout's ratios, measured side by side in this run, and the goals' verdicts."""
    def rate(name):
        return results[name]["records_per_s"] if name in results else None

    out = OrderedDict()
    conn = rate("connect")
    ref = next((n for n in DEDICATED_REFERENCE if rate(n)), None)
    out["connect_to_client_copy"] = round(conn / copy_rate, 3) if conn else None
    out["dedicated_reference"] = ref
    out["connect_to_dedicated"] = round(conn / rate(ref), 3) if conn and ref else None
    out["goal_connect_to_client_copy"] = GOAL_CONNECT_RATIO
    out["goal_connect_holds"] = (None if out["connect_to_client_copy"] is None
                                 else out["connect_to_client_copy"] >= GOAL_CONNECT_RATIO)
    lines = []
    if "connect" in results:
        lines.append("mm2_throughput: connect (DR layout, collection defaults, EOS off) = %s client copy "
                     "(goal >= %.2fx: %s)" % (fmt(out["connect_to_client_copy"]), GOAL_CONNECT_RATIO,
                                              verdict(out["goal_connect_holds"])))
        lines.append("mm2_throughput: connect / dedicated %s = %s"
                     % (ref or "(%s not run)" % "/".join(DEDICATED_REFERENCE), fmt(out["connect_to_dedicated"])))
    # tasks.max against the collection's default, and the source tasks Connect actually ran
    for name in ("connect-tasks-cores", "connect-tasks-30"):
        if name in results:
            started = len((results[name].get("connector_status") or {}).get("A-to-B-MirrorSourceConnector", {})
                          .get("tasks") or [])
            out[name.replace("-", "_") + "_to_connect"] = round(rate(name) / conn, 3) if conn and rate(name) else None
            out[name.replace("-", "_") + "_source_tasks"] = started
            lines.append("mm2_throughput: %s / connect = %s (tasks.max %s, %d source tasks ran; connect: tasks.max %s)"
                         % (name, fmt(out[name.replace("-", "_") + "_to_connect"]),
                            results[name]["connectors"]["A-to-B-MirrorSourceConnector"]["tasks.max"], started,
                            results["connect"]["connectors"]["A-to-B-MirrorSourceConnector"]["tasks.max"]
                            if "connect" in results else "n/a"))
    out["lines"] = lines
    return out


if __name__ == "__main__":
    sys.exit(main())
