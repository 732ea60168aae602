#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: mm2_lag_info
short_description: Report how far MirrorMaker 2's targets are behind their sources, per flow, topic and partition
version_added: 0.1.0
description:
  - For each flow of the plan the mirrormaker or connect role built, reads what MirrorMaker 2 has
    copied (the source offsets its C(MirrorSourceConnector) committed) and the source partitions'
    log end offsets, and reports per partition how many records and how many seconds the target
    is behind. The figures are derived in C(plugins/module_utils/mm2/lag.py); its docstring and
    C(docs/monitoring.md) define them.
  - In the dedicated layout (O(layout=dedicated), C(connect-mirror-maker.sh)) the committed offsets
    are read from the offsets topic of the flow's herder on the target cluster, C(mm2-offsets.<source>.internal)
    unless the plan's properties name another.
  - In the Connect layout (O(layout=connect)) they are read with C(GET /connectors/<name>/offsets)
    (KIP-875, Kafka 3.5 or later) from the worker at O(url).
  - RV(lag[].records) is the number of offsets from the first source record MirrorMaker 2 has not copied
    to the log end offset, 0 when every record was copied. RV(lag[].seconds) is the age of that record
    (the time of the reading minus the record's timestamp), 0 when nothing is behind.
  - Only partitions on which MirrorMaker 2 committed an offset are reported.
  - Read-only; it changes nothing and runs in check mode too. C(changed) is always V(false).
options:
  plan:
    description:
      - The plan the role built, read as it is, never a rendered file.
      - With O(layout=dedicated), the mirrormaker role's flow model (what C(kafkaops.mirrormaker.mm2_config)
        returns, registered as C(__mirrormaker_model)) with its C(properties) (mm2.properties as a
        mapping) and C(flows) (the effective flows, with their bootstrap servers).
      - With O(layout=connect), the connect role's plan (C(__connect_plan), from
        C(kafkaops.mirrormaker.connect_plan)) with its C(flow) and C(connectors).
      - Its secret values never appear in the output.
    type: dict
    required: true
  layout:
    description:
      - V(dedicated) for MirrorMaker 2 run by C(connect-mirror-maker.sh) (the mirrormaker role),
        V(connect) for its connectors on a Kafka Connect cluster (the connect role).
    type: str
    required: true
    choices: [dedicated, connect]
  flows:
    description:
      - Report only these flows (V(SOURCE->TARGET)); left out, every enabled flow of the plan.
      - A name that is not an enabled flow of the plan is refused.
    type: list
    elements: str
  client_properties:
    description:
      - Client settings per cluster alias, each a mapping of the keys the collection's kafka-python
        modules take as their C(client_properties) (see M(kafkaops.mirrormaker.kafka_group_offsets_info)),
        that is V(security.protocol), V(sasl.mechanism), V(sasl.plain.username), V(sasl.plain.password),
        V(sasl.kerberos.service.name), V(ssl.cafile), V(ssl.certfile), V(ssl.keyfile),
        V(ssl.password), V(ssl.endpoint.identification.algorithm).
      - A cluster without an entry is reached with V(PLAINTEXT). The plan's Java client settings
        (JAAS lines, Java key stores) are not read, since kafka-python cannot use them.
    type: dict
    default: {}
extends_documentation_fragment:
  - kafkaops.mirrormaker.connect_rest
  - kafkaops.mirrormaker.read_only
  - ansible.builtin.action_common_attributes
