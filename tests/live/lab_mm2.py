"""Dedicated-mode MirrorMaker 2 started from mm2.properties the collection's flow model renders."""

import os
import re
import signal
import time

from lab_process import format_properties, free_ports, load_model, log, start_process, stop_process, wait_for_log


# single-broker clusters need replication factor 1 everywhere
HARNESS_GLOBALS = {
    "replication.factor": 1,
    "checkpoints.topic.replication.factor": 1,
    "heartbeats.topic.replication.factor": 1,
    "offset-syncs.topic.replication.factor": 1,
    "offset.storage.replication.factor": 1,
    "status.storage.replication.factor": 1,
    "config.storage.replication.factor": 1,
}
# short MM2 intervals so that the checks finish in seconds (defaults: 600 s / 60 s)
FAST_INTERVALS = {
    "refresh.topics.interval.seconds": 5,
    "refresh.groups.interval.seconds": 5,
    "sync.topic.configs.interval.seconds": 5,
    "emit.checkpoints.interval.seconds": 2,
    "sync.group.offsets.interval.seconds": 2,
    "emit.heartbeats.interval.seconds": 1,
}


def internal_rest_globals(port=None):
    """The globals that keep dedicated MirrorMaker's internal REST listener (the collection turns
    it on: dedicated.mode.enable.internal.rest) on loopback, on ``port`` or a free one."""
    return {"listeners": "http://127.0.0.1:%d" % (port or free_ports(1)[0]), "rest.advertised.host.name": "127.0.0.1"}


# What MirrorHerder logs when its node leads a flow's herder and has written, or found unchanged, the
# flow's MirrorSourceConnector configuration: only then does the connector run with this process's
# settings (a changed configuration restarts its tasks, which commits their offsets).
SOURCE_CONFIGURED = "MirrorSourceConnector connector configured for %s->%s[.]"
SOURCE_UP_TO_DATE = "for %s->%s and configuration for MirrorSourceConnector is already up to date"


def enabled_flows(props):
    """(source, target) of every flow mm2.properties ``props`` enables."""
    flows = ((re.fullmatch(r"([\w-]+)->([\w-]+)[.]enabled", key), value) for key, value in props.items())
    return sorted(match.groups() for match, value in flows if match and str(value).lower() == "true")


class Mm2Mixin(object):
    """Lab's dedicated-mode MirrorMaker 2 (one process at a time) and the smoke job's config for it."""

    def mm2_inputs(self, flows, extra_globals=None, policy=None, users=None, worker=None):
        """Role-variable shapes (clusters, flows, globals, options) for the running brokers; on a
        secured cluster MM2 logs in as ``users[<cluster>]`` (its Java client settings). ``worker``:
        Connect worker settings, which the model renders per target cluster as the role does
        (mirrormaker_worker_properties: a dedicated herder ignores most top-level worker keys)."""
        clusters = [{"alias": n, "bootstrap_servers": [b["bootstrap"]], "broker_count": 1,
                     "properties": dict({"plugin.discovery": "service_load"},
                                        **(self.java_client_properties(n, (users or {}).get(n))
                                           if b.get("secured") else {}))}
                    for n, b in sorted(self.brokers.items())]
        glob = dict(HARNESS_GLOBALS)
        glob.update(FAST_INTERVALS)
        glob["plugin.discovery"] = "service_load"
        glob.update(internal_rest_globals())
        if policy:
            glob["replication.policy.class"] = policy
        glob.update(extra_globals or {})
        return clusters, flows, glob, {"exactly_once": False, "internal_rest": True, "worker_defaults": worker or {}}

    def job_config(self, flows, checks):
        """The smoke job's configuration (smoke/README.md) for ``flows`` (role variable shape)."""
        clusters, flows, glob, options = self.mm2_inputs(flows)
        return {"version": 1,
                "clusters": {n: {"bootstrap_servers": b["bootstrap"], "properties": {}}
                             for n, b in self.brokers.items()},
                "flows": load_model().effective_flows(clusters, flows, glob, options),
                "checks": checks}

    def start_mm2(self, flows, extra_globals=None, wait_for=None, timeout=120, users=None, worker=None):
        """Start dedicated MM2 for ``flows`` (role variable shape), as ``users`` on secured clusters,
        with the Connect ``worker`` settings; wait until its leader has configured every flow's
        source connector, then until ``wait_for`` (a (cluster, topic) pair) exists, if given.
        Returns the rendered properties."""
        model = load_model()
        clusters, flows, glob, options = self.mm2_inputs(flows, extra_globals, users=users, worker=worker)
        return self.start_mm2_properties(model.build_properties(clusters, flows, glob, options), wait_for, timeout)

    def start_mm2_properties(self, props, wait_for=None, timeout=120, script="connect-mirror-maker.sh"):
        """Start dedicated MM2 with the mm2.properties ``props`` (a dict, e.g. what the mirrormaker
        role's preflight rendered) through ``script`` in the lab's bin/ (e.g. a copy the mirrormaker
        role patched); wait as start_mm2 does.  Returns ``props``."""
        if self.mm2 is not None and self.mm2.poll() is None:
            raise RuntimeError("an MM2 process is already running")
        self.mm2_count += 1
        d = os.path.join(self.tmp, "mm2-%d" % self.mm2_count)
        os.makedirs(d)
        path = os.path.join(d, "mm2.properties")
        with open(path, "w") as fh:
            fh.write(format_properties(props) + "\n")
        env = dict(os.environ, LOG_DIR=os.path.join(d, "logs"), KAFKA_HEAP_OPTS=self.heap)
        self.mm2_dir = d
        self.mm2 = start_process([self.bin(script), path], self.mm2_log(), env=env)
        t0 = time.time()
        for source, target in enabled_flows(props):
            # a topic that already exists says nothing about this process: its own log does
            wait_for_log(self.mm2_log(), "|".join(rx % (re.escape(source), re.escape(target))
                                                  for rx in (SOURCE_CONFIGURED, SOURCE_UP_TO_DATE)),
                         max(1, timeout - (time.time() - t0)), self.mm2)
        log("MM2 #%d configured its flows after %.1fs" % (self.mm2_count, time.time() - t0))
        if wait_for:
            self.wait_topic(wait_for[0], wait_for[1], timeout)
            log("MM2 #%d found %s on %s after %.1fs" % (self.mm2_count, wait_for[1], wait_for[0], time.time() - t0))
        return props

    def mm2_log(self):
        """The log (stdout and stderr) of the last MM2 process started."""
        return os.path.join(self.mm2_dir, "stdout.log")

    def stop_mm2(self):
        if self.mm2 is not None:
            stop_process(self.mm2, 30)
            self.mm2 = None

    def kill_mm2(self):
        """kill -9 of MirrorMaker 2's process group: a crash, no offset flush on the way out."""
        if self.mm2 is not None:
            os.killpg(self.mm2.pid, signal.SIGKILL)
            self.mm2.wait(30)
            self.mm2 = None
