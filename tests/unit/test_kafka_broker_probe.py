# -*- coding: utf-8 -*-
"""The health probe on a secured listener, through the role itself, run by ansible-playbook on localhost.

The configure tasks write probe.properties (the broker's own login on the probe listener,
plugins/module_utils/kafka/probe_config.py) into a temporary directory, and the service record
the shared health wait reads (__kafka_broker_service) is written next to it, so the test sees the
file's keys (read back by java.util.Properties, as the probe's Java tool reads it), its owner and
mode, the probe's command line and environment, that no password or keytab byte reaches the output
of a -vvv --diff run, and that a PLAINTEXT probe listener takes the file away. The preflight
refuses a probe that cannot log in as the broker, naming the variable.
"""

from __future__ import annotations

import base64
import json
import stat

import pytest
import yaml

import local_playbook
from test_preflight_rules import failures, preflight_play, run_playbook

SECRET = "pr0be-adm1n-s3cret"
SCRAM_LOGIN = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="%s";' % SECRET
PRINCIPAL = "kafka/k1.example.com@EXAMPLE.COM"
MARKER = b"KEYTAB-BYTES-probe-5e1d"
# Printable on purpose: the copy module's --diff shows a text file's content, so only no_log hides it.
KEYTAB_BYTES = b"keytab v5.2\n" + MARKER + b"\n"
LISTENERS = [{"name": "INTERNAL", "port": 9092, "protocol": "SASL_PLAINTEXT"},
             {"name": "PLAIN", "port": 9094, "protocol": "PLAINTEXT"}]
SCRAM_PROPERTIES = {"sasl.enabled.mechanisms": "SCRAM-SHA-512,GSSAPI",
                    "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
                    "listener.name.internal.scram-sha-512.sasl.jaas.config": SCRAM_LOGIN}
BASE = {"kafka_broker_advertised_host": "k1.example.com", "kafka_broker_listeners": LISTENERS,
        "kafka_broker_inter_broker_listener": "INTERNAL", "kafka_broker_properties": SCRAM_PROPERTIES}


@pytest.fixture
def keytab(tmp_path):
    path = tmp_path / "controller" / "kafka.keytab"
    path.parent.mkdir()
    path.write_bytes(KEYTAB_BYTES)
    return str(path)


def role_case(tmp_path, **variables):
    """Preflight and configure into tmp_path, then the service record as JSON; -vvv --diff."""
    etc, data, record = tmp_path / "etc", tmp_path / "data", tmp_path / "service.json"
    values = dict(BASE, kafka_broker_config_dir=str(etc), kafka_broker_log_dirs=[str(data)],
                  kafka_broker_restart_on_change=False, kafka_common_user="root", kafka_common_group="daemon",
                  kafka_common_log_dir=str(tmp_path / "log"), kafka_common_home=str(tmp_path / "home"),
                  __kafka_common_current_dir="/opt/kafka/current", __kafka_common_log4j2=True)
    values.update(variables)
    plays = [{"hosts": "localhost", "gather_facts": False, "vars": values, "tasks": [
        {"ansible.builtin.include_role": {"name": "kafkaops.mirrormaker.kafka_broker", "tasks_from": t, "public": True}}
        for t in ("preflight", "configure")] + [
        {"ansible.builtin.copy": {"content": "{{ __kafka_broker_service | to_json }}", "dest": str(record),
                                  "mode": "0644"}}]}]
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump(plays, sort_keys=False))
    result = local_playbook.run(playbook, "-vvv", "--diff")
    assert result.returncode == 0, result.stdout[-4000:]
    output = result.stdout + result.stderr
    for secret in (SECRET, MARKER.decode(), base64.b64encode(KEYTAB_BYTES).decode(), base64.b64encode(MARKER).decode()):
        assert secret not in output
    probe_task = output.split("Render the health probe's client settings]", 1)[1].split("TASK [", 1)[0]
    assert "the output has been hidden" in probe_task or "skipping" in probe_task
    return etc / "probe.properties", json.loads(record.read_text())


