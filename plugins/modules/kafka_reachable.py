#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kafka_reachable
short_description: Check that each Kafka cluster answers from this host within a bounded time
version_added: 0.1.0
description:
  - For each cluster, connects to its bootstrap servers in order from the managed host and sends
    one Kafka C(ApiVersions) request (version 0, client id C(kafkaops-probe)); the cluster
    answers when one bootstrap server answers it, as Kafka clients bootstrap.
  - A broker answers C(ApiVersions) before any authentication, so the probe needs no credentials
    on C(SASL_PLAINTEXT) and C(SASL_SSL) listeners; it sends no other request and reads no data.
  - Clusters are probed at the same time; each gets O(timeout) seconds, shared by its bootstrap
    servers in order (each server gets an equal part of the time left, so a server that drops
    packets cannot keep the next one from being asked).
  - Fails when a cluster does not answer, with one message per unreachable cluster that names
    the cluster's O(clusters[].name), this host and every bootstrap server with its reason
    (connection refused, timed out, name does not resolve, TLS handshake failed, answered but is
    not Kafka).
  - Meant for a preflight play before any host changes (a rollout that cannot reach a cluster
    must not finish green) and, with O(retries_until), for waiting after a broker restart.
  - Read-only; it runs in check mode too.
options:
  clusters:
    description:
      - The clusters to probe. An empty list probes nothing and passes.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description:
          - The cluster's label in messages and the key of the cluster in RV(clusters), for
            example V(mirrormaker_clusters[1] (alias B\)). Must be unique.
        type: str
        required: true
      bootstrap_servers:
        description:
          - The cluster's bootstrap servers, a list of V(host:port) or one comma-separated
            string of them. IPv6 addresses are written in brackets, V([::1]:9092).
        type: raw
        required: true
      security_protocol:
        description:
          - The listener's security protocol, as in the clients' C(security.protocol).
          - V(SSL) and V(SASL_SSL) wrap the connection in TLS without verifying the broker's
            certificate; see the notes.
        type: str
        choices: [PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL]
        default: PLAINTEXT
  timeout:
    description:
      - Seconds each cluster has to answer in one round, shared by its bootstrap servers.
    type: int
    default: 10
  retries_until:
    description:
      - Keep probing the clusters that did not answer, in whole rounds one second apart, until
        they answer or this many seconds have passed since the task started.
      - V(0) probes once. A round that starts before the limit runs to its end, so the task
        takes at most O(retries_until) + O(timeout) seconds.
      - Used right after a broker restart, when the listener comes back within some seconds.
    type: int
    default: 0
extends_documentation_fragment:
  - kafkaops.mirrormaker.read_only
  - ansible.builtin.action_common_attributes
notes:
  - TLS certificates are not verified. The probe sends no credentials and reads no data, it only
    asks whether a Kafka broker answers; the trust material of Kafka clients is a JVM truststore
    (JKS or PKCS12) that Python cannot read. The Kafka clients verify the certificate themselves.
  - A listener with C(ssl.client.auth=required) refuses the probe's TLS handshake (the probe
    sends no client certificate) and is reported as unreachable, with that reason.
  - Only the bootstrap servers are probed; a client later connects to the brokers the cluster
    advertises, which this module does not check.
seealso:
  - name: Kafka protocol guide, ApiVersions
    description: The request the probe sends and the answers it accepts.
    link: https://kafka.apache.org/protocol.html#The_Messages_ApiVersions
author:
  - kafkaops maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Every MirrorMaker host reaches every cluster before anything changes
  kafkaops.mirrormaker.kafka_reachable:
    clusters:
      - name: mirrormaker_clusters[0] (alias A)
        bootstrap_servers: [kafka-a1:9092, kafka-a2:9092]
      - name: mirrormaker_clusters[1] (alias B)
        bootstrap_servers: kafka-b1:9093,kafka-b2:9093
        security_protocol: SASL_SSL
    timeout: 10

- name: After a broker restart, wait up to 2 minutes for its cluster to answer again
  kafkaops.mirrormaker.kafka_reachable:
    clusters:
      - name: kafka_broker cluster main
        bootstrap_servers: "{{ inventory_hostname }}:9092"
    timeout: 5
    retries_until: 120
  register: __kafka_broker_reachable

- name: How long the cluster took to answer again
  ansible.builtin.debug:
    msg: "{{ __kafka_broker_reachable.clusters['kafka_broker cluster main'].seconds }} s"
