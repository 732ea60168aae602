"""The markers check: records with a run id produced on the source, read back on the target."""

import os
import random
import time

from . import config as cfgmod
from . import kafka_util as ku
from . import markers
from . import stats
from .common import MAX_LISTED, finish, first_diff, listed, now_ms, result
from .markers import RUN_HEADER, SEQ_HEADER

BIN_HEADER = "mm2-smoke-bin"
PROBE_HEADER = "mm2-smoke-probe"
# How often the target's end offsets are read while markers replicate: the latency's resolution.
WATCH_EVERY_S = 0.2


class Watermarks(object):
    """When each offset of a topic became readable: spans (partition, lo, hi, seen_ms) from end
    offsets read every WATCH_EVERY_S, starting at ``start`` ({partition: offset})."""

    def __init__(self, adm, topic, start):
        self.adm = adm
        self.topic = topic
        self.start = dict(start)
        self.ends = dict(start)
        self.spans = []

    def poll(self, parts):
        ends = ku.end_offsets(self.adm, self.topic, parts)
        seen = now_ms()
        for part, end in ends.items():
            self.start.setdefault(part, 0)
            prev = self.ends.get(part, self.start[part])
            if end > prev:
                self.spans.append((part, prev, end, seen))
                self.ends[part] = end
        return self

    def count(self, part):
        return self.ends.get(part, 0) - self.start.get(part, 0)

    def ranges(self):
        return {p: (self.start[p], self.ends.get(p, self.start[p])) for p in self.start}


