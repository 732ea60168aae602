# -*- coding: utf-8 -*-
"""Unit tests for plugins/module_utils/kafka/tls.py: the broker's TLS properties and their refusals.

tests/unit/test_kafka_broker_tls.py runs the same rules through the role's preflight, renders what
the role writes and proves with a real key pair that the rendered stores serve TLS.
"""

from __future__ import annotations

import os

import pytest
import yaml

from ansible_collections.kafkaops.mirrormaker.plugins.filter import kafka as kafka_filter
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import tls as kt

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
KEYSTORE = "/etc/kafka/tls/keystore.pem"
TRUSTSTORE = "/etc/kafka/tls/truststore.pem"
CONTROLLER = {"name": "CONTROLLER", "port": 9093, "protocol": "SSL"}
LISTENERS = [{"name": "PLAIN", "port": 9092, "protocol": "PLAINTEXT"},
             {"name": "CLIENT", "port": 9094, "protocol": "SASL_SSL"},
             {"name": "INTERNAL", "port": 9095, "protocol": "SSL"},
             {"name": "SASL", "port": 9096, "protocol": "SASL_PLAINTEXT"}]
BOTH = ["broker", "controller"]
# What the files' bodies hold: never in a message.
MARKER = "S3CR3TKEYBODY"


def block(label, body=MARKER):
    return "-----BEGIN %s-----\n%s\n-----END %s-----\n" % (label, body, label)


KEY = block("PRIVATE KEY")
CERT = block("CERTIFICATE", "Q0VSVA==")


def tls_listeners(roles=None, listeners=None, controller=None):
    return kt.tls_listeners(LISTENERS if listeners is None else listeners, controller or CONTROLLER, roles or BOTH)


@pytest.fixture
def stores(tmp_path):
    """{name: path} of PEM files on the 'controller'; the key store and trust store a broker needs."""
    def write(name, text):
        path = tmp_path / name
        path.write_text(text)
        return str(path)
    return {"keystore": write("keystore.pem", KEY + CERT + CERT), "truststore": write("ca.pem", CERT),
            "write": write}


def tls(stores, **extra):
    return dict({"keystore_src": stores["keystore"], "truststore_src": stores["truststore"]}, **extra)


def faults(settings, properties=None, listeners=None):
    found = kt.tls_faults(settings, tls_listeners() if listeners is None else listeners, properties or {},
                          KEYSTORE, TRUSTSTORE)
    assert not any(MARKER in f for f in found), found
    return found


def test_listeners_in_scope_served_or_dialled():
    assert tls_listeners() == [
        {"name": "CLIENT", "protocol": "SASL_SSL", "controller": False, "served": True},
        {"name": "INTERNAL", "protocol": "SSL", "controller": False, "served": True},
        {"name": "CONTROLLER", "protocol": "SSL", "controller": True, "served": True}]
    # A controller-only node serves no client listener; a broker-only node dials its controllers.
    assert [item["name"] for item in tls_listeners(roles=["controller"])] == ["CONTROLLER"]
    assert tls_listeners(roles=["broker"])[-1] == {"name": "CONTROLLER", "protocol": "SSL", "controller": True,
                                                   "served": False}
    assert tls_listeners(controller=dict(CONTROLLER, protocol="SASL_PLAINTEXT"), listeners=LISTENERS[:1]) == []


def test_properties_for_every_tls_listener_with_the_prefixed_client_auth_of_sasl_ssl():
    settings = {"keystore_src": "/k.pem", "truststore_src": "/ca.pem", "key_password": "kp", "client_auth": "required"}
    assert kt.tls_properties(settings, KEYSTORE, TRUSTSTORE, tls_listeners()) == {
        "ssl.keystore.type": "PEM", "ssl.keystore.location": KEYSTORE,
        "ssl.truststore.type": "PEM", "ssl.truststore.location": TRUSTSTORE,
        "ssl.key.password": "kp", "ssl.client.auth": "required",
        # Kafka ignores the global ssl.client.auth on a SASL_SSL listener.
        "listener.name.client.ssl.client.auth": "required"}
    # No password for an unencrypted key; client_auth defaults to none; a dialled listener gets no server key.
    assert kt.tls_properties({"keystore_src": "/k.pem", "truststore_src": "/ca.pem"}, KEYSTORE, TRUSTSTORE,
                             tls_listeners(roles=["broker"], controller=dict(CONTROLLER, protocol="SASL_SSL"))) == {
        "ssl.keystore.type": "PEM", "ssl.keystore.location": KEYSTORE,
        "ssl.truststore.type": "PEM", "ssl.truststore.location": TRUSTSTORE,
        "ssl.client.auth": "none", "listener.name.client.ssl.client.auth": "none"}


