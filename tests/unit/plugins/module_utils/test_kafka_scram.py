# -*- coding: utf-8 -*-
"""Unit tests for plugins/module_utils/kafka/scram.py: the format command line and its refusals.

``kafka_reads`` below is a port of what Kafka's ScramParser does with one ``--add-scram`` argument
(ScramParser.parsePerMechanismArgument, PerMechanismData(mechanism, configString),
splitTrimmedConfigStringComponent): a test double of the parser, used to show that the values
built here read back unchanged. tests/live/test_kafka_scram.py shows the same with Kafka itself.
"""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.kafkaops.mirrormaker.plugins.filter import kafka as kafka_filter
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import scram as ks


def kafka_reads(argument):
    """(mechanism, {key: value}) as ScramParser reads one --add-scram argument."""
    text = argument.strip()
    mechanism, _sep, config = text.partition("=")
    assert config.startswith("[") and config.endswith("]"), argument
    components = {}
    inner = config[1:-1].split(",")
    while inner and inner[-1] == "":  # Java's String.split drops trailing empty strings
        inner.pop()
    for component in inner:
        key, sep, value = component.partition("=")
        assert sep, component
        if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
            value = value[1:-1]
        components[key] = value
    return mechanism, components


def pairs(args):
    assert args[0::2] == ["--add-scram"] * (len(args) // 2)
    return [kafka_reads(a) for a in args[1::2]]


def test_format_command_without_users_is_the_plain_format():
    cmd = ks.format_command("/opt/kafka/current/bin/kafka-storage.sh", "AAAAAAAAAAAAAAAAAAAAAA",
                            "/etc/kafka/server.properties", users=[], run_as="kafka")
    assert cmd["argv"] == ["runuser", "-u", "kafka", "--", "/opt/kafka/current/bin/kafka-storage.sh", "format",
                           "--cluster-id", "AAAAAAAAAAAAAAAAAAAAAA", "--config", "/etc/kafka/server.properties"]
    assert cmd["environment"] == {"LC_ALL": "C.UTF-8"}


def test_format_command_adds_one_scram_argument_per_user():
    users = [{"name": "admin", "password": "admin-secret"},
             {"name": "alice", "password": "alice-secret", "mechanism": "SCRAM-SHA-256", "iterations": 8192},
             {"name": "alice", "password": "alice-secret", "mechanism": "SCRAM-SHA-512", "iterations": "4096"}]
    argv = ks.format_command("kafka-storage.sh", "cid", "server.properties", users=users)["argv"]
    assert argv[:6] == ["kafka-storage.sh", "format", "--cluster-id", "cid", "--config", "server.properties"]
    assert argv[6:] == [
        "--add-scram", 'SCRAM-SHA-512=[name="admin",password="admin-secret"]',
        "--add-scram", 'SCRAM-SHA-256=[name="alice",password="alice-secret",iterations=8192]',
        "--add-scram", 'SCRAM-SHA-512=[name="alice",password="alice-secret",iterations=4096]',
    ]


@pytest.mark.parametrize("name, password", [
    ("alice", "alice-secret"),
    ("alice", '"quoted"'),
    ("alice", '"leading quote'),
    ("alice", 'trailing quote"'),
    ("alice", "a=b==c"),
    ("alice", "ends with ]"),
    ("alice", "[bracketed]"),
    ("alice", "  spaces around  "),
    ("alice", "ünïcødé-€"),
    ("alice", "'single' $(id) `x` \\n"),
    ("a=b", "x"),
    ('"alice"', "x"),
], ids=["plain", "quoted", "leading-quote", "trailing-quote", "equals", "bracket-end", "brackets", "spaces",
        "non-ascii", "shell-characters", "name-equals", "name-quoted"])
def test_kafka_reads_back_what_was_given(name, password):
    args = ks.add_scram_args([{"name": name, "password": password}])
    assert pairs(args) == [("SCRAM-SHA-512", {"name": name, "password": password})]


@pytest.mark.parametrize("user, fragment", [
    ({"name": "", "password": "x"}, "kafka_broker_scram_users[0].name: empty"),
    ({"name": "  ", "password": "x"}, "kafka_broker_scram_users[0].name: empty"),
    ({"password": "x"}, "kafka_broker_scram_users[0].name: empty"),
    ({"name": "alice", "password": ""}, "kafka_broker_scram_users[0].password: empty (SCRAM password empty for user 'alice')"),
    ({"name": "alice"}, "kafka_broker_scram_users[0].password: empty"),
    ({"name": "alice", "password": "x", "mechanism": "SCRAM-SHA-1"},
     "kafka_broker_scram_users[0].mechanism: 'SCRAM-SHA-1' is not one of SCRAM-SHA-256, SCRAM-SHA-512"),
    ({"name": "alice", "password": "x", "mechanism": "scram-sha-512"},
     "kafka_broker_scram_users[0].mechanism: 'scram-sha-512' is not one of"),
    ({"name": "a,b", "password": "x"},
     "kafka_broker_scram_users[0].name: 'a,b' holds a ',', which kafka-storage.sh format --add-scram cannot pass"),
    ({"name": "alice", "password": "pw,s3cret"},
     "kafka_broker_scram_users[0].password: holds a ',', which kafka-storage.sh format --add-scram cannot pass"),
    ({"name": "alice", "password": "pw\0s3cret"}, "kafka_broker_scram_users[0].password: holds a NUL character"),
    ({"name": "alice", "password": "x", "iterations": 1000},
     "kafka_broker_scram_users[0].iterations: 1000 is not a whole number from 4096 to 16384 (Kafka's bounds for SCRAM-SHA-512)"),
    ({"name": "alice", "password": "x", "iterations": 16385}, "kafka_broker_scram_users[0].iterations: 16385 is not"),
    ({"name": "alice", "password": "x", "iterations": True}, "kafka_broker_scram_users[0].iterations: True is not"),
    ({"name": "alice", "password": "x", "iterations": "many"}, "kafka_broker_scram_users[0].iterations: 'many' is not"),
    ("alice", "kafka_broker_scram_users[0]: must be a mapping {name, password, mechanism}, got str"),
], ids=["name-empty", "name-blank", "name-missing", "password-empty", "password-missing", "mechanism-unknown",
        "mechanism-lower-case", "name-comma", "password-comma", "password-nul", "iterations-low", "iterations-high",
        "iterations-bool", "iterations-text", "not-a-mapping"])
def test_user_faults_name_the_item(user, fragment):
    faults = ks.scram_user_faults([user])
    assert len(faults) == 1 and faults[0].startswith(fragment), faults
    assert "s3cret" not in faults[0]
    with pytest.raises(ValueError, match="kafka_broker_scram_users"):
        ks.add_scram_args([user])


def test_each_fault_is_its_own_message_and_duplicates_name_the_first():
    faults = ks.scram_user_faults([
        {"name": "alice", "password": "x"},
        {"name": "bob", "password": ""},
        {"name": "alice", "password": "y", "mechanism": "SCRAM-SHA-512"},
        {"name": "alice", "password": "y", "mechanism": "SCRAM-SHA-256"},
        {"name": "", "password": ""},
    ])
    assert faults == [
        "kafka_broker_scram_users[1].password: empty (SCRAM password empty for user 'bob')",
        "kafka_broker_scram_users[2]: user 'alice' with SCRAM-SHA-512 is already kafka_broker_scram_users[0]",
        "kafka_broker_scram_users[4].name: empty",
        "kafka_broker_scram_users[4].password: empty (SCRAM password empty for user '')",
    ]


def test_no_users_no_faults():
    assert ks.scram_user_faults(None) == [] and ks.scram_user_faults([]) == []
    assert ks.scram_user_faults("alice") == ["kafka_broker_scram_users: must be a list of {name, password, mechanism}, got str"]


def test_scrub_masks_every_password_longest_first():
    users = [{"name": "a", "password": "pw"}, {"name": "b", "password": "pw-longer"}, {"name": "c", "password": ""}]
    text = "Error in 'SCRAM-SHA-512=[name=\"b\",password=\"pw-longer\"]' and pw"
    assert ks.scrub(text, users) == "Error in 'SCRAM-SHA-512=[name=\"b\",password=\"********\"]' and ********"
    assert ks.scrub(None, users) == ""


SASL = [{"name": "PLAINTEXT", "port": 9092, "protocol": "PLAINTEXT"},
        {"name": "SASL_PLAINTEXT", "port": 9094, "protocol": "SASL_PLAINTEXT"}]


@pytest.mark.parametrize("inter, properties", [
    ("PLAINTEXT", {"sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512", "sasl.enabled.mechanisms": "PLAIN"}),
    ("SASL_PLAINTEXT", {}),
    ("SASL_PLAINTEXT", {"sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
                        "sasl.enabled.mechanisms": "PLAIN, SCRAM-SHA-512"}),
    ("SASL_PLAINTEXT", {"sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
                        "sasl.enabled.mechanisms": ["SCRAM-SHA-512"]}),
    ("SASL_PLAINTEXT", {"sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512", "sasl.enabled.mechanisms": "PLAIN",
                        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "SCRAM-SHA-512"}),
    ("SASL_PLAINTEXT", {"sasl.mechanism.inter.broker.protocol": "PLAIN", "sasl.enabled.mechanisms": "PLAIN",
                        "listener.name.plaintext.sasl.enabled.mechanisms": "SCRAM-SHA-512"}),
], ids=["plaintext-inter-broker", "kafka-defaults-gssapi", "in-global-list", "yaml-list", "listener-override",
        "other-listener-override"])
def test_inter_broker_mechanism_offered(inter, properties):
    assert ks.inter_broker_mechanism_faults(SASL, inter, properties) == []


@pytest.mark.parametrize("properties, expected", [
    ({"sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512", "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256"},
     "kafka_broker_properties: sasl.mechanism.inter.broker.protocol is SCRAM-SHA-512, but the inter-broker listener "
     "SASL_PLAINTEXT (SASL_PLAINTEXT) does not offer it: it offers PLAIN, SCRAM-SHA-256 (sasl.enabled.mechanisms); "
     "add SCRAM-SHA-512 there or name a mechanism it offers"),
    ({"sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512"},
     "kafka_broker_properties: sasl.mechanism.inter.broker.protocol is SCRAM-SHA-512, but the inter-broker listener "
     "SASL_PLAINTEXT (SASL_PLAINTEXT) does not offer it: it offers GSSAPI (sasl.enabled.mechanisms not set: Kafka's "
     "default); add SCRAM-SHA-512 there or name a mechanism it offers"),
    ({"sasl.enabled.mechanisms": "SCRAM-SHA-512"},
     "kafka_broker_properties: sasl.mechanism.inter.broker.protocol is not set (Kafka's default GSSAPI), but the "
     "inter-broker listener SASL_PLAINTEXT (SASL_PLAINTEXT) does not offer it: it offers SCRAM-SHA-512 "
     "(sasl.enabled.mechanisms); add GSSAPI there or name a mechanism it offers"),
    ({"sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512", "sasl.enabled.mechanisms": "SCRAM-SHA-512",
      "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN"},
     "kafka_broker_properties: sasl.mechanism.inter.broker.protocol is SCRAM-SHA-512, but the inter-broker listener "
     "SASL_PLAINTEXT (SASL_PLAINTEXT) does not offer it: it offers PLAIN "
     "(listener.name.sasl_plaintext.sasl.enabled.mechanisms); add SCRAM-SHA-512 there or name a mechanism it offers"),
    ({"sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512", "sasl.enabled.mechanisms": "SCRAM-SHA-512",
      "listener.name.sasl_plaintext.sasl.enabled.mechanisms": ""},
     "kafka_broker_properties: sasl.mechanism.inter.broker.protocol is SCRAM-SHA-512, but the inter-broker listener "
     "SASL_PLAINTEXT (SASL_PLAINTEXT) does not offer it: it offers nothing"),
], ids=["not-in-global-list", "kafka-default-list", "kafka-default-mechanism", "listener-override-wins",
        "listener-override-empty"])
def test_inter_broker_mechanism_not_offered(properties, expected):
    faults = ks.inter_broker_mechanism_faults(SASL, "SASL_PLAINTEXT", properties)
    assert len(faults) == 1 and faults[0].startswith(expected), faults


def test_upper_case_listener_prefix_is_refused_as_never_read():
    faults = ks.inter_broker_mechanism_faults(SASL, "SASL_PLAINTEXT", {
        "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512", "sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "listener.name.SASL_PLAINTEXT.sasl.enabled.mechanisms": "SCRAM-SHA-512"})
    assert faults == ["kafka_broker_properties: listener.name.SASL_PLAINTEXT.sasl.enabled.mechanisms is never read: "
                      "Kafka looks listener settings up under the lower-case listener name "
                      "(listener.name.sasl_plaintext.sasl.enabled.mechanisms)"]


def test_filters_wrap_the_helper():
    users = [{"name": "alice", "password": "pw,s3cret"}]
    with pytest.raises(AnsibleFilterError, match=r"kafka_storage_format: kafka_broker_scram_users\[0\].password") as err:
        kafka_filter.kafka_storage_format("kafka-storage.sh", "cid", "server.properties", scram_users=users)
    assert "s3cret" not in str(err.value)
    assert kafka_filter.kafka_scram_scrub("x pw,s3cret y", users) == "x ******** y"
