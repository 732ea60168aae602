#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kafka_launcher_block
short_description: Keep a block of exports in a Kafka launcher script, just before its exec line
version_added: 0.1.0
author:
  - kafkaops maintainers (!UNKNOWN)
description:
  - Puts O(lines) between two marker lines right before the last line of O(path) that starts with
    C(exec ), as the Acceldata Pulse page tells operators to export C(KAFKA_JMX_OPTS) in
    C(connect-mirror-maker.sh). A block found elsewhere in the script moves there.
  - With no O(lines) the block is removed; a script that is not there then is left as it is.
  - Reads, compares and writes in one round trip. Refuses a script without an C(exec) line, and a
    script whose markers are not one BEGIN followed by one END.
  - In check mode a script not installed yet is reported as a change when O(lines) is not empty.
options:
  path:
    description: The launcher script, for example C(<kafka>/bin/connect-mirror-maker.sh).
    type: path
    required: true
  marker:
    description: The marker line; C({mark}) becomes C(BEGIN) and C(END).
    type: str
    required: true
  lines:
    description: The block's lines, without line breaks.
    type: list
    elements: str
    default: []
notes:
  - The script keeps its owner, group and mode unless O(owner), O(group) or O(mode) are given.
extends_documentation_fragment:
  - kafkaops.mirrormaker.host_files
  - ansible.builtin.action_common_attributes
  - ansible.builtin.files
"""

EXAMPLES = r"""
- name: Export KAFKA_JMX_OPTS just before the exec line
  kafkaops.mirrormaker.kafka_launcher_block:
    path: /opt/kafka/current/bin/connect-mirror-maker.sh
    marker: "# {mark} managed block: JMX"
    lines:
      - export KAFKA_JMX_OPTS="-Dcom.sun.management.jmxremote.port=9999"
"""

RETURN = r"""
path:
  description: The script.
  returned: always
  type: str
  sample: /opt/kafka/current/bin/connect-mirror-maker.sh
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import files
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import launcher


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", required=True),
            marker=dict(type="str", required=True),
            lines=dict(type="list", elements="str", default=[]),
        ),
        add_file_common_args=True,
        supports_check_mode=True,
    )
    path, lines = module.params["path"], module.params["lines"]
    if not os.path.exists(path):
        if not lines:  # nothing to remove from a launcher that is not there
            module.exit_json(changed=False, path=path, msg="%s is not installed" % path)
        if module.check_mode:
            module.exit_json(changed=bool(lines), path=path, msg="%s is not installed yet" % path)
        module.fail_json(msg="path: %r does not exist: install Kafka before its launcher gets the block" % path, path=path)
    _existed, old = files.read_current(module, path)
    before = old.decode("utf-8", errors="surrogateescape")
    try:
        after = launcher.apply(before, module.params["marker"], lines)
    except launcher.LauncherError as exc:
        module.fail_json(msg="path: %s: %s" % (path, exc), path=path)
    changed = files.ensure(module, path, after.encode("utf-8", errors="surrogateescape"), True, old)
    result = dict(changed=changed, path=path)
    if module._diff:
        result["diff"] = dict(before=before, after=after, before_header=path, after_header=path)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
