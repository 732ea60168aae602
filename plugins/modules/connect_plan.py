# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Documentation of the connect_plan action (the plan is built on the controller)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: connect_plan
short_description: Build one Kafka Connect worker's MirrorMaker 2 plan once, validated
description:
  - From the same flow model as dedicated mode (M(kafkaops.mirrormaker.mm2_config)), builds what the
    connect role renders and applies on one worker, once per host and run, and sets it as a fact.
    The names (group id, internal topics), the worker properties, the connector configs (secrets
    as C(FileConfigProvider) references), the secret files and the effective flow.
  - Refuses, one message per fault naming the variable, a flow the model refuses, a source and
    target that are not an enabled flow, unknown connector kinds, a connector name the REST path
    cannot carry or that its own properties contradict, and exactly-once settings the workers
    cannot honour.
  - Sets MirrorSourceConnector's C(sync.topic.acls.enabled) to C(false) when the inventory runs the
    flow's source or target cluster without an authorizer (C(settings.authorizers)), C(true) otherwise,
    unless the connector properties set it.
  - Warns about the Red Hat guide's operating rules the inventory shows broken (a reverse flow into
    the primary, a standby with fewer brokers, one cluster with an authorizer and one without).
  - When the input holds secrets (by the collection's secret rule), the result is censored in the
    output; the fact keeps the values for the tasks that write files.
  - Runs on the controller only.
version_added: 0.1.0
author:
  - kafkaops maintainers (!UNKNOWN)
options:
  clusters:
    description: C(connect_clusters).
    type: list
    elements: dict
    required: true
  flows:
    description: C(connect_flows).
    type: list
    elements: dict
    required: true
  properties:
    description: Global MirrorMaker 2 keys (the role's defaults and C(connect_properties) combined).
    type: dict
    required: true
  options:
    description: C(exactly_once), C(internal_rest), C(flow_defaults) and C(broker_counts), as for M(kafkaops.mirrormaker.mm2_config).
    type: dict
    required: true
  source:
    description: The alias of the source cluster of the flow this Connect cluster runs (C(connect_source)).
    type: str
    required: true
  target:
    description: The alias of the target cluster (C(connect_target)); the workers keep their state on it.
    type: str
    required: true
  settings:
    description:
      - C(group_id), C(topic_prefix), C(rest) (C(port), C(advertised_host), C(bind_host)), C(worker_defaults),
        C(worker_properties), C(connector_properties) (per connector kind), C(secrets_dir), C(authorizers)
        (cluster alias to whether the inventory's brokers of it run an authorizer, from the filter
        C(kafkaops.mirrormaker.mm2_inventory_authorizers)), and the variable names the messages cite (C(flows_var), C(overrides_var), C(eos_var)).
    type: dict
    required: true
  fact:
    description: The name of the fact the plan is set as.
    type: str
    default: __connect_plan
extends_documentation_fragment:
  - kafkaops.mirrormaker.controller_action
  - ansible.builtin.action_common_attributes
"""

EXAMPLES = r"""
- name: Build the worker's plan
  kafkaops.mirrormaker.connect_plan:
    clusters: "{{ connect_clusters }}"
    flows: "{{ connect_flows }}"
    properties: "{{ connect_default_properties | combine(connect_properties) }}"
    options: {exactly_once: true, internal_rest: true}
    source: A
    target: B
    settings:
      rest: {port: 8083, advertised_host: "{{ inventory_hostname }}", bind_host: ""}
      secrets_dir: /etc/kafka-connect/secrets
"""

RETURN = r"""
ansible_facts:
  description: The plan, under the name given in O(fact).
  returned: success
  type: dict
  contains:
    names:
      description: The Connect cluster's group id, internal topics and connector names.
      type: dict
    worker_properties:
      description: The worker's properties, sorted.
      type: dict
    connectors:
      description: Connector name to its config (sorted, string values).
      type: dict
    secret_files:
      description: The files the FileConfigProvider references read, by key.
      type: dict
    flow:
      description: The flow as the flow model resolves it.
      type: dict
    connector_offsets:
      description:
        - The source offsets per connector name that the role sets when it creates the connector or
          while it is stopped, from C(connect_connector_offsets).
      type: dict
    connector_states:
      description: The state the role leaves each connector in, by name, from C(connect_connector_states); running where absent.
      type: dict
    handover_seconds:
      description:
        - Seconds the connectors and tasks of a worker taken out wait for it before they move to the
          workers that stay, the worker's C(scheduled.rebalance.max.delay.ms) (Connect's default,
          300, where unset).
      type: float
    warnings:
      description: The Red Hat guide's operating rules the inventory shows broken, also shown as warnings.
      type: list
      elements: str
msg:
  description: One message per fault.
  returned: failure
  type: list
  elements: str
"""
