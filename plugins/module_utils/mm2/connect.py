# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""MirrorMaker 2 as connectors on a distributed Kafka Connect cluster (pure Python, stdlib only).

The disaster-recovery layout runs one Connect cluster per flow, next to the flow's target cluster.
Everything here is derived from the same flow model as dedicated mode (``mm2_model``), so one
inventory describes either layout:

* ``names``: the one home of the naming rules (group.id, internal topics, connector names);
* ``worker_properties``: the worker's properties, sorted;
* ``connectors``: the MirrorSourceConnector / MirrorCheckpointConnector (/ MirrorHeartbeatConnector)
  configs of a flow, what the Connect REST API is given;
* ``externalize_secrets``: secret values moved into files read by Kafka's FileConfigProvider, so
  that ``GET /connectors/<name>/config`` shows ``${file:<path>:<key>}`` and never a password;
* ``topic_acls_sync``: ``sync.topic.acls.enabled`` from whether the flow's clusters use an
  authorizer, as the inventory shows it;
* ``check_*``: refusals with the variable at fault named, before any host or REST call;
  ``guide_warnings``: the Red Hat guide's operating rules the inventory shows broken.

Facts relied on (Apache Kafka 4.x, ``connect/mirror`` and ``connect/runtime``):

* a MirrorMaker connector takes its clients' settings from ``source.cluster.*`` and
  ``target.cluster.*``, and any ``consumer.*`` key reaches the source consumer
  (``MirrorSourceConfig.sourceConsumerConfig``);
* ``MirrorSourceConnector.exactlyOnceSupport`` answers SUPPORTED only with
  ``consumer.isolation.level=read_committed``; the connector cannot define transaction
  boundaries, so ``transaction.boundary`` is ``poll`` or ``interval``;
* a checkpoint task's ``consumer.*`` keys reach its readers of the checkpoints and offset-syncs
  topics on the target (``MirrorConnectorConfig.targetConsumerConfig``), and ``KafkaBasedLog``
  reads them to the high watermark (``TopicAdmin.endOffsets``, READ_UNCOMMITTED);
* the worker writes source records with its own producer, so the worker's ``bootstrap.servers``
  is the target cluster, and its clients are configured from top-level, ``producer.``,
  ``consumer.`` and ``admin.`` keys;
* ``AbstractHerder`` puts the ``${provider:path:key}`` references back into task configs it
  shows, so a secret read through a config provider stays out of the REST API;
* ``MirrorSourceConnector.syncTopicAcls`` describes the source's topic ACLs (a source without an
  authorizer answers SecurityDisabledException: the connector logs it and skips the sync) and
  creates them on the target (a target without one fails the ``createAcls`` of every binding it
  copies, a warning each, at every ``sync.topic.acls.interval.seconds``).