@pytest.mark.parametrize("value", [{}, None, ""])
def test_empty_tls_renders_nothing(value):
    assert kt.tls_properties(value, KEYSTORE, TRUSTSTORE, tls_listeners()) == {}


def test_a_complete_setting_passes(stores):
    assert faults(tls(stores, client_auth="requested")) == []
    encrypted = stores["write"]("encrypted.pem", block("ENCRYPTED PRIVATE KEY") + CERT)
    assert faults(tls(stores, keystore_src=encrypted, key_password="kp")) == []
    # Other ssl.* keys (protocols, the host name check, a listener's own store) stay the user's.
    assert faults(tls(stores), {"ssl.enabled.protocols": "TLSv1.3", "ssl.endpoint.identification.algorithm": "",
                                "listener.name.internal.ssl.keystore.location": "/etc/kafka/internal.p12"}) == []


@pytest.mark.parametrize("extra, expected", [
    ({"keystore_src": ""},
     "kafka_broker_tls.keystore_src: required when kafka_broker_tls is set (the PEM key store: the broker's private "
     "key, then its certificate chain; a file on the controller, copied to the host)"),
    ({"keystore_src": "files/broker.pem"},
     "kafka_broker_tls.keystore_src: 'files/broker.pem' is not an absolute path on the controller"),
    ({"keystore_src": "/nonexistent/broker.pem"},
     "kafka_broker_tls.keystore_src: /nonexistent/broker.pem is not a file on the controller"),
    ({"keystore_src": "DIR"}, "kafka_broker_tls.keystore_src: DIR is not a file on the controller"),
    ({"keystore_src": ("not-pem.pem", MARKER + "\n")},
     "kafka_broker_tls.keystore_src: FILE is not PEM (no -----BEGIN line); Kafka's PEM key store is the private key "
     "(PKCS#8) followed by the certificate chain, in one file"),
    ({"keystore_src": ("cert-only.pem", CERT)},
     "kafka_broker_tls.keystore_src: FILE holds no private key; put the broker's key (PKCS#8, BEGIN PRIVATE KEY) "
     "before its certificate chain"),
    ({"keystore_src": ("two-keys.pem", KEY + KEY + CERT)},
     "kafka_broker_tls.keystore_src: FILE holds 2 private keys; Kafka's PEM key store takes exactly one"),
    ({"keystore_src": ("pkcs1.pem", block("RSA PRIVATE KEY") + CERT)},
     "kafka_broker_tls.keystore_src: FILE holds a RSA PRIVATE KEY block, which Kafka cannot read: it takes PKCS#8 "
     "keys only (BEGIN PRIVATE KEY or BEGIN ENCRYPTED PRIVATE KEY); convert it with openssl pkcs8 -topk8 (-nocrypt "
     "for an unencrypted key)"),
    ({"keystore_src": ("key-only.pem", KEY)},
     "kafka_broker_tls.keystore_src: FILE holds no certificate (BEGIN CERTIFICATE); append the broker's certificate "
     "chain after its key"),
    ({"keystore_src": ("encrypted.pem", block("ENCRYPTED PRIVATE KEY") + CERT)},
     "kafka_broker_tls.key_password: required, FILE holds an encrypted private key (BEGIN ENCRYPTED PRIVATE KEY)"),
    ({"key_password": "kp"},
     "kafka_broker_tls.key_password: set, but KEYSTORE holds an unencrypted private key (BEGIN PRIVATE KEY), which "
     "Kafka would then fail to decrypt; remove key_password or encrypt the key (openssl pkcs8 -topk8)"),
    ({"truststore_src": None},
     "kafka_broker_tls.truststore_src: required when kafka_broker_tls is set (the PEM CA certificates that brokers "
     "and clients are verified with; a file on the controller, copied to the host)"),
    ({"truststore_src": "/nonexistent/ca.pem"},
     "kafka_broker_tls.truststore_src: /nonexistent/ca.pem is not a file on the controller"),
    ({"truststore_src": ("ca.der", "\x30\x82\x01\x0a" + MARKER)},
     "kafka_broker_tls.truststore_src: FILE holds no certificate (no -----BEGIN CERTIFICATE----- line); give the PEM "
     "CA certificates that signed the brokers' (and clients') certificates"),
    ({"truststore_src": ("ca-and-key.pem", CERT + KEY)},
     "kafka_broker_tls.truststore_src: FILE holds a private key; the trust store is copied readable by all (0644) "
     "and shown in --diff: give the CA certificates only"),
], ids=["keystore-empty", "keystore-relative", "keystore-missing", "keystore-directory", "keystore-not-pem",
        "keystore-no-key", "keystore-two-keys", "keystore-pkcs1", "keystore-no-certificate",
        "encrypted-key-without-password", "password-for-a-plain-key", "truststore-unset", "truststore-missing",
        "truststore-not-pem", "truststore-with-a-key"])
