# -*- coding: utf-8 -*-
"""The smoke job's unit tests (no Kafka, no Spark): the job's package, ``mm2_smoke``
(smoke/mm2_smoke), and tests/lib (report_files, repo_paths) importable, as the live tests have
them. tests/unit/conftest.py puts tests/lib on sys.path too, but pytest does not load it when run
from inside this directory."""

from __future__ import annotations

import os
import sys

LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "lib")
if LIB not in sys.path:
    sys.path.insert(0, LIB)
from repo_paths import use_smoke_job  # noqa: E402 pylint: disable=wrong-import-position

use_smoke_job()
