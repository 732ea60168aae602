# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""MirrorMaker 2 filters: thin wrappers over plugins/module_utils/mm2/model.py.

Filters (all take the role variables in the same order):

``mm2_properties(clusters, flows, properties={}, options={})``
    Ordered dict of mm2.properties key -> string value. Fails on invalid input.
``mm2_validate(clusters, flows, properties={}, options={})``
    List of error strings, each naming the variable path at fault.
``mm2_warnings(clusters, flows, properties={}, options={})``
    List of warnings (deprecated *.blacklist names, mixed policies, hints).
``mm2_effective_flows(clusters, flows, properties={}, options={})``
    One resolved mapping per flow: topics/groups (+ excludes) and their joined regex,
    replication policy, remote-topic prefix, internal topic names.
``mm2_clients(clusters, flows, properties={}, options={})``
    Per alias: ``bootstrap_servers`` (comma string) and ``properties`` (client settings as
    strings, ``sasl.jaas.config`` included), for tools that talk to the clusters themselves.
``mm2_remote_topic(source, topic, policy='default', separator='.')``
    Name topic ``topic`` of cluster ``source`` gets on the target cluster.
``mm2_escape(text, key=False)``
    Java-properties escaping for a key or a value (used by mm2.properties.j2).

``options`` is ``{'exactly_once': mirrormaker_exactly_once,
'internal_rest': mirrormaker_internal_rest,
'flow_defaults': mirrormaker_flow_default_properties}``.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.properties import escape_key, escape_value
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import as_list, plain
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import broker_rules
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import failback
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import model as mm2_model
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import naming


def mm2_properties(clusters, flows, properties=None, options=None):
    """Render the MM2 dedicated-mode properties as an ordered dict of strings."""
    try:
        return dict(mm2_model.build_properties(clusters, flows, properties, options))
    except mm2_model.MM2ConfigError as exc:
        raise AnsibleFilterError(str(exc))


def mm2_validate(clusters, flows, properties=None, options=None):
    """Return the validation errors (list of strings, empty when valid)."""
    return mm2_model.validate(clusters, flows, properties, options)


def mm2_warnings(clusters, flows, properties=None, options=None):
    """Return the warnings (list of strings)."""
    return mm2_model.warnings(clusters, flows, properties, options)


def mm2_effective_flows(clusters, flows, properties=None, options=None):
    """Return the resolved flows (list of dicts)."""
    try:
        return plain(mm2_model.effective_flows(clusters, flows, properties, options))
    except mm2_model.MM2ConfigError as exc:
        raise AnsibleFilterError(str(exc))


def mm2_clients(clusters, flows, properties=None, options=None):
    """Return each cluster's bootstrap servers and client settings."""
    try:
        return plain(mm2_model.clients(clusters, flows, properties, options))
    except mm2_model.MM2ConfigError as exc:
        raise AnsibleFilterError(str(exc))


def mm2_remote_topic(source, topic, policy="default", separator="."):
    """Return the remote topic name of ``topic`` replicated from cluster ``source``."""
    try:
        return naming.remote_topic(source, topic, policy, separator)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc))


def _hostport_host(server):
    server = str(server).strip()
    return server.rsplit(":", 1)[0].strip("[]") if ":" in server else server


def _inventory_hosts(clusters, hostvars, broker_hosts, planned=True):
    """Alias -> a kafka_brokers host of the cluster behind its bootstrap servers.

    A cluster counts as the inventory's when one of its bootstrap hosts is a kafka_brokers host
    whose kafka_broker preflight ran (by inventory name or by the bootstrap servers it derived);
    with ``planned`` false also a kafka_brokers host whose preflight is not part of this run
    (``--limit``), by inventory name, unless the inventory has it use a cluster run elsewhere
    (``kafkaops_external_bootstrap_servers``). Clusters run elsewhere are left out.
    """
    hosts = {}
    for host in broker_hosts or []:
        plan = hostvars[host].get("__kafka_broker_plan")
        if isinstance(plan, dict) and "brokers" in plan:
            names = {host} | {_hostport_host(s) for s in str(plan.get("bootstrap_servers", "")).split(",") if s}
            for name in names:
                hosts[name] = host
        elif not planned and not hostvars[host].get("kafkaops_external_bootstrap_servers"):
            hosts.setdefault(host, host)
    found = {}
    for cluster in clusters or []:
        if not isinstance(cluster, dict) or "alias" not in cluster:
            continue
        for server in as_list(cluster.get("bootstrap_servers")):
            if _hostport_host(server) in hosts:
                found[str(cluster["alias"])] = hosts[_hostport_host(server)]
                break
    return found


