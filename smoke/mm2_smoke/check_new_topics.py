"""The new-topics and configs checks: a topic created on the source appears on the target with its configs and partitions."""

import random
import time

from . import config as cfgmod
from . import kafka_util as ku
from .common import finish, result


def _config_resource(topic, configs):
    from kafka.admin import ConfigResource, ConfigResourceType
    return ConfigResource(ConfigResourceType.TOPIC, topic, configs=configs)


class NewTopicsCheck(object):
    """FlowRun's new-topics and configs checks."""

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
