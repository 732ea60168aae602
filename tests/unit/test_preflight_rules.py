# -*- coding: utf-8 -*-
"""The roles' own preflight, run by ansible-playbook on localhost with hostile input.

Each bad value must come back as its own message naming the variable; values that reach a
shell line or a unit file (newlines, quotes, '$(...)', '%') are refused or escaped, and the
rendered unit shows what systemd would read.
"""

from __future__ import annotations

import json
import os
import sys

import pytest
import yaml

import local_playbook

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def run_playbook(tmp_path, plays, inventory=None):
    """Run plays on localhost, or on the hosts of inventory (a dict) when given."""
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump(plays, sort_keys=False))
    path = None
    if inventory is not None:
        path = tmp_path / "hosts.yml"
        path.write_text(yaml.safe_dump(inventory, sort_keys=False))
    result = local_playbook.run(playbook, inventory=path, env={"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json"})
    return result, json.loads(result.stdout)


def failures(report):
    """Messages of the failed tasks, on any host (assert lists each fault in its own entry)."""
    found = []
    for play in report["plays"]:
        for task in play["tasks"]:
            for res in task["hosts"].values():
                if res.get("failed"):
                    msg = res.get("msg")
                    found.extend(res.get("errors") or (msg if isinstance(msg, list) else [msg]))
    return found


def preflight_play(role, variables):
    return [{"hosts": "localhost", "gather_facts": True, "vars": variables,
             "tasks": [{"ansible.builtin.include_role": {"name": "kafkaops.mirrormaker." + role,
                                                         "tasks_from": "preflight"}}]}]


HOSTILE = 'x"\nExecStartPre=/bin/sh -c "id > /tmp/pwned'

MM2_BASE = {
    "mirrormaker_clusters": [{"alias": "A", "bootstrap_servers": "a:9092"}, {"alias": "B", "bootstrap_servers": "b:9092"}],
    "mirrormaker_flows": [{"source": "A", "target": "B"}],
    "mirrormaker_advertised_host": "mm2-1",
}


