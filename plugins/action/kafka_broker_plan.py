# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Action for kafkaops.mirrormaker.kafka_broker_plan: a broker's cluster layout, built once on the controller."""

from __future__ import annotations

from ansible.plugins.action import ActionBase
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import layout

# The options of plugins/modules/kafka_broker_plan.py, as Ansible checks them (required, unknown, types).
ARGUMENT_SPEC = dict(
    members=dict(type="list", elements="dict", required=True),
    host=dict(type="str", required=True),
    fact=dict(type="str", default="__kafka_broker_plan"),
)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]
        members, host = args["members"], args["host"]
        if host not in [member.get("host") for member in members]:
            result.update(failed=True, msg="kafka_broker_plan: host: %r is not one of the members" % (host,))
            return result
        plan = layout.plan(members, host)
        result["changed"] = False
        if plan["errors"]:
            result.update(failed=True, msg=plan["errors"])
            return result
        result["ansible_facts"] = {args["fact"]: plan}
        return result