def mm2_inventory_broker_counts(clusters, hostvars, broker_hosts):
    """Alias -> brokers the inventory has for the cluster behind its bootstrap servers.

    A cluster counts as the inventory's when one of its bootstrap hosts is a kafka_brokers host
    (by inventory name or by the bootstrap servers its kafka_broker preflight derived); its count
    is that host's cluster's broker count. Clusters run elsewhere are left out.
    """
    return {alias: len(hostvars[host]["__kafka_broker_plan"]["brokers"])
            for alias, host in _inventory_hosts(clusters, hostvars, broker_hosts).items()}


def mm2_inventory_authorizers(clusters, hostvars, broker_hosts):
    """Alias -> whether the brokers the inventory runs for that cluster have an authorizer.

    The cluster is found as for ``mm2_inventory_broker_counts``, or by a bootstrap host's
    inventory name when its preflight is not part of the run. The answer is the
    ``authorizer.class.name`` of the server.properties the preflight recorded
    (``__kafka_broker_authorizer``), or else the one the host's inventory values give it
    (``broker_rules.authorizer_class``), so that a run limited to the workers renders the same
    connectors. Clusters run elsewhere are left out: the inventory cannot say.
    """
    found = {}
    for alias, host in _inventory_hosts(clusters, hostvars, broker_hosts, planned=False).items():
        values = hostvars[host]
        authorizer = values.get("__kafka_broker_authorizer")
        if authorizer is None:
            authorizer = broker_rules.authorizer_class(values.get("kafka_broker_authorizer_enabled", False),
                                                       values.get("kafka_broker_default_properties"),
                                                       values.get("kafka_broker_properties"))
        found[alias] = bool(str(authorizer).strip())
    return found


def mm2_probe_targets(clusters, aliases):
    """kafka_reachable's clusters for ``aliases``: label, bootstrap servers, security protocol."""
    targets = []
    for idx, cluster in enumerate(clusters or []):
        if str(cluster.get("alias")) in aliases:
            props = cluster.get("properties") or {}
            targets.append({
                "name": "mirrormaker_clusters[%d] (alias %s)" % (idx, cluster["alias"]),
                "bootstrap_servers": as_list(cluster.get("bootstrap_servers")),
                "security_protocol": str(props.get("security.protocol", "PLAINTEXT")).upper(),
            })
    return targets


def mm2_escape(text, key=False):
    """Escape ``text`` as a Java-properties key (key=true) or value."""
    return escape_key(text) if key else escape_value(text)


def mm2_failback_flows(flows, source, target, policy_alias):
    """The flows with source->target disabled and its identity reverse enabled (module_utils/mm2/failback.py);
    fails naming the variable when the flow cannot be failed back."""
    result, errors = failback.reverse_flows(list(flows or []), source, target, policy_alias)
    if errors:
        raise AnsibleFilterError("; ".join(errors))
    return result


def mm2_failback_start_offsets(ends, cluster):
    """KIP-875 offsets starting a MirrorSourceConnector on ``cluster`` at ``ends`` (module_utils/mm2/failback.py)."""
    return failback.start_at_ends(cluster, ends)


def mm2_failback_running(statuses, names):
    """The connectors of ``names`` that are neither stopped nor absent (module_utils/mm2/failback.py)."""
    return failback.running(statuses, list(names or []))


def mm2_failback_groups_pending(groups, on_source, on_target, boundary, started):
    """Groups and partitions whose offsets the reverse flow has yet to move (module_utils/mm2/failback.py)."""
    return failback.groups_pending(list(groups or []), on_source, on_target, boundary, started)


class FilterModule(object):
    """MirrorMaker 2 filters."""

    def filters(self):
        return {
            "mm2_properties": mm2_properties,
            "mm2_validate": mm2_validate,
            "mm2_warnings": mm2_warnings,
            "mm2_effective_flows": mm2_effective_flows,
            "mm2_clients": mm2_clients,
            "mm2_remote_topic": mm2_remote_topic,
            "mm2_escape": mm2_escape,
            "mm2_inventory_broker_counts": mm2_inventory_broker_counts,
            "mm2_inventory_authorizers": mm2_inventory_authorizers,
            "mm2_probe_targets": mm2_probe_targets,
            "mm2_failback_flows": mm2_failback_flows,
            "mm2_failback_start_offsets": mm2_failback_start_offsets,
            "mm2_failback_running": mm2_failback_running,
            "mm2_failback_groups_pending": mm2_failback_groups_pending,
        }
