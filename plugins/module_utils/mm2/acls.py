# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The least-privilege ACLs MirrorMaker 2 needs, derived from its configuration (pure Python).

One derivation for both layouts: dedicated mode (``connect-mirror-maker.sh``, the herders
``MirrorMakerConfig`` makes from ``mm2.properties``) and MirrorMaker connectors on a distributed
Connect cluster (``mm2_connect``'s worker and connector configs).  Every binding carries the class
it belongs to; ``CLASSES`` says which call of Kafka 4.x needs it, so that no binding is there
without a reason and a test can take one class away and show what breaks.

Facts relied on (Apache Kafka 4.x source, ``connect/mirror``, ``connect/runtime``, ``KafkaApis``):

* ``MirrorMakerConfig.clusterPairs``: dedicated mode runs a herder for every ordered pair of
  clusters whose flow is enabled OR that emits heartbeats (``emit.heartbeats.enabled``, default
  true), so a one-way flow A->B also runs B->A, writing heartbeats into A;
* ``MirrorMakerConfig.workerConfig``: a herder S->T is a Connect worker on T with group
  ``S-mm2`` and the topics ``mm2-{offsets,configs,status}.S.internal`` unless set otherwise;
  it takes T's cluster settings (so ``T.exactly.once.source.support``);
* ``MirrorSourceConfig.offsetSyncsTopic``: ``mm2-offset-syncs.<other>.internal`` where <other>
  is the target alias when the topic lives on the source (the default) and the source alias when
  ``offset-syncs.topic.location=target``;
* ``MirrorSourceConnector``: lists and describes topics on both clusters, reads topic configs
  (``sync.topic.configs.enabled``) and ACLs (``describeAcls``: DESCRIBE on the source cluster,
  ``sync.topic.acls.enabled``) on the source; creates topics, adds partitions (ALTER),
  alters configs (ALTER_CONFIGS) and creates ACLs (ALTER on the target cluster) on the target;
  replicates ``heartbeats`` whatever the topic filter says unless ``heartbeats.replication.enabled``
  is false; its tasks read with ``assign()`` (no consumer group);
* ``MirrorCheckpointConnector`` / task: ``listConsumerGroups`` (only the groups one may DESCRIBE)
  and ``listConsumerGroupOffsets`` on the source; read the offset syncs; read (``CheckpointStore``,
  a warning without it) and write ``<S>.checkpoints.internal`` on the target; with
  ``sync.group.offsets.enabled`` describe and commit the groups' offsets on the target, and
  ``OffsetCommit`` needs READ on the group and READ on every topic committed;
* Kafka Connect's exactly-once source support (``docs/connect.html``, "ACL requirements"): the
  worker writes with transactional id ``connect-cluster-<group.id>``, each source task with
  ``<group.id>-<connector>-<task>``, WRITE and DESCRIBE on each; IdempotentWrite is not needed
  on Kafka 2.8 and later;
* ``DescribeCluster`` needs no ACL; a missing DESCRIBE_CONFIGS on Connect's internal topics only
  skips the cleanup-policy check (``TopicAdmin.describeTopicConfigs``), so neither is granted,
  except DESCRIBE on the target cluster, which the Red Hat guide lists (class ``guide``).

A topic or group regex becomes a binding only when it is a literal name (LITERAL) or a literal
prefix followed by ``.*`` (PREFIXED); any other regex, ``.*`` included, is refused unless the
caller opts in, and then becomes the wildcard ``*``.  A '.' outside the final ``.*`` counts as
itself: the grant is then narrower than the regex, never wider.  Excludes are not subtracted
(an ALLOW binding cannot), so they never widen a grant either.
"""

from __future__ import annotations

import re
from collections import OrderedDict

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import model as mm2_model
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import naming

LAYOUTS = ("dedicated", "connect")
WILDCARD_KINDS = ("topics", "groups")
CLUSTER_NAME = "kafka-cluster"

# class -> (cluster side, why Kafka needs it).  The order is the table's.
CLASSES = OrderedDict([
    ("source-read", ("source", "MirrorSourceTask reads the mirrored topics (assign, no group); the connector lists and describes them")),
    ("source-configs", ("source", "MirrorSourceConnector reads topic configs to copy them (sync.topic.configs.enabled)")),
    ("source-acls", ("source", "MirrorSourceConnector describes the topics' ACLs to copy them (sync.topic.acls.enabled)")),
    ("source-groups", ("source", "MirrorCheckpointConnector lists the groups and reads their committed offsets")),
    ("heartbeats-mirror", ("both", "MirrorSourceConnector replicates 'heartbeats' whatever the topic filter says "
                                   "(heartbeats.replication.enabled)")),
    ("target-write", ("target", "MirrorSourceConnector creates the remote topics and adds partitions; the worker's producer writes them")),
    ("target-configs", ("target", "MirrorSourceConnector alters the remote topics' configs (sync.topic.configs.enabled)")),
    ("target-acls", ("target", "MirrorSourceConnector creates the copied ACLs (sync.topic.acls.enabled)")),
    ("target-groups", ("target", "MirrorCheckpointTask describes the groups and commits their translated offsets "
                                 "(sync.group.offsets.enabled); OffsetCommit needs READ on each topic")),
    ("offset-syncs", ("location", "MirrorSourceConnector creates and writes the offset syncs; MirrorCheckpointTask reads them")),
    ("checkpoints", ("target", "MirrorCheckpointConnector creates the checkpoints topic, its task writes it and "
                               "reads it back on start (CheckpointStore)")),
    ("heartbeats", ("target", "MirrorHeartbeatConnector creates and writes 'heartbeats' (emit.heartbeats.enabled)")),
    ("herder", ("target", "the Connect worker joins its group and keeps its offsets, configs and status topics")),
    ("eos-worker", ("target", "exactly-once source support: the worker's transactional id for the config topic")),
    ("eos-tasks", ("target", "exactly-once source support: one transactional id per source task")),
    ("guide", ("target", "listed by the Red Hat guide; no call of Kafka 4.x needs it (DescribeCluster is not authorized)")),
])

_LITERAL = re.compile(r"^(?:[A-Za-z0-9_-]|\\[.\-_]|\.)+$")
_PRINCIPAL = re.compile(r"^User:\S+$")
_TRUE = "true"


def _bool(value, default):
    if value is None:
        return default
    return str(value).strip().lower() == _TRUE


def _split(value):
    return [item.strip() for item in str(value).split(",") if item.strip()]


def _unescape(text):
    return text.replace("\\", "")


def regex_pattern(regex):
    """(pattern_type, name) an ACL can carry for one topic/group regex, or None."""
    if regex.endswith(".*") and not regex.endswith("\\.*"):
        prefix = regex[:-2]
        if prefix and _LITERAL.match(prefix):
            return ("PREFIXED", _unescape(prefix))
        return None
    if _LITERAL.match(regex):
        return ("LITERAL", _unescape(regex))
    return None


class _Pair(object):
    """One herder's or Connect cluster's flow, resolved: the settings the derivation reads."""

    def __init__(self, source, target, lookup, defaults=None):
        self.source, self.target = source, target
        self._lookup = lookup
        self._defaults = defaults or {}
        self.enabled = True
        self.heartbeats = False
        self.group_id = None
        self.worker_topics = ()
        self.exactly_once = False
        self.connectors = OrderedDict()   # connector name -> tasks it may run

    def get(self, key, default=None):
        value = self._lookup(key)
        if value is None:
            value = self._defaults.get(key, default)
        return value

    def flag(self, key, default):
        return _bool(self.get(key), default)

    def tasks(self):
        try:
            return max(1, int(self.get("tasks.max", "1")))
        except ValueError:
            return 1


class _Acls(object):
    def __init__(self, principals):
        self.principals = principals
        self.bindings = OrderedDict()     # (cluster, principal, op, type, name, pattern) -> set of classes

    def add(self, cluster, cls, operations, resource_type, name, pattern="LITERAL"):
        principal = self.principals[cluster]
        for operation in operations:
            key = (cluster, principal, operation, resource_type, name, pattern)
            self.bindings.setdefault(key, set()).add(cls)

    def result(self):
        out = OrderedDict()
        for key in sorted(self.bindings):
            cluster, principal, operation, resource_type, name, pattern = key
            out.setdefault(cluster, []).append(OrderedDict([
                ("principal", principal), ("host", "*"), ("operation", operation), ("permission", "ALLOW"),
                ("resource_type", resource_type), ("resource_name", name), ("pattern_type", pattern),
                ("classes", sorted(self.bindings[key], key=list(CLASSES).index)),
            ]))
        return _sorted(out)


def _binding_order(binding):
    return (binding["principal"], binding["resource_type"], binding["resource_name"], binding["pattern_type"],
            binding["operation"])


def _sorted(acls):
    """Clusters by alias; a cluster's bindings by principal, resource, then operation (the table's order)."""
    return OrderedDict((cluster, sorted(acls[cluster], key=_binding_order)) for cluster in sorted(acls))


def _patterns(pair, kind, var, allow_wildcard, errors):
    """The (pattern_type, name) list of a flow's topics or groups."""
    regexes = _split(pair.get(kind, ".*"))
    found = []
    for regex in regexes:
        pattern = regex_pattern(regex)
        if pattern is None:
            if kind in allow_wildcard:
                pattern = ("LITERAL", "*")
            else:
                errors.append(
                    "%s: flow %s->%s %s %r is a regex no ACL can express; list the %s, give a literal prefix "
                    "followed by '.*', or opt in to a grant on every %s with mm2_acls_allow_wildcard: [%s]"
                    % (var, pair.source, pair.target, kind, regex, kind, kind[:-1], kind))
                continue
        if pattern not in found:
            found.append(pattern)
    return found


