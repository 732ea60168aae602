#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kafka_group_offsets
short_description: Report consumer groups' committed offsets, end offsets and lag on one Kafka cluster
version_added: 0.4.0
description:
  - For each of O(groups), reads from one cluster the group's state and member count, the offset
    it committed on each partition, the partition's end offset and the lag between the two.
  - Meant for a failover drill, run once per cluster. After MirrorMaker 2's checkpoint connector
    (C(sync.group.offsets.enabled)) wrote translated offsets of the groups into the target cluster,
    the report of each side shows where each group would resume and how far behind it is.
  - The end offset is the log end offset, or with O(isolation_level=read_committed) the last stable
    offset (the end a C(read_committed) consumer reads to, before any open transaction); read with
    a kafka-python consumer that joins no group.
  - A group the cluster does not know is reported, not refused, with the state the broker gives
    (V(Dead)) and no partitions. Only partitions on which the group committed an offset are listed.
  - The bootstrap servers are first asked to answer as in M(kafkaops.mirrormaker.kafka_reachable), so
    a cluster that does not answer fails the task within O(timeout) with each server's reason.
  - Read-only; it changes nothing and runs in check mode too. C(changed) is always V(false).
options:
  bootstrap_servers:
    description:
      - The cluster's bootstrap servers, a list of V(host:port) or one comma-separated string of
        them. IPv6 addresses are written in brackets, V([::1]:9092).
    type: raw
    required: true
  groups:
    description:
      - The consumer group ids to report, each a key of RV(groups). At least one.
    type: list
    elements: str
    required: true
  topics:
    description:
      - Report only the partitions of these topics. Left out, every topic on which a group committed
        an offset is reported.
      - A topic the cluster does not have, or on which no group committed, adds nothing.
    type: list
    elements: str
  client_properties:
    description:
      - Client settings for a secured listener, mapped to kafka-python's arguments. The keys taken
        are V(security.protocol) (V(PLAINTEXT), V(SSL), V(SASL_PLAINTEXT), V(SASL_SSL)),
        V(sasl.mechanism) (V(PLAIN), V(SCRAM-SHA-256), V(SCRAM-SHA-512)), V(sasl.plain.username),
        V(sasl.plain.password), V(ssl.cafile), V(ssl.certfile), V(ssl.keyfile) (PEM files on the
        managed host), V(ssl.password) (the PEM key's password) and
        V(ssl.endpoint.identification.algorithm) (V(https), the default, checks the broker's host
        name; an empty string does not).
      - The Java names are used where kafka-python has the same setting, kafka-python's own names
        (with dots) where the Java setting is one kafka-python cannot read.
      - Refused, with what to give instead, are V(sasl.jaas.config) (kafka-python reads no JAAS
        line; give V(sasl.plain.username) and V(sasl.plain.password)), V(ssl.truststore.*),
        V(ssl.keystore.*) and V(ssl.key.password) (Java key stores; give PEM files), and any other
        key, since an ignored setting would change how the module talks to the cluster unseen. So
        is a SASL setting without a SASL protocol, or a TLS setting without a TLS one.
      - Secret values (passwords, and anything M(kafkaops.mirrormaker.kafka_properties) would
        mask) never appear in the output or the host's log.
    type: dict
    default: {}
  isolation_level:
    description:
      - Which end offset the partitions' C(end) in RV(groups) is.
      - V(read_committed) is the end a consumer with that isolation level reads to, the last stable
        offset; it stops before the first record of a transaction still open.
      - V(read_uncommitted) is the log end offset.
    type: str
    choices: [read_committed, read_uncommitted]
    default: read_committed
  timeout:
    description:
      - Seconds the bootstrap servers and the clients' connections may take, together; a cluster
        that does not answer within them fails the task. Also the most each read after that may
        take, tries again included (right after a broker starts, the cluster answers for a while
        that a group's coordinator is not available yet). From 1 to 300.
    type: int
    default: 30
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: The module only reads, so check mode runs it as well.
  diff_mode:
    support: none
  platform:
    platforms: posix
requirements:
  - kafka-python 3.0 or later on the managed host (the mm2_smoke role's venv has it; point
    C(ansible_python_interpreter) at that venv's python).
notes:
  - The lag is the number of offsets between the committed offset and the end, transaction markers
    and records of aborted transactions included; it is not a count of records to be read.
  - A group of the KIP-848 consumer protocol (C(group.protocol=consumer)) cannot be described by
    kafka-python; its offsets are reported, its state and members are V(null), with a warning.
  - A committed offset on a topic the cluster no longer has is reported with C(end) and C(lag)
    V(null), with a warning.
seealso:
  - module: kafkaops.mirrormaker.kafka_reachable
  - name: MirrorMaker 2 offset translation (KIP-545)
    description: How MirrorCheckpointConnector writes translated offsets into the target cluster.
    link: https://cwiki.apache.org/confluence/display/KAFKA/KIP-545%3A+support+automated+consumer+offset+sync+across+clusters+in+MM+2.0
author:
  - kafkaops maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Where the applications' groups stand on cluster B after MirrorMaker 2 synced their offsets
  kafkaops.mirrormaker.kafka_group_offsets:
    bootstrap_servers: kafka-b1:9093,kafka-b2:9093
    groups: [billing, shipping]
    topics: [A.orders, A.payments]
    client_properties:
      security.protocol: SASL_SSL
      sasl.mechanism: SCRAM-SHA-512
      sasl.plain.username: drill
      sasl.plain.password: "{{ vault_drill_password }}"
      ssl.cafile: /etc/kafka/ca.pem
  vars:
    ansible_python_interpreter: /opt/mm2-smoke/venv/bin/python
  register: __offsets_b

- name: Every group is idle on B and has nothing left to read
  ansible.builtin.assert:
    that:
      - item.value.state in ['Empty', 'Dead']
      - item.value.total_lag == 0
    fail_msg: "{{ item.key }}: {{ item.value.state }}, lag {{ item.value.total_lag }}"
  loop: "{{ __offsets_b.groups | dict2items }}"
  loop_control:
    label: "{{ item.key }}"
"""

RETURN = r"""
groups:
  description:
    - Per group of O(groups), keyed by the group id, in the order given.
  returned: success
  type: dict
  sample:
    drill-orders:
      state: Empty
      members: 0
      partitions:
        - {topic: orders, partition: 0, committed: 3, end: 5, lag: 2}
        - {topic: orders, partition: 1, committed: 5, end: 5, lag: 0}
      total_lag: 2
    drill-never-committed:
      state: Dead
      members: 0
      partitions: []
      total_lag: 0
  contains:
    state:
      description:
        - The group's state as the broker describes it, for example V(Stable) (members consuming),
          V(Empty) (no members; offsets committed), V(Dead) (unknown to the cluster),
          V(PreparingRebalance), V(CompletingRebalance).
        - V(null) when the broker would not describe the group (see the notes).
      type: str
      returned: always
    members:
      description: The group's member count; V(null) when C(state) is.
      type: int
      returned: always
    partitions:
      description:
        - The partitions on which the group committed an offset, of O(topics) when given, sorted by
          topic and partition.
      type: list
      elements: dict
      returned: always
      contains:
        topic:
          description: The topic.
          type: str
          returned: always
        partition:
          description: The partition number.
          type: int
          returned: always
        committed:
          description: The committed offset, the next offset the group reads.
          type: int
          returned: always
        end:
          description:
            - The partition's end offset of O(isolation_level); V(null) when the cluster no longer
              has the partition.
          type: int
          returned: always
        lag:
          description:
            - C(end) minus C(committed); V(null) when C(end) is. Negative when the committed offset is
              beyond the end (the topic was created again, or a translated offset is ahead of the log),
              shown as it is.
          type: int
          returned: always
    total_lag:
      description: The sum of the group's positive lags, V(0) when it has nothing left to read.
      type: int
      returned: always
cluster_id:
  description: The cluster's id, as the broker describes the cluster.
  returned: success
  type: str
  sample: emfLFBm5gX4bmzLhY8h5yw
isolation_level:
  description: O(isolation_level), which end offset the partitions' C(end) are.
  returned: success
  type: str
  sample: read_committed
"""

import logging
import re
import socket
import time
import traceback

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka_groups import (
    ISOLATION_LEVELS,
    SASL_PROTOCOLS,
    NotReady,
    Retry,
    client_kwargs,
    read_groups,
)
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka_probe import (
    check_cluster,
    parse_server,
    seconds_text,
)
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2_model import as_list
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.secrets import secret_values

KAFKA_IMPORT_ERROR = None
try:
    from kafka import KafkaConsumer
    from kafka import errors as kafka_errors
    from kafka.admin import KafkaAdminClient
except ImportError:
    KAFKA_IMPORT_ERROR = traceback.format_exc()

CLIENT_ID = "kafkaops-group-offsets"
# kafka-python checks request_timeout_ms < connections_max_idle_ms (540 s); a drill whose
# requests need minutes is better stopped than waited for.
MAX_TIMEOUT = 300


class Failed(Exception):
    """A message for fail_json, raised once the clients are closed."""


class ConnectionErrors(logging.Handler):
    """Why kafka-python's connections failed, as it logged it.

    Its bootstrap gives up with "Unable to bootstrap from ..." alone; why (a TLS certificate it
    would not trust, the broker closing the connection after a failed SASL login) is only in its
    log ("Bootstrap connection to bootstrap-0 failed: <reason> (backoff 0.12 secs)").  Should a
    later kafka-python word it otherwise, the message only loses this detail.
    """

    # not "Bootstrap failed: KafkaTimeoutError: Unable to bootstrap", which it logs last
    _FAILED = re.compile(r"[Cc]onnection (?:to \S+ )?failed: (.+?)(?: \(backoff [0-9.]+ secs\))?$")

    def __init__(self):
        logging.Handler.__init__(self, logging.WARNING)
        self.reasons = []

    def emit(self, record):
        match = self._FAILED.search(record.getMessage())
        if match:
            self.reasons.append(match.group(1))

    @property
    def reason(self):
        """The most telling of the reasons: a refused login (kafka-python reads the broker's
        answer only in some attempts; in others it sees the connection close first), else the last
        one that is not a timeout (the bootstrap deadline cuts the last attempt short), else None."""
        for wanted in ("Authentication", ""):
            found = [r for r in self.reasons if wanted in r and "RequestTimedOutError" not in r]
            if found:
                return found[-1]
        return self.reasons[-1] if self.reasons else None


def _leaves(value):
    """The strings AnsibleModule adds to no_log_values for a no_log option's value."""
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    if value is None or isinstance(value, bool):
        return []
    text = str(value)
    return [text] if text else []


def mask_only_secrets(module, properties):
    """Keep only the secret values of client_properties in no_log_values.

    The option is no_log so that AnsibleModule's record of the invocation in the host's journal,
    written before this code runs, holds none of it; but no_log masks every value of it anywhere
    in the output, and a message naming SASL_SSL or a certificate's path would read ********.
    """
    module.no_log_values.difference_update(_leaves(properties))
    module.no_log_values.update(secret_values(properties))


def bootstrap_list(raw):
    """(servers, errors naming bootstrap_servers)."""
    if not isinstance(raw, (str, list)):
        return [], ["bootstrap_servers: %r is not a list or a comma-separated string of host:port" % (raw,)]
    try:
        servers = as_list(raw)
    except TypeError:
        return [], ["bootstrap_servers: %r is not a list of host:port" % (raw,)]
    if not servers:
        return [], ["bootstrap_servers: must list at least one host:port"]
    errors = []
    for server in servers:
        try:
            parse_server(server)
        except ValueError as exc:
            errors.append("bootstrap_servers: %s" % exc)
    return servers, errors


def input_errors(params, servers_errors, property_errors):
    errors = list(servers_errors)
    groups = params["groups"] or []
    if not groups:
        errors.append("groups: must name at least one consumer group")
    errors.extend("groups[%d]: %r is blank (a group id)" % (i, g) for i, g in enumerate(groups) if not g.strip())
    topics = params["topics"]
    if topics is not None and not topics:
        errors.append("topics: an empty list reports nothing; leave it out to report every topic")
    errors.extend("topics[%d]: %r is blank (a topic name)" % (i, t) for i, t in enumerate(topics or []) if not t.strip())
    if not 1 <= params["timeout"] <= MAX_TIMEOUT:
        errors.append("timeout: %d is not from 1 to %d seconds" % (params["timeout"], MAX_TIMEOUT))
    return errors + list(property_errors)


def error_text(exc):
    """'KafkaTimeoutError: Unable to bootstrap ...': kafka-python's errors name their class already."""
    name, text = type(exc).__name__, str(exc)
    return text if text.startswith(name) or text.startswith("[Error ") else "%s: %s" % (name, text)


def error_name(code):
    error = kafka_errors.for_code(code)
    return "error %d (%s)" % (code, error.message if hasattr(error, "message") else error.__name__)


def report(servers, kwargs, params, deadline, connection_errors):
    """(cluster_id, groups, warnings); raises Failed with the message for fail_json."""
    timeout = params["timeout"]
    shown = ",".join(servers)
    common = dict(kwargs, bootstrap_servers=servers, client_id=CLIENT_ID, request_timeout_ms=timeout * 1000)
    admin = consumer = None
    try:
        try:
            admin = KafkaAdminClient(bootstrap_timeout_ms=max(1, int((deadline - time.monotonic()) * 1000)), **common)
            consumer = KafkaConsumer(bootstrap_timeout_ms=max(1, int((deadline - time.monotonic()) * 1000)),
                                     group_id=None, enable_auto_commit=False,
                                     isolation_level=params["isolation_level"], **common)
        except kafka_errors.KafkaError as exc:
            # the servers answered the probe's ApiVersions, so this is the client's own connection:
            # TLS verification, SASL authentication, or the brokers the cluster advertises
            reason = connection_errors.reason
            detail = "; kafka-python logged: %s" % reason if reason else ""
            if reason and "socket disconnected" in reason and kwargs.get("security_protocol") in SASL_PROTOCOLS:
                detail += " (as a broker closes the connection after a failed SASL login: check sasl.plain.username " \
                          "and sasl.plain.password)"
            raise Failed("bootstrap_servers: %s answered, but kafka-python could not connect to the cluster within "
                         "%s s: %s%s" % (shown, timeout, error_text(exc), detail))
        retry = Retry(timeout)
        try:
            cluster_id = retry(admin.describe_cluster).get("cluster_id")
            groups, warnings = read_groups(admin, consumer, list(dict.fromkeys(params["groups"])), params["topics"],
                                           timeout * 1000, error_name, retry)
        except (kafka_errors.KafkaError, NotReady, ValueError) as exc:
            raise Failed("reading the groups' offsets from %s failed: %s" % (shown, error_text(exc)))
        return cluster_id, groups, warnings
    finally:
        for client in (consumer, admin):
            if client is not None:
                try:
                    client.close()
                except Exception:  # noqa: BLE001 - closing must not hide the answer or the failure
                    pass


def main():
    module = AnsibleModule(
        argument_spec=dict(
            bootstrap_servers=dict(type="raw", required=True),
            groups=dict(type="list", elements="str", required=True),
            topics=dict(type="list", elements="str"),
            client_properties=dict(type="dict", default={}, no_log=True),
            isolation_level=dict(type="str", default="read_committed", choices=list(ISOLATION_LEVELS)),
            timeout=dict(type="int", default=30),
        ),
        supports_check_mode=True,
    )
    params = module.params
    properties = params["client_properties"] or {}
    mask_only_secrets(module, properties)
    servers, servers_errors = bootstrap_list(params["bootstrap_servers"])
    kwargs, property_errors = client_kwargs(properties)
    errors = input_errors(params, servers_errors, property_errors)
    if errors:
        module.fail_json(msg="; ".join(errors))
    if KAFKA_IMPORT_ERROR:
        module.fail_json(msg=missing_required_lib("kafka-python"), exception=KAFKA_IMPORT_ERROR)
    if not hasattr(KafkaAdminClient, "list_group_offsets"):  # kafka-python 2.x names its calls otherwise
        from kafka import __version__ as version
        module.fail_json(msg="kafka-python %s on this host: this module needs 3.0 or later" % version)
    # kafka-python's log goes to this handler alone: its retries would otherwise reach the
    # module's stderr through logging's last-resort handler, and at DEBUG it logs SASL passwords
    connection_errors = ConnectionErrors()
    kafka_log = logging.getLogger("kafka")
    kafka_log.addHandler(connection_errors)
    kafka_log.setLevel(logging.WARNING)
    kafka_log.propagate = False

    host = socket.gethostname()
    timeout = params["timeout"]
    deadline = time.monotonic() + timeout
    probe = check_cluster(servers, timeout, kwargs.get("security_protocol", "PLAINTEXT"))
    if not probe["reachable"]:
        module.fail_json(msg="bootstrap_servers: no bootstrap server answered from %s within %s s (%s)" % (
            host, seconds_text(timeout), ", ".join("%s: %s" % pair for pair in probe["failures"].items())))
    try:
        cluster_id, groups, warnings = report(servers, kwargs, params, deadline, connection_errors)
    except Failed as exc:
        module.fail_json(msg=str(exc))
    for warning in warnings:
        module.warn(warning)
    total = sum(group["total_lag"] for group in groups.values())
    msg = "%d group(s) on cluster %s: total lag %d (%s)" % (len(groups), cluster_id, total, params["isolation_level"])
    module.exit_json(changed=False, cluster_id=cluster_id, groups=groups, isolation_level=params["isolation_level"],
                     msg=msg)


if __name__ == "__main__":
    main()
