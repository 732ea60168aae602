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
from . import stats

RUN_HEADER = "mm2-smoke-run"
SEQ_HEADER = "mm2-smoke-seq"
BIN_HEADER = "mm2-smoke-bin"
MAX_LISTED = 5


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
    def __init__(self, cfg, flow, progress):
        self.cfg = cfg
        self.flow = flow
        self.name = flow["name"]
        self.checks = cfg["checks"]
        self.enabled = set(self.checks["enabled"])
        self.run_id = cfg["run_id"]
        self.progress = progress
        self.src_bs = flow["source_bootstrap_servers"]
        self.tgt_bs = flow["target_bootstrap_servers"]
        self.src_props = cfgmod.cluster_props(cfg, flow["source"])
        self.tgt_props = cfgmod.cluster_props(cfg, flow["target"])
        self.results = []
        self.latencies = []

    def admin(self, side):
        if side == "source":
            return ku.admin(self.src_bs, self.src_props, "mm2-smoke-admin")
        return ku.admin(self.tgt_bs, self.tgt_props, "mm2-smoke-admin")

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
        try:
            parts = self.ensure_topic(src, topic, self.checks["partitions"])
            rparts = ku.partitions_of(tgt, remote)
            start = ku.end_offsets(tgt, remote, rparts) if rparts else {}
            sent = self.produce(topic, parts)
            received, extras, seen_topic = self.collect(tgt, remote, start, sent, timeout)
            if not seen_topic:
                similar = sorted(t for t in tgt.list_topics() if t.endswith(topic) and t != remote)
                res["messages"].append(
                    "flow %s: remote topic %r (%s) does not exist on target %s after %ds%s"
                    % (self.name, remote, self.policy_text(), self.flow["target"], timeout,
                       "; topics there ending in %r: %s" % (topic, ", ".join(similar)) if similar else ""))
            else:
                self.evaluate(res, topic, remote, sent, received, extras)
        finally:
            src.close()
            tgt.close()
        return finish(res), sent, received

    def policy_text(self):
        alias = self.flow.get("replication_policy_alias")
        return "%s replication policy" % (alias or self.flow.get("replication_policy") or "default")

    def produce(self, topic, parts):
        prod = ku.producer(self.src_bs, self.src_props, "mm2-smoke-producer")
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

    def collect(self, tgt, remote, start, sent, timeout):
        """Read the remote topic until every marker is found (or timeout)."""
        from kafka import TopicPartition
        cons = ku.consumer(self.tgt_bs, self.tgt_props, "mm2-smoke-markers")
        received, extras = {}, []
        deadline = time.time() + timeout
        t0 = time.time()
        assigned = 0
        seen_topic = False
        try:
            while time.time() < deadline:
                parts = ku.partitions_of(tgt, remote) if assigned == 0 or len(received) < len(sent) else assigned
                if parts and parts > assigned:
                    seen_topic = True
                    tps = [TopicPartition(remote, p) for p in range(parts)]
                    cons.assign(tps)
                    for tp in tps:
                        if tp.partition >= assigned:
                            cons.seek(tp, start.get(tp.partition, 0))
                    assigned = parts
                if not assigned:
                    self.progress.line(self.name + remote, "flow %s: waiting for remote topic %s on %s (%ds/%ds)"
                                       % (self.name, remote, self.flow["target"], time.time() - t0, timeout))
                    time.sleep(1)
                    continue
                batch = cons.poll(timeout_ms=500, max_records=5000)
                arrival = now_ms()
                for records in batch.values():
                    for rec in records:
                        hdr = dict(rec.headers or [])
                        if hdr.get(RUN_HEADER) != self.run_id.encode():
                            continue
                        try:
                            seq = int(hdr.get(SEQ_HEADER, b"").decode())
                        except ValueError:
                            seq = None
                        item = {"partition": rec.partition, "offset": rec.offset, "timestamp": rec.timestamp,
                                "key": rec.key, "value": rec.value, "headers": list(rec.headers or []),
                                "arrival": arrival}
                        if seq is None or seq not in sent:
                            extras.append(item)
                        else:
                            received.setdefault(seq, []).append(item)
                self.progress.line(self.name + remote, "flow %s: markers %s -> %s: %d/%d found (%ds/%ds)"
                                   % (self.name, "source", remote, len(received), len(sent),
                                      time.time() - t0, timeout))
                if len(received) >= len(sent):
                    # a short grace read to count duplicates arriving right behind
                    grace = time.time() + 1.0
                    while time.time() < grace:
                        for records in cons.poll(timeout_ms=300).values():
                            for rec in records:
                                hdr = dict(rec.headers or [])
                                if hdr.get(RUN_HEADER) == self.run_id.encode():
                                    seq = int(hdr.get(SEQ_HEADER, b"-1").decode() or -1)
                                    if seq in sent:
                                        received[seq].append({
                                            "partition": rec.partition, "offset": rec.offset,
                                            "timestamp": rec.timestamp, "key": rec.key, "value": rec.value,
                                            "headers": list(rec.headers or []), "arrival": now_ms()})
                    break
        finally:
            cons.close()
        return received, extras, seen_topic

    def evaluate(self, res, topic, remote, sent, received, extras):
        msgs = res["messages"]
        where = "flow %s topic %s -> %s" % (self.name, topic, remote)
        missing = sorted(s for s in sent if s not in received)
        if missing:
            msgs.append("%s: %d of %d markers missing after %ss: %s" % (
                where, len(missing), len(sent), self.checks["timeouts"]["markers"],
                _listed(missing, lambda s: "seq %d (source partition %d offset %d)"
                        % (s, sent[s]["partition"], sent[s]["offset"]))))
        dups = sorted(s for s, items in received.items() if len(items) > 1)
        if dups and self.checks.get("fail_on_duplicates", True):
            msgs.append("%s: %d markers duplicated: %s" % (where, len(dups), _listed(
                dups, lambda s: "seq %d seen %d times (target partition %d offsets %s)" % (
                    s, len(received[s]), received[s][0]["partition"],
                    "/".join(str(i["offset"]) for i in received[s])))))
        bad = []
        for seq in sorted(received):
            want, got = sent[seq], received[seq][0]
            here = "%s partition %d offset %d (seq %d, source offset %d)" % (
                remote, got["partition"], got["offset"], seq, want["offset"])
            if got["partition"] != want["partition"]:
                bad.append("%s: partition %d differs from source partition %d"
                           % (here, got["partition"], want["partition"]))
            if got["key"] != want["key"]:
                bad.append("%s: key differs from source (byte %s)" % (here, first_diff(got["key"], want["key"])))
            if got["value"] != want["value"]:
                pos = first_diff(got["value"], want["value"])
                detail = "length %d != %d" % (len(got["value"] or b""), len(want["value"])) \
                    if got["value"] is None or pos >= min(len(got["value"]), len(want["value"])) \
                    else "byte %d: 0x%02x != source 0x%02x" % (pos, got["value"][pos], want["value"][pos])
                bad.append("%s: value differs from source (%s)" % (here, detail))
            if [(k, bytes(v) if v is not None else None) for k, v in got["headers"]] != want["headers"]:
                bad.append("%s: headers differ from source (%s != %s)"
                           % (here, [k for k, _v in got["headers"]], [k for k, _v in want["headers"]]))
            if got["timestamp"] != want["timestamp"]:
                bad.append("%s: timestamp %d != source timestamp %d" % (here, got["timestamp"], want["timestamp"]))
        if bad:
            more = " and %d more" % (len(bad) - MAX_LISTED) if len(bad) > MAX_LISTED else ""
            msgs.append("%s: %d differences: %s%s" % (where, len(bad), "; ".join(bad[:MAX_LISTED]), more))
        # per-partition order: markers of one source partition keep their relative order
        order = []
        by_part = {}
        for seq in sorted(received, key=lambda s: (sent[s]["partition"], sent[s]["offset"])):
            by_part.setdefault(sent[seq]["partition"], []).append(seq)
        for part, seqs in sorted(by_part.items()):
            prev = None
            for seq in seqs:
                off = received[seq][0]["offset"]
                if prev is not None and (received[seq][0]["partition"] == received[prev][0]["partition"]
                                         and off < received[prev][0]["offset"]):
                    order.append("partition %s: seq %s (source offset %s) is at target offset %s, before seq %s "
                                 "(source offset %s) at target offset %s" % (
                                     part, seq, sent[seq]["offset"], off, prev, sent[prev]["offset"],
                                     received[prev][0]["offset"]))
                    break
                prev = seq
        if order:
            msgs.append("%s: order not kept: %s" % (where, "; ".join(order)))
        if extras:
            msgs.append("%s: %d unexpected records carrying this run's id: %s" % (
                where, len(extras), _listed(extras, lambda i: "partition %s offset %s" % (i["partition"],
                                                                                          i["offset"]))))
        lat = [received[s][0]["arrival"] - sent[s]["timestamp"] for s in received]
        self.latencies.extend(lat)
        res["details"] = {"sent": len(sent), "found": len(received), "missing": len(missing),
                          "duplicates": sum(len(v) - 1 for v in received.values()), "extra": len(extras),
                          "differences": len(bad), "latency_ms": stats.summary(lat),
                          "partitions": len(by_part)}

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
                for part, items in by_part.items():
                    items.sort()
                    off, seq = items[len(items) // 2]
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
            res["details"] = {"group": group, "checkpoint_topic": cp_topic,
                              "committed": {str(p): o for p, o in upstream.items()}}
            found = self.wait_checkpoints(tgt, cp_topic, group, remote, upstream, timeout)
            missing = sorted(p for p in upstream if p not in found)
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
        cons = ku.consumer(self.tgt_bs, self.tgt_props, "mm2-smoke-checkpoints")
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
        t_new = float(self.checks["timeouts"]["new_topic"])
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
                                                t_new, self.checks["refresh_interval_s"]))
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
                cres["messages"].append("flow %s: config check not run (%s)" % (
                    self.name, "sync.topic.configs.enabled=false" if "configs" in self.enabled else "disabled"))
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
        cons = ku.consumer(self.tgt_bs, self.tgt_props, "mm2-smoke-heartbeats")
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


