# -*- coding: utf-8 -*-
"""Unit tests for plugins/module_utils/kafka/probe_config.py: the health probe logs in as the broker does.

tests/unit/test_kafka_broker_probe.py renders probe.properties through the role, and
tests/live/test_broker_probe.py runs kafka-broker-api-versions.sh with these settings against a
real secured broker.
"""

from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.filter import kafka as kafka_filter
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import kerberos as kafka_kerberos
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import probe_config as kpc
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import tls as kafka_tls

SECRET = "adm1n-s3cret"
SCRAM_LOGIN = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="%s";' % SECRET
PLAIN_LOGIN = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="%s" '
               'user_admin="%s";' % (SECRET, SECRET))
KEYTAB = "/etc/kafka/kafka.keytab"
PRINCIPAL = "kafka/k1.example.com@EXAMPLE.COM"
KRB5_LOGIN = kafka_kerberos.jaas_value(PRINCIPAL, KEYTAB)
INTERNAL = {"name": "INTERNAL", "port": 9094, "protocol": "SASL_PLAINTEXT"}


def broker(**extra):
    """The merged server.properties of a broker whose inter-broker listener is INTERNAL."""
    props = {"node.id": 1, "process.roles": "broker,controller", "inter.broker.listener.name": "INTERNAL",
             "controller.listener.names": "CONTROLLER",
             "listener.security.protocol.map": "INTERNAL:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
             "sasl.enabled.mechanisms": "SCRAM-SHA-512,GSSAPI",
             "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
             "listener.name.internal.scram-sha-512.sasl.jaas.config": SCRAM_LOGIN}
    props.update(extra)
    return {k: v for k, v in props.items() if v is not None}


def config(props, listener=None, krb5_conf=""):
    return kpc.probe_config(props, listener or INTERNAL, krb5_conf)


def test_plaintext_needs_nothing():
    plain = {"name": "PLAIN", "protocol": "PLAINTEXT"}
    assert config(broker(), plain) == {"properties": {}, "environment": {}, "refusal": ""}


def test_scram_inter_broker_login_is_the_brokers_own():
    assert config(broker()) == {"properties": {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
                                               "sasl.jaas.config": SCRAM_LOGIN},
                                "environment": {}, "refusal": ""}


def test_gssapi_login_from_the_role_keys_with_service_and_krb5_conf():
    sasl = kafka_kerberos.sasl_listeners([INTERNAL], {"name": "CONTROLLER", "protocol": "PLAINTEXT"},
                                         ["broker", "controller"], {"sasl.enabled.mechanisms": "GSSAPI"})
    role_keys = kafka_kerberos.kerberos_properties({"principal": PRINCIPAL, "service_name": "kafka"}, KEYTAB, sasl)
    props = broker(**{"sasl.enabled.mechanisms": "GSSAPI", "sasl.mechanism.inter.broker.protocol": None,
                      "listener.name.internal.scram-sha-512.sasl.jaas.config": None}, **role_keys)
    assert config(props, krb5_conf="/etc/krb5.conf") == {
        "properties": {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI", "sasl.jaas.config": KRB5_LOGIN,
                       "sasl.kerberos.service.name": "kafka"},
        "environment": {"KAFKA_OPTS": "-Djava.security.krb5.conf=/etc/krb5.conf"}, "refusal": ""}
    # No krb5.conf given: the JVM's default (/etc/krb5.conf) serves, nothing in the environment.
    assert config(props)["environment"] == {}


def test_gssapi_service_name_listener_key_first_then_the_principals_primary():
    props = broker(**{"sasl.mechanism.inter.broker.protocol": "GSSAPI",
                      "listener.name.internal.gssapi.sasl.jaas.config": KRB5_LOGIN})
    assert config(props)["properties"]["sasl.kerberos.service.name"] == "kafka"
    props["listener.name.internal.gssapi.sasl.kerberos.service.name"] = "kfk"
    props["sasl.kerberos.service.name"] = "other"
    assert config(props)["properties"]["sasl.kerberos.service.name"] == "kfk"


def test_a_listener_that_is_not_inter_broker_uses_the_first_mechanism_with_a_login():
    props = broker(**{"listener.name.client.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
                      "listener.name.client.scram-sha-256.sasl.jaas.config": SCRAM_LOGIN,
                      "listener.name.client.scram-sha-512.sasl.jaas.config": SCRAM_LOGIN})
    result = config(props, {"name": "CLIENT", "protocol": "SASL_PLAINTEXT"})
    assert result["properties"]["sasl.mechanism"] == "SCRAM-SHA-256"