def _remote(pair, pattern):
    """The remote topic pattern on the target for a source topic pattern."""
    pattern_type, name = pattern
    policy = pair.get("replication.policy.class", naming.DEFAULT_POLICY)
    separator = pair.get("replication.policy.separator", ".")
    prefix = naming.remote_topic_prefix(pair.source, policy, separator)
    if name == "*":
        return ("PREFIXED", prefix) if prefix else ("LITERAL", "*")
    return (pattern_type, prefix + name)


def _internal(pair):
    separator = pair.get("replication.policy.separator", ".")
    internal_sep = pair.flag("replication.policy.internal.topic.separator.enabled", True)
    location = (pair.get("offset-syncs.topic.location", "source") or "source").strip().lower()
    return location, naming.internal_topics(pair.source, pair.target, separator, internal_sep, location)


def _flow_bindings(acls, pair, var, allow_wildcard, errors):
    s, t = pair.source, pair.target
    topics = _patterns(pair, "topics", var, allow_wildcard, errors)
    remote = [_remote(pair, p) for p in topics]
    location, internal = _internal(pair)
    sync_configs = pair.flag("sync.topic.configs.enabled", True)
    sync_acls = pair.flag("sync.topic.acls.enabled", True)
    checkpoints = pair.flag("emit.checkpoints.enabled", True)
    for pattern_type, name in topics:
        acls.add(s, "source-read", ("READ", "DESCRIBE"), "TOPIC", name, pattern_type)
        if sync_configs:
            acls.add(s, "source-configs", ("DESCRIBE_CONFIGS",), "TOPIC", name, pattern_type)
    for pattern_type, name in remote:
        acls.add(t, "target-write", ("CREATE", "WRITE", "DESCRIBE", "ALTER"), "TOPIC", name, pattern_type)
        if sync_configs:
            acls.add(t, "target-configs", ("ALTER_CONFIGS",), "TOPIC", name, pattern_type)
    if pair.flag("heartbeats.replication.enabled", True):
        heartbeats = internal["heartbeats"]
        acls.add(s, "heartbeats-mirror", ("READ", "DESCRIBE") + (("DESCRIBE_CONFIGS",) if sync_configs else ()),
                 "TOPIC", heartbeats)
        remote_hb = _remote(pair, ("LITERAL", heartbeats))
        acls.add(t, "heartbeats-mirror", ("CREATE", "WRITE", "DESCRIBE", "ALTER")
                 + (("ALTER_CONFIGS",) if sync_configs else ()), "TOPIC", remote_hb[1], remote_hb[0])
    if sync_acls:
        acls.add(s, "source-acls", ("DESCRIBE",), "CLUSTER", CLUSTER_NAME)
        acls.add(t, "target-acls", ("ALTER",), "CLUSTER", CLUSTER_NAME)
        acls.add(t, "guide", ("DESCRIBE",), "CLUSTER", CLUSTER_NAME)
    syncs_cluster = t if location == "target" else s
    syncs_ops = []
    if pair.flag("emit.offset-syncs.enabled", True):
        syncs_ops += ["CREATE", "WRITE", "DESCRIBE"]
    if checkpoints:
        syncs_ops += ["READ", "DESCRIBE"]
    if syncs_ops:
        acls.add(syncs_cluster, "offset-syncs", tuple(OrderedDict.fromkeys(syncs_ops)), "TOPIC", internal["offset_syncs"])
    if checkpoints:
        groups = _patterns(pair, "groups", var, allow_wildcard, errors)
        for pattern_type, name in groups:
            acls.add(s, "source-groups", ("DESCRIBE",), "GROUP", name, pattern_type)
        acls.add(t, "checkpoints", ("CREATE", "WRITE", "DESCRIBE", "READ"), "TOPIC", internal["checkpoints"])
        if pair.flag("sync.group.offsets.enabled", False):
            for pattern_type, name in groups:
                acls.add(t, "target-groups", ("DESCRIBE", "READ"), "GROUP", name, pattern_type)
            for pattern_type, name in remote:
                acls.add(t, "target-groups", ("READ",), "TOPIC", name, pattern_type)


