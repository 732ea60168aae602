"""MirrorMaker 2 replication rate vs a plain consume-then-produce client copy.

One run: two single-node KRaft brokers (A, B) from the lab archive on 127.0.0.1, topic
``bench`` on A filled with N records, then

* client copy  - bench/mm2_throughput.d/BenchTool.java (kafka-clients only) copies
                 A:bench -> B:copy.bench; rate from its first poll to the last ack;
* MirrorMaker 2 - connect-mirror-maker.sh (dedicated mode) with an mm2.properties
                 rendered by plugins/module_utils/mm2_model.py, once per --configs entry;
                 rate from the first record of A.bench seen on B to the last one
                 (end offsets polled every --poll-ms), startup delay reported apart.

Prints a table and writes bench/results/mm2_throughput-<date>.json.
Needs: python3 (stdlib only), java + javac 17, the lab archive (lab/kafka-dist/assemble.sh).

  bench/mm2_throughput                      # 200000 x 1 KB, configs stock,tuned,tuned-inflight,tuned-inflight-sl
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
# Brokers and processes are started the same way as for the smoke tests.
sys.path.insert(0, os.path.join(REPO, "tests", "smoke"))
from harness import (Lab, find_archive, free_ports, load_model, log, start_process,  # noqa: E402 pylint: disable=wrong-import-position
                     stop_process as stop)
TOOL_SRC = os.path.join(HERE, "mm2_throughput.d", "BenchTool.java")
ROLE_DEFAULTS = os.path.join(REPO, "roles", "mirrormaker", "defaults", "main.yml")

TOPIC = "bench"
COPY_TOPIC = "copy.bench"

# The client tuning under test; the client copy uses the same producer settings and
# the same raised consumer fetch settings, so only the copy machinery differs.
PRODUCER_TUNING = OrderedDict([("batch.size", "1048576"), ("linger.ms", "20"), ("compression.type", "lz4")])
CONSUMER_TUNING = OrderedDict([("fetch.max.bytes", "52428800"), ("max.partition.fetch.bytes", "10485760"),
                               ("max.poll.records", "5000")])
# The Connect worker's task producer is created with enable.idempotence=false,
# max.in.flight.requests.per.connection=1 (Worker.baseProducerConfigs); a plain client has
# idempotence on and 5 requests in flight, which keeps per-partition order just the same.
INFLIGHT = OrderedDict([("enable.idempotence", "true"), ("max.in.flight.requests.per.connection", "5")])

# Harness-only globals: single-broker clusters need replication factor 1 everywhere.
HARNESS_GLOBALS = OrderedDict([
    ("replication.factor", 1),
    ("checkpoints.topic.replication.factor", 1),
    ("heartbeats.topic.replication.factor", 1),
    ("offset-syncs.topic.replication.factor", 1),
    ("offset.storage.replication.factor", 1),
    ("status.storage.replication.factor", 1),
    ("config.storage.replication.factor", 1),
])

CONFIG_DOCS = OrderedDict([
    ("stock", "MM2 defaults (tasks.max=1, Connect worker producer, default consumer)"),
    ("role", "the mirrormaker role's defaults (mirrormaker_default_properties and "
             "mirrormaker_flow_default_properties read from roles/mirrormaker/defaults/main.yml)"),
    ("tasks", "tasks.max = partitions, no client overrides"),
    ("tuned", "tasks.max = partitions + per-flow A->B.producer.override.* and A->B.consumer.*"),
    ("tuned-inflight", "tuned + A->B.producer.override.enable.idempotence=true, max.in.flight=5"),
    ("tuned-cluster", "tuned, overrides as per-cluster B.producer.* and A.consumer.* instead"),
    ("tuned-global", "tuned, overrides as global producer.* / consumer.* keys (expected NOT to reach clients)"),
    ("tuned-inflight-sl", "tuned-inflight + plugin.discovery=service_load (global and per cluster: faster start)"),
])
DEFAULT_CONFIGS = "stock,role,tuned-inflight,tuned-inflight-sl"
# The configuration the role ships; its ratio is the last line.
ROLE_DEFAULT = "role"

PROCS = []  # every Popen this script started (each in its own session/process group)


def role_defaults():
    """The mirrormaker role's shipped defaults, so the bench follows the role when it changes."""
    try:
        import yaml  # the project's venv has PyYAML (ansible-core depends on it)
    except ImportError:
        raise RuntimeError("config 'role' needs PyYAML: run under the project's venv (. scripts/env.sh)")
    with open(ROLE_DEFAULTS) as fh:
        data = yaml.safe_load(fh)
    return data["mirrormaker_default_properties"] or {}, data["mirrormaker_flow_default_properties"] or {}


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