"""

from __future__ import annotations

import re
import time
from collections import OrderedDict

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import plain, render_value, unknown_key_message
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import model as mm2_model
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.connect import rest as connect_rest
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.secrets import is_provider_reference, is_secret_key, is_secret_value

MIRROR_PACKAGE = "org.apache.kafka.connect.mirror."
CONNECTOR_KINDS = ("MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector")
BYTE_ARRAY_CONVERTER = "org.apache.kafka.connect.converters.ByteArrayConverter"
FILE_PROVIDER = "org.apache.kafka.common.config.provider.FileConfigProvider"
# The keys that must agree between the connectors of one flow: the checkpoint connector finds the
# source connector's offset syncs and remote topics through them.
FLOW_SHARED_KEYS = ("replication.policy.class", "replication.policy.separator",
                    "replication.policy.internal.topic.separator.enabled",
                    "offset-syncs.topic.location", "topics", "topics.exclude")
# Worker settings: given in mirrormaker_properties for dedicated mode, never part of a connector.
WORKER_KEYS = re.compile(r"^(listeners|rest\..*|admin\.listeners|plugin\..*|group\.id|(config|offset|status)\.storage\..*"
                         r"|(key|value|header)\.converter(\..*)?|exactly\.once\.source\.support|offset\.flush\..*"
                         r"|scheduled\.rebalance\.max\.delay\.ms|config\.providers(\..*)?|connector\.client\.config\.override\.policy"
                         r"|dedicated\.mode\..*)$")
# Client settings a worker needs to reach a secured target cluster.
CLIENT_KEY = re.compile(r"^(security\.protocol|sasl\..*|ssl\..*|client\.dns\.lookup)$")
# -1: the broker's default.replication.factor (KIP-464), right for any cluster size.
RF_DEFAULTS = OrderedDict([("replication.factor", "-1"), ("offset-syncs.topic.replication.factor", "-1"),
                           ("checkpoints.topic.replication.factor", "-1"),
                           ("heartbeats.topic.replication.factor", "-1")])
LAYOUT_DEFAULTS = OrderedDict([("offset-syncs.topic.location", "target"),
                               ("heartbeats.replication.enabled", "false")])
TRANSACTION_BOUNDARIES = mm2_model.TRANSACTION_BOUNDARIES
_NAME_BAD = re.compile(r"[/\s\\?#%]|[\x00-\x1f\x7f]")


# ------------------------------------------------------------------------ naming


def flow_slug(source, target):
    return "%s-to-%s" % (source, target)


def connector_name(source, target, kind):
    """``<SOURCE>-to-<TARGET>-<Connector>``, e.g. ``A-to-B-MirrorSourceConnector``."""
    return "%s-%s" % (flow_slug(source, target), kind)


def names(source, target, group_id="", topic_prefix=""):
    """group.id and internal topic names of the Connect cluster that runs flow source->target."""
    slug = "connect-mirrormaker-" + flow_slug(source, target)
    prefix = topic_prefix or "__" + slug
    return OrderedDict([("group_id", group_id or slug),
                        ("offsets", prefix + "-offsets"),
                        ("configs", prefix + "-configs"),
                        ("status", prefix + "-status")])


def connector_name_fault(name, path):
    """A refusal for a name the REST path cannot carry as it is, or None."""
    if not name or _NAME_BAD.search(name):
        return ("%s: connector name %r must be non-empty, without '/', blanks, '\\', '?', '#' or '%%' "
                "(it is a path segment of the Connect REST API)" % (path, name))
    return None


# ------------------------------------------------------------------------ worker


def worker_properties(target_client, cluster_names, rest, exactly_once, defaults=None, extra=None):
    """The worker's properties, sorted.

    target_client: {bootstrap_servers, properties} of the target cluster (mm2_model clients());
    rest: {port, advertised_host, bind_host}; defaults then extra on top of the role's keys.
    """
    out = {
        "bootstrap.servers": target_client["bootstrap_servers"],
        "group.id": cluster_names["group_id"],
        "plugin.discovery": "service_load",
        "key.converter": BYTE_ARRAY_CONVERTER,
        "value.converter": BYTE_ARRAY_CONVERTER,
        "header.converter": BYTE_ARRAY_CONVERTER,
        "offset.storage.topic": cluster_names["offsets"],
        "config.storage.topic": cluster_names["configs"],
        "status.storage.topic": cluster_names["status"],
        "offset.storage.replication.factor": "-1",
        "config.storage.replication.factor": "-1",
        "status.storage.replication.factor": "-1",
        "listeners": "http://%s:%s" % (rest.get("bind_host", ""), rest["port"]),
        "rest.advertised.listener": "http",
        "rest.advertised.host.name": rest["advertised_host"],
        "rest.advertised.port": str(rest["port"]),
        "config.providers": "file",
        "config.providers.file.class": FILE_PROVIDER,
    }
    if exactly_once:
        out["exactly.once.source.support"] = "enabled"
    for key, value in target_client.get("properties", {}).items():
        if CLIENT_KEY.match(key):
            for prefix in ("", "producer.", "consumer.", "admin."):
                out[prefix + key] = render_value(value)
    for layer in (defaults or {}, extra or {}):
        for key, value in layer.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = render_value(value)
    return OrderedDict((k, out[k]) for k in sorted(out))


# ------------------------------------------------------------------ authorization


def topic_acls_sync(authorizers, source, target):
    """``sync.topic.acls.enabled`` of flow source->target: "false" when the inventory runs one of
    its two clusters without an authorizer, "true" otherwise.

    authorizers: alias -> whether the brokers the inventory runs for that cluster have an
    authorizer (``mm2_inventory_authorizers``); a cluster run elsewhere is not in it. The guide:
    "If you don't use authorizations you should disable this feature by setting it to false". ACL
    sync needs an authorizer on both ends (it reads the source's ACLs and creates them on the
    target), so one cluster without is enough. A cluster the inventory does not run keeps
    MirrorMaker 2's default (true): the collection cannot see its authorizer, and turning the sync
    off where one runs would leave the standby without the ACLs clients need after a failover.
    """
    if any(authorizers.get(alias) is False for alias in (source, target)):
        return "false"
    return "true"


def guide_warnings(model, source, target, broker_counts, authorizers):
    """The Red Hat guide's operating rules (chapter 5's opening) that the inventory shows broken,
    one sentence each naming what to change. Warnings, not refusals: the guide allows a smaller
    standby "when disaster recovery is only necessary for a subset of the topics", and a reverse
    flow is how a failback starts (docs/disaster_recovery.md).

    broker_counts, authorizers: alias -> what the inventory's brokers of that cluster have.
    """
    found = []
    rules = "the guide's disaster-recovery cluster is a hot standby"
    for flow in model.flows:
        if flow["source"] == target and flow["target"] == source and flow["enabled"]:
            found.append("%s.enabled: flow %s is enabled while %s is the disaster-recovery cluster of %s->%s; %s: "
                         "\"Clients must only be connected to the primary cluster, and only MirrorMaker should "
                         "connect and mirror data to the disaster recovery cluster\" (disable %s until a failback)"
                         % (flow["path"], flow["name"], target, source, target, rules, flow["name"]))
    if source in broker_counts and target in broker_counts and broker_counts[target] < broker_counts[source]:
        found.append("kafka_brokers: the disaster-recovery cluster %s has %d broker(s), its primary %s has %d; the guide: "
                     "\"both clusters should have similar resources\" (fewer only when disaster recovery is needed "
                     "for a subset of the topics)" % (target, broker_counts[target], source, broker_counts[source]))
    if source in authorizers and target in authorizers and authorizers[source] != authorizers[target]:
        found.append("kafka_broker_authorizer_enabled: cluster %s runs %s authorizer and cluster %s %s; the guide: "
                     "\"Both clusters should also have similar configurations\" (clients moved to %s after a "
                     "failover meet other permissions, and sync.topic.acls.enabled is false)"
                     % (source, "an" if authorizers[source] else "no", target,
                        "one" if authorizers[target] else "none", target))
    return found


# -------------------------------------------------------------------- connectors


def _flow(model, source, target):
    for flow in model.flows:
        if flow["source"] == source and flow["target"] == target:
            return flow
    return None


def connectors(model, source, target, heartbeat=False, overrides=None, topic_acls="true"):
    """OrderedDict connector name -> config (sorted, string values) of flow source->target.

    Every connector of a flow gets the flow's whole configuration, as dedicated mode gives it
    (MirrorMakerConfig.connectorBaseConfig): global keys, the flow's defaults, its properties
    and fields; then the layout's defaults where nothing was set; then ``overrides[kind]``.
    ``topic_acls`` (``topic_acls_sync``) is MirrorSourceConnector's ``sync.topic.acls.enabled``
    where nothing set it.
    """
    model.raise_if_invalid()
    flow = _flow(model, source, target)
    if flow is None:
        raise ValueError("no flow %s->%s in mirrormaker_flows" % (source, target))
    base = OrderedDict()
    for scope in (model.global_props, model.flow_defaults, flow["properties"], flow["fields"]):
        for key, value in scope.items():
            if not WORKER_KEYS.match(key):
                base[key] = render_value(value)
    base.update(model.transaction_defaults(flow))
    base["replication.policy.class"] = flow["policy"]
    for key, value in list(RF_DEFAULTS.items()) + list(LAYOUT_DEFAULTS.items()):
        base.setdefault(key, value)
    base["source.cluster.alias"] = source
    base["target.cluster.alias"] = target
    for end, alias in (("source", source), ("target", target)):
        cluster = model.clusters[alias]
        base["%s.cluster.bootstrap.servers" % end] = ",".join(cluster["bootstrap_servers"])
        for key, value in cluster["properties"].items():
            if not WORKER_KEYS.match(key):
                base["%s.cluster.%s" % (end, key)] = render_value(value)
    overrides = overrides or {}
    result = OrderedDict()
    kinds = CONNECTOR_KINDS if heartbeat else CONNECTOR_KINDS[:2]
    for kind in kinds:
        config = OrderedDict(base)
        config["connector.class"] = MIRROR_PACKAGE + kind
        if kind == "MirrorSourceConnector":
            # The source connector's key (the guide's example sets it there only).
            config.setdefault("sync.topic.acls.enabled", topic_acls)
        if kind == "MirrorSourceConnector" and model.exactly_once:
            config.setdefault("exactly.once.support", "required")
            # The source connector's only: it reads the source topics, where aborted records must not
            # be mirrored. A checkpoint task's consumer.* keys go to its readers of the checkpoints
            # topic, which its own and the other checkpoint tasks write in transactions, and a
            # read_committed reader cannot read to the end past an open transaction: while one is
            # open the task's checkpoint store does not load and it emits no checkpoint (the Red Hat
            # guide sets the key on MirrorSourceConnector only, docs/disaster_recovery.md).
            config.setdefault("consumer.isolation.level", "read_committed")
        for key, value in (overrides.get(kind) or {}).items():
            if value is None:
                config.pop(key, None)
            else:
                config[str(key)] = render_value(value)
        result[connector_name(source, target, kind)] = OrderedDict((k, config[k]) for k in sorted(config))
    return result


def check_connectors(configs, worker_exactly_once, overrides_var, eos_var):
    """Refusals for the connector configs of one flow (connectors() output), naming the variable."""
    errors = []
    by_kind = OrderedDict((cfg["connector.class"].rsplit(".", 1)[-1], cfg) for cfg in configs.values())
    for name, cfg in configs.items():
        fault = connector_name_fault(name, overrides_var)
        if fault:
            errors.append(fault)
        # Connect refuses a config whose name is not the connector's (PUT /connectors/<name>/config);
        # refused here, before any worker is installed, not at the REST call.
        if "name" in cfg and cfg["name"] != name:
            errors.append("%s: connector %s would be configured with name=%r; leave 'name' out of the connector "
                          "properties (Connect takes it from the REST path)" % (overrides_var, name, cfg["name"]))
    src = by_kind.get("MirrorSourceConnector")
    chk = by_kind.get("MirrorCheckpointConnector")
    if src is not None and chk is not None:
        for key in FLOW_SHARED_KEYS:
            if src.get(key) != chk.get(key):
                errors.append("%s: MirrorSourceConnector and MirrorCheckpointConnector of one flow must agree on %r "
                              "(%r vs %r): the checkpoints are found through it"
                              % (overrides_var, key, src.get(key), chk.get(key)))
    for kind, cfg in by_kind.items():
        support = cfg.get("exactly.once.support", "requested")
        if support == "required" and not worker_exactly_once:
            errors.append("%s: %s asks for exactly.once.support=required but the workers do not enable "
                          "exactly.once.source.support; set %s: true" % (overrides_var, kind, eos_var))
        if support == "required" and cfg.get("consumer.isolation.level") != "read_committed":
            errors.append("%s: %s with exactly.once.support=required needs consumer.isolation.level="
                          "read_committed (MirrorSourceConnector refuses exactly-once otherwise)" % (overrides_var, kind))
        boundary = cfg.get("transaction.boundary")
        if boundary is not None and boundary not in TRANSACTION_BOUNDARIES:
            errors.append("%s: %s transaction.boundary=%r; MirrorMaker connectors support %s"
                          % (overrides_var, kind, boundary, " or ".join(TRANSACTION_BOUNDARIES)))
    return errors


def check_clusters(workers):
    """Refusals for Connect clusters that would share state on one Kafka cluster.

    workers: list of {host, flow, target_bootstrap, names} (names() output), one per worker host.
    Workers of the same flow are one Connect cluster and must agree; different flows on the same
    target cluster must not share a group.id or an internal topic.
    """
    errors = []
    clusters = OrderedDict()
    for worker in workers:
        first = clusters.setdefault(worker["flow"], worker)
        if first is not worker and (first["names"] != worker["names"]
                                    or first["target_bootstrap"] != worker["target_bootstrap"]):
            errors.append("connect_group_id/connect_internal_topic_prefix: hosts %s and %s run flow %s as one "
                          "Connect cluster but disagree on its group.id, internal topics or target cluster"
                          % (first["host"], worker["host"], worker["flow"]))
    flows = list(clusters.values())
    for i, one in enumerate(flows):
        for other in flows[i + 1:]:
            if not set(one["target_bootstrap"].split(",")) & set(other["target_bootstrap"].split(",")):
                continue
            shared = sorted(set(one["names"].values()) & set(other["names"].values()))
            if shared:
                errors.append("connect_group_id/connect_internal_topic_prefix: the Connect clusters of flows %s "
                              "(host %s) and %s (host %s) share %s on one Kafka cluster"
                              % (one["flow"], one["host"], other["flow"], other["host"], ", ".join(shared)))
    return errors


# ----------------------------------------------------------------------- secrets


def externalize_secrets(configs, secrets_dir):
    """(configs with secrets replaced by FileConfigProvider references, files).

    files: OrderedDict connector name -> {path, properties (key -> value)}, one file per connector
    with secrets; the role writes them 0600 for the service user and restarts the connector whose
    file changed. A value that already is a config provider reference stays.
    """
    out = OrderedDict()
    files = OrderedDict()
    for name, config in configs.items():
        path = "%s/%s.properties" % (secrets_dir.rstrip("/"), name)
        new = OrderedDict()
        for key, value in config.items():
            if value and not is_provider_reference(value) and (is_secret_key(key) or is_secret_value(value)):
                files.setdefault(name, OrderedDict([("path", path), ("properties", OrderedDict())]))["properties"][key] = value
                new[key] = "${file:%s:%s}" % (path, key)
            else:
                new[key] = value
        out[name] = new
    return out, files


# -------------------------------------------------------------------------- plan


# The states the role leaves a connector in: connect_connector's, from their home.
CONNECTOR_STATES = connect_rest.CONNECTOR_STATES


def handover_seconds(worker):
    """Seconds the connectors and tasks of a leaving worker wait for it before they move: the
    worker's ``scheduled.rebalance.max.delay.ms``, Connect's default where unset or unreadable."""
    value = worker.get("scheduled.rebalance.max.delay.ms", mm2_model.CONNECT_REBALANCE_DELAY_MS)
    try:
        return int(str(value).strip()) / 1000.0
    except ValueError:  # Connect refuses such a worker; its own default is the best guess
        return mm2_model.CONNECT_REBALANCE_DELAY_MS / 1000.0


def plan(clusters, flows, properties, options, source, target, settings):
    """Everything the connect role renders and applies for one worker, or the errors.

    settings: group_id, topic_prefix, rest {port, advertised_host, bind_host}, worker_defaults,
    worker_properties, connector_properties (per kind), secrets_dir, authorizers (alias -> whether
    the inventory's brokers of that cluster have an authorizer), and the variable names the
    messages cite (flows_var, overrides_var, eos_var). ``options["broker_counts"]`` as for the
    flow model. ``warnings``: the guide's operating rules the inventory shows broken.
    """
    result = OrderedDict([("errors", []), ("warnings", []), ("names", None), ("worker_properties", None),
                          ("connectors", OrderedDict()), ("secret_files", OrderedDict()), ("flow", None),
                          ("handover_seconds", None), ("connector_offsets", OrderedDict()),
                          ("connector_states", OrderedDict())])
    model = mm2_model.load(clusters, flows, properties, options)
    if model.errors:
        result["errors"] = list(model.errors)
        return result
    flow = _flow(model, source, target)
    if flow is None:
        known = ", ".join(f["name"] for f in model.flows) or "none"
        result["errors"].append("connect_source/connect_target: %s->%s is not a flow of %s (flows: %s)"
                                % (source, target, settings.get("flows_var", "connect_flows"), known))
        return result
    if not flow["enabled"]:
        result["errors"].append("%s.enabled: flow %s is disabled but hosts of connect_workers run it"
                                % (flow["path"], flow["name"]))
        return result
    effective = [f for f in model.effective_flows() if f["name"] == flow["name"]][0]
    result["flow"] = plain(effective)
    result["names"] = names(source, target, settings.get("group_id", ""), settings.get("topic_prefix", ""))
    worker = worker_properties(model.clients()[target], result["names"], settings["rest"],
                               model.exactly_once, settings.get("worker_defaults"),
                               settings.get("worker_properties"))
    result["worker_properties"] = worker
    result["handover_seconds"] = handover_seconds(worker)
    overrides = settings.get("connector_properties") or {}
    overrides_var = settings.get("overrides_var", "connect_connector_properties")
    for kind in overrides:
        if kind not in CONNECTOR_KINDS:
            result["errors"].append(unknown_key_message(overrides_var, kind, CONNECTOR_KINDS))
    authorizers = settings.get("authorizers") or {}
    configs = connectors(model, source, target, heartbeat=effective["emit_heartbeats"], overrides=overrides,
                         topic_acls=topic_acls_sync(authorizers, source, target))
    result["warnings"] = guide_warnings(model, source, target, model.inventory_brokers, authorizers)
    worker_eos = worker.get("exactly.once.source.support") == "enabled"
    result["errors"].extend(check_connectors(configs, worker_eos, overrides_var,
                                             settings.get("eos_var", "connect_exactly_once")))
    if model.exactly_once and not worker_eos:
        result["errors"].append("connect_worker_properties: exactly.once.source.support is turned off while "
                                "%s is true" % settings.get("eos_var", "connect_exactly_once"))
    result["connectors"], result["secret_files"] = externalize_secrets(configs, settings["secrets_dir"])
    checks = (("connector_offsets", "connect_connector_offsets", lambda v: isinstance(v, list),
               "must be a list of {partition, offset} entries"),
              ("connector_states", "connect_connector_states", lambda v: v in CONNECTOR_STATES,
               "must be one of %s" % ", ".join(CONNECTOR_STATES)))
    for key, var, valid, expected in checks:
        given = settings.get(key) or {}
        for name in sorted(given):
            if name not in configs:
                result["errors"].append("%s.%s: not a connector of flow %s (its connectors: %s)"
                                        % (var, name, flow["name"], ", ".join(configs)))
            elif not valid(given[name]):
                result["errors"].append("%s.%s: %s (is %r)" % (var, name, expected, given[name]))
            else:
                result[key][name] = given[name]
    return result


def unhealthy(status, gone=()):
    """Why a worker's GET /connectors?expand=status answer is not healthy; empty when it is.

    A connector counts when it runs (or was paused or stopped on purpose) and none of its tasks
    failed or is unassigned; a connector with no task is fine (no topic matched yet). Nothing may
    still be assigned to a worker of ``gone`` (``host:port`` ids of workers taken out): their
    connectors and tasks wait ``scheduled.rebalance.max.delay.ms`` before they move, and until the
    leaving worker's last status write is read its tasks even read RUNNING.
    """
    reasons = []
    if not isinstance(status, dict):
        return ["no status from the worker"]
    gone = set(gone or ())
    for name in sorted(status):
        entry = (status[name] or {}).get("status", {})
        connector = entry.get("connector", {})
        if connector.get("state") not in ("RUNNING", "PAUSED", "STOPPED"):
            reasons.append("%s is %s" % (name, connector.get("state")))
        elif connector.get("worker_id") in gone:
            reasons.append("%s is still on %s, which was taken out" % (name, connector.get("worker_id")))
        for task in entry.get("tasks", []):
            if task.get("state") not in ("RUNNING", "PAUSED"):
                reasons.append("%s task %s is %s on %s" % (name, task.get("id"), task.get("state"),
                                                           task.get("worker_id")))
            elif task.get("worker_id") in gone:
                reasons.append("%s task %s is still on %s, which was taken out"
                               % (name, task.get("id"), task.get("worker_id")))
    return reasons


def assignment(status):
    """{(connector, task id or None): (state, worker_id)} of a GET /connectors?expand=status answer."""
    out = {}
    for name, entry in (status or {}).items():
        entry = (entry or {}).get("status", {})
        connector = entry.get("connector", {})
        out[(name, None)] = (connector.get("state"), connector.get("worker_id"))
        for task in entry.get("tasks", []):
            out[(name, task.get("id"))] = (task.get("state"), task.get("worker_id"))
    return out


def _unit(key):
    name, task = key
    return name if task is None else "%s task %s" % (name, task)


def unstable(first, second, worker=None, workers=0):
    """Why two healthy reads of GET /connectors?expand=status some seconds apart do not show one
    stable state; empty when they do.

    Connect's status topic is eventually consistent: right after a worker restarts, the group's
    second (cooperative) rebalance round may still move a connector or task, and a status written
    by the previous generation can still read RUNNING. So the assignment must be the same on both
    reads (nothing moved, stopped or started in between), and ``worker`` (its ``host:port`` id),
    when given, must run at least one connector once the cluster has as many connectors as its
    ``workers``: the assignor spreads connectors over every member of the current generation, so
    a worker that runs none has not joined it yet.
    """
    reasons = []
    before, after = assignment(first), assignment(second)
    for key in sorted(set(before) | set(after), key=lambda k: (k[0], -1 if k[1] is None else k[1])):
        was, now = before.get(key), after.get(key)
        if was is None:
            reasons.append("%s appeared between two reads" % _unit(key))
        elif now is None:
            reasons.append("%s went away between two reads" % _unit(key))
        elif was != now:
            reasons.append("%s changed between two reads: %s on %s, then %s on %s" % ((_unit(key),) + was + now))
    if worker and workers and not reasons:
        connectors = [k for k in after if k[1] is None]
        if len(connectors) >= workers and not any(after[k][1] == worker for k in after):
            reasons.append("worker %s runs none of the %d connectors and their tasks: it is not in the "
                           "group's current assignment" % (worker, len(connectors)))
    return reasons


def wait_stable(read, timeout, settle, worker=None, workers=0, poll=5.0, clock=time.monotonic, sleep=time.sleep,
                gone=()):
    """Poll ``read()`` (a GET /connectors?expand=status answer, or raise with a sentence) until two
    reads ``settle`` seconds apart are healthy and stable (``unhealthy`` with ``gone``, ``unstable``).

    Returns (stable, last status, reasons of the last read that was not, reads made).
    """
    deadline = clock() + timeout
    reasons, status, reads = ["not read yet"], None, 0
    first = None
    while True:
        try:
            status = read()
            reads += 1
            faults = unhealthy(status, gone)
        except Exception as exc:  # an unreachable worker is a state to wait through, named in the end
            status, faults = None, ["no answer: %s" % exc]
        if faults:
            first, reasons = None, faults
        elif first is None:
            first = status
        else:
            reasons = unstable(first, status, worker, workers)
            if not reasons:
                return True, status, [], reads
            first = status
        now = clock()
        if now >= deadline:
            return False, status, reasons, reads
        sleep(min(settle if first is not None else poll, max(deadline - now, 0.01)))
