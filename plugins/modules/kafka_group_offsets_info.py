#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kafka_group_offsets_info
short_description: Report consumer groups' committed offsets, end offsets and lag on one Kafka cluster
version_added: 0.1.0
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
  - Read-only; it changes nothing and runs in check mode too. C(changed) is always V(false).
options:
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
  isolation_level:
    description:
      - Which end offset the partitions' C(end) in RV(groups) is.
      - V(read_committed) is the end a consumer with that isolation level reads to, the last stable
        offset; it stops before the first record of a transaction still open.
      - V(read_uncommitted) is the log end offset.
    type: str
    choices: [read_committed, read_uncommitted]
    default: read_committed
extends_documentation_fragment:
  - kafkaops.mirrormaker.kafka_client
  - kafkaops.mirrormaker.read_only
  - ansible.builtin.action_common_attributes
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
  kafkaops.mirrormaker.kafka_group_offsets_info:
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

import traceback

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import client as kafka_client
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.client import Failed, error_text
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.groups import (
    ISOLATION_LEVELS,
    NotReady,
    read_groups,
)

KAFKA_IMPORT_ERROR = None
kafka_version = None  # bound without kafka-python too: main hands it to kafka_client.start
try:
    from kafka import KafkaConsumer
    from kafka import __version__ as kafka_version
    from kafka import errors as kafka_errors
    from kafka.admin import KafkaAdminClient
except ImportError:
    KAFKA_IMPORT_ERROR = traceback.format_exc()

CLIENT_ID = "kafkaops-group-offsets"


def input_errors(params, servers_errors, property_errors):
    errors = list(servers_errors)
    groups = params["groups"] or []
    if not groups:
        errors.append("groups: must name at least one consumer group")
    errors.extend(kafka_client.blank_entries("groups", groups, "a group id"))
    topics = params["topics"]
    if topics is not None and not topics:
        errors.append("topics: an empty list reports nothing; leave it out to report every topic")
    errors.extend(kafka_client.blank_entries("topics", topics, "a topic name"))
    errors.extend(kafka_client.timeout_errors(params["timeout"]))
    return errors + list(property_errors)


def error_name(code):
    return kafka_client.kafka_error_name(kafka_errors, code)


def report(servers, kwargs, params, connection_errors):
    """(cluster_id, groups, warnings); raises Failed with the message for fail_json."""
    with kafka_client.Session(servers, kwargs, params["timeout"], connection_errors, CLIENT_ID,
                              kafka_errors.KafkaError) as session:
        admin = session.client(KafkaAdminClient)
        consumer = session.client(KafkaConsumer, group_id=None, enable_auto_commit=False,
                                  isolation_level=params["isolation_level"])
        try:
            cluster_id = session.retry(admin.describe_cluster).get("cluster_id")
            groups, warnings = read_groups(admin, consumer, list(dict.fromkeys(params["groups"])), params["topics"],
                                           params["timeout"] * 1000, error_name, session.retry)
        except (kafka_errors.KafkaError, NotReady, ValueError) as exc:
            raise Failed("reading the groups' offsets from %s failed: %s" % (",".join(servers), error_text(exc)))
        return cluster_id, groups, warnings


def main():
    argument_spec = kafka_client.argument_spec()
    argument_spec.update(
        groups=dict(type="list", elements="str", required=True),
        topics=dict(type="list", elements="str"),
        isolation_level=dict(type="str", default="read_committed", choices=list(ISOLATION_LEVELS)),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    params = module.params
    servers, kwargs, connection_errors = kafka_client.start(
        module, KAFKA_IMPORT_ERROR, kafka_version,
        lambda servers_errors, property_errors: input_errors(params, servers_errors, property_errors))
    try:
        cluster_id, groups, warnings = report(servers, kwargs, params, connection_errors)
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
