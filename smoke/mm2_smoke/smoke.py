"""Smoke mode: markers, consumer offsets, topic configs, new topics/partitions, heartbeats, cycles.

Plain Kafka clients (kafka-python) against the source and target clusters of every enabled flow;
flows run in parallel, and inside a flow the marker/offset, new-topic/config and heartbeat
checks run in parallel, each bounded by its timeout from the config. Each check is a module of
its own (check_*.py); FlowRun holds what a flow's checks share.
"""

import threading
from concurrent.futures import Future, ThreadPoolExecutor

from . import config as cfgmod
from . import kafka_util as ku
from .check_cycles import cycles
from .check_heartbeats import HeartbeatsCheck
from .check_markers import MarkersCheck
from .check_new_topics import NewTopicsCheck
from .check_offsets import OffsetsCheck
from .common import finish, result


class FlowRun(MarkersCheck, OffsetsCheck, NewTopicsCheck, HeartbeatsCheck):
    """One flow's checks, with the clients, config and results they share."""

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

    def new_topic_timeout(self):
        value = self.checks["timeouts"].get("new_topic")
        return float(value if value is not None else cfgmod.refresh_interval_s(self.cfg, self.flow) + 60)

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
                if i != 0 or "offsets" not in self.enabled:
                    out.append(self.markers(topic)[0])
                    continue
                # The offsets check starts once the markers are written: it waits for MirrorMaker's
                # checkpoints while Spark compares the markers, and needs where they landed only at
                # its end. It is stopped when the markers fail.
                early, stop, landed = None, threading.Event(), Future()
                with ThreadPoolExecutor(max_workers=1) as side:
                    def written(sent, topic=topic):
                        nonlocal early
                        early = side.submit(self.offsets, topic, sent, landed.result, stop)
                    try:
                        mres, sent, received = self.markers(topic, written)
                    except BaseException:
                        stop.set()
                        landed.set_result({})
                        raise
                    landed.set_result(received)
                    out.append(mres)
                    if mres["status"] == "pass" or (not self.checks["offsets"].get("commit", True)):
                        # not written when the remote topic never appeared: nothing to wait for
                        out.append(early.result() if early else self.offsets(topic, sent, received))
                    else:
                        stop.set()
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
