"""Reconcile (Spark) vs the fastest raw read of the same two topics; smoke verdict time vs replication delay.

One run on two local single-node brokers (A, B) from the lab archive and real MirrorMaker 2
(tests/live/harness.py):

1. topic ``bench`` on A filled with N records of --record-size bytes, mirrored by MM2 to B as
   ``A.bench``; MM2 is then stopped so that only the readers run;
2. raw read  - confluent-kafka (librdkafka) consumers read A:bench and B:A.bench in parallel, one
               thread per topic, all partitions, records counted and bytes touched (the floor for
               any comparison); kafka-python too with --kafka-python (slow: pure Python);
3. reconcile - smoke/mm2_smoke --mode reconcile (Spark's Kafka source, local[2] by default, one task
               per partition, counts + order-insensitive xxhash64 digest per partition), timed as the
               job's reconcile check (Spark session already up) and as the whole job;
4. where the reconcile time goes - in the job's Spark session: the Kafka source alone (both
               topics read, rows counted), plus the record hash (the digest's SQL, summed), against
               the whole check (hash, per-partition sums, Python driver);
5. smoke     - MM2 started again, the smoke job (`python -m mm2_smoke`, a fresh process, so the Spark
               JVM start is in the time) with its full check set on a topic created before MM2
               started; verdict time minus the replication delay actually present (max marker latency),
               and when the Spark session was up. --smoke-rounds rounds (default 2), each running the
               job with the driver's JIT stopped at C1 (smoke mode's default) and with the full JIT,
               in turns first; the medians side by side.

Prints ratios (reconcile / raw read) from this one run and writes bench/results/smoke_reconcile-<date>.json.

  bench/smoke_reconcile                   # 1,000,000 x 1 KB
  bench/smoke_reconcile --quick           # 100,000 records
  bench/smoke_reconcile --records 300000 --partitions 4 --master local[2]
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "live"))
sys.path.insert(0, os.path.join(REPO, "smoke"))
import harness  # noqa: E402
from mm2_smoke.spark import DRIVER_JIT, DRIVER_JITS, driver_jvm  # noqa: E402 pylint: disable=wrong-import-position

TOPIC = "bench"
log = harness.log


def repo_relative(spark):
    """Spark facts with jars_dir relative to the repository, so results carry no machine paths."""
    if spark and spark.get("jars_dir"):
        spark = dict(spark, jars_dir=os.path.relpath(spark["jars_dir"], REPO))
    return spark


def raw_read_confluent(bootstrap, topic, partitions, expected, out):
    from confluent_kafka import Consumer, TopicPartition
    cons = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-raw-%s" % os.getpid(),
                     "enable.auto.commit": False, "fetch.max.bytes": 104857600,
                     "max.partition.fetch.bytes": 52428800, "queued.max.messages.kbytes": 1048576,
                     "fetch.wait.max.ms": 10})
    cons.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    count = nbytes = 0
    t0 = time.time()
    while count < expected:
        for msg in cons.consume(num_messages=10000, timeout=1.0):
            if msg.error():
                continue
            count += 1
            nbytes += len(msg.value() or b"") + len(msg.key() or b"")
        if time.time() - t0 > 600:
            break
    out[topic] = {"records": count, "bytes": nbytes, "seconds": time.time() - t0}
    cons.close()


def raw_read_kafka_python(bootstrap, topic, partitions, expected, out):
    from kafka import KafkaConsumer, TopicPartition
    cons = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, fetch_max_bytes=104857600,
                         max_partition_fetch_bytes=52428800)
    cons.assign([TopicPartition(topic, p) for p in range(partitions)])
    cons.seek_to_beginning()
    count = nbytes = 0
    t0 = time.time()
    while count < expected and time.time() - t0 < 600:
        for recs in cons.poll(timeout_ms=1000, max_records=10000).values():
            count += len(recs)
            nbytes += sum(len(r.value or b"") for r in recs)
    out[topic] = {"records": count, "bytes": nbytes, "seconds": time.time() - t0}
    cons.close()


def parallel_read(func, pairs, partitions, expected):
    out = {}
    threads = [threading.Thread(target=func, args=(bs, topic, partitions, expected, out)) for bs, topic in pairs]
    t0 = time.time()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return time.time() - t0, out


def driver_heap():
    """(peak heap used, old generation after the last collection, max heap) in MB of the job's driver
    JVM since the last call, which resets the peaks: local mode runs the executors' tasks in it too,
    so this is all the heap reconcile used. G1 fills the heap before it collects, so the peak says
    little; what survives a collection is what the job holds."""
    from pyspark.sql import SparkSession
    mgmt = driver_jvm(SparkSession.builder.getOrCreate()).java.lang.management.ManagementFactory
    peak = old = 0
    for pool in mgmt.getMemoryPoolMXBeans():
        if str(pool.getType().name()) == "HEAP":
            peak += pool.getPeakUsage().getUsed()
            pool.resetPeakUsage()
            if "Old" in str(pool.getName()) and pool.getCollectionUsage() is not None:
                old = pool.getCollectionUsage().getUsed()
    return round(peak / 1e6), round(old / 1e6), round(mgmt.getMemoryMXBean().getHeapMemoryUsage().getMax() / 1e6)


def breakdown(master, a_bs, b_bs, partitions):
    """Seconds of the Kafka source alone and with the record hash, in the session the job used."""
    from mm2_smoke import digest
    from mm2_smoke.spark import read_range
    from pyspark.sql import SparkSession
    spark = SparkSession.getActiveSession() or SparkSession.builder.master(master).getOrCreate()
    from kafka.admin import KafkaAdminClient
    out = {}
    frames = []
    for bs, topic in ((a_bs, TOPIC), (b_bs, "A." + TOPIC)):
        adm = KafkaAdminClient(bootstrap_servers=bs)
        from mm2_smoke import kafka_util as ku
        ends = ku.end_offsets(adm, topic, partitions)
        adm.close()
        frames.append(read_range(spark, bs, {}, topic, {p: (0, ends[p]) for p in range(partitions)}))
    both = frames[0].unionByName(frames[1])
    t0 = time.time()
    both.groupBy("partition").count().collect()
    out["kafka_source_count_s"] = round(time.time() - t0, 2)
    t0 = time.time()
    (both.selectExpr(digest.SPARK_RECORD_HASH + " AS record_hash")
     .selectExpr(digest.SPARK_HASH_LOW + " AS lo").groupBy().sum("lo").collect())
    out["kafka_source_and_hash_s"] = round(time.time() - t0, 2)
    return out


def smoke_subprocess(cfg, report_dir, master, driver_jit):
    """The smoke job as the role runs it in local mode: a new process, Spark's JVM started by it."""
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "smoke"))
    t0 = time.time()
    proc = subprocess.run([sys.executable, "-m", "mm2_smoke", "--config", cfg, "--master", master, "--report-dir",
                           report_dir, "--driver-jit", driver_jit, "--quiet"],
                          capture_output=True, text=True, env=env, timeout=600, check=False)
    wall = time.time() - t0
    paths = [line.split("report: ", 1)[1].split(", ")[0] for line in proc.stdout.splitlines()
             if line.startswith("report: ")]
    if not paths:
        raise RuntimeError("smoke job wrote no report: %s %s" % (proc.stdout, proc.stderr[-2000:]))
    with open(paths[0]) as fh:
        return json.load(fh), wall


