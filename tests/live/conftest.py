"""Fixtures for the smoke job's tests: real brokers A and B and one real MirrorMaker 2 per session.

Brokers and MM2 come from the lab's Kafka archive (.cache/kafka/kafka_2.13-*.tgz) and run on
127.0.0.1 (see harness.py); MM2 runs dedicated mode with A->B and B->A (active-active, default
replication policy) for topics ``mm2-smoke.*``, with short refresh/sync intervals. A real Spark
standalone cluster (harness.SparkCluster) is started for the tests that need one, and a second lab
of secured clusters A and B (harness.Lab.start_secured_broker) for those that need an authorizer.
"""

import os
import signal
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from jobtools import start_session_mm2  # noqa: E402


def _interrupt(signum, _frame):
    # SIGTERM/SIGHUP (e.g. a CI timeout): let pytest run the fixtures' teardown, which stops the JVMs
    raise KeyboardInterrupt("signal %d" % signum)


@pytest.fixture(scope="session")
def lab():
    """Brokers A and B (set MM2_SMOKE_KEEP_LAB=1 to keep their logs in /tmp/mm2-smoke-lab.*)."""
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGHUP, _interrupt)
    if not harness.find_archive():
        pytest.fail("no lab Kafka archive in .cache/kafka: run scripts/bootstrap.sh (lab/kafka-dist/assemble.sh)")
    the_lab = harness.Lab()
    try:
        the_lab.start_brokers()
        yield the_lab
    finally:
        the_lab.stop()


@pytest.fixture(scope="session")
def secured_lab():
    """A lab of its own with a real Kerberos KDC (secured_lab.kdc) and clusters A and B, each one
    KRaft node with StandardAuthorizer and a SASL_PLAINTEXT listener offering SCRAM-SHA-512 and
    GSSAPI; SCRAM users ``admin`` (super user) and ``alice`` (no ACLs).  Client settings: ``secured_lab.client_properties(name, user)``,
    ``kafka_python_kwargs``, ``java_client_properties``; more users: ``add_scram_user``."""
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGHUP, _interrupt)
    if not harness.find_archive():
        pytest.fail("no lab Kafka archive in .cache/kafka: run scripts/bootstrap.sh (lab/kafka-dist/assemble.sh)")
    the_lab = harness.Lab()
    try:
        the_lab.start_kdc()
        for name in ("A", "B"):
            the_lab.start_secured_broker(name, users=("alice",))
        yield the_lab
    finally:
        the_lab.stop()


@pytest.fixture(scope="session")
def mm2(lab):
    """The session's MirrorMaker 2 (A<->B); tests that stop it must run last."""
    start_session_mm2(lab)
    lab.wait_topic("A", "heartbeats", 60)
    yield lab
    lab.stop_mm2()


@pytest.fixture(scope="module")
def running_mm2(mm2):
    """The session's MM2, started again when an earlier module's last test stopped it."""
    if mm2.mm2 is None or mm2.mm2.poll() is not None:
        start_session_mm2(mm2)
    return mm2


@pytest.fixture(scope="session")
def spark_cluster(lab):
    """A Spark standalone master and one worker on 127.0.0.1, with their logs and work dir in the lab's tmp."""
    cluster = harness.SparkCluster(os.path.join(lab.tmp, "spark"))
    os.makedirs(cluster.tmp)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
