"""The mm2_smoke role through playbooks/smoke.yml, on this machine, against the session's real MM2.

The inventory describes the lab brokers with the mirrormaker role's variables; the role renders the
job's configuration from them, runs the job, fetches the report and judges it. Runs after
test_mm2.py (which stops MM2 last), so the first test starts MM2 again.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml

import harness
from jobtools import JARS_DIR, MM2_FLOWS

PLAYBOOK = os.path.join(harness.REPO, "playbooks", "smoke.yml")


@pytest.fixture(scope="module")
def running_mm2(mm2):
    if mm2.mm2 is None or mm2.mm2.poll() is not None:
        mm2.start_mm2(MM2_FLOWS, wait_for=("B", "heartbeats"))
    return mm2


def collections_path():
    installed = os.path.join(harness.REPO, ".cache", "installed-collection")
    # The built collection when test.sh made one (what users install), else the working tree.
    if os.path.isdir(os.path.join(installed, "ansible_collections", "kafkaops", "mirrormaker")):
        return installed
    return os.path.join(harness.REPO, ".collections")


def write_inventory(lab, tmp_path, **extra):
    host_vars = {
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
        "ansible_become": False,
        "mirrormaker_clusters": [{"alias": n, "bootstrap_servers": [lab.bootstrap(n)], "broker_count": 1}
                                 for n in sorted(lab.brokers)],
        "mirrormaker_flows": MM2_FLOWS,
        "mirrormaker_properties": dict(harness.HARNESS_GLOBALS, **harness.FAST_INTERVALS),
        "mm2_smoke_python": sys.executable,
        "mm2_smoke_jars_src": JARS_DIR,
        "mm2_smoke_install_dir": str(tmp_path / "install"),
        "mm2_smoke_report_dir": str(tmp_path / "reports"),
        "mm2_smoke_fetch_dir": str(tmp_path / "fetched"),
        # on this machine the job runs as the test's own user (no system user is created here);
        # Molecule checks the unprivileged user on real hosts
        "mm2_smoke_user": "",
        "mm2_smoke_records": 40,
        "mm2_smoke_timeouts": {"markers": 60, "offsets": 60, "configs": 60, "new_topic": 45, "heartbeats": 30},
    }
    host_vars.update(extra)
    inventory = {"all": {"children": {"mirrormakers": {"hosts": {"smoke-controller": host_vars}}}}}
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump(inventory))
    return str(path)


def play(inventory, *args):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path(),
               ANSIBLE_CONFIG=os.path.join(harness.REPO, "ansible.cfg"), ANSIBLE_FORCE_COLOR="0")
    playbook = shutil.which("ansible-playbook", path=os.path.dirname(sys.executable)) or "ansible-playbook"
    proc = subprocess.run([playbook, "-i", inventory, PLAYBOOK, *args], capture_output=True, text=True,
                          timeout=900, env=env, check=False)
    sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-2000:])
    return proc


def reports(tmp_path, mode):
    return sorted((tmp_path / "fetched").glob("mm2-smoke-%s-*.json" % mode)) if (tmp_path / "fetched").exists() else []


def test_dry_run_renders_nothing_and_runs_no_job(running_mm2, tmp_path):
    proc = play(write_inventory(running_mm2, tmp_path), "--check")
    assert proc.returncode == 0, proc.stdout
    assert not (tmp_path / "install" / "mm2-smoke.json").exists()
    assert reports(tmp_path, "smoke") == []


def test_smoke_then_reconcile_pass_and_reports_reach_the_controller(running_mm2, tmp_path):
    inventory = write_inventory(running_mm2, tmp_path)
    proc = play(inventory)
    assert proc.returncode == 0, proc.stdout
    config = json.loads((tmp_path / "install" / "mm2-smoke.json").read_text())
    # The job's configuration comes from the mirrormaker variables through the flow model.
    assert [f["name"] for f in config["flows"]] == ["A->B", "B->A"]
    assert config["clusters"]["A"]["bootstrap_servers"] == running_mm2.bootstrap("A")
    assert config["checks"]["refresh_interval_s"] == 5
    assert oct(os.stat(tmp_path / "install" / "mm2-smoke.json").st_mode & 0o777) == "0o640"
    (report,) = reports(tmp_path, "smoke")
    doc = json.loads(report.read_text())
    assert doc["verdict"] == "pass" and doc["exit_code"] == 0
    assert {c["flow"] for c in doc["checks"]} == {"A->B", "B->A"}
    assert doc["spark"]["master"] == "local[2]"  # smoke mode ran on Spark
    for kind in ("png", "html", "xml"):
        assert report.with_suffix("." + kind).stat().st_size > 100
    # the summary names the fetched copies, not paths on the smoke host
    assert "report on the controller: %s" % (tmp_path / "fetched" / report.name) in proc.stdout
    assert "report: %s" % (tmp_path / "reports") not in proc.stdout

    proc = play(inventory, "-e", "mm2_smoke_mode=reconcile")
    assert proc.returncode == 0, proc.stdout
    (report,) = reports(tmp_path, "reconcile")
    doc = json.loads(report.read_text())
    assert doc["verdict"] == "pass", doc["checks"]
    assert sorted(os.listdir(tmp_path / "install" / "jars")) == sorted(os.listdir(JARS_DIR))


def test_bad_input_is_refused_before_the_host_changes(running_mm2, tmp_path):
    inventory = write_inventory(running_mm2, tmp_path, mm2_smoke_mode="audit", mm2_smoke_records=0)
    proc = play(inventory)
    assert proc.returncode != 0
    # One message per fault, each naming its variable.
    assert "mm2_smoke_mode: audit is not smoke or reconcile" in proc.stdout
    assert "mm2_smoke_records: 0 is not a positive number" in proc.stdout
    assert not (tmp_path / "install").exists()
    inventory = write_inventory(running_mm2, tmp_path, mm2_smoke_jars_src=str(tmp_path), mm2_smoke_user="root")
    proc = play(inventory)
    assert proc.returncode != 0
    assert "mm2_smoke_jars_src: %s has no spark-sql-kafka-0-10_*.jar" % tmp_path in proc.stdout
    assert "mm2_smoke_user: the job runs unprivileged; root is refused" in proc.stdout
    assert not (tmp_path / "install").exists()
    # A bad flow is refused by the preflight play that smoke.yml starts with, before the smoke role.
    inventory = write_inventory(running_mm2, tmp_path, mirrormaker_flows=[{"source": "A", "target": "C"}])
    proc = play(inventory)
    assert proc.returncode != 0
    assert "mirrormaker_flows[0].target: unknown cluster alias 'C'" in proc.stdout
    assert not (tmp_path / "install").exists()


def test_play_fails_with_the_summary_when_mm2_is_stopped(running_mm2, tmp_path):
    running_mm2.stop_mm2()
    proc = play(write_inventory(running_mm2, tmp_path, mm2_smoke_checks=["markers"],
                                mm2_smoke_timeouts={"markers": 15}))
    assert proc.returncode == 2, proc.stdout
    assert "mm2_smoke smoke FAILED (exit 1)" in proc.stdout
    assert "markers missing after 15s" in proc.stdout
    (report,) = reports(tmp_path, "smoke")
    assert json.loads(report.read_text())["verdict"] == "fail"