def test_plain_login_and_the_controller_listener_mechanism():
    props = broker(**{"listener.security.protocol.map": "INTERNAL:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
                      "sasl.enabled.mechanisms": "PLAIN", "sasl.mechanism.controller.protocol": "PLAIN",
                      "listener.name.controller.plain.sasl.jaas.config": PLAIN_LOGIN})
    result = config(props, {"name": "CONTROLLER", "protocol": "SASL_PLAINTEXT"})
    assert result["properties"] == {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                                    "sasl.jaas.config": PLAIN_LOGIN}


def test_sasl_ssl_with_a_pem_trust_store_listener_keys_first():
    props = broker(**{"ssl.truststore.type": "JKS", "ssl.truststore.location": "/etc/kafka/global.jks",
                      "ssl.truststore.password": "ts-secret",
                      "listener.name.internal.ssl.truststore.type": "PEM",
                      "listener.name.internal.ssl.truststore.location": "/etc/kafka/ca.pem",
                      "ssl.keystore.location": "/etc/kafka/broker.p12", "ssl.keystore.password": "ks-secret",
                      "ssl.endpoint.identification.algorithm": ""})
    result = config(props, dict(INTERNAL, protocol="SASL_SSL"))
    assert result["properties"] == {
        "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": SCRAM_LOGIN,
        "ssl.truststore.type": "PEM", "ssl.truststore.location": "/etc/kafka/ca.pem",
        # the listener's own trust store has no password; the global one's is Kafka's fallback for the key
        "ssl.truststore.password": "ts-secret",
        # the broker turned host name checks off for its own client, so the probe does too
        "ssl.endpoint.identification.algorithm": ""}


def test_ssl_presents_the_key_store_only_when_client_auth_is_required():
    props = broker(**{"ssl.truststore.location": "/etc/kafka/ca.p12", "ssl.truststore.password": "ts",
                      "ssl.keystore.type": "PKCS12", "ssl.keystore.location": "/etc/kafka/broker.p12",
                      "ssl.keystore.password": "ks", "ssl.key.password": "kp"})
    ssl = {"name": "INTERNAL", "protocol": "SSL"}
    assert config(props, ssl)["properties"] == {"security.protocol": "SSL", "ssl.truststore.location": "/etc/kafka/ca.p12",
                                                "ssl.truststore.password": "ts"}
    props["listener.name.internal.ssl.client.auth"] = "required"
    assert config(props, ssl)["properties"] == {
        "security.protocol": "SSL", "ssl.truststore.location": "/etc/kafka/ca.p12", "ssl.truststore.password": "ts",
        "ssl.keystore.type": "PKCS12", "ssl.keystore.location": "/etc/kafka/broker.p12", "ssl.keystore.password": "ks",
        "ssl.key.password": "kp"}
    del props["ssl.keystore.location"]
    result = config(props, ssl)
    assert result["properties"] is None
    assert result["refusal"] == (
        "kafka_broker_properties: listener INTERNAL (SSL) requires client certificates (ssl.client.auth=required), "
        "but server.properties has no key store the health probe could present "
        "(listener.name.internal.ssl.keystore.location or ssl.keystore.location)")


