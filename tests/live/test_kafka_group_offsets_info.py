"""kafka_group_offsets_info against the session's REAL broker A (harness.Lab, Kafka from the lab archive).

The module runs as a user runs it, ``ansible localhost -m kafkaops.mirrormaker.kafka_group_offsets_info``
with the collection found through <repo>/.collections and this venv's Python (kafka-python
3.0.12, the version the mm2_smoke role's venv pins) as ansible_python_interpreter; its result is
read from the ansible.posix.json callback.  A kafka-python consumer commits a group's offsets
part-way through a 2-partition topic; the report must give those offsets, the ends and the lags
exactly.  A transactional kafka-python producer holds a transaction open to show the
read_committed end (last stable offset) apart from the log end.
"""

import os
import socket
import ssl
import subprocess
import sys
import time

import pytest

import harness
from jobtools import run_ansible_module
# the SASL broker of test_kafka_reachable, shared rather than copied
from test_kafka_reachable import secured  # noqa: F401 pylint: disable=unused-import

HOST = socket.gethostname()
ORDERS = "group-offsets.orders"   # 2 partitions, 5 records each
AUDIT = "group-offsets.audit"     # 1 partition, 4 records
TX = "group-offsets.tx"           # 1 partition, written in transactions
GROUP = "drill-orders"            # committed orders-0 at 3, orders-1 at 5, audit-0 at 1
TX_GROUP = "drill-tx"             # committed tx-0 at 1
NEVER = "drill-never-committed"


def run_module(args, *extra, python=sys.executable):
    """``ansible localhost -m kafkaops.mirrormaker.kafka_group_offsets_info -a <json>``; returns
    (completed process, the host's result as the json callback gives it)."""
    return run_ansible_module("kafkaops.mirrormaker.kafka_group_offsets_info", args, *extra, python=python)


def closed_port_server():
    return "127.0.0.1:%d" % harness.free_ports(1)[0]


@pytest.fixture(scope="module")
def seeded(lab):
    """Broker A with ORDERS and AUDIT written and GROUP's offsets committed by a kafka-python
    consumer that processed part of them; yields {bootstrap, cluster_id}."""
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.structs import OffsetAndMetadata

    bootstrap = lab.bootstrap("A")
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="group-offsets-test")
    try:
        admin.create_topics([NewTopic(ORDERS, 2, 1), NewTopic(AUDIT, 1, 1), NewTopic(TX, 1, 1)])
        cluster_id = admin.describe_cluster()["cluster_id"]
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for i in range(5):
        producer.send(ORDERS, b"order-%d-p0" % i, partition=0)
        producer.send(ORDERS, b"order-%d-p1" % i, partition=1)
    for i in range(4):
        producer.send(AUDIT, b"audit-%d" % i, partition=0)
    producer.flush()
    producer.close()

    # the application: processes 3 records of orders-0, all of orders-1, 1 of audit-0, commits
    wanted = {TopicPartition(ORDERS, 0): 3, TopicPartition(ORDERS, 1): 5, TopicPartition(AUDIT, 0): 1}
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=GROUP, enable_auto_commit=False,
                             auto_offset_reset="earliest")
    try:
        consumer.assign(list(wanted))
        processed = {}
        deadline = time.monotonic() + 60
        while any(processed.get(tp, -1) + 1 < n for tp, n in wanted.items()):
            assert time.monotonic() < deadline, "records not read back within 60 s: %s" % processed
            for tp, records in consumer.poll(timeout_ms=500).items():
                for record in records:
                    if record.offset < wanted[tp]:
                        processed[tp] = record.offset
        consumer.commit(dict((tp, OffsetAndMetadata(offset + 1, "", -1)) for tp, offset in processed.items()))
    finally:
        consumer.close()
    yield {"bootstrap": bootstrap, "cluster_id": cluster_id}


@pytest.mark.parametrize("check", [False, True], ids=["run", "check_mode"])
def test_report_of_a_partly_consumed_group_and_one_that_never_committed(seeded, check):
    proc, result = run_module({"bootstrap_servers": seeded["bootstrap"], "groups": [GROUP, NEVER], "timeout": 20},
                              *(["--check"] if check else []))
    assert proc.returncode == 0, result
    assert result["changed"] is False
    assert result["cluster_id"] == seeded["cluster_id"]
    assert result["isolation_level"] == "read_committed"
    assert sorted(result["groups"]) == sorted([GROUP, NEVER])
    assert result["groups"][GROUP] == {
        "state": "Empty",
        "members": 0,
        "partitions": [
            {"topic": AUDIT, "partition": 0, "committed": 1, "end": 4, "lag": 3},
            {"topic": ORDERS, "partition": 0, "committed": 3, "end": 5, "lag": 2},
            {"topic": ORDERS, "partition": 1, "committed": 5, "end": 5, "lag": 0},
        ],
        "total_lag": 5,
    }
    # unknown to the cluster: reported with the broker's state, not refused
    assert result["groups"][NEVER] == {"state": "Dead", "members": 0, "partitions": [], "total_lag": 0}
    assert result["msg"] == "2 group(s) on cluster %s: total lag 5 (read_committed)" % seeded["cluster_id"]
    assert "warnings" not in result


