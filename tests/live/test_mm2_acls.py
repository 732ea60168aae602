"""MirrorMaker 2 under exactly the ACLs the collection derives, on REAL secured clusters.

The secured lab (harness.Lab.start_secured_broker: StandardAuthorizer, SASL_PLAINTEXT with
SCRAM-SHA-512, no ACL unless granted) gets a SCRAM user ``mm2`` on A and B that is no super user.
playbooks/acls.yml runs as a user runs it, twice: the mirrormaker preflight renders mm2.properties
from the inventory (per-cluster ``sasl.jaas.config`` for ``mm2``), the mm2_acls role derives the
ACLs from it and applies them with kafka_acl as the admin. MirrorMaker 2 (connect-mirror-maker.sh
from the lab archive) then runs with exactly that mm2.properties.

First it must do its whole job with nothing more: records, checkpoints and group offsets. Then,
for each class of derived binding, the class's bindings are removed while MirrorMaker 2 runs and
the test shows what breaks: an authorization error in MirrorMaker 2's log, or records or group
offsets that stop arriving on B. The bindings are put back and MirrorMaker 2 is brought back to
health (restarted when a task died) before the next class. The table of what broke is written
to the log (``-s``) for the release note.

MirrorMaker 2's own ACL sync (``sync.topic.acls.enabled``) copies the source topics' READ
bindings of ``mm2`` to B once it runs; that is MirrorMaker 2's behaviour, not a grant of ours, and
the test says where it hides a removal.
"""

import json
import re
import sys
import time
import uuid

import pytest
import yaml

import harness
import recap
from jobtools import run_job, use_collection

use_collection()
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import acls as mm2_acls  # noqa: E402

USER = "mm2"
PRINCIPAL = "User:" + USER
TOPIC = "acl-demo.orders"
REMOTE = "A." + TOPIC
GROUP_PREFIX = "acl-app."
FLOWS = [{"source": "A", "target": "B", "topics": ["acl-demo.*"], "groups": ["acl-app.*"], "sync_group_offsets": True}]
# Offset syncs as often as MirrorMaker 2 sends them, ACLs synced every 5 s like the other intervals.
EXTRA = {"offset.lag.max": 0, "sync.topic.acls.interval.seconds": 5}
AUTHZ = re.compile(r"AuthorizationException|[Nn]ot authorized|[Aa]uthorization failed")


def produce(lab, count, prefix, topic=TOPIC):
    """``count`` records "<prefix>-<i>" to ``topic`` on A, as the admin."""
    from kafka import KafkaProducer
    producer = KafkaProducer(bootstrap_servers=lab.bootstrap("A"), **lab.kafka_python_kwargs("A"))
    try:
        for i in range(count):
            producer.send(topic, ("%s-%d" % (prefix, i)).encode())
        producer.flush(30)
    finally:
        producer.close()


def commit(lab, group, count):
    """Group ``group`` on A consumes ``count`` records of TOPIC from the start and commits."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata
    consumer = KafkaConsumer(bootstrap_servers=lab.bootstrap("A"), group_id=group, enable_auto_commit=False,
                             **lab.kafka_python_kwargs("A"))
    try:
        tp = TopicPartition(TOPIC, 0)
        consumer.commit({tp: OffsetAndMetadata(count, "", -1)})
    finally:
        consumer.close()


def values_on_b(lab, topic=REMOTE, isolation_level="read_uncommitted"):
    """The values of partition 0 of ``topic`` on B, from the start, as the admin."""
    from kafka import KafkaConsumer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=lab.bootstrap("B"), enable_auto_commit=False, isolation_level=isolation_level,
                             auto_offset_reset="earliest", consumer_timeout_ms=3000, **lab.kafka_python_kwargs("B"))
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        return [r.value.decode() for r in consumer]
    finally:
        consumer.close()


def offsets_on_b(lab, group):
    from kafka.admin import KafkaAdminClient
    admin = KafkaAdminClient(bootstrap_servers=lab.bootstrap("B"), **lab.kafka_python_kwargs("B"))
    try:
        offsets = admin.list_group_offsets({group: None}).get(group) or {}
        return dict((tp.topic, om.offset) for tp, om in offsets.items())
    finally:
        admin.close()


def wait(predicate, timeout, step=1.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def log_lines(lab):
    with open(lab.mm2_log(), errors="replace") as fh:
        return fh.read().splitlines()


def authz_errors(lines):
    return [line for line in lines if AUTHZ.search(line)]


class Probe(object):
    """One round of MirrorMaker 2's job: new records replicated, a new group's offsets synced."""

    def __init__(self, lab):
        self.lab = lab

    def records(self, timeout):
        tag = "probe-" + uuid.uuid4().hex[:8]
        produce(self.lab, 3, tag)
        return wait(lambda: len([v for v in values_on_b(self.lab) if v.startswith(tag)]) == 3, timeout)

    def group(self, timeout):
        group = GROUP_PREFIX + uuid.uuid4().hex[:8]
        commit(self.lab, group, 2)
        return wait(lambda: 0 < (offsets_on_b(self.lab, group).get(REMOTE) or 0) <= 2, timeout, step=2.0)


WRAPPER = """
- name: The collection's ACL playbook
  ansible.builtin.import_playbook: kafkaops.mirrormaker.acls

