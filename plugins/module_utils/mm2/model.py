# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""MirrorMaker 2 flow model (pure Python, no Ansible imports, no third-party imports).

One model of the role variables (``mirrormaker_clusters``, ``mirrormaker_flows``,
``mirrormaker_properties``, ``mirrormaker_exactly_once``, ``mirrormaker_internal_rest``)
shared by:

* the dedicated-mode role (``build_properties`` -> mm2.properties, through
  ``common/properties.py`` for Java-properties syntax);
* a Connect-cluster layout and ACL derivation (``effective_flows``);
* the smoke role's plan (``effective_flows``; remote names from ``mm2/naming.py``).

Standard library only, besides the collection's own ``common`` and ``mm2/naming``.

Every check returns messages that name the variable path at fault, e.g.
``mirrormaker_flows[1].target: unknown cluster alias 'C' (known: A, B)``.

Facts the model relies on (Apache Kafka sources, ``connect/mirror``):

* ``MirrorMakerConfig.connectorBaseConfig`` copies the global ``replication.policy.*``
  keys into every connector, then applies ``<source>-><target>.*`` overrides last, so a
  per-flow ``A->B.replication.policy.class`` is honoured by that flow's connectors.
  ``workerConfig``/``clusterProps`` only see the *global* key (and ``<alias>.`` keys), so
  a policy shared by every flow is rendered once, globally.
* ``exactly.once.source.support`` is a worker setting; dedicated mode builds each
  herder's worker config from the *target* cluster's ``<alias>.`` keys, hence
  ``<target>.exactly.once.source.support=enabled``.  It needs
  ``dedicated.mode.enable.internal.rest=true`` (KIP-710) in multi-node clusters.
* List-typed keys (topics, groups, *.exclude) are split on commas by Kafka's
  ``ConfigDef``; ``DefaultTopicFilter``/``DefaultGroupFilter`` join the items with ``|``
  and use ``Matcher.matches()`` (whole-name match).
* ``java.util.Properties.load`` treats ``\\`` as an escape (``\\-`` -> ``-``,
  ``\\.`` -> ``.``), so values are written with doubled backslashes.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.rules import HOSTPORT_RE
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import as_list, render_value, unknown_key_message
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import fmt as _fmt, is_list as _is_list, typename as _typename
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2.naming import DEFAULT_POLICY, IDENTITY_POLICY, POLICY_ALIASES
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2.naming import internal_topics, policy_alias, policy_class, remote_topic_prefix

# MM2 built-in defaults (MirrorSourceConfig / MirrorCheckpointConfig, Kafka 3.x).
MM2_DEFAULTS = {
    "topics": [".*"],
    "topics.exclude": [r".*[\-\.]internal", r".*\.replica", "__.*"],
    "groups": [".*"],
    "groups.exclude": ["console-consumer-.*", "connect-.*", "__.*"],
}

# KIP-629 renamed the *.blacklist keys; MM2 still reads them but they are deprecated.
DEPRECATED_KEYS = {
    "topics.blacklist": "topics.exclude",
    "groups.blacklist": "groups.exclude",
    "config.properties.blacklist": "config.properties.exclude",
}
DEPRECATED_FLOW_FIELDS = {
    "topics_blacklist": "topics_exclude",
    "groups_blacklist": "groups_exclude",
}

REGEX_KEYS = ("topics", "topics.exclude", "groups", "groups.exclude")

# flow field -> (MM2 key, kind)
FLOW_FIELDS = OrderedDict([
    ("topics", ("topics", "regex_list")),
    ("topics_exclude", ("topics.exclude", "regex_list")),
    ("groups", ("groups", "regex_list")),
    ("groups_exclude", ("groups.exclude", "regex_list")),
    ("emit_heartbeats", ("emit.heartbeats.enabled", "bool")),
    ("emit_checkpoints", ("emit.checkpoints.enabled", "bool")),
    ("sync_group_offsets", ("sync.group.offsets.enabled", "bool")),
    ("tasks_max", ("tasks.max", "int")),
    ("transaction_boundary", ("transaction.boundary", "boundary")),
    ("transaction_boundary_interval_ms", ("transaction.boundary.interval.ms", "int")),
])
# When an exactly-once flow commits its transactions (the Red Hat guide, "exactly-once"): Kafka
# Connect's transaction.boundary, "poll" (its default: one transaction per batch a task returns) or
# "interval" (one per transaction.boundary.interval.ms, which else falls back to
# offset.flush.interval.ms, a minute); MirrorMaker's connectors define no boundary of their own.
TRANSACTION_BOUNDARIES = ("poll", "interval")
TRANSACTION_KEYS = ("transaction.boundary", "transaction.boundary.interval.ms")
# An exactly-once flow that sets no boundary commits per poll: bench/mm2_throughput measured it
# cheaper than one transaction a second on two cores (median cost 6 % against 24 % of the EOS-off
# rate, three runs of a million records) and visible to read_committed readers at once (p50 0.01 s
# against 0.6 s); the interval makes about a sixth of the transactions (docs/disaster_recovery.md).
# An interval boundary without an interval gets a second, not offset.flush.interval.ms's minute.
EOS_BOUNDARY = "poll"
EOS_BOUNDARY_INTERVAL_MS = 1000
FLOW_KNOWN_KEYS = frozenset(
    ["source", "target", "enabled", "replication_policy", "properties"]
    + list(FLOW_FIELDS) + list(DEPRECATED_FLOW_FIELDS)
)
CLUSTER_KNOWN_KEYS = frozenset(
    ["alias", "bootstrap_servers", "broker_count", "properties", "sasl_jaas_config"]
)
# Keys the role owns; giving them in mirrormaker_properties would be ambiguous.
RESERVED_GLOBAL_KEYS = {
    "clusters": "mirrormaker_clusters",
    "dedicated.mode.enable.internal.rest": "mirrormaker_internal_rest",
}

