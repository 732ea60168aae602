#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kafka_file
short_description: Write a configuration file from content rendered on the controller, in one round trip
version_added: 0.1.0
author:
  - kafkaops maintainers (!UNKNOWN)
description:
  - Writes O(content) to O(path) when the file's content differs, atomically (a temporary file in the same
    directory, renamed over O(path), with the final owner, group and mode set before the rename), then
    sets owner, group and mode.
  - Content and attributes are checked and set in one round trip to the host. M(ansible.builtin.template)
    needs two when nothing changes (a remote C(stat), then the C(file) module for the attributes), and a
    rollout pays that for every file on every host on every run.
  - Render the content with P(ansible.builtin.template#lookup), so that it is rendered on the controller
    as M(ansible.builtin.template) would.
  - For files without secrets (logging configuration, systemd units). Files holding secrets are written by
    M(kafkaops.mirrormaker.kafka_properties) or with C(no_log).
options:
  path:
    description:
      - The file to write. Its parent directory must exist (in check mode a missing parent is reported as
        a change, since the task that creates it does not run in check mode).
    type: path
    required: true
  content:
    description: The whole content of the file.
    type: str
    required: true
notes:
  - When O(mode) is not given, an existing file keeps its mode and a new file is created C(0600).
extends_documentation_fragment:
  - kafkaops.mirrormaker.host_files
  - ansible.builtin.action_common_attributes
  - ansible.builtin.files
"""

EXAMPLES = r"""
- name: Install the systemd unit
  kafkaops.mirrormaker.kafka_file:
    path: /etc/systemd/system/kafka.service
    content: "{{ lookup('ansible.builtin.template', 'service.unit.j2') }}"
    owner: root
    group: root
    mode: "0644"
"""

RETURN = r"""
path:
  description: The file written.
  returned: always
  type: str
  sample: /etc/systemd/system/kafka.service
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import files


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", required=True),
            content=dict(type="str", required=True),
        ),
        add_file_common_args=True,
        supports_check_mode=True,
    )
    path = module.params["path"]
    data = module.params["content"].encode("utf-8")
    existed, old = files.read_current(module, path)
    changed = files.ensure(module, path, data, existed, old)
    result = dict(changed=changed, path=path)
    if module._diff:
        result["diff"] = dict(before=old.decode("utf-8", errors="replace") if existed else "",
                              after=module.params["content"], before_header=path, after_header=path)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
