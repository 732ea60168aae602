# -*- coding: utf-8 -*-
"""kafka_group_offsets: the pure logic of module_utils/kafka_groups.py and the module's input checks.

The admin client and the consumer are test doubles (FakeAdmin, FakeConsumer) that answer with
kafka-python 3.x's shapes, used only for what a real broker cannot show cheaply: the arithmetic,
the sorting, a deleted topic, a group kafka-python cannot describe, refused client properties.
tests/smoke/test_kafka_group_offsets.py runs the module against a real broker.
"""

from __future__ import annotations

import collections

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils import kafka_groups as kg
from ansible_collections.kafkaops.mirrormaker.plugins.modules import kafka_group_offsets as module

# kafka.structs' namedtuples, with their field names (kafka-python is not needed to run these tests)
TopicPartition = collections.namedtuple("TopicPartition", "topic partition")
OffsetAndMetadata = collections.namedtuple("OffsetAndMetadata", "offset metadata leader_epoch")


def committed(*triples):
    return dict((TopicPartition(t, p), OffsetAndMetadata(o, "", -1)) for t, p, o in triples)


class FakeAdmin(object):
    """Test double of KafkaAdminClient: the calls read_groups makes, answered from dicts."""

    def __init__(self, descriptions, offsets, topics):
        self.descriptions, self.offsets, self.topics = descriptions, offsets, topics
        self.asked_topics = None

    def describe_groups(self, group_ids):
        return dict((g, self.descriptions[g]) for g in group_ids if g in self.descriptions)

    def list_group_offsets(self, specs):
        assert all(v is None for v in specs.values())
        return dict((g, self.offsets.get(g, {})) for g in specs)

    def describe_topics(self, names):
        self.asked_topics = names
        return [{"name": n, "error_code": 0, "partitions": [{"partition_index": i} for i in range(self.topics[n])]}
                if n in self.topics else {"name": n, "error_code": 3, "partitions": []} for n in names]


class FakeConsumer(object):
    """Test double of KafkaConsumer.end_offsets; fails on a partition that does not exist, as the
    real one does (it waits out its timeout)."""

    def __init__(self, ends):
        self.ends = ends
        self.asked = None

    def end_offsets(self, partitions, timeout_ms=None):
        self.asked = list(partitions)
        return dict((tp, self.ends[(tp.topic, tp.partition)]) for tp in partitions)


def described(state, members=0, error=None):
    return {"group_state": state, "members": [{"member_id": "m%d" % i} for i in range(members)], "error": error}


# ---------------------------------------------------------------------------- lag arithmetic

@pytest.mark.parametrize("committed_offset, end, expected", [
    (3, 5, 2),
    (5, 5, 0),
    (0, 0, 0),
    (7, 5, -2),       # beyond the end: shown, not hidden
    (3, None, None),  # partition gone
])
def test_lag(committed_offset, end, expected):
    assert kg.lag(committed_offset, end) == expected


@pytest.mark.parametrize("lags, expected", [
    ([2, 0, 5], 7),
    ([2, -3], 2),     # a negative lag does not cancel another partition's
    ([None, 4], 4),
    ([], 0),
])
def test_total_lag_sums_positive_lags(lags, expected):
    assert kg.total_lag([{"lag": value} for value in lags]) == expected


def test_partition_rows_are_sorted_filtered_and_skip_uncommitted():
    offsets = committed(("orders", 1, 5), ("audit", 0, 1), ("orders", 0, 3), ("orders", 2, -1))
    ends = {("orders", 0): 5, ("orders", 1): 5, ("audit", 0): 4}
    assert kg.partition_rows(offsets, ends) == [
        {"topic": "audit", "partition": 0, "committed": 1, "end": 4, "lag": 3},
        {"topic": "orders", "partition": 0, "committed": 3, "end": 5, "lag": 2},
        {"topic": "orders", "partition": 1, "committed": 5, "end": 5, "lag": 0},
    ]
    assert [r["topic"] for r in kg.partition_rows(offsets, ends, {"orders"})] == ["orders", "orders"]


def test_partitions_sort_by_number_not_text():
    offsets = committed(*[("t", p, p) for p in (10, 2, 1)])
    rows = kg.partition_rows(offsets, dict((("t", p), 20) for p in (1, 2, 10)))
    assert [r["partition"] for r in rows] == [1, 2, 10]


# ---------------------------------------------------------------------------- group state