@pytest.mark.parametrize("variables, expected", [
    ({"mirrormaker_heap_opts": HOSTILE},
     "mirrormaker_heap_opts: holds a newline, double quote or backslash"),
    ({"mirrormaker_kafka_opts": "-Dx=1\\"},
     "mirrormaker_kafka_opts: holds a newline, double quote or backslash"),
    ({"mirrormaker_jmx_hostname": 'h" ; touch /tmp/pwned ; "'},
     "mirrormaker_jmx_hostname: \"h\\\" ; touch /tmp/pwned ; \\\"\" is not a host name"),
    ({"mirrormaker_jmx_hostname": "$(id)"}, "mirrormaker_jmx_hostname: \"$(id)\" is not a host name"),
    ({"mirrormaker_krb5_conf": "/etc/krb5.conf\" -Devil=1"}, "mirrormaker_krb5_conf: "),
    ({"mirrormaker_config_dir": "/etc/mm2 dir"}, "mirrormaker_config_dir: \"/etc/mm2 dir\" is not an absolute path"),
    ({"mirrormaker_kafka_opts": "-Djavax.net.ssl.trustStorePassword=changeit"},
     "mirrormaker_kafka_opts: carries a secret (javax.net.ssl.trustStorePassword) that would land in the "
     "world-readable unit file; put client secrets in mirrormaker_clusters[].properties"),
    ({"mirrormaker_jmx_port": 8083}, "mirrormaker_jmx_port: 8083 is also mirrormaker_rest_port"),
    ({"mirrormaker_jmx_authenticate": True}, "mirrormaker_jmx_users: mirrormaker_jmx_authenticate is on"),
    ({"mirrormaker_jaas": {"login_module": "kerberos"}}, "mirrormaker_jaas.principal: login_module kerberos needs"),
    ({"mirrormaker_keytab_src": "/nonexistent/mm2.keytab"},
     "mirrormaker_keytab_src: /nonexistent/mm2.keytab is not a file on the controller"),
    ({"mirrormaker_jaas": {"login_module": "krb"}}, "mirrormaker_jaas.login_module: 'krb' is not one of kerberos"),
    ({"mirrormaker_jaas": {"principal": "mm2@LAB"}}, "mirrormaker_jaas.login_module: required when mirrormaker_jaas is set"),
    ({"mirrormaker_flow": []}, "mirrormaker_flow: unknown variable of this role; did you mean 'mirrormaker_flows'?"),
    ({"mirrormaker_jmx_users": [{"name": "u", "password": "pw-s3cret", "acess": "readonly"}],
      "mirrormaker_jmx_authenticate": True},
     "mirrormaker_jmx_users[0].acess: unknown key; did you mean 'access'?"),
    ({"mirrormaker_clusters": [{"alias": "A", "bootstrap_servers": "a:9092"}]},
     "mirrormaker_clusters: needs two or more clusters, got 1"),
    ({"mirrormaker_jmx_exporter_enabled": True},
     "mirrormaker_jmx_exporter_src: the JMX exporter is on but neither a controller-local jar"),
    ({"mirrormaker_jmx_exporter_enabled": True, "mirrormaker_jmx_exporter_src": "/nonexistent/agent.jar"},
     "mirrormaker_jmx_exporter_src: /nonexistent/agent.jar is not a file on the controller"),
    ({"mirrormaker_jmx_exporter_enabled": True, "mirrormaker_jmx_exporter_url": "https://repo.invalid/a.jar",
      "mirrormaker_jmx_exporter_sha256": "abc"},
     "mirrormaker_jmx_exporter_sha256: \"abc\" is not a sha256"),
    ({"mirrormaker_jaas": {"login_module": "kerberos", "principal": "mm2/mm2-1@LAB.EXAMPLE", "realm": "PROD.EXAMPLE",
                           "keytab": "/etc/kafka-mirrormaker/mm2.keytab"}},
     "mirrormaker_jaas.realm: the principal \"mm2/mm2-1@LAB.EXAMPLE\" is not in realm \"PROD.EXAMPLE\""),
    ({"mirrormaker_jaas": {"login_module": "kerberos", "principal": 'mm2" debug=true', "keytab": "/k"}},
     "mirrormaker_jaas.principal: \"mm2\\\" debug=true\" is not a Kerberos principal"),
    ({"mirrormaker_jaas": {"login_module": "scram", "username": "mm2", "password": 'x"pw-s3cret'}},
     "mirrormaker_jaas.password: holds a double quote, backslash or newline"),
], ids=["heap-newline-quote", "opts-backslash", "jmx-host-quote", "jmx-host-subshell", "krb5-quote",
        "config-dir-blank", "secret-in-opts", "jmx-equals-rest", "jmx-auth-no-users", "kerberos-no-principal",
        "keytab-missing", "login-module-choice", "login-module-missing", "top-level-typo", "jmx-user-typo", "one-cluster",
        "exporter-no-jar", "exporter-jar-missing", "exporter-bad-sha256", "realm-mismatch", "principal-quote",
        "jaas-password-quote"])
def test_mirrormaker_preflight_refuses(tmp_path, variables, expected):
    result, report = run_playbook(tmp_path, preflight_play("mirrormaker", dict(MM2_BASE, **variables)))
    assert result.returncode != 0
    messages = failures(report)
    assert any(expected in m for m in messages), messages
    assert "pw-s3cret" not in result.stdout


# Letters a regex escape could eat (a doubled backslash in a folded YAML scalar once made the class
# exclude 's' and refused every principal with an s in it).
@pytest.mark.parametrize("principal", ["mm2/mm2-1.lab.example@LAB.EXAMPLE", "mirrormaker/sec-mm2-1.us-east.example@LAB.EXAMPLE"])
def test_mirrormaker_preflight_accepts_a_principal_of_its_realm(tmp_path, principal):
    jaas = {"login_module": "kerberos", "principal": principal, "realm": "LAB.EXAMPLE",
            "keytab": "/etc/security/keytabs/mm2.keytab"}
    result, report = run_playbook(tmp_path, preflight_play("mirrormaker", dict(MM2_BASE, mirrormaker_jaas=jaas)))
    assert result.returncode == 0, failures(report)


def test_every_fault_is_its_own_message(tmp_path):
    result, report = run_playbook(tmp_path, preflight_play("mirrormaker", dict(
        MM2_BASE, mirrormaker_heap_opts=HOSTILE, mirrormaker_jmx_hostname="$(id)", mirrormaker_jmx_port=70000)))
    messages = failures(report)
    assert result.returncode != 0
    assert len(messages) == 3, messages
    assert [m.split(":")[0] for m in messages] == ["mirrormaker_jmx_port", "mirrormaker_jmx_hostname",
                                                   "mirrormaker_heap_opts"]


