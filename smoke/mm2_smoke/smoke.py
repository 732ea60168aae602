"""Smoke mode: markers, consumer offsets, topic configs, new topics/partitions, heartbeats, cycles.

Plain Kafka clients (kafka-python) against the source and target clusters of every enabled flow;
flows run in parallel, and inside a flow the marker/offset, new-topic/config and heartbeat
checks run in parallel, each bounded by its timeout from the config.
"""

import os
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from . import config as cfgmod
from . import formats
from . import kafka_util as ku
from . import markers
from . import stats
from .markers import RUN_HEADER, SEQ_HEADER

BIN_HEADER = "mm2-smoke-bin"
PROBE_HEADER = "mm2-smoke-probe"
MAX_LISTED = 5
# How often the target's end offsets are read while markers replicate: the latency's resolution.
WATCH_EVERY_S = 0.2


def now_ms():
    return int(time.time() * 1000)


class Progress(object):
    """Throttled progress lines on stderr (one per key every ``every`` seconds)."""

    def __init__(self, stream=None, every=5.0, quiet=False):
        self.stream = stream
        self.every = every
        self.quiet = quiet
        self.last = {}
        self.lock = threading.Lock()

    def line(self, key, text, force=False):
        if self.quiet:
            return
        import sys
        stream = self.stream or sys.stderr
        with self.lock:
            t = time.time()
            if force or t - self.last.get(key, 0) >= self.every:
                self.last[key] = t
                stream.write("[mm2-smoke %s] %s\n" % (time.strftime("%H:%M:%S"), text))
                stream.flush()


def _listed(items, fmt=str):
    items = list(items)
    text = ", ".join(fmt(i) for i in items[:MAX_LISTED])
    if len(items) > MAX_LISTED:
        text += " and %d more" % (len(items) - MAX_LISTED)
    return text


def first_diff(one, two):
    """Index of the first differing byte (or the shorter length), None when equal."""
    if one == two:
        return None
    one, two = one or b"", two or b""
    for i, (x, y) in enumerate(zip(one, two)):
        if x != y:
            return i
    return min(len(one), len(two))


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


def result(check, flow, topic=None):
    return {"check": check, "flow": flow["name"], "topic": topic, "status": "pass", "messages": [],
            "details": {}, "started": time.time()}


def finish(res, status=None):
    if status:
        res["status"] = status
    elif res["messages"] and res["status"] == "pass":
        res["status"] = "fail"
    res["duration_s"] = round(time.time() - res.pop("started"), 2)
    return res


