"""The mm2_smoke role through playbooks/smoke.yml, on this machine, against the session's real MM2.

The inventory describes the lab brokers with the mirrormaker role's variables; the role renders the
job's configuration from them, runs the job, fetches the report and judges it. Runs after
test_mm2.py (which stops MM2 last), so the first test starts MM2 again.
"""

import json
import os
import shutil
import sys
import time

import yaml

import harness
import recap
from jobtools import JARS_DIR, MM2_FLOWS

PLAYBOOK = os.path.join(harness.REPO, "playbooks", "smoke.yml")


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


def play(inventory, *args, env=None):
    return harness.ansible_playbook(inventory, PLAYBOOK, *args, env=env)


def changed(proc):
    """The play recap's changed count of the smoke host."""
    return recap.changed(proc.stdout)["smoke-controller"]


def host_env():
    """This machine's environment as a smoke host's: the job's venv is not on PATH (only
    mm2_smoke_python has its packages), no Hadoop configuration, Spark bound to 127.0.0.1."""
    venv_bin = os.path.dirname(os.path.abspath(sys.executable))
    env = {k: v for k, v in os.environ.items() if k not in ("HADOOP_CONF_DIR", "YARN_CONF_DIR", "SPARK_HOME")}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if os.path.abspath(p) != venv_bin)
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    return env


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
    # the driver JVM the job started, as it ran: smoke mode's JIT stops at C1
    assert doc["spark"]["driver_jit"] == "c1"
    for kind in ("png", "html", "xml"):
        assert report.with_suffix("." + kind).stat().st_size > 100
    # the lag the role read with mm2_lag_info before the job, from each flow's herder offsets topic
    assert doc["lag_measured"]["error"] is None, doc["lag_measured"]
    assert [s["offsets"] for s in doc["lag_measured"]["sources"]] == [
        "topic mm2-offsets.A.internal on B (%s)" % running_mm2.bootstrap("B"),
        "topic mm2-offsets.B.internal on A (%s)" % running_mm2.bootstrap("A")]
    assert {r["flow"] for r in doc["lag"]} <= {"A->B", "B->A"}
    assert all(r["records"] >= 0 and r["end"] >= r["next"] for r in doc["lag"]), doc["lag"]
    assert "lag " in proc.stdout and "before the job (at " in proc.stdout
    print("LAG in the smoke report: %s %s" % (doc["lag_by_flow"], doc["lag_measured"]["at"]))
    # the summary names the fetched copies, not paths on the smoke host
    assert "report on the controller: %s" % (tmp_path / "fetched" / report.name) in proc.stdout
    assert "report: %s" % (tmp_path / "reports") not in proc.stdout

    proc = play(inventory, "-e", "mm2_smoke_mode=reconcile")
    assert proc.returncode == 0, proc.stdout
    (report,) = reports(tmp_path, "reconcile")
    doc = json.loads(report.read_text())
    assert doc["verdict"] == "pass", doc["checks"]
    assert doc["spark"]["driver_jit"] == "full"
    jars = tmp_path / "install" / "jars"
    assert sorted(os.listdir(jars)) == sorted(os.listdir(JARS_DIR) + [".kafkaops-manifest"])

    # The jars go over as a whole when the host's manifest of them differs: a jar removed by hand is
    # not noticed, and with the manifest removed too the directory is copied again; then nothing
    # changes. The job itself is one zip.
    install = ("--skip-tags", "mm2_smoke_run", "-e", "mm2_smoke_mode=reconcile")
    missing = sorted(os.listdir(JARS_DIR))[0]
    (jars / missing).unlink()
    proc = play(inventory, *install)
    assert proc.returncode == 0 and not (jars / missing).exists(), proc.stdout
    assert changed(proc) == 0, proc.stdout
    (jars / ".kafkaops-manifest").unlink()
    proc = play(inventory, *install)
    assert proc.returncode == 0 and (jars / missing).is_file(), proc.stdout
    assert changed(proc) == 2, proc.stdout  # the directory and its manifest
    proc = play(inventory, *install)
    assert changed(proc) == 0, proc.stdout