def job_config(lab, path, flows, checks):
    with open(path, "w") as fh:
        json.dump(lab.job_config(flows, checks), fh, default=str)
    return path


def wait_records(lab, cluster, topic, partitions, expected, timeout):
    from kafka import KafkaConsumer, TopicPartition
    lab.wait_topic(cluster, topic, timeout)
    cons = KafkaConsumer(bootstrap_servers=lab.bootstrap(cluster))
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    deadline = time.time() + timeout
    t0 = time.time()
    try:
        while time.time() < deadline:
            total = sum(cons.end_offsets(tps).values())
            if total >= expected:
                return time.time() - t0
            log("mirrored %d/%d" % (total, expected))
            time.sleep(5)
    finally:
        cons.close()
    raise RuntimeError("only part of %s mirrored after %ss" % (topic, timeout))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--records", type=int, default=1000000)
    ap.add_argument("--record-size", type=int, default=1024)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--quick", action="store_true", help="100000 records (unless --records is given)")
    ap.add_argument("--timeout", type=int, default=1200)
    ap.add_argument("--kafka-python", action="store_true", help="also time a kafka-python raw read (slow)")
    ap.add_argument("--no-json", action="store_true")
    ap.add_argument("--keep-reports", metavar="DIR", help="write the job's reports (JSON, PNG, HTML) to DIR")
    ap.add_argument("--smoke-rounds", type=int, default=2,
                    help="rounds of the smoke job, each with the driver JIT c1 and full, in turns first (default 2)")
    args = ap.parse_args()
    if args.quick and "--records" not in sys.argv:
        args.records = 100000
    lab = harness.Lab(heap="-Xmx1g -Xms256m")
    try:
        return bench(args, lab)
    finally:
        lab.stop()
        subprocess.run(["rm", "-rf", lab.tmp], check=False)