def test_broker_preflight_refuses_hostile_values(tmp_path):
    result, report = run_playbook(tmp_path, preflight_play("kafka_broker", {
        "kafka_broker_advertised_host": "k1", "kafka_broker_opts": HOSTILE,
        "kafka_broker_jvm_performance_opts": "-Dssl.keystore.password=hunter2",
        "kafka_broker_listeners": [{"name": "PLAINTEXT", "port": 9092, "protocol": "PLAINTEXT", "tls": True}]}))
    messages = failures(report)
    assert result.returncode != 0
    assert "kafka_broker_listeners[0].tls: unknown key; known keys: name, port, protocol" in messages
    assert "hunter2" not in result.stdout


# Refused with the other input, before the configure step creates the broker's directories.
@pytest.mark.parametrize("cluster_id", ["short", "MkU3OEVBNTcwNTJENDM2Qg=="])
def test_broker_preflight_refuses_a_malformed_cluster_id(tmp_path, cluster_id):
    result, report = run_playbook(tmp_path, preflight_play("kafka_broker", {
        "kafka_broker_advertised_host": "k1", "kafka_broker_cluster_id": cluster_id}))
    assert result.returncode != 0
    assert failures(report) == ["kafka_broker_cluster_id: %r is not a 22-character base64url id" % cluster_id]


# Each host of the cluster is told, in its preflight, before any of them changes.
def test_broker_preflight_refuses_hosts_of_one_cluster_that_give_different_ids(tmp_path):
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    ids = {"k1": "MkU3OEVBNTcwNTJENDM2Qg", "k2": "AAAAAAAAAAAAAAAAAAAAAA"}
    inventory = {"all": {"vars": local, "hosts": {
        host: {"kafka_broker_advertised_host": host, "kafka_broker_cluster_id": cid} for host, cid in ids.items()}}}
    plays = [{"hosts": "all", "gather_facts": False,
              "tasks": [{"ansible.builtin.include_role": {"name": "kafkaops.mirrormaker.kafka_broker",
                                                          "tasks_from": "preflight"}}]}]
    result, report = run_playbook(tmp_path, plays, inventory)
    assert result.returncode != 0
    assert failures(report) == ["kafka_broker_cluster_id: hosts of cluster 'kafka' give different ids: "
                                "AAAAAAAAAAAAAAAAAAAAAA (k2); MkU3OEVBNTcwNTJENDM2Qg (k1)"] * 2


def test_broker_preflight_refuses_a_secret_in_jvm_options(tmp_path):
    result, report = run_playbook(tmp_path, preflight_play("kafka_broker", {
        "kafka_broker_advertised_host": "k1", "kafka_broker_opts": "-Dssl.keystore.password=hunter2"}))
    messages = failures(report)
    assert any(m.startswith("kafka_broker_opts: carries a secret (ssl.keystore.password) that would land in the "
                            "world-readable unit file; put client or listener secrets in kafka_broker_properties")
               for m in messages), messages
    assert "hunter2" not in result.stdout


def test_unit_escapes_systemd_specifiers(tmp_path):
    dest = tmp_path / "x.service"
    plays = [{"hosts": "localhost", "gather_facts": False,
              "vars": {"kafka_common_user": "kafka", "kafka_common_group": "kafka"},
              "tasks": [{"ansible.builtin.template": {
                  "src": os.path.join(REPO, "roles/kafka_common/templates/service.unit.j2"), "dest": str(dest),
                  "mode": "0644"},
                  "vars": {"__kafka_common_unit": {
                      "role": "mirrormaker", "name": "x", "description": "100% mirrored", "documentation": "https://x",
                      "environment": {"KAFKA_OPTS": "-Xlog:gc:file=/var/log/gc-%t.log", "EMPTY": ""},
                      "exec_start": "/opt/kafka/bin/run.sh /etc/x", "timeout_stop": 120, "limit_nofile": 1000,
                      "read_write_paths": ["/var/log/x", "/var/log/x"]}}}]}]
    result = run_playbook(tmp_path, plays)[0]
    assert result.returncode == 0, result.stdout[-2000:]
    unit = dest.read_text()
    assert 'Environment="KAFKA_OPTS=-Xlog:gc:file=/var/log/gc-%%t.log"' in unit.splitlines()
    assert "Description=100%% mirrored" in unit.splitlines()
    assert "EMPTY" not in unit
    assert "ReadWritePaths=/var/log/x" in unit.splitlines()


