# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Documentation of the role_vars_check action (the work is done on the controller)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: role_vars_check
short_description: Refuse role variables that break the role's argument spec or rules, one message per fault
description:
  - Checks the given variables against C(meta/argument_specs.yml) of a role, recursively through
    lists and dicts with C(options), before any host changes.
  - Every fault is one message that names the variable path (C(mirrormaker_flows[0].topcs)), the value
    (masked when secret) and the rule; an unknown key names the closest known key.
  - A variable with the role's prefix that the spec does not know is refused too.
  - When the values match the spec, the role's own rules run on them (ports, paths, host and unit names,
    files on the controller, login settings), for the C(main) entry point of connect, kafka_broker,
    kafka_common, mirrormaker and pulse. The rules live in C(plugins/module_utils), one file per role
    (C(mm2/connect_rules.py), C(kafka/broker_rules.py), C(kafka/install_rules.py),
    C(mm2/mirrormaker_rules.py), C(pulse/rules.py)), on the shared C(common/rules.py). For mm2_smoke only the
    spec is checked here; its rules run in the M(kafkaops.mirrormaker.mm2_smoke_plan) action.
  - Runs on the controller only.
version_added: 0.1.0
author:
  - kafkaops maintainers (!UNKNOWN)
options:
  role_path:
    description: Directory of the role whose spec is used.
    type: path
    required: true
  entry_point:
    description: Entry point of the spec.
    type: str
    default: main
  values:
    description: Variable name to value, usually every variable with the role's prefix.
    type: dict
    required: true
  context:
    description:
      - What the role's rules need besides its variables, such as the paths where the role puts files on the
        host (kafka_broker's C(keystore) and C(truststore)).
      - For pulse the action adds the MirrorMaker hosts' JMX settings from the play itself.
    type: dict
    default: {}
extends_documentation_fragment:
  - kafkaops.mirrormaker.controller_action
  - ansible.builtin.action_common_attributes
"""

EXAMPLES = r"""
- name: Check the role's variables
  kafkaops.mirrormaker.role_vars_check:
    role_path: "{{ role_path }}"
    values: "{{ dict(__names | zip(query('ansible.builtin.vars', *__names))) }}"
  vars:
    __names: "{{ query('ansible.builtin.varnames', '^mirrormaker_') }}"
"""

RETURN = r"""
errors:
  description: One message per fault; empty when the input is valid.
  returned: always
  type: list
  elements: str
  sample: ["mirrormaker_flows[0].topcs: unknown key; did you mean 'topics'?"]
checked:
  description: Variables that were checked.
  returned: always
  type: list
  elements: str
"""
