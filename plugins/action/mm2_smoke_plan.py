# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Action for kafkaops.mirrormaker.mm2_smoke_plan: the mm2_smoke role's refusals and plan, on the controller."""

from __future__ import annotations

import os

from ansible import constants as C
from ansible.plugins.action import ActionBase
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import bundle
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import smoke_plan as mm2_smoke_plan

# The collection's root: the job's package is in smoke/, the lag reader in plugins/module_utils/.
COLLECTION = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The options of plugins/modules/mm2_smoke_plan.py, as Ansible checks them (required, unknown, types).
ARGUMENT_SPEC = dict(
    mode=dict(type="str", required=True),
    checks=dict(type="list", elements="str", required=True),
    topics=dict(type="raw", required=True),
    records=dict(type="raw", required=True),
    payload_bytes=dict(type="raw", required=True),
    partitions=dict(type="raw", required=True),
    timeouts=dict(type="dict", required=True),
    reconcile_topics=dict(type="list", elements="str", required=True),
    extra_checks=dict(type="dict", required=True),
    jars_src=dict(type="str", required=True),
    wheels_src=dict(type="str", required=True),
    spark_master=dict(type="str", required=True),
    spark_master_timeout=dict(type="raw", required=True),
    user=dict(type="str", required=True),
    jaas=dict(type="dict", required=True),
    krb5_conf=dict(type="str", required=True),
    lag_exporter_enabled=dict(type="bool", default=False),
    lag_exporter_address=dict(type="str", default="0.0.0.0"),
    lag_exporter_port=dict(type="raw", default=9405),
    lag_exporter_timeout=dict(type="raw", default=8),
    install_dir=dict(type="str", default=""),
    python=dict(type="str", default=""),
    model=dict(type="dict", required=True),
    mirrormaker_keytab_src=dict(type="str", default=""),
    mirrormaker_config_dir=dict(type="str", default=""),
)
# The role's own input (mm2_smoke_* without the prefix), what smoke_plan.plan takes as ``inputs``.
INPUTS = tuple(key for key in ARGUMENT_SPEC if key not in ("model", "mirrormaker_keytab_src", "mirrormaker_config_dir"))


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]
        inputs = {key: args[key] for key in INPUTS}
        plan, errors = mm2_smoke_plan.plan(inputs, args["model"], args["mirrormaker_keytab_src"],
                                           args["mirrormaker_config_dir"])
        result["changed"] = False
        if errors:
            # One message per fault, as a list, each naming its variable; no plan (and no secret) with them.
            result.update(failed=True, msg=errors)
            return result
        plan["zip"] = write_zip()
        result["plan"] = plan
        # The plan carries the clusters' real client settings for the job's file (every field of the
        # model's clients, has_secrets looks at all of them); nothing of it is shown.
        if plan["has_secrets"]:
            result["_ansible_no_log"] = True
        return result


def write_zip():
    """The job's zip (smoke_plan.zip_members) in this run's controller temporary directory; its path.
    Built once per run: the file is named by its members' names, sizes and dates (bundle.stat_key),
    so every host's action after the first finds it and every host's copy task sends the same file."""
    members = mm2_smoke_plan.zip_members(os.path.join(COLLECTION, "smoke"),
                                         os.path.join(COLLECTION, "plugins", "module_utils"))
    path = os.path.join(C.DEFAULT_LOCAL_TMP, "mm2_smoke-%s.zip" % bundle.stat_key(members))
    if not os.path.exists(path):
        # hosts' workers may write it at the same time: each its own file, renamed into place
        tmp = "%s.%d" % (path, os.getpid())
        with open(tmp, "wb") as handle:
            handle.write(bundle.zip_bytes(members))
        os.replace(tmp, path)
    return path