- name: Keep the mm2.properties the mirrormaker preflight rendered (MirrorMaker 2 runs with it)
  hosts: mirrormakers
  gather_facts: false
  tasks:
    - name: Write it for the test
      ansible.builtin.copy:
        content: "{{ __mirrormaker_model.properties | to_json }}"
        dest: "{{ mm2_properties_out }}"
        mode: "0600"
      no_log: true
"""


def run_acls_playbook(lab, tmp_path, users, rest_port):
    """playbooks/acls.yml as a user runs it: the mirrormaker preflight renders mm2.properties from
    the inventory, the mm2_acls role derives the ACLs from it and applies them with kafka_acl, as
    the admin, from the controller."""
    clusters, flows, glob, _options = lab.mm2_inputs(FLOWS, EXTRA, users=users)
    glob = dict((k, v) for k, v in glob.items() if not k.startswith("rest.") and k != "listeners")
    host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, "ansible_become": False,
            "mirrormaker_clusters": clusters, "mirrormaker_flows": flows, "mirrormaker_properties": glob,
            "mirrormaker_advertised_host": "127.0.0.1", "mirrormaker_rest_port": rest_port,
            "kafkaops_acls_enabled": True, "mm2_acls_principals": PRINCIPAL,
            "mm2_acls_admin": dict((c, {"client_properties": lab.client_properties(c)}) for c in ("A", "B")),
            "mm2_properties_out": str(tmp_path / "mm2.properties.json")}
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"mirrormakers": {"hosts": {"mm2-acls": host}}}}}))
    playbook = tmp_path / "acls.yml"
    playbook.write_text(WRAPPER)
    proc = harness.ansible_playbook(inventory, playbook, "--diff")
    assert proc.returncode == 0, proc.stdout[-3000:]
    with open(tmp_path / "mm2.properties.json") as fh:
        return proc, json.load(fh)


@pytest.fixture(scope="module")
def secured_mm2(secured_lab, tmp_path_factory):
    lab = secured_lab
    for cluster in ("A", "B"):
        if USER not in lab.brokers[cluster]["users"]:
            lab.add_scram_user(cluster, USER)
    users = {"A": USER, "B": USER}
    from kafka.admin import KafkaAdminClient, NewTopic
    admin = KafkaAdminClient(bootstrap_servers=lab.bootstrap("A"), **lab.kafka_python_kwargs("A"))
    try:
        admin.create_topics([NewTopic(TOPIC, 1, 1)])
    finally:
        admin.close()
    tmp = tmp_path_factory.mktemp("acls-playbook")
    rest_port = harness.free_ports(1)[0]
    first, props = run_acls_playbook(lab, tmp, users, rest_port)
    again, _props = run_acls_playbook(lab, tmp, users, rest_port)
    derived = mm2_acls.derive_layouts([props], (), PRINCIPAL)
    assert derived["errors"] == []
    granted = dict((c, _as_described(lab_acls(lab, c))) for c in ("A", "B"))
    produce(lab, 40, "seed")
    commit(lab, GROUP_PREFIX + "seed", 25)
    lab.start_mm2_properties(props, wait_for=("B", REMOTE), timeout=120)
    yield {"lab": lab, "derived": derived["acls"], "granted": granted, "users": users, "props": props,
           "runs": (first, again)}
    lab.stop_mm2()
    # the table of the class-removal tests, for the note (-s shows it)
    for cls in CLASSES:
        harness.log("ACL class %-18s removed: %s" % (cls, BROKE.get(cls, "(not run)")))


def lab_acls(lab, cluster):
    """The bindings of PRINCIPAL on ``cluster`` as kafka-python describes them."""
    from kafka.admin import ACLFilter, ACLOperation, ACLPermissionType, KafkaAdminClient, ResourcePatternFilter
    from kafka.admin import ACLResourcePatternType, ResourceType
    admin = KafkaAdminClient(bootstrap_servers=lab.bootstrap(cluster), **lab.kafka_python_kwargs(cluster))
    try:
        acls, _error = admin.describe_acls(ACLFilter(
            principal=PRINCIPAL, host="*", operation=ACLOperation.ANY, permission_type=ACLPermissionType.ANY,
            resource_pattern=ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY)))
    finally:
        admin.close()
    return [{"operation": a.operation.name, "resource_type": a.resource_pattern.resource_type.name,
             "resource_name": a.resource_pattern.resource_name,
             "pattern_type": a.resource_pattern.pattern_type.name} for a in acls]


def _as_described(bindings):
    return sorted(tuple(sorted({"operation": b["operation"], "resource_type": b["resource_type"],
                                "resource_name": b["resource_name"], "pattern_type": b["pattern_type"]}.items()))
                  for b in bindings)


def test_the_acl_playbook_applies_the_derivation_once_and_shows_it(secured_mm2):
    first, again = secured_mm2["runs"]
    # the first run created, the second found everything in place
    assert recap.changed(first.stdout).get("mm2-acls", 0) >= 1, first.stdout[-1500:]
    assert recap.changed(again.stdout).get("mm2-acls") == 0, again.stdout[-1500:]
    assert "TOPIC:PREFIXED:A.acl-demo" in first.stdout and "target-write,target-configs" in first.stdout
    lab = secured_mm2["lab"]
    for cluster in ("A", "B"):
        for run in (first, again):
            assert lab.brokers[cluster]["users"]["admin"] not in run.stdout + run.stderr
            assert lab.brokers[cluster]["users"][USER] not in run.stdout + run.stderr


def test_mm2_does_its_whole_job_with_exactly_the_derived_acls(secured_mm2):
    lab, derived = secured_mm2["lab"], secured_mm2["derived"]
    # what the principal held when MirrorMaker 2 started: the derivation, nothing else; no super user
    for cluster in ("A", "B"):
        assert secured_mm2["granted"][cluster] == _as_described(derived[cluster])
        assert PRINCIPAL not in lab.brokers[cluster]["super_users"]
    assert wait(lambda: sorted(values_on_b(lab)) == sorted("seed-%d" % i for i in range(40)), 60)
    # checkpoints and group offsets: 25 of 40 consumed on A; MirrorMaker 2 translates to the last
    # offset sync at or below 25 (+1), never past it: no record the group has not read is skipped
    assert wait(lambda: 0 < (offsets_on_b(lab, GROUP_PREFIX + "seed").get(REMOTE) or 0) <= 25, 60, step=2.0)
    probe = Probe(lab)
    assert probe.records(30) and probe.group(45)
    assert authz_errors(log_lines(lab)) == []


def test_the_smoke_job_passes_on_the_secured_clusters(secured_mm2, tmp_path):
    """The job logs in with SCRAM from the clusters' Java client settings (here the admin's: the job
    is the observer, MirrorMaker 2 keeps only its derived bindings)."""
    lab = secured_mm2["lab"]
    doc = lab.job_config(FLOWS, {"enabled": ["markers", "offsets"], "topics": ["acl-demo.smoke"], "records": 30,
                                 "partitions": 1, "replication_factor": 1, "refresh_interval_s": 5,
                                 "group": GROUP_PREFIX + "smoke-{run_id}",
                                 "timeouts": {"markers": 60, "offsets": 60, "new_topic": 45}})
    for name in doc["clusters"]:
        doc["clusters"][name]["properties"] = lab.java_client_properties(name)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(doc, default=str))
    report = run_job(str(path), tmp_path)
    assert report["verdict"] == "pass", [c for c in report["checks"] if c.get("status") != "pass"] or report["errors"]
    assert sorted((c["check"], c["status"]) for c in report["checks"]) == [("markers", "pass"), ("offsets", "pass")]
    assert authz_errors(log_lines(lab)) == []


# Every class the derivation gives this configuration (exactly-once is off). "guide" first: on a
# MirrorMaker 2 no earlier removal has disturbed, "nothing breaks" means what it says.
CLASSES = ["guide"] + [c for c in mm2_acls.CLASSES if not c.startswith("eos-") and c != "guide"]


def test_every_class_of_this_configuration_is_probed(secured_mm2):
    present = set(c for bindings in secured_mm2["derived"].values() for b in bindings for c in b["classes"])
    assert present == set(CLASSES)


BROKE = {}
DIED = re.compile(r"unrecoverable exception|Task is being killed|Shutting down (the )?herder|WorkerTask.*FAILED")


def _kafka_acls(bindings):
    from kafka.admin import ACL, ACLOperation, ACLPermissionType, ResourcePattern, ResourceType
    from kafka.admin import ACLResourcePatternType
    return [ACL(principal=b["principal"], host=b["host"], operation=ACLOperation[b["operation"]],
                permission_type=ACLPermissionType[b["permission"]],
                resource_pattern=ResourcePattern(ResourceType[b["resource_type"]], b["resource_name"],
                                                 ACLResourcePatternType[b["pattern_type"]]))
            for b in bindings]


def toggle(lab, acls, present):
    """kafka-python's own calls (the module is proven above; here it would cost seconds a class)."""
    from kafka.admin import KafkaAdminClient
    for cluster, bindings in acls.items():
        if not bindings:
            continue
        admin = KafkaAdminClient(bootstrap_servers=lab.bootstrap(cluster), **lab.kafka_python_kwargs(cluster))
        try:
            if present:
                result = admin.create_acls(_kafka_acls(bindings))
                assert not result["failed"], result["failed"]
            else:
                from kafka.admin import ACLFilter, ResourcePatternFilter
                filters = [ACLFilter(principal=a.principal, host=a.host, operation=a.operation,
                                     permission_type=a.permission_type,
                                     resource_pattern=ResourcePatternFilter(a.resource_pattern.resource_type,
                                                                            a.resource_pattern.resource_name,
                                                                            a.resource_pattern.pattern_type))
                           for a in _kafka_acls(bindings)]
                admin.delete_acls(filters)
        finally:
            admin.close()


