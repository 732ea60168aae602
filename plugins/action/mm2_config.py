# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Action for kafkaops.mirrormaker.mm2_config: the MirrorMaker 2 flow model, built once per host."""

from __future__ import annotations

from ansible.plugins.action import ActionBase
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import model as mm2_model
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import secrets
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import plain

# The options of plugins/modules/mm2_config.py, as Ansible checks them (required, unknown, types).
ARGUMENT_SPEC = dict(
    clusters=dict(type="list", elements="dict", required=True),
    flows=dict(type="list", elements="dict", required=True),
    properties=dict(type="dict", default={}),
    options=dict(type="dict", default={}),
)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]
        model = mm2_model.load(args["clusters"], args["flows"], args["properties"], args["options"])
        result.update(changed=False, warnings=list(model.warnings))
        scrub = secrets.secret_values([args["clusters"], args["flows"], args["properties"]])
        if model.errors:
            errors = [secrets.scrub(e, scrub) for e in model.errors]
            result.update(failed=True, errors=errors, msg="%d fault(s) in the MirrorMaker 2 input:\n%s"
                          % (len(errors), "\n".join("- " + e for e in errors)))
            return result
        result.update(
            properties=plain(model.properties()),
            flows=plain(model.effective_flows()),
            clients=plain(model.clients()),
            handover_seconds=model.handover_seconds(),
        )
        # The registered model carries the real values for the files; what is shown is censored.
        if scrub:
            result["_ansible_no_log"] = True
        return result
