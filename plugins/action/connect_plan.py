# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Action for kafkaops.mirrormaker.connect_plan: one Connect worker's plan, built once on the controller."""

from __future__ import annotations

from ansible.plugins.action import ActionBase
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import secrets
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import plain
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import connect as mm2_connect

INPUTS = ("clusters", "flows", "properties", "options", "source", "target", "settings")


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = dict(self._task.args)
        fact = args.pop("fact", "__connect_plan")
        unknown = sorted(set(args) - set(INPUTS))
        missing = [key for key in INPUTS if key not in args]
        if unknown or missing:
            result.update(failed=True, msg="connect_plan: %s" % "; ".join(
                ["%s: required" % key for key in missing] + ["%s: not an option" % key for key in unknown]))
            return result
        plan = plain(mm2_connect.plan(*(args[key] for key in INPUTS)))
        result["changed"] = False
        settings = args["settings"] if isinstance(args["settings"], dict) else {}
        given = [args["clusters"], args["flows"], args["properties"]] + [
            settings.get(key) for key in ("worker_defaults", "worker_properties", "connector_properties")]
        if plan["errors"]:
            # The messages are shown, each secret value of the input masked in them.
            values = secrets.secret_values(given)
            result.update(failed=True, msg=[secrets.scrub(error, values) for error in plan["errors"]])
            return result
        result["ansible_facts"] = {fact: plan}
        # The plan carries the clusters' client settings and the connectors' secrets for the files;
        # nothing of it is shown when the input holds a secret.
        if secrets.has_secrets(given):
            result["_ansible_no_log"] = True
        return result
