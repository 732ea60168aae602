# -*- coding: utf-8 -*-
"""kafka_broker_kerberos through the role itself, run by ansible-playbook on localhost.

The preflight refuses each fault with its own message naming the variable; the configure tasks
(roles/kafka_broker/tasks/configure.yml) then write server.properties and the keytab into a
temporary directory, and the unit template renders KAFKA_OPTS, so the test sees what the role
writes (server.properties read back by java.util.Properties, as Kafka reads it), the keytab's
owner, group and mode, that its bytes never reach the output of a -vvv --diff run, and that
emptying the variable removes the keytab.
"""

from __future__ import annotations

import base64
import grp
import os
import stat

import pytest
import yaml

import local_playbook
from test_preflight_rules import REPO, failures, run_playbook

PRINCIPAL = "kafka/k1.example.com@EXAMPLE.COM"
MARKER = b"KEYTAB-BYTES-7f3a9c"
# Printable on purpose: the copy module's --diff shows a text file's content (a binary one it skips),
# so only no_log keeps these bytes out of the output.
KEYTAB_BYTES = b"keytab v5.2\n" + MARKER + b"\nprincipal key material\n"
LISTENERS = [{"name": "CLIENT", "port": 9092, "protocol": "SASL_PLAINTEXT"},
             {"name": "PLAIN", "port": 9094, "protocol": "PLAINTEXT"}]
BASE = {"kafka_broker_advertised_host": "k1", "kafka_broker_listeners": LISTENERS,
        "kafka_broker_inter_broker_listener": "CLIENT",
        "kafka_broker_controller_listener": {"name": "CONTROLLER", "port": 9093, "protocol": "SASL_PLAINTEXT"},
        "kafka_broker_properties": {"sasl.enabled.mechanisms": "GSSAPI"}}
# Group of the keytab in the role test: an existing group other than root's.
GROUP = "daemon"


@pytest.fixture
def keytab(tmp_path):
    path = tmp_path / "controller" / "kafka.keytab"
    path.parent.mkdir()
    path.write_bytes(KEYTAB_BYTES)
    return str(path)


def play(variables, tasks_from=("preflight",)):
    return [{"hosts": "localhost", "gather_facts": False, "vars": variables,
             "tasks": [{"ansible.builtin.include_role": {"name": "kafkaops.mirrormaker.kafka_broker",
                                                         "tasks_from": t, "public": True}}
                       for t in tasks_from]}]


def test_preflight_passes_a_complete_setting(tmp_path, keytab):
    kerberos = {"principal": PRINCIPAL, "keytab_src": keytab, "realm": "EXAMPLE.COM", "krb5_conf": "/etc/krb5.conf"}
    result, report = run_playbook(tmp_path, play(dict(BASE, kafka_broker_kerberos=kerberos)))
    assert result.returncode == 0, failures(report)


@pytest.mark.parametrize("kerberos, expected", [
    ({}, ["kafka_broker_kerberos: empty, but listeners CLIENT (SASL_PLAINTEXT), CONTROLLER (SASL_PLAINTEXT) offer "
          "GSSAPI (sasl.enabled.mechanisms); set kafka_broker_kerberos {principal, keytab_src} for the broker's "
          "Kerberos login, or offer other mechanisms there"]),
    ({"principal": "", "keytab_src": "/nonexistent/kafka.keytab", "krb5_conf": '/etc/krb5.conf" -Devil=1'},
     ["kafka_broker_kerberos.principal: required when kafka_broker_kerberos is set (the broker's own principal, "
      "e.g. kafka/broker1.example.com@EXAMPLE.COM)",
      "kafka_broker_kerberos.keytab_src: /nonexistent/kafka.keytab is not a file on the controller",
      "kafka_broker_kerberos.krb5_conf: '/etc/krb5.conf\" -Devil=1' is not an absolute path of letters, digits and "
      ". _ / @ + -; it goes into the unit's Environment line (KAFKA_OPTS=-Djava.security.krb5.conf=...)"]),
    ({"principal": "kafka/k1.example.com", "keytab_src": "KEYTAB"},
     ["kafka_broker_kerberos.principal: 'kafka/k1.example.com' is not a Kerberos principal primary[/instance]@REALM "
      "(letters, digits and . _ - in each part, e.g. kafka/broker1.example.com@EXAMPLE.COM)"]),
    ({"principal": PRINCIPAL, "keytab_src": "KEYTAB", "realm": "PROD.EXAMPLE.COM"},
     ["kafka_broker_kerberos.realm: the principal 'kafka/k1.example.com@EXAMPLE.COM' is not in realm "
      "'PROD.EXAMPLE.COM'; give the principal as primary[/instance]@PROD.EXAMPLE.COM"]),
    ({"principal": PRINCIPAL, "keytab_src": "KEYTAB", "servce_name": "kafka"},
     ["kafka_broker_kerberos.servce_name: unknown key; did you mean 'service_name'?"]),
], ids=["gssapi-without-kerberos", "principal-empty-keytab-missing-krb5-quote", "principal-without-realm",
        "realm-mismatch", "unknown-key"])
