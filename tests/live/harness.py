"""Local Kafka + MirrorMaker 2 for the smoke job's tests and bench/smoke_reconcile.py.

Real single-node KRaft brokers and real dedicated-mode MirrorMaker 2 on 127.0.0.1, from the lab
archive (.cache/kafka/kafka_2.13-*.tgz), with mm2.properties rendered by
plugins/module_utils/mm2/model.py. bench/mm2_throughput.py starts its brokers
with the same helpers. SparkCluster is a real Spark standalone cluster (one master, one worker) from
pyspark's own jars, for the job as spark-submit runs it on a cluster.
Lab.start_secured_broker starts a cluster with an authorizer and SASL/SCRAM users (kafka_acl's
tests, MirrorMaker 2 under a least-privilege principal), over TLS with ``tls=True`` (tls.Ca).

The parts live in lab_process, lab_brokers, lab_kdc, lab_mm2, lab_connect and lab_spark; this
module puts them together as Lab and is what the tests import.
"""

import os
import shutil
import subprocess
import tempfile

from lab_brokers import BrokersMixin
from lab_brokers import cluster_id, commit_group, new_password, single_node_tail  # noqa: F401 pylint: disable=unused-import
from lab_connect import ConnectMixin
from lab_connect import committed_values, connect_rest, put_connector  # noqa: F401 pylint: disable=unused-import
from lab_kdc import KdcMixin
from lab_mm2 import FAST_INTERVALS, HARNESS_GLOBALS, SOURCE_UP_TO_DATE, Mm2Mixin, internal_rest_globals  # noqa: F401 pylint: disable=unused-import
from lab_process import (REPO, SMOKE_DIR, ansible_playbook, collections_path, find_archive,  # noqa: F401 pylint: disable=unused-import
                         format_properties, free_ports, load_connect, load_model, load_tuning, log, start_process, stop_process,
                         get_json, wait_for_log)
from lab_spark import YARN_GIVE_UP_SOON, SparkCluster, pyspark_home, unreachable_yarn  # noqa: F401 pylint: disable=unused-import


class Lab(BrokersMixin, KdcMixin, Mm2Mixin, ConnectMixin):
    """Two single-node brokers (A, B) and at most one MirrorMaker 2 process at a time."""

    def __init__(self, archive=None, workdir=None, heap="-Xmx512m -Xms256m"):
        self.archive = archive or find_archive()
        if not self.archive:
            raise RuntimeError("no lab Kafka archive in .cache/kafka (lab/kafka-dist/assemble.sh)")
        self.owns_tmp = workdir is None
        self.tmp = workdir or tempfile.mkdtemp(prefix="mm2-smoke-lab.")
        self.heap = heap
        self.brokers = {}
        self.mm2 = None
        self.mm2_dir = None
        self.mm2_count = 0
        self.dist = None
        self.workers = []
        self.connect_count = 0
        self.ca = None
        self.kdc = None

    # ------------------------------------------------------------------ brokers
    def unpack(self):
        subprocess.run(["tar", "-xzf", self.archive, "-C", self.tmp], check=True, timeout=120)
        self.dist = os.path.join(self.tmp, [d for d in os.listdir(self.tmp) if d.startswith("kafka_")][0])

    def bin(self, name):
        return os.path.join(self.dist, "bin", name)

    def stop(self):
        self.stop_connect()
        self.stop_mm2()
        for b in self.brokers.values():
            stop_process(b["proc"], 30)
        self.brokers = {}
        if self.kdc is not None:
            self.kdc.stop()
            self.kdc = None
        if self.owns_tmp and not os.environ.get("MM2_SMOKE_KEEP_LAB"):
            shutil.rmtree(self.tmp, ignore_errors=True)