def bench(args, lab):
    from mm2_smoke import cli
    t_begin = time.time()
    lab.start_brokers()
    a_bs, b_bs = lab.bootstrap("A"), lab.bootstrap("B")
    from kafka.admin import KafkaAdminClient
    for bs, topics in ((a_bs, [TOPIC, "mm2-smoke"]),):
        adm = KafkaAdminClient(bootstrap_servers=bs)
        adm.create_topics({t: {"num_partitions": args.partitions if t == TOPIC else 3, "replication_factor": 1}
                           for t in topics})
        adm.wait_for_topics(topics)
        adm.close()
    log("filling %s with %d x %d B" % (TOPIC, args.records, args.record_size))
    subprocess.run([lab.bin("kafka-producer-perf-test.sh"), "--topic", TOPIC, "--num-records", str(args.records),
                    "--record-size", str(args.record_size), "--throughput", "-1", "--producer-props",
                    "bootstrap.servers=" + a_bs, "acks=1", "batch.size=1048576", "linger.ms=20"],
                   check=True, capture_output=True, timeout=args.timeout)
    flows = [{"source": "A", "target": "B", "topics": [TOPIC, "mm2-smoke.*"], "tasks_max": args.partitions,
              "properties": {"producer.override.batch.size": 1048576, "producer.override.linger.ms": 20}}]
    lab.start_mm2(flows)
    mirror_s = wait_records(lab, "B", "A." + TOPIC, args.partitions, args.records, args.timeout)
    lab.stop_mm2()
    log("mirrored in %.1fs; MM2 stopped" % mirror_s)

    pairs = [(a_bs, TOPIC), (b_bs, "A." + TOPIC)]
    raw_s, raw = parallel_read(raw_read_confluent, pairs, args.partitions, args.records)
    log("raw read (confluent-kafka, 2 topics in parallel): %.2fs %s" % (raw_s, raw))
    kp_s = None
    if args.kafka_python:
        kp_s, kp = parallel_read(raw_read_kafka_python, pairs, args.partitions, args.records)
        log("raw read (kafka-python): %.2fs %s" % (kp_s, kp))

    tmp = tempfile.mkdtemp(prefix="smoke_reconcile.", dir=lab.tmp)
    if args.keep_reports:
        os.makedirs(args.keep_reports, exist_ok=True)
        tmp = os.path.abspath(args.keep_reports)
    cfg = job_config(lab, os.path.join(tmp, "reconcile.json"), flows,
                     {"topics": [TOPIC], "reconcile": {"topics": [TOPIC], "settle_s": 0}})
    t0 = time.time()
    doc = cli.run(cli.parse_args(["--config", cfg, "--mode", "reconcile", "--master", args.master,
                                  "--report-dir", tmp, "--quiet"]))
    rec_job_s = time.time() - t0
    rec = [c for c in doc["checks"] if c["check"] == "reconcile"]
    if doc["verdict"] != "pass" or not rec:
        raise RuntimeError("reconcile did not pass: %s" % [c.get("messages") for c in doc["checks"]]
                           + str(doc.get("errors")))
    rec_s = rec[0]["duration_s"]
    heap_peak, heap_old, heap_max = driver_heap()
    # a second run: Spark session already up (the JVM start is paid once per job)
    t0 = time.time()
    doc2 = cli.run(cli.parse_args(["--config", cfg, "--mode", "reconcile", "--master", args.master,
                                   "--report-dir", tmp, "--quiet"]))
    rec2_s = [c for c in doc2["checks"] if c["check"] == "reconcile"][0]["duration_s"]
    heap2_peak, heap2_old = driver_heap()[:2]
    log("reconcile: job %.1fs (check %.1fs), warm check %.1fs" % (rec_job_s, rec_s, rec2_s))
    where = breakdown(args.master, a_bs, b_bs, args.partitions)
    log("where the time goes (warm session): %s" % where)

    # smoke verdict time vs replication delay (MM2 running again, mm2-smoke created before it started)
    lab.start_mm2(flows)
    lab.wait_topic("B", "A.mm2-smoke", 120)
    smoke_cfg = job_config(lab, os.path.join(tmp, "smoke.json"), flows, {
        "topics": ["mm2-smoke"], "records": 100, "refresh_interval_s": 5,
        "timeouts": {"markers": 120, "offsets": 120, "configs": 120, "new_topic": 60, "heartbeats": 60}})
    smoke_runs = {jit: [] for jit in DRIVER_JITS}
    for number in range(args.smoke_rounds):
        # The full JIT goes first in odd-numbered rounds: a machine that grows quieter favours neither
        order = DRIVER_JITS[::-1] if number % 2 == 0 else DRIVER_JITS
        for place, jit in enumerate(order, 1):
            run_doc, wall = smoke_subprocess(smoke_cfg, tmp, args.master, jit)
            entry = smoke_entry(run_doc, wall, number + 1, place)
            if entry["spark"].get("driver_jit") != jit:
                raise RuntimeError("smoke job asked for driver JIT %s ran with %s" % (jit, entry["spark"]))
            log("smoke round %d, driver JIT %s: verdict %s, %.2fs after replication"
                % (number + 1, jit, entry["verdict"], entry["verdict_minus_replication_delay_s"]))
            smoke_runs[jit].append(entry)
    lab.stop_mm2()
    medians = {jit: median_smoke(runs) for jit, runs in smoke_runs.items()}
    smoke = medians[DRIVER_JIT["smoke"]]
    lat = smoke["latency_ms"]
    by_check = smoke["check_seconds"]
    by_jit = {jit: {"median_verdict_minus_replication_delay_s": medians[jit]["verdict_minus_replication_delay_s"],
                    "runs": runs} for jit, runs in smoke_runs.items()}
    jit_ratio = (by_jit["c1"]["median_verdict_minus_replication_delay_s"]
                 / by_jit["full"]["median_verdict_minus_replication_delay_s"])

    ratio = rec_s / raw_s
    ratio_warm = rec2_s / raw_s
    mb = args.records * args.record_size / 1e6
    lines = ["", "smoke_reconcile: %d records x %d B, %d partitions, 2 topics (%.0f MB each), %d cores, Spark %s %s"
             % (args.records, args.record_size, args.partitions, mb, os.cpu_count(),
                (doc.get("spark") or {}).get("version"), args.master),
             "  raw read, confluent-kafka (both topics in parallel): %7.2fs  (%.0f MB/s)" % (raw_s, 2 * mb / raw_s),
             "  raw read, kafka-python (reference)                 : %s" % (
                 "%7.2fs" % kp_s if kp_s else "not run (--kafka-python)"),
             "  reconcile check, first in a new Spark session      : %7.2fs  = %.2fx raw read" % (rec_s, ratio),
             "  reconcile check, second run (JVM warm)            : %7.2fs  = %.2fx raw read" % (rec2_s, ratio_warm),
             "  reconcile job wall time (first run, Spark start)  : %7.2fs" % rec_job_s,
             "  per GB read (both topics, %.2f GB): %.2fs cold, %.2fs warm; driver heap of %d MB: peak %d / %d MB, "
             "old generation after the last GC %d / %d MB (first / second run)" % (
                 2 * mb / 1000, rec_s / (2 * mb / 1000), rec2_s / (2 * mb / 1000), heap_max, heap_peak, heap2_peak,
                 heap_old, heap2_old),
             "  reconcile time, warm session: Kafka source alone %.2fs, + record hash %.2fs, whole check %.2fs"
             % (where["kafka_source_count_s"], where["kafka_source_and_hash_s"], rec2_s),
             "  smoke verdict %s in %.1fs (process wall %.1fs, Spark JVM start included); replication delay present:"
             " marker latency p50 %s ms, max %s ms" % (
                 smoke["verdict"], smoke["duration_s"], smoke["process_wall_s"], lat["p50"], lat["max"]),
             "  smoke verdict time minus replication delay (max)   : %7.2fs  (markers check %.1fs, new topic "
             "%.1fs with refresh.topics.interval 5s, configs %.1fs)" % (
                 smoke["verdict_minus_replication_delay_s"], by_check["markers"], by_check.get("new_topics", 0),
                 by_check.get("configs", 0)),
             "  markers check after the markers arrived: waited %ss for the Spark session, compares took %s s; "
             "the session took %ss to start and %ss to warm up" % (
                 smoke["markers_spark_wait_s"], smoke["markers_compare_s"],
                 (smoke["spark"] or {}).get("session_s"), (smoke["spark"] or {}).get("warm_up_s")),
             "  smoke verdict minus replication delay by the driver's JIT, median of %d: c1 %.2fs, full %.2fs = "
             "%.2fx (each run: %s)" % (
                 args.smoke_rounds, by_jit["c1"]["median_verdict_minus_replication_delay_s"],
                 by_jit["full"]["median_verdict_minus_replication_delay_s"], jit_ratio,
                 "; ".join("%s round %d place %d %.2fs"
                           % (jit, e["round"], e["place"], e["verdict_minus_replication_delay_s"])
                           for jit, v in by_jit.items() for e in v["runs"])),
             "smoke_reconcile: reconcile = %.2fx the raw read (%.2fx on a warm Spark JVM)" % (ratio, ratio_warm)]
    print("\n".join(lines))
    result = {
        "bench": "smoke_reconcile", "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "records": args.records, "record_size": args.record_size, "partitions": args.partitions,
        "master": args.master, "spark": repo_relative(doc.get("spark")), "quick": args.quick,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "mirror_seconds": round(mirror_s, 2),
        "raw_read_confluent_s": round(raw_s, 3), "raw_read_confluent": raw,
        "raw_read_kafka_python_s": kp_s and round(kp_s, 3),
        "reconcile_check_s": rec_s, "reconcile_check_warm_s": rec2_s, "reconcile_job_s": round(rec_job_s, 2),
        "ratio_reconcile_to_raw": round(ratio, 3), "ratio_reconcile_warm_to_raw": round(ratio_warm, 3),
        "reconcile_s_per_gb": round(rec_s / (2 * mb / 1000), 3), "reconcile_warm_s_per_gb": round(rec2_s / (2 * mb / 1000), 3),
        "driver_heap_mb": {"peak_first": heap_peak, "peak_second": heap2_peak, "old_after_gc_first": heap_old,
                           "old_after_gc_second": heap2_old, "max": heap_max,
                           "spark.driver.memory": os.environ.get("MM2_SMOKE_DRIVER_MEMORY", "1g")},
        "reconcile_partitions": rec[0]["details"]["partitions"],
        "reconcile_time_warm": dict(where, whole_check_s=rec2_s),
        "smoke": smoke,
        "smoke_by_driver_jit": by_jit, "smoke_ratio_c1_to_full": round(jit_ratio, 3),
        "elapsed_s": round(time.time() - t_begin, 1),
    }
    if not args.no_json:
        os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
        name = "smoke_reconcile-%s%s.json" % (time.strftime("%Y%m%d-%H%M%S"), "-quick" if args.quick else "")
        path = os.path.join(HERE, "results", name)
        with open(path, "w") as fh:
            json.dump(result, fh, indent=2, default=str)
            fh.write("\n")
        print("results: %s" % os.path.relpath(path, REPO))
    return 0 if all(e["verdict"] == "pass" for v in by_jit.values() for e in v["runs"]) else 1


def smoke_entry(sdoc, wall, number, place):
    """One smoke job's figures: the verdict's time, the replication delay it waited for, its checks."""
    lat = sdoc["latency_ms"]
    markers = [c for c in sdoc["checks"] if c["check"] == "markers"][0]
    return {"round": number, "place": place, "verdict": sdoc["verdict"], "duration_s": sdoc["duration_s"],
            "process_wall_s": round(wall, 2), "spark": repo_relative(sdoc.get("spark")), "latency_ms": lat,
            "check_seconds": {c["check"]: c["duration_s"] for c in sdoc["checks"]},
            "markers_spark_wait_s": markers["details"].get("spark_wait_s"),
            "markers_compare_s": markers["details"].get("compare_s"),
            "verdict_minus_replication_delay_s": round(sdoc["duration_s"] - lat["max"] / 1000.0, 2)}


def median_smoke(runs):
    """The entry of the median run by verdict minus replication delay (the lower middle one)."""
    ranked = sorted(runs, key=lambda run_: run_["verdict_minus_replication_delay_s"])
    return ranked[(len(ranked) - 1) // 2]


if __name__ == "__main__":
    sys.exit(main())