def test_each_fault_is_one_message(stores, tmp_path, extra, expected):
    settings = tls(stores)
    for key, value in extra.items():
        if isinstance(value, tuple):
            value = stores["write"](*value)
            expected = expected.replace("FILE", value)
        elif value == "DIR":
            value = str(tmp_path)
            expected = expected.replace("DIR", value)
        settings[key] = value
    expected = expected.replace("KEYSTORE", stores["keystore"])
    assert faults(settings) == [expected]


def test_unreadable_store_is_named_not_shown(stores, monkeypatch):
    def refuse(path):
        raise PermissionError(13, "Permission denied", path)
    monkeypatch.setattr(kt, "pem_labels", refuse)
    assert faults(tls(stores))[0] == ("kafka_broker_tls.keystore_src: %s cannot be read on the controller "
                                      "(Permission denied)" % stores["keystore"])


def test_pem_labels_reads_only_the_begin_lines(stores):
    text = "Bag Attributes\n    localKeyID: 01\n" + KEY + "subject=CN=k1\n" + CERT.replace("\n", "\r\n") + CERT
    assert kt.pem_labels(stores["write"]("bag.pem", text)) == ["PRIVATE KEY", "CERTIFICATE", "CERTIFICATE"]


def test_tls_set_without_a_tls_listener(stores):
    plain = tls_listeners(listeners=LISTENERS[:1], controller=dict(CONTROLLER, protocol="PLAINTEXT"))
    assert faults(tls(stores), listeners=plain) == [
        "kafka_broker_tls: set, but none of this host's listeners is SSL or SASL_SSL (kafka_broker_listeners on a "
        "host with the broker role, kafka_broker_controller_listener on every host); make one SSL or SASL_SSL, or "
        "leave kafka_broker_tls empty on this host"]