@pytest.mark.parametrize("description, expected", [
    (described("Stable", 2), ("Stable", 2, None)),
    (described("Empty"), ("Empty", 0, None)),
    # Kafka 4: an unknown group is Dead with GROUP_ID_NOT_FOUND, an answer rather than a fault
    (described("Dead", error="[Error 69] GroupIdNotFoundError: Group nope not found."), ("Dead", 0, None)),
    (described("Dead"), ("Dead", 0, None)),  # Kafka 3: Dead without an error
])
def test_group_state(description, expected):
    assert kg.group_state(description) == expected


@pytest.mark.parametrize("error", [
    "[Error 69] GroupIdNotFoundError: Group g is not a classic group.",
    "[Error 30] GroupAuthorizationFailedError: ",
])
def test_group_state_unknown_when_the_broker_will_not_describe_it(error):
    state, members, warning = kg.group_state(described("Dead", error=error))
    assert (state, members) == (None, None)
    assert warning == "state and members unknown, the cluster answered: " + error


# ---------------------------------------------------------------------------- read_groups

def test_read_groups_reports_each_group_in_order():
    admin = FakeAdmin(
        {"g1": described("Empty"), "g2": described("Stable", 1),
         "nobody": described("Dead", error="[Error 69] GroupIdNotFoundError: Group nobody not found.")},
        {"g1": committed(("orders", 1, 5), ("orders", 0, 3)), "g2": committed(("orders", 0, 1), ("audit", 0, 9))},
        {"orders": 2, "audit": 1})
    consumer = FakeConsumer({("orders", 0): 5, ("orders", 1): 5, ("audit", 0): 9})
    report, warnings = kg.read_groups(admin, consumer, ["g2", "g1", "nobody"])
    assert list(report) == ["g2", "g1", "nobody"]
    assert report["g1"] == {"state": "Empty", "members": 0, "total_lag": 2, "partitions": [
        {"topic": "orders", "partition": 0, "committed": 3, "end": 5, "lag": 2},
        {"topic": "orders", "partition": 1, "committed": 5, "end": 5, "lag": 0}]}
    assert report["g2"]["total_lag"] == 4 and report["g2"]["members"] == 1
    assert report["nobody"] == {"state": "Dead", "members": 0, "partitions": [], "total_lag": 0}
    assert warnings == []
    # one end_offsets call for every group's partitions, each partition once, in order
    assert consumer.asked == [TopicPartition("audit", 0), TopicPartition("orders", 0), TopicPartition("orders", 1)]


def test_read_groups_restricted_to_topics_asks_only_for_them():
    admin = FakeAdmin({"g": described("Empty")}, {"g": committed(("orders", 0, 3), ("audit", 0, 1))},
                      {"orders": 1, "audit": 1})
    consumer = FakeConsumer({("orders", 0): 5, ("audit", 0): 4})
    report, _warnings = kg.read_groups(admin, consumer, ["g"], topics=["orders", "not-there"])
    assert [(p["topic"], p["lag"]) for p in report["g"]["partitions"]] == [("orders", 2)]
    assert admin.asked_topics == ["orders"]
    assert consumer.asked == [TopicPartition("orders", 0)]


def test_read_groups_without_committed_offsets_reads_no_ends():
    admin = FakeAdmin({"g": described("Dead")}, {}, {})
    consumer = FakeConsumer({})
    report, _warnings = kg.read_groups(admin, consumer, ["g"])
    assert report["g"]["partitions"] == [] and consumer.asked is None and admin.asked_topics is None


def test_a_deleted_topic_has_no_end_and_a_warning():
    admin = FakeAdmin({"g": described("Empty")}, {"g": committed(("gone", 0, 3), ("orders", 0, 1), ("orders", 4, 2))},
                      {"orders": 1})
    consumer = FakeConsumer({("orders", 0): 1})
    report, warnings = kg.read_groups(admin, consumer, ["g"])
    assert report["g"]["partitions"] == [
        {"topic": "gone", "partition": 0, "committed": 3, "end": None, "lag": None},
        {"topic": "orders", "partition": 0, "committed": 1, "end": 1, "lag": 0},
        {"topic": "orders", "partition": 4, "committed": 2, "end": None, "lag": None}]
    assert consumer.asked == [TopicPartition("orders", 0)]  # never asked for a partition that does not exist
    assert warnings == ["group 'g': committed offsets on partitions the cluster does not have (end and lag null): "
                        "gone-0, orders-4"]


