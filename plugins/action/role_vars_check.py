# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Action for kafkaops.mirrormaker.role_vars_check: runs on the controller, touches no host."""

from __future__ import annotations

import os

import yaml

from ansible.plugins.action import ActionBase
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import argspec
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import broker_rules, install_rules
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import connect_rules, mirrormaker_rules
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.pulse import rules as pulse_rules


def _pulse_context(task_vars):
    # Pulse reads every MirrorMaker host's JMX settings, as their own preflight recorded them.
    groups, hostvars = task_vars.get("groups") or {}, task_vars.get("hostvars") or {}
    mirrormakers = list(groups.get("mirrormakers") or [])
    jmx = {host: hostvars[host].get("__mirrormaker_jmx") for host in mirrormakers if host in hostvars}
    return {"hosts": list(groups.get("all") or []), "mirrormakers": mirrormakers,
            "jmx": {host: settings for host, settings in jmx.items() if settings}}


# Each role's own refusals, run once its variables have the types its argument spec gives:
# faults(values, context).
ROLE_RULES = {
    "connect": connect_rules.faults,
    "kafka_broker": broker_rules.faults,
    "kafka_common": install_rules.faults,
    "mirrormaker": mirrormaker_rules.faults,
    "pulse": pulse_rules.faults,
}
# The context a role's rules read from the play itself rather than from the task.
PLAY_CONTEXT = {"pulse": _pulse_context}
# The options of plugins/modules/role_vars_check.py, as Ansible checks them (required, unknown, types).
ARGUMENT_SPEC = dict(
    role_path=dict(type="path", required=True),
    entry_point=dict(type="str", default="main"),
    values=dict(type="dict", required=True),
    context=dict(type="dict", default={}),
)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]
        role_path, values, entry_point = args["role_path"], args["values"], args["entry_point"]
        spec_file = os.path.join(str(role_path), "meta", "argument_specs.yml")
        try:
            with open(spec_file, encoding="utf-8") as handle:
                options = yaml.safe_load(handle)["argument_specs"][entry_point]["options"]
        except (OSError, KeyError, TypeError, yaml.YAMLError) as exc:
            return dict(result, failed=True, msg="role_path=%s: cannot read the %s entry point of %s: %s"
                        % (role_path, entry_point, spec_file, exc))
        role = os.path.basename(os.path.normpath(str(role_path)))
        prefix = role + "_"
        errors = argspec.validate(options, values, prefix=prefix)
        if not errors and entry_point == "main" and role in ROLE_RULES:
            context = dict(args["context"])
            if role in PLAY_CONTEXT:
                context.update(PLAY_CONTEXT[role](task_vars or {}))
            errors = ROLE_RULES[role](values, context)
        result.update(changed=False, errors=errors, checked=sorted(set(values) & set(options)))
        if errors:
            result.update(failed=True, msg="%d fault(s) in the input of role %s:\n%s"
                          % (len(errors), prefix[:-1], "\n".join("- " + e for e in errors)))
        return result
