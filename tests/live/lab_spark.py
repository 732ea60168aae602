"""A real Spark standalone cluster from pyspark's own jars, and an unreachable YARN."""

import os
import time

from lab_process import free_ports, get_json, log, start_process, stop_process


def pyspark_home():
    """The pip-installed pyspark directory: Spark's jars/ and bin/ (spark-class, spark-submit)."""
    import pyspark
    return os.path.dirname(os.path.abspath(pyspark.__file__))


class SparkCluster(object):
    """A Spark standalone master and one worker (1 core, 1 GB) on 127.0.0.1, started with pyspark's
    own launch classes through its bin/spark-class; executors run in the worker's work dir."""

    def __init__(self, workdir, cores=1, memory="1g"):
        self.tmp = workdir
        self.home = pyspark_home()
        self.cores, self.memory = cores, memory
        self.port, self.webui_port, self.worker_webui_port = free_ports(3)
        self.url = "spark://127.0.0.1:%d" % self.port
        self.webui = "http://127.0.0.1:%d" % self.webui_port
        self.worker_webui = "http://127.0.0.1:%d" % self.worker_webui_port
        self.work_dir = os.path.join(workdir, "worker-work")
        self.master = self.worker = None

    def env(self):
        return dict(os.environ, SPARK_HOME=self.home, SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY="256m",
                    # the master's REST submission server would take the fixed port 6066; spark-submit
                    # reaches the master over its RPC port
                    SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false")

    def start(self, timeout=120):
        os.makedirs(self.work_dir, exist_ok=True)
        spark_class = os.path.join(self.home, "bin", "spark-class")
        self.master = start_process(
            [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
             "--port", str(self.port), "--webui-port", str(self.webui_port)],
            os.path.join(self.tmp, "master.log"), env=self.env())
        self.worker = start_process(
            [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
             "--cores", str(self.cores), "--memory", self.memory, "--webui-port", str(self.worker_webui_port),
             "--work-dir", self.work_dir, self.url],
            os.path.join(self.tmp, "worker.log"), env=self.env())
        t0 = time.time()
        self.wait_ready(timeout)
        log("Spark standalone %s: worker ALIVE after %.1fs" % (self.url, time.time() - t0))

    def wait_ready(self, timeout):
        """A worker registered and ALIVE at the master: an open port is not a cluster that runs executors."""
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            for name, proc in (("master", self.master), ("worker", self.worker)):
                if proc.poll() is not None:
                    raise RuntimeError("Spark %s exited (%s), see %s"
                                       % (name, proc.returncode, os.path.join(self.tmp, name + ".log")))
            try:
                state = self.state()
                if state.get("status") == "ALIVE" and any(w["state"] == "ALIVE" for w in state["workers"]):
                    return
                last = "master %s, workers %s" % (state.get("status"), [w["state"] for w in state["workers"]])
            except OSError as exc:
                last = str(exc)
            time.sleep(0.5)
        raise RuntimeError("Spark standalone %s not ready after %ss (%s), see %s" % (self.url, timeout, last, self.tmp))

    def state(self):
        """The master's /json/: workers, activeapps, completedapps."""
        return get_json(self.webui + "/json/")

    def worker_state(self):
        """The worker's /json/: executors and finishedexecutors, each with its appid."""
        return get_json(self.worker_webui + "/json/")

    def finished_apps(self, name):
        """{app id: the master's record} of the completed applications called ``name``."""
        return {a["id"]: a for a in self.state()["completedapps"] if a["name"] == name}

    def wait_finished(self, name, known, timeout=30):
        """The applications called ``name`` completed since ``known`` (ids) was read. The master marks
        an application completed once its driver has gone, a moment after spark-submit exits."""
        deadline = time.time() + timeout
        while True:
            new = [a for app_id, a in sorted(self.finished_apps(name).items()) if app_id not in known]
            if new or time.time() > deadline:
                return new
            time.sleep(0.5)

    def executors(self, app_id, timeout=30):
        """The worker's finished executors of ``app_id``, each with the directory it ran in. The worker
        ends them after the master has marked the application completed."""
        deadline = time.time() + timeout
        while True:
            state = self.worker_state()
            done = [dict(e, dir=os.path.join(self.work_dir, app_id, str(e["id"])))
                    for e in state["finishedexecutors"] if e["appid"] == app_id]
            running = [e for e in state["executors"] if e["appid"] == app_id]
            if (done and not running) or time.time() > deadline:
                return done
            time.sleep(0.5)

    def stop(self):
        # the worker first: it ends its executors, the master then has no one to wait for
        stop_process(self.worker, 30)
        stop_process(self.master, 30)
        self.worker = self.master = None


# Hadoop's client retries a YARN resource manager for many minutes by default; these make
# spark-submit give up on one that does not answer within about half a minute.
YARN_GIVE_UP_SOON = ["--conf", "spark.hadoop.yarn.resourcemanager.connect.max-wait.ms=10000",
                     "--conf", "spark.hadoop.yarn.resourcemanager.connect.retry-interval.ms=2000",
                     "--conf", "spark.hadoop.ipc.client.connect.max.retries=2"]


def unreachable_yarn(conf_dir):
    """A HADOOP_CONF_DIR whose resource manager address is a closed port on 127.0.0.1; returns that address."""
    os.makedirs(conf_dir, exist_ok=True)
    rm = "127.0.0.1:%d" % free_ports(1)[0]
    with open(os.path.join(conf_dir, "yarn-site.xml"), "w") as fh:
        fh.write("<configuration><property><name>yarn.resourcemanager.address</name><value>%s</value>"
                 "</property></configuration>\n" % rm)
    return rm