def test_a_topic_the_cluster_will_not_describe_is_an_error_naming_it():
    with pytest.raises(ValueError, match=r"^topic 'secret-orders': the cluster answered error 29 \(X\) when asked "
                                         r"for its partitions$"):
        kg.existing_partitions([{"name": "secret-orders", "error_code": 29, "partitions": []}],
                               lambda code: "error %d (X)" % code)


def test_a_group_kafka_python_cannot_describe_keeps_its_offsets():
    error = "[Error 69] GroupIdNotFoundError: Group g is not a classic group."
    admin = FakeAdmin({"g": described("Dead", error=error)}, {"g": committed(("t", 0, 1))}, {"t": 1})
    report, warnings = kg.read_groups(admin, FakeConsumer({("t", 0): 3}), ["g"])
    assert report["g"]["state"] is None and report["g"]["members"] is None and report["g"]["total_lag"] == 2
    assert warnings == ["group 'g': state and members unknown, the cluster answered: " + error]


# ---------------------------------------------------------------------------- client_properties

def test_client_properties_map_to_kafka_python_names():
    props = {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.plain.username": "drill",
             "sasl.plain.password": "s3cret", "ssl.cafile": "/ca.pem", "ssl.certfile": "/c.pem",
             "ssl.keyfile": "/k.pem", "ssl.password": "kp", "ssl.endpoint.identification.algorithm": ""}
    kwargs, errors = kg.client_kwargs(props, isfile=lambda path: True)
    assert errors == []
    assert kwargs == {"security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512",
                      "sasl_plain_username": "drill", "sasl_plain_password": "s3cret", "ssl_cafile": "/ca.pem",
                      "ssl_certfile": "/c.pem", "ssl_keyfile": "/k.pem", "ssl_password": "kp",
                      "ssl_check_hostname": False}


@pytest.mark.parametrize("props, kwargs", [
    ({}, {}),
    ({"security.protocol": None}, {}),  # null: not given
    ({"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "HTTPS"},
     {"security_protocol": "SSL", "ssl_check_hostname": True}),
])
def test_client_properties_accepted(props, kwargs):
    assert kg.client_kwargs(props, isfile=lambda path: True) == (kwargs, [])


@pytest.mark.parametrize("props, message", [
    ({"sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" '
                          'password="p";', "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
      "sasl.plain.username": "u", "sasl.plain.password": "p"},
     "client_properties['sasl.jaas.config']: kafka-python does not read JAAS configurations; give the user and the "
     "password as sasl.plain.username and sasl.plain.password (mechanisms PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)"),
    ({"security.protocol": "SSL", "ssl.truststore.location": "/etc/kafka/truststore.jks"},
     "client_properties['ssl.truststore.location']: a Java trust store, which kafka-python cannot read; give the CA "
     "certificates as a PEM file in ssl.cafile"),
    ({"security.protocol": "SSL", "ssl.keystore.type": "PKCS12"},
     "client_properties['ssl.keystore.type']: a Java key store, which kafka-python cannot read; give the client "
     "certificate and its key as PEM files in ssl.certfile and ssl.keyfile (and the key's password in ssl.password)"),
    ({"bootstrap.servers": "a:9092"},
     "client_properties['bootstrap.servers']: give the servers in the bootstrap_servers option"),
    ({"security.protocl": "SSL"},
     "client_properties['security.protocl']: not a setting this module passes to kafka-python (it takes "
     "security.protocol, sasl.mechanism, sasl.plain.username, sasl.plain.password, ssl.cafile, ssl.certfile, "
     "ssl.keyfile, ssl.password, ssl.endpoint.identification.algorithm)"),
    ({"security.protocol": "sasl_ssl"},
     "client_properties['security.protocol']: 'sasl_ssl' is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI", "sasl.plain.username": "u",
      "sasl.plain.password": "p"},
     "client_properties['sasl.mechanism']: 'GSSAPI' is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (the "
     "mechanisms kafka-python authenticates with from a user name and a password)"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.plain.username": "u", "sasl.plain.password": "p"},
     "client_properties: security.protocol SASL_PLAINTEXT needs sasl.mechanism (PLAIN, SCRAM-SHA-256, "
     "SCRAM-SHA-512)"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.plain.username": "u"},
     "client_properties: security.protocol SASL_SSL needs sasl.plain.password"),
    ({"sasl.mechanism": "PLAIN"},
     "client_properties['sasl.mechanism']: not used with security.protocol PLAINTEXT (SASL settings need "
     "SASL_PLAINTEXT or SASL_SSL)"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.plain.username": "u",
      "sasl.plain.password": "p", "ssl.cafile": "/ca.pem"},
     "client_properties['ssl.cafile']: not used with security.protocol SASL_PLAINTEXT (TLS settings need SSL or "
     "SASL_SSL)"),
    ({"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "none"},
     "client_properties['ssl.endpoint.identification.algorithm']: 'none' is not 'https' (check the broker's host "
     "name, the default) or '' (do not)"),
    ({"security.protocol": "SSL", "ssl.keyfile": "/k.pem"},
     "client_properties['ssl.keyfile']: needs ssl.certfile, the certificate of the key"),
    ({"security.protocol": "SSL", "ssl.cafile": ["/ca.pem"]},
     "client_properties['ssl.cafile']: must be a string, not a list"),
])
def test_client_properties_refused_one_message_per_fault(props, message):
    kwargs, errors = kg.client_kwargs(props, isfile=lambda path: True)
    assert errors == [message]


