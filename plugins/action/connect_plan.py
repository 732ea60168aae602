# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Action for kafkaops.mirrormaker.connect_plan: one Connect worker's plan, built once on the controller."""

from __future__ import annotations

from ansible.plugins.action import ActionBase
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import secrets
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import plain
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import connect as mm2_connect

# The options of plugins/modules/connect_plan.py, as Ansible checks them (required, unknown, types).
ARGUMENT_SPEC = dict(
    clusters=dict(type="list", elements="dict", required=True),
    flows=dict(type="list", elements="dict", required=True),
    properties=dict(type="dict", required=True),
    options=dict(type="dict", required=True),
    source=dict(type="str", required=True),
    target=dict(type="str", required=True),
    settings=dict(type="dict", required=True),
    fact=dict(type="str", default="__connect_plan"),
)
# mm2_connect.plan's arguments, in its order.
INPUTS = tuple(key for key in ARGUMENT_SPEC if key != "fact")


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]
        plan = plain(mm2_connect.plan(*(args[key] for key in INPUTS)))
        result["changed"] = False
        given = [args["clusters"], args["flows"], args["properties"]] + [
            args["settings"].get(key) for key in ("worker_defaults", "worker_properties", "connector_properties")]
        if plan["errors"]:
            # The messages are shown, each secret value of the input masked in them.
            values = secrets.secret_values(given)
            result.update(failed=True, msg=[secrets.scrub(error, values) for error in plan["errors"]])
            return result
        result["ansible_facts"] = {args["fact"]: plan}
        if plan["warnings"]:
            result["warnings"] = list(plan["warnings"])
        # The plan carries the clusters' client settings and the connectors' secrets for the files;
        # nothing of it is shown when the input holds a secret.
        if secrets.has_secrets(given):
            result["_ansible_no_log"] = True
        return result