def _worker_bindings(acls, pair):
    t = pair.target
    acls.add(t, "herder", ("READ",), "GROUP", pair.group_id)
    for topic in pair.worker_topics:
        acls.add(t, "herder", ("CREATE", "READ", "WRITE", "DESCRIBE"), "TOPIC", topic)
    if pair.heartbeats:
        acls.add(t, "heartbeats", ("CREATE", "WRITE", "DESCRIBE"), "TOPIC", "heartbeats")
    if pair.exactly_once:
        acls.add(t, "eos-worker", ("WRITE", "DESCRIBE"), "TRANSACTIONAL_ID", "connect-cluster-" + pair.group_id)
        for connector, tasks in pair.connectors.items():
            for task in range(tasks):
                acls.add(t, "eos-tasks", ("WRITE", "DESCRIBE"), "TRANSACTIONAL_ID",
                         "%s-%s-%d" % (pair.group_id, connector, task))


def dedicated_pairs(props):
    """The herders ``connect-mirror-maker.sh`` runs for the plan's mm2.properties mapping.

    Read the way MirrorMaker 2 reads the file (MirrorMakerConfig.clusterPairs, clusterPairConfig:
    a ``SOURCE->TARGET.`` key over the top-level one), not from the flow model: a key given in
    mirrormaker_properties changes what MirrorMaker 2 does, and so the ACLs it needs, whether or
    not the model names it."""
    clusters = _split(props.get("clusters", ""))
    pairs = []
    for source in clusters:
        for target in clusters:
            if source == target:
                continue
            prefix = "%s->%s." % (source, target)

            def lookup(key, prefix=prefix):
                return props.get(prefix + key, props.get(key))

            pair = _Pair(source, target, lookup)
            pair.enabled = _bool(props.get(prefix + "enabled"), False)
            pair.heartbeats = pair.flag("emit.heartbeats.enabled", True)
            if not (pair.enabled or pair.heartbeats):
                continue

            herder = naming.herder_settings(props, source, target)
            pair.group_id = herder["group.id"]
            pair.worker_topics = tuple(herder[key] for key in
                                       ("offset.storage.topic", "config.storage.topic", "status.storage.topic"))
            pair.exactly_once = str(herder["exactly.once.source.support"]).strip().lower() == "enabled"
            if pair.enabled:
                pair.connectors["MirrorSourceConnector"] = pair.tasks()
                if pair.flag("emit.checkpoints.enabled", True):
                    pair.connectors["MirrorCheckpointConnector"] = pair.tasks()
            if pair.heartbeats:
                pair.connectors["MirrorHeartbeatConnector"] = 1
            pairs.append(pair)
    return pairs