class Watcher(object):
    """BenchTool watch in the background: (epoch_ms, sum of end offsets) samples."""

    def __init__(self, java, bootstrap, topic, target, interval_ms, timeout_s, logfile):
        self.samples = []
        self.proc = subprocess.Popen(java + ["watch", bootstrap, topic, str(target), str(interval_ms), str(timeout_s)],
                                     stdout=subprocess.PIPE, stderr=open(logfile, "ab"), stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        PROCS.append(self.proc)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            parts = line.decode().split()
            if len(parts) == 2 and parts[0].isdigit():
                self.samples.append((int(parts[0]) / 1000.0, int(parts[1])))

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
        seen = [(t, n) for t, n in self.samples if n > 0]
        if not seen or seen[-1][1] < target:
            return (seen[0][0] if seen else None), None
        (t1, n1), (t2, n2) = seen[0], seen[-1]
        if t2 <= t1 or n2 <= n1:
            return t1, None
        return t1, (n2 - n1) / (t2 - t1)


def mm2_inputs(name, a_bs, b_bs, partitions, rest_port):
    """(clusters, flows, globals, options) for one configuration, in the role's variable shapes."""
    clusters = [{"alias": "A", "bootstrap_servers": [a_bs], "broker_count": 1, "properties": {}},
                {"alias": "B", "bootstrap_servers": [b_bs], "broker_count": 1, "properties": {}}]
    flow = {"source": "A", "target": "B", "topics": [TOPIC], "properties": OrderedDict()}
    options = {"exactly_once": False, "internal_rest": True}
    glob = OrderedDict()
    if name == "role":
        role_globals, options["flow_defaults"] = role_defaults()
        glob.update(role_globals)
    glob.update(HARNESS_GLOBALS)
    # dedicated.mode.enable.internal.rest=true (role default) starts a REST listener: keep it local
    glob["listeners"] = "http://127.0.0.1:%d" % rest_port
    glob["rest.advertised.host.name"] = "127.0.0.1"
    if name not in ("stock", "role"):
        flow["tasks_max"] = partitions
    if name in ("tuned", "tuned-inflight", "tuned-inflight-sl"):
        # per flow: A->B.producer.override.* (Connect's connector-level client override, policy
        # All by default) reaches the worker's task producers; A->B.consumer.* reaches
        # MirrorSourceTask's replication consumer (MirrorSourceConfig.sourceConsumerConfig)
        for k, v in PRODUCER_TUNING.items():
            flow["properties"]["producer.override." + k] = v
        for k, v in CONSUMER_TUNING.items():
            flow["properties"]["consumer." + k] = v
    if name in ("tuned-inflight", "tuned-inflight-sl"):
        for k, v in INFLIGHT.items():
            flow["properties"]["producer.override." + k] = v
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
    return clusters, [flow], glob, options


CHECK_KEYS = list(PRODUCER_TUNING) + list(INFLIGHT) + ["acks"] + list(CONSUMER_TUNING)


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
        if d["kind"] == "ProducerConfig" and cid.startswith("connector-producer-MirrorSourceConnector"):
            out["producers"].append(cid)
            key = "producer"
        elif d["kind"] == "ConsumerConfig" and "MirrorSourceConnector" in cid and "replication" in cid:
            out["consumers"].append(cid)
            key = "consumer"
        else:
            continue
        vals = dict((k, d["values"].get(k)) for k in CHECK_KEYS if k in d["values"])
        out.setdefault(key + "_values", [])
        if vals not in out[key + "_values"]:
            out[key + "_values"].append(vals)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--records", type=int, default=200000)
    ap.add_argument("--record-size", type=int, default=1024)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--configs", default=DEFAULT_CONFIGS, help="comma list of: " + ", ".join(CONFIG_DOCS))
    ap.add_argument("--quick", action="store_true", help="20000 records (unless --records is given)")
    ap.add_argument("--poll-ms", type=int, default=100, help="end-offset poll interval on B (default 100)")
    ap.add_argument("--timeout", type=int, default=600, help="per copy/MM2 run, seconds (default 600)")
    ap.add_argument("--archive", default=None,
                    help="lab archive (default $KAFKA_ARCHIVE, else .cache/kafka/kafka_2.13-*.tgz)")
    ap.add_argument("--keep-tmp", action="store_true", help="keep the temp dir (logs) for inspection")
    ap.add_argument("--no-json", action="store_true")
    args = ap.parse_args()
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

    # ---- fill (not timed)
    run(java + ["create", a_bs, TOPIC, str(args.partitions)], 90)
    run(java + ["create", b_bs, COPY_TOPIC, str(args.partitions)], 90)
    log("filling %s with %d x %d B records" % (TOPIC, args.records, args.record_size))
    fill = run([os.path.join(bin_, "kafka-producer-perf-test.sh"), "--topic", TOPIC,
                "--num-records", str(args.records), "--record-size", str(args.record_size), "--throughput", "-1",
                "--producer-props", "bootstrap.servers=" + a_bs, "acks=1", "batch.size=1048576", "linger.ms=20"],
               args.timeout, logfile=os.path.join(tmp, "fill.log"))
    log("fill: " + fill.strip().splitlines()[-1])

    payload_mb = args.records * args.record_size / 1e6
    results = OrderedDict()

    # ---- client copy
    log("client copy A:%s -> B:%s" % (TOPIC, COPY_TOPIC))
    w = Watcher(java, b_bs, COPY_TOPIC, args.records, args.poll_ms, args.timeout, os.path.join(tmp, "watch-copy.log"))
    time.sleep(2)  # watcher JVM up before the copy starts
    copy_args = (["producer.%s=%s" % kv for kv in PRODUCER_TUNING.items()]
                 + ["consumer.%s=%s" % kv for kv in CONSUMER_TUNING.items()])
    copy = json.loads(run(java + ["copy", a_bs, b_bs, TOPIC, COPY_TOPIC, str(args.timeout)] + copy_args,
                          args.timeout + 60).strip().splitlines()[-1])
    w.wait(60)
    copy_watch_rate = w.rate(args.records)[1]
    copy_rate = copy["total"] / copy["seconds_first_poll_to_last_ack"]
    results["client-copy"] = OrderedDict([
        ("records_per_s", round(copy_rate)), ("mb_per_s", round(copy_rate * args.record_size / 1e6, 2)),
        ("seconds", round(copy["seconds_first_poll_to_last_ack"], 3)),
        ("records_per_s_watcher", round(copy_watch_rate) if copy_watch_rate else None),
        ("detail", copy),
        ("settings", OrderedDict([("producer", dict(PRODUCER_TUNING)), ("consumer", dict(CONSUMER_TUNING)),
                                  ("note", "producer otherwise default: acks=all, idempotence on, 5 in flight; "
                                           "consumer: manual assignment of all partitions, one thread")])),
    ])
    log("client copy: %d records/s (watcher %s)" % (copy_rate, results["client-copy"]["records_per_s_watcher"]))

    # ---- MirrorMaker 2
    for name in configs:
        d = os.path.join(tmp, "mm2-" + name)
        os.makedirs(d)
        run(java + ["reset", a_bs, TOPIC], 120)
        run(java + ["reset", b_bs, COPY_TOPIC], 120)
        clusters, flows, glob, options = mm2_inputs(name, a_bs, b_bs, args.partitions, rest)
        props = model.build_properties(clusters, flows, glob, options)
        text = model.format_properties(props) + "\n"
        with open(os.path.join(d, "mm2.properties"), "w") as fh:
            fh.write(text)
        log("MM2 %s: %s" % (name, CONFIG_DOCS[name]))
        w = Watcher(java, b_bs, "A." + TOPIC, args.records, args.poll_ms, args.timeout, os.path.join(d, "watch.log"))
        time.sleep(2)
        env = dict(os.environ, LOG_DIR=os.path.join(d, "logs"))
        out = os.path.join(d, "stdout.log")
        t_start = time.time()
        mm2 = start([os.path.join(bin_, "connect-mirror-maker.sh"), os.path.join(d, "mm2.properties")], out, env=env)
        wrc = w.wait(args.timeout + 30)
        mm2_alive = mm2.poll() is None
        stop(mm2, 30)
        first_seen, rate = w.rate(args.records)
        clients = replication_clients(out)
        res = OrderedDict([
            ("records_per_s", round(rate) if rate else None),
            ("mb_per_s", round(rate * args.record_size / 1e6, 2) if rate else None),
            ("ratio_to_client_copy", round(rate / copy_rate, 3) if rate else None),
            # both rates by the end-offset watcher on B (same method on both sides)
            ("ratio_to_client_copy_watcher", round(rate / copy_watch_rate, 3) if rate and copy_watch_rate else None),
            ("startup_delay_s", round(first_seen - t_start, 2) if first_seen else None),
            ("seconds_first_to_last", round(w.samples[-1][0] - first_seen, 3) if rate else None),
            ("completed", wrc == 0), ("mm2_alive_at_end", mm2_alive),
            ("samples", len(w.samples)),
            ("description", CONFIG_DOCS[name]),
            ("mm2_properties", OrderedDict((k, v) for k, v in props.items())),
            ("effective_clients", clients),
        ])
        results[name] = res
        log("MM2 %s: %s records/s, ratio %s, startup %ss, task producers %d, replication consumers %d"
            % (name, res["records_per_s"], res["ratio_to_client_copy"], res["startup_delay_s"],
               len(clients["producers"]), len(clients["consumers"])))
        for kind in ("producer", "consumer"):
            for vals in clients.get(kind + "_values", []):
                log("   %s: %s" % (kind, " ".join("%s=%s" % kv for kv in sorted(vals.items()))))

    # ---- report
    lines = ["", "mm2_throughput: %d records x %d B, %d partitions, Kafka %s, 2 brokers + clients on %d cores"
             % (args.records, args.record_size, args.partitions, kafka_version, os.cpu_count()),
             "%-18s %10s %7s %20s %9s %14s" % ("config", "records/s", "MB/s", "ratio", "startup",
                                               "ratio(watcher)")]
    cc = results["client-copy"]
    lines.append("%-18s %10d %7.2f %20s %9s %14s" % (
        "client-copy", cc["records_per_s"], cc["mb_per_s"], "1.00x", "-", "(%s rec/s)" % cc["records_per_s_watcher"]))
    for name in configs:
        r = results[name]
        if r["records_per_s"]:
            lines.append("%-18s %10d %7.2f %20s %8.1fs %13.2fx" % (
                name, r["records_per_s"], r["mb_per_s"], "%.2fx client copy" % r["ratio_to_client_copy"],
                r["startup_delay_s"], r["ratio_to_client_copy_watcher"] or 0))
        else:
            lines.append("%-18s %10s %7s %20s %9s" % (name, "n/a", "n/a", "incomplete", r["startup_delay_s"]))
    role = results.get(ROLE_DEFAULT)
    ratio = "%.2f" % role["ratio_to_client_copy"] if role and role["ratio_to_client_copy"] else "n/a"
    lines.append("mm2_throughput: role defaults = %sx client copy" % ratio
                 + ("" if role else " (config %r not run)" % ROLE_DEFAULT))
    print("\n".join(lines))

    doc = OrderedDict([
        ("bench", "mm2_throughput"),
        ("date", datetime.datetime.now().astimezone().isoformat(timespec="seconds")),
        ("kafka_version", kafka_version), ("archive", os.path.basename(archive)),
        ("records", args.records), ("record_size", args.record_size), ("partitions", args.partitions),
        ("payload_mb", payload_mb), ("quick", args.quick), ("poll_ms", args.poll_ms),
        ("machine", OrderedDict([("cpus", os.cpu_count()), ("platform", platform.platform()),
                                 ("java", subprocess.run(["java", "-version"], capture_output=True, text=True,
                                                         timeout=30, check=False).stderr.splitlines()[0])])),
        ("role_default_config", ROLE_DEFAULT), ("role_default_ratio", role and role["ratio_to_client_copy"]),
        ("results", results),
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
    ok = all(results[n]["completed"] for n in configs)
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
