#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: connect_health
short_description: Wait until a Kafka Connect worker's cluster runs every connector and task, stably
version_added: 0.1.0
description:
  - Reads C(GET /connectors?expand=status) from one worker (O(url)) until two reads O(settle)
    seconds apart both show every connector and task running (or paused or stopped on purpose),
    with the same assignment on both, and fails naming what was not when O(wait_timeout) passes.
  - One read is not enough. Connect's status topic is eventually consistent, and after a worker
    restarts, the group's second cooperative rebalance round can still move or stop a connector a
    few seconds after everything read C(RUNNING). A rolling restart gated on one read could
    return while a connector was not running.
  - With O(worker) and O(workers), the worker O(worker) must also run at least one connector once
    the cluster has as many connectors as O(workers). The assignor spreads connectors over every
    member of the group's current generation, so a worker that runs none has not joined it.
  - With O(gone_workers), no connector or task may still be assigned to those workers (workers
    taken out of the cluster). Their connectors and tasks move to the others only
    C(scheduled.rebalance.max.delay.ms) after they left.
  - Changes nothing. Runs in check mode too.
options:
  settle:
    description:
      - Seconds between the two reads that must agree. Longer than a few of the workers' heartbeat
        intervals (C(heartbeat.interval.ms), 3 seconds by default), within which a member learns
        of a rebalance.
    type: int
    default: 10
  wait_timeout:
    description:
      - Seconds to wait at most.
    type: int
    default: 180
  worker:
    description:
      - The worker id (C(host:port), as the worker advertises it) that must run a connector.
    type: str
  workers:
    description:
      - How many workers the Connect cluster has. Only read with O(worker).
    type: int
    default: 0
  gone_workers:
    description:
      - Worker ids (C(host:port), as the workers advertised them) that were taken out of the cluster.
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - kafkaops.mirrormaker.connect_rest
  - kafkaops.mirrormaker.read_only
  - ansible.builtin.action_common_attributes
notes:
  - The requests are sent from the managed host, usually the worker itself.
author:
  - kafkaops maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Wait until the worker's Connect cluster runs every connector and task, stably
  kafkaops.mirrormaker.connect_health:
    url: http://127.0.0.1:8083
    worker: connect-1.example.com:8083
    workers: 2

- name: Wait until the tasks of a worker taken out run on the others
  kafkaops.mirrormaker.connect_health:
    url: http://127.0.0.1:8083
    gone_workers: [connect-3.example.com:8083]
    wait_timeout: 180
"""

RETURN = r"""
status:
  description: The last C(GET /connectors?expand=status) answer.
  returned: always
  type: dict
reasons:
  description: Why the last reads were not healthy and stable; empty when they were.
  returned: always
  type: list
  elements: str
reads:
  description: How many answers were read.
  returned: always
  type: int
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.connect import rest as connect_rest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import connect as mm2_connect


def main():
    spec = connect_rest.argument_spec()
    spec.update(settle=dict(type="int", default=10), wait_timeout=dict(type="int", default=180),
                worker=dict(type="str"), workers=dict(type="int", default=0),
                gone_workers=dict(type="list", elements="str", default=[]))
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    params = module.params
    errors = connect_rest.check_connection_params(params)
    if params["wait_timeout"] < 1:
        errors.append("wait_timeout: %d must be at least 1 (seconds)" % params["wait_timeout"])
    for key in ("settle", "workers"):
        if params[key] < 0:
            errors.append("%s: %d must not be negative" % (key, params[key]))
    if errors:
        module.fail_json(msg="; ".join(errors))
    client = connect_rest.ConnectClient.from_params(params)

    def read():
        return client.call("GET", "/connectors", query={"expand": "status"})[1] or {}

    stable, status, reasons, reads = mm2_connect.wait_stable(
        read, params["wait_timeout"], params["settle"], params["worker"], params["workers"],
        gone=params["gone_workers"])
    result = dict(changed=False, status=status or {}, reasons=reasons, reads=reads)
    if not stable:
        module.fail_json(msg="Kafka Connect at %s is not healthy and stable after %d s: %s"
                         % (client.url, params["wait_timeout"], "; ".join(reasons)), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