@pytest.mark.parametrize("props, listeners, expected", [
    ({}, None,
     ["kafka_broker_tls: empty, but listeners CLIENT (SASL_SSL), INTERNAL (SSL), CONTROLLER (SSL) serve TLS and "
      "kafka_broker_properties gives no key store there (ssl.keystore.location, or "
      "listener.name.<listener>.ssl.keystore.location); set kafka_broker_tls {keystore_src, truststore_src}, or give "
      "the ssl.* keys in kafka_broker_properties"]),
    ({"listener.name.client.ssl.keystore.location": "/etc/kafka/client.p12",
      "listener.name.controller.ssl.keystore.key": "-----BEGIN PRIVATE KEY-----"}, None,
     ["kafka_broker_tls: empty, but listener INTERNAL (SSL) serves TLS and kafka_broker_properties gives no key store "
      "there (ssl.keystore.location, or listener.name.<listener>.ssl.keystore.location); set kafka_broker_tls "
      "{keystore_src, truststore_src}, or give the ssl.* keys in kafka_broker_properties"]),
    ({"ssl.keystore.location": "/etc/kafka/broker.p12"}, None, []),
    ({}, "broker-only",
     ["kafka_broker_tls: empty, but listeners CLIENT (SASL_SSL), INTERNAL (SSL) serve TLS and kafka_broker_properties "
      "gives no key store there (ssl.keystore.location, or listener.name.<listener>.ssl.keystore.location); set "
      "kafka_broker_tls {keystore_src, truststore_src}, or give the ssl.* keys in kafka_broker_properties",
      "kafka_broker_tls: empty, but this host dials listener CONTROLLER (SSL) as a client and kafka_broker_properties "
      "gives no trust store for it (ssl.truststore.location); set kafka_broker_tls {keystore_src, truststore_src}, or "
      "give the ssl.* keys in kafka_broker_properties"]),
    # A host that only dials the controller listener needs to trust it, not a key of its own.
    ({"ssl.keystore.location": "/etc/kafka/broker.p12", "ssl.truststore.location": "/etc/kafka/ca.p12"},
     "broker-only", []),
    ({"listener.name.client.ssl.keystore.location": "/k", "listener.name.internal.ssl.keystore.location": "/k",
      "listener.name.controller.ssl.truststore.location": "/etc/kafka/ca.p12"}, "broker-only", []),
    ({"ssl.keystore.location": KEYSTORE, "ssl.truststore.location": "/etc/kafka/ca.pem",
      "listener.name.internal.ssl.truststore.location": TRUSTSTORE}, None,
     ["kafka_broker_properties: listener.name.internal.ssl.truststore.location names %s, the file the role keeps "
      "for kafka_broker_tls and removes while it is empty; keep hand-made stores elsewhere, or set kafka_broker_tls"
      % TRUSTSTORE,
      "kafka_broker_properties: ssl.keystore.location names %s, the file the role keeps for kafka_broker_tls and "
      "removes while it is empty; keep hand-made stores elsewhere, or set kafka_broker_tls" % KEYSTORE]),
    ({}, "plaintext", []),
], ids=["no-key-store", "listener-key-stores-by-hand", "global-key-store-by-hand", "broker-only-dials-the-controller",
        "broker-only-by-hand", "broker-only-listener-keys", "role-paths-by-hand", "no-tls-listener"])
def test_tls_listeners_without_tls(props, listeners, expected):
    scope = {None: tls_listeners(), "broker-only": tls_listeners(roles=["broker"]),
             "plaintext": tls_listeners(listeners=LISTENERS[:1], controller=dict(CONTROLLER, protocol="PLAINTEXT"))}
    assert faults({}, props, scope[listeners]) == expected


def test_keys_the_variable_sets_or_kafka_refuses_beside_it(stores):
    props = {"ssl.keystore.location": "/etc/kafka/broker.p12", "ssl.client.auth": "required",
             "listener.name.client.ssl.client.auth": "required", "ssl.keystore.password": "changeit",
             "ssl.truststore.password": "changeit", "ssl.truststore.certificates": "x"}
    found = faults(tls(stores), props)
    assert found == [
        "kafka_broker_properties: listener.name.client.ssl.client.auth is set by kafka_broker_tls; remove it from "
        "kafka_broker_properties (one home for the broker's TLS)",
        "kafka_broker_properties: ssl.client.auth is set by kafka_broker_tls; remove it from kafka_broker_properties "
        "(one home for the broker's TLS)",
        "kafka_broker_properties: ssl.keystore.location is set by kafka_broker_tls; remove it from "
        "kafka_broker_properties (one home for the broker's TLS)",
        "kafka_broker_properties: ssl.keystore.password cannot go with kafka_broker_tls: Kafka takes no store password "
        "for a PEM key store (an encrypted key's password is kafka_broker_tls.key_password); remove it",
        "kafka_broker_properties: ssl.truststore.certificates cannot go with kafka_broker_tls: Kafka refuses in-line "
        "trusted certificates beside a trust store file; remove it",
        "kafka_broker_properties: ssl.truststore.password cannot go with kafka_broker_tls: Kafka takes no store "
        "password for a PEM trust store; remove it"]
    assert not any("changeit" in f for f in found)