def test_missing_pem_file_is_named(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    _kwargs, errors = kg.client_kwargs({"security.protocol": "SSL", "ssl.cafile": str(ca),
                                        "ssl.certfile": str(tmp_path / "client.pem")})
    assert errors == ["client_properties['ssl.certfile']: %s is not a file on this host" % (tmp_path / "client.pem")]


# ---------------------------------------------------------------------------- the module's own input checks

def params(**overrides):
    base = {"groups": ["g"], "topics": None, "timeout": 30}
    base.update(overrides)
    return base


@pytest.mark.parametrize("raw, servers, errors", [
    ("a:9092, b:9092", ["a:9092", "b:9092"], []),
    (["[::1]:9092"], ["[::1]:9092"], []),
    ("", [], ["bootstrap_servers: must list at least one host:port"]),
    ("kafka-a1", ["kafka-a1"], ["bootstrap_servers: 'kafka-a1' is not host:port"]),
    (9092, [], ["bootstrap_servers: 9092 is not a list or a comma-separated string of host:port"]),
])
def test_bootstrap_list(raw, servers, errors):
    assert module.bootstrap_list(raw) == (servers, errors)


@pytest.mark.parametrize("overrides, errors", [
    ({}, []),
    ({"groups": []}, ["groups: must name at least one consumer group"]),
    ({"groups": ["g", " "]}, ["groups[1]: ' ' is blank (a group id)"]),
    ({"topics": []}, ["topics: an empty list reports nothing; leave it out to report every topic"]),
    ({"topics": ["t", ""]}, ["topics[1]: '' is blank (a topic name)"]),
    ({"timeout": 0}, ["timeout: 0 is not from 1 to 300 seconds"]),
    ({"timeout": 301}, ["timeout: 301 is not from 1 to 300 seconds"]),
])
def test_input_errors(overrides, errors):
    assert module.input_errors(params(**overrides), [], []) == errors


class FakeModule(object):
    def __init__(self, no_log_values):
        self.no_log_values = set(no_log_values)


def test_only_secret_client_properties_stay_no_log():
    props = {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.plain.username": "drill",
             "sasl.plain.password": "s3cret", "ssl.cafile": "/etc/kafka/ca.pem", "ssl.password": "keypass"}
    # what AnsibleModule puts in no_log_values for a no_log dict option: every value, and other options' secrets
    fake = FakeModule(list(props.values()) + ["another option's secret"])
    module.mask_only_secrets(fake, props)
    assert fake.no_log_values == {"s3cret", "keypass", "another option's secret"}


# ---------------------------------------------------------------------------- tries again while the cluster is not ready

class Clock(object):
    """Test double of time.monotonic and time.sleep: sleeping advances the clock."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


class Retriable(Exception):
    retriable = True


def flaky(failures, error=Retriable):
    calls = []

    def call(*args, **kwargs):
        calls.append((args, kwargs))
        if len(calls) <= failures:
            raise error("not yet (%d)" % len(calls))
        return "answer"
    return call, calls


def test_retry_tries_a_retriable_error_again_until_it_answers():
    clock = Clock()
    call, calls = flaky(3)
    assert kg.Retry(5, clock=clock, sleep=clock.sleep)(call, 1, timeout_ms=2) == "answer"
    assert len(calls) == 4 and calls[0] == ((1,), {"timeout_ms": 2}) and clock.now == 1.5


def test_retry_gives_up_with_the_last_error_when_the_time_is_spent():
    clock = Clock()
    call, calls = flaky(100)
    with pytest.raises(Retriable, match=r"^not yet \(10\)$"):
        kg.Retry(5, clock=clock, sleep=clock.sleep)(call)
    assert len(calls) == 10 and clock.now == 4.5


def test_retry_raises_any_other_error_at_once():
    clock = Clock()
    call, calls = flaky(1, error=ValueError)
    with pytest.raises(ValueError):
        kg.Retry(5, clock=clock, sleep=clock.sleep)(call)
    assert len(calls) == 1 and clock.now == 0


class NotReadyYet(FakeAdmin):
    """A FakeAdmin whose first ``not_ready`` describe_groups answer as a broker that just started
    (kafka-python puts the group's error into the answer as text; it raises nothing)."""

    def __init__(self, not_ready, *args):
        FakeAdmin.__init__(self, *args)
        self.not_ready = not_ready
        self.describes = 0

    def describe_groups(self, group_ids):
        self.describes += 1
        if self.describes <= self.not_ready:
            return dict((g, described("Dead", error="[Error 16] NotCoordinatorError: None")) for g in group_ids)
        return FakeAdmin.describe_groups(self, group_ids)


def test_a_group_coordinator_not_ready_is_asked_again():
    clock = Clock()
    admin = NotReadyYet(1, {"g": described("Empty")}, {"g": committed(("t", 0, 1))}, {"t": 1})
    report, warnings = kg.read_groups(admin, FakeConsumer({("t", 0): 1}), ["g"],
                                      retry=kg.Retry(5, clock=clock, sleep=clock.sleep))
    assert admin.describes == 2 and report["g"]["state"] == "Empty" and warnings == []


def test_a_group_coordinator_never_ready_is_an_error_naming_the_group():
    clock = Clock()
    admin = NotReadyYet(1000, {}, {}, {})
    with pytest.raises(kg.NotReady, match=r"^group 'g': \[Error 16\] NotCoordinatorError: None$"):
        kg.read_groups(admin, FakeConsumer({}), ["g"], retry=kg.Retry(5, clock=clock, sleep=clock.sleep))
    assert admin.describes == 10


# ---------------------------------------------------------------------------- why kafka-python could not connect

def logged(*messages):
    handler = module.ConnectionErrors()
    for message in messages:
        handler.emit(module.logging.LogRecord("kafka.net.manager", module.logging.WARNING, __file__, 0, message,
                                              None, None))
    return handler.reason


CERT = ("KafkaConnectionError: Handshake failed: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
        "self-signed certificate (_ssl.c:1006)")
LOGIN = ("[Error 58] SaslAuthenticationFailedError: SaslAuthenticationFailedError: Authentication failed: "
         "Invalid username or password")


@pytest.mark.parametrize("messages, reason", [
    ([], None),
    # kafka-python 3.0.12's wording
    (["Bootstrap connection to bootstrap-0 failed: %s (backoff 0.12 secs)" % CERT,
      "Connection failed: %s" % CERT,
      "Bootstrap failed: KafkaTimeoutError: Unable to bootstrap from 127.0.0.1:9093"], CERT),
    # the deadline cut the last attempt short: the reason before it is the one
    (["Bootstrap connection to bootstrap-0 failed: KafkaConnectionError: socket disconnected (backoff 0.06 secs)",
      "Bootstrap connection to bootstrap-0 failed: [Error 7] RequestTimedOutError: Request timed out after 141 ms "
      "(backoff 0.12 secs)"], "KafkaConnectionError: socket disconnected"),
    (["Bootstrap connection to bootstrap-0 failed: [Error 7] RequestTimedOutError: Request timed out after 9 ms"],
     "[Error 7] RequestTimedOutError: Request timed out after 9 ms"),
    # a refused login read in one attempt tells more than the closes of the others
    (["Bootstrap connection to bootstrap-0 failed: %s (backoff 0.06 secs)" % LOGIN,
      "Bootstrap connection to bootstrap-0 failed: KafkaConnectionError: socket disconnected (backoff 0.12 secs)"],
     LOGIN),
])
def test_the_connection_error_kafka_python_logged(messages, reason):
    assert logged(*messages) == reason
