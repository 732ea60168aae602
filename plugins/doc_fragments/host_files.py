# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations


class ModuleDocFragment(object):
    """The attributes of the modules that write files and directories on the managed host, with a
    dry run and a diff (kafka_file, kafka_launcher_block, kafka_paths, kafka_properties). Listed before
    ansible.builtin.action_common_attributes, which adds the attributes' descriptions: of two
    fragments, the first one's values win."""

    DOCUMENTATION = r"""
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
"""
