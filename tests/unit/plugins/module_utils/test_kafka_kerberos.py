# -*- coding: utf-8 -*-
"""Unit tests for plugins/module_utils/kafka/kerberos.py: the broker's Kerberos login and its refusals.

tests/unit/test_kafka_broker_kerberos.py runs the same rules through the role's preflight and
renders what the role writes.
"""

from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.filter import kafka as kafka_filter
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import kerberos as kk

PRINCIPAL = "kafka/broker1.example.com@EXAMPLE.COM"
KEYTAB = "/etc/kafka/kafka.keytab"
CONTROLLER = {"name": "CONTROLLER", "port": 9093, "protocol": "SASL_PLAINTEXT"}
LISTENERS = [{"name": "PLAIN", "port": 9092, "protocol": "PLAINTEXT"},
             {"name": "CLIENT", "port": 9094, "protocol": "SASL_SSL"},
             {"name": "INTERNAL", "port": 9095, "protocol": "SASL_PLAINTEXT"}]
BOTH = ["broker", "controller"]


def sasl(properties, roles=None, listeners=None, controller=None):
    return kk.sasl_listeners(LISTENERS if listeners is None else listeners, controller or CONTROLLER,
                             roles or BOTH, properties)


@pytest.fixture
def keytab(tmp_path):
    path = tmp_path / "kafka.keytab"
    path.write_bytes(b"\x05\x02not-a-real-key")
    return str(path)


def kerberos(keytab, **extra):
    return dict({"principal": PRINCIPAL, "keytab_src": keytab}, **extra)


def test_listeners_in_scope_and_their_mechanisms():
    props = {"sasl.enabled.mechanisms": "SCRAM-SHA-512", "listener.name.internal.sasl.enabled.mechanisms": "GSSAPI"}
    assert sasl(props) == [
        {"name": "CLIENT", "protocol": "SASL_SSL", "mechanisms": ["SCRAM-SHA-512"], "source": "sasl.enabled.mechanisms",
         "controller": False},
        {"name": "INTERNAL", "protocol": "SASL_PLAINTEXT", "mechanisms": ["GSSAPI"],
         "source": "listener.name.internal.sasl.enabled.mechanisms", "controller": False},
        {"name": "CONTROLLER", "protocol": "SASL_PLAINTEXT", "mechanisms": ["SCRAM-SHA-512"],
         "source": "sasl.enabled.mechanisms", "controller": True}]
    # A controller-only node serves none of the client listeners; a PLAINTEXT controller listener is no SASL one.
    assert [s["name"] for s in sasl(props, roles=["controller"])] == ["CONTROLLER"]
    assert [s["name"] for s in sasl(props, controller=dict(CONTROLLER, protocol="PLAINTEXT"))] == ["CLIENT", "INTERNAL"]


def test_properties_per_gssapi_listener_with_the_lower_case_name():
    props = {"sasl.enabled.mechanisms": "GSSAPI,SCRAM-SHA-512", "listener.name.client.sasl.enabled.mechanisms": "PLAIN"}
    login = ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true '
             'keyTab="/etc/kafka/kafka.keytab" principal="kafka/broker1.example.com@EXAMPLE.COM";')
    assert kk.kerberos_properties({"principal": PRINCIPAL, "keytab_src": "/k"}, KEYTAB, sasl(props)) == {
        "sasl.kerberos.service.name": "kafka",
        "listener.name.internal.gssapi.sasl.jaas.config": login,
        "listener.name.controller.gssapi.sasl.jaas.config": login}
    assert kk.kerberos_properties({"principal": PRINCIPAL, "service_name": "kfk"}, KEYTAB, [])[
        "sasl.kerberos.service.name"] == "kfk"


@pytest.mark.parametrize("value", [{}, None, ""])
def test_empty_kerberos_renders_nothing(value):
    assert kk.kerberos_properties(value, KEYTAB, sasl({})) == {}


def test_a_complete_setting_passes(keytab):
    props = {"sasl.enabled.mechanisms": "GSSAPI"}
    settings = kerberos(keytab, realm="EXAMPLE.COM", service_name="kafka", krb5_conf="/etc/krb5.conf")
    assert kk.kerberos_faults(settings, sasl(props), BOTH, "INTERNAL", props) == []


