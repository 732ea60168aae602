"""SCRAM users created with the KRaft bootstrap, on a real broker from the lab's Kafka archive.

The storage is formatted with the command line kafka_broker's format task runs
(``kafka_scram.format_command``: ``kafka-storage.sh format ... --add-scram ...`` with its
environment), then one combined KRaft node starts whose client and inter-broker listener is
SASL_PLAINTEXT with SCRAM-SHA-512. kafka-python logs in as each user the format created (a
password with quotes, ``=``, ``]``, blanks and non-ASCII characters among them) and is refused
with a wrong password or an unknown user; the broker's log says why. The node's own setup is
here (harness.py is shared with other tests): only harness functions are reused.
"""

import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

MECHANISM = "SCRAM-SHA-512"
ADMIN_PASSWORD = "admin-secret"
USERS = [
    # the broker's own login to its inter-broker listener
    {"name": "admin", "password": ADMIN_PASSWORD},
    # quotes at both ends (ScramParser strips one pair), '=', ']', blanks and non-ASCII characters
    # (Java reads them as U+FFFD unless the locale is UTF-8): all reach Kafka unchanged
    {"name": "alice", "password": '"quoted" p=ss]w\u00f6rd \u20ac [x] "', "iterations": 8192},
    {"name": "bob", "password": "bob-secret", "mechanism": "SCRAM-SHA-256"},
]


def collection():
    """(kafka_scram, the kafka filters) as the collection's own modules (the .collections link)."""
    harness.load_connect()
    from ansible_collections.kafkaops.mirrormaker.plugins.filter import kafka as kafka_filters
    from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import scram as kafka_scram
    return kafka_scram, kafka_filters


def server_properties(path, data_dir, port, cport):
    lines = [
        "process.roles=broker,controller",
        "node.id=1",
        "controller.quorum.voters=1@127.0.0.1:%d" % cport,
        "listeners=SASL_PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d" % (port, cport),
        "advertised.listeners=SASL_PLAINTEXT://127.0.0.1:%d" % port,
        "inter.broker.listener.name=SASL_PLAINTEXT",
        "controller.listener.names=CONTROLLER",
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
        "sasl.enabled.mechanisms=%s" % MECHANISM,
        "sasl.mechanism.inter.broker.protocol=%s" % MECHANISM,
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config="
        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"admin\" password=\"%s\";"
        % ADMIN_PASSWORD,
    ] + harness.single_node_tail(data_dir)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return dict(line.split("=", 1) for line in lines)


@pytest.fixture(scope="module")
def scram_broker():
    if not harness.find_archive():
        pytest.fail("no lab Kafka archive in .cache/kafka: run scripts/bootstrap.sh (lab/kafka-dist/assemble.sh)")
    ks, filters = collection()
    workdir = tempfile.mkdtemp(prefix="kafka-scram-smoke.")
    proc = None
    try:
        lab = harness.Lab(workdir=workdir)
        lab.unpack()
        port, cport = harness.free_ports(2)
        props_path = os.path.join(workdir, "server.properties")
        props = server_properties(props_path, os.path.join(workdir, "data"), port, cport)
        listeners = [{"name": "SASL_PLAINTEXT", "port": port, "protocol": "SASL_PLAINTEXT"}]
        # What the role's preflight asks of this input.
        assert ks.scram_user_faults(USERS) == []
        assert ks.inter_broker_mechanism_faults(listeners, "SASL_PLAINTEXT", props) == []

        # The role's format task: the same filter, the same command line and environment.
        command = filters.kafka_storage_format(lab.bin("kafka-storage.sh"), filters.new_cluster_id(), props_path,
                                               scram_users=USERS)
        env = dict(os.environ, KAFKA_HEAP_OPTS="-Xmx256m", **command["environment"])
        formatted = subprocess.run(command["argv"], env=env, capture_output=True, text=True, timeout=180, check=False)
        assert formatted.returncode == 0, ks.scrub(formatted.stdout + formatted.stderr, USERS)

        out = os.path.join(workdir, "stdout.log")
        proc = harness.start_process([lab.bin("kafka-server-start.sh"), props_path], out,
                                     env=dict(os.environ, LOG_DIR=os.path.join(workdir, "logs"),
                                              KAFKA_HEAP_OPTS="-Xmx512m -Xms256m"))
        harness.wait_for_log(out, r"Kafka Server started", 180, proc)
        yield {"bootstrap": "127.0.0.1:%d" % port, "out": out, "proc": proc, "command": command}
    finally:
        harness.stop_process(proc, 30)
        if not os.environ.get("MM2_SMOKE_KEEP_LAB"):
            shutil.rmtree(workdir, ignore_errors=True)


