#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kafka_paths
short_description: Directories, symlinks and removed files of one service in a single task
version_added: 0.1.0
author:
  - kafkaops maintainers (!UNKNOWN)
description:
  - Brings every entry of O(paths) to its state, in the given order, in one round trip to the host.
    A loop over M(ansible.builtin.file) costs one round trip per entry, which a rollout over many
    hosts pays on every run, also when nothing changes.
  - Ownership and mode are set with the same code as M(ansible.builtin.file) (C(AnsibleModule)'s file
    attribute helpers), so check mode and C(--diff) report them the same way.
  - Only what the entries name is touched; nothing else in a directory is looked at.
options:
  paths:
    description:
      - The entries, applied in order (a parent directory before what goes in it).
    type: list
    elements: dict
    required: true
    suboptions:
      path:
        description: Absolute path of the entry.
        type: path
        required: true
      state:
        description:
          - V(directory) creates the directory (and missing parents) and sets its owner, group and mode.
          - V(link) makes O(paths[].path) a symlink to O(paths[].src), replacing an older link atomically.
            A file or directory in its place is an error.
          - V(absent) removes a file or symlink. A directory is removed only with O(paths[].recurse).
        type: str
        choices: [directory, link, absent]
        default: directory
      src:
        description: Target of a V(link).
        type: path
      owner:
        description: Owner of a V(directory).
        type: str
      group:
        description: Group of a V(directory).
        type: str
      mode:
        description: Mode of a V(directory), as an octal string such as V("0750").
        type: str
      recurse:
        description: Let V(absent) remove a directory with everything in it.
        type: bool
        default: false
notes:
  - A missing parent of a V(directory) entry is created with the default mode and root ownership;
    list the parent first when it needs other settings.
extends_documentation_fragment:
  - kafkaops.mirrormaker.host_files
  - ansible.builtin.action_common_attributes
"""

EXAMPLES = r"""
- name: Create the service's directories and retire an old file
  kafkaops.mirrormaker.kafka_paths:
    paths:
      - { path: /etc/kafka, owner: root, group: kafka, mode: "0750" }
      - { path: /var/lib/kafka, owner: kafka, group: kafka, mode: "0750" }
      - { path: /opt/kafka/current, state: link, src: /opt/kafka/kafka_2.13-4.3.1 }
      - { path: /etc/kafka/jaas.conf, state: absent }
"""

RETURN = r"""
changed_paths:
  description: The entries that changed (or would change, in check mode), in order.
  returned: always
  type: list
  elements: str
  sample: [/var/lib/kafka, /opt/kafka/current]
"""

import os
import shutil

from ansible.module_utils.basic import AnsibleModule


def _directory(module, entry, diff):
    path = entry["path"]
    changed = False
    if os.path.lexists(path) and not os.path.isdir(path):
        module.fail_json(msg="paths: %s exists and is not a directory" % path, path=path)
    if not os.path.exists(path):
        diff["before"]["state"], diff["after"]["state"] = "absent", "directory"
        changed = True
        if module.check_mode:
            return True
        os.makedirs(path)
    file_args = module.load_file_common_arguments(
        {"path": path, "owner": entry["owner"], "group": entry["group"], "mode": entry["mode"]})
    return module.set_fs_attributes_if_different(file_args, changed, diff)


def _link(module, entry, diff):
    path, src = entry["path"], entry["src"]
    if not src:
        module.fail_json(msg="paths: %s has state=link but no src" % path, path=path)
    if os.path.islink(path):
        current = os.readlink(path)
        if current == src:
            return False
        diff["before"]["src"] = current
    elif os.path.lexists(path):
        module.fail_json(msg="paths: %s exists and is not a symlink; refusing to replace it" % path, path=path)
    else:
        diff["before"]["state"] = "absent"
    diff["after"]["src"] = src
    if not module.check_mode:
        tmp = "%s.kafkaops-tmp" % path
        if os.path.lexists(tmp):
            os.unlink(tmp)
        os.symlink(src, tmp)
        os.replace(tmp, path)
    return True


def _absent(module, entry, diff):
    path = entry["path"]
    if not os.path.lexists(path):
        return False
    is_dir = os.path.isdir(path) and not os.path.islink(path)
    if is_dir and not entry["recurse"]:
        module.fail_json(msg="paths: %s is a directory; set recurse to remove it" % path, path=path)
    diff["before"]["state"], diff["after"]["state"] = ("directory" if is_dir else "file"), "absent"
    if not module.check_mode:
        if is_dir:
            shutil.rmtree(path)
        else:
            os.unlink(path)
    return True


_STATES = {"directory": _directory, "link": _link, "absent": _absent}


def main():
    module = AnsibleModule(
        argument_spec=dict(
            paths=dict(type="list", elements="dict", required=True, options=dict(
                path=dict(type="path", required=True),
                state=dict(type="str", choices=list(_STATES), default="directory"),
                src=dict(type="path"),
                owner=dict(type="str"),
                group=dict(type="str"),
                mode=dict(type="str"),
                recurse=dict(type="bool", default=False),
            )),
        ),
        supports_check_mode=True,
    )
    changed_paths, diffs = [], []
    for entry in module.params["paths"]:
        diff = {"before": {"path": entry["path"]}, "after": {"path": entry["path"]}}
        if _STATES[entry["state"]](module, entry, diff):
            changed_paths.append(entry["path"])
            diffs.append(diff)
    result = {"changed": bool(changed_paths), "changed_paths": changed_paths}
    if module._diff:
        result["diff"] = diffs
    module.exit_json(**result)


if __name__ == "__main__":
    main()
