# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations


class ModuleDocFragment(object):
    """The attributes of the modules that only read, on the managed host (connect_health,
    kafka_group_offsets_info, kafka_reachable, mm2_lag_info). Listed before
    ansible.builtin.action_common_attributes, which adds the attributes' descriptions: of two
    fragments, the first one's values win."""

    DOCUMENTATION = r"""
attributes:
  check_mode:
    support: full
    details: The module only reads, so check mode runs it as well.
  diff_mode:
    support: none
  platform:
    platforms: posix
"""
