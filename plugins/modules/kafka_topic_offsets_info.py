#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kafka_topic_offsets_info
short_description: Report the start and end offsets of topics' partitions on one Kafka cluster
version_added: 0.1.0
description:
  - For each of O(topics), reads from one cluster every partition's log start offset and end offset,
    with a kafka-python consumer that joins no group.
  - Meant for a failover and a failback, run once per cluster. Read on the target right after
    MirrorMaker 2's connectors stopped, the end offsets are where the mirrored records end and the
    records that clients write after the failover begin.
  - The end offset is the log end offset, or with O(isolation_level=read_committed) the last stable
    offset (the end a C(read_committed) consumer reads to, before any open transaction).
  - A topic the cluster does not have is listed in RV(missing), not refused.
  - Read-only; it changes nothing and runs in check mode too. C(changed) is always V(false).
options:
  topics:
    description:
      - The topic names, each a key of RV(topics). At least one.
    type: list
    elements: str
    required: true
  isolation_level:
    description:
      - Which end offset C(end) is. V(read_uncommitted) is the log end offset, transaction markers and
        records of open transactions included; V(read_committed) the last stable offset.
    type: str
    choices: [read_committed, read_uncommitted]
    default: read_uncommitted
extends_documentation_fragment:
  - kafkaops.mirrormaker.kafka_client
  - kafkaops.mirrormaker.read_only
  - ansible.builtin.action_common_attributes
seealso:
  - module: kafkaops.mirrormaker.kafka_group_offsets_info
author:
  - kafkaops maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Where the mirrored records end on B, right after the flow's connectors stopped
  kafkaops.mirrormaker.kafka_topic_offsets_info:
    bootstrap_servers: kafka-b1:9092
    topics: [orders, payments]
  vars:
    ansible_python_interpreter: /opt/kafkaops-mm2-smoke/venv/bin/python
  register: __ends_on_b
"""

RETURN = r"""
topics:
  description: Per topic of O(topics) the cluster has, its partitions sorted by number.
  returned: success
  type: dict
  sample:
    orders:
      - {partition: 0, start: 0, end: 1042}
      - {partition: 1, start: 0, end: 998}
missing:
  description: The topics of O(topics) the cluster does not have.
  returned: success
  type: list
  elements: str
  sample: [payments]
cluster_id:
  description: The cluster's id, as the broker describes the cluster.
  returned: success
  type: str
isolation_level:
  description: O(isolation_level), which end offset C(end) is.
  returned: success
  type: str
"""

import traceback

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import client as kafka_client
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.client import Failed, error_text
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.groups import ISOLATION_LEVELS, read_topic_offsets

KAFKA_IMPORT_ERROR = None
kafka_version = None  # bound without kafka-python too: main hands it to kafka_client.start
try:
    from kafka import KafkaConsumer, TopicPartition
    from kafka import __version__ as kafka_version
    from kafka import errors as kafka_errors
    from kafka.admin import KafkaAdminClient
except ImportError:
    KAFKA_IMPORT_ERROR = traceback.format_exc()

CLIENT_ID = "kafkaops-topic-offsets"


def input_errors(params, servers_errors, property_errors):
    errors = list(servers_errors)
    topics = params["topics"] or []
    if not topics:
        errors.append("topics: must name at least one topic")
    errors.extend(kafka_client.blank_entries("topics", topics, "a topic name"))
    errors.extend(kafka_client.timeout_errors(params["timeout"]))
    return errors + list(property_errors)


def error_name(code):
    return kafka_client.kafka_error_name(kafka_errors, code)


def main():
    argument_spec = kafka_client.argument_spec()
    argument_spec.update(
        topics=dict(type="list", elements="str", required=True),
        isolation_level=dict(type="str", default="read_uncommitted", choices=list(ISOLATION_LEVELS)),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    params = module.params
    servers, kwargs, connection_errors = kafka_client.start(
        module, KAFKA_IMPORT_ERROR, kafka_version,
        lambda servers_errors, property_errors: input_errors(params, servers_errors, property_errors))
    try:
        with kafka_client.Session(servers, kwargs, params["timeout"], connection_errors, CLIENT_ID,
                                  kafka_errors.KafkaError) as session:
            admin = session.client(KafkaAdminClient)
            consumer = session.client(KafkaConsumer, group_id=None, enable_auto_commit=False,
                                      isolation_level=params["isolation_level"])
            try:
                cluster_id = session.retry(admin.describe_cluster).get("cluster_id")
                topics, missing = read_topic_offsets(admin, consumer, params["topics"], TopicPartition,
                                                     params["timeout"] * 1000, error_name, session.retry)
            except (kafka_errors.KafkaError, ValueError) as exc:
                raise Failed("reading the topics' offsets from %s failed: %s" % (",".join(servers), error_text(exc)))
    except Failed as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, cluster_id=cluster_id, topics=topics, missing=missing,
                     isolation_level=params["isolation_level"],
                     msg="%d topic(s) on cluster %s, %d missing" % (len(topics), cluster_id, len(missing)))


if __name__ == "__main__":
    main()
