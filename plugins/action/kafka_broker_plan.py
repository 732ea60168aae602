# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Action for kafkaops.mirrormaker.kafka_broker_plan: a broker's cluster layout, built once on the controller."""

from __future__ import annotations

from ansible.plugins.action import ActionBase
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import layout


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = dict(self._task.args)
        members, host = args.pop("members", None), args.pop("host", None)
        fact = args.pop("fact", "__kafka_broker_plan")
        faults = ["%s: not an option" % key for key in sorted(args)]
        if not isinstance(members, list):
            faults.append("members: required, a list of the play's broker descriptions")
        elif host not in [member.get("host") for member in members if isinstance(member, dict)]:
            faults.append("host: %r is not one of the members" % (host,))
        if faults:
            result.update(failed=True, msg="kafka_broker_plan: %s" % "; ".join(faults))
            return result
        plan = layout.plan(members, host)
        result["changed"] = False
        if plan["errors"]:
            result.update(failed=True, msg=plan["errors"])
            return result
        result["ansible_facts"] = {fact: plan}
        return result