# Letters, digits, '_' and '-'; not ending in '-' (so "A-" + "->" never reads "A-->").
ALIAS_RE = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?$")
JAVA_CLASS_RE = re.compile(r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$")

REGEX_NOTE = "checked with Python re, an approximation of java.util.regex"
# DistributedConfig's scheduled.rebalance.max.delay.ms when a herder's worker settings leave it out.
CONNECT_REBALANCE_DELAY_MS = 300000


class MM2ConfigError(ValueError):
    """Raised by the builders when the input does not validate; .errors lists all."""

    def __init__(self, errors):
        self.errors = list(errors)
        super().__init__("invalid MirrorMaker 2 configuration:\n  " + "\n  ".join(self.errors))


# --------------------------------------------------------------------- model


class _Model(object):
    """Normalised view of the role variables plus the messages found on the way."""

    def __init__(self, clusters, flows, properties=None, options=None):
        self.errors = []
        self.warnings = []
        self.clusters = OrderedDict()          # alias -> dict
        self.cluster_paths = {}                # alias -> "mirrormaker_clusters[i]"
        self.flows = []                        # list of dicts (valid source/target only)
        self.global_props = OrderedDict()      # normalised global keys (raw values)
        self.global_paths = {}                 # normalised key -> path of the given key
        options = options if options is not None else {}
        if not isinstance(options, Mapping):
            self.errors.append("options: must be a mapping, got %s" % _typename(options))
            options = {}
        # Brokers per alias as the inventory knows them (kafka_brokers hosts behind the
        # bootstrap servers); a broker_count given by hand wins.
        self.inventory_brokers = options.get("broker_counts") or {}
        self.exactly_once = options.get("exactly_once", False)
        self.internal_rest = options.get("internal_rest", True)
        for name, var, value in (("exactly_once", "mirrormaker_exactly_once", self.exactly_once),
                                 ("internal_rest", "mirrormaker_internal_rest", self.internal_rest)):
            if not isinstance(value, bool):
                self.errors.append("%s: must be a boolean, got %s (%s)" % (var, _fmt(value), _typename(value)))
        self.exactly_once = self.exactly_once is True
        # The variable that turns exactly-once on, as messages name it (the connect role's is its own).
        self.eos_var = options.get("eos_var", "mirrormaker_exactly_once")
        self.internal_rest = self.internal_rest is True
        # Client tuning must be rendered per flow: MM2 ignores top-level producer.*/consumer.*.
        self.flow_defaults = self._load_props(
            options.get("flow_defaults"), "mirrormaker_flow_default_properties",
            forbidden={"enabled": "mirrormaker_flows[].enabled"}, rename=True)
        # Worker settings reach a dedicated-mode herder only as '<target>.<key>'
        # (MirrorMakerConfig.workerConfig reads clusterProps(target)).
        self.worker_defaults = self._load_props(options.get("worker_defaults"), "mirrormaker_worker_properties")
        for key in self.worker_defaults:
            if "->" in key or key.split(".", 1)[0] in ("producer", "consumer", "admin"):
                self.errors.append("mirrormaker_worker_properties[%r]: worker keys only; client and flow keys "
                                   "go in mirrormaker_flow_default_properties" % key)
        for key in self.flow_defaults:
            if "->" in key:
                self.errors.append("mirrormaker_flow_default_properties[%r]: keys apply to every flow; "
                                   "drop the 'SOURCE->TARGET.' prefix" % key)
        self._load_globals(properties)
        self._load_clusters(clusters)
        self._load_flows(flows)
        self._check_globals_scope()
        self._resolve_policies()
        self._check_replication_factors()
        self._check_exactly_once()
        self._check_transactions()

    # ---------------------------------------------------------------- globals
    def _load_globals(self, properties):
        if properties is None:
            return
        if not isinstance(properties, Mapping):
            self.errors.append("mirrormaker_properties: must be a mapping, got %s" % _typename(properties))
            return
        for key in sorted(properties, key=str):
            value = properties[key]
            skey = str(key)
            path = "mirrormaker_properties[%r]" % skey
            if skey in RESERVED_GLOBAL_KEYS:
                self.errors.append("%s: set by the role from %s; remove it" % (path, RESERVED_GLOBAL_KEYS[skey]))
                continue
            if value is None:
                continue  # "key:" with no value means unset
            if isinstance(value, Mapping):
                self.errors.append("%s: nested mappings cannot be rendered as a property value" % path)
                continue
            nkey = DEPRECATED_KEYS.get(skey, skey)
            if nkey != skey and properties.get(nkey) is not None:
                self.errors.append("%s: both %r and %r are set; keep only %r" % (path, nkey, skey, nkey))
                continue
            nkey = self._rename(skey, path)
            self.global_props[nkey] = value
            self.global_paths[nkey] = path
            if nkey in REGEX_KEYS:
                self._check_regex_list(path, value)
        if "replication.policy.class" in self.global_props:
            self._check_policy_name(self.global_paths["replication.policy.class"],
                                    self.global_props["replication.policy.class"])

    def _rename(self, key, path):
        new = DEPRECATED_KEYS.get(key)
        if new is None:
            return key
        self.warnings.append("%s: %r is deprecated (KIP-629); rendered as %r" % (path, key, new))
        return new

    def _check_globals_scope(self):
        for key, path in self.global_paths.items():
            if "->" in key:
                self.errors.append("%s: flow-scoped key; set it in mirrormaker_flows[].properties" % path)
                continue
            head = key.split(".", 1)[0]
            if head in self.clusters and "." in key:
                self.errors.append("%s: starts with cluster alias %r; set it in %s.properties"
                                   % (path, head, self.cluster_paths[head]))

    # --------------------------------------------------------------- clusters
    def _load_clusters(self, clusters):
        if not _is_list(clusters) or not clusters:
            self.errors.append("mirrormaker_clusters: must be a non-empty list of clusters")
            return
        first_seen = {}
        for idx, cluster in enumerate(clusters):
            path = "mirrormaker_clusters[%d]" % idx
            if not isinstance(cluster, Mapping):
                self.errors.append("%s: must be a mapping, got %s" % (path, _typename(cluster)))
                continue
            for key in sorted(set(cluster) - CLUSTER_KNOWN_KEYS, key=str):
                self.errors.append(unknown_key_message(path, key, CLUSTER_KNOWN_KEYS))
            alias = cluster.get("alias")
            if alias is None or render_value(alias) == "":
                self.errors.append("%s.alias: required" % path)
                continue
            alias = render_value(alias)
            if not ALIAS_RE.match(alias):
                self.errors.append(
                    "%s.alias: %r cannot be used in MM2 property keys (letters, digits, '_' and '-' only, "
                    "not ending in '-'; no '.', no '->', no blanks)" % (path, alias))
                continue
            if alias in first_seen:
                self.errors.append("%s.alias: duplicate alias %r (first defined at %s)"
                                   % (path, alias, first_seen[alias]))
                continue
            first_seen[alias] = path
            servers = as_list(cluster.get("bootstrap_servers"))
            if not servers:
                self.errors.append("%s.bootstrap_servers: must list at least one host:port" % path)
            for server in servers:
                if not HOSTPORT_RE.match(server):
                    self.errors.append("%s.bootstrap_servers: %r is not host:port" % (path, server))
            broker_count = cluster.get("broker_count")
            if broker_count is not None and (isinstance(broker_count, bool) or not isinstance(broker_count, int)
                                             or broker_count < 1):
                self.errors.append("%s.broker_count: must be a positive integer, got %s"
                                   % (path, _fmt(broker_count)))
                broker_count = None
            props = self._load_props(cluster.get("properties"), path + ".properties",
                                     forbidden={"bootstrap.servers": path + ".bootstrap_servers"})
            jaas = cluster.get("sasl_jaas_config")
            if jaas not in (None, ""):
                if "sasl.jaas.config" in props:
                    self.errors.append("%s.sasl_jaas_config: also set as %s.properties['sasl.jaas.config']; keep one"
                                       % (path, path))
                else:
                    props["sasl.jaas.config"] = render_value(jaas)
            self.clusters[alias] = {
                "alias": alias,
                "bootstrap_servers": servers,
                "broker_count": broker_count,
                "properties": props,
                "path": path,
            }
            self.cluster_paths[alias] = path

    def _load_props(self, props, path, forbidden=None, rename=False):
        out = OrderedDict()
        if props is None:
            return out
        if not isinstance(props, Mapping):
            self.errors.append("%s: must be a mapping, got %s" % (path, _typename(props)))
            return out
        for key in sorted(props, key=str):
            skey = str(key)
            kpath = "%s[%r]" % (path, skey)
            value = props[key]
            if forbidden and skey in forbidden:
                self.errors.append("%s: use %s instead" % (kpath, forbidden[skey]))
                continue
            if value is None:
                continue  # "key:" with no value means unset
            if isinstance(value, Mapping):
                self.errors.append("%s: nested mappings cannot be rendered as a property value" % kpath)
                continue
            nkey = DEPRECATED_KEYS.get(skey, skey) if rename else skey
            if nkey != skey and props.get(nkey) is not None:
                self.errors.append("%s: both %r and %r are set; keep only %r" % (kpath, nkey, skey, nkey))
                continue
            nkey = self._rename(skey, kpath) if rename else skey
            out[nkey] = value
        return out

    # ------------------------------------------------------------------ flows
    def _load_flows(self, flows):
        if not _is_list(flows) or not flows:
            self.errors.append("mirrormaker_flows: must be a non-empty list of flows")
            return
        known = ", ".join(self.clusters) or "none"
        first_seen = {}
        for idx, flow in enumerate(flows):
            path = "mirrormaker_flows[%d]" % idx
            if not isinstance(flow, Mapping):
                self.errors.append("%s: must be a mapping, got %s" % (path, _typename(flow)))
                continue
            for key in sorted(set(flow) - FLOW_KNOWN_KEYS, key=str):
                self.errors.append(unknown_key_message(path, key, FLOW_KNOWN_KEYS))
            ends = {}
            for end in ("source", "target"):
                alias = flow.get(end)
                if alias is None or render_value(alias) == "":
                    self.errors.append("%s.%s: required" % (path, end))
                    continue
                alias = render_value(alias)
                if alias not in self.clusters:
                    self.errors.append("%s.%s: unknown cluster alias %r (known: %s)" % (path, end, alias, known))
                    continue
                ends[end] = alias
            if len(ends) != 2:
                continue
            source, target = ends["source"], ends["target"]
            name = "%s->%s" % (source, target)
            if source == target:
                self.errors.append("%s.target: flow %s replicates a cluster to itself" % (path, name))
                continue
            if name in first_seen:
                self.errors.append("%s: duplicate flow %s (also %s)" % (path, name, first_seen[name]))
                continue
            first_seen[name] = path
            enabled = flow.get("enabled", True)
            if not isinstance(enabled, bool):
                self.errors.append("%s.enabled: must be a boolean, got %s (%s)" % (path, _fmt(enabled), _typename(enabled)))
                enabled = False
            props = self._load_props(flow.get("properties"), path + ".properties",
                                     forbidden={"enabled": path + ".enabled"}, rename=True)
            fields = OrderedDict()
            for field, (mm2_key, kind) in FLOW_FIELDS.items():
                value = flow.get(field)
                fpath = "%s.%s" % (path, field)
                for old, new in DEPRECATED_FLOW_FIELDS.items():
                    if new == field and flow.get(old) is not None:
                        if value is not None:
                            self.errors.append("%s.%s: both %s and %s are set; keep only %s"
                                               % (path, old, old, field, field))
                            continue
                        self.warnings.append("%s.%s: deprecated (KIP-629); use %s (rendered as %r)"
                                             % (path, old, field, mm2_key))
                        value = flow.get(old)
                        fpath = "%s.%s" % (path, old)
                if value is None:
                    continue
                if kind == "regex_list":
                    if not as_list(value):
                        continue  # an empty list means "not set"
                    self._check_regex_list(fpath, value)
                    value = as_list(value)
                elif kind == "bool" and not isinstance(value, bool):
                    self.errors.append("%s: must be a boolean, got %s (%s)" % (fpath, _fmt(value), _typename(value)))
                    continue
                elif kind == "boundary" and value not in TRANSACTION_BOUNDARIES:
                    self.errors.append("%s: must be %s, got %s" % (fpath, " or ".join(TRANSACTION_BOUNDARIES), _fmt(value)))
                    continue
                elif kind == "int" and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                    self.errors.append("%s: must be a positive integer, got %s" % (fpath, _fmt(value)))
                    continue
                if mm2_key in props:
                    self.errors.append("%s.properties[%r]: also set by %s; keep one" % (path, mm2_key, fpath))
                    continue
                fields[mm2_key] = value
            for key in REGEX_KEYS:
                if key in props:
                    self._check_regex_list("%s.properties[%r]" % (path, key), props[key])
            policy = flow.get("replication_policy")
            policy_path = path + ".replication_policy"
            if policy is not None and "replication.policy.class" in props:
                self.errors.append("%s.properties['replication.policy.class']: also set by %s; keep one"
                                   % (path, policy_path))
            elif policy is None and "replication.policy.class" in props:
                policy = props.pop("replication.policy.class")
                policy_path = "%s.properties['replication.policy.class']" % path
            if policy is not None and not self._check_policy_name(policy_path, policy):
                policy = None
            self.flows.append({
                "index": idx,
                "path": path,
                "name": name,
                "source": source,
                "target": target,
                "enabled": enabled,
                "fields": fields,
                "properties": props,
                "policy_explicit": policy_class(policy),
                "policy_path": policy_path if policy is not None else None,
            })

    # ------------------------------------------------------------------ checks
    def _check_regex_list(self, path, value):
        if isinstance(value, Mapping):
            return
        if _is_list(value):
            for item in value:
                if "," in render_value(item):
                    self.errors.append("%s: %r contains ',' and MM2 splits list values on commas"
                                       % (path, render_value(item)))
        for item in as_list(value):
            try:
                re.compile(item)
            except re.error as exc:
                self.errors.append("%s: regex %r does not compile: %s (%s)" % (path, item, exc, REGEX_NOTE))

    def _check_policy_name(self, path, value):
        cls = policy_class(value)
        if cls in POLICY_ALIASES.values() or (cls and JAVA_CLASS_RE.match(cls)):
            return True
        self.errors.append("%s: %r is neither 'default', 'identity' nor a fully qualified class name"
                           % (path, render_value(value)))
        return False

    def _resolve_policies(self):
        gpolicy = self.global_props.get("replication.policy.class")
        self.global_policy = policy_class(gpolicy) if gpolicy is not None else None
        base = self.global_policy or DEFAULT_POLICY
        for flow in self.flows:
            flow["policy"] = flow["policy_explicit"] or base
            sep = flow["properties"].get("replication.policy.separator",
                                         self.global_props.get("replication.policy.separator"))
            flow["separator"] = "." if sep is None else render_value(sep)
            isep = flow["properties"].get(
                "replication.policy.internal.topic.separator.enabled",
                self.global_props.get("replication.policy.internal.topic.separator.enabled", True))
            flow["internal_separator_enabled"] = render_value(isep).strip().lower() != "false"
        # Where to render: one global key when every flow names the same policy,
        # per-flow keys otherwise (MirrorMakerConfig.connectorBaseConfig honours both;
        # only the global key also reaches workerConfig/clientConfig).
        self.hoisted_policy = None
        explicit = set(f["policy_explicit"] for f in self.flows)
        if (self.global_policy is None and self.flows and len(explicit) == 1
                and None not in explicit and DEFAULT_POLICY not in explicit):
            self.hoisted_policy = explicit.pop()
        for flow in self.flows:
            flow["render_policy"] = (self.hoisted_policy is None and flow["policy_explicit"] is not None
                                     and flow["policy_explicit"] != base)
        effective = sorted(set(f["policy"] for f in self.flows))
        if len(effective) > 1:
            self.warnings.append(
                "mirrormaker_flows: flows use different replication policies (%s); MM2 honours per-flow "
                "'A->B.replication.policy.class' for the flow's connectors, but clients (RemoteClusterUtils) "
                "and cycle detection assume one policy" % ", ".join(effective))
        # Active-active with IdentityReplicationPolicy: MM2 cannot detect cycles.
        by_name = dict((f["name"], f) for f in self.flows)
        for flow in self.flows:
            if not flow["enabled"] or flow["source"] > flow["target"]:
                continue
            back = by_name.get("%s->%s" % (flow["target"], flow["source"]))
            if not back or not back["enabled"]:
                continue
            for one in (flow, back):
                if one["policy"] == IDENTITY_POLICY:
                    where = one["policy_path"] or self.global_paths.get("replication.policy.class")
                    self.errors.append(
                        "%s: %s uses IdentityReplicationPolicy while %s and %s are both enabled "
                        "(active-active); MM2 cannot detect replication cycles without a remote-topic prefix"
                        % (where, one["name"], flow["name"], back["name"]))

    def _rf_values(self):
        """Yield (path, key, value, [aliases]) for every replication-factor setting."""
        active = set()
        for flow in self.flows:
            if flow["enabled"]:
                active.update((flow["source"], flow["target"]))
        for key, value in self.global_props.items():
            if key == "replication.factor" or key.endswith(".replication.factor"):
                yield self.global_paths[key], value, [a for a in self.clusters if a in active]
        for alias, cluster in self.clusters.items():
            for key, value in cluster["properties"].items():
                if key == "replication.factor" or key.endswith(".replication.factor"):
                    yield "%s.properties[%r]" % (cluster["path"], key), value, [alias]
        for flow in self.flows:
            for key, value in flow["properties"].items():
                if key == "replication.factor" or key.endswith(".replication.factor"):
                    targets = [flow["target"]]
                    if key.startswith("offset-syncs."):
                        targets.append(flow["source"])
                    yield "%s.properties[%r]" % (flow["path"], key), value, targets

    def _check_replication_factors(self):
        for path, value, aliases in self._rf_values():
            try:
                if isinstance(value, bool):
                    raise ValueError()
                rf = int(render_value(value).strip())
            except ValueError:
                self.errors.append("%s: replication factor must be an integer, got %s" % (path, _fmt(value)))
                continue
            if rf == -1:
                continue  # broker default (KIP-464)
            if rf < 1:
                self.errors.append("%s: replication factor must be >= 1 or -1, got %d" % (path, rf))
                continue
            for alias in aliases:
                count = self.clusters[alias]["broker_count"]
                if count is not None and rf > count:
                    self.errors.append("%s: replication factor %d exceeds broker_count %d of cluster %r (%s.broker_count)"
                                       % (path, rf, count, alias, self.clusters[alias]["path"]))
                elif count is None and rf > self.inventory_brokers.get(alias, rf):
                    self.errors.append("%s: replication factor %d exceeds the %d broker(s) the inventory has for "
                                       "cluster %r (hosts of kafka_brokers behind %s.bootstrap_servers)"
                                       % (path, rf, self.inventory_brokers[alias], alias, self.clusters[alias]["path"]))

    def _check_exactly_once(self):
        if not self.exactly_once:
            return
        if not self.internal_rest:
            self.errors.append(
                "mirrormaker_exactly_once: requires mirrormaker_internal_rest: true "
                "(dedicated.mode.enable.internal.rest, KIP-710) so followers can forward task configs to the leader")
        for flow in self.flows:
            if not flow["enabled"]:
                continue
            iso = self.clusters[flow["source"]]["properties"].get("consumer.isolation.level")
            if render_value(iso) != "read_committed":
                self.warnings.append(
                    "%s.properties: exactly-once is on; set consumer.isolation.level: read_committed so %s does "
                    "not copy aborted transactions" % (self.clusters[flow["source"]]["path"], flow["name"]))

    def _flow_setting(self, flow, key):
        """(value, path) of ``key`` where the flow itself sets it (a field or its properties), else (None, None)."""
        for field, (mm2_key, _kind) in FLOW_FIELDS.items():
            if mm2_key == key and key in flow["fields"]:
                return flow["fields"][key], "%s.%s" % (flow["path"], field)
        if key in flow["properties"]:
            return flow["properties"][key], "%s.properties[%r]" % (flow["path"], key)
        return None, None

    def _check_transactions(self):
        for flow in self.flows:
            boundary, boundary_path = self._flow_setting(flow, TRANSACTION_KEYS[0])
            interval, interval_path = self._flow_setting(flow, TRANSACTION_KEYS[1])
            given = [path for path in (boundary_path, interval_path) if path]
            if given and not self.exactly_once:
                self.errors.extend("%s: transactions are exactly-once's, which is off (%s)" % (path, self.eos_var)
                                   for path in given)
            elif interval_path and render_value(self._boundary(flow)) != "interval":
                self.errors.append("%s: counts only with the interval boundary; the flow commits per poll (%s)"
                                   % (interval_path, boundary_path or "transaction_boundary's default"))

    def transaction_defaults(self, flow):
        """The transaction settings an exactly-once flow gets where neither it nor the global or
        default properties set them (EOS_BOUNDARY, rendered so that the file says it; an interval
        boundary with no interval gets EOS_BOUNDARY_INTERVAL_MS rather than offset.flush.interval.ms).
        Both layouts add them."""
        if not self.exactly_once:
            return OrderedDict()
        out = OrderedDict()
        if self._set_for(flow, TRANSACTION_KEYS[0]) is None:
            out[TRANSACTION_KEYS[0]] = EOS_BOUNDARY
        if render_value(self._boundary(flow)) == "interval" and self._set_for(flow, TRANSACTION_KEYS[1]) is None:
            out[TRANSACTION_KEYS[1]] = str(EOS_BOUNDARY_INTERVAL_MS)
        return out

    def _set_for(self, flow, key):
        """``key`` as the flow, the flow defaults or the global properties set it, else None."""
        value, path = self._flow_setting(flow, key)
        if path:
            return value
        return next((scope[key] for scope in (self.flow_defaults, self.global_props) if key in scope), None)

    def _boundary(self, flow):
        boundary = self._set_for(flow, TRANSACTION_KEYS[0])
        return EOS_BOUNDARY if boundary is None else boundary

    # ---------------------------------------------------------------- results
    def raise_if_invalid(self):
        if self.errors:
            raise MM2ConfigError(self.errors)

    def _regexes(self, flow, key):
        for scope in (flow["fields"], flow["properties"], self.global_props):
            if key in scope and as_list(scope[key]):
                return as_list(scope[key]), scope is self.global_props and "global" or "flow"
        return list(MM2_DEFAULTS[key]), "mm2-default"

    def properties(self):
        self.raise_if_invalid()
        out = OrderedDict()
        out["clusters"] = ",".join(sorted(self.clusters))
        if self.internal_rest:
            out["dedicated.mode.enable.internal.rest"] = "true"
        glob = OrderedDict((k, render_value(v)) for k, v in self.global_props.items())
        if self.global_policy is not None:
            glob["replication.policy.class"] = self.global_policy
        elif self.hoisted_policy is not None:
            glob["replication.policy.class"] = self.hoisted_policy
        for key in sorted(glob):
            out[key] = glob[key]
        eos_targets = set(f["target"] for f in self.flows if f["enabled"]) if self.exactly_once else set()
        worker_targets = self.herder_targets()
        for alias in sorted(self.clusters):
            cluster = self.clusters[alias]
            out["%s.bootstrap.servers" % alias] = ",".join(cluster["bootstrap_servers"])
            props = OrderedDict((k, render_value(v)) for k, v in cluster["properties"].items())
            if alias in eos_targets:
                props.setdefault("exactly.once.source.support", "enabled")
            if alias in worker_targets:
                for key, value in self.worker_defaults.items():
                    props.setdefault(key, render_value(value))
            for key in sorted(props):
                out["%s.%s" % (alias, key)] = props[key]
        for flow in sorted(self.flows, key=lambda f: (f["source"], f["target"])):
            prefix = flow["name"] + "."
            out[prefix + "enabled"] = render_value(flow["enabled"])
            props = OrderedDict()
            for key, value in flow["fields"].items():
                props[key] = render_value(value)
            for key, value in flow["properties"].items():
                props[key] = render_value(value)
            if flow["render_policy"]:
                props["replication.policy.class"] = flow["policy_explicit"]
            # A default yields to the same key set for this flow or globally by the user.
            for key, value in self.flow_defaults.items():
                if key not in props and key not in self.global_props:
                    props[key] = render_value(value)
            if flow["enabled"]:
                props.update(self.transaction_defaults(flow))
            for key in sorted(props):
                out[prefix + key] = props[key]
        return out

    def herder_targets(self):
        """Targets of the herders dedicated MirrorMaker 2 runs (``MirrorMakerConfig.clusterPairs``):
        every ordered pair of clusters whose flow is enabled or emits heartbeats. A disabled or
        unlisted flow still runs a herder for its MirrorHeartbeatConnector unless heartbeats are off
        for it, and that herder's worker reads the target's ``<alias>.`` keys like any other."""
        listed = dict(((f["source"], f["target"]), f) for f in self.flows)
        global_beats = render_value(self.global_props.get("emit.heartbeats.enabled", True)).strip().lower() == "true"
        targets = set()
        for source in self.clusters:
            for target in self.clusters:
                if source == target:
                    continue
                flow = listed.get((source, target))
                if flow is None:
                    runs = global_beats
                else:
                    runs = flow["enabled"] or self._flow_value(
                        flow, "emit.heartbeats.enabled", "true" if global_beats else "false").lower() == "true"
                if runs:
                    targets.add(target)
        return targets

    def handover_seconds(self):
        """Seconds a leaving node's tasks wait for it before they move to the other nodes: the longest
        ``scheduled.rebalance.max.delay.ms`` of the herders (``herder_targets``), whose worker settings
        are the target's ``<alias>.`` keys; Connect's default 300 s where none is set."""
        props = self.properties()
        delays = []
        for target in sorted(self.herder_targets()):
            value = props.get("%s.scheduled.rebalance.max.delay.ms" % target, CONNECT_REBALANCE_DELAY_MS)
            try:
                delays.append(int(str(value).strip()))
            except ValueError:  # Connect refuses such a worker; its own default is the best guess
                delays.append(CONNECT_REBALANCE_DELAY_MS)
        return max(delays) / 1000.0 if delays else 0.0

    def clients(self):
        self.raise_if_invalid()
        result = OrderedDict()
        for alias in sorted(self.clusters):
            cluster = self.clusters[alias]
            props = OrderedDict((k, render_value(v)) for k, v in sorted(cluster["properties"].items()))
            result[alias] = OrderedDict([("bootstrap_servers", ",".join(cluster["bootstrap_servers"])),
                                         ("properties", props)])
        return result

    def _flow_value(self, flow, key, default):
        value = default
        for scope in (self.flow_defaults, self.global_props, flow["properties"], flow["fields"]):
            if key in scope:
                value = render_value(scope[key]).strip()
        return value

    def _flow_int(self, flow, key, default):
        try:
            return int(self._flow_value(flow, key, str(default)))
        except ValueError:
            return default

    def effective_flows(self):
        self.raise_if_invalid()
        result = []
        for flow in sorted(self.flows, key=lambda f: (f["source"], f["target"])):
            item = OrderedDict()
            item["name"] = flow["name"]
            item["index"] = flow["index"]
            item["source"] = flow["source"]
            item["target"] = flow["target"]
            item["enabled"] = flow["enabled"]
            item["source_bootstrap_servers"] = ",".join(self.clusters[flow["source"]]["bootstrap_servers"])
            item["target_bootstrap_servers"] = ",".join(self.clusters[flow["target"]]["bootstrap_servers"])
            for key, name in (("topics", "topics"), ("topics.exclude", "topics_exclude"),
                              ("groups", "groups"), ("groups.exclude", "groups_exclude")):
                items, origin = self._regexes(flow, key)
                item[name] = items
                # DefaultTopicFilter/DefaultGroupFilter: String.join("|", items), matches() = full match
                item[name + "_regex"] = "|".join(items)
                item[name + "_origin"] = origin
            item["replication_policy"] = flow["policy"]
            item["replication_policy_alias"] = policy_alias(flow["policy"])
            item["separator"] = flow["separator"]
            item["remote_topic_prefix"] = remote_topic_prefix(flow["source"], flow["policy"], flow["separator"])
            item["offset_syncs_location"] = self._flow_value(flow, "offset-syncs.topic.location", "source").strip().lower()
            item["internal_topics"] = internal_topics(flow["source"], flow["target"], flow["separator"],
                                                      flow["internal_separator_enabled"], item["offset_syncs_location"])
            for key, name, default in (("emit.heartbeats.enabled", "emit_heartbeats", True),
                                       ("emit.checkpoints.enabled", "emit_checkpoints", True),
                                       ("sync.group.offsets.enabled", "sync_group_offsets", False)):
                value = default
                for scope in (self.flow_defaults, self.global_props, flow["properties"], flow["fields"]):
                    if key in scope:
                        value = render_value(scope[key]).strip().lower() == "true"
                item[name] = value
            tasks = None
            for scope in (self.flow_defaults, self.global_props, flow["properties"], flow["fields"]):
                if "tasks.max" in scope:
                    try:
                        tasks = int(render_value(scope["tasks.max"]))
                    except ValueError:
                        tasks = None
            item["tasks_max"] = tasks
            # The smoke job bounds its waits by these; MirrorSourceConfig's defaults live here only.
            item["refresh_topics_interval_s"] = self._flow_int(flow, "refresh.topics.interval.seconds", 600)
            item["sync_topic_configs"] = self._flow_value(flow, "sync.topic.configs.enabled", "true").lower() == "true"
            item["exactly_once"] = self.exactly_once and flow["enabled"]
            result.append(item)
        return result


# ------------------------------------------------------------------ public API


def validate(clusters, flows, properties=None, options=None):
    """Return the list of error strings (empty when the configuration is usable)."""
    return list(_Model(clusters, flows, properties, options).errors)


def warnings(clusters, flows, properties=None, options=None):
    """Return the list of warnings (deprecated names, mixed policies, hints)."""
    return list(_Model(clusters, flows, properties, options).warnings)


def build_properties(clusters, flows, properties=None, options=None):
    """Return an OrderedDict of mm2.properties keys -> string values.

    Order: ``clusters``, ``dedicated.mode.enable.internal.rest``, other global keys
    (sorted); then per cluster (sorted by alias) ``<alias>.bootstrap.servers`` followed by
    the cluster's keys (sorted); then per flow (sorted by source, target)
    ``A->B.enabled`` followed by the flow's keys (sorted).  Raises MM2ConfigError.
    """
    return _Model(clusters, flows, properties, options).properties()


def effective_flows(clusters, flows, properties=None, options=None):
    """Return one resolved mapping per flow (see the mm2_effective_flows filter docs)."""
    return _Model(clusters, flows, properties, options).effective_flows()


def clients(clusters, flows, properties=None, options=None):
    """Return, per alias, the bootstrap servers and client settings (incl. sasl.jaas.config)."""
    return _Model(clusters, flows, properties, options).clients()


def load(clusters, flows, properties=None, options=None):
    """Build the model once; read ``.errors``, ``.warnings`` and call ``.properties()``,
    ``.effective_flows()`` and ``.clients()`` on it (the action mm2_config does)."""
    return _Model(clusters, flows, properties, options)