def test_several_faults_each_one_message(stores):
    settings = {"keystore_src": "/nonexistent/k.pem", "truststore_src": stores["keystore"], "key_password": "kp-s3cret"}
    found = faults(settings, {"ssl.key.password": "kp-s3cret"})
    assert [f.split(":")[0] for f in found] == ["kafka_broker_tls.keystore_src", "kafka_broker_tls.truststore_src",
                                                "kafka_broker_properties"]
    assert not any("kp-s3cret" in f for f in found)


def test_the_argument_spec_knows_the_same_keys_and_choices():
    """Unknown keys and a client_auth outside the three are refused by the argument spec: it must match."""
    with open(os.path.join(REPO, "roles/kafka_broker/meta/argument_specs.yml")) as handle:
        spec = yaml.safe_load(handle)["argument_specs"]["main"]["options"]["kafka_broker_tls"]
    assert tuple(spec["options"]) == kt.KEYS
    assert tuple(spec["options"]["client_auth"]["choices"]) == kt.CLIENT_AUTH
    assert spec["options"]["client_auth"]["default"] == kt.DEFAULT_CLIENT_AUTH
    assert spec["options"]["key_password"]["no_log"] is True


def test_the_filters_are_the_same_functions(stores):
    scope = kafka_filter.kafka_tls_listeners(LISTENERS, CONTROLLER, BOTH)
    assert scope == tls_listeners()
    assert kafka_filter.kafka_tls_properties(tls(stores), KEYSTORE, TRUSTSTORE, scope) == kt.tls_properties(
        tls(stores), KEYSTORE, TRUSTSTORE, scope)
    filters = kafka_filter.FilterModule().filters()
    assert [filters[name] for name in ("kafka_tls_listeners", "kafka_tls_properties")] == [
        kafka_filter.kafka_tls_listeners, kafka_filter.kafka_tls_properties]
    assert "kafka_tls_faults" not in filters  # the role's preflight runs them (kafka/broker_rules.py)


SASL_SSL = {"name": "SASL_SSL", "port": 9094, "protocol": "SASL_SSL"}
PLAIN_CONTROLLER = {"name": "CONTROLLER", "port": 9093, "protocol": "SASL_PLAINTEXT"}


@pytest.mark.parametrize("listeners, controller, roles, expected", [
    # the secured lab's brokers: one SASL_SSL client listener, a controller listener without TLS
    ([SASL_SSL], PLAIN_CONTROLLER, BOTH,
     ["listener.name.sasl_ssl.ssl.keystore.location=" + KEYSTORE,
      "listener.name.sasl_ssl.ssl.truststore.location=" + TRUSTSTORE]),
    (LISTENERS, PLAIN_CONTROLLER, ["broker"],
     ["listener.name.client.ssl.keystore.location=" + KEYSTORE, "listener.name.client.ssl.truststore.location=" + TRUSTSTORE,
      "listener.name.internal.ssl.keystore.location=" + KEYSTORE,
      "listener.name.internal.ssl.truststore.location=" + TRUSTSTORE]),
    # a TLS controller listener, served or only dialled: a restart
    ([SASL_SSL], CONTROLLER, BOTH, []),
    ([SASL_SSL], CONTROLLER, ["broker"], []),
    (LISTENERS, CONTROLLER, ["controller"], []),
    # no TLS listener at all
    (LISTENERS[:1], PLAIN_CONTROLLER, BOTH, []),
])
def test_a_broker_reads_its_stores_again_unless_a_controller_listener_uses_them(
        listeners, controller, roles, expected):
    found = kt.tls_listeners(listeners, controller, roles)
    assert kt.reload_configs(found, KEYSTORE, TRUSTSTORE) == expected
    assert kafka_filter.kafka_tls_reload_configs(found, KEYSTORE, TRUSTSTORE) == expected