def pulse_case(tmp_path, mm2_vars=None, pulse_vars=None, pulse_group=("pulse-1",), all_vars=None):
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory = {"all": {"vars": dict(local, **(all_vars or {})), "children": {
        "mirrormakers": {"hosts": {"mm2-1": None, "mm2-2": (mm2_vars or {}).get("mm2-2")}},
        "pulse": {"hosts": {h: None for h in pulse_group}},
        "others": {"hosts": {"pulse-0": None}}}}}
    plays = [
        # What the preflight play does: the MirrorMaker checks on every MirrorMaker host first.
        {"hosts": "mirrormakers", "gather_facts": True, "vars": MM2_BASE,
         "tasks": [{"ansible.builtin.include_role": {"name": "kafkaops.mirrormaker.mirrormaker", "tasks_from": "preflight"}}]},
        {"hosts": "mirrormakers", "gather_facts": False, "vars": pulse_vars or {},
         "tasks": [{"ansible.builtin.include_role": {"name": "kafkaops.mirrormaker.pulse", "tasks_from": "preflight"},
                    "run_once": True}]},
    ]
    result, report = run_playbook(tmp_path, plays, inventory)
    return result, failures(report)


def test_pulse_preflight_passes_a_consistent_inventory(tmp_path):
    result, messages = pulse_case(tmp_path)
    assert result.returncode == 0 and messages == [], messages


def test_pulse_jmx_port_follows_the_mirrormaker_role(tmp_path):
    # Both hosts on 9999: the default follows them; an explicit 9998 is refused.
    on_9999 = {"mirrormaker_jmx_port": 9999}
    result, messages = pulse_case(tmp_path, all_vars=on_9999)
    assert result.returncode == 0 and messages == [], messages
    result, messages = pulse_case(tmp_path, pulse_vars={"pulse_mm2_jmx_port": 9998}, all_vars=on_9999)
    assert messages == ["pulse_mm2_jmx_port: 9998 is not the mirrormaker_jmx_port of mm2-1, mm2-2 (9999)"], messages


@pytest.mark.parametrize("mm2_vars, pulse_vars, group, expected", [
    (None, {"pulse_mm2_nodes": []}, ("pulse-1",), "pulse_mm2_nodes: empty"),
    ({"mm2-2": {"mirrormaker_jmx_port": 9999}}, None, ("pulse-1",),
     "pulse_mm2_jmx_port: 9998 is not the mirrormaker_jmx_port of mm2-2 (9999)"),
    ({"mm2-2": {"mirrormaker_jmx_enabled": False}}, None, ("pulse-1",), "mirrormaker_jmx_enabled: false on mm2-2"),
    (None, {"pulse_hosts": ["pulse-9"]}, ("pulse-1",), "pulse_hosts: pulse-9 not a host of this inventory"),
    (None, None, (), "pulse_hosts: no Pulse host"),
    (None, {"pulse_mm2_hosts": ["mm2-1", "pulse-0"]}, ("pulse-1",), "pulse_mm2_hosts: pulse-0 not in the mirrormakers group"),
    (None, {"pulse_answers": [{"prompt": "x", "answr": "y"}]}, ("pulse-1",), "pulse_answers[0].answr: unknown key"),
    (None, {"pulse_hostname_match": "ip"}, ("pulse-1",), "pulse_hostname_match: 'ip' is not one of"),
], ids=["no-nodes", "jmx-port-differs", "jmx-disabled", "pulse-host-unknown", "no-pulse-host", "mm2-host-unknown",
        "answer-typo", "match-choice"])
def test_pulse_preflight_refuses(tmp_path, mm2_vars, pulse_vars, group, expected):
    result, messages = pulse_case(tmp_path, mm2_vars, pulse_vars, group)
    assert result.returncode != 0
    assert any(expected in m for m in messages), messages


def test_pulse_preflight_never_prints_a_secret_answer(tmp_path):
    result, messages = pulse_case(tmp_path, None, {"pulse_secret_answers": [{"prompt": "password", "answer": "pw-s3cret"}],
                                                   "pulse_mm2_nodes": []})
    assert result.returncode != 0 and "pulse_mm2_nodes: empty" in " ".join(messages)
    assert "pw-s3cret" not in result.stdout + result.stderr