notes:
  - O(timeout) also bounds each cluster's connection and each read from it (the offsets topic, the
    end offsets, the first record not copied); from 1 to 300.
  - The offsets read trail what MirrorMaker 2 copied by up to the worker's C(offset.flush.interval.ms)
    (10 s as the roles ship it, 60 s as Kafka's default), so records copied since the last flush
    are still reported as behind.
  - Transaction markers (control records) are counted only where they lie between records still
    to copy; the markers right after the last copied record and at the end of the log are not.
    The first record not copied is read with the isolation level of MirrorMaker 2's source
    consumer (C(consumer.isolation.level) of the flow, V(read_uncommitted) unless set).
  - The age is measured with this host's clock against the record's timestamp, the producer's
    clock unless the topic keeps C(LogAppendTime); a producer whose clock runs ahead shows a
    negative age, as it is.
  - Needs kafka-python 3.0 or later on the managed host (the mm2_smoke role's venv has it; point
    C(ansible_python_interpreter) at that venv's python).
seealso:
  - module: kafkaops.mirrormaker.kafka_group_offsets_info
  - name: KIP-875 (first-class offsets support in Kafka Connect)
    description: GET /connectors/<name>/offsets, which the Connect layout reads.
    link: https://cwiki.apache.org/confluence/display/KAFKA/KIP-875%3A+First-class+offsets+support+in+Kafka+Connect
author:
  - kafkaops maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: How far cluster B is behind A, as the dedicated MirrorMaker 2 of this node copies it
  kafkaops.mirrormaker.mm2_lag_info:
    layout: dedicated
    plan: "{{ __mirrormaker_model }}"
  vars:
    ansible_python_interpreter: /opt/kafkaops-mm2-smoke/venv/bin/python
  register: __lag

- name: The same for a Connect cluster's flow, from its REST API
  kafkaops.mirrormaker.mm2_lag_info:
    layout: connect
    plan: "{{ __connect_plan }}"
    url: http://127.0.0.1:8083
    client_properties:
      A: {security.protocol: SASL_PLAINTEXT, sasl.mechanism: SCRAM-SHA-512, sasl.plain.username: lag,
          sasl.plain.password: "{{ vault_lag_password }}"}
  vars:
    ansible_python_interpreter: /opt/kafkaops-mm2-smoke/venv/bin/python
  register: __lag

- name: No flow more than a minute behind
  ansible.builtin.assert:
    that: item.value.seconds < 60
  loop: "{{ __lag.flows | dict2items }}"
"""

RETURN = r"""
lag:
  description:
    - One row per source partition on which MirrorMaker 2 committed an offset, sorted by flow,
      topic and partition.
  returned: success
  type: list
  elements: dict
  sample:
    - {flow: A->B, topic: orders, partition: 0, records: 0, seconds: 0.0, end: 120, next: 120}
    - {flow: A->B, topic: orders, partition: 1, records: 40, seconds: 12.402, end: 160, next: 120}
  contains:
    flow:
      description: The flow, V(SOURCE->TARGET).
      type: str
      returned: always
    topic:
      description: The topic on the source cluster.
      type: str
      returned: always
    partition:
      description: The partition number.
      type: int
      returned: always
    records:
      description:
        - Offsets from the first source record not yet copied to the log end offset; 0 when every
          record was copied.
      type: int
      returned: always
    seconds:
      description:
        - The age of the first source record not yet copied, in seconds (milliseconds as decimals);
          0 when every record was copied.
      type: float
      returned: always
    end:
      description: The source partition's log end offset.
      type: int
      returned: always
    next:
      description:
        - The first source offset MirrorMaker 2 has not copied by its committed offset (that
          offset plus one), the log start when it committed none.
      type: int
      returned: always
flows:
  description: Per flow, the sum of its rows' records, the largest of their seconds and how many partitions.
  returned: success
  type: dict
  sample: {"A->B": {records: 40, seconds: 12.402, partitions: 2}}
sources:
  description: Where each flow's committed offsets were read, and the isolation level of its source consumer.
  returned: success
  type: list
  elements: dict
  sample:
    - {flow: A->B, offsets: "topic mm2-offsets.A.internal on B (127.0.0.1:9092)", isolation_level: read_uncommitted}
measured_at:
  description: When the reading ended (UTC, ISO 8601); the ages are taken at this moment.
  returned: success
  type: str
  sample: "2026-11-27T17:02:11.204Z"
"""

import datetime

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import client as kafka_client
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.client import Failed
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import lag as mm2_lag
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import lag_reader


def main():
    module = AnsibleModule(argument_spec=lag_reader.argument_spec(), supports_check_mode=True)
    params = module.params
    # Only the secret values stay masked: topic names and aliases are what the answer is made of.
    kafka_client.mask_only_secrets(module, {"plan": params["plan"], "client_properties": params["client_properties"]})
    if params.get("url_password"):
        module.no_log_values.add(params["url_password"])
    errors = lag_reader.input_errors(params)
    if errors:
        module.fail_json(msg="; ".join(errors))
    fault = lag_reader.library_fault(params)
    if fault:
        module.fail_json(msg=fault[0], exception=fault[1])
    try:
        rows, sources, warnings = lag_reader.measure(params, kafka_client.capture_kafka_log())
    except Failed as exc:
        module.fail_json(msg=str(exc))
    for warning in warnings:
        module.warn(warning)
    flows = mm2_lag.by_flow(rows)
    measured_at = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    msg = "; ".join("%s: %d records, %.3f s behind over %d partitions" % (name, f["records"], f["seconds"], f["partitions"])
                    for name, f in flows.items()) or "no partition with a committed offset"
    module.exit_json(changed=False, lag=rows, flows=flows, sources=sources, measured_at=measured_at, msg=msg)


if __name__ == "__main__":
    main()