"""

RETURN = r"""
clusters:
  description:
    - Per cluster, keyed by O(clusters[].name), the result of its last round. Also returned when
      the module fails because a cluster did not answer.
  returned: always, except when the input is refused
  type: dict
  sample:
    mirrormaker_clusters[0] (alias A):
      reachable: true
      answered: kafka-a1:9092
      detail: "ApiVersions v0 answered: error_code 0 (NONE), 75 API keys, ApiVersions v0-v4"
      failures: {}
      seconds: 0.004
      attempts: 1
    mirrormaker_clusters[1] (alias B):
      reachable: false
      answered: null
      detail: null
      failures:
        kafka-b1:9999: connection refused
      seconds: 0.002
      attempts: 1
  contains:
    reachable:
      description: Whether a bootstrap server answered as a Kafka broker.
      type: bool
      returned: always
    answered:
      description: The bootstrap server that answered, or V(null).
      type: str
      returned: always
    detail:
      description: What the server that answered said, or V(null).
      type: str
      returned: always
    failures:
      description:
        - The reason of each bootstrap server that did not answer in the last round, in the
          order they were probed; empty when the first one answered.
      type: dict
      returned: always
    seconds:
      description: Seconds from the start of the task to the end of the cluster's last round.
      type: float
      returned: always
    attempts:
      description: Rounds in which the cluster was probed (more than 1 only with O(retries_until)).
      type: int
      returned: always
probed_from:
  description: The host name of the managed host, as in the messages.
  returned: always
  type: str
  sample: mm2-1
"""

import socket
import time
from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.probe import (
    SECURITY_PROTOCOLS,
    check_cluster,
    parse_server,
)
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import as_list


def normalise(clusters):
    """Return (clusters with bootstrap_servers as lists, errors naming label and value)."""
    result, errors, seen = [], [], set()
    for index, cluster in enumerate(clusters):
        label = cluster["name"]
        if label in seen:
            errors.append("clusters[%d].name: %r is given twice (names must be unique)" % (index, label))
        seen.add(label)
        raw = cluster["bootstrap_servers"]
        if not isinstance(raw, (str, list)):
            errors.append("%s: bootstrap_servers: %r is not a list or a comma-separated string of host:port"
                          % (label, raw))
            continue
        try:
            servers = as_list(raw)
        except TypeError:
            errors.append("%s: bootstrap_servers: %r is not a list of host:port" % (label, raw))
            continue
        if not servers:
            errors.append("%s: bootstrap_servers: must list at least one host:port" % label)
        for server in servers:
            try:
                parse_server(server)
            except ValueError as exc:
                errors.append("%s: bootstrap_servers: %s" % (label, exc))
        result.append(dict(cluster, bootstrap_servers=servers))
    return result, errors


def unreachable_message(cluster, result, host, timeout):
    reasons = ", ".join("%s: %s" % pair for pair in result["failures"].items())
    within = "within %d s" % timeout
    if result["attempts"] > 1:
        within += " in any of %d attempts over %d s" % (result["attempts"], round(result["seconds"]))
    return "%s: no bootstrap server answered from %s %s (%s)" % (cluster["name"], host, within, reasons)


def probe_round(clusters, timeout, started):
    """Probe the clusters at the same time; returns {name: check_cluster result}."""
    with ThreadPoolExecutor(max_workers=len(clusters)) as pool:
        futures = dict((c["name"], pool.submit(check_cluster, c["bootstrap_servers"], timeout,
                                               c["security_protocol"])) for c in clusters)
        results = dict((name, future.result()) for name, future in futures.items())
    for result in results.values():
        result["seconds"] = round(time.monotonic() - started, 3)
    return results


def main():
    module = AnsibleModule(
        argument_spec=dict(
            clusters=dict(type="list", elements="dict", required=True, options=dict(
                name=dict(type="str", required=True),
                bootstrap_servers=dict(type="raw", required=True),
                security_protocol=dict(type="str", default="PLAINTEXT", choices=list(SECURITY_PROTOCOLS)),
            )),
            timeout=dict(type="int", default=10),
            retries_until=dict(type="int", default=0),
        ),
        supports_check_mode=True,
    )
    timeout = module.params["timeout"]
    retries_until = module.params["retries_until"]
    errors = []
    if timeout < 1:
        errors.append("timeout: %d must be at least 1 (seconds per cluster)" % timeout)
    if retries_until < 0:
        errors.append("retries_until: %d must be 0 (probe once) or more seconds" % retries_until)
    clusters, input_errors = normalise(module.params["clusters"] or [])
    errors.extend(input_errors)
    if errors:
        module.fail_json(msg="; ".join(errors))

    host = socket.gethostname()
    if not clusters:  # e.g. a MirrorMaker node whose flows are all disabled
        module.exit_json(changed=False, clusters={}, probed_from=host, msg="no clusters given, nothing to probe")
    started = time.monotonic()
    results, attempts = {}, dict((c["name"], 0) for c in clusters)
    pending = clusters
    while True:
        for name, result in probe_round(pending, timeout, started).items():
            attempts[name] += 1
            result["attempts"] = attempts[name]
            results[name] = result
        pending = [c for c in pending if not results[c["name"]]["reachable"]]
        left = started + retries_until - time.monotonic()
        if not pending or left <= 0:
            break
        time.sleep(min(1.0, left))

    ordered = dict((c["name"], results[c["name"]]) for c in clusters)
    if pending:
        module.fail_json(msg="; ".join(unreachable_message(c, results[c["name"]], host, timeout) for c in pending),
                         clusters=ordered, probed_from=host, changed=False)
    module.exit_json(changed=False, clusters=ordered, probed_from=host,
                     msg="%d cluster(s) answered from %s" % (len(clusters), host))


if __name__ == "__main__":
    main()
