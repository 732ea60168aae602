"""The job's configuration file (JSON, ``"version": 1``); see smoke/README.md for the schema."""

import copy
import json
import os
import re
import time

ALL_CHECKS = ("markers", "offsets", "configs", "new_topics", "heartbeats", "cycles")
# Results of a kind that is not a check of its own: the configured checks that produce them (the
# new-topic check also adds a partition; the configs check needs a new topic to change).
PRODUCED_BY = {"partitions": ("new_topics", "configs"), "new_topics": ("configs",)}
DUPLICATES = ("auto", "fail", "report")

DEFAULT_CHECKS = {
    "enabled": list(ALL_CHECKS),
    "topics": ["mm2-smoke"],
    "records": 100,
    "payload_bytes": 256,
    "partitions": 3,
    "replication_factor": -1,          # broker default
    # MM2's refresh.topics.interval.seconds when a flow does not carry refresh_topics_interval_s
    # (mm2_model.effective_flows gives it per flow, with MirrorMaker's own default).
    "refresh_interval_s": None,
    "timeouts": {"markers": 180, "offsets": 180, "configs": 120, "new_topic": None, "heartbeats": 60,
                 "bootstrap": 30},
    "config_check": {"key": "retention.ms", "value": None},   # value None: a fresh value per run
    "sync_topic_configs": True,        # MM2 sync.topic.configs.enabled (default true)
    "new_topic_name": "{topic}-new-{run_id}",
    "group": "mm2-smoke-{run_id}",
    "offsets": {"commit": True},
    # auto: a duplicated record fails a flow that MM2 runs exactly-once and is reported otherwise
    # (at-least-once delivery may repeat records after a crash); fail / report: always that.
    "duplicates": "auto",
    "reconcile": {"topics": None, "window": None, "samples": 5, "settle_s": 30},
}


class ConfigError(ValueError):
    pass


def new_run_id():
    return time.strftime("%Y%m%d%H%M%S") + "-" + os.urandom(3).hex()


def _merge(base, over):
    out = copy.deepcopy(base)
    for key, val in (over or {}).items():
        if isinstance(val, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], val)
        else:
            out[key] = copy.deepcopy(val)
    return out


def remote_topic_name(flow, topic):
    """Remote name of ``topic`` for a flow from mm2_model.effective_flows.

    The naming rule lives in the collection (mm2_model.remote_topic_prefix), which renders the
    prefix into the job's config; the job only applies it, so the two cannot drift.
    """
    prefix = flow.get("remote_topic_prefix")
    if prefix is None:
        raise ConfigError("flow %s: remote_topic_prefix is null: the replication policy %s names remote topics in "
                          "a way that cannot be predicted" % (flow.get("name"), flow.get("replication_policy")))
    return prefix + topic


def refresh_interval_s(cfg, flow):
    """MM2's topic refresh interval for the flow: the flow's own, else the config's."""
    value = flow.get("refresh_topics_interval_s")
    return int(cfg["checks"]["refresh_interval_s"] if value is None else value)


def duplicates_fail(cfg, flow):
    mode = cfg["checks"]["duplicates"]
    return mode == "fail" or (mode == "auto" and bool(flow.get("exactly_once")))


def topic_matches(flow, topic):
    """Whether the flow's topic filter (Java regex, full match; approximated by Python re) takes it."""
    inc = flow.get("topics_regex") or "|".join(flow.get("topics") or [".*"])
    exc = flow.get("topics_exclude_regex")
    if exc is None:
        exc = "|".join(flow.get("topics_exclude") or [])
    try:
        if not re.fullmatch(inc, topic):
            return False
        return not (exc and re.fullmatch(exc, topic))
    except re.error:
        return True  # a Java-only regex: assume it matches, the checks will tell


def load(path, run_id=None):
    try:
        with open(path) as fh:
            raw = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ConfigError("cannot read config %s: %s" % (path, exc))
    return normalise(raw, run_id)


