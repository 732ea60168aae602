# -*- coding: utf-8 -*-
"""Unit tests for plugins/module_utils/common/secrets.py (the one secrets rule) and its filters."""

from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.filter import secrets as secrets_filter
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import secrets as s

SECRET_KEYS = [
    "ssl.keystore.password",
    "ssl.key.password",
    "SSL.TRUSTSTORE.PASSWORD",
    "javax.net.ssl.keyStorePassword",
    "db_passwd",
    "sasl.jaas.config",
    "A.sasl.jaas.config",
    "listener.name.x.plain.sasl.jaas.config",
    "A->B.producer.override.sasl.jaas.config",
    "sasl.oauthbearer.client.credentials.client.secret",
    "delegation.token.secret.key",
    "password.encoder.secret",
    "aws_credentials",
    "auth_token",
    "apikey",
    "api.key",
    "datadog_api_key",
    "schema.registry.apiKey",
    "ssl.keystore.key",
    "A.ssl.keystore.key",
    "tls.private.key",
    "sasl.kerberos.keytab",
    "basic.auth.user.info",
]
PLAIN_KEYS = [
    "ssl.keystore.location",
    "ssl.truststore.location",
    "com.sun.management.jmxremote.password.file",
    "key.converter",
    "key.serializer",
    "ssl.keystore.type",
    "ssl.keystore.certificate.chain",
    "sasl.mechanism",
    "security.protocol",
    "replication.policy.class",
    "bootstrap.servers",
    "topics.exclude",
    "A->B.enabled",
    "sasl.kerberos.service.name",
    "keystore",
]
SECRET_VALUES = [
    'org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b";',
    "org.apache.kafka.common.security.scram.ScramLoginModule required username=a password=b;",
    'com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/etc/kafka/mm2.keytab";',
    'OAuthBearerLoginModule required clientId="mm2" clientSecret="x";',
    "-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----",
    "-----BEGIN ENCRYPTED PRIVATE KEY-----",
    "-----BEGIN RSA PRIVATE KEY-----",
    "https://user:hunter2@repo.example.invalid/kafka.tgz",
    "passwd = x",
]
PLAIN_VALUES = [
    "",
    "SASL_SSL",
    "/etc/kafka/truststore.p12",
    'ScramLoginModule required username="a" password="";',
    "-----BEGIN CERTIFICATE-----",
    "https://repo.example.invalid:8443/kafka@3.9.tgz",
    "password",
    r".*[\-\.]internal",
    3,
    True,
    None,
]
# (text, names of the options that carry a secret)
OPTIONS = [
    ("-Xmx1g -Djavax.net.ssl.keyStorePassword=x -Dfoo=bar", ["javax.net.ssl.keyStorePassword"]),
    ("-Dssl.truststore.password=a -Dssl.key.password=b -Dssl.truststore.password=a",
     ["ssl.truststore.password", "ssl.key.password"]),
    ("--password=x --user=y", ["password"]),
    ('-Dsasl.jaas.config="PlainLoginModule required password=\'x\';"', ["sasl.jaas.config"]),
    ("-Dlogin.module.options=keyTab=/etc/kafka/kafka.keytab", ["login.module.options"]),
    ("PlainLoginModule required password = x", ["password="]),
    ("-----BEGIN EC PRIVATE KEY-----", ["PRIVATE KEY"]),
    ("-Dfoo='unbalanced password=x", ["password"]),
    (["-Xmx1g", "-Dapi.key=k", "-Dapi.key=k"], ["api.key"]),
    ("-Xmx1g -Xms1g -XX:+UseG1GC", []),
    ("-Dcom.sun.management.jmxremote.password.file=/etc/kafka/jmx.password "
     "-Dcom.sun.management.jmxremote.authenticate=true", []),
    ("-Djavax.net.ssl.keyStore=/etc/kafka/ks.p12 -Djavax.net.ssl.keyStorePassword=", []),
    ("-Djava.security.auth.login.config=/etc/kafka/jaas.conf", []),
    ("", []),
    (None, []),
]
HAS_SECRETS = [
    ({"ssl.key.password": "x"}, True),
    ({"ssl.key.password": ""}, False),
    ({"ssl.key.password": None}, False),
    ({"A": {"properties": {"sasl.jaas.config": "x"}}}, True),
    ([{"alias": "A", "sasl_jaas_config": 'x password="y";'}], True),
    ({"kafka_opts": "-Xmx1g -Dssl.truststore.password=x"}, True),
    ("ssl.keystore.password=x", True),
    ({"security.protocol": "SASL_SSL", "topics": ["a", "b"]}, False),
    ("plain text", False),
    (42, False),
]


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_secret_key(key):
    assert s.is_secret_key(key)