def connect_pair(plan):
    """The flow of one Connect cluster from ``mm2_connect.plan``'s result."""
    flow = plan["flow"]
    configs = plan["connectors"]
    merged = {}
    for config in configs.values():
        for key, value in config.items():
            merged.setdefault(key, value)
    pair = _Pair(flow["source"], flow["target"], merged.get)
    pair.heartbeats = any(name.endswith("MirrorHeartbeatConnector") for name in configs)
    pair.group_id = plan["names"]["group_id"]
    pair.worker_topics = (plan["names"]["offsets"], plan["names"]["configs"], plan["names"]["status"])
    pair.exactly_once = plan["worker_properties"].get("exactly.once.source.support") == "enabled"
    for name, config in configs.items():
        try:
            tasks = 1 if name.endswith("MirrorHeartbeatConnector") else max(1, int(config.get("tasks.max", "1")))
        except ValueError:
            tasks = 1
        pair.connectors[name] = tasks
    return pair


def _check_principals(principals, clusters, var):
    errors, out = [], OrderedDict()
    if isinstance(principals, str):
        principals = dict((alias, principals) for alias in clusters)
    if not isinstance(principals, dict):
        return ["%s: must be a principal (User:<name>) or a mapping of cluster alias to principal" % var], out
    for alias in clusters:
        value = principals.get(alias)
        if value is None:
            errors.append("%s: no principal for cluster %s (MirrorMaker 2 connects to it)" % (var, alias))
        elif not isinstance(value, str) or not _PRINCIPAL.match(value):
            errors.append("%s.%s: %r is not a principal of the form User:<name>" % (var, alias, value))
        else:
            out[alias] = value
    for alias in principals:
        if alias not in clusters:
            errors.append("%s.%s: no such cluster in the MirrorMaker 2 configuration (clusters: %s)"
                          % (var, alias, ", ".join(clusters)))
    return errors, out


