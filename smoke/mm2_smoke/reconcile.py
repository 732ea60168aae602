"""Reconcile mode: Spark's Kafka source reads source and target topics, one task per partition,
and compares per-partition record counts and an order-insensitive content digest (digest.py).

Offsets are fixed before Spark reads (``startingOffsets``/``endingOffsets`` as JSON per partition):
the whole topic (earliest..latest, after waiting up to ``reconcile.settle_s`` for the target's
per-partition offset spans to match the source's), a timestamp window (``from_ms``/``to_ms``: both
sides, since MM2 keeps record timestamps), or explicit per-side offset ranges.
"""

import time

from . import config as cfgmod
from . import digest
from . import kafka_util as ku
from .common import finish, result
from .spark import read_range

SOURCE, TARGET = "source", "target"


def read_side(spark, side, bootstrap, props, topic, ranges):
    """DataFrame (side, partition, offset, timestamp, key, record_hash) over {partition: (start, end)}."""
    df = read_range(spark, bootstrap, props, topic, ranges)
    if df is None:
        return None
    return df.selectExpr("'%s' AS side" % side, "partition", "offset", "unix_millis(timestamp) AS ts",
                         "key", "length(value) AS value_bytes",
                         digest.SPARK_RECORD_HASH + " AS record_hash")


def ranges_for(adm, topic, parts, window, side):
    window = window or {}
    if window.get(side + "_offsets"):
        spec = window[side + "_offsets"]
        return {int(p): (int(v[0]), int(v[1])) for p, v in spec.items()}
    lo = (ku.offsets_for_timestamp(adm, topic, parts, window["from_ms"]) if window.get("from_ms") is not None
          else ku.end_offsets(adm, topic, parts, "earliest"))
    hi = (ku.offsets_for_timestamp(adm, topic, parts, window["to_ms"]) if window.get("to_ms") is not None
          else ku.end_offsets(adm, topic, parts, "latest"))
    return {p: (lo[p], max(lo[p], hi[p])) for p in range(parts)}


