"""The offsets check: a group's committed offset on the source, translated by the checkpoints, synced on the target."""

import threading
import time

from . import config as cfgmod
from . import formats
from . import kafka_util as ku
from .common import finish, result


class OffsetsCheck(object):
    """FlowRun's offsets check."""

    def offsets(self, topic, sent, received, stop=None):
        """The check's result. ``received``: where the markers landed on the target, or a callable
        that waits for it (the markers check may still run); ``stop``: an event that ends the waits."""
        res = result("offsets", self.flow, topic)
        stop = stop or threading.Event()
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
            found = self.wait_checkpoints(tgt, cp_topic, group, remote, upstream, timeout, stop)
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
            if callable(received):
                received = received()
            self.check_no_skip(res, group, "checkpoint", remote, found, sent, received)
            if self.flow.get("sync_group_offsets") and found:
                synced = self.wait_synced(tgt, group, remote, found, timeout, stop)
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

    def wait_checkpoints(self, tgt, cp_topic, group, remote, upstream, timeout, stop):
        cons = self.clients["target"].consumer("mm2-smoke-checkpoints")
        found = {}
        deadline = time.time() + timeout
        t0 = time.time()
        assigned = False
        try:
            while time.time() < deadline and len(found) < len(upstream) and not stop.is_set():
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

    def wait_synced(self, tgt, group, remote, found, timeout, stop):
        deadline = time.time() + timeout
        synced = {}
        while time.time() < deadline and not stop.is_set():
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
