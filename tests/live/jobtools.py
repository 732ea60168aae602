"""Helpers for the live tests: job configs for the local lab, running the smoke job in-process,
running one of the collection's modules as a user runs it (``ansible localhost -m``). The report
files' checks, which the job's unit tests use too, are in tests/lib/report_files.py."""

import json
import os
import shutil
import subprocess
import sys

import harness
from repo_paths import COLLECTIONS, use_collection, use_smoke_job  # harness put tests/lib on sys.path

use_smoke_job()

MM2_TOPICS = ["mm2-smoke.*"]
MM2_FLOWS = [
    {"source": "A", "target": "B", "topics": MM2_TOPICS, "sync_group_offsets": True},
    {"source": "B", "target": "A", "topics": MM2_TOPICS},
]
JARS_DIR = os.path.join(harness.REPO, ".cache", "spark-jars")


def start_session_mm2(lab):
    """The session's MirrorMaker 2 (MM2_FLOWS), started by the ``mm2`` fixture and again by every
    test that stopped it: up once its heartbeats reach B."""
    return lab.start_mm2(MM2_FLOWS, wait_for=("B", "heartbeats"))


def run_ansible_module(module, args, *extra, python=sys.executable):
    """``ansible localhost -m <module> -a <json>`` with the collection found through <repo>/.collections
    and ``python`` (this venv's by default) as ansible_python_interpreter; returns (completed process,
    the host's result as the ansible.posix.json callback gives it)."""
    use_collection()
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_CONFIG=os.path.join(harness.REPO, "ansible.cfg"),
               ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_NOCOLOR="1")
    ansible = shutil.which("ansible", path=os.path.dirname(sys.executable)) or "ansible"
    proc = subprocess.run([ansible, "localhost", "-i", "localhost,", "-c", "local",
                           "-e", json.dumps({"ansible_python_interpreter": python}),
                           "-m", module, "-a", json.dumps(args), *extra],
                          capture_output=True, text=True, timeout=300, env=env, check=False)
    sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-2000:])
    result = json.loads(proc.stdout)["plays"][0]["tasks"][0]["hosts"]["localhost"]
    return proc, result


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
    """Run the job in-process (shares one Spark session across tests); returns the report. The
    session's JVM is made once, by the first test, so its JIT is the same in both modes: full."""
    from mm2_smoke import cli
    args = cli.parse_args(["--config", config_path, "--mode", mode, "--master", master, "--driver-jit", "full",
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
