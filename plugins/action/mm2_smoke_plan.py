# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Action for kafkaops.mirrormaker.mm2_smoke_plan: the mm2_smoke role's refusals and plan, on the controller."""

from __future__ import annotations

from ansible.plugins.action import ActionBase
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import smoke_plan as mm2_smoke_plan

INPUTS = ("mode", "checks", "topics", "records", "payload_bytes", "partitions", "timeouts", "reconcile_topics",
          "extra_checks", "jars_src", "wheels_src", "spark_master", "spark_master_timeout", "user", "jaas",
          "krb5_conf")


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = dict(self._task.args)
        missing = [key for key in INPUTS + ("model",) if key not in args]
        unknown = sorted(set(args) - set(INPUTS) - {"model", "mirrormaker_keytab_src", "mirrormaker_config_dir"})
        if missing or unknown:
            result.update(failed=True, msg="mm2_smoke_plan: %s" % "; ".join(
                ["%s: required" % key for key in missing] + ["%s: not an option" % key for key in unknown]))
            return result
        inputs = {key: args[key] for key in INPUTS}
        plan, errors = mm2_smoke_plan.plan(inputs, args["model"], args.get("mirrormaker_keytab_src") or "",
                                           args.get("mirrormaker_config_dir") or "")
        result["changed"] = False
        if errors:
            # One message per fault, as a list, each naming its variable; no plan (and no secret) with them.
            result.update(failed=True, msg=errors)
            return result
        result["plan"] = plan
        # The plan carries the clusters' real client settings for the job's file (every field of the
        # model's clients, has_secrets looks at all of them); nothing of it is shown.
        if plan["has_secrets"]:
            result["_ansible_no_log"] = True
        return result
