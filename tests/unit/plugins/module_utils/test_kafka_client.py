# -*- coding: utf-8 -*-
"""module_utils/kafka/client.py, the connection options kafka_group_offsets_info and kafka_acl share:
client_properties mapped to kafka-python's keywords (one message per refused key), GSSAPI and its
library, who the cluster takes the caller for, bootstrap_servers, the secrets kept masked, retries
within the timeout (clock_double, a TEST DOUBLE of the clock), the reason kafka-python logged,
the probe's message for a cluster that does not answer (a real closed port) and connect's
failure message, and start, which runs the checks before any connection in the modules' order.
Against real brokers: tests/live/test_kafka_group_offsets_info.py, test_kafka_acl.py.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import client as kc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clock_double import Clock  # noqa: E402


# ---------------------------------------------------------------------------- client_properties

def test_client_properties_map_to_kafka_python_names():
    props = {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.plain.username": "drill",
             "sasl.plain.password": "s3cret", "ssl.cafile": "/ca.pem", "ssl.certfile": "/c.pem",
             "ssl.keyfile": "/k.pem", "ssl.password": "kp", "ssl.endpoint.identification.algorithm": ""}
    kwargs, errors = kc.client_kwargs(props, isfile=lambda path: True)
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
    # Kerberos: the host's credentials, the brokers' service name
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI", "sasl.kerberos.service.name": "kafka-prod"},
     {"security_protocol": "SASL_SSL", "sasl_mechanism": "GSSAPI", "sasl_kerberos_service_name": "kafka-prod"}),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI"},
     {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "GSSAPI"}),
])
def test_client_properties_accepted(props, kwargs):
    assert kc.client_kwargs(props, isfile=lambda path: True) == (kwargs, [])


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
     "security.protocol, sasl.mechanism, sasl.plain.username, sasl.plain.password, sasl.kerberos.service.name, "
     "ssl.cafile, ssl.certfile, ssl.keyfile, ssl.password, ssl.endpoint.identification.algorithm)"),
    ({"security.protocol": "sasl_ssl"},
     "client_properties['security.protocol']: 'sasl_ssl' is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER", "sasl.plain.username": "u",
      "sasl.plain.password": "p"},
     "client_properties['sasl.mechanism']: 'OAUTHBEARER' is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, GSSAPI "
     "(kafka-python authenticates with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 from a user name and a password, with "
     "GSSAPI from a Kerberos ticket)"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.plain.username": "u", "sasl.plain.password": "p"},
     "client_properties: security.protocol SASL_PLAINTEXT needs sasl.mechanism (PLAIN, SCRAM-SHA-256, "
     "SCRAM-SHA-512, GSSAPI)"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI", "sasl.plain.username": "u"},
     "client_properties['sasl.plain.username']: not used with sasl.mechanism GSSAPI (kafka-python takes the "
     "Kerberos credentials from this host's ticket cache or keytab)"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.plain.username": "u",
      "sasl.plain.password": "p", "sasl.kerberos.service.name": "kafka"},
     "client_properties['sasl.kerberos.service.name']: only used with sasl.mechanism GSSAPI, not SCRAM-SHA-512"),
    ({"sasl.kerberos.service.name": "kafka"},
     "client_properties['sasl.kerberos.service.name']: not used with security.protocol PLAINTEXT (SASL settings "
     "need SASL_PLAINTEXT or SASL_SSL)"),
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
    kwargs, errors = kc.client_kwargs(props, isfile=lambda path: True)
    assert errors == [message]


def test_missing_pem_file_is_named(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    _kwargs, errors = kc.client_kwargs({"security.protocol": "SSL", "ssl.cafile": str(ca),
                                        "ssl.certfile": str(tmp_path / "client.pem")})
    assert errors == ["client_properties['ssl.certfile']: %s is not a file on this host" % (tmp_path / "client.pem")]


# ---------------------------------------------------------------------------- GSSAPI, kafka-python's version, the caller

def importer(missing):
    def do_import(name):
        if name in missing:
            raise ImportError("No module named %r" % name)
    return do_import


def test_gssapi_asked_and_missing_gives_the_traceback():
    error = kc.gssapi_import_error({"sasl_mechanism": "GSSAPI"}, importer(["gssapi"]))
    assert error.startswith("Traceback") and "No module named 'gssapi'" in error


@pytest.mark.parametrize("kwargs, missing", [
    ({"sasl_mechanism": "GSSAPI"}, []),                   # installed
    ({"sasl_mechanism": "SCRAM-SHA-512"}, ["gssapi"]),    # not asked
    ({}, ["gssapi"]),
])
def test_gssapi_not_needed_or_there(kwargs, missing):
    assert kc.gssapi_import_error(kwargs, importer(missing)) is None


@pytest.mark.parametrize("version, error", [
    ("3.0.12", None),
    ("10.1", None),
    ("2.0.2", "kafka-python 2.0.2 on this host: this module needs 3.0 or later"),
    ("unknown", "kafka-python unknown on this host: this module needs 3.0 or later"),
])
def test_version_error(version, error):
    assert kc.version_error(version) == error


@pytest.mark.parametrize("props, who", [
    ({}, "User:ANONYMOUS"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.plain.username": "alice",
      "sasl.plain.password": "p"}, "User:alice"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI"}, "the Kerberos principal of this host's ticket"),
    ({"security.protocol": "SSL", "ssl.certfile": "/etc/kafka/admin.pem"},
     "the principal of the client certificate /etc/kafka/admin.pem"),
    ({"security.protocol": "SSL"}, "User:ANONYMOUS"),
])
def test_caller(props, who):
    kwargs, errors = kc.client_kwargs(props, isfile=lambda path: True)
    assert errors == [] and kc.caller(kwargs) == who


def test_argument_spec_keeps_client_properties_no_log():
    spec = kc.argument_spec()
    assert sorted(spec) == ["bootstrap_servers", "client_properties", "timeout"]
    assert spec["client_properties"]["no_log"] is True and spec["bootstrap_servers"]["required"] is True


@pytest.mark.parametrize("raw, servers, errors", [
    ("a:9092, b:9092", ["a:9092", "b:9092"], []),
    (["[::1]:9092"], ["[::1]:9092"], []),
    ("", [], ["bootstrap_servers: must list at least one host:port"]),
    ("kafka-a1", ["kafka-a1"], ["bootstrap_servers: 'kafka-a1' is not host:port"]),
    (9092, [], ["bootstrap_servers: 9092 is not a list or a comma-separated string of host:port"]),
])
def test_bootstrap_list(raw, servers, errors):
    assert kc.bootstrap_list(raw) == (servers, errors)


class FakeModule(object):
    def __init__(self, no_log_values):
        self.no_log_values = set(no_log_values)


def test_only_secret_client_properties_stay_no_log():
    props = {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.plain.username": "drill",
             "sasl.plain.password": "s3cret", "ssl.cafile": "/etc/kafka/ca.pem", "ssl.password": "keypass"}
    # what AnsibleModule puts in no_log_values for a no_log dict option: every value, and other options' secrets
    fake = FakeModule(list(props.values()) + ["another option's secret"])
    kc.mask_only_secrets(fake, props)
    assert fake.no_log_values == {"s3cret", "keypass", "another option's secret"}


# ---------------------------------------------------------------------------- start: every check before the cluster is asked

class Exited(Exception):
    pass


class StartModule(object):
    """What kafka_client.start uses of an AnsibleModule; fail_json stops it as the real one does."""

    def __init__(self, **params):
        self.params = dict(bootstrap_servers="kafka-a1:9092", client_properties={}, timeout=30)
        self.params.update(params)
        self.no_log_values = set(str(v) for v in self.params["client_properties"].values())

    def fail_json(self, **result):
        self.failed = result
        raise Exited()


def input_errors(servers_errors, property_errors):
    return list(servers_errors) + ["own: refused"] + kc.timeout_errors(0) + list(property_errors)


def test_start_reports_every_input_error_in_one_message_before_the_libraries():
    module = StartModule(bootstrap_servers="kafka-a1", client_properties={"security.protocol": "SASL_SSL"})
    with pytest.raises(Exited):
        kc.start(module, "Traceback: No module named 'kafka'", None, input_errors)
    assert module.failed == {"msg": "; ".join([
        "bootstrap_servers: 'kafka-a1' is not host:port",
        "own: refused",
        "timeout: 0 is not from 1 to 300 seconds",
        "client_properties: security.protocol SASL_SSL needs sasl.mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, "
        "GSSAPI)"])}


def no_input_errors(servers_errors, property_errors):
    return list(servers_errors) + list(property_errors)


def test_start_names_a_missing_kafka_python_then_an_old_one():
    module = StartModule()
    with pytest.raises(Exited):
        kc.start(module, "Traceback: No module named 'kafka'", None, no_input_errors)
    assert module.failed["msg"].startswith("Failed to import the required Python library (kafka-python) on ")
    assert module.failed["exception"] == "Traceback: No module named 'kafka'"
    with pytest.raises(Exited):
        kc.start(module, None, "2.0.2", no_input_errors)
    assert module.failed == {"msg": "kafka-python 2.0.2 on this host: this module needs 3.0 or later"}


def test_start_names_gssapi_missing_for_sasl_mechanism_gssapi(monkeypatch):
    checked = kc.gssapi_import_error
    monkeypatch.setattr(kc, "gssapi_import_error", lambda kwargs: checked(kwargs, importer(["gssapi"])))
    module = StartModule(client_properties={"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI"})
    with pytest.raises(Exited):
        kc.start(module, None, "3.0.12", no_input_errors)
    assert module.failed["msg"].startswith("Failed to import the required Python library (gssapi) on ")
    assert "for sasl.mechanism GSSAPI" in module.failed["msg"]
    assert "No module named 'gssapi'" in module.failed["exception"]


def test_start_gives_what_connect_needs_and_keeps_the_secrets_masked(monkeypatch):
    kafka_log = logging.getLogger("kafka")
    monkeypatch.setattr(kafka_log, "propagate", kafka_log.propagate)
    props = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.plain.username": "drill",
             "sasl.plain.password": "s3cret"}
    module = StartModule(bootstrap_servers="kafka-a1:9092,kafka-a2:9092", client_properties=props)
    servers, kwargs, connection_errors = kc.start(module, None, "3.0.12", no_input_errors, secrets=["SASL_PLAINTEXT"])
    kafka_log.removeHandler(connection_errors)
    assert servers == ["kafka-a1:9092", "kafka-a2:9092"]
    assert kwargs == {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN", "sasl_plain_username": "drill",
                      "sasl_plain_password": "s3cret"}
    assert isinstance(connection_errors, kc.ConnectionErrors)
    # the user name is shown; a secret of the module's own equal to a plain property is not
    assert module.no_log_values == {"s3cret", "SASL_PLAINTEXT"}


# ---------------------------------------------------------------------------- tries again while the cluster is not ready

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
    assert kc.Retry(5, clock=clock, sleep=clock.sleep)(call, 1, timeout_ms=2) == "answer"
    assert len(calls) == 4 and calls[0] == ((1,), {"timeout_ms": 2}) and clock.now == 1.5


def test_retry_gives_up_with_the_last_error_when_the_time_is_spent():
    clock = Clock()
    call, calls = flaky(100)
    with pytest.raises(Retriable, match=r"^not yet \(10\)$"):
        kc.Retry(5, clock=clock, sleep=clock.sleep)(call)
    assert len(calls) == 10 and clock.now == 4.5


def test_retry_raises_any_other_error_at_once():
    clock = Clock()
    call, calls = flaky(1, error=ValueError)
    with pytest.raises(ValueError):
        kc.Retry(5, clock=clock, sleep=clock.sleep)(call)
    assert len(calls) == 1 and clock.now == 0


# ---------------------------------------------------------------------------- why kafka-python could not connect

def logged(*messages):
    handler = kc.ConnectionErrors()
    for message in messages:
        handler.emit(logging.LogRecord("kafka.net.manager", logging.WARNING, __file__, 0, message, None, None))
    return handler.reason


CERT = ("KafkaConnectionError: Handshake failed: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
        "self-signed certificate (_ssl.c:1006)")
LOGIN = ("[Error 58] SaslAuthenticationFailedError: SaslAuthenticationFailedError: Authentication failed: "
         "Invalid username or password")
# kafka-python 3.0.12, when the bootstrap deadline passes during the SASL exchange
SASL_LATE = "KafkaTimeoutError: SASL Authentication timed out"


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
    # a loaded broker answered one login too late: the attempts it did answer tell more
    (["Bootstrap connection to bootstrap-0 failed: KafkaConnectionError: socket disconnected (backoff 0.06 secs)",
      "Bootstrap connection to bootstrap-0 failed: %s (backoff 0.12 secs)" % SASL_LATE],
     "KafkaConnectionError: socket disconnected"),
    (["Bootstrap connection to bootstrap-0 failed: %s (backoff 0.06 secs)" % SASL_LATE,
      "Bootstrap connection to bootstrap-0 failed: %s (backoff 0.12 secs)" % LOGIN], LOGIN),
    (["Bootstrap connection to bootstrap-0 failed: %s" % SASL_LATE], SASL_LATE),
])
def test_the_connection_error_kafka_python_logged(messages, reason):
    assert logged(*messages) == reason


# ---------------------------------------------------------------------------- the probe and the connection

def test_a_closed_port_is_named_with_its_reason():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    closed = "127.0.0.1:%d" % sock.getsockname()[1]
    sock.close()
    assert kc.unreachable_message([closed], 3, "PLAINTEXT", host="ctl") == \
        "bootstrap_servers: no bootstrap server answered from ctl within 3 s (%s: connection refused)" % closed


def test_a_server_that_answers_gives_no_message():
    assert kc.unreachable_message(["a:9092"], 3, "PLAINTEXT", check=lambda *args: {"reachable": True}) is None


class NoBootstrap(Exception):
    pass


def failing_factory(**kwargs):
    failing_factory.kwargs = kwargs
    raise NoBootstrap("Unable to bootstrap from ['127.0.0.1:9093']")


def test_connect_passes_the_options_and_names_what_kafka_python_logged():
    handler = kc.ConnectionErrors()
    handler.emit(logging.LogRecord("kafka", logging.WARNING, __file__, 0,
                                   "Bootstrap connection to bootstrap-0 failed: KafkaConnectionError: socket "
                                   "disconnected (backoff 0.06 secs)", None, None))
    kwargs = {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN", "sasl_plain_username": "u",
              "sasl_plain_password": "p"}
    with pytest.raises(kc.Failed) as failed:
        kc.connect(failing_factory, NoBootstrap, ["127.0.0.1:9093"], kwargs, "kafkaops-test", 5, 0, handler, group_id=None)
    assert str(failed.value) == (
        "bootstrap_servers: 127.0.0.1:9093 answered, but kafka-python could not connect to the cluster within 5 s: "
        "NoBootstrap: Unable to bootstrap from ['127.0.0.1:9093']; kafka-python logged: KafkaConnectionError: socket "
        "disconnected (as a broker closes the connection after a failed SASL login: check sasl.plain.username and "
        "sasl.plain.password)")
    assert failing_factory.kwargs == dict(kwargs, bootstrap_servers=["127.0.0.1:9093"], client_id="kafkaops-test",
                                          request_timeout_ms=5000, bootstrap_timeout_ms=1, group_id=None)


def test_close_quietly_closes_each_client_and_hides_nothing_else():
    closed = []

    class Client(object):
        def __init__(self, fails):
            self.fails = fails

        def close(self):
            closed.append(self)
            if self.fails:
                raise RuntimeError("already closed")

    first, second = Client(True), Client(False)
    kc.close_quietly(first, None, second)
    assert closed == [first, second]


# ---------------------------------------------------------------------------- Session

class Made(object):
    """A client a factory made: what it was given, and whether it was closed (in which order)."""

    closed = []

    def __init__(self, **kwargs):
        self.kwargs = kwargs

    def close(self):
        Made.closed.append(self)


def probe_taking(clock, seconds, reachable=True):
    def check(servers, timeout, protocol):
        clock.now += seconds
        return {"reachable": reachable, "failures": {} if reachable else {servers[0]: "connection refused"}}
    return check


@pytest.mark.parametrize("probe_seconds, bootstrap_ms", [(0, 10000), (3, 7000), (9.5, 500)])
def test_session_deadline_starts_before_the_probe(probe_seconds, bootstrap_ms):
    """The doc fragment: the probe and the connections share the timeout."""
    clock = Clock()
    session = kc.Session(["a:9092"], {}, 10, kc.ConnectionErrors(), "kafkaops-test", NoBootstrap,
                         check=probe_taking(clock, probe_seconds), clock=clock)
    with session:
        made = session.client(Made, group_id=None)
    assert made.kwargs["bootstrap_timeout_ms"] == bootstrap_ms
    assert made.kwargs["request_timeout_ms"] == 10000 and made.kwargs["group_id"] is None
    assert session.retry.seconds == 10


def test_session_refuses_a_cluster_that_does_not_answer_before_making_a_client():
    clock = Clock()
    session = kc.Session(["a:9092"], {}, 3, kc.ConnectionErrors(), "kafkaops-test", NoBootstrap,
                         check=probe_taking(clock, 3, reachable=False), clock=clock)
    with pytest.raises(kc.Failed, match=r"^bootstrap_servers: no bootstrap server answered from .* within 3 s "
                                        r"\(a:9092: connection refused\)$"):
        with session:
            session.client(Made)
    assert session.clients == []


@pytest.mark.parametrize("fails", [False, True])
def test_session_closes_its_clients_last_made_first_however_the_run_ends(fails):
    Made.closed = []
    clock = Clock()
    with pytest.raises(RuntimeError) if fails else contextlib.nullcontext():
        with kc.Session(["a:9092"], {}, 5, kc.ConnectionErrors(), "kafkaops-test", NoBootstrap,
                        check=probe_taking(clock, 0), clock=clock) as session:
            admin, consumer = session.client(Made), session.client(Made)
            if fails:
                raise RuntimeError("the run failed")
    assert Made.closed == [consumer, admin]