def test_bad_input_is_refused_before_the_host_changes(running_mm2, tmp_path):
    inventory = write_inventory(running_mm2, tmp_path, mm2_smoke_mode="audit", mm2_smoke_records=0)
    proc = play(inventory)
    assert proc.returncode != 0
    # One message per fault, each naming its variable.
    assert "mm2_smoke_mode: audit is not smoke or reconcile" in proc.stdout
    assert "mm2_smoke_records: 0 is not a positive number" in proc.stdout
    assert not (tmp_path / "install").exists()
    # Spark's Kafka source jar left out of an otherwise complete jar directory
    jars = tmp_path / "jars-without-the-kafka-source"
    jars.mkdir()
    for name in os.listdir(JARS_DIR):
        if name.endswith(".jar") and not name.startswith("spark-sql-kafka-0-10"):
            shutil.copy(os.path.join(JARS_DIR, name), str(jars))
    assert len(os.listdir(jars)) == 3
    inventory = write_inventory(running_mm2, tmp_path, mm2_smoke_jars_src=str(jars), mm2_smoke_user="root",
                                mm2_smoke_spark_master="spark://spark-1:7077,spark-2")
    proc = play(inventory)
    assert proc.returncode != 0
    assert "mm2_smoke_jars_src: %s has no spark-sql-kafka-0-10_*.jar" % jars in proc.stdout
    assert "mm2_smoke_user: the job runs unprivileged; root is refused" in proc.stdout
    assert ("mm2_smoke_spark_master: spark://spark-1:7077,spark-2 is not spark://host:port[,host:port...] (a "
            "standalone master and its standbys; spark-2 is not host:port)") in proc.stdout
    assert not (tmp_path / "install").exists()
    # A bad flow is refused by the preflight play that smoke.yml starts with, before the smoke role.
    inventory = write_inventory(running_mm2, tmp_path, mirrormaker_flows=[{"source": "A", "target": "C"}])
    proc = play(inventory)
    assert proc.returncode != 0
    assert "mirrormaker_flows[0].target: unknown cluster alias 'C'" in proc.stdout
    assert not (tmp_path / "install").exists()


def test_smoke_runs_on_a_standalone_cluster_through_spark_submit(running_mm2, spark_cluster, tmp_path):
    """A spark:// master: the role's spark-submit with its --py-files zip, --jars and
    mm2_smoke_spark_submit_args, from a host whose PATH does not lead to the job's venv."""
    known = set(spark_cluster.finished_apps("mm2-smoke-smoke"))
    inventory = write_inventory(running_mm2, tmp_path, mm2_smoke_spark_master=spark_cluster.url,
                                mm2_smoke_spark_submit_args=["--conf", "spark.executor.memory=512m",
                                                             "--conf", "spark.cores.max=1"])
    proc = play(inventory, env=host_env())
    assert proc.returncode == 0, proc.stdout
    (report,) = reports(tmp_path, "smoke")
    doc = json.loads(report.read_text())
    assert doc["verdict"] == "pass" and doc["spark"]["master"] == spark_cluster.url
    assert (tmp_path / "install" / "mm2_smoke.zip").is_file()
    (app,) = spark_cluster.wait_finished("mm2-smoke-smoke", known)
    assert app["memoryperexecutor"] == 512  # mm2_smoke_spark_submit_args reached spark-submit
    executors = spark_cluster.executors(app["id"])
    assert executors, spark_cluster.worker_state()
    # the role's --jars reached the executor, which ran the job's tasks
    got = sorted(f for f in os.listdir(executors[0]["dir"]) if f.endswith(".jar"))
    assert got == sorted(f for f in os.listdir(tmp_path / "install" / "jars") if f.endswith(".jar")), got
    with open(os.path.join(executors[0]["dir"], "stderr"), errors="replace") as fh:
        assert "Running task" in fh.read()


