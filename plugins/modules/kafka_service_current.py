#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kafka_service_current
short_description: Whether a running service started after the files it reads last changed
version_added: 0.1.0
author:
  - kafkaops maintainers (!UNKNOWN)
description:
  - Reads when systemd last made the unit O(name) active, and the modification time of each of
    O(paths). The service is current when no listed file was written after that start.
  - A role restarts a service from a handler after writing its files. A run that fails before its
    handlers run, or that skips the service's tasks, leaves the new file written and the service
    running what it read before, and the next run has nothing left to write. This module lets
    that next run see that a restart is still owed.
  - A unit that is not active is current (there is nothing running to restart; starting it is the
    calling role's task). A listed file that does not exist is not a change.
  - Read-only; it runs in check mode too, and never reports a change itself.
options:
  name:
    description:
      - The systemd unit, without or with its V(.service) suffix.
    type: str
    required: true
  paths:
    description:
      - The files the service reads when it starts. A symbolic link's own time is used (when it
        was pointed elsewhere), not its target's.
    type: list
    elements: path
    required: true
notes:
  - The start is taken from systemd's C(ActiveEnterTimestampMonotonic) and placed on the host's
    wall clock, the clock file times use. A wall clock stepped back, after a file was written, by
    more than the time between that write and the start makes the file look newer than the
    start, and the service is then restarted once more than needed, never once less.
extends_documentation_fragment:
  - kafkaops.mirrormaker.read_only
  - ansible.builtin.action_common_attributes
"""

EXAMPLES = r"""
- name: Restart a running broker that started before its files last changed
  kafkaops.mirrormaker.kafka_service_current:
    name: kafka
    paths:
      - /etc/kafka/server.properties
      - /etc/systemd/system/kafka.service
  register: current
  changed_when: not current.current
  notify: kafka_broker restart
"""

RETURN = r"""
current:
  description: True when the unit is not active, or no listed file was written after it started.
  returned: always
  type: bool
  sample: false
written:
  description: The listed files written after the unit last started, sorted.
  returned: always
  type: list
  elements: str
  sample: [/etc/kafka/server.properties]
started:
  description: When the unit last became active, in seconds since the epoch; null when it is not active.
  returned: always
  type: float
  sample: 1796530378.25
"""

import os
import time

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.service_files import (
    parse_show, started_epoch, written_since)


def _mtime(module, path):
    try:
        return os.lstat(path).st_mtime
    except FileNotFoundError:
        return None
    except OSError as exc:
        module.fail_json(msg="paths: cannot read the time of %r: %s" % (path, to_native(exc)))


def main():
    module = AnsibleModule(
        argument_spec={
            "name": {"type": "str", "required": True},
            "paths": {"type": "list", "elements": "path", "required": True},
        },
        supports_check_mode=True,
    )
    name = module.params["name"]
    systemctl = module.get_bin_path("systemctl", required=True)
    rc, out, err = module.run_command(
        [systemctl, "show", "-p", "ActiveState", "-p", "ActiveEnterTimestampMonotonic", "--", name])
    if rc != 0:
        module.fail_json(msg="name: systemctl show %s failed: %s" % (name, (err or out).strip()), rc=rc)
    # Both clocks read together: the start is placed on the wall clock by their difference.
    monotonic_now, epoch_now = time.monotonic(), time.time()
    started = started_epoch(parse_show(out), monotonic_now, epoch_now)
    written = written_since({path: _mtime(module, path) for path in module.params["paths"]}, started)
    module.exit_json(changed=False, current=not written, written=written, started=started)


if __name__ == "__main__":
    main()
