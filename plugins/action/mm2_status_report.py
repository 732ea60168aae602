# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Action for kafkaops.mirrormaker.mm2_status_report: the status report's files, on the controller."""

from __future__ import annotations

import datetime
import json
import os

from ansible.plugins.action import ActionBase
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import dashboard

ARGUMENT_SPEC = dict(
    status=dict(type="dict", required=True),
    dest=dict(type="path", required=True),
    name=dict(type="str", default="mm2-status"),
)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]
        status = dict(args["status"])
        status.setdefault("generated_at", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
        dest = args["dest"]
        files = dict((kind, os.path.join(dest, "%s.%s" % (args["name"], kind))) for kind in ("json", "png", "html"))
        result.update(files=files, changed=True)
        if self._task.check_mode:
            return result
        if not os.path.isdir(dest):
            result.update(failed=True, msg="dest: %s is not a directory on the controller" % dest)
            return result
        try:
            import matplotlib  # noqa: F401 pylint: disable=unused-import
        except ImportError:
            result.update(failed=True, msg="mm2_status_report needs the Python package matplotlib on the controller "
                                           "(pip install matplotlib; scripts/bootstrap.sh installs it)")
            return result
        with open(files["json"], "w", encoding="utf-8") as fh:
            json.dump(status, fh, indent=4, sort_keys=True)
            fh.write("\n")
        result["panels"] = dashboard.write_png(status, files["png"])
        with open(files["html"], "w", encoding="utf-8") as fh:
            fh.write(dashboard.html_page(status, os.path.basename(files["png"]), os.path.basename(files["json"])))
        return result