def acls_case(tmp_path, acl_vars, mm2_vars=None):
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory = {"all": {"vars": local, "children": {"mirrormakers": {"hosts": {"mm2-1": None}}}}}
    plays = [
        {"hosts": "mirrormakers", "gather_facts": True, "vars": dict(MM2_BASE, **(mm2_vars or {})),
         "tasks": [{"ansible.builtin.include_role": {"name": "kafkaops.mirrormaker.mirrormaker", "tasks_from": "preflight"}}]},
        {"hosts": "mirrormakers", "gather_facts": False, "vars": acl_vars,
         "tasks": [{"ansible.builtin.include_role": {"name": "kafkaops.mirrormaker.mm2_acls", "tasks_from": "preflight"},
                    "run_once": True},
                   {"ansible.builtin.debug": {"msg": "{{ __mm2_acls_derived.acls | kafkaops.mirrormaker.mm2_acls_table }}"}}]},
    ]
    result, report = run_playbook(tmp_path, plays, inventory)
    return result, report, failures(report)


LISTED = {"mirrormaker_flows": [{"source": "A", "target": "B", "topics": ["orders", "mm2-smoke.*"], "groups": ["app"]}]}


def test_acls_preflight_derives_a_table(tmp_path):
    result, report, messages = acls_case(tmp_path, {"mm2_acls_principals": "User:mm2"}, LISTED)
    assert result.returncode == 0 and messages == [], messages
    lines = report["plays"][1]["tasks"][-1]["hosts"]["mm2-1"]["msg"]
    assert [line for line in lines if "TOPIC:PREFIXED:A.mm2-smoke" in line and "target-write" in line], lines


@pytest.mark.parametrize("acl_vars, mm2_vars, expected", [
    ({"mm2_acls_principals": "mm2"}, LISTED, "mm2_acls_principals.A: 'mm2' is not a principal of the form User:<name>"),
    ({}, LISTED, "mm2_acls_principals.B: '' is not a principal"),
    ({"mm2_acls_principals": {"A": "User:a"}}, LISTED, "mm2_acls_principals: no principal for cluster B"),
    ({"mm2_acls_principals": "User:mm2"}, None, "mirrormaker_flows: flow A->B topics '.*' is a regex no ACL can express"),
    ({"mm2_acls_principals": "User:mm2", "mm2_acls_allow_wildcard": ["all"]}, LISTED,
     "mm2_acls_allow_wildcard: 'all' is not one of"),
    ({"mm2_acls_principals": "User:mm2", "mm2_acls_admin": {"C": {}}}, LISTED,
     "mm2_acls_admin: C not a cluster alias"),
    ({"mm2_acls_principals": "User:mm2", "mm2_acls_exclsive": True}, LISTED, "mm2_acls_exclsive: unknown"),
], ids=["no-user-prefix", "empty", "missing-cluster", "wildcard-topics", "wildcard-kind", "admin-unknown-alias", "typo"])
def test_acls_preflight_refuses(tmp_path, acl_vars, mm2_vars, expected):
    result, _report, messages = acls_case(tmp_path, acl_vars, mm2_vars)
    assert result.returncode != 0
    assert any(expected in m for m in messages), messages


def test_acls_preflight_never_prints_an_admin_password(tmp_path):
    admin = {"A": {"client_properties": {"sasl.plain.password": "adm-s3cret"}}}
    result, _report, messages = acls_case(tmp_path, {"mm2_acls_principals": "mm2", "mm2_acls_admin": admin}, LISTED)
    assert result.returncode != 0 and messages
    assert "adm-s3cret" not in result.stdout + result.stderr


