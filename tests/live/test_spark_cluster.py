"""The smoke job on a real Spark standalone cluster, against the session's real MirrorMaker 2.

harness.SparkCluster runs a master and one worker on 127.0.0.1 from pyspark's own jars; the job goes
to it through pyspark's spark-submit exactly as the role sends it to a cluster master: the package
as the --py-files zip the role's plan builds (smoke_plan.zip_members), run from a launcher file,
Spark's Kafka source jars as --jars, the driver in client mode on this machine, which writes the
report here.
"""

import glob
import json
import os
import subprocess
import sys
import time

import pytest

import harness
from jobtools import JARS_DIR, MM2_FLOWS, make_config, messages

harness.load_connect()  # the collection's module_utils on sys.path
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import bundle  # noqa: E402
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import smoke_plan  # noqa: E402

# The machine has two cores and other JVMs: one small executor.
SMALL_EXECUTOR = ["--conf", "spark.executor.memory=512m", "--conf", "spark.cores.max=1"]
# Executors without Python: neither mode may need one (reconcile is SQL built-ins only; smoke mode's
# markers become inline SQL tables, not a Python RDD), so cluster nodes need Java only.
NO_EXECUTOR_PYTHON = ["--conf", "spark.pyspark.python=/nonexistent/python3"]


def submit(master, config, tmp_path, mode, env=None, extra=()):
    """spark-submit of the job as the role builds it (roles/mm2_smoke/vars/main.yml, __mm2_smoke_argv,
    with the plan's jars)."""
    zip_path = tmp_path / "mm2_smoke.zip"
    zip_path.write_bytes(bundle.zip_bytes(smoke_plan.zip_members(harness.SMOKE_DIR,
                                                                 os.path.join(harness.REPO, "plugins", "module_utils"))))
    # the role's launcher (its template, without the managed-file comment)
    with open(os.path.join(harness.REPO, "roles", "mm2_smoke", "templates", "mm2_smoke_main.py.j2")) as fh:
        source = "".join(line for line in fh if not line.startswith("{{"))
    launcher = tmp_path / "mm2_smoke_main.py"
    launcher.write_text(source)
    jars = sorted(glob.glob(os.path.join(JARS_DIR, "*.jar")))
    report_dir = tmp_path / ("report-" + mode)
    cmd = [os.path.join(harness.pyspark_home(), "bin", "spark-submit"), "--master", master,
           "--py-files", str(zip_path), "--jars", ",".join(jars),
           "--conf", "spark.pyspark.driver.python=" + sys.executable, *extra,
           str(launcher),
           "--config", config, "--mode", mode, "--jars-dir", JARS_DIR, "--report-dir", str(report_dir)]
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False,
                          env=env or dict(os.environ, SPARK_LOCAL_IP="127.0.0.1"))
    elapsed = time.time() - t0
    sys.stderr.write("spark-submit %s: exit %d after %.1fs\n%s%s"
                     % (mode, proc.returncode, elapsed, proc.stdout, proc.stderr[-3000:]))
    found = sorted(report_dir.glob("mm2-smoke-%s-*.json" % mode))
    doc = json.loads(found[-1].read_text()) if found else None
    return proc, doc, elapsed


def ran_on(cluster, name, known):
    """The one application called ``name`` the cluster completed since ``known``, after checking that it
    ran tasks in an executor on the worker that had the Kafka source jars from --jars."""
    apps = cluster.wait_finished(name, known)
    assert [a["name"] for a in apps] == [name], cluster.state()["completedapps"]
    app = apps[0]
    assert app["memoryperexecutor"] == 512  # spark-submit's --conf reached the cluster
    executors = cluster.executors(app["id"])
    assert executors, cluster.worker_state()
    ran_tasks = False
    for ex in executors:
        assert any(f.startswith("spark-sql-kafka-0-10") for f in os.listdir(ex["dir"])), os.listdir(ex["dir"])
        with open(os.path.join(ex["dir"], "stderr"), errors="replace") as fh:
            ran_tasks = ran_tasks or "Running task" in fh.read()
    assert ran_tasks, "no executor of %s ran a task (see %s)" % (app["id"], executors[0]["dir"])
    return app


