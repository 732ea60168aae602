# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations


class ModuleDocFragment(object):
    """The attributes of the actions that build a plan or check input on the controller and touch no
    host (plugins/action/: connect_plan, kafka_broker_plan, mm2_config, mm2_smoke_plan,
    role_vars_check). Listed before ansible.builtin.action_common_attributes, which adds the
    attributes' descriptions: of two fragments, the first one's values win."""

    DOCUMENTATION = r"""
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    support: full
    platforms: all
"""
