# Copyright: kafkaops.mirrormaker contributors
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Filters for installing Kafka and settling KRaft cluster ids."""

from __future__ import annotations

import base64
import uuid

from ansible.errors import AnsibleFilterError
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import checksum
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import kerberos as kafka_kerberos
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import layout as kafka_layout
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import scram as kafka_scram
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import tls as kafka_tls
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import upgrade as kafka_upgrade
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import rules
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import scale_in
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import probe_config as probe_config_utils

CLUSTER_ID = kafka_layout.CLUSTER_ID


def kafka_sha512(text):
    """Extract the sha512 from a checksum file, lower case (module_utils/kafka/checksum.py reads it).

    Accepts `sha512sum` output (`<hex>  <name>`) and the multi-line, upper-case, space-grouped
    `gpg --print-md SHA512` layout that Apache publishes (`<name>: 1F8A BBE3 ...`).
    """
    if not isinstance(text, str):
        raise AnsibleFilterError("kafka_sha512: expected the text of a .sha512 file, got %r" % type(text))
    digest = checksum.sha512(text)
    if digest is None:
        raise AnsibleFilterError("kafka_sha512: no sha512 (128 hex digits) found in %r" % text[:200])
    return digest


def new_cluster_id():
    """A random KRaft cluster id, as `kafka-storage.sh random-uuid` makes them."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode("ascii").rstrip("=")
        # Kafka never hands out ids starting with '-': they read as CLI flags.
        if not text.startswith("-"):
            return text


def kafka_cluster_ids(members):
    """Settle one cluster id per cluster from what each host knows.

    `members` is a list of {host, cluster, given, existing}: the id the inventory gives, and the
    id found in the host's formatted storage (meta.properties). Per cluster the result is the given
    id, else the id already on disk, else a new one: formatted storage is never re-labelled, and
    a cluster gets one id however many hosts it has.
    """
    clusters = {}
    for member in members:
        entry = clusters.setdefault(member["cluster"], {"given": set(), "existing": {}})
        if member.get("given"):
            entry["given"].add(member["given"])
        if member.get("existing"):
            entry["existing"][member["host"]] = member["existing"]

    result = {}
    for name, entry in sorted(clusters.items()):
        given = sorted(entry["given"])
        on_disk = sorted(set(entry["existing"].values()))
        if len(given) > 1:
            raise AnsibleFilterError(
                "kafka_broker_cluster_id: hosts of cluster %r give different ids: %s" % (name, ", ".join(given))
            )
        for cid in given:
            if not CLUSTER_ID.match(cid):
                raise AnsibleFilterError(
                    "kafka_broker_cluster_id: %r of cluster %r is not a 22-character base64url id" % (cid, name)
                )
        if len(on_disk) > 1:
            raise AnsibleFilterError(
                "cluster %r: storage on its hosts is formatted with different cluster ids: %s"
                % (name, ", ".join("%s=%s" % kv for kv in sorted(entry["existing"].items())))
            )
        if given and on_disk and given[0] != on_disk[0]:
            raise AnsibleFilterError(
                "kafka_broker_cluster_id: %r for cluster %r, but its storage is formatted with %r"
                % (given[0], name, on_disk[0])
            )
        result[name] = (given or on_disk or [new_cluster_id()])[0]
    return result


def kafkaops_remaining(hosts, hostvars, state_var):
    """Hosts of ``hosts`` that ``state_var`` does not take out (module_utils/common/scale_in.py)."""
    return scale_in.remaining(hostvars, list(hosts or []), state_var)


def kafkaops_left(hosts, hostvars, role):
    """Hosts of ``hosts`` whose ``role`` service this run took out (module_utils/common/scale_in.py)."""
    return scale_in.left(hostvars, list(hosts or []), role)


def kafka_upgrade_plan(nodes, target, readings):
    """{steps, faults, release} of an upgrade to ``target`` (module_utils/kafka/upgrade.py plan)."""
    return kafka_upgrade.plan(list(nodes or []), target, list(readings or []))


def kafkaops_scale_in_faults(host, state_var, peers, play_hosts, hostvars):
    """Why ``host`` cannot be taken out in this run (module_utils/common/scale_in.py)."""
    return scale_in.faults(state_var, host, list(peers or []), list(play_hosts or []), hostvars)


def kafka_restart_order(hostvars, play_hosts, role):
    """Hosts of the play (in play order) whose pending restart is marked for ``role``."""
    order = []
    for host in play_hosts:
        pending = hostvars[host].get("__kafka_common_pending") or {}
        if pending.get(role):
            order.append(host)
    return order


def _number(text):
    try:
        return float(text)
    except ValueError:
        return None


