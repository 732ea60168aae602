# -*- coding: utf-8 -*-
"""A collection module run as Ansible runs it: JSON arguments in a file, a fresh Python process,
the JSON result out."""

from __future__ import annotations

import json
import os
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))


def run(module, tmp_path, check=False, **params):
    """The result of plugins/modules/<module>.py with ``params``, in check mode if asked, with diff."""
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": dict(params, _ansible_check_mode=check, _ansible_diff=True)}))
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, ".collections"))
    path = os.path.join(REPO, "plugins", "modules", module + ".py")
    proc = subprocess.run([sys.executable, path, str(args)], capture_output=True, text=True, check=False, env=env)
    return json.loads(proc.stdout)
