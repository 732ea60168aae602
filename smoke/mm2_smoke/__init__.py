"""MirrorMaker 2 smoke job and reconcile audit (see smoke/README.md).

Run with ``python -m mm2_smoke --config FILE`` (``smoke/`` on PYTHONPATH) or
``spark-submit smoke/mm2_smoke/__main__.py --config FILE``.
"""

__version__ = "0.1.0"
REPORT_VERSION = 1
EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_ERROR = 2