def test_pulse_rules_see_the_values_of_the_host_that_registers(tmp_path):
    """playbooks/preflight.yml itself: the pulse play registers from the first MirrorMaker host, so
    its preflight checks that host's values, not those of the preflight play's first host (a broker
    here). A JMX port set for the mirrormakers group only must be compared with MirrorMaker's."""
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    brokers = {"k-a": {"kafka_broker_cluster_name": "A", "kafka_broker_advertised_host": "k-a"},
               "k-b": {"kafka_broker_cluster_name": "B", "kafka_broker_advertised_host": "k-b"}}
    mm2_vars = dict(MM2_BASE, mirrormaker_clusters=[{"alias": "A", "bootstrap_servers": "k-a:9092"},
                                                    {"alias": "B", "bootstrap_servers": "k-b:9092"}],
                    mirrormaker_jmx_port=9999, pulse_mm2_jmx_port=9998)
    inventory = {"all": {"vars": dict(local, kafkaops_pulse_enabled=True), "children": {
        "kafka_brokers": {"hosts": brokers},
        "mirrormakers": {"hosts": {"mm2-1": {"mirrormaker_advertised_host": "mm2-1"}}, "vars": mm2_vars},
        "pulse": {"hosts": {"pulse-1": None}}}}}
    plays = [{"ansible.builtin.import_playbook": os.path.join(REPO, "playbooks", "preflight.yml")}]
    result, report = run_playbook(tmp_path, plays, inventory)
    messages = failures(report)
    assert messages == ["pulse_mm2_jmx_port: 9998 is not the mirrormaker_jmx_port of mm2-1 (9999)"], \
        (messages, result.stdout[-3000:])


CONNECT_BASE = {
    "connect_clusters": MM2_BASE["mirrormaker_clusters"], "connect_flows": MM2_BASE["mirrormaker_flows"],
    "connect_source": "A", "connect_target": "B", "connect_advertised_host": "c-1",
}


@pytest.mark.parametrize("changes, expected", [
    ({"connect_rest_port": 0}, "connect_rest_port: 0 is not a TCP port (1-65535)"),
    ({"connect_target": "C"}, "connect_source/connect_target: A->C is not a flow of connect_flows"),
    # Connect would refuse this config only at the REST call, after the workers were installed.
    ({"connect_connector_properties": {"MirrorSourceConnector": {"name": "mirror"}}},
     "connect_connector_properties: connector A-to-B-MirrorSourceConnector would be configured with name='mirror'"),
], ids=["port", "not-a-flow", "connector-name"])
def test_connect_preflight_refuses_before_any_worker_changes(tmp_path, changes, expected):
    result, report = run_playbook(tmp_path, preflight_play("connect", dict(CONNECT_BASE, **changes)))
    messages = failures(report)
    assert result.returncode != 0
    assert any(m.startswith(expected) for m in messages), messages


def test_connect_preflight_sets_the_plan(tmp_path):
    plays = preflight_play("connect", CONNECT_BASE)
    plays[0]["tasks"].append({"ansible.builtin.debug": {"msg": "{{ __connect_plan.connectors.keys() | sort }}"}})
    result, report = run_playbook(tmp_path, plays)
    assert result.returncode == 0, failures(report)
    shown = [res.get("msg") for play in report["plays"] for task in play["tasks"] for res in task["hosts"].values()
             if task["task"]["name"] == "ansible.builtin.debug" or "msg" in res and isinstance(res.get("msg"), list)]
    assert ["A-to-B-MirrorCheckpointConnector", "A-to-B-MirrorHeartbeatConnector", "A-to-B-MirrorSourceConnector"] \
        in shown, shown


def test_connect_plan_never_prints_a_client_secret(tmp_path):
    jaas = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="mm2" password="pw-s3cret";'
    clusters = [{"alias": "A", "bootstrap_servers": "a:9092", "properties": {"sasl.jaas.config": jaas}},
                {"alias": "B", "bootstrap_servers": "b:9092"}]
    # The fault makes the action report; its message must not carry the secret either.
    variables = dict(CONNECT_BASE, connect_clusters=clusters, connect_target="C")
    result, report = run_playbook(tmp_path, preflight_play("connect", variables))
    assert result.returncode != 0
    assert any(m.startswith("connect_source/connect_target: A->C is not a flow") for m in failures(report))
    assert "pw-s3cret" not in result.stdout + result.stderr