class FlowRun(object):
    def __init__(self, cfg, flow, progress, clients, spark):
        self.cfg = cfg
        self.clients = {"source": clients[flow["source"]], "target": clients[flow["target"]]}
        self.spark = spark
        self.discovery = []
        self.flow = flow
        self.name = flow["name"]
        self.checks = cfg["checks"]
        self.enabled = set(self.checks["enabled"])
        self.run_id = cfg["run_id"]
        self.progress = progress
        self.tgt_bs = flow["target_bootstrap_servers"]
        self.tgt_props = cfgmod.cluster_props(cfg, flow["target"])
        self.results = []
        self.latencies = []

    def admin(self, side):
        return self.clients[side].admin("mm2-smoke-admin")

    def where(self, side):
        return "%s %s" % ("source" if side == "source" else "target", self.flow[side])

    # ----------------------------------------------------------------- markers
    def ensure_topic(self, adm, topic, partitions):
        count = ku.partitions_of(adm, topic)
        if count is None:
            adm.create_topics({topic: {"num_partitions": partitions,
                                       "replication_factor": self.checks["replication_factor"]}},
                              raise_errors=False)
            adm.wait_for_topics([topic], timeout_ms=30000)
            count = ku.partitions_of(adm, topic)
        return count

    def markers(self, topic):
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
            rows, extras, extra_count = self.collect(tgt, remote, rparts, start, sent, timeout)
            received = {r["seq"]: [{"partition": c["t_partition"], "offset": c["t_offset"]} for c in r["copies_at"]]
                        for r in rows if r["copies"]}
            self.evaluate(res, topic, remote, sent, rows, extras, extra_count)
            res["details"]["discovery_s"] = discovery
        finally:
            src.close()
            tgt.close()
        return finish(res), sent, received

    def new_topic_timeout(self):
        value = self.checks["timeouts"].get("new_topic")
        return float(value if value is not None else cfgmod.refresh_interval_s(self.cfg, self.flow) + 60)

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
        while True:
            watch.poll(rparts)
            expired = time.time() >= deadline
            grown = all(watch.count(p) >= n for p, n in want.items())
            if (grown and watch.ends != read_at) or expired:
                read_at = dict(watch.ends)
                spark = self.spark.get()
                rows, extras, extra_count = markers.compare(spark, self.tgt_bs, self.tgt_props, remote, watch.ranges(),
                                                            watch.spans, sent, self.run_id)
                found = sum(1 for r in rows if r["copies"])
                if found == len(sent):
                    # duplicates arriving right behind the last marker are counted too
                    time.sleep(1.0)
                    watch.poll(rparts)
                    if watch.ends != read_at:
                        rows, extras, extra_count = markers.compare(spark, self.tgt_bs, self.tgt_props, remote,
                                                                    watch.ranges(), watch.spans, sent, self.run_id)
                    break
                if expired:
                    break
            self.progress.line(self.name + remote, "flow %s: markers -> %s: %d of %d new records on %s (%ds/%ds)"
                               % (self.name, remote, sum(watch.count(p) for p in want), len(sent),
                                  self.flow["target"], time.time() - t0, timeout))
            time.sleep(WATCH_EVERY_S)
        return rows, extras, extra_count

    def evaluate(self, res, topic, remote, sent, rows, extras, extra_count):
        """Messages from the flags Spark computed per marker (markers.compare)."""
        msgs = res["messages"]
        where = "flow %s topic %s -> %s" % (self.name, topic, remote)
        by_seq = {r["seq"]: r for r in rows}
        missing = sorted(s for s in sent if not by_seq.get(s, {}).get("copies"))
        if missing:
            msgs.append("%s: %d of %d markers missing after %ss: %s" % (
                where, len(missing), len(sent), self.checks["timeouts"]["markers"],
                _listed(missing, lambda s: "seq %d (source partition %d offset %d)"
                        % (s, sent[s]["partition"], sent[s]["offset"]))))
        dups = [r for r in rows if r["copies"] > 1]
        if dups:
            text = "%s: %d markers duplicated: %s" % (where, len(dups), _listed(
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
                where, extra_count, _listed(extras, lambda i: "partition %s offset %s" % i)))
        lat = [r["latency_ms"] for r in rows if r["copies"] and r["latency_ms"] is not None]
        self.latencies.extend(lat)
        res["details"] = {"sent": len(sent), "found": len(sent) - len(missing), "missing": len(missing),
                          "duplicates": sum(r["copies"] - 1 for r in dups), "extra": extra_count,
                          "differences": len(bad), "latency_ms": stats.summary(lat),
                          "partitions": len({sent[s]["partition"] for s in sent})}

    # ----------------------------------------------------------------- offsets
    def offsets(self, topic, sent, received):
        res = result("offsets", self.flow, topic)
        remote = cfgmod.remote_topic_name(self.flow, topic)
        if not self.flow.get("emit_checkpoints", True):
            res["messages"].append("flow %s emits no checkpoints (emit.checkpoints.enabled=false)" % self.name)
            return finish(res, "skip")
        group = self.checks["group"].format(run_id=self.run_id, flow=self.name.replace("->", "-"), topic=topic)
        cp_topic = (self.flow.get("internal_topics") or {}).get("checkpoints") or \
            "%s.checkpoints.internal" % self.flow["source"]
        timeout = float(self.checks["timeouts"]["offsets"])
        from kafka import TopicPartition
        from kafka.structs import OffsetAndMetadata
        src, tgt = self.admin("source"), self.admin("target")
        try:
            upstream = {}
            if self.checks["offsets"].get("commit", True):
                by_part = {}
                for seq, item in sent.items():
                    by_part.setdefault(item["partition"], []).append((item["offset"], seq))
                commit = {}
                # At the partition's last marker: MM2 translates an offset only from an offset sync at
                # or below it, and which older syncs it still holds depends on its restarts and load
                # (a new group restarts the checkpoint task); the newest sync is never above the
                # last record, so that offset can always be translated. The marker there must not be
                # skipped on the target. A commit the coordinator refuses is retried by the admin
                # (kafka_util.RetryingAdmin): the first one on a cluster that never hosted a group is.
                for part, items in by_part.items():
                    off, seq = max(items)
                    upstream[part] = off
                    commit[TopicPartition(topic, part)] = OffsetAndMetadata(off, "mm2-smoke %s seq %d" % (
                        self.run_id, seq), -1)
                src.alter_group_offsets(group, commit)
            else:
                got = src.list_group_offsets({group: None}).get(group) or {}
                upstream = {tp.partition: om.offset for tp, om in got.items() if tp.topic == topic and om.offset >= 0}
                parts = ku.partitions_of(src, topic) or 0
                for part in range(parts):
                    upstream.setdefault(part, None)
            committed_at = time.time()
            res["details"] = {"group": group, "checkpoint_topic": cp_topic,
                              "committed": {str(p): o for p, o in upstream.items()}}
            found = self.wait_checkpoints(tgt, cp_topic, group, remote, upstream, timeout)
            missing = sorted(p for p in upstream if p not in found)
            if not missing:
                # The window in which the group could not yet fail over (docs/disaster_recovery.md).
                res["details"]["checkpointed_after_s"] = round(time.time() - committed_at, 1)
            for part in missing:
                reason = (" (the group has no committed offset on source %s for %s-%d: it never committed)"
                          % (self.flow["source"], topic, part)) if upstream[part] is None else \
                    " (committed offset %d on source %s)" % (upstream[part], self.flow["source"])
                res["messages"].append(
                    "flow %s group %s: no checkpoint for %s partition %d in %s on target %s after %ds%s"
                    % (self.name, group, remote, part, cp_topic, self.flow["target"], timeout, reason))
            res["details"]["translated"] = {str(p): cp.downstream_offset for p, cp in found.items()}
            self.check_no_skip(res, group, "checkpoint", remote, found, sent, received)
            if self.flow.get("sync_group_offsets") and found:
                synced = self.wait_synced(tgt, group, remote, found, timeout)
                res["details"]["target_group"] = {str(p): o for p, o in synced.items()}
                for part in sorted(found):
                    if part not in synced:
                        res["messages"].append(
                            "flow %s group %s: not synced to target %s for %s partition %d after %ds "
                            "(sync.group.offsets.enabled=true; checkpoint says offset %d)"
                            % (self.name, group, self.flow["target"], remote, part, timeout,
                               found[part].downstream_offset))
                self.check_no_skip(res, group, "target group offset",
                                   remote, {p: formats.Checkpoint(group, remote, p, found[p].upstream_offset, o, "")
                                            for p, o in synced.items()}, sent, received)
        finally:
            src.close()
            tgt.close()
        return finish(res)

    def wait_checkpoints(self, tgt, cp_topic, group, remote, upstream, timeout):
        cons = self.clients["target"].consumer("mm2-smoke-checkpoints")
        found = {}
        deadline = time.time() + timeout
        t0 = time.time()
        assigned = False
        try:
            while time.time() < deadline and len(found) < len(upstream):
                if not assigned:
                    assigned = ku.assign_all(tgt, cons, cp_topic)
                    if not assigned:
                        time.sleep(1)
                        continue
                for cp in ku.poll_decoded(cons, formats.decode_checkpoint, formats.FormatError):
                    if cp.group != group or cp.topic != remote or cp.partition not in upstream:
                        continue
                    want = upstream[cp.partition]
                    if want is None or cp.upstream_offset == want:
                        found[cp.partition] = cp
                self.progress.line(self.name + cp_topic, "flow %s: checkpoints for group %s in %s: %d/%d "
                                   "partitions (%ds/%ds)" % (self.name, group, cp_topic, len(found), len(upstream),
                                                             time.time() - t0, timeout))
        finally:
            cons.close()
        return found

    def wait_synced(self, tgt, group, remote, found, timeout):
        deadline = time.time() + timeout
        synced = {}
        while time.time() < deadline:
            got = tgt.list_group_offsets({group: None}).get(group) or {}
            synced = {tp.partition: om.offset for tp, om in got.items() if tp.topic == remote and om.offset >= 0}
            if all(p in synced and synced[p] >= found[p].downstream_offset for p in found):
                break
            self.progress.line(self.name + "sync" + group, "flow %s: group %s on target %s: %d/%d partitions synced"
                               % (self.name, group, self.flow["target"], len(synced), len(found)))
            time.sleep(1)
        return synced

    def check_no_skip(self, res, group, what, remote, cps, sent, received):
        """Consuming the remote topic from the translated offset must not skip a marker at or
        after the committed upstream offset."""
        for part, cp in sorted(cps.items()):
            for seq, item in sorted(sent.items(), key=lambda kv: kv[1]["offset"]):
                if item["partition"] != part or item["offset"] < cp.upstream_offset or seq not in received:
                    continue
                tgt_off = received[seq][0]["offset"]
                if tgt_off < cp.downstream_offset:
                    res["messages"].append(
                        "flow %s group %s: %s %d for %s partition %d skips marker seq %d (source offset %d >= "
                        "committed %d, but target offset %d < %d)" % (
                            self.name, group, what, cp.downstream_offset, remote, part, seq, item["offset"],
                            cp.upstream_offset, tgt_off, cp.downstream_offset))
                    break

    # ------------------------------------------------------- new topic, partitions, configs
    def new_topic(self, base):
        out = []
        res = result("new_topics", self.flow, None)
        name = self.checks["new_topic_name"].format(topic=base, run_id=self.run_id)
        res["topic"] = name
        if not cfgmod.topic_matches(self.flow, name):
            res["messages"].append("flow %s: new-topic name %r does not match the flow's topic filter (%s); set "
                                   "checks.new_topic_name" % (self.name, name, self.flow.get("topics_regex")))
            out.append(finish(res, "skip"))
            return out
        remote = cfgmod.remote_topic_name(self.flow, name)
        res["remote_topic"] = remote
        t_new = self.new_topic_timeout()
        parts = self.checks["partitions"]
        src, tgt = self.admin("source"), self.admin("target")
        try:
            self.ensure_topic(src, name, parts)
            t0 = time.time()
            got = self.wait_partitions(tgt, remote, parts, t_new, "new topic")
            res["details"] = {"seconds_to_appear": round(time.time() - t0, 1), "partitions": got}
            if got is None:
                res["messages"].append(
                    "flow %s: new topic %s created on source %s did not appear as %s on target %s within %ds "
                    "(refresh interval %ss)" % (self.name, name, self.flow["source"], remote, self.flow["target"],
                                                t_new, cfgmod.refresh_interval_s(self.cfg, self.flow)))
                out.append(finish(res))
                return out
            out.append(finish(res))
            # partitions added on the source, and a topic config changed on the source
            pres = result("partitions", self.flow, name)
            cres = result("configs", self.flow, name)
            src.create_partitions({name: parts + 1})
            do_cfg = "configs" in self.enabled and self.flow.get("sync_topic_configs",
                                                                 self.checks.get("sync_topic_configs", True))
            key = self.checks["config_check"]["key"]
            value = self.checks["config_check"].get("value")
            if value is None:
                value = str(604800000 + random.randint(1, 86400) * 1000)
            value = str(value)
            if do_cfg:
                src.alter_configs([_config_resource(name, {key: value})])
            t1 = time.time()
            got = self.wait_partitions(tgt, remote, parts + 1, t_new, "added partition")
            pres["details"] = {"seconds": round(time.time() - t1, 1), "partitions": got}
            if got is None or got < parts + 1:
                pres["messages"].append(
                    "flow %s: partition added to %s on source %s (now %d) not on %s on target %s within %ds "
                    "(has %s)" % (self.name, name, self.flow["source"], parts + 1, remote, self.flow["target"],
                                  t_new, got))
            out.append(finish(pres))
            if not do_cfg:
                # A check that is not configured has no result; a configured one that cannot apply
                # is a skip with its reason, so that the summary's counts add up.
                if "configs" in self.enabled:
                    cres["messages"].append("flow %s: config check not run (sync.topic.configs.enabled=false)"
                                            % self.name)
                    out.append(finish(cres, "skip"))
                return out
            t_cfg = float(self.checks["timeouts"]["configs"])
            deadline = time.time() + t_cfg
            seen = None
            while time.time() < deadline:
                seen = ku.topic_config(tgt, remote, key)
                if seen == value:
                    break
                self.progress.line(self.name + "cfg", "flow %s: waiting for %s=%s on %s (now %s)"
                                   % (self.name, key, value, remote, seen))
                time.sleep(1)
            cres["details"] = {"key": key, "value": value, "target_value": seen, "seconds": round(time.time() - t1, 1)}
            if seen != value:
                cres["messages"].append(
                    "flow %s: topic config %s=%s set on %s (source %s) not on %s (target %s) after %ds: target has %s"
                    % (self.name, key, value, name, self.flow["source"], remote, self.flow["target"], t_cfg, seen))
            out.append(finish(cres))
        finally:
            src.close()
            tgt.close()
        return out

    def wait_partitions(self, tgt, topic, want, timeout, what):
        deadline = time.time() + timeout
        t0 = time.time()
        got = None
        while time.time() < deadline:
            got = ku.partitions_of(tgt, topic)
            if got is not None and got >= want:
                return got
            self.progress.line(self.name + topic + what, "flow %s: waiting for %s %s on %s (%ds/%ds)"
                               % (self.name, what, topic, self.flow["target"], time.time() - t0, timeout))
            time.sleep(1)
        return got

    # ----------------------------------------------------------------- heartbeats
    def heartbeats(self):
        res = result("heartbeats", self.flow, None)
        topic = (self.flow.get("internal_topics") or {}).get("heartbeats") or "heartbeats"
        res["topic"] = topic
        if not self.flow.get("emit_heartbeats", True):
            res["messages"].append("flow %s emits no heartbeats (emit.heartbeats.enabled=false)" % self.name)
            return finish(res, "skip")
        timeout = float(self.checks["timeouts"]["heartbeats"])
        start = now_ms()
        tgt = self.admin("target")
        cons = self.clients["target"].consumer("mm2-smoke-heartbeats")
        fresh, last = [], None
        try:
            deadline = time.time() + timeout
            assigned = False
            while time.time() < deadline and len(fresh) < 2:
                if not assigned:
                    # the last 50 heartbeats per partition are enough to see them advance
                    assigned = ku.assign_all(tgt, cons, topic, back=50)
                    if not assigned:
                        time.sleep(1)
                        continue
                for hb in ku.poll_decoded(cons, formats.decode_heartbeat, formats.FormatError):
                    if hb.source == self.flow["source"] and hb.target == self.flow["target"]:
                        last = hb.timestamp
                        if hb.timestamp >= start and (not fresh or hb.timestamp > fresh[-1]):
                            fresh.append(hb.timestamp)
            res["details"] = {"fresh": len(fresh), "last_timestamp": last}
            if len(fresh) < 2:
                res["messages"].append(
                    "flow %s: heartbeats %s->%s in topic %s on target %s not advancing within %ds (%s)" % (
                        self.name, self.flow["source"], self.flow["target"], topic, self.flow["target"], timeout,
                        "none seen" if last is None else "last one %.1fs before the check started, %d since"
                        % ((start - last) / 1000.0, len(fresh))))
        finally:
            cons.close()
            tgt.close()
        return finish(res)

    # ----------------------------------------------------------------- run
    def run(self):
        topics = cfgmod.topics_for(self.cfg, self.flow)
        bad = [t for t in topics if not cfgmod.topic_matches(self.flow, t)]
        if bad:
            res = result("config", self.flow, None)
            res["messages"].append("flow %s: checked topic(s) %s not mirrored by the flow's filter (topics %s, "
                                   "exclude %s)" % (self.name, ", ".join(bad), self.flow.get("topics_regex"),
                                                    self.flow.get("topics_exclude_regex")))
            self.results.append(finish(res, "error"))
            return self

        def marker_chain():
            out = []
            for i, topic in enumerate(topics):
                mres, sent, received = self.markers(topic)
                out.append(mres)
                if i == 0 and "offsets" in self.enabled:
                    if mres["status"] == "pass" or (not self.checks["offsets"].get("commit", True)):
                        out.append(self.offsets(topic, sent, received))
                    else:
                        ores = result("offsets", self.flow, topic)
                        ores["messages"].append("flow %s: offsets check not run: markers failed on %s"
                                                % (self.name, topic))
                        out.append(finish(ores, "skip"))
            return out

        tasks = []
        with ThreadPoolExecutor(max_workers=3) as pool:
            if "markers" in self.enabled and topics:
                tasks.append(pool.submit(marker_chain))
            if ("new_topics" in self.enabled or "configs" in self.enabled) and topics:
                tasks.append(pool.submit(self.new_topic, topics[0]))
            if "heartbeats" in self.enabled:
                tasks.append(pool.submit(lambda: [self.heartbeats()]))
            for task in tasks:
                try:
                    self.results.extend(task.result())
                except Exception as exc:  # noqa: BLE001 - a check that could not run
                    res = result("error", self.flow, None)
                    res["messages"].append("flow %s: check could not run: %s: %s" % (
                        self.name, type(exc).__name__, exc))
                    self.results.append(finish(res, "error"))
        return self


