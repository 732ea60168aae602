"""MirrorMaker 2 logs in to a REAL Kerberos KDC with the mirrormaker role's JAAS block.

The secured lab's KDC (tests/live/kdc.py: MIT krb5kdc with a realm of its own) issues the brokers'
service principal kafka/localhost and MirrorMaker 2's principal; both clusters' SASL_PLAINTEXT
listener offers GSSAPI. The inventory chooses the Acceldata way: ``mirrormaker_jaas`` with
login_module kerberos, a keytab and a principal, and clusters with ``sasl.mechanism=GSSAPI`` and no
``sasl.jaas.config``. What the role writes is what runs:

- playbooks/acls.yml derives and applies the bindings of User:mm2k (the principal's short name) as
  the admin; MirrorMaker 2 holds those and no super user;
- the role's own template writes the JAAS file and the role's own script.yml puts its managed block
  (``export KAFKA_OPTS=... -Djava.security.auth.login.config=... -Djava.security.krb5.conf=...``)
  before the exec line of a copy of connect-mirror-maker.sh, through which MirrorMaker 2 starts.

Records and group offsets must reach B, and the KDC's own log must show the tickets MirrorMaker 2
asked for. A keytab whose key the KDC has since changed must be refused by the same path.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import uuid

import pytest
import yaml

import harness
from jobtools import use_collection
from test_mm2_acls import AUTHZ, produce, values_on_b, wait

use_collection()
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import acls as mm2_acls  # noqa: E402  pylint: disable=wrong-import-position

USER = "mm2k"
PRINCIPAL = "User:" + USER
TOPIC = "krb-demo.orders"
REMOTE = "A." + TOPIC
GROUP_PREFIX = "krb-app."
FLOWS = [{"source": "A", "target": "B", "topics": ["krb-demo.*"], "groups": ["krb-app.*"], "sync_group_offsets": True}]
EXTRA = {"offset.lag.max": 0}
SCRIPT = "connect-mirror-maker-kerberos.sh"

WRAPPER = """
- name: The collection's ACL playbook
  ansible.builtin.import_playbook: kafkaops.mirrormaker.acls

- name: MirrorMaker 2's login files as the mirrormaker role writes them
  hosts: mirrormakers
  gather_facts: false
  tasks:
    - name: Keep the mm2.properties the preflight rendered
      ansible.builtin.copy:
        content: "{{ __mirrormaker_model.properties | to_json }}"
        dest: "{{ mm2_properties_out }}"
        mode: "0600"
      no_log: true

    - name: The role's JAAS file, from the role's template
      ansible.builtin.template:
        src: "{{ mm2_role_dir }}/templates/mm2_jaas.conf.j2"
        dest: "{{ mm2_jaas_out }}"
        mode: "0600"
      vars:
        __mirrormaker_keytab_file: "{{ mirrormaker_jaas.keytab }}"
      no_log: true

    - name: The role's managed block in connect-mirror-maker.sh
      ansible.builtin.include_role:
        name: kafkaops.mirrormaker.mirrormaker
        tasks_from: script.yml
      vars:
        __mirrormaker_script: "{{ mm2_script }}"
        __mirrormaker_jaas_file: "{{ mm2_jaas_out }}"