def cycles(cfg):
    """No topic on a cluster carries two stacked prefixes of an active-active pair (A.B.*, B.A.*)."""
    out = []
    flows = cfg["enabled_flows"]
    for f in flows:
        back = [g for g in flows if g["source"] == f["target"] and g["target"] == f["source"]]
        if not back:
            continue
        g = back[0]
        res = result("cycles", f, "cycles")
        pf, pg = f.get("remote_topic_prefix"), g.get("remote_topic_prefix")
        if pf is None:
            pf = cfgmod.remote_topic_name(f, "")
        if pg is None:
            pg = cfgmod.remote_topic_name(g, "")
        if not pf or not pg:
            res["messages"].append("flow %s: cycles cannot be told from topic names with the identity policy"
                                   % f["name"])
            out.append(finish(res, "skip"))
            continue
        prefix = pf + pg
        adm = ku.admin(f["target_bootstrap_servers"], cfgmod.cluster_props(cfg, f["target"]))
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


def run_smoke(cfg, progress):
    runs = [FlowRun(cfg, f, progress) for f in cfg["enabled_flows"]]
    with ThreadPoolExecutor(max_workers=max(1, len(runs))) as pool:
        list(pool.map(lambda r: r.run(), runs))
    results, latencies = [], []
    for run in runs:
        results.extend(run.results)
        latencies.extend(run.latencies)
    if "cycles" in cfg["checks"]["enabled"]:
        results.extend(cycles(cfg))
    return {"checks": results, "latencies_ms": latencies}
