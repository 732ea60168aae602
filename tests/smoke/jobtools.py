"""Helpers for the smoke job's tests: job configs for the local lab, running the job in-process."""

import json
import os
import sys

import harness

sys.path.insert(0, harness.SMOKE_DIR)

MM2_TOPICS = ["mm2-smoke.*"]
MM2_FLOWS = [
    {"source": "A", "target": "B", "topics": MM2_TOPICS, "sync_group_offsets": True},
    {"source": "B", "target": "A", "topics": MM2_TOPICS},
]
JARS_DIR = os.path.join(harness.REPO, ".cache", "spark-jars")


def make_config(lab, tmp_path, flows, checks=None, run_id=None, name="config.json"):
    """Write a job config (format of smoke/README.md) for ``flows`` in role-variable shape."""
    doc = lab.job_config(flows, {"topics": ["mm2-smoke"], "records": 60, "partitions": 3, "refresh_interval_s": 5,
                                 "timeouts": {"markers": 60, "offsets": 60, "configs": 60, "new_topic": 45,
                                              "heartbeats": 30}})
    for key, val in (checks or {}).items():
        if isinstance(val, dict) and isinstance(doc["checks"].get(key), dict):
            doc["checks"][key].update(val)
        else:
            doc["checks"][key] = val
    if run_id:
        doc["run_id"] = run_id
    path = tmp_path / name
    path.write_text(json.dumps(doc, indent=2, default=str))
    return str(path)


def run_job(config_path, tmp_path, mode="smoke", master="local[2]"):
    """Run the job in-process (shares one Spark session across tests); returns the report."""
    from mm2_smoke import cli
    args = cli.parse_args(["--config", config_path, "--mode", mode, "--master", master,
                           "--jars-dir", JARS_DIR, "--report-dir", str(tmp_path / "report"), "--quiet"])
    doc = cli.run(args)
    sys.stderr.write(_summary(doc) + "\n")
    return doc


def _summary(doc):
    from mm2_smoke import report
    return report.summary_text(doc)


def messages(doc, check=None, status=None):
    out = []
    for c in doc["checks"]:
        if (check is None or c["check"] == check) and (status is None or c["status"] == status):
            out.extend(c["messages"])
    return out


def statuses(doc):
    return {(c["check"], c["flow"], c.get("topic")): c["status"] for c in doc["checks"]}


def spark_ready():
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return False
    return os.path.isdir(JARS_DIR) and any(f.startswith("spark-sql-kafka-0-10") for f in os.listdir(JARS_DIR))