@pytest.mark.parametrize("props, jaas, expected", [
    ({}, "", ["kafka_broker_kerberos: empty, but listeners CLIENT (SASL_SSL), INTERNAL (SASL_PLAINTEXT), CONTROLLER "
              "(SASL_PLAINTEXT) offer GSSAPI (sasl.enabled.mechanisms not set: Kafka's default); set "
              "kafka_broker_kerberos {principal, keytab_src} for the broker's Kerberos login, or offer other "
              "mechanisms there"]),
    ({"sasl.enabled.mechanisms": "SCRAM-SHA-512", "listener.name.client.sasl.enabled.mechanisms": "GSSAPI,PLAIN"}, "",
     ["kafka_broker_kerberos: empty, but listener CLIENT (SASL_SSL) offers GSSAPI "
      "(listener.name.client.sasl.enabled.mechanisms); set kafka_broker_kerberos {principal, keytab_src} for the "
      "broker's Kerberos login, or offer other mechanisms there"]),
    ({"sasl.enabled.mechanisms": "SCRAM-SHA-512"}, "", []),
    ({}, "KafkaServer { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true; };", []),
    ({"sasl.enabled.mechanisms": "GSSAPI", "listener.name.client.gssapi.sasl.jaas.config": "x",
      "listener.name.internal.gssapi.sasl.jaas.config": "x", "listener.name.controller.gssapi.sasl.jaas.config": "x"},
     "", []),
], ids=["kafka-default-gssapi", "listener-override", "no-gssapi", "jaas-file-by-hand", "listener-logins-by-hand"])
def test_gssapi_offered_without_a_login(props, jaas, expected):
    assert kk.kerberos_faults({}, sasl(props), BOTH, "INTERNAL", props, jaas) == expected


@pytest.mark.parametrize("extra, expected", [
    ({"principal": ""}, "kafka_broker_kerberos.principal: required when kafka_broker_kerberos is set"),
    ({"principal": "kafka/broker1.example.com"},
     "kafka_broker_kerberos.principal: 'kafka/broker1.example.com' is not a Kerberos principal primary[/instance]@REALM"),
    ({"principal": 'kafka@EXAMPLE.COM" debug=true'}, "kafka_broker_kerberos.principal: 'kafka@EXAMPLE.COM\" debug=true'"),
    ({"principal": "kafka/a/b@EXAMPLE.COM"}, "kafka_broker_kerberos.principal: 'kafka/a/b@EXAMPLE.COM' is not"),
    ({"realm": "PROD.EXAMPLE.COM"},
     "kafka_broker_kerberos.realm: the principal 'kafka/broker1.example.com@EXAMPLE.COM' is not in realm "
     "'PROD.EXAMPLE.COM'; give the principal as primary[/instance]@PROD.EXAMPLE.COM"),
    ({"realm": "example.com"}, "kafka_broker_kerberos.realm: the principal"),
    ({"realm": "EXAMPLE COM"}, "kafka_broker_kerberos.realm: 'EXAMPLE COM' is not a Kerberos realm"),
    ({"keytab_src": ""}, "kafka_broker_kerberos.keytab_src: required when kafka_broker_kerberos is set"),
    ({"keytab_src": "/nonexistent/kafka.keytab"},
     "kafka_broker_kerberos.keytab_src: /nonexistent/kafka.keytab is not a file on the controller"),
    ({"keytab_src": "files/kafka.keytab"},
     "kafka_broker_kerberos.keytab_src: 'files/kafka.keytab' is not an absolute path on the controller"),
    ({"service_name": "kafka service"}, "kafka_broker_kerberos.service_name: 'kafka service' is not a Kerberos service"),
    ({"krb5_conf": '/etc/krb5.conf" -Devil=1'},
     "kafka_broker_kerberos.krb5_conf: '/etc/krb5.conf\" -Devil=1' is not an absolute path of letters, digits and "
     ". _ / @ + -; it goes into the unit's Environment line (KAFKA_OPTS=-Djava.security.krb5.conf=...)"),
    ({"krb5_conf": "/etc/krb5.conf\nExecStartPre=/bin/id"}, "kafka_broker_kerberos.krb5_conf: "),
    ({"krb5_conf": "krb5.conf"}, "kafka_broker_kerberos.krb5_conf: 'krb5.conf' is not an absolute path"),
    ({"service_name": "kfk"},
     "kafka_broker_kerberos.service_name: kfk, but the principal 'kafka/broker1.example.com@EXAMPLE.COM' has the "
     "primary 'kafka': this host logs in to listener INTERNAL with GSSAPI (sasl.mechanism.inter.broker.protocol) "
     "asking for kfk/<host>"),
], ids=["principal-empty", "principal-no-realm", "principal-quote", "principal-two-instances", "realm-mismatch",
        "realm-case", "realm-blank", "keytab-empty", "keytab-missing", "keytab-relative", "service-name-blank",
        "krb5-quote", "krb5-newline", "krb5-relative", "primary-not-service"])