"""


def run_playbook(lab, tmp_path, keytab):
    clusters, flows, glob, _options = lab.mm2_inputs(FLOWS, EXTRA)
    for cluster in clusters:
        # the login comes from the JVM's JAAS file, not from a SCRAM sasl.jaas.config
        cluster["properties"].pop("sasl.jaas.config", None)
        cluster["properties"].update(lab.kerberos_client_properties(cluster["alias"]))
    glob = dict((k, v) for k, v in glob.items() if not k.startswith("rest.") and k != "listeners")
    role_dir = os.path.join(harness.collections_path(), "ansible_collections", "kafkaops", "mirrormaker", "roles", "mirrormaker")
    host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, "ansible_become": False,
            "mirrormaker_clusters": clusters, "mirrormaker_flows": flows, "mirrormaker_properties": glob,
            "mirrormaker_advertised_host": "127.0.0.1", "mirrormaker_internal_rest": False,
            "mirrormaker_jaas": {"login_module": "kerberos", "principal": lab.kdc.principal(USER), "keytab": keytab,
                                 "realm": lab.kdc.realm},
            "mirrormaker_krb5_conf": lab.kdc.krb5_conf,
            "mirrormaker_jmx_enabled": False, "mirrormaker_jmx_exporter_enabled": False,
            "mirrormaker_restart_on_change": False,
            "kafkaops_acls_enabled": True, "mm2_acls_principals": PRINCIPAL,
            "mm2_acls_admin": dict((c, {"client_properties": lab.client_properties(c)}) for c in ("A", "B")),
            "mm2_role_dir": role_dir, "mm2_script": lab.bin(SCRIPT),
            "mm2_jaas_out": str(tmp_path / "mm2_jaas.conf"),
            "mm2_properties_out": str(tmp_path / "mm2.properties.json")}
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"mirrormakers": {"hosts": {"mm2-kerberos": host}}}}}))
    playbook = tmp_path / "kerberos.yml"
    playbook.write_text(WRAPPER)
    proc = harness.ansible_playbook(inventory, playbook, "--diff")
    assert proc.returncode == 0, proc.stdout[-3000:]
    with open(tmp_path / "mm2.properties.json") as fh:
        return proc, json.load(fh)


def group_offset(lab, cluster, group, topic, commit=None):
    from kafka import KafkaConsumer, TopicPartition
    from kafka.admin import KafkaAdminClient
    from kafka.structs import OffsetAndMetadata
    if commit is not None:
        consumer = KafkaConsumer(bootstrap_servers=lab.bootstrap(cluster), group_id=group, enable_auto_commit=False,
                                 **lab.kafka_python_kwargs(cluster))
        try:
            consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(commit, "", -1)})
        finally:
            consumer.close()
    admin = KafkaAdminClient(bootstrap_servers=lab.bootstrap(cluster), **lab.kafka_python_kwargs(cluster))
    try:
        offsets = admin.list_group_offsets({group: None}).get(group) or {}
        return dict((tp.topic, om.offset) for tp, om in offsets.items()).get(topic)
    finally:
        admin.close()


@pytest.fixture(scope="module")
def kerberos_mm2(secured_lab, tmp_path_factory):
    lab = secured_lab
    keytab = lab.kdc.keytab(USER)
    shutil.copy(lab.bin("connect-mirror-maker.sh"), lab.bin(SCRIPT))
    from kafka.admin import KafkaAdminClient, NewTopic
    admin = KafkaAdminClient(bootstrap_servers=lab.bootstrap("A"), **lab.kafka_python_kwargs("A"))
    try:
        admin.create_topics([NewTopic(TOPIC, 1, 1)])
    finally:
        admin.close()
    tmp = tmp_path_factory.mktemp("kerberos")
    run, props = run_playbook(lab, tmp, keytab)
    produce(lab, 30, "seed", TOPIC)
    group_offset(lab, "A", GROUP_PREFIX + "seed", TOPIC, commit=20)
    lab.start_mm2_properties(props, wait_for=("B", REMOTE), timeout=120, script=SCRIPT)
    yield {"lab": lab, "props": props, "run": run, "keytab": keytab, "tmp": tmp}
    lab.stop_mm2()


def test_mm2_logs_in_through_the_kdc_and_mirrors_records_and_group_offsets(kerberos_mm2):
    lab = kerberos_mm2["lab"]
    props = kerberos_mm2["props"]
    # Kerberos chosen the Acceldata way: GSSAPI per cluster, the login from the JVM's JAAS file
    assert props["A.sasl.mechanism"] == props["B.sasl.mechanism"] == "GSSAPI"
    assert not [k for k in props if k.endswith("sasl.jaas.config")]
    assert PRINCIPAL not in lab.brokers["B"]["super_users"]
    assert wait(lambda: sorted(values_on_b(lab, REMOTE)) == sorted("seed-%d" % i for i in range(30)), 90, step=2.0)
    # translated conservatively (never past what the group consumed on A), but translated
    assert wait(lambda: 0 < (group_offset(lab, "B", GROUP_PREFIX + "seed", REMOTE) or 0) <= 20, 90, step=2.0)
    with open(lab.mm2_log(), errors="replace") as fh:
        mm2_log = fh.read()
    assert [line for line in mm2_log.splitlines() if AUTHZ.search(line)] == []
    # the tickets came from the KDC: a TGT for MirrorMaker 2's principal, then service tickets
    # for the brokers' principal
    realm = lab.kdc.realm
    kdc_log = lab.kdc.log_lines()
    assert [line for line in kdc_log
            if "AS_REQ" in line and "ISSUE" in line and "%s@%s for krbtgt/%s@%s" % (USER, realm, realm, realm) in line]
    assert [line for line in kdc_log
            if "TGS_REQ" in line and "ISSUE" in line and "%s@%s for kafka/localhost@%s" % (USER, realm, realm) in line]
    # the brokers that accepted it log in with the keys the kafka_broker role renders for kafka_broker_kerberos
    with open(os.path.join(lab.brokers["B"]["dir"], "server.properties")) as fh:
        server = fh.read()
    assert re.search(r'(?m)^listener\.name\.sasl_plaintext\.gssapi\.sasl\.jaas\.config=com\.sun\.security\.auth\.module\.'
                     r'Krb5LoginModule required useKeyTab=true storeKey=true keyTab=".*" principal="kafka/localhost@%s";$'
                     % realm, server), server


def test_the_role_wrote_the_login_into_the_launcher_and_the_jaas_file(kerberos_mm2):
    lab = kerberos_mm2["lab"]
    with open(lab.bin(SCRIPT)) as fh:
        script = fh.read()
    block = re.search(r"(?ms)^# BEGIN kafkaops\.mirrormaker managed block.*?^# END [^\n]*\nexec ", script)
    assert block, script
    jaas = str(kerberos_mm2["tmp"] / "mm2_jaas.conf")
    assert 'export KAFKA_OPTS="${KAFKA_OPTS:+$KAFKA_OPTS }-Djava.security.auth.login.config=%s -Djava.security.krb5.conf=%s"' \
        % (jaas, lab.kdc.krb5_conf) in block.group(0)
    with open(jaas) as fh:
        text = fh.read()
    assert re.search(r"KafkaClient \{\s+com\.sun\.security\.auth\.module\.Krb5LoginModule required", text), text
    assert 'principal="%s"' % lab.kdc.principal(USER) in text and 'keyTab="%s"' % kerberos_mm2["keytab"] in text
    assert oct(os.stat(jaas).st_mode & 0o777) == "0o600"
    derived = mm2_acls.derive_layouts([kerberos_mm2["props"]], (), PRINCIPAL)
    assert derived["errors"] == [] and derived["acls"]
    # the one ACL run showed the principal's bindings and no keytab bytes
    with open(kerberos_mm2["keytab"], "rb") as fh:
        key = fh.read()
    assert "User:mm2k" in kerberos_mm2["run"].stdout
    assert key[-16:].hex() not in kerberos_mm2["run"].stdout


def cli_topics(lab, keytab, principal, tmp_path):
    """kafka-topics.sh --list on A as ``principal``, logging in from ``keytab`` (sasl.jaas.config)."""
    config = tmp_path / ("client-%s.properties" % uuid.uuid4().hex[:6])
    config.write_text("".join("%s=%s\n" % kv for kv in sorted(lab.kerberos_client_properties("A", keytab, principal).items())))
    env = dict(os.environ, KAFKA_HEAP_OPTS="-Xmx256m", KAFKA_OPTS="-Djava.security.krb5.conf=" + lab.kdc.krb5_conf)
    return subprocess.run([lab.bin("kafka-topics.sh"), "--bootstrap-server", lab.bootstrap("A"), "--list",
                           "--command-config", str(config)], capture_output=True, text=True, timeout=120, env=env, check=False)


def test_a_keytab_the_kdc_no_longer_honours_is_refused(secured_lab, tmp_path):
    lab = secured_lab
    keytab = lab.kdc.keytab("stale-client", str(tmp_path / "stale.keytab"))
    first = cli_topics(lab, keytab, "stale-client", tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    lab.kdc.rotate("stale-client")
    second = cli_topics(lab, keytab, "stale-client", tmp_path)
    assert second.returncode != 0
    harness.log("stale keytab: %s" % [line for line in second.stderr.splitlines() if "Exception" in line][:2])
    assert re.search(r"LoginException|Pre-authentication|Checksum failed|Integrity check", second.stderr), second.stderr[-2000:]


def test_the_acl_module_logs_in_with_gssapi_from_a_keytab(secured_lab, tmp_path, monkeypatch):
    """kafka_acl (kafka-python with the gssapi library) as admin@<realm>, whose short name is the
    brokers' super user: no password anywhere, the credentials come from the keytab that
    KRB5_CLIENT_KTNAME names, as the module's documentation says."""
    from jobtools import run_ansible_module
    from test_kafka_acl import described, line
    lab = secured_lab
    keytab = lab.kdc.keytab("admin", str(tmp_path / "admin.keytab"))
    monkeypatch.setenv("KRB5_CONFIG", lab.kdc.krb5_conf)
    monkeypatch.setenv("KRB5_CLIENT_KTNAME", keytab)
    monkeypatch.setenv("KRB5CCNAME", "FILE:%s" % (tmp_path / "ccache"))
    binding = {"principal": "User:krb-reader", "operation": "READ", "resource_type": "TOPIC", "resource_name": TOPIC}
    args = {"bootstrap_servers": lab.bootstrap("A"), "client_properties": lab.kerberos_client_properties("A"),
            "acls": [binding], "timeout": 30}
    _proc, first = run_ansible_module("kafkaops.mirrormaker.kafka_acl", args)
    assert first.get("changed") is True, first
    _proc, again = run_ansible_module("kafkaops.mirrormaker.kafka_acl", args)
    assert again.get("changed") is False and not again.get("failed"), again
    assert described(lab, "User:krb-reader") == [line("User:krb-reader", "READ", TOPIC)]
    realm = lab.kdc.realm
    assert [entry for entry in lab.kdc.log_lines()
            if "TGS_REQ" in entry and "ISSUE" in entry and "admin@%s for kafka/localhost@%s" % (realm, realm) in entry]
    # and without a usable credential the module says so instead of hanging
    monkeypatch.setenv("KRB5_CLIENT_KTNAME", str(tmp_path / "missing.keytab"))
    monkeypatch.setenv("KRB5CCNAME", "FILE:%s" % (tmp_path / "empty-ccache"))
    _proc, refused = run_ansible_module("kafkaops.mirrormaker.kafka_acl", dict(args, timeout=10))
    assert refused.get("failed") is True and "No Kerberos credentials available" in refused.get("msg", ""), refused
    harness.log("kafka_acl without Kerberos credentials: %s" % refused.get("msg", "")[:300])