def _symptoms(lab, seen):
    """What breaks, cheapest first: an authorization error logged within 10 s, else MirrorMaker 2's
    job (new records, a new group's offsets) not done on B."""
    probe = Probe(lab)
    produce(lab, 1, "nudge")
    commit(lab, GROUP_PREFIX + uuid.uuid4().hex[:8], 1)
    found = []
    if wait(lambda: authz_errors(log_lines(lab)[seen:]), 10, step=0.5):
        found.append(re.sub(r"^\[[^\]]*\]\s*", "", authz_errors(log_lines(lab)[seen:])[0])[:220])
        return found
    if not probe.records(10):
        found.append("new records stopped reaching B")
    if not probe.group(20):
        found.append("a new group's offsets stopped reaching B")
    errors = authz_errors(log_lines(lab)[seen:])
    if errors:
        found.insert(0, re.sub(r"^\[[^\]]*\]\s*", "", errors[0])[:220])
    return found


@pytest.mark.parametrize("cls", CLASSES)
def test_removing_a_class_breaks_what_it_is_there_for(secured_mm2, cls):
    lab, derived = secured_mm2["lab"], secured_mm2["derived"]
    removed = dict((c, [b for b in bindings if cls in b["classes"]]) for c, bindings in derived.items())
    seen = len(log_lines(lab))
    toggle(lab, removed, False)
    try:
        symptoms = _symptoms(lab, seen)
    finally:
        toggle(lab, removed, True)
    BROKE[cls] = "; ".join(symptoms) or "nothing"
    harness.log("ACL class %s removed: %s" % (cls, BROKE[cls]))
    _heal(lab, secured_mm2["props"], seen)
    if cls == "guide":
        assert not symptoms, "the guide's DESCRIBE on the target cluster turned out to be needed: %s" % symptoms
    else:
        assert symptoms, "nothing broke without class %s: the binding is there without a reason" % cls


def _heal(lab, props, seen):
    """Back to a MirrorMaker 2 that does its job. A task an authorization error killed only comes
    back with a restart (dedicated mode has no REST API to restart it)."""
    died = [line for line in log_lines(lab)[seen:] if DIED.search(line)]
    if not died and Probe(lab).records(15):
        return
    harness.log("MirrorMaker 2 restarted (%s)" % (died[0][:160] if died else "records stopped"))
    lab.stop_mm2()
    lab.start_mm2_properties(props, wait_for=("B", REMOTE), timeout=120)
    assert Probe(lab).records(60), "MirrorMaker 2 did not recover with every binding back"
