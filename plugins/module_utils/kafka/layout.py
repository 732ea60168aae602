# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""A KRaft cluster's layout across the hosts of a play: node ids, controller quorum, listeners,
bootstrap servers, and the ports each host claims (the kafka_broker_plan action builds it once
per host and run). Standard library only.
"""

from __future__ import annotations

import re

_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
_LISTENER_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
# Kafka's Uuid.toString(): url-safe base64 of 16 bytes without padding. \Z, not $: $ lets a
# trailing newline through.
CLUSTER_ID = re.compile(r"^[A-Za-z0-9_-]{22}\Z")


def cluster_id_errors(value):
    """The refusal of a kafka_broker_cluster_id that is given but not of the form Kafka's ids have."""
    if value and not CLUSTER_ID.match(str(value)):
        return ["kafka_broker_cluster_id: %r is not a 22-character base64url id" % (value,)]
    return []


def _given_cluster_id_errors(members, cluster):
    # Known from the inventory alone; an id that differs from a host's meta.properties is known only
    # once the hosts are read, and is refused then (the kafka_cluster_ids filter).
    given = {}
    for member in members:
        if member.get("cluster_id"):
            given.setdefault(str(member["cluster_id"]), []).append(member["host"])
    if len(given) < 2:
        return []
    return ["kafka_broker_cluster_id: hosts of cluster %r give different ids: %s"
            % (cluster, "; ".join("%s (%s)" % (cid, ", ".join(hosts)) for cid, hosts in sorted(given.items())))]


def _listener_errors(me, errors):
    names, ports = {}, {}
    listeners = list(me["listeners"]) if "broker" in me["roles"] else []
    checked = [("kafka_broker_listeners[%d]" % i, item) for i, item in enumerate(listeners)]
    if "controller" in me["roles"]:
        checked.append(("kafka_broker_controller_listener", me["controller_listener"]))
    for where, item in checked:
        name, protocol, port = item.get("name", ""), item.get("protocol", ""), item.get("port")
        if not _LISTENER_NAME.match(str(name)):
            errors.append("%s.name: %r is not a listener name (upper case, digits, _)" % (where, name))
        if protocol not in _PROTOCOLS:
            errors.append("%s.protocol: %r is not one of %s" % (where, protocol, ", ".join(_PROTOCOLS)))
        if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
            errors.append("%s.port: %r is not a TCP port" % (where, port))
        if name in names:
            errors.append("%s.name: %r is already used by %s" % (where, name, names[name]))
        if port in ports:
            errors.append("%s.port: %s collides with %s on host %s" % (where, port, ports[port], me["host"]))
        names.setdefault(name, where)
        ports.setdefault(port, where)
    if "broker" in me["roles"] and me["inter_broker_listener"] not in [item.get("name") for item in listeners]:
        errors.append(
            "kafka_broker_inter_broker_listener: %r is not among kafka_broker_listeners (%s)"
            % (me["inter_broker_listener"], ", ".join(str(item.get("name")) for item in listeners))
        )


def _absent_errors(me, brokers):
    """Why ``me`` cannot be taken out (kafka_broker_state: absent); empty when it can or stays."""
    if me.get("state", "present") != "absent":
        return []
    if "controller" in me["roles"]:
        return ["kafka_broker_state: absent on %s, a KRaft controller (kafka_broker_process_roles %s): a controller "
                "leaves the quorum with kafka-metadata-quorum.sh remove-controller, which this role does not do; "
                "only broker-only nodes can be taken out" % (me["host"], ",".join(me["roles"]))]
    if not [m for m in brokers if m.get("state", "present") != "absent"]:
        return ["kafka_broker_state: absent on every broker of cluster %r: its partitions need brokers that stay"
                % me["cluster"]]
    return []