def test_the_smoke_job_logs_in_with_kerberos_from_the_cluster_settings(kerberos_mm2, tmp_path):
    """The smoke job as admin@<realm> (the brokers' super user by its short name), from the clusters'
    Java client settings alone: kafka-python takes the keytab the JAAS line names, Spark's Kafka
    source the JAAS line itself, both the realm from the job config's krb5_conf. Markers and
    translated offsets on krb-demo.smoke, which MirrorMaker 2 mirrors A -> B."""
    from jobtools import run_job
    lab = kerberos_mm2["lab"]
    keytab = lab.kdc.keytab("admin", str(tmp_path / "admin.keytab"))
    doc = lab.job_config(FLOWS, {"enabled": ["markers", "offsets"], "topics": ["krb-demo.smoke"], "records": 30,
                                 "partitions": 1, "replication_factor": 1, "refresh_interval_s": 5,
                                 "group": GROUP_PREFIX + "smoke-{run_id}",
                                 "timeouts": {"markers": 60, "offsets": 60, "new_topic": 45}})
    for name in doc["clusters"]:
        doc["clusters"][name]["properties"] = lab.kerberos_client_properties(name, keytab, "admin")
    doc["krb5_conf"] = lab.kdc.krb5_conf
    path = tmp_path / "config.json"
    path.write_text(json.dumps(doc, default=str))
    seen = len(lab.kdc.log_lines())
    before = dict((name, os.environ.get(name)) for name in ("KRB5_CONFIG", "KRB5CCNAME", "KRB5_CLIENT_KTNAME"))
    report = run_job(str(path), tmp_path)
    assert report["verdict"] == "pass", [c for c in report["checks"] if c.get("status") != "pass"] or report["errors"]
    assert sorted((c["check"], c["status"]) for c in report["checks"]) == [("markers", "pass"), ("offsets", "pass")]
    realm = lab.kdc.realm
    assert report["kerberos"]["principal"] == "admin@" + realm and report["kerberos"]["keytab"] == keytab
    assert report.get("unmapped_properties") in (None, {})
    # the process's Kerberos environment is the job's only while it runs
    assert dict((name, os.environ.get(name)) for name in before) == before
    kdc_log = lab.kdc.log_lines()[seen:]
    # two logins: MIT's library (kafka-python) and Java's Krb5LoginModule (Spark's Kafka source)
    tgts = [line for line in kdc_log
            if "AS_REQ" in line and "ISSUE" in line and "admin@%s for krbtgt/%s@%s" % (realm, realm, realm) in line]
    assert len(tgts) >= 2, kdc_log
    assert [line for line in kdc_log
            if "TGS_REQ" in line and "ISSUE" in line and "admin@%s for kafka/localhost@%s" % (realm, realm) in line]
    harness.log("smoke job over GSSAPI: %d TGTs and %d service tickets for admin@%s in %.1fs" % (
        len(tgts), len([line for line in kdc_log if "TGS_REQ" in line and "admin@" in line]), realm, report["duration_s"]))