def derive(pairs, principals, allow_wildcard=(), principals_var="mm2_acls_principals", flows_var="mirrormaker_flows"):
    """{"errors": [...], "acls": {cluster alias: [binding, ...]}} for resolved pairs."""
    clusters = sorted(set([p.source for p in pairs] + [p.target for p in pairs]))
    errors, principal_map = _check_principals(principals, clusters, principals_var)
    for kind in allow_wildcard or ():
        if kind not in WILDCARD_KINDS:
            errors.append("mm2_acls_allow_wildcard: %r is not one of %s" % (kind, ", ".join(WILDCARD_KINDS)))
    if errors:
        return {"errors": errors, "acls": OrderedDict()}
    acls = _Acls(principal_map)
    for pair in pairs:
        if pair.enabled:
            policy = pair.get("replication.policy.class", naming.DEFAULT_POLICY)
            if naming.remote_topic_prefix(pair.source, policy, ".") is None:
                errors.append("%s: flow %s->%s uses replication policy %s, whose remote topic names cannot be "
                              "predicted; no ACL can be derived" % (flows_var, pair.source, pair.target, policy))
                continue
            _flow_bindings(acls, pair, flows_var, tuple(allow_wildcard or ()), errors)
        _worker_bindings(acls, pair)
    return {"errors": errors, "acls": OrderedDict() if errors else acls.result()}


def derive_layouts(property_sets=(), plans=(), principals=None, allow_wildcard=(), admin_aliases=()):
    """The union of what dedicated MirrorMaker 2 and MirrorMaker connectors need.

    property_sets: the mm2.properties dict(s) dedicated mode runs with (``mm2_config``'s
    ``properties``; several when MirrorMaker hosts are configured apart); plans: the
    ``mm2_connect.plan`` results of the Connect clusters; admin_aliases: the clusters
    ``mm2_acls_admin`` gives a login for, each of which must be one of them.
    Returns {errors, acls, bootstrap_servers}.
    """
    if isinstance(property_sets, dict):
        property_sets = [property_sets]
    if not property_sets and not plans:
        return {"errors": ["mm2_acls_principals: no MirrorMaker 2 to derive ACLs for (no host of mirrormakers or "
                           "connect_workers was checked in this run)"],
                "acls": OrderedDict(), "bootstrap_servers": OrderedDict()}
    errors = [e for p in plans for e in p.get("errors") or []]
    if errors:
        return {"errors": errors + _admin_faults(admin_aliases, {}), "acls": OrderedDict(),
                "bootstrap_servers": OrderedDict()}
    pairs = [pair for props in property_sets for pair in dedicated_pairs(props)]
    servers = OrderedDict()
    for props in property_sets:
        for alias in _split(props.get("clusters", "")):
            servers.setdefault(alias, props.get(alias + ".bootstrap.servers", ""))
    for plan in plans:
        config = plan["connectors"][next(iter(plan["connectors"]))]
        for end in ("source", "target"):
            servers.setdefault(config[end + ".cluster.alias"], config[end + ".cluster.bootstrap.servers"])
    # Each pair names the variable its flows come from: a fault in a Connect flow cites connect_flows.
    result = derive(pairs, principals, allow_wildcard)
    if not result["errors"] and plans:
        connect = derive([connect_pair(p) for p in plans], principals, allow_wildcard, flows_var="connect_flows")
        result = _union(result, connect)
    result["bootstrap_servers"] = servers
    result["errors"] = list(result["errors"]) + _admin_faults(admin_aliases, servers)
    return result