def preview(data, limit=40):
    if data is None:
        return None
    try:
        text = bytes(data).decode("utf-8")
        return text if len(text) <= limit else text[:limit] + "..."
    except UnicodeDecodeError:
        return "0x" + bytes(data[:limit // 2]).hex()


class TopicReconcile(object):
    def __init__(self, cfg, flow, topic, progress, clients):
        self.cfg = cfg
        self.clients = clients
        self.flow = flow
        self.topic = topic
        self.remote = cfgmod.remote_topic_name(flow, topic)
        self.progress = progress
        rc = cfg["checks"]["reconcile"]
        self.window = rc.get("window") or None
        self.samples = int(rc.get("samples", 5))
        self.settle_s = float(rc.get("settle_s", 30))

    def offsets(self):
        f = self.flow
        src = self.clients[f["source"]].admin("mm2-smoke-admin")
        tgt = self.clients[f["target"]].admin("mm2-smoke-admin")
        try:
            ps, pt = ku.partitions_of(src, self.topic), ku.partitions_of(tgt, self.remote)
            if ps is None or pt is None:
                return ps, pt, None, None
            src_r = ranges_for(src, self.topic, ps, self.window, SOURCE)
            tgt_r = ranges_for(tgt, self.remote, pt, self.window, TARGET)
            if not self.window:
                # whole topic: give in-flight replication a moment to land (spans compared by offsets)
                deadline = time.time() + self.settle_s
                while time.time() < deadline and any(
                        (src_r[p][1] - src_r[p][0]) != (tgt_r.get(p, (0, 0))[1] - tgt_r.get(p, (0, 0))[0])
                        for p in src_r):
                    self.progress.line("settle" + self.remote, "flow %s: %s -> %s: waiting up to %ds for the target "
                                       "to catch up before reading" % (f["name"], self.topic, self.remote,
                                                                       self.settle_s))
                    time.sleep(1)
                    tgt_r = ranges_for(tgt, self.remote, pt, self.window, TARGET)
            return ps, pt, src_r, tgt_r
        finally:
            src.close()
            tgt.close()

    def run(self, spark):
        f = self.flow
        res = result("reconcile", f, self.topic)
        res["remote_topic"] = self.remote
        ps, pt, src_r, tgt_r = self.offsets()
        where = "flow %s topic %s -> %s" % (f["name"], self.topic, self.remote)
        if ps is None:
            res["messages"].append("%s: topic %s does not exist on source %s" % (where, self.topic, f["source"]))
            return finish(res, "error")
        if pt is None:
            res["messages"].append("%s: remote topic %s does not exist on target %s"
                                   % (where, self.remote, f["target"]))
            return finish(res)
        if ps != pt:
            res["messages"].append("%s: %d partitions on source, %d on target" % (where, ps, pt))
        frames = [d for d in (
            read_side(spark, SOURCE, f["source_bootstrap_servers"], cfgmod.cluster_props(self.cfg, f["source"]),
                      self.topic, src_r),
            read_side(spark, TARGET, f["target_bootstrap_servers"], cfgmod.cluster_props(self.cfg, f["target"]),
                      self.remote, tgt_r)) if d is not None]
        if not frames:
            rows = []
        else:
            df = frames[0] if len(frames) == 1 else frames[0].unionByName(frames[1])
            window = self.window or {}
            if window.get("from_ms") is not None:
                df = df.where("ts >= %d" % int(window["from_ms"]))
            if window.get("to_ms") is not None:
                df = df.where("ts < %d" % int(window["to_ms"]))
            self.progress.line("spark" + self.remote, "flow %s: Spark reading %s (%d partitions) and %s (%d)"
                               % (f["name"], self.topic, ps, self.remote, pt), force=True)
            with SparkProgress(spark, self.progress, "flow %s: %s -> %s" % (f["name"], self.topic, self.remote)):
                rows = (df.selectExpr("side", "partition", digest.SPARK_HASH_LOW + " AS lo",
                                      digest.SPARK_HASH_HIGH + " AS hi")
                        .groupBy("side", "partition")
                        .agg({"*": "count", "lo": "sum", "hi": "sum"}).collect())
        stats = {}
        for row in rows:
            d = row.asDict()
            stats[(d["side"], d["partition"])] = (d["count(1)"], digest.format_digest(d["sum(lo)"], d["sum(hi)"]))
        parts_out, bad = [], []
        for part in range(max(ps, pt)):
            s = stats.get((SOURCE, part), (0, digest.format_digest(0, 0)))
            t = stats.get((TARGET, part), (0, digest.format_digest(0, 0)))
            item = {"partition": part, "source_count": s[0], "target_count": t[0], "source_digest": s[1],
                    "target_digest": t[1], "source_offsets": list(src_r.get(part, (0, 0))),
                    "target_offsets": list(tgt_r.get(part, (0, 0))), "match": s == t}
            parts_out.append(item)
            if s != t:
                bad.append(item)
        if bad and frames:
            self.differences(df, bad)
        dup_fails = cfgmod.duplicates_fail(self.cfg, f)
        for item in bad:
            text = "%s partition %d: source %d records, target %d: %d missing, %d duplicated, %d extra" % (
                where, item["partition"], item["source_count"], item["target_count"], item.get("missing_count", 0),
                item.get("duplicated_count", 0), item.get("extra_count", 0))
            for kind in ("missing", "duplicated", "extra"):
                if item.get(kind):
                    text += "; %s on target: %s" % (kind, ", ".join(
                        "%s offset %s key %r ts %s" % (r["side"], r["offset"], r["key"], r["timestamp"])
                        for r in item[kind]))
            only_dups = item.get("duplicated_count") and not (item.get("missing_count") or item.get("extra_count"))
            if only_dups and not dup_fails:
                res.setdefault("notes", []).append(text + " (duplicates reported, not a failure: at-least-once "
                                                          "delivery repeats records after a crash)")
            else:
                res["messages"].append(text)
        res["details"] = {"partitions": parts_out, "window": self.window,
                          "source_records": sum(i["source_count"] for i in parts_out),
                          "target_records": sum(i["target_count"] for i in parts_out),
                          "missing": sum(i.get("missing_count", 0) for i in parts_out),
                          "duplicated": sum(i.get("duplicated_count", 0) for i in parts_out),
                          "extra": sum(i.get("extra_count", 0) for i in parts_out),
                          "duplicates_fail": dup_fails}
        return finish(res)

    def differences(self, df, bad):
        """Per mismatching partition: how many source records are missing on the target, how many
        arrived more than once, how many the source never had, and up to ``samples`` of each kind
        from every such partition (one partition cannot use up the others' samples)."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F
        parts = [i["partition"] for i in bad]
        n_s = F.sum(F.when(F.col("side") == SOURCE, 1).otherwise(0))
        n_t = F.sum(F.when(F.col("side") == TARGET, 1).otherwise(0))
        per = (df.where(F.col("partition").isin(parts))
               .groupBy("partition", "record_hash")
               .agg(n_s.alias("n_s"), n_t.alias("n_t"),
                    F.min(F.when(F.col("side") == SOURCE, F.col("offset"))).alias("off_s"),
                    F.min(F.when(F.col("side") == TARGET, F.col("offset"))).alias("off_t"),
                    F.first("key").alias("key"), F.first("ts").alias("ts"))
               .where("n_s != n_t")
               .withColumn("kind", F.when(F.col("n_s") == 0, "extra")
                           .when(F.col("n_t") > F.col("n_s"), "duplicated").otherwise("missing"))
               .withColumn("n", F.abs(F.col("n_t") - F.col("n_s")))
               .withColumn("rank", F.row_number().over(
                   Window.partitionBy("partition", "kind").orderBy(F.coalesce("off_s", "off_t"), "record_hash")))
               .withColumn("total", F.sum("n").over(Window.partitionBy("partition", "kind")))
               .where(F.col("rank") <= self.samples))
        by_part = {i["partition"]: i for i in bad}
        for item in bad:
            for kind in ("missing", "duplicated", "extra"):
                item[kind + "_count"] = 0
        for row in per.collect():
            item = by_part[row["partition"]]
            kind = row["kind"]
            item[kind + "_count"] = int(row["total"])
            side, off = (SOURCE, row["off_s"]) if kind == "missing" else (TARGET, row["off_t"])
            item.setdefault(kind, []).append({
                "side": side, "offset": off, "key": preview(row["key"]), "timestamp": row["ts"],
                "record_hash": digest.hex64(row["record_hash"]), "source_copies": row["n_s"], "target_copies": row["n_t"]})


class SparkProgress(object):
    """Progress lines while a Spark action runs (a reconcile of millions of records takes minutes):
    the active stages' finished and total tasks, from Spark's status tracker."""

    def __init__(self, spark, progress, what, every=5.0):
        import threading
        self.tracker = spark.sparkContext.statusTracker()
        self.progress = progress
        self.what = what
        self.every = every
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def loop(self):
        t0 = time.time()
        while not self.done.wait(self.every):
            stages = [self.tracker.getStageInfo(i) for i in self.tracker.getActiveStageIds()]
            tasks = ", ".join("stage %d: %d/%d tasks" % (st.stageId, st.numCompletedTasks, st.numTasks)
                              for st in stages if st is not None)
            self.progress.line("spark-progress" + self.what, "%s: Spark %s (%ds)" % (
                self.what, tasks or "starting", time.time() - t0), force=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join(5)
        return False


def run_reconcile(cfg, progress, spark):
    clients = ku.clients_for(cfg)
    with ku.kerberos_login(cfg, clients) as login:
        out = _reconcile(cfg, progress, spark, clients)
    out["kerberos"] = login
    return out


def _reconcile(cfg, progress, spark, clients):
    down = ku.unreachable(clients)
    checks = []
    for flow in cfg["enabled_flows"]:
        if flow["source"] in down or flow["target"] in down:
            continue
        for topic in cfgmod.reconcile_topics_for(cfg, flow):
            try:
                checks.append(TopicReconcile(cfg, flow, topic, progress, clients).run(spark))
            except Exception as exc:  # noqa: BLE001 - this topic could not be reconciled
                res = result("reconcile", flow, topic)
                res["messages"].append("flow %s topic %s: reconcile could not run: %s: %s"
                                       % (flow["name"], topic, type(exc).__name__, str(exc).splitlines()[0]))
                checks.append(finish(res, "error"))
    return {"checks": checks, "errors": [str(exc) for _alias, exc in sorted(down.items())],
            "unmapped_properties": {a: c.unmapped for a, c in sorted(clients.items()) if c.unmapped}}