def test_the_preflight_play_warns_about_the_guides_operating_rules_and_follows_the_authorizers(tmp_path):
    """playbooks/preflight.yml on a DR layout whose standby differs from its primary: A has two
    brokers with an authorizer, B one without. The connect preflight warns (the run goes on),
    naming the variables, and the flow's ACL sync is off: B runs no authorizer."""
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    brokers = {host: {"kafka_broker_advertised_host": host} for host in ("k-a1", "k-a2", "k-b1")}
    clusters = [{"alias": "A", "bootstrap_servers": "k-a1:9092"}, {"alias": "B", "bootstrap_servers": "k-b1:9092"}]
    inventory = {"all": {"vars": local, "children": {
        "kafka_brokers": {"children": {
            "kafka_a": {"hosts": {"k-a1": brokers["k-a1"], "k-a2": brokers["k-a2"]},
                        "vars": {"kafka_broker_cluster_name": "A", "kafka_broker_authorizer_enabled": True,
                                 "kafka_broker_super_users": ["User:admin"]}},
            "kafka_b": {"hosts": {"k-b1": brokers["k-b1"]}, "vars": {"kafka_broker_cluster_name": "B"}}}},
        "connect_workers": {"hosts": {"c-1": None}, "vars": dict(
            CONNECT_BASE, connect_clusters=clusters,
            connect_flows=[{"source": "A", "target": "B", "topics": ["orders"], "groups": ["app"]}])}}}}
    plays = [{"ansible.builtin.import_playbook": os.path.join(REPO, "playbooks", "preflight.yml")},
             {"hosts": "c-1", "gather_facts": False, "tasks": [{"ansible.builtin.debug": {
                 "msg": "{{ __connect_plan.connectors['A-to-B-MirrorSourceConnector']['sync.topic.acls.enabled'] }}"}}]}]
    result, report = run_playbook(tmp_path, plays, inventory)
    assert result.returncode == 0, failures(report)
    warnings = [w for play in report["plays"] for task in play["tasks"] for res in task["hosts"].values()
                for w in res.get("warnings") or []]
    assert [w.split(";")[0] for w in warnings] == [
        "kafka_brokers: the disaster-recovery cluster B has 1 broker(s), its primary A has 2",
        "kafka_broker_authorizer_enabled: cluster A runs an authorizer and cluster B none"], warnings
    assert report["plays"][-1]["tasks"][-1]["hosts"]["c-1"]["msg"] == "false"


# Every role that includes kafka_common is named, so the message says what to apply instead.
@pytest.mark.parametrize("parent", ["kafka_broker", "mirrormaker", "connect"])
def test_kafka_common_alone_names_the_roles_that_include_it(tmp_path, parent):
    result, report = run_playbook(tmp_path, preflight_play("kafka_common", {}))
    assert result.returncode != 0
    messages = failures(report)
    assert len(messages) == 1 and messages[0].startswith("kafka_common is internal: apply "), messages
    assert "kafkaops.mirrormaker.%s," % parent in messages[0] or "kafkaops.mirrormaker.%s " % parent in messages[0]


def smoke_case(tmp_path, variables):
    jars = tmp_path / "jars"
    jars.mkdir()
    (jars / "spark-sql-kafka-0-10_2.13-4.0.0.jar").write_bytes(b"")
    base = {"mm2_smoke_clusters": MM2_BASE["mirrormaker_clusters"], "mm2_smoke_flows": MM2_BASE["mirrormaker_flows"],
            "mm2_smoke_jars_src": str(jars)}
    result, report = run_playbook(tmp_path, preflight_play("mm2_smoke", dict(base, **variables)))
    return result, failures(report)


# mm2_smoke_host picks the host in playbooks/smoke.yml; the role does not read it, nor refuse it.
def test_smoke_preflight_passes_every_variable_of_its_spec(tmp_path):
    result, messages = smoke_case(tmp_path, {"mm2_smoke_host": "edge-1", "mm2_smoke_spark_env": {"A": "b"}})
    assert result.returncode == 0, messages


@pytest.mark.parametrize("variables, expected", [
    ({"mm2_smoke_record": 10}, "mm2_smoke_record: unknown variable of this role; did you mean 'mm2_smoke_records'?"),
    ({"mm2_smoke_records": "many"}, "mm2_smoke_records: 'many' is not a int"),
    ({"mm2_smoke_spark_env": ["HADOOP_CONF_DIR=/etc/hadoop/conf"]},
     "mm2_smoke_spark_env: ['HADOOP_CONF_DIR=/etc/hadoop/conf'] is not a dict"),
    # The plan's own rules still answer for what the spec lets through.
    ({"mm2_smoke_records": 0}, "mm2_smoke_records: "),
], ids=["misspelt", "not-an-int", "env-not-a-dict", "plan-rule"])
def test_smoke_preflight_refuses(tmp_path, variables, expected):
    result, messages = smoke_case(tmp_path, variables)
    assert result.returncode != 0
    assert len(messages) == 1 and messages[0].startswith(expected), messages
