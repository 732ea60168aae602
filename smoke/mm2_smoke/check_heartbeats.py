"""The heartbeats check: the flow's heartbeats topic on the target keeps receiving beats."""

import time

from . import formats
from . import kafka_util as ku
from .common import finish, now_ms, result


class HeartbeatsCheck(object):
    """FlowRun's heartbeats check."""

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
