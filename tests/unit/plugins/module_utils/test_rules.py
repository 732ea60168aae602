# -*- coding: utf-8 -*-
"""The shared input rules (common/rules.py) and each role's refusals built on them."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import rules
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import broker_rules, install_rules
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import connect_rules, mirrormaker_rules
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.pulse import rules as pulse_rules

SHA512 = "ab" * 64


@pytest.mark.parametrize("value, ok", [
    (1, True), (65535, True), ("9092", True), (0, False), (65536, False), (-1, False), ("http", False), (None, False),
])
def test_port(value, ok):
    assert (rules.port("x_port", value) == []) is ok
    if not ok:
        assert rules.port("x_port", value) == ["x_port: %s is not a TCP port (1-65535)" % ("" if value is None else value)]


@pytest.mark.parametrize("value, optional, ok", [
    ("/etc/kafka", False, True), ("/opt/a.b_c/@d+e-f", False, True), ("", True, True), ("", False, False),
    ("etc/kafka", False, False), ("/etc/kafka dir", False, False), ('/x"; rm -rf /', False, False),
    ("/x\nExecStartPre=/bin/sh", False, False), ("/$(id)", True, False),
])
def test_safe_path(value, optional, ok):
    found = rules.safe_path("x_dir", value, optional=optional)
    assert (found == []) is ok
    if not ok:
        # JSON shows the quote, blank or line break that made it unsafe.
        assert found == ["x_dir: %s is not an absolute path of letters, digits and . _ / @ + -" % rules.shown(value)]


@pytest.mark.parametrize("value, optional, ok", [
    ("mm2-1.example.com", False, True), ("10.0.0.1", False, True), ("::1", False, True), ("", True, True),
    ("", False, False), ("$(id)", False, False), ("a b", False, False), ('h" ; touch x', True, False),
])
def test_host(value, optional, ok):
    assert (rules.host("x_host", value, optional=optional) == []) is ok
    if not ok:
        assert rules.host("x_host", value, optional=optional) == \
            ["x_host: %s is not a host name or address" % rules.shown(value)]
        assert rules.host("x_host", value, optional=optional, why="it is written into x.sh") == \
            ["x_host: %s is not a host name or address; it is written into x.sh" % rules.shown(value)]


@pytest.mark.parametrize("value, ok", [
    ("kafka", True), ("kafka@1.service", True), ("kafka service", False), ("", False), ("k;id", False),
])
def test_unit_name(value, ok):
    assert (rules.unit_name("x_service_name", value) == []) is ok


@pytest.mark.parametrize("value, optional, ok", [
    ("mm2-connect_A.B", False, True), ("", True, True), ("", False, False), ("a b", True, False), ("a/b", False, False),
])
def test_name(value, optional, ok):
    found = rules.name("x_group_id", value, "a group id", optional=optional)
    assert (found == []) is ok
    if not ok:
        assert found == ["x_group_id: %s is not a group id of letters, digits and . _ -" % rules.shown(value)]


def test_controller_file(tmp_path):
    present = tmp_path / "a.jar"
    present.write_text("x")
    assert rules.controller_file("x_src", str(present)) == []
    assert rules.controller_file("x_src", "") == []
    assert rules.controller_file("x_src", str(tmp_path)) == ["x_src: %s is not a file on the controller" % tmp_path]
    assert rules.controller_file("x_src", "/nonexistent/a.jar") == ["x_src: /nonexistent/a.jar is not a file on the controller"]


@pytest.mark.parametrize("value, expected", [
    ('-Xmx1g"\nExecStartPre=/bin/true', "x_opts: holds a newline, double quote or backslash"),
    ("-Dx=a\\b", "x_opts: holds a newline, double quote or backslash"),
    ("-Djavax.net.ssl.keyStorePassword=s3cret", "x_opts: carries a secret (javax.net.ssl.keyStorePassword) that would "
                                                "land in the world-readable unit file; HOME"),
], ids=["newline-quote", "backslash", "secret"])
def test_unit_values(value, expected):
    faults = rules.unit_values({"x_opts": value, "y_opts": "-Xmx1g -XX:+UseG1GC"}, "HOME")
    assert [f for f in faults if f.startswith(expected)], faults
    assert not [f for f in faults if f.startswith("y_opts")]
    assert "s3cret" not in " ".join(faults)


def test_port_conflicts_across_roles_name_both_variables():
    claims = {"kafka_broker": {"9092": "kafka_broker_listeners[0].port", "9093": "kafka_broker_controller_listener.port"},
              "mirrormaker": {"9092": "mirrormaker_jmx_port", "8083": "mirrormaker_rest_port"}}
    assert rules.port_conflicts(claims, "h1") == [
        "mirrormaker_jmx_port: port 9092 on host h1 is already kafka_broker_listeners[0].port"]


# ----------------------------------------------------------------------------- mirrormaker

MM2 = {
    "mirrormaker_clusters": [{"alias": "A"}, {"alias": "B"}],
    "mirrormaker_jmx_enabled": True, "mirrormaker_jmx_port": 9999, "mirrormaker_internal_rest": True,
    "mirrormaker_rest_port": 8083, "mirrormaker_jmx_exporter_enabled": False, "mirrormaker_jmx_exporter_port": 7071,
    "mirrormaker_jmx_exporter_src": "", "mirrormaker_jmx_exporter_url": "", "mirrormaker_jmx_exporter_sha256": "",
    "mirrormaker_jmx_exporter_version": "1.0.1", "mirrormaker_jmx_authenticate": False, "mirrormaker_jmx_users": [],
    "mirrormaker_jmx_ssl": False, "mirrormaker_jmx_ssl_keystore": "", "mirrormaker_jmx_hostname": "",
    "mirrormaker_advertised_host": "mm2-1", "mirrormaker_jaas": {}, "mirrormaker_keytab_src": "",
    "mirrormaker_krb5_conf": "", "mirrormaker_config_dir": "/etc/kafka-mm2", "mirrormaker_log_dir": "/var/log/kafka-mm2",
    "mirrormaker_service_name": "kafka-mirrormaker", "mirrormaker_heap_opts": "-Xmx1g",
    "mirrormaker_jvm_performance_opts": "", "mirrormaker_kafka_opts": "",
}


def with_values(base, **changes):
    values = copy.deepcopy(base)
    values.update(changes)
    return values


def test_mirrormaker_defaults_pass():
    assert mirrormaker_rules.faults(MM2) == []


@pytest.mark.parametrize("changes, expected", [
    ({"mirrormaker_clusters": [{"alias": "A"}]}, "mirrormaker_clusters: needs two or more clusters, got 1"),
    ({"mirrormaker_jmx_port": 70000}, "mirrormaker_jmx_port: 70000 is not a TCP port (1-65535)"),
    ({"mirrormaker_rest_port": 9999},
     "mirrormaker_jmx_port: 9999 is also mirrormaker_rest_port; JMX and the internal REST server need a port each"),
    ({"mirrormaker_jmx_exporter_enabled": True, "mirrormaker_jmx_exporter_sha256": "ab" * 32},
     "mirrormaker_jmx_exporter_src: the JMX exporter is on but neither"),
    ({"mirrormaker_jmx_exporter_enabled": True, "mirrormaker_jmx_exporter_url": "http://x/a.jar",
      "mirrormaker_jmx_exporter_sha256": "abc"}, 'mirrormaker_jmx_exporter_sha256: "abc" is not a sha256 (64 hex digits)'),
    ({"mirrormaker_jmx_exporter_version": "1.0 ; id"}, 'mirrormaker_jmx_exporter_version: "1.0 ; id" is not a version'),
    ({"mirrormaker_jmx_authenticate": True}, "mirrormaker_jmx_users: mirrormaker_jmx_authenticate is on but no JMX user"),
    ({"mirrormaker_jmx_ssl": True}, "mirrormaker_jmx_ssl_keystore: mirrormaker_jmx_ssl is on but no keystore is given"),
    ({"mirrormaker_jmx_hostname": "$(id)"}, 'mirrormaker_jmx_hostname: "$(id)" is not a host name or address; it is '
                                            "written into the KAFKA_JMX_OPTS line of connect-mirror-maker.sh"),
    ({"mirrormaker_jaas": {"principal": "mm2"}}, "mirrormaker_jaas.login_module: required when mirrormaker_jaas is set"),
    ({"mirrormaker_jaas": {"login_module": "kerberos", "keytab": "/k"}},
     "mirrormaker_jaas.principal: login_module kerberos needs a principal"),
    ({"mirrormaker_jaas": {"login_module": "kerberos", "principal": "mm2@LAB"}},
     "mirrormaker_keytab_src: login_module kerberos needs a keytab"),
    ({"mirrormaker_jaas": {"login_module": "kerberos", "principal": 'mm2" debug=true', "keytab": "/k"}},
     'mirrormaker_jaas.principal: "mm2\\" debug=true" is not a Kerberos principal'),
    ({"mirrormaker_jaas": {"login_module": "kerberos", "principal": "mm2/h@LAB", "realm": "PROD", "keytab": "/k"}},
     'mirrormaker_jaas.realm: the principal "mm2/h@LAB" is not in realm "PROD"; give the principal as '
     "primary[/instance]@PROD"),
    ({"mirrormaker_jaas": {"login_module": "scram", "username": "u", "password": 'p"w'}},
     "mirrormaker_jaas.password: holds a double quote, backslash or newline"),
    ({"mirrormaker_jaas": {"login_module": "plain", "username": "u"}},
     "mirrormaker_jaas: login_module plain needs username and password"),
    ({"mirrormaker_keytab_src": "/nonexistent/mm2.keytab"},
     "mirrormaker_keytab_src: /nonexistent/mm2.keytab is not a file on the controller"),
    ({"mirrormaker_krb5_conf": "krb5.conf"}, 'mirrormaker_krb5_conf: "krb5.conf" is not an absolute path'),
    ({"mirrormaker_config_dir": "/etc/mm2 dir"}, 'mirrormaker_config_dir: "/etc/mm2 dir" is not an absolute path'),
    ({"mirrormaker_service_name": "mm2;id"}, 'mirrormaker_service_name: "mm2;id" is not a systemd unit name'),
    ({"mirrormaker_kafka_opts": "-Dpassword=pw-s3cret"}, "mirrormaker_kafka_opts: carries a secret"),
])
def test_mirrormaker_refusals(changes, expected):
    found = mirrormaker_rules.faults(with_values(MM2, **changes))
    assert [f for f in found if f.startswith(expected)], found
    assert "s3cret" not in " ".join(found)


def test_mirrormaker_one_message_per_fault_in_a_stable_order():
    found = mirrormaker_rules.faults(with_values(MM2, mirrormaker_heap_opts='x"', mirrormaker_jmx_hostname="$(id)",
                                                 mirrormaker_jmx_port=70000))
    assert [f.split(":")[0] for f in found] == ["mirrormaker_jmx_port", "mirrormaker_jmx_hostname", "mirrormaker_heap_opts"]


# ----------------------------------------------------------------------------- connect

CONNECT = {
    "connect_source": "A", "connect_target": "B", "connect_rest_port": 8083, "connect_advertised_host": "c-1",
    "connect_rest_bind_host": "", "connect_group_id": "", "connect_internal_topic_prefix": "",
    "connect_config_dir": "/etc/kafka-connect", "connect_log_dir": "/var/log/kafka-connect",
    "connect_service_name": "kafka-connect", "connect_heap_opts": "-Xmx1g", "connect_jvm_performance_opts": "",
    "connect_kafka_opts": "",
}


def test_connect_defaults_pass():
    assert connect_rules.faults(CONNECT) == []


@pytest.mark.parametrize("changes, expected", [
    ({"connect_source": ""}, "connect_source: required on hosts of connect_workers"),
    ({"connect_target": ""}, "connect_target: required on hosts of connect_workers"),
    ({"connect_rest_port": 0}, "connect_rest_port: 0 is not a TCP port (1-65535)"),
    ({"connect_advertised_host": "c 1"}, 'connect_advertised_host: "c 1" is not a host name or address'),
    ({"connect_rest_bind_host": "$(id)"}, 'connect_rest_bind_host: "$(id)" is not a host name or address'),
    ({"connect_group_id": "g/1"}, 'connect_group_id: "g/1" is not a group id of letters, digits and . _ -'),
    ({"connect_internal_topic_prefix": "p q"}, 'connect_internal_topic_prefix: "p q" is not a topic name prefix'),
    ({"connect_log_dir": "logs"}, 'connect_log_dir: "logs" is not an absolute path'),
    ({"connect_service_name": ""}, 'connect_service_name: "" is not a systemd unit name'),
    ({"connect_heap_opts": "-Xmx1g\n"}, "connect_heap_opts: holds a newline"),
    ({"connect_kafka_opts": "-Dssl.keystore.password=s3cret"}, "connect_kafka_opts: carries a secret"),
])
def test_connect_refusals(changes, expected):
    found = connect_rules.faults(with_values(CONNECT, **changes))
    assert [f for f in found if f.startswith(expected)], found
    assert "s3cret" not in " ".join(found)


# ----------------------------------------------------------------------------- kafka_common

INSTALL = {
    "kafka_common_version": "4.3.1", "kafka_common_scala_version": "2.13", "kafka_common_archive_sha512": "",
    "kafka_common_install_root": "/opt/kafka", "kafka_common_archive_src": "",
}


def test_install_defaults_pass():
    assert install_rules.faults(INSTALL) == []


@pytest.mark.parametrize("changes, expected", [
    ({"kafka_common_version": "4.3"}, ["kafka_common_version: 4.3 is not X.Y.Z"]),
    ({"kafka_common_version": "3.6.2"},
     ["kafka_common_version: 3.6.2 is older than 3.7.0, the oldest release the roles support"]),
    ({"kafka_common_version": "3.10.0"}, []),
    ({"kafka_common_scala_version": "2.11"}, ["kafka_common_scala_version: 2.11 is not 2.12 or 2.13"]),
    ({"kafka_common_archive_sha512": "abc"}, ["kafka_common_archive_sha512: is not 128 hex digits (got 3 characters)"]),
    ({"kafka_common_archive_sha512": SHA512}, []),
    ({"kafka_common_install_root": "/opt/kafka dir"},
     ['kafka_common_install_root: "/opt/kafka dir" is not an absolute path of letters, digits and . _ / @ + -']),
    ({"kafka_common_archive_src": "/nonexistent/k.tgz"},
     ["kafka_common_archive_src: /nonexistent/k.tgz is not a file on the controller"]),
])
def test_install_refusals(changes, expected):
    assert install_rules.faults(with_values(INSTALL, **changes)) == expected


@pytest.mark.parametrize("version, expected", [
    ("3.9.1", []),
    ("4.3.1", ["kafka_broker_properties: log.message.format.version was removed in Kafka 4.0 (kafka_common_version "
               "4.3.1); use nothing: 4.0 writes the one message format (KIP-724)"]),
])
def test_install_refuses_settings_the_release_removed(version, expected):
    context = {"properties": {"kafka_broker_properties": {"log.message.format.version": "3.0", "num.partitions": 1}}}
    assert install_rules.faults(with_values(INSTALL, kafka_common_version=version), context) == expected


@pytest.mark.parametrize("checksum, sha512, expected", [
    (None, "", "kafka_common_archive_src: {src}.sha512 is missing on the controller; put the release's .sha512 "
               "beside the archive or set kafka_common_archive_sha512"),
    ("no digest here\n", "", "kafka_common_archive_src: {src}.sha512 holds no sha512 (128 hex digits)"),
    # Apache's .sha512 files wrap the digest over lines in groups of hex digits.
    ("kafka_2.13-4.3.1.tgz: " + " ".join([SHA512[i:i + 8].upper() for i in range(0, 128, 8)]) + "\n", "", None),
    (SHA512 + "  kafka_2.13-4.3.1.tgz\n", "", None),
    (None, SHA512, None),
], ids=["missing", "no-digest", "apache-format", "sha512sum-format", "given-in-inventory"])
def test_install_archive_checksum(tmp_path, checksum, sha512, expected):
    src = tmp_path / "kafka_2.13-4.3.1.tgz"
    src.write_bytes(b"tgz")
    if checksum is not None:
        (tmp_path / "kafka_2.13-4.3.1.tgz.sha512").write_text(checksum)
    found = install_rules.faults(with_values(INSTALL, kafka_common_archive_src=str(src),
                                             kafka_common_archive_sha512=sha512))
    assert found == ([] if expected is None else [expected.format(src=src)])


# ----------------------------------------------------------------------------- kafka_broker

BROKER = {
    "kafka_broker_cluster_name": "A", "kafka_broker_cluster_id": "", "kafka_broker_log_dirs": ["/var/lib/kafka/data"],
    "kafka_broker_config_dir": "/etc/kafka", "kafka_broker_service_name": "kafka",
    "kafka_broker_advertised_host": "k-1", "kafka_broker_jaas_config": "", "kafka_broker_properties": {},
    "kafka_broker_default_properties": {}, "kafka_broker_process_roles": ["broker", "controller"],
    "kafka_broker_listeners": [{"name": "PLAINTEXT", "port": 9092, "protocol": "PLAINTEXT"}],
    "kafka_broker_controller_listener": {"name": "CONTROLLER", "port": 9093, "protocol": "PLAINTEXT"},
    "kafka_broker_heap_opts": "-Xmx1g", "kafka_broker_jvm_performance_opts": "", "kafka_broker_opts": "",
    "kafka_broker_inter_broker_listener": "PLAINTEXT", "kafka_broker_scram_users": [], "kafka_broker_kerberos": {},
    "kafka_broker_tls": {}, "kafka_broker_state": "present", "kafka_broker_move_throttle": 52428800,
    "kafka_broker_move_timeout": 1800, "kafka_broker_admin_properties": {}, "kafka_broker_admin_delegate_to": "localhost",
    "kafka_broker_scram_users_managed": False,
}
USERS = [{"name": "app", "password": "s3cret"}]
SASL = [{"name": "SASL", "port": 9094, "protocol": "SASL_PLAINTEXT"}]
SASL_PLAIN = {"sasl.enabled.mechanisms": "PLAIN", "sasl.mechanism.inter.broker.protocol": "PLAIN"}
STORES = {"keystore": "/etc/kafka/tls/keystore.pem", "truststore": "/etc/kafka/tls/truststore.pem"}


def test_broker_defaults_pass():
    assert broker_rules.faults(BROKER) == []


@pytest.mark.parametrize("changes, expected", [
    ({"kafka_broker_cluster_name": "a b"},
     ['kafka_broker_cluster_name: "a b" is not a cluster name of letters, digits and . _ -']),
    ({"kafka_broker_cluster_id": "MkU3OEVBNTcwNTJENDM2Qg"}, []),
    ({"kafka_broker_cluster_id": "MkU3OEVBNTcwNTJENDM2Qg=="},
     ["kafka_broker_cluster_id: 'MkU3OEVBNTcwNTJENDM2Qg==' is not a 22-character base64url id"]),
    ({"kafka_broker_log_dirs": []}, ["kafka_broker_log_dirs: must list at least one directory"]),
    ({"kafka_broker_log_dirs": ["/ok", "rel", "/a b"]},
     ['kafka_broker_log_dirs: ["rel", "/a b"] are not absolute paths of letters, digits and . _ / @ + -']),
    ({"kafka_broker_config_dir": "/etc/$(id)"},
     ['kafka_broker_config_dir: "/etc/$(id)" is not an absolute path of letters, digits and . _ / @ + -']),
    ({"kafka_broker_service_name": "kafka broker"}, ['kafka_broker_service_name: "kafka broker" is not a systemd unit name']),
    ({"kafka_broker_advertised_host": "k 1"}, ['kafka_broker_advertised_host: "k 1" is not a host name or address']),
    ({"kafka_broker_listeners": SASL, "kafka_broker_properties": {"sasl.enabled.mechanisms": "SCRAM-SHA-512"}},
     ["kafka_broker_listeners: a SASL listener needs credentials, but neither kafka_broker_jaas_config nor a "
      "listener.name.*.sasl.jaas.config in kafka_broker_properties is set (for SCRAM-SHA-512; kafka_broker_kerberos "
      "serves GSSAPI only)"]),
    # Kafka's default mechanism is GSSAPI, whose login kafka_broker_kerberos gives: the Kerberos rules ask for it.
    ({"kafka_broker_listeners": SASL},
     ["kafka_broker_kerberos: empty, but listener SASL (SASL_PLAINTEXT) offers GSSAPI (sasl.enabled.mechanisms not "
      "set: Kafka's default); set kafka_broker_kerberos {principal, keytab_src} for the broker's Kerberos login, or "
      "offer other mechanisms there"]),
    # The SCRAM, Kerberos and TLS rules run from the broker's rules, on the same listeners.
    ({"kafka_broker_scram_users": [{"name": "alice", "password": "pw,s3cret"}]},
     ["kafka_broker_scram_users[0].password: holds a ',', which kafka-storage.sh format --add-scram cannot pass (it "
      "splits its argument on every ',' and has no escape); choose another password or add such a user after the "
      "first start with the Admin API (the kafka_scram_user module), which takes any string"]),
    ({"kafka_broker_kerberos": {"principal": "kafka/k-1@LAB", "keytab_src": "/nonexistent.keytab"}},
     ["kafka_broker_kerberos.keytab_src: /nonexistent.keytab is not a file on the controller"]),
    ({"kafka_broker_listeners": [{"name": "TLS", "port": 9095, "protocol": "SSL"}]},
     ["kafka_broker_tls: empty, but listener TLS (SSL) serves TLS and kafka_broker_properties gives no key store "
      "there (ssl.keystore.location, or listener.name.<listener>.ssl.keystore.location); set kafka_broker_tls "
      "{keystore_src, truststore_src}, or give the ssl.* keys in kafka_broker_properties"]),
    ({"kafka_broker_properties": {"ssl.truststore.location": STORES["truststore"]}},
     ["kafka_broker_properties: ssl.truststore.location names /etc/kafka/tls/truststore.pem, the file the role "
      "keeps for kafka_broker_tls and removes while it is empty; keep hand-made stores elsewhere, or set "
      "kafka_broker_tls"]),
    ({"kafka_broker_listeners": SASL, "kafka_broker_properties": {"sasl.enabled.mechanisms": "PLAIN"},
      "kafka_broker_jaas_config": "KafkaServer {...};"}, []),
    ({"kafka_broker_listeners": SASL, "kafka_broker_process_roles": ["controller"],
      "kafka_broker_properties": {"sasl.enabled.mechanisms": "PLAIN"}}, []),
])
def test_broker_refusals(changes, expected):
    assert broker_rules.faults(with_values(BROKER, **changes), STORES) == expected


@pytest.mark.parametrize("changes, expected", [
    ({"kafka_broker_state": "absent"}, []),
    ({"kafka_broker_move_throttle": -1, "kafka_broker_move_timeout": 0},
     ["kafka_broker_move_throttle: must be bytes per second, 0 (no throttle) or more (is -1)",
      "kafka_broker_move_timeout: must be 1 second or more (is 0)"]),
    # the drain's kafka-python client reads no JAAS line: a secured cluster needs the admin's properties
    ({"kafka_broker_state": "absent", "kafka_broker_inter_broker_listener": "SASL", "kafka_broker_listeners": SASL,
      "kafka_broker_properties": SASL_PLAIN, "kafka_broker_jaas_config": "KafkaServer {...};"},
     ["kafka_broker_admin_properties: kafka_broker_state is absent (the drain reassigns partitions) and the "
      "inter-broker listener SASL is SASL_PLAINTEXT: give the client properties (kafka-python's, as kafka_acl takes "
      "them) of an admin that may do that, for the client on localhost"]),
    ({"kafka_broker_state": "absent", "kafka_broker_inter_broker_listener": "SASL", "kafka_broker_listeners": SASL,
      "kafka_broker_properties": SASL_PLAIN, "kafka_broker_jaas_config": "KafkaServer {...};",
      "kafka_broker_admin_properties": {"security.protocol": "SASL_PLAINTEXT"}}, []),
    # present: the admin's properties are not needed
    ({"kafka_broker_inter_broker_listener": "SASL", "kafka_broker_listeners": SASL,
      "kafka_broker_properties": SASL_PLAIN, "kafka_broker_jaas_config": "KafkaServer {...};"},
     []),
    # the SCRAM users' upkeep is the same kind of client, and needs the same login
    ({"kafka_broker_scram_users_managed": True, "kafka_broker_scram_users": USERS,
      "kafka_broker_inter_broker_listener": "SASL", "kafka_broker_listeners": SASL,
      "kafka_broker_properties": SASL_PLAIN, "kafka_broker_jaas_config": "KafkaServer {...};",
      "kafka_broker_admin_delegate_to": "kdc"},
     ["kafka_broker_admin_properties: kafka_broker_scram_users_managed is true (the upkeep alters SCRAM credentials) "
      "and the inter-broker listener SASL is SASL_PLAINTEXT: give the client properties (kafka-python's, as "
      "kafka_acl takes them) of an admin that may do that, for the client on kdc"]),
    ({"kafka_broker_scram_users_managed": True, "kafka_broker_scram_users": USERS, "kafka_broker_state": "absent",
      "kafka_broker_inter_broker_listener": "SASL", "kafka_broker_listeners": SASL,
      "kafka_broker_properties": SASL_PLAIN, "kafka_broker_jaas_config": "KafkaServer {...};"},
     ["kafka_broker_admin_properties: kafka_broker_state is absent (the drain reassigns partitions) and the "
      "inter-broker listener SASL is SASL_PLAINTEXT: give the client properties (kafka-python's, as kafka_acl takes "
      "them) of an admin that may do that, for the client on localhost",
      "kafka_broker_admin_properties: kafka_broker_scram_users_managed is true (the upkeep alters SCRAM credentials) "
      "and the inter-broker listener SASL is SASL_PLAINTEXT: give the client properties (kafka-python's, as "
      "kafka_acl takes them) of an admin that may do that, for the client on localhost"]),
    # no users to keep, or a PLAINTEXT cluster: no login needed
    ({"kafka_broker_scram_users_managed": True, "kafka_broker_inter_broker_listener": "SASL",
      "kafka_broker_listeners": SASL, "kafka_broker_properties": SASL_PLAIN,
      "kafka_broker_jaas_config": "KafkaServer {...};"}, []),
    ({"kafka_broker_scram_users_managed": True, "kafka_broker_scram_users": USERS}, []),
])
def test_broker_admin_login(changes, expected):
    assert broker_rules.faults(with_values(BROKER, **changes), STORES) == expected


# ----------------------------------------------------------------------------- pulse

PULSE = {
    "pulse_hosts": ["pulse-1"], "pulse_mm2_hosts": ["mm2-1", "mm2-2"], "pulse_mm2_nodes": ["mm2-1", "mm2-2"],
    "pulse_mm2_expected_hostnames": ["mm2-1", "mm2-2"], "pulse_mm2_jmx_port": 9999,
    "pulse_command": "accelo reconfig cluster", "pulse_prompt_timeout": 60,
}
ALL_HOSTS = ["mm2-1", "mm2-2", "pulse-1", "k-1"]
MIRRORMAKERS = ["mm2-1", "mm2-2"]
JMX_9999 = {"mm2-1": {"enabled": True, "port": 9999}, "mm2-2": {"enabled": True, "port": 9999}}


def _pulse_context(jmx):
    return {"hosts": ALL_HOSTS, "mirrormakers": MIRRORMAKERS, "jmx": jmx}


def test_pulse_consistent_inventory_passes():
    assert pulse_rules.faults(PULSE, _pulse_context(JMX_9999)) == []


@pytest.mark.parametrize("changes, jmx, expected", [
    ({"pulse_hosts": []}, JMX_9999, ["pulse_hosts: no Pulse host; put the host where Pulse's accelo runs in the "
                                     "inventory group 'pulse' or in pulse_hosts"]),
    ({"pulse_hosts": ["pulse-1", "pulse-9"]}, JMX_9999, ["pulse_hosts: pulse-9 not a host of this inventory"]),
    ({"pulse_mm2_nodes": []}, JMX_9999, ["pulse_mm2_nodes: empty; Pulse needs the MirrorMaker nodes to monitor"]),
    ({"pulse_mm2_hosts": [], "pulse_mm2_nodes": ["x"]}, JMX_9999,
     ["pulse_mm2_hosts: empty; no MirrorMaker host to register (the mirrormakers group is empty)"]),
    ({"pulse_mm2_hosts": ["mm2-1", "k-1"]}, JMX_9999, ["pulse_mm2_hosts: k-1 not in the mirrormakers group"]),
    ({"pulse_mm2_expected_hostnames": []}, JMX_9999,
     ["pulse_mm2_expected_hostnames: empty; the hostnames Pulse shows could never be confirmed"]),
    ({}, {"mm2-1": {"enabled": True, "port": 9999}, "mm2-2": {"enabled": False, "port": 9999}},
     ["mirrormaker_jmx_enabled: false on mm2-2; Pulse reads MirrorMaker 2 over JMX"]),
    ({"pulse_mm2_jmx_port": 9998}, JMX_9999,
     ["pulse_mm2_jmx_port: 9998 is not the mirrormaker_jmx_port of mm2-1, mm2-2 (9999)"]),
    ({}, {"mm2-1": {"enabled": True, "port": 9999}, "mm2-2": {"enabled": True, "port": 9990}},
     ["pulse_mm2_jmx_port: 9999 is not the mirrormaker_jmx_port of mm2-2 (9990)"]),
    # A host whose preflight has not recorded its JMX settings is not compared.
    ({"pulse_mm2_jmx_port": 9998}, {}, []),
    ({"pulse_mm2_jmx_port": 0}, {}, ["pulse_mm2_jmx_port: 0 is not a TCP port (1-65535)"]),
    ({"pulse_command": "  "}, JMX_9999, ["pulse_command: empty; give the Pulse command that asks the MM2 questions"]),
    ({"pulse_prompt_timeout": 0}, JMX_9999, ["pulse_prompt_timeout: 0 must be at least 1 second"]),
])
def test_pulse_refusals(changes, jmx, expected):
    assert pulse_rules.faults(with_values(PULSE, **changes), _pulse_context(jmx)) == expected