def test_topics_restrict_the_report(seeded):
    proc, result = run_module({"bootstrap_servers": [seeded["bootstrap"]], "groups": [GROUP],
                               "topics": [ORDERS, "group-offsets.not-there"], "isolation_level": "read_uncommitted"})
    assert proc.returncode == 0, result
    assert result["groups"][GROUP]["partitions"] == [
        {"topic": ORDERS, "partition": 0, "committed": 3, "end": 5, "lag": 2},
        {"topic": ORDERS, "partition": 1, "committed": 5, "end": 5, "lag": 0}]
    assert result["groups"][GROUP]["total_lag"] == 2


@pytest.mark.parametrize("check", [False, True], ids=["run", "check_mode"])
def test_topic_offsets_give_each_partitions_start_and_end(seeded, check):
    """kafka_topic_offsets_info, the same reading for topics (one home: module_utils/kafka/groups.py)."""
    proc, result = run_ansible_module("kafkaops.mirrormaker.kafka_topic_offsets_info",
                                      {"bootstrap_servers": seeded["bootstrap"],
                                       "topics": [ORDERS, AUDIT, "group-offsets.not-there"]},
                                      *(["--check"] if check else []))
    assert proc.returncode == 0, result
    assert result["changed"] is False and result["cluster_id"] == seeded["cluster_id"]
    assert result["topics"] == {AUDIT: [{"partition": 0, "start": 0, "end": 4}],
                                ORDERS: [{"partition": 0, "start": 0, "end": 5}, {"partition": 1, "start": 0, "end": 5}]}
    assert result["missing"] == ["group-offsets.not-there"]
    assert result["isolation_level"] == "read_uncommitted"


def test_unreachable_bootstrap_fails_naming_bootstrap_servers_within_timeout():
    closed = closed_port_server()
    start = time.monotonic()
    proc, result = run_module({"bootstrap_servers": "%s,kafka-group-offsets-test.invalid:9092" % closed,
                               "groups": [GROUP], "timeout": 5})
    elapsed = time.monotonic() - start
    assert proc.returncode == 2, result
    assert result["msg"] == ("bootstrap_servers: no bootstrap server answered from %s within 5 s (%s: connection "
                             "refused, kafka-group-offsets-test.invalid:9092: name does not resolve)" % (HOST, closed))
    assert "groups" not in result
    assert elapsed < 5 + 30, elapsed  # the timeout, and ansible's own start-up on a busy machine


def test_read_committed_end_is_the_last_stable_offset(seeded):
    """A transaction held open: read_committed's end stops before it, read_uncommitted's does not.
    Once aborted, both ends are the log end again: an aborted transaction leaves no gap between
    them, its records and its marker count in the lag of both."""
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    bootstrap = seeded["bootstrap"]
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id="group-offsets-test-tx")
    producer.init_transactions()
    producer.begin_transaction()
    for i in range(3):  # offsets 0-2, commit marker at 3
        producer.send(TX, b"committed-%d" % i, partition=0)
    producer.commit_transaction()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=TX_GROUP, enable_auto_commit=False)
    consumer.commit({TopicPartition(TX, 0): OffsetAndMetadata(1, "", -1)})
    consumer.close()

    def ends():
        found = {}
        for level in ("read_committed", "read_uncommitted"):
            proc, result = run_module({"bootstrap_servers": bootstrap, "groups": [TX_GROUP], "isolation_level": level})
            assert proc.returncode == 0, result
            assert result["isolation_level"] == level
            (row,) = result["groups"][TX_GROUP]["partitions"]
            found[level] = (row["committed"], row["end"], row["lag"])
        return found

    try:
        producer.begin_transaction()
        for i in range(2):  # offsets 4-5, not yet committed
            producer.send(TX, b"open-%d" % i, partition=0)
        producer.flush()
        assert ends() == {"read_committed": (1, 4, 3), "read_uncommitted": (1, 6, 5)}
    finally:
        producer.abort_transaction()  # abort marker at 6
        producer.close()
    assert ends() == {"read_committed": (1, 7, 6), "read_uncommitted": (1, 7, 6)}