def test_each_fault_is_one_message(keytab, extra, expected):
    props = {"sasl.enabled.mechanisms": "GSSAPI"}
    faults = kk.kerberos_faults(kerberos(keytab, **extra), sasl(props), BOTH, "INTERNAL", props)
    assert len(faults) == 1 and faults[0].startswith(expected), faults


def test_primary_may_differ_when_this_host_never_logs_in_with_gssapi(keytab):
    props = {"sasl.enabled.mechanisms": "GSSAPI,SCRAM-SHA-512", "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
             "sasl.mechanism.controller.protocol": "SCRAM-SHA-512"}
    settings = kerberos(keytab, principal="svc/broker1.example.com@EXAMPLE.COM")
    assert kk.kerberos_faults(settings, sasl(props), BOTH, "INTERNAL", props) == []
    # ... but the controller listener is dialled with GSSAPI by Kafka's default.
    del props["sasl.mechanism.controller.protocol"]
    faults = kk.kerberos_faults(settings, sasl(props), BOTH, "INTERNAL", props)
    assert len(faults) == 1 and "listener CONTROLLER with GSSAPI (sasl.mechanism.controller.protocol)" in faults[0]


def test_derived_keys_given_by_hand_too_are_refused(keytab):
    props = {"sasl.enabled.mechanisms": "GSSAPI", "sasl.kerberos.service.name": "kafka",
             "listener.name.client.gssapi.sasl.jaas.config": "x"}
    assert kk.kerberos_faults(kerberos(keytab), sasl(props), BOTH, "INTERNAL", props) == [
        "kafka_broker_properties: listener.name.client.gssapi.sasl.jaas.config is set by kafka_broker_kerberos; "
        "remove it from kafka_broker_properties (one home for the broker's Kerberos login)",
        "kafka_broker_properties: sasl.kerberos.service.name is set by kafka_broker_kerberos; remove it from "
        "kafka_broker_properties (one home for the broker's Kerberos login)"]


def test_every_fault_at_once_and_no_keytab_content(keytab):
    settings = {"principal": "kafka", "keytab_src": "/nonexistent", "realm": "R", "krb5_conf": "x y"}
    faults = kk.kerberos_faults(settings, sasl({}), BOTH, "INTERNAL", {})
    assert [f.split(":")[0] for f in faults] == ["kafka_broker_kerberos.principal", "kafka_broker_kerberos.keytab_src",
                                                 "kafka_broker_kerberos.krb5_conf"]


def test_filters_wrap_the_helpers(keytab):
    props = {"sasl.enabled.mechanisms": "GSSAPI"}
    listeners = kafka_filter.kafka_sasl_listeners(LISTENERS, CONTROLLER, BOTH, props)
    assert listeners == sasl(props)
    assert sorted(kafka_filter.kafka_kerberos_properties(kerberos(keytab), KEYTAB, listeners)) == [
        "listener.name.client.gssapi.sasl.jaas.config", "listener.name.controller.gssapi.sasl.jaas.config",
        "listener.name.internal.gssapi.sasl.jaas.config", "sasl.kerberos.service.name"]