class MarkersCheck(object):
    """FlowRun's markers check (the flow's clients, config and results are FlowRun's)."""

    def markers(self, topic, written=None):
        """(result, sent, received); ``written(sent)`` is called once the markers are on the source."""
        res = result("markers", self.flow, topic)
        remote = cfgmod.remote_topic_name(self.flow, topic)
        res["remote_topic"] = remote
        timeout = float(self.checks["timeouts"]["markers"])
        src, tgt = self.admin("source"), self.admin("target")
        sent, received, discovery = {}, {}, None
        try:
            parts = self.ensure_topic(src, topic, self.checks["partitions"])
            rparts = ku.partitions_of(tgt, remote)
            if not rparts:
                discovery = self.discover(topic, remote, tgt)
                rparts = ku.partitions_of(tgt, remote)
            if not rparts:
                similar = sorted(t for t in tgt.list_topics() if t.endswith(topic) and t != remote)
                res["messages"].append(
                    "flow %s: remote topic %r (%s) does not exist on target %s after %ds%s"
                    % (self.name, remote, self.policy_text(), self.flow["target"], self.new_topic_timeout(),
                       "; topics there ending in %r: %s" % (topic, ", ".join(similar)) if similar else ""))
                return finish(res), sent, received
            if discovery is not None:
                self.discovery.append({"flow": self.name, "topic": topic, "remote_topic": remote,
                                       "seconds": discovery})
            start = ku.end_offsets(tgt, remote, rparts)
            sent = self.produce(topic, parts)
            if written is not None:
                written(sent)
            rows, extras, extra_count, timing = self.collect(tgt, remote, rparts, start, sent, timeout)
            received = {r["seq"]: [{"partition": c["t_partition"], "offset": c["t_offset"]} for c in r["copies_at"]]
                        for r in rows if r["copies"]}
            self.evaluate(res, topic, remote, sent, rows, extras, extra_count)
            res["details"]["discovery_s"] = discovery
            res["details"].update(timing)
        finally:
            src.close()
            tgt.close()
        return finish(res), sent, received

    def discover(self, topic, remote, tgt):
        """Seconds MM2 took to find a topic new to it and deliver its first record, None if it did
        not within the new-topic timeout.  A probe record (no run header, so never a marker) starts
        the clock; the markers are produced only after, so their latency is replication alone."""
        prod = self.clients["source"].producer("mm2-smoke-producer")
        try:
            prod.send(topic, key=b"probe", value=self.run_id.encode(), partition=0,
                      headers=[(PROBE_HEADER, self.run_id.encode())]).get(60)
        finally:
            prod.close(10)
        t0 = time.time()
        deadline = t0 + self.new_topic_timeout()
        while time.time() < deadline:
            parts = ku.partitions_of(tgt, remote)
            if parts and sum(ku.end_offsets(tgt, remote, parts).values()) > 0:
                return round(time.time() - t0, 2)
            self.progress.line(self.name + remote + "discover", "flow %s: waiting for MM2 to discover %s (remote "
                               "%s on %s, %ds/%ds)" % (self.name, topic, remote, self.flow["target"],
                                                       time.time() - t0, deadline - t0))
            time.sleep(WATCH_EVERY_S)
        return None

    def policy_text(self):
        alias = self.flow.get("replication_policy_alias")
        return "%s replication policy" % (alias or self.flow.get("replication_policy") or "default")

    def produce(self, topic, parts):
        prod = self.clients["source"].producer("mm2-smoke-producer")
        rng = random.Random(os.urandom(8))
        sent, futures = {}, []
        try:
            for seq in range(self.checks["records"]):
                key = ("%s:%d" % (self.run_id, seq)).encode()
                value = bytes(rng.getrandbits(8) for _i in range(self.checks["payload_bytes"]))
                headers = [(RUN_HEADER, self.run_id.encode()), (SEQ_HEADER, str(seq).encode()),
                           (BIN_HEADER, bytes([seq % 256, 0, 255]))]
                ts = now_ms()
                fut = prod.send(topic, key=key, value=value, headers=headers, partition=seq % parts,
                                timestamp_ms=ts)
                sent[seq] = {"key": key, "value": value, "headers": headers, "timestamp": ts}
                futures.append((seq, fut))
            prod.flush(60)
            for seq, fut in futures:
                md = fut.get(60)
                sent[seq]["partition"] = md.partition
                sent[seq]["offset"] = md.offset
        finally:
            prod.close(10)
        return sent

    def collect(self, tgt, remote, rparts, start, sent, timeout):
        """Watch the remote topic's end offsets (when each offset became readable: the latency
        clock) and let Spark compare once they have grown by at least the markers sent to each
        partition; again when they grow further, until every marker is found or the time is up."""
        want = {}
        for item in sent.values():
            want[item["partition"]] = want.get(item["partition"], 0) + 1
        watch = Watermarks(tgt, remote, start)
        t0 = time.time()
        deadline = t0 + timeout
        rows, extras, extra_count, read_at = [], [], 0, None
        # where the check's time goes after the markers arrived (bench/smoke_reconcile prints it)
        timing = {"spark_wait_s": None, "compare_s": []}
        spark = None

        def compare():
            started = time.time()
            out = markers.compare(spark, self.tgt_bs, self.tgt_props, remote, watch.ranges(), watch.spans, sent,
                                  self.run_id)
            timing["compare_s"].append(round(time.time() - started, 2))
            return out

        while True:
            watch.poll(rparts)
            expired = time.time() >= deadline
            grown = all(watch.count(p) >= n for p, n in want.items())
            if (grown and watch.ends != read_at) or expired:
                read_at = dict(watch.ends)
                if spark is None:
                    waited = time.time()
                    spark = self.spark.get()
                    timing["spark_wait_s"] = round(time.time() - waited, 2)
                rows, extras, extra_count = compare()
                found = sum(1 for r in rows if r["copies"])
                if found == len(sent):
                    # duplicates arriving right behind the last marker are counted too
                    time.sleep(1.0)
                    watch.poll(rparts)
                    if watch.ends != read_at:
                        rows, extras, extra_count = compare()
                    break
                if expired:
                    break
            self.progress.line(self.name + remote, "flow %s: markers -> %s: %d of %d new records on %s (%ds/%ds)"
                               % (self.name, remote, sum(watch.count(p) for p in want), len(sent),
                                  self.flow["target"], time.time() - t0, timeout))
            time.sleep(WATCH_EVERY_S)
        return rows, extras, extra_count, timing

    def evaluate(self, res, topic, remote, sent, rows, extras, extra_count):
        """Messages from the flags Spark computed per marker (markers.compare)."""
        msgs = res["messages"]
        where = "flow %s topic %s -> %s" % (self.name, topic, remote)
        by_seq = {r["seq"]: r for r in rows}
        missing = sorted(s for s in sent if not by_seq.get(s, {}).get("copies"))
        if missing:
            msgs.append("%s: %d of %d markers missing after %ss: %s" % (
                where, len(missing), len(sent), self.checks["timeouts"]["markers"],
                listed(missing, lambda s: "seq %d (source partition %d offset %d)"
                        % (s, sent[s]["partition"], sent[s]["offset"]))))
        dups = [r for r in rows if r["copies"] > 1]
        if dups:
            text = "%s: %d markers duplicated: %s" % (where, len(dups), listed(
                dups, lambda r: "seq %d seen %d times (target %s)" % (
                    r["seq"], r["copies"], ", ".join("partition %(t_partition)d offset %(t_offset)d" % c for c in r["copies_at"]))))
            if cfgmod.duplicates_fail(self.cfg, self.flow):
                msgs.append(text)
            else:
                res["notes"] = [text + " (reported, not a failure: at-least-once delivery)"]
        bad = []
        for r in rows:
            if not r["copies"]:
                continue
            want = sent[r["seq"]]
            here = "%s partition %d offset %d (seq %d, source offset %d)" % (
                remote, r["t_partition"], r["t_offset"], r["seq"], want["offset"])
            if r["t_partition"] != want["partition"]:
                bad.append("%s: partition %d differs from source partition %d"
                           % (here, r["t_partition"], want["partition"]))
            if not r["key_ok"]:
                bad.append("%s: key differs from source (byte %s)" % (here, first_diff(r["t_key"], want["key"])))
            if not r["value_ok"]:
                got = r["t_value"]
                pos = first_diff(got, want["value"])
                detail = "length %d != %d" % (len(got or b""), len(want["value"])) \
                    if got is None or pos >= min(len(got), len(want["value"])) \
                    else "byte %d: 0x%02x != source 0x%02x" % (pos, got[pos], want["value"][pos])
                bad.append("%s: value differs from source (%s)" % (here, detail))
            if not r["headers_ok"]:
                bad.append("%s: headers differ from source (%s != %s)"
                           % (here, r["t_header_keys"], [k for k, _v in want["headers"]]))
            if not r["ts_ok"]:
                bad.append("%s: timestamp %d != source timestamp %d" % (here, r["t_ts"], want["timestamp"]))
        if bad:
            more = " and %d more" % (len(bad) - MAX_LISTED) if len(bad) > MAX_LISTED else ""
            msgs.append("%s: %d differences: %s%s" % (where, len(bad), "; ".join(bad[:MAX_LISTED]), more))
        order = ["partition %s: seq %s (source offset %s) is at target offset %s, before seq %s at target offset %s"
                 % (r["s_partition"], r["seq"], r["s_offset"], r["t_offset"], r["prev"]["seq"], r["prev"]["o"])
                 for r in rows if not r["order_ok"]]
        if order:
            msgs.append("%s: order not kept: %s" % (where, "; ".join(order[:MAX_LISTED])))
        if extra_count:
            msgs.append("%s: %d unexpected records carrying this run's id: %s" % (
                where, extra_count, listed(extras, lambda i: "partition %s offset %s" % i)))
        lat = [r["latency_ms"] for r in rows if r["copies"] and r["latency_ms"] is not None]
        self.latencies.extend(lat)
        res["details"] = {"sent": len(sent), "found": len(sent) - len(missing), "missing": len(missing),
                          "duplicates": sum(r["copies"] - 1 for r in dups), "extra": extra_count,
                          "differences": len(bad), "latency_ms": stats.summary(lat),
                          "partitions": len({sent[s]["partition"] for s in sent})}

    # ----------------------------------------------------------------- offsets