def normalise(raw, run_id=None):
    if not isinstance(raw, dict):
        raise ConfigError("config: expected a JSON object")
    if raw.get("version") != 1:
        raise ConfigError("config.version: expected 1, got %r" % raw.get("version"))
    errors = []
    clusters = raw.get("clusters")
    if not isinstance(clusters, dict) or not clusters:
        errors.append("config.clusters: expected a non-empty mapping alias -> {bootstrap_servers, properties}")
        clusters = {}
    for alias, cl in clusters.items():
        if not isinstance(cl, dict) or not cl.get("bootstrap_servers"):
            errors.append("config.clusters.%s.bootstrap_servers: missing" % alias)
        elif not isinstance(cl.get("properties", {}) or {}, dict):
            errors.append("config.clusters.%s.properties: expected a mapping" % alias)
    flows = raw.get("flows")
    if not isinstance(flows, list) or not flows:
        errors.append("config.flows: expected a non-empty list (mm2_model.effective_flows items)")
        flows = []
    for i, flow in enumerate(flows):
        for key in ("name", "source", "target"):
            if not isinstance(flow, dict) or not flow.get(key):
                errors.append("config.flows[%d].%s: missing" % (i, key))
        if isinstance(flow, dict):
            for side in ("source", "target"):
                if flow.get(side) and flow[side] not in clusters and not flow.get(side + "_bootstrap_servers"):
                    errors.append("config.flows[%d].%s: cluster %r not in config.clusters" % (i, side, flow[side]))
            if "remote_topic_prefix" not in flow:
                errors.append("config.flows[%d].remote_topic_prefix: missing (mm2_model.effective_flows gives it)" % i)
            if flow.get("refresh_topics_interval_s") is None and (raw.get("checks") or {}).get(
                    "refresh_interval_s") is None:
                errors.append("config.flows[%d].refresh_topics_interval_s: missing, and no "
                              "config.checks.refresh_interval_s" % i)
    checks = _merge(DEFAULT_CHECKS, raw.get("checks") or {})
    unknown = [c for c in checks["enabled"] if c not in ALL_CHECKS]
    if unknown:
        errors.append("config.checks.enabled: unknown check(s) %s (known: %s)" % (unknown, ", ".join(ALL_CHECKS)))
    if checks["duplicates"] not in DUPLICATES:
        errors.append("config.checks.duplicates: %r is not one of %s" % (checks["duplicates"], ", ".join(DUPLICATES)))
    for key in ("records", "payload_bytes", "partitions"):
        if not isinstance(checks[key], int) or checks[key] < 1:
            errors.append("config.checks.%s: expected a positive integer" % key)
    krb5_conf = raw.get("krb5_conf")
    if krb5_conf is not None and not (isinstance(krb5_conf, str) and os.path.isabs(krb5_conf)):
        errors.append("config.krb5_conf: expected an absolute path or null, got %r" % (krb5_conf,))
    if errors:
        raise ConfigError("invalid config:\n  " + "\n  ".join(errors))
    run_id = run_id or raw.get("run_id") or new_run_id()
    if not re.fullmatch(r"[A-Za-z0-9._-]+", run_id):
        raise ConfigError("run_id %r: only letters, digits, '.', '_' and '-' (it is used in topic names)" % run_id)
    enabled_flows = [f for f in flows if f.get("enabled", True)]
    for flow in flows:
        for side in ("source", "target"):
            if not flow.get(side + "_bootstrap_servers"):
                flow[side + "_bootstrap_servers"] = clusters[flow[side]]["bootstrap_servers"]
    return {"version": 1, "run_id": run_id, "clusters": clusters, "flows": flows, "krb5_conf": krb5_conf,
            "enabled_flows": enabled_flows, "checks": checks, "raw": raw}


def _flow_topics(topics, flow):
    """A topic list for every flow, or a mapping flow name -> list."""
    if isinstance(topics, dict):
        topics = topics.get(flow["name"], [])
    return list(topics or [])


def topics_for(cfg, flow):
    return _flow_topics(cfg["checks"]["topics"], flow)


def reconcile_topics_for(cfg, flow):
    topics = cfg["checks"]["reconcile"].get("topics")
    return topics_for(cfg, flow) if topics is None else _flow_topics(topics, flow)


def cluster_props(cfg, alias):
    cl = cfg["clusters"].get(alias) or {}
    return dict(cl.get("properties") or {})
