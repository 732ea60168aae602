# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Documentation of the mm2_config action (the model is built on the controller)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: mm2_config
short_description: Build the MirrorMaker 2 flow model once, validated, with the rendered properties
description:
  - Validates C(mirrormaker_clusters), C(mirrormaker_flows) and the global properties and returns the
    model every consumer needs, so that it is built once per host and run, not once per filter call.
  - Each fault is one message naming the variable path; secret values in messages are masked.
  - Deprecated or unusual settings come back as Ansible warnings.
  - When the input holds secrets (by the collection's secret rule), the result is censored in the
    output; the registered variable keeps the values for the tasks that write files.
  - Runs on the controller only.
version_added: 0.1.0
author:
  - kafkaops maintainers (!UNKNOWN)
options:
  clusters:
    description: C(mirrormaker_clusters).
    type: list
    elements: dict
    required: true
  flows:
    description: C(mirrormaker_flows).
    type: list
    elements: dict
    required: true
  properties:
    description: Global mm2.properties keys (defaults and C(mirrormaker_properties) combined).
    type: dict
    default: {}
  options:
    description:
      - C(exactly_once), C(internal_rest), C(flow_defaults) (per-flow default keys) and
        C(broker_counts) (alias to the number of brokers the inventory has for that cluster).
    type: dict
    default: {}
extends_documentation_fragment:
  - kafkaops.mirrormaker.controller_action
  - ansible.builtin.action_common_attributes
"""

EXAMPLES = r"""
- name: Build the flow model
  kafkaops.mirrormaker.mm2_config:
    clusters: "{{ mirrormaker_clusters }}"
    flows: "{{ mirrormaker_flows }}"
    properties: "{{ mirrormaker_default_properties | combine(mirrormaker_properties) }}"
    options:
      exactly_once: false
      internal_rest: true
  register: mm2_model

- name: Write mm2.properties from it
  kafkaops.mirrormaker.kafka_properties:
    path: /etc/kafka-mirrormaker/mm2.properties
    properties: "{{ mm2_model.properties }}"
    sort: false
"""

RETURN = r"""
properties:
  description: mm2.properties keys to string values, in file order (global, per cluster, per flow).
  returned: success
  type: dict
flows:
  description: One resolved mapping per flow (topics and groups with their regexes, policy, remote-topic prefix, internal topics).
  returned: success
  type: list
  elements: dict
clients:
  description: Per alias, C(bootstrap_servers) and the client C(properties).
  returned: success
  type: dict
handover_seconds:
  description:
    - Seconds the tasks of a node that leaves wait for it before they move to the other nodes, the longest
      C(scheduled.rebalance.max.delay.ms) of the herders (Connect's default 300 where none is set).
  returned: success
  type: float
errors:
  description: One message per fault.
  returned: failure
  type: list
  elements: str
"""