def test_preflight_refuses_one_message_per_fault(tmp_path, keytab, kerberos, expected):
    kerberos = {k: keytab if v == "KEYTAB" else v for k, v in kerberos.items()}
    result, report = run_playbook(tmp_path, play(dict(BASE, kafka_broker_kerberos=kerberos)))
    assert result.returncode != 0
    assert failures(report) == expected


def test_a_non_gssapi_sasl_listener_still_needs_credentials(tmp_path, keytab):
    kerberos = {"principal": PRINCIPAL, "keytab_src": keytab}
    properties = {"sasl.enabled.mechanisms": "GSSAPI,SCRAM-SHA-512"}
    result, report = run_playbook(tmp_path, play(dict(BASE, kafka_broker_kerberos=kerberos,
                                                      kafka_broker_properties=properties)))
    assert result.returncode != 0
    assert failures(report) == [
        "kafka_broker_listeners: a SASL listener needs credentials, but neither kafka_broker_jaas_config nor a "
        "listener.name.*.sasl.jaas.config in kafka_broker_properties is set (for SCRAM-SHA-512; kafka_broker_kerberos "
        "serves GSSAPI only)"]


# ---------------------------------------------------------------------- what the role writes

def role_case(tmp_path, kerberos, **overrides):
    """Preflight and configure into tmp_path, then the unit template; -vvv --diff, the default callback."""
    etc, data, unit = tmp_path / "etc", tmp_path / "data", tmp_path / "kafka.service"
    variables = dict(BASE, kafka_broker_kerberos=kerberos, kafka_broker_config_dir=str(etc),
                     kafka_broker_log_dirs=[str(data)], kafka_broker_restart_on_change=False,
                     kafka_common_user="root", kafka_common_group=GROUP, kafka_common_log_dir=str(tmp_path / "log"),
                     kafka_common_home=str(tmp_path / "home"), __kafka_common_current_dir=str(tmp_path / "kafka"),
                     __kafka_common_log4j2=True, **overrides)
    plays = play(variables, ("preflight", "configure"))
    plays[0]["tasks"].append({"ansible.builtin.template": {
        "src": os.path.join(REPO, "roles/kafka_common/templates/service.unit.j2"), "dest": str(unit), "mode": "0644"},
        "vars": {"__kafka_common_unit": "{{ __kafka_broker_unit }}"}})
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump(plays, sort_keys=False))
    result = local_playbook.run(playbook, "-vvv", "--diff")
    assert result.returncode == 0, result.stdout[-4000:]
    output = result.stdout + result.stderr
    for secret in (MARKER.decode(), base64.b64encode(KEYTAB_BYTES).decode(), base64.b64encode(MARKER).decode()):
        assert secret not in output
    return etc, unit.read_text().splitlines(), output


def test_role_writes_the_login_the_keytab_and_kafka_opts(tmp_path, keytab, java_load):
    kerberos = {"principal": PRINCIPAL, "keytab_src": keytab, "realm": "EXAMPLE.COM", "krb5_conf": "/etc/krb5.conf"}
    etc, unit, output = role_case(tmp_path, kerberos)
    host_keytab = etc / "kafka.keytab"
    login = ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="%s" '
             'principal="%s";' % (host_keytab, PRINCIPAL))
    (props,) = java_load([str(etc / "server.properties")])
    assert {k: v for k, v in props.items() if "sasl" in k or "kerberos" in k} == {
        "sasl.enabled.mechanisms": "GSSAPI",
        "sasl.kerberos.service.name": "kafka",
        "listener.name.client.gssapi.sasl.jaas.config": login,
        "listener.name.controller.gssapi.sasl.jaas.config": login}
    assert props["listener.security.protocol.map"] == "CLIENT:SASL_PLAINTEXT,PLAIN:PLAINTEXT,CONTROLLER:SASL_PLAINTEXT"
    assert 'Environment="KAFKA_OPTS=-Djava.security.krb5.conf=/etc/krb5.conf"' in unit
    info = host_keytab.stat()
    assert host_keytab.read_bytes() == KEYTAB_BYTES
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (0, grp.getgrnam(GROUP).gr_gid, 0o640)
    copy_task = output.split("Copy the broker's Kerberos keytab]", 1)[1].split("TASK [", 1)[0]
    assert "the output has been hidden" in copy_task and "changed: [localhost]" in copy_task

    # Emptying the variable takes the login out of server.properties, the option out of the unit and the key off the host.
    plain = [dict(item, protocol="PLAINTEXT") for item in LISTENERS]
    etc, unit, output = role_case(tmp_path, {}, kafka_broker_listeners=plain, kafka_broker_properties={},
                                  kafka_broker_controller_listener={"name": "CONTROLLER", "port": 9093,
                                                                    "protocol": "PLAINTEXT"})
    assert not host_keytab.exists()
    text = (etc / "server.properties").read_text()
    assert "gssapi" not in text and "kerberos" not in text
    assert not any(line.startswith('Environment="KAFKA_OPTS=') for line in unit)
