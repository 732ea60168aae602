# -*- coding: utf-8 -*-
"""The mm2_smoke role copies to the smoke host exactly the collection's module_utils the lag exporter
imports (``__mm2_smoke_lag_exporter_files`` in roles/mm2_smoke/vars/main.yml): what a fresh Python
loads for smoke/mm2_smoke/lag_exporter.py's imports of the collection, nothing more or less.
That the copy works on a host: Molecule default (tests/integration/default/test_monitoring.py)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import yaml

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
    with open(os.path.join(REPO, "roles", "mm2_smoke", "vars", "main.yml")) as fh:
        listed = yaml.safe_load(fh)["__mm2_smoke_lag_exporter_files"]
    wanted = exporter_imports()
    assert PREFIX + "mm2.lag_reader" in wanted
    assert listed == loaded_files(wanted)