def test_unreachable_standalone_master_fails_in_bounded_time(running_mm2, spark_cluster, tmp_path):
    """spark-submit would retry a master that does not answer for about a minute; the role asks
    first, within mm2_smoke_spark_master_timeout per address, before the host changes."""
    closed = ["127.0.0.1:%d" % port for port in harness.free_ports(2)]
    master = "spark://" + ",".join(closed)
    inventory = write_inventory(running_mm2, tmp_path, mm2_smoke_spark_master=master,
                                mm2_smoke_spark_master_timeout=5)
    t0 = time.time()
    proc = play(inventory)
    elapsed = time.time() - t0
    sys.stderr.write("unreachable standalone master: play failed after %.1fs\n" % elapsed)
    assert proc.returncode == 2, proc.stdout
    assert ("mm2_smoke_spark_master: %s: no master answered at %s from smoke-controller within 5s "
            "(mm2_smoke_spark_master_timeout)" % (master, ", ".join(closed))) in proc.stdout
    assert not (tmp_path / "install").exists()
    # both addresses waited for their 5 s, and the whole play stays well under spark-submit's minute
    assert 10 <= elapsed < 45
    # a standby that does not answer is no fault while the live master does, as for spark-submit;
    # a dry run asks too
    live = spark_cluster.url[len("spark://"):]
    inventory = write_inventory(running_mm2, tmp_path, mm2_smoke_spark_master="spark://%s,%s" % (closed[0], live),
                                mm2_smoke_spark_master_timeout=5)
    proc = play(inventory, "--check", "--tags", "mm2_smoke_preflight")
    assert proc.returncode == 0, proc.stdout
    assert "Connect to the standalone Spark master from the smoke host" in proc.stdout
    assert not (tmp_path / "install").exists()


def test_yarn_master_that_cannot_start_names_the_master(running_mm2, tmp_path):
    """spark-submit refuses yarn without HADOOP_CONF_DIR and exits 1 before the job runs: no report,
    so not 'a check failed' but what spark-submit said, naming mm2_smoke_spark_master. Given one
    through mm2_smoke_spark_env, spark-submit starts the job, whose error names the master."""
    proc = play(write_inventory(running_mm2, tmp_path, mm2_smoke_spark_master="yarn"), env=host_env())
    assert proc.returncode == 2, proc.stdout
    assert ("mm2_smoke smoke could not run: spark-submit --master yarn (mm2_smoke_spark_master) exited 1 before "
            "the job wrote a report: ") in proc.stdout
    assert "When running with master 'yarn' either HADOOP_CONF_DIR or YARN_CONF_DIR must be set" in proc.stdout
    assert "FAILED (exit 1)" not in proc.stdout
    assert reports(tmp_path, "smoke") == []

    rm = harness.unreachable_yarn(str(tmp_path / "hadoop-conf"))
    inventory = write_inventory(running_mm2, tmp_path, mm2_smoke_spark_master="yarn", mm2_smoke_mode="reconcile",
                                mm2_smoke_spark_env={"HADOOP_CONF_DIR": str(tmp_path / "hadoop-conf")},
                                mm2_smoke_spark_submit_args=harness.YARN_GIVE_UP_SOON)
    proc = play(inventory, env=host_env())
    assert proc.returncode == 2, proc.stdout
    assert "mm2_smoke reconcile could not run (exit 2)" in proc.stdout
    assert "Spark master yarn: no Spark session: java.net.ConnectException: " in proc.stdout
    (report,) = reports(tmp_path, "reconcile")
    (error,) = json.loads(report.read_text())["errors"]
    assert rm.split(":")[1] in error, error


def test_play_fails_with_the_summary_when_mm2_is_stopped(running_mm2, tmp_path):
    running_mm2.stop_mm2()
    proc = play(write_inventory(running_mm2, tmp_path, mm2_smoke_checks=["markers"],
                                mm2_smoke_timeouts={"markers": 15}))
    assert proc.returncode == 2, proc.stdout
    assert "mm2_smoke smoke FAILED (exit 1)" in proc.stdout
    assert "markers missing after 15s" in proc.stdout
    (report,) = reports(tmp_path, "smoke")
    assert json.loads(report.read_text())["verdict"] == "fail"