def sasl(user, password, mechanism=MECHANISM):
    return {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": mechanism,
            "sasl_plain_username": user, "sasl_plain_password": password}


def admin_client(broker, user, password, mechanism=MECHANISM, timeout=60):
    """A KafkaAdminClient logged in as ``user``, tried until ``timeout`` (the node may still be settling)."""
    from kafka.admin import KafkaAdminClient
    deadline = time.time() + timeout
    while True:
        try:
            return KafkaAdminClient(bootstrap_servers=broker["bootstrap"], client_id="scram-smoke",
                                    request_timeout_ms=10000, **sasl(user, password, mechanism))
        except Exception:  # noqa: BLE001 - not serving yet: try again until the deadline
            if time.time() > deadline:
                raise
            time.sleep(1)


def test_the_format_command_carries_every_user(scram_broker):
    argv = scram_broker["command"]["argv"]
    assert argv.count("--add-scram") == len(USERS)
    assert scram_broker["command"]["environment"] == {"LC_ALL": "C.UTF-8"}


@pytest.mark.parametrize("user", [u for u in USERS if u.get("mechanism", MECHANISM) == MECHANISM],
                         ids=lambda u: u["name"])
def test_a_bootstrap_user_logs_in(scram_broker, user):
    admin = admin_client(scram_broker, user["name"], user["password"])
    try:
        assert admin.describe_cluster()["brokers"], "no live broker seen as %s" % user["name"]
    finally:
        admin.close()


def test_the_credentials_have_the_mechanism_and_iterations_asked_for(scram_broker):
    admin = admin_client(scram_broker, "admin", ADMIN_PASSWORD)
    try:
        described = admin.describe_user_scram_credentials()
    finally:
        admin.close()
    found = {name: sorted((int(ci["mechanism"]), ci["iterations"]) for ci in entry["credential_infos"])
             for name, entry in described.items()}
    # ScramMechanism: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512; 4096 is Kafka's default iteration count
    assert found == {"admin": [(2, 4096)], "alice": [(2, 8192)], "bob": [(1, 4096)]}


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


@pytest.mark.parametrize("user, password", [
    ("alice", "wrong-password"),
    ("alice", 'quoted" p=ss]w\u00f6rd \u20ac [x] '),
    ("mallory", "anything"),
], ids=["wrong-password", "without-the-quotes", "unknown-user"])
def test_a_wrong_login_is_refused(scram_broker, user, password):
    from kafka.admin import KafkaAdminClient
    from kafka.errors import KafkaConfigurationError
    records = _Records()
    logging.getLogger("kafka").addHandler(records)
    before = os.path.getsize(scram_broker["out"])
    try:
        # kafka-python's error type depends on where it gave up; the broker's log says why
        with pytest.raises(Exception) as refused:  # noqa: B017
            KafkaAdminClient(bootstrap_servers=scram_broker["bootstrap"], client_id="scram-smoke-wrong",
                             request_timeout_ms=3000, bootstrap_timeout_ms=4000, **sasl(user, password))
    finally:
        logging.getLogger("kafka").removeHandler(records)
    assert not isinstance(refused.value, KafkaConfigurationError), refused.value
    deadline = time.time() + 30
    while True:
        with open(scram_broker["out"], encoding="utf-8", errors="replace") as fh:
            fh.seek(before)
            log = fh.read()
        if "Failed authentication with /127.0.0.1" in log or time.time() > deadline:
            break
        time.sleep(0.5)
    assert "invalid credentials with SASL mechanism %s" % MECHANISM in log, log[-2000:]
    assert any("uthentication" in m for m in records.messages), records.messages[-20:]