@pytest.fixture(scope="module")
def smoke_run(running_mm2, spark_cluster, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("cluster-smoke")
    known = set(spark_cluster.finished_apps("mm2-smoke-smoke"))
    proc, doc, elapsed = submit(spark_cluster.url, make_config(running_mm2, tmp_path, MM2_FLOWS), tmp_path, "smoke",
                                extra=SMALL_EXECUTOR + NO_EXECUTOR_PYTHON)
    return proc, doc, elapsed, known


def test_smoke_mode_runs_on_the_standalone_cluster(smoke_run, spark_cluster):
    proc, doc, _elapsed, known = smoke_run
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert doc["verdict"] == "pass", messages(doc)
    assert {c["flow"] for c in doc["checks"]} == {"A->B", "B->A"}
    # the job left the master to spark-submit: its --master, not the job's local default
    assert doc["spark"]["master"] == spark_cluster.url
    # and the driver's JVM: spark-submit started it, without smoke mode's C1-only option
    assert doc["spark"]["driver_jit"] == "full"
    ran_on(spark_cluster, "mm2-smoke-smoke", known)


def test_reconcile_mode_runs_on_the_standalone_cluster(smoke_run, running_mm2, spark_cluster, tmp_path):
    """Reconciles the marker topic the smoke run left, both flows, on an executor without Python."""
    assert smoke_run[0].returncode == 0, "the smoke run gives this test its records"
    known = set(spark_cluster.finished_apps("mm2-smoke-reconcile"))
    cfg = make_config(running_mm2, tmp_path, MM2_FLOWS, checks={"reconcile": {"settle_s": 30}})
    proc, doc, _elapsed = submit(spark_cluster.url, cfg, tmp_path, "reconcile",
                                 extra=SMALL_EXECUTOR + NO_EXECUTOR_PYTHON)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert doc["verdict"] == "pass", messages(doc)
    assert doc["spark"]["master"] == spark_cluster.url
    assert [(c["flow"], len(c["details"]["partitions"])) for c in doc["checks"]] == [("A->B", 3), ("B->A", 3)]
    for check in doc["checks"]:
        det = check["details"]
        assert det["source_records"] > 0 and det["missing"] == 0 and det["extra"] == 0, det
    ran_on(spark_cluster, "mm2-smoke-reconcile", known)


def test_jars_given_to_spark_submit_are_kept(tmp_path):
    """A site's own --jars stay next to the job's Kafka source jars (each file name once); the job's
    session must not replace spark-submit's list with its --jars-dir."""
    extra = tmp_path / "site-extra.jar"
    extra.write_bytes(b"")
    kafka_jar = sorted(glob.glob(os.path.join(JARS_DIR, "spark-sql-kafka-0-10_*.jar")))[0]
    script = tmp_path / "jars.py"
    script.write_text("import sys\nsys.path.insert(0, %r)\nfrom mm2_smoke import spark\n"
                      "s = spark.spark_session(None, %r, app='jars-test')\n"
                      "print('JARS=' + s.sparkContext.getConf().get('spark.jars'))\ns.stop()\n"
                      % (harness.SMOKE_DIR, JARS_DIR))
    proc = subprocess.run([os.path.join(harness.pyspark_home(), "bin", "spark-submit"), "--master", "local[1]",
                           "--conf", "spark.pyspark.driver.python=" + sys.executable,
                           "--jars", "%s,%s" % (extra, kafka_jar), str(script)],
                          capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    jars = [line for line in proc.stdout.splitlines() if line.startswith("JARS=")][0][5:].split(",")
    names = [os.path.basename(j) for j in jars]
    assert "site-extra.jar" in names
    assert sorted(names) == sorted(set(names))  # the Kafka source jar given twice is there once
    assert set(os.listdir(JARS_DIR)) - {"jars.txt", ".recipe"} <= set(names)