@pytest.mark.parametrize("client_auth, presented", [("none", False), ("requested", False), ("required", True)])
def test_tls_from_the_role_keys_on_sasl_ssl_and_ssl(client_auth, presented):
    """kafka_broker_tls's keys: the trust store always, the key store (and key password) when certificates are required."""
    listeners = [dict(INTERNAL, protocol="SASL_SSL"), {"name": "REPL", "port": 9096, "protocol": "SSL"}]
    controller = {"name": "CONTROLLER", "port": 9093, "protocol": "SSL"}
    role_keys = kafka_tls.tls_properties(
        {"keystore_src": "/srv/k1.pem", "truststore_src": "/srv/ca.pem", "key_password": "kp-secret",
         "client_auth": client_auth}, "/etc/kafka/tls/keystore.pem", "/etc/kafka/tls/truststore.pem",
        kafka_tls.tls_listeners(listeners, controller, ["broker", "controller"]))
    props = broker(**role_keys)
    trust = {"ssl.truststore.type": "PEM", "ssl.truststore.location": "/etc/kafka/tls/truststore.pem"}
    keys = {"ssl.keystore.type": "PEM", "ssl.keystore.location": "/etc/kafka/tls/keystore.pem",
            "ssl.key.password": "kp-secret"} if presented else {}
    # SASL_SSL: Kafka reads ssl.client.auth there only listener-prefixed, which the role renders, and so does the probe.
    assert config(props, listeners[0]) == {"properties": dict(
        {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": SCRAM_LOGIN},
        **trust, **keys), "environment": {}, "refusal": ""}
    assert config(props, listeners[1])["properties"] == dict({"security.protocol": "SSL"}, **trust, **keys)
    assert config(props, controller)["properties"] == dict({"security.protocol": "SSL"}, **trust, **keys)


@pytest.mark.parametrize("extra, listener, refusal", [
    ({"listener.name.internal.scram-sha-512.sasl.jaas.config": None}, None,
     "kafka_broker_properties: the health probe logs in to listener INTERNAL (SASL_PLAINTEXT) as the broker does, "
     "with SCRAM-SHA-512 (sasl.mechanism.inter.broker.protocol is SCRAM-SHA-512), but server.properties has no "
     "listener.name.internal.scram-sha-512.sasl.jaas.config (a login only in kafka_broker_jaas_config's KafkaServer "
     "section serves the broker, not a client); set listener.name.internal.scram-sha-512.sasl.jaas.config in "
     "kafka_broker_properties"),
    ({"sasl.mechanism.inter.broker.protocol": None}, None,
     "kafka_broker_kerberos: the health probe logs in to listener INTERNAL (SASL_PLAINTEXT) as the broker does, "
     "with GSSAPI (sasl.mechanism.inter.broker.protocol is not set (Kafka's default GSSAPI)), but server.properties "
     "has no listener.name.internal.gssapi.sasl.jaas.config (a login only in kafka_broker_jaas_config's KafkaServer "
     "section serves the broker, not a client); set kafka_broker_kerberos {principal, keytab_src}"),
    ({"sasl.enabled.mechanisms": "PLAIN"}, None,
     "kafka_broker_properties: the health probe logs in to listener INTERNAL (SASL_PLAINTEXT) with SCRAM-SHA-512 "
     "(sasl.mechanism.inter.broker.protocol is SCRAM-SHA-512), which the listener does not offer "
     "(sasl.enabled.mechanisms: PLAIN); offer it there or name one it offers"),
    ({}, {"name": "CLIENT", "protocol": "SASL_SSL"},
     "kafka_broker_properties: the health probe logs in to listener CLIENT (SASL_SSL) as the broker does, but the "
     "broker has a login for none of the mechanisms it offers (sasl.enabled.mechanisms: SCRAM-SHA-512, GSSAPI): no "
     "listener.name.client.scram-sha-512.sasl.jaas.config or listener.name.client.gssapi.sasl.jaas.config; set one "
     "in kafka_broker_properties (kafka_broker_kerberos for GSSAPI)"),
    ({"sasl.enabled.mechanisms": "OAUTHBEARER", "sasl.mechanism.inter.broker.protocol": "OAUTHBEARER"}, None,
     "kafka_broker_listeners: the health probe logs in to listener INTERNAL (SASL_PLAINTEXT) with OAUTHBEARER "
     "(sasl.mechanism.inter.broker.protocol is OAUTHBEARER), but it can log in only with GSSAPI, PLAIN, "
     "SCRAM-SHA-256, SCRAM-SHA-512, whose broker login line is also a client's; make the probe listener's broker "
     "login one of those"),
    ({"sasl.mechanism.inter.broker.protocol": "GSSAPI",
      "listener.name.internal.gssapi.sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required;"}, None,
     "kafka_broker_kerberos: the health probe logs in to listener INTERNAL (SASL_PLAINTEXT) with GSSAPI, but "
     "neither sasl.kerberos.service.name nor a principal in listener.name.internal.gssapi.sasl.jaas.config names "
     "the service to ask tickets for; set service_name in kafka_broker_kerberos"),
    ({}, {"name": "INTERNAL", "protocol": "SASL"},
     "kafka_broker_listeners: the health probe's listener INTERNAL has protocol 'SASL', not one of PLAINTEXT, SSL, "
     "SASL_PLAINTEXT, SASL_SSL"),
], ids=["scram-login-only-in-jaas-file", "default-gssapi-without-login", "mechanism-not-offered",
        "no-login-for-any-offered", "oauthbearer", "gssapi-without-service", "unknown-protocol"])
def test_refusals_name_the_variable_and_never_a_secret(extra, listener, refusal):
    result = config(broker(**extra), listener)
    assert result == {"properties": None, "environment": {}, "refusal": refusal}
    assert SECRET not in refusal
    assert kpc.probe_properties(broker(**extra), listener or INTERNAL) is None


def test_the_filter_is_the_same_function():
    assert kafka_filter.kafka_probe_config(broker(), INTERNAL, "") == config(broker())
    assert kafka_filter.FilterModule().filters()["kafka_probe_config"] is kafka_filter.kafka_probe_config