def mm2_jmx_health(stdout, settle=0):
    """Judge a MirrorMaker 2 (or Connect) node from JmxTool's properties report.

    Input: lines ``<mbean>:<attribute>=<value>`` for ``connect-worker-rebalance-metrics`` and
    ``connect-worker-metrics`` (one-time, ``--report-format properties``). Healthy when the
    worker has joined its group (a leader is known, not rebalancing), its last rebalance ended at
    least ``settle`` seconds ago (``time-since-last-rebalance-ms``: a state that has just been
    reached can still move in the next cooperative round, within a few heartbeats), and every
    connector it runs has all its tasks running (none failed, restarting or unassigned). Returns
    {healthy, reason, connectors: {name: {running, total, failed}}}.
    """
    joined = rebalancing = None
    since = []
    connectors = {}
    for line in (stdout or "").splitlines():
        head, sep, value = line.rpartition("=")
        if not sep or ":" not in head:
            continue
        mbean, attribute = head.rsplit(":", 1)
        if "type=connect-worker-rebalance-metrics" in mbean:
            if attribute == "leader-name":
                joined = bool(value.strip())
            elif attribute == "rebalancing":
                rebalancing = _number(value) not in (0.0, None)
            elif attribute == "time-since-last-rebalance-ms" and _number(value) is not None:
                since.append(_number(value))
        elif "type=connect-worker-metrics" in mbean and ",connector=" in mbean:
            name = mbean.split(",connector=", 1)[1].split(",", 1)[0]
            key = {"connector-running-task-count": "running", "connector-total-task-count": "total",
                   "connector-failed-task-count": "failed"}.get(attribute)
            if key:
                connectors.setdefault(name, {})[key] = int(_number(value) or 0)
    if joined is None:
        return {"healthy": False, "reason": "no Connect worker metrics over JMX yet", "connectors": connectors}
    if not joined or rebalancing:
        return {"healthy": False, "reason": "the worker has not joined its group (rebalancing)", "connectors": connectors}
    # Never rebalanced reads Infinity; a negative value is a rebalance still being completed.
    if since and min(since) < float(settle) * 1000:
        return {"healthy": False, "reason": "the last rebalance ended %d ms ago, less than %s s: not settled yet"
                % (max(min(since), 0), settle), "connectors": connectors}
    bad = ["%s: %d of %d tasks running, %d failed" % (n, c.get("running", 0), c.get("total", 0), c.get("failed", 0))
           for n, c in sorted(connectors.items())
           if c.get("failed", 0) or c.get("running", 0) != c.get("total", 0)]
    if bad:
        return {"healthy": False, "reason": "; ".join(bad), "connectors": connectors}
    return {"healthy": True, "reason": "joined; %d connector(s), every task running" % len(connectors),
            "connectors": connectors}


def kafka_storage_format(script, cluster_id, config, scram_users=None, run_as=None):
    """{argv, environment} of the one-time ``kafka-storage.sh format`` (kafka_scram.format_command)."""
    try:
        return kafka_scram.format_command(script, cluster_id, config, users=scram_users, run_as=run_as)
    except ValueError as exc:
        raise AnsibleFilterError("kafka_storage_format: %s" % exc) from None


def kafka_scram_scrub(text, users):
    """``text`` with the passwords of ``users`` masked (a failed format's output)."""
    return kafka_scram.scrub(text, users)


def kafka_sasl_listeners(listeners, controller_listener, roles, properties):
    """The host's SASL listeners with the mechanisms each offers (kafka_kerberos.sasl_listeners)."""
    return kafka_kerberos.sasl_listeners(listeners, controller_listener, roles, properties)


def kafka_kerberos_properties(kerberos, keytab, sasl_listeners):
    """server.properties keys of the broker's Kerberos login (kafka_kerberos.kerberos_properties)."""
    return kafka_kerberos.kerberos_properties(kerberos, keytab, sasl_listeners)


def kafka_tls_listeners(listeners, controller_listener, roles):
    """The host's SSL and SASL_SSL listeners, served or only dialled (kafka_tls.tls_listeners)."""
    return kafka_tls.tls_listeners(listeners, controller_listener, roles)


def kafka_tls_properties(tls, keystore, truststore, tls_listeners):
    """server.properties keys of the broker's TLS (kafka_tls.tls_properties)."""
    return kafka_tls.tls_properties(tls, keystore, truststore, tls_listeners)


def kafka_tls_reload_configs(tls_listeners, keystore, truststore):
    """The per-broker configs that make a running broker read its TLS stores again (kafka_tls.reload_configs)."""
    return kafka_tls.reload_configs(tls_listeners, keystore, truststore)


def kafka_probe_config(properties, listener, krb5_conf=""):
    """{properties, environment, refusal} of the broker's health probe (kafka_probe_config.probe_config)."""
    return probe_config_utils.probe_config(properties, listener, krb5_conf)


class FilterModule:
    def filters(self):
        return {
            "kafka_restart_order": kafka_restart_order,
            "kafkaops_left": kafkaops_left,
            "kafkaops_remaining": kafkaops_remaining,
            "kafkaops_scale_in_faults": kafkaops_scale_in_faults,
            "kafka_port_conflicts": rules.port_conflicts,
            "mm2_jmx_health": mm2_jmx_health,
            "kafka_sha512": kafka_sha512,
            "kafka_cluster_ids": kafka_cluster_ids,
            "kafka_storage_format": kafka_storage_format,
            "kafka_scram_scrub": kafka_scram_scrub,
            "kafka_sasl_listeners": kafka_sasl_listeners,
            "kafka_kerberos_properties": kafka_kerberos_properties,
            "kafka_tls_listeners": kafka_tls_listeners,
            "kafka_tls_properties": kafka_tls_properties,
            "kafka_tls_reload_configs": kafka_tls_reload_configs,
            "kafka_probe_config": kafka_probe_config,
            "kafka_upgrade_plan": kafka_upgrade_plan,
        }