def plan(selves, host):
    """Derive the KRaft layout of `host`'s cluster and everything wrong with it.

    `selves` holds one dict per host of the play: {host, cluster, node_id, roles, listeners,
    controller_listener, inter_broker_listener, advertised_host, bind_host, quorum_hosts, and
    optionally cluster_id (the given kafka_broker_cluster_id) and state (kafka_broker_state)}. A
    member taken out keeps its node id (ids derive from the members' order) but leaves the
    bootstrap servers. Returns
    {cluster, node_id, members, brokers, first_broker, voters, bootstrap_servers, listeners,
    advertised_listeners, protocol_map, errors}; every error names the variable at fault.
    """
    by_host = {s["host"]: s for s in selves}
    me = by_host[host]
    errors = []
    members = sorted((s for s in selves if s["cluster"] == me["cluster"]), key=lambda s: s["host"])
    roles = me["roles"]
    if not roles or not set(roles) <= {"broker", "controller"}:
        errors.append("kafka_broker_process_roles: %r must be a non-empty list of broker, controller" % (roles,))
    _listener_errors(me, errors)
    errors.extend(_given_cluster_id_errors(members, me["cluster"]))

    node_ids = {}
    for position, member in enumerate(members, start=1):
        node_id = member["node_id"] if member["node_id"] >= 0 else position
        node_ids[member["host"]] = node_id
    seen = {}
    for member_host, node_id in sorted(node_ids.items()):
        if node_id in seen:
            errors.append(
                "kafka_broker_node_id: %s and %s of cluster %r both have node id %d"
                % (seen[node_id], member_host, me["cluster"], node_id)
            )
        seen.setdefault(node_id, member_host)

    member_hosts = [m["host"] for m in members]
    if me["quorum_hosts"]:
        quorum = list(me["quorum_hosts"])
        for name in quorum:
            if name not in by_host:
                errors.append(
                    "kafka_broker_controller_quorum_hosts: %r is not a host of this play (cluster %r has %s)"
                    % (name, me["cluster"], ", ".join(member_hosts))
                )
            elif name not in member_hosts:
                errors.append(
                    "kafka_broker_controller_quorum_hosts: %r belongs to cluster %r, not %r"
                    % (name, by_host[name]["cluster"], me["cluster"])
                )
            elif "controller" not in by_host[name]["roles"]:
                errors.append(
                    "kafka_broker_controller_quorum_hosts: %r does not have the controller process role" % name
                )
    else:
        quorum = [m["host"] for m in members if "controller" in m["roles"]]
        if not quorum:
            errors.append(
                "kafka_broker_process_roles: cluster %r has no host with the controller role" % me["cluster"]
            )
    if "controller" in roles and me["quorum_hosts"] and host not in me["quorum_hosts"]:
        errors.append("kafka_broker_controller_quorum_hosts: lists no %r, which has the controller role" % host)

    voters = ",".join(
        "%d@%s:%s" % (node_ids[h], by_host[h]["advertised_host"], by_host[h]["controller_listener"].get("port"))
        for h in quorum
        if h in node_ids
    )
    brokers = [m for m in members if "broker" in m["roles"]]
    errors.extend(_absent_errors(me, brokers))
    bootstrap = []
    for member in brokers:
        if member.get("state", "present") == "absent":
            continue
        wanted = [item for item in member["listeners"] if item.get("name") == member["inter_broker_listener"]]
        if wanted:
            bootstrap.append("%s:%s" % (member["advertised_host"], wanted[0].get("port")))
    served = (list(me["listeners"]) if "broker" in roles else []) + (
        [me["controller_listener"]] if "controller" in roles else []
    )
    every = list(me["listeners"]) + [me["controller_listener"]]
    ports = {}
    if "broker" in roles:
        for idx, item in enumerate(me["listeners"]):
            ports.setdefault(str(item.get("port")), "kafka_broker_listeners[%d].port" % idx)
    if "controller" in roles:
        ports.setdefault(str(me["controller_listener"].get("port")), "kafka_broker_controller_listener.port")
    return {
        "ports": ports,
        "cluster": me["cluster"],
        "listeners": ",".join("%s://%s:%s" % (l.get("name"), me.get("bind_host", ""), l.get("port")) for l in served),
        "advertised_listeners": ",".join(
            "%s://%s:%s" % (l.get("name"), me["advertised_host"], l.get("port")) for l in me["listeners"]
        ),
        "protocol_map": ",".join("%s:%s" % (l.get("name"), l.get("protocol")) for l in every),
        "node_id": node_ids[host],
        "members": member_hosts,
        "brokers": [m["host"] for m in brokers],
        # The broker that answers for the cluster in one-per-cluster tasks (its feature levels).
        "first_broker": next((m["host"] for m in brokers if m.get("state", "present") != "absent"), ""),
        "voters": voters,
        "bootstrap_servers": ",".join(bootstrap),
        "errors": errors,
    }
