"""MirrorMaker 2 smoke job and reconcile audit (see smoke/README.md).

Run with ``python -m mm2_smoke --config FILE`` (``smoke/`` on PYTHONPATH) or
``spark-submit smoke/mm2_smoke/__main__.py --config FILE``.
"""

__version__ = "0.1.0"
# 2: latency per flow (latency_ms_by_flow), summary counts, verdict_reason, a run of skips is an
# error, the JUnit XML file.
REPORT_VERSION = 2
EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_ERROR = 2