def test_refused_client_property_names_it_and_no_secret_is_shown():
    secret = "drill-s3cret-pw"
    properties = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                  "sasl.plain.username": "drill", "sasl.plain.password": secret,
                  "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required '
                                      'username="drill" password="%s";' % secret}
    proc, result = run_module({"bootstrap_servers": "kafka-a1:9092", "groups": [GROUP], "client_properties": properties})
    assert proc.returncode == 2, result
    assert result["msg"] == (
        "client_properties['sasl.jaas.config']: kafka-python does not read JAAS configurations; give the user and "
        "the password as sasl.plain.username and sasl.plain.password (mechanisms PLAIN, SCRAM-SHA-256, "
        "SCRAM-SHA-512)")
    assert secret not in proc.stdout + proc.stderr
    shown = result["invocation"]["module_args"]["client_properties"]
    # only the secrets are hidden; the protocol and the user stay readable
    assert shown["security.protocol"] == "SASL_PLAINTEXT" and shown["sasl.plain.username"] == "drill"
    assert shown["sasl.plain.password"] == "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"


def test_without_kafka_python_the_library_is_named():
    python = "/usr/bin/python3"
    if not os.path.exists(python) or subprocess.run([python, "-c", "import kafka"], capture_output=True, check=False).returncode == 0:
        pytest.skip("needs a Python without kafka-python (the lab hosts' system Python)")
    proc, result = run_module({"bootstrap_servers": closed_port_server(), "groups": [GROUP]}, python=python)
    assert proc.returncode == 2, result
    assert result["msg"].startswith("Failed to import the required Python library (kafka-python) on %s's Python %s."
                                    % (HOST, python))


def test_sasl_plain_through_client_properties(secured):
    # a broker of its own, started just now: its group coordinator is not available for the first
    # requests, which the module tries again within its timeout
    properties = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                  "sasl.plain.username": "probe", "sasl.plain.password": "probe-secret"}
    proc, result = run_module({"bootstrap_servers": secured["SASL_PLAINTEXT"], "groups": [NEVER],
                               "client_properties": properties, "timeout": 30})
    assert proc.returncode == 0, result
    assert result["groups"] == {NEVER: {"state": "Dead", "members": 0, "partitions": [], "total_lag": 0}}
    assert "probe-secret" not in proc.stdout + proc.stderr


def test_sasl_wrong_password_is_told_from_an_unreachable_cluster(secured):
    properties = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                  "sasl.plain.username": "probe", "sasl.plain.password": "not-the-secret"}
    proc, result = run_module({"bootstrap_servers": secured["SASL_PLAINTEXT"], "groups": [NEVER],
                               "client_properties": properties, "timeout": 15})
    assert proc.returncode == 2, result
    # the listener answers ApiVersions before authentication, so the probe passes and kafka-python's
    # login fails: the broker answers SASL_AUTHENTICATION_FAILED and closes the connection, and
    # kafka-python reads the answer in some attempts, in others only the close.  15 s, not 5: on a
    # loaded machine (CI on 7e7fb2f) the broker's answer to the one login in 5 s came too late
    assert result["msg"] in [
        "bootstrap_servers: %s answered, but kafka-python could not connect to the cluster within 15 s: "
        "KafkaTimeoutError: Unable to bootstrap from ['%s']; kafka-python logged: %s"
        % (secured["SASL_PLAINTEXT"], secured["SASL_PLAINTEXT"], reason) for reason in [
            "[Error 58] SaslAuthenticationFailedError: SaslAuthenticationFailedError: Authentication failed: "
            "Invalid username or password",
            "KafkaConnectionError: socket disconnected (as a broker closes the connection after a failed SASL "
            "login: check sasl.plain.username and sasl.plain.password)"]]
    assert "not-the-secret" not in proc.stdout + proc.stderr


def test_tls_with_the_broker_ca_in_ssl_cafile(secured, tmp_path):
    host, port = secured["SSL"].rsplit(":", 1)
    untrusted = {"bootstrap_servers": secured["SSL"], "groups": [NEVER], "timeout": 5,
                 "client_properties": {"security.protocol": "SSL"}}
    proc, result = run_module(untrusted)
    assert proc.returncode == 2, result
    assert result["msg"].startswith("bootstrap_servers: %s answered, but kafka-python could not connect to the "
                                    "cluster within 5 s: " % secured["SSL"])
    assert "; kafka-python logged: KafkaConnectionError: Handshake failed: [SSL: CERTIFICATE_VERIFY_FAILED] " \
           "certificate verify failed: self-signed certificate" in result["msg"]

    ca = tmp_path / "broker.pem"  # the broker's self-signed certificate (CN and SAN 127.0.0.1) is its own CA
    ca.write_text(ssl.get_server_certificate((host, int(port))))
    proc, result = run_module(dict(untrusted, timeout=30, client_properties={"security.protocol": "SSL",
                                                                             "ssl.cafile": str(ca)}))
    assert proc.returncode == 0, result
    assert result["groups"][NEVER]["state"] == "Dead"
