# -*- coding: utf-8 -*-
"""The mm2_smoke role's zip for the smoke host (module_utils/mm2/smoke_plan.py zip_members) holds exactly
the collection's module_utils the lag exporter imports (``LAG_READER_FILES``): what a fresh Python
loads for smoke/mm2_smoke/lag_exporter.py's imports of the collection, nothing more or less. And a
Python that has only that zip of the repository runs the job and imports the exporter from it.
That the zip works on a host: Molecule default (tests/integration/default/test_monitoring.py) and
tests/live/test_role.py."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import bundle
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import smoke_plan
from repo_paths import COLLECTIONS, REPO, SMOKE_DIR

PREFIX = "ansible_collections.kafkaops.mirrormaker.plugins.module_utils."


def exporter_imports():
    """The collection's modules lag_exporter.py imports, from its source."""
    with open(os.path.join(SMOKE_DIR, "mm2_smoke", "lag_exporter.py")) as fh:
        tree = ast.parse(fh.read())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module.startswith(PREFIX.rstrip(".")):
            out.extend("%s.%s" % (node.module, alias.name) for alias in node.names)
    return sorted(out)


def loaded_files(modules):
    """module_utils files (relative paths) a fresh interpreter has loaded after importing ``modules``."""
    code = ("import importlib, json, sys\n"
            "for name in sys.argv[1:]: importlib.import_module(name)\n"
            "print(json.dumps(sorted(m.__file__ for n, m in sys.modules.items() if n.startswith(%r) and m.__file__)))"
            % PREFIX)
    out = subprocess.run([sys.executable, "-c", code] + modules, check=True, capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=COLLECTIONS)).stdout
    root = os.path.join(COLLECTIONS, "ansible_collections", "kafkaops", "mirrormaker", "plugins", "module_utils")
    return sorted(os.path.relpath(path, root) for path in json.loads(out))


def test_the_role_copies_what_the_exporter_imports():
    wanted = exporter_imports()
    assert PREFIX + "mm2.lag_reader" in wanted
    assert list(smoke_plan.LAG_READER_FILES) == loaded_files(wanted)


def test_the_job_and_the_exporter_run_from_the_zip_alone(tmp_path):
    zip_path = tmp_path / "mm2_smoke.zip"
    zip_path.write_bytes(bundle.zip_bytes(smoke_plan.zip_members(
        SMOKE_DIR, os.path.join(REPO, "plugins", "module_utils"))))
    code = ("import json, pkgutil, sys\n"
            "import mm2_smoke.lag_exporter\n"
            "from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import lag_reader\n"
            "template = pkgutil.get_data('mm2_smoke', 'templates/report.html.j2')\n"
            "print(json.dumps([mm2_smoke.lag_exporter.__file__, lag_reader.__file__, len(template)]))")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PYTHONPATH"] = str(zip_path)
    run = dict(env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
    exporter, reader, template = json.loads(subprocess.run([sys.executable, "-c", code], check=True, **run).stdout)
    assert exporter.startswith(str(zip_path) + os.sep) and reader.startswith(str(zip_path) + os.sep)
    assert template > 0
    usage = subprocess.run([sys.executable, "-m", "mm2_smoke", "--help"], check=True, **run).stdout
    assert usage.startswith("usage: mm2_smoke")