def _admin_faults(admin_aliases, servers):
    unknown = [str(alias) for alias in admin_aliases or () if str(alias) not in servers]
    if not unknown:
        return []
    return ["mm2_acls_admin: %s not a cluster alias of the MirrorMaker 2 configuration" % ", ".join(unknown)]


def _union(first, second):
    if first["errors"] or second["errors"]:
        return {"errors": first["errors"] + second["errors"], "acls": OrderedDict()}
    merged = OrderedDict()
    for acls in (first["acls"], second["acls"]):
        for cluster, bindings in acls.items():
            known = merged.setdefault(cluster, OrderedDict())
            for b in bindings:
                key = tuple(b[k] for k in ("principal", "host", "operation", "permission", "resource_type",
                                           "resource_name", "pattern_type"))
                if key in known:
                    known[key]["classes"] = sorted(set(known[key]["classes"]) | set(b["classes"]), key=list(CLASSES).index)
                else:
                    known[key] = OrderedDict(b)
    return {"errors": [], "acls": _sorted(OrderedDict((c, list(known.values())) for c, known in merged.items()))}


def derive_dedicated(clusters, flows, properties=None, options=None, principals=None, allow_wildcard=()):
    """From the flow model's variables (what ``mm2_config`` is given)."""
    model = mm2_model.load(clusters, flows, properties, options)
    if model.errors:
        return {"errors": list(model.errors), "acls": OrderedDict()}
    return derive_layouts([model.properties()], (), principals, allow_wildcard)


def derive_connect(plans, principals, allow_wildcard=()):
    """From the ``mm2_connect.plan`` results of the Connect clusters (one per flow)."""
    return derive_layouts((), plans, principals, allow_wildcard)


def table(acls):
    """Rows for the play output: cluster, principal, resource, operations, classes."""
    rows = OrderedDict()
    for cluster, bindings in acls.items():
        for b in bindings:
            key = (cluster, b["principal"], b["resource_type"], b["pattern_type"], b["resource_name"])
            row = rows.setdefault(key, {"operations": [], "classes": []})
            row["operations"].append(b["operation"])
            for cls in b["classes"]:
                if cls not in row["classes"]:
                    row["classes"].append(cls)
    out = []
    for (cluster, principal, rtype, ptype, name), row in rows.items():
        out.append(OrderedDict([("cluster", cluster), ("principal", principal),
                                ("resource", "%s:%s:%s" % (rtype, ptype, name)),
                                ("operations", ",".join(row["operations"])),
                                ("classes", ",".join(row["classes"]))]))
    return out


def format_table(rows):
    """Fixed-width lines of ``table`` rows, a header first."""
    columns = ("cluster", "principal", "resource", "operations", "classes")
    widths = [max([len(c)] + [len(r[c]) for r in rows]) for c in columns]
    lines = ["  ".join(c.upper().ljust(w) for c, w in zip(columns, widths)).rstrip()]
    for row in rows:
        lines.append("  ".join(row[c].ljust(w) for c, w in zip(columns, widths)).rstrip())
    return lines


def kafka_acls_commands(bindings, bootstrap="<broker_host>:<port>"):
    """``kafka-acls.sh --add`` lines, one per principal and resource, as an operator types them."""
    grouped = OrderedDict()
    for b in bindings:
        key = (b["principal"], b["resource_type"], b["resource_name"], b["pattern_type"])
        grouped.setdefault(key, []).append(b["operation"])
    option = {"TOPIC": "--topic", "GROUP": "--group", "TRANSACTIONAL_ID": "--transactional-id"}
    lines = []
    for (principal, rtype, name, ptype), operations in grouped.items():
        parts = ["./bin/kafka-acls.sh", "--bootstrap-server", bootstrap, "--add", "--allow-principal", principal]
        for operation in operations:
            parts += ["--operation", "".join(w.capitalize() for w in operation.split("_"))]
        parts += ["--cluster"] if rtype == "CLUSTER" else [option[rtype], name]
        if ptype == "PREFIXED":
            parts += ["--resource-pattern-type", "prefixed"]
        lines.append(" ".join(parts))
    return lines


__all__ = ["CLASSES", "LAYOUTS", "derive", "derive_connect", "derive_dedicated", "derive_layouts", "dedicated_pairs",
           "connect_pair", "regex_pattern", "table", "format_table", "kafka_acls_commands"]
