# -*- coding: utf-8 -*-
"""Make the repository importable as ansible_collections.kafkaops.mirrormaker.

Creates <repo>/.collections/ansible_collections/kafkaops/mirrormaker -> <repo> (a
symlink, gitignored) when missing and puts <repo>/.collections first on sys.path
(tests/lib/repo_paths.py, which the live tests use too).
Also offers a ``java_load`` fixture: java.util.Properties.load via tests/unit/java.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib")
if LIB not in sys.path:
    sys.path.insert(0, LIB)
from repo_paths import REPO, use_collection  # noqa: E402 pylint: disable=wrong-import-position

use_collection()

JAVA_DUMP = os.path.join(REPO, "tests", "unit", "java", "PropsDump.java")


def _java_load(paths):
    """Load each file with java.util.Properties.load; returns a list of dicts."""
    java = shutil.which("java")
    if not java:
        pytest.skip("java not installed")
    out = subprocess.run([java, JAVA_DUMP] + list(paths), check=True, capture_output=True,
                         text=True, timeout=120).stdout
    result = []
    for line in out.splitlines():
        if line.startswith("== "):
            result.append({})
        elif line:
            key, value = json.loads(line)
            result[-1][key] = value
    return result


@pytest.fixture(scope="session")
def java_load():
    return _java_load
