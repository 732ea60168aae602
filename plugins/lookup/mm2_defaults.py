# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Lookup kafkaops.mirrormaker.mm2_defaults: the MirrorMaker 2 settings the collection ships."""

from __future__ import annotations

DOCUMENTATION = r"""
name: mm2_defaults
short_description: The MirrorMaker 2 settings the collection ships, shared by both layouts
version_added: 0.1.0
description:
  - Returns one named set of MirrorMaker 2 settings from C(plugins/module_utils/mm2/tuning.py).
  - The mirrormaker and connect roles' defaults read them here, so that the dedicated and the Connect
    layout ship the same values from one place.
options:
  _terms:
    description:
      - C(flow_tuning), the client tuning rendered for every flow (C(tasks.max), C(producer.override.*), C(consumer.*));
      - C(worker), the worker settings (C(scheduled.rebalance.max.delay.ms), C(offset.flush.interval.ms)).
    type: list
    elements: str
    required: true
author:
  - kafkaops maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Show the client tuning every flow gets
  ansible.builtin.debug:
    msg: "{{ lookup('kafkaops.mirrormaker.mm2_defaults', 'flow_tuning') }}"

- name: Keep the shipped tuning but one more task per flow
  ansible.builtin.set_fact:
    mirrormaker_flow_default_properties: >-
      {{ lookup('kafkaops.mirrormaker.mm2_defaults', 'flow_tuning') | combine({'tasks.max': 8}) }}
"""

RETURN = r"""
_raw:
  description: One mapping of property names to values per term.
  type: list
  elements: dict
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import tuning


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        try:
            return [tuning.defaults(term) for term in terms]
        except KeyError as exc:
            raise AnsibleLookupError("mm2_defaults: %s" % exc.args[0])
