# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Documentation of the kafka_broker_plan action (the layout is derived on the controller)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_broker_plan
short_description: Derive a KRaft broker's cluster layout once, validated
description:
  - From the descriptions every broker of the play recorded, derives the layout of one host's cluster
    and sets it as a fact. The node ids, the controller quorum voters, the listeners and advertised
    listeners, the security protocol map, the bootstrap servers and the ports the host claims.
  - Refuses, one message per fault naming the variable, listeners that are not valid or collide, an
    inter-broker listener that is not served, node ids given twice or mixed with derived ones,
    quorum hosts that are not controllers of the cluster, and hosts of one cluster that give different
    cluster ids (C(kafka_broker_cluster_id)).
  - Runs on the controller only.
version_added: 0.1.0
author:
  - kafkaops maintainers (!UNKNOWN)
options:
  members:
    description:
      - One description per broker host of the play, C(host), C(cluster), C(node_id), C(roles), C(listeners),
        C(controller_listener), C(inter_broker_listener), C(advertised_host), C(bind_host), C(quorum_hosts), and
        optionally C(cluster_id), the host's C(kafka_broker_cluster_id).
    type: list
    elements: dict
    required: true
  host:
    description: The host whose layout is derived.
    type: str
    required: true
  fact:
    description: The name of the fact the layout is set as.
    type: str
    default: __kafka_broker_plan
extends_documentation_fragment:
  - kafkaops.mirrormaker.controller_action
  - ansible.builtin.action_common_attributes
"""

EXAMPLES = r"""
- name: Derive the cluster layout
  kafkaops.mirrormaker.kafka_broker_plan:
    members: "{{ ansible_play_hosts | map('extract', hostvars) | map(attribute='__kafka_broker_self') | list }}"
    host: "{{ inventory_hostname }}"
"""

RETURN = r"""
ansible_facts:
  description: The layout, under the name given in O(fact).
  returned: success
  type: dict
  contains:
    node_id:
      description: This host's node id.
      type: int
    voters:
      description: C(controller.quorum.voters).
      type: str
    listeners:
      description: C(listeners) of this host.
      type: str
    advertised_listeners:
      description: C(advertised.listeners) of this host.
      type: str
    protocol_map:
      description: C(listener.security.protocol.map).
      type: str
    bootstrap_servers:
      description: The cluster's brokers as clients reach them.
      type: str
    brokers:
      description: The hosts of the cluster that run the broker role.
      type: list
      elements: str
    members:
      description: Every host of the cluster.
      type: list
      elements: str
    ports:
      description: Port to the variable that sets it, for the ports this host listens on.
      type: dict
msg:
  description: One message per fault.
  returned: failure
  type: list
  elements: str
"""