def _config_resource(topic, configs):
    from kafka.admin import ConfigResource, ConfigResourceType
    return ConfigResource(ConfigResourceType.TOPIC, topic, configs=configs)


def cycles(cfg, clients):
    """No topic on a cluster carries two stacked prefixes of an active-active pair (A.B.*, B.A.*)."""
    out = []
    flows = cfg["enabled_flows"]
    for f in flows:
        back = [g for g in flows if g["source"] == f["target"] and g["target"] == f["source"]]
        if f["target"] not in clients or f["source"] not in clients:
            continue
        res = result("cycles", f, "cycles")
        if not back:
            # Configured but unable to apply: a skip with its reason, so the report's counts add up.
            res["messages"].append("flow %s: no enabled flow %s->%s, so no record can come back: no cycle to look for"
                                   % (f["name"], f["target"], f["source"]))
            out.append(finish(res, "skip"))
            continue
        g = back[0]
        pf, pg = f.get("remote_topic_prefix"), g.get("remote_topic_prefix")
        if not pf or not pg:
            res["messages"].append("flow %s: cycles cannot be told from topic names with the %s policy"
                                   % (f["name"], "identity" if "" in (pf, pg) else "custom replication"))
            out.append(finish(res, "skip"))
            continue
        prefix = pf + pg
        adm = clients[f["target"]].admin()
        try:
            looped = sorted(t for t in adm.list_topics() if t.startswith(prefix))
        finally:
            adm.close()
        res["details"] = {"cluster": f["target"], "prefix": prefix, "found": looped}
        if looped:
            res["messages"].append("flow %s: replication cycle: topics %s on %s came back through %s and %s"
                                   % (f["name"], _listed(looped), f["target"], g["name"], f["name"]))
        out.append(finish(res))
    return out