def test_the_probe_logs_in_as_the_broker(tmp_path, keytab, java_load):
    # The lab's brokers: SCRAM and GSSAPI on one listener, SCRAM between brokers, so SCRAM it is.
    kerberos = {"principal": PRINCIPAL, "keytab_src": keytab, "krb5_conf": "/etc/krb5.conf"}
    probe, service = role_case(tmp_path, kafka_broker_kerberos=kerberos)
    (props,) = java_load([str(probe)])
    assert props == {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
                     "sasl.jaas.config": SCRAM_LOGIN}
    info = probe.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (0, 0, 0o600)
    assert service["probe_argv"] == ["/opt/kafka/current/bin/kafka-broker-api-versions.sh", "--bootstrap-server",
                                     "k1.example.com:9092", "--command-config", str(probe)]
    # krb5.conf only for a Kerberos login: SCRAM needs none.
    assert service["probe_environment"] == {}

    # Kerberos between brokers: the keytab the role copies, krb5.conf for the probe's JVM.
    probe, service = role_case(tmp_path, kafka_broker_kerberos=kerberos, kafka_broker_properties={
        "sasl.enabled.mechanisms": "GSSAPI", "sasl.mechanism.inter.broker.protocol": "GSSAPI"})
    (props,) = java_load([str(probe)])
    assert props == {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI",
                     "sasl.kerberos.service.name": "kafka",
                     "sasl.jaas.config": ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true '
                                          'storeKey=true keyTab="%s" principal="%s";'
                                          % (probe.parent / "kafka.keytab", PRINCIPAL))}
    assert service["probe_argv"][-2:] == ["--command-config", str(probe)]
    assert service["probe_environment"] == {"KAFKA_OPTS": "-Djava.security.krb5.conf=/etc/krb5.conf"}

    # A PLAINTEXT probe listener needs no login: the file goes, the probe runs without it.
    probe, service = role_case(tmp_path, kafka_broker_inter_broker_listener="PLAIN", kafka_broker_properties={},
                               kafka_broker_listeners=[LISTENERS[1]], kafka_broker_kerberos={})
    assert not probe.exists()
    assert service["probe_argv"] == ["/opt/kafka/current/bin/kafka-broker-api-versions.sh", "--bootstrap-server",
                                     "k1.example.com:9094"]


def test_controller_only_node_probes_the_quorum_with_its_controller_login(tmp_path, java_load):
    login = SCRAM_LOGIN.replace("scram.ScramLoginModule", "plain.PlainLoginModule")
    probe, service = role_case(
        tmp_path, kafka_broker_process_roles=["controller"],
        kafka_broker_controller_listener={"name": "CONTROLLER", "port": 9093, "protocol": "SASL_PLAINTEXT"},
        kafka_broker_jaas_config="", kafka_broker_properties={
            "sasl.enabled.mechanisms": "PLAIN", "sasl.mechanism.controller.protocol": "PLAIN",
            "listener.name.controller.plain.sasl.jaas.config": login})
    (props,) = java_load([str(probe)])
    assert props == {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": login}
    assert service["probe_argv"] == ["/opt/kafka/current/bin/kafka-metadata-quorum.sh", "--bootstrap-controller",
                                     "k1.example.com:9093", "--command-config", str(probe), "describe", "--status"]


def test_preflight_refuses_a_probe_without_the_brokers_login(tmp_path):
    variables = dict(BASE, kafka_broker_properties={"sasl.enabled.mechanisms": "SCRAM-SHA-512",
                                                    "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512"},
                     kafka_broker_jaas_config=('KafkaServer { org.apache.kafka.common.security.scram.ScramLoginModule '
                                               'required username="admin" password="%s"; };' % SECRET))
    result, report = run_playbook(tmp_path, preflight_play("kafka_broker", variables))
    assert result.returncode != 0
    assert failures(report) == [
        "kafka_broker_properties: the health probe logs in to listener INTERNAL (SASL_PLAINTEXT) as the broker does, "
        "with SCRAM-SHA-512 (sasl.mechanism.inter.broker.protocol is SCRAM-SHA-512), but server.properties has no "
        "listener.name.internal.scram-sha-512.sasl.jaas.config (a login only in kafka_broker_jaas_config's "
        "KafkaServer section serves the broker, not a client); set listener.name.internal.scram-sha-512.sasl.jaas.config "
        "in kafka_broker_properties"]
    assert SECRET not in result.stdout + result.stderr