@pytest.mark.parametrize("key", PLAIN_KEYS)
def test_plain_key(key):
    assert not s.is_secret_key(key)


@pytest.mark.parametrize("value", SECRET_VALUES)
def test_secret_value(value):
    assert s.is_secret_value(value)


@pytest.mark.parametrize("value", PLAIN_VALUES)
def test_plain_value(value):
    assert not s.is_secret_value(value)


@pytest.mark.parametrize("text, names", OPTIONS)
def test_option_secrets(text, names):
    assert s.option_secrets(text) == names


@pytest.mark.parametrize("obj, expected", HAS_SECRETS)
def test_has_secrets(obj, expected):
    assert s.has_secrets(obj) is expected


PROPS = {
    "security.protocol": "SASL_SSL",
    "ssl.truststore.location": "/etc/kafka/ts.p12",
    "ssl.truststore.password": "pw1",
    "custom.login": 'x password="pw2";',
    "ssl.key.password": "",
    "tasks.max": 4,
}


def test_secret_keys():
    assert s.secret_keys(PROPS) == ["custom.login", "ssl.truststore.password"]


def test_mask():
    assert s.mask(PROPS) == dict(PROPS, **{"ssl.truststore.password": s.MASK, "custom.login": s.MASK})


def test_mask_nested_keeps_the_rest_readable():
    clusters = [{"alias": "A", "properties": {"sasl.jaas.config": "x", "sasl.mechanism": "PLAIN"}}]
    assert s.mask(clusters) == [{"alias": "A", "properties": {"sasl.jaas.config": s.MASK, "sasl.mechanism": "PLAIN"}}]


def test_secret_values():
    props = dict(PROPS, **{"ssl.key.password": 1234, "ssl.keystore.password": "pw1"})
    assert s.secret_values(props) == [
        "pw1", 'x password="pw2";', "1234"]


def test_filters_are_the_rule():
    filters = secrets_filter.FilterModule().filters()
    assert filters["kafka_has_secrets"](PROPS) is True
    assert filters["kafka_mask_secrets"](PROPS) == s.mask(PROPS)
    assert filters["kafka_option_secrets"]("-Dx.password=y") == ["x.password"]


@pytest.mark.parametrize("value, reference", [
    ("${file:/etc/kafka-connect/secrets/A-to-B.properties:truststore.password}", True),
    ("${env:CONNECT_PASSWORD}", True),
    ("${directory:/run/secrets:pw}", True),
    ("prefix${file:/p:k}", False),
    ("${file:/p:k}suffix", False),
    ("${notareference}", False),
    ("plain", False),
    (7, False),
])
def test_is_provider_reference(value, reference):
    assert s.is_provider_reference(value) is reference


@pytest.mark.parametrize("text, values, expected", [
    ("password=pw-s3cret in A", ["pw-s3cret"], "password=%s in A" % s.MASK),
    # The longer value first: a secret that holds a shorter one is masked whole.
    ("key pw-s3cret-long", ["pw-s3cret", "pw-s3cret-long"], "key %s" % s.MASK),
    ("nothing here", [], "nothing here"),
])
def test_scrub_masks_each_value(text, values, expected):
    assert s.scrub(text, values) == expected