class SparkStarter(object):
    """The Spark session, started in the background as the job starts: the JVM comes up while the
    markers are produced and replicate, and the first compare waits for it only if it is late."""

    def __init__(self, factory):
        self.pool = ThreadPoolExecutor(max_workers=1)
        self.future = self.pool.submit(factory)
        self.pool.shutdown(wait=False)

    def get(self):
        return self.future.result()

    def started(self):
        """The session if it came up, else None (its error is the caller's to report once)."""
        try:
            return self.future.result()
        except Exception:  # noqa: BLE001 - reported by the caller from error()
            return None

    def error(self):
        return self.future.exception() if self.future.done() else None


def run_smoke(cfg, progress, spark):
    """Checks of every enabled flow whose clusters answer; one error per cluster that does not."""
    clients = ku.clients_for(cfg)
    with ku.kerberos_login(cfg, clients) as login:
        out = _checks(cfg, progress, spark, clients)
    out["kerberos"] = login
    return out


def _checks(cfg, progress, spark, clients):
    down = ku.unreachable(clients)
    errors = [str(exc) for _alias, exc in sorted(down.items())]
    up = {alias: c for alias, c in clients.items() if alias not in down}
    runs = [FlowRun(cfg, f, progress, up, spark) for f in cfg["enabled_flows"]
            if f["source"] in up and f["target"] in up]
    with ThreadPoolExecutor(max_workers=max(1, len(runs))) as pool:
        list(pool.map(lambda r: r.run(), runs))
    results, latencies, discovery = [], {}, []
    for run in runs:
        results.extend(run.results)
        latencies[run.name] = run.latencies
        discovery.extend(run.discovery)
    if "cycles" in cfg["checks"]["enabled"]:
        results.extend(cycles(cfg, up))
    if spark.error() is not None:
        errors.append("Spark: %s" % spark.error())
    return {"checks": results, "latencies_ms": latencies, "discovery": discovery, "errors": errors,
            "unmapped_properties": {a: c.unmapped for a, c in sorted(clients.items()) if c.unmapped}}
