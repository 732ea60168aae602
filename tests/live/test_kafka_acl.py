"""kafka_acl against REAL brokers: the secured lab's clusters A and B (harness.Lab.start_secured_broker:
StandardAuthorizer, SASL_PLAINTEXT with SCRAM-SHA-512, super user ``admin``, ``alice`` without any
ACL) and the session's plain broker A (no authorizer).

The module runs as a user runs it, ``ansible localhost -m kafkaops.mirrormaker.kafka_acl`` (jobtools.
run_ansible_module, the ansible.posix.json callback), with this venv's Python and kafka-python.  What
the cluster holds is read apart from the module: with kafka-python's own describe_acls, and once with
Apache Kafka's kafka-acls.sh.  Each test uses principals of its own, so the tests do not depend on
their order.
"""

import os
import socket
import struct
import subprocess
import tarfile
import time
import zipfile

import pytest

import harness
from jobtools import run_ansible_module, use_collection

use_collection()
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import acls as kafka_acls  # noqa: E402

HOST = socket.gethostname()
MODULE = "kafkaops.mirrormaker.kafka_acl"


def run(lab, args, *extra, cluster="A", user=None):
    """The module against ``cluster`` of ``lab`` as ``user`` (the admin by default)."""
    args = dict({"bootstrap_servers": lab.bootstrap(cluster), "client_properties": lab.client_properties(cluster, user),
                 "timeout": 30}, **args)
    return run_ansible_module(MODULE, args, *extra)


def acl(principal, operation, resource_name="orders", resource_type="TOPIC", **extra):
    return dict({"principal": principal, "operation": operation, "resource_type": resource_type,
                 "resource_name": resource_name}, **extra)


def line(principal, operation, resource_name="orders", resource_type="TOPIC", pattern_type="LITERAL",
         permission="ALLOW", host="*"):
    return "%s %s %s %s:%s:%s @%s" % (principal, permission, operation, resource_type, pattern_type, resource_name,
                                      host)


def described(lab, principal, cluster="A"):
    """The cluster's bindings of ``principal`` as kafka-python's describe_acls gives them, each as a line."""
    from kafka.admin import (ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, KafkaAdminClient,
                             ResourcePatternFilter, ResourceType)
    admin = KafkaAdminClient(bootstrap_servers=lab.bootstrap(cluster), client_id="acl-test",
                             **lab.kafka_python_kwargs(cluster))
    try:
        acls, _error = admin.describe_acls(ACLFilter(
            principal=principal, host=None, operation=ACLOperation.ANY, permission_type=ACLPermissionType.ANY,
            resource_pattern=ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY)))
    finally:
        admin.close()
    return sorted(line(a.principal, a.operation.name, a.resource_pattern.resource_name,
                       a.resource_pattern.resource_type.name, a.resource_pattern.pattern_type.name,
                       a.permission_type.name, a.host) for a in acls)


def wait_described(lab, principal, expected, cluster="A", timeout=15):
    """described() once it equals ``expected`` (the broker applies what the controller committed a
    moment later), or as it is after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        found = described(lab, principal, cluster)
        if found == sorted(expected) or time.monotonic() > deadline:
            return found
        time.sleep(0.3)


def dicts(*lines):
    """The module's binding dicts for lines in line()'s format."""
    out = []
    for text in lines:
        principal, permission, operation, resource, host = text.split(" ")
        resource_type, pattern_type, name = resource.split(":", 2)
        out.append({"principal": principal, "host": host[1:], "operation": operation, "permission": permission,
                    "resource_type": resource_type, "resource_name": name, "pattern_type": pattern_type})
    return out


def test_create_then_a_re_run_changes_nothing(secured_lab):
    p = "User:mm2-create"
    acls = [acl(p, "read"), acl(p, "DESCRIBE"), acl(p, "WRITE", "mm2.", pattern_type="PREFIXED"),
            acl(p, "DescribeConfigs", "*"), acl(p, "DESCRIBE", "kafka-cluster", "CLUSTER"),
            acl(p, "READ", "mm2-group", "GROUP", host="127.0.0.1")]
    expected = sorted([line(p, "READ"), line(p, "DESCRIBE"), line(p, "WRITE", "mm2.", pattern_type="PREFIXED"),
                       line(p, "DESCRIBE_CONFIGS", "*"), line(p, "DESCRIBE", "kafka-cluster", "CLUSTER"),
                       line(p, "READ", "mm2-group", "GROUP", host="127.0.0.1")])
    proc, result = run(secured_lab, {"acls": acls})
    assert proc.returncode == 0, result
    assert result["changed"] is True
    assert result["added"] == dicts(*expected) and result["removed"] == [] and result["acls"] == dicts(*expected)
    assert result["msg"] == "ACL bindings on the cluster at %s: created 6" % secured_lab.bootstrap("A")
    assert wait_described(secured_lab, p, expected) == expected
    assert secured_lab.brokers["A"]["users"]["admin"] not in proc.stdout + proc.stderr

    proc, result = run(secured_lab, {"acls": acls})
    assert proc.returncode == 0, result
    assert result["changed"] is False and result["added"] == [] and result["removed"] == []
    assert result["acls"] == dicts(*expected)

    # Apache Kafka's own CLI sees them too
    listed = subprocess.run([secured_lab.bin("kafka-acls.sh"), "--bootstrap-server", secured_lab.bootstrap("A"),
                             "--command-config", secured_lab.command_config("A"), "--list", "--principal", p],
                            capture_output=True, text=True, timeout=120, check=False,
                            env=dict(os.environ, KAFKA_HEAP_OPTS="-Xmx256m"))
    assert listed.returncode == 0, listed.stdout + listed.stderr
    for entry in ("operation=READ, permissionType=ALLOW", "operation=DESCRIBE_CONFIGS, permissionType=ALLOW",
                  "name=mm2., patternType=PREFIXED", "name=kafka-cluster, patternType=LITERAL",
                  "(principal=%s, host=127.0.0.1, operation=READ, permissionType=ALLOW)" % p):
        assert entry in listed.stdout, listed.stdout


def test_absent_deletes_only_the_bindings_named(secured_lab):
    p = "User:mm2-absent"
    proc, result = run(secured_lab, {"acls": [acl(p, "READ"), acl(p, "WRITE")]})
    assert proc.returncode == 0 and result["changed"] is True
    proc, result = run(secured_lab, {"acls": [acl(p, "WRITE"), acl(p, "DELETE")], "state": "absent"})
    assert proc.returncode == 0, result
    assert result["changed"] is True
    assert result["removed"] == dicts(line(p, "WRITE")) and result["added"] == []
    assert result["acls"] == dicts(line(p, "READ"))
    assert wait_described(secured_lab, p, [line(p, "READ")]) == [line(p, "READ")]
    proc, result = run(secured_lab, {"acls": [acl(p, "WRITE")], "state": "absent"})
    assert proc.returncode == 0 and result["changed"] is False and result["removed"] == []


def test_exclusive_removes_only_the_principals_other_bindings_on_the_named_resources(secured_lab):
    p, other = "User:mm2-exclusive", "User:bystander"
    before = [acl(p, "READ"), acl(p, "WRITE"), acl(p, "ALL", permission="DENY", host="10.0.0.9"),
              acl(p, "WRITE", "payments"), acl(p, "WRITE", "orders", pattern_type="PREFIXED"), acl(other, "WRITE")]
    proc, result = run(secured_lab, {"acls": before})
    assert proc.returncode == 0 and len(result["added"]) == 6
    proc, result = run(secured_lab, {"acls": [acl(p, "READ"), acl(p, "DESCRIBE")], "exclusive": True})
    assert proc.returncode == 0, result
    assert result["added"] == dicts(line(p, "DESCRIBE"))
    assert result["removed"] == dicts(line(p, "WRITE"), line(p, "ALL", permission="DENY", host="10.0.0.9"))
    kept = sorted([line(p, "READ"), line(p, "DESCRIBE"), line(p, "WRITE", "payments"),
                   line(p, "WRITE", "orders", pattern_type="PREFIXED")])
    assert wait_described(secured_lab, p, kept) == kept
    assert described(secured_lab, other) == [line(other, "WRITE")]
    proc, result = run(secured_lab, {"acls": [acl(p, "READ"), acl(p, "DESCRIBE")], "exclusive": True})
    assert proc.returncode == 0 and result["changed"] is False


def test_check_mode_writes_nothing_and_reports_what_the_run_then_does(secured_lab):
    p = "User:mm2-check"
    proc, result = run(secured_lab, {"acls": [acl(p, "READ"), acl(p, "WRITE")]})
    assert proc.returncode == 0 and result["changed"] is True
    wanted = {"acls": [acl(p, "READ"), acl(p, "DESCRIBE")], "exclusive": True}
    proc, checked = run(secured_lab, wanted, "--check")
    assert proc.returncode == 0, checked
    assert checked["changed"] is True
    assert checked["added"] == dicts(line(p, "DESCRIBE")) and checked["removed"] == dicts(line(p, "WRITE"))
    assert checked["msg"] == "ACL bindings on the cluster at %s: would create 1, would delete 1" % \
        secured_lab.bootstrap("A")
    time.sleep(2)  # long enough for a write to reach the broker's authorizer
    assert described(secured_lab, p) == sorted([line(p, "READ"), line(p, "WRITE")])
    # had check mode written anything, the real run would find it done and report less
    proc, result = run(secured_lab, wanted)
    assert proc.returncode == 0, result
    for key in ("changed", "added", "removed", "acls"):
        assert result[key] == checked[key], key
    assert wait_described(secured_lab, p, [line(p, "READ"), line(p, "DESCRIBE")]) == \
        sorted([line(p, "READ"), line(p, "DESCRIBE")])


def test_diff_lists_the_bindings_before_and_after(secured_lab):
    p = "User:mm2-diff"
    proc, result = run(secured_lab, {"acls": [acl(p, "READ"), acl(p, "WRITE")]})
    assert proc.returncode == 0
    proc, result = run(secured_lab, {"acls": [acl(p, "READ"), acl(p, "DESCRIBE", "orders.", pattern_type="PREFIXED")],
                                     "exclusive": True}, "--diff")
    assert proc.returncode == 0, result
    assert result["diff"] == {
        "before": "%s\n%s\n" % (line(p, "READ"), line(p, "WRITE")),
        "after": "%s\n%s\n" % (line(p, "DESCRIBE", "orders.", pattern_type="PREFIXED"), line(p, "READ")),
        "before_header": "ACLs of %s" % p, "after_header": "ACLs of %s" % p}


def test_a_caller_without_the_cluster_permissions_is_told_which_it_lacks(secured_lab):
    shown = secured_lab.bootstrap("A")
    wanted = {"acls": [acl("User:mm2-alice", "READ")]}
    # alice has no ACL at all: she may not even describe
    proc, result = run(secured_lab, wanted, user="alice")
    assert proc.returncode == 2, result
    assert result["msg"].startswith(
        "User:alice may not describe the ACLs of the cluster at %s: it needs DESCRIBE on CLUSTER kafka-cluster to "
        "read them and ALTER on CLUSTER kafka-cluster to change them, or to be one of the brokers' super.users "
        "([Error 31] ClusterAuthorizationFailedError" % shown)
    assert secured_lab.brokers["A"]["users"]["alice"] not in proc.stdout + proc.stderr

    # given DESCRIBE on the cluster (by the admin, with the module), she may look (check mode) but not change
    proc, result = run(secured_lab, {"acls": [acl("User:alice", "DESCRIBE", "kafka-cluster", "CLUSTER")]})
    assert proc.returncode == 0 and result["changed"] is True
    wait_described(secured_lab, "User:alice", [line("User:alice", "DESCRIBE", "kafka-cluster", "CLUSTER")])
    proc, result = run(secured_lab, wanted, "--check", user="alice")
    assert proc.returncode == 0, result
    assert result["changed"] is True and result["added"] == dicts(line("User:mm2-alice", "READ"))
    proc, result = run(secured_lab, wanted, user="alice")
    assert proc.returncode == 2, result
    assert result["msg"] == ("User:alice may not create ACLs on the cluster at %s: it needs ALTER on CLUSTER "
                             "kafka-cluster, or to be one of the brokers' super.users "
                             "([Error 31] ClusterAuthorizationFailedError)" % shown)
    assert result["changed"] is False
    assert described(secured_lab, "User:mm2-alice") == []


def test_a_user_added_later_logs_in_and_is_refused_by_the_authorizer(secured_lab):
    # harness.Lab.add_scram_user (kafka-configs.sh as the admin): bob logs in, and has no ACL
    secured_lab.add_scram_user("A", "bob")
    proc, result = run(secured_lab, {"acls": [acl("User:mm2-bob", "READ")]}, "--check", user="bob")
    assert proc.returncode == 2, result
    assert result["msg"].startswith("User:bob may not describe the ACLs of the cluster at ")


def test_the_second_secured_cluster_is_a_cluster_of_its_own(secured_lab):
    p = "User:mm2-two-clusters"
    proc, result = run(secured_lab, {"acls": [acl(p, "READ")]}, cluster="A")
    assert proc.returncode == 0 and result["changed"] is True
    proc, result = run(secured_lab, {"acls": [acl(p, "READ")]}, "--check", cluster="B")
    assert proc.returncode == 0, result
    assert result["changed"] is True and result["msg"].endswith("at %s: would create 1" % secured_lab.bootstrap("B"))
    assert secured_lab.brokers["A"]["users"]["admin"] != secured_lab.brokers["B"]["users"]["admin"]


def test_a_cluster_without_an_authorizer_is_named(lab):
    proc, result = run_ansible_module(MODULE, {"bootstrap_servers": lab.bootstrap("A"),
                                               "acls": [acl("User:mm2", "READ")]})
    assert proc.returncode == 2, result
    assert result["msg"] == (
        "the cluster at %s has no authorizer (authorizer.class.name), so it keeps no ACLs: set "
        "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer on its brokers and controllers "
        "([Error 54] SecurityDisabledError: No Authorizer is configured on the broker)" % lab.bootstrap("A"))
    assert result.get("changed") is False


def test_an_unreachable_cluster_is_named_within_the_timeout():
    closed = "127.0.0.1:%d" % harness.free_ports(1)[0]
    start = time.monotonic()
    proc, result = run_ansible_module(MODULE, {"bootstrap_servers": closed, "acls": [acl("User:mm2", "READ")],
                                               "timeout": 5})
    assert proc.returncode == 2, result
    assert result["msg"] == ("bootstrap_servers: no bootstrap server answered from %s within 5 s (%s: connection "
                             "refused)" % (HOST, closed))
    assert time.monotonic() - start < 5 + 30


@pytest.mark.parametrize("acls, message", [
    ([acl("mm2", "READ")],
     "acls[0].principal: 'mm2' does not start with User: (a principal is User:<name>, e.g. User:mm2, or User:* for "
     "every user)"),
    ([acl("User:mm2", "READ", "kafka-cluster", "CLUSTER")],
     "acls[0].operation: READ does not apply to a CLUSTER resource (it takes ALL, CREATE, CLUSTER_ACTION, "
     "DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER, DESCRIBE)"),
])
def test_bad_bindings_are_refused_before_the_cluster_is_asked(acls, message):
    closed = "127.0.0.1:%d" % harness.free_ports(1)[0]  # nothing is asked, so nothing needs to answer
    proc, result = run_ansible_module(MODULE, {"bootstrap_servers": closed, "acls": acls})
    assert proc.returncode == 2, result
    assert result["msg"] == message


# ---------------------------------------------------------------------------- Kafka's own table of operations

def static_fields_read(classfile, method):
    """The static fields ``method`` of a Java class file reads (getstatic), in bytecode order."""
    count = struct.unpack(">H", classfile[8:10])[0]
    pool, pos, i = [None] * count, 10, 1
    while i < count:
        tag = classfile[pos]
        if tag == 1:
            size = struct.unpack(">H", classfile[pos + 1:pos + 3])[0]
            pool[i] = classfile[pos + 3:pos + 3 + size].decode("utf-8", "replace")
            pos += 3 + size
        elif tag in (3, 4):
            pos += 5
        elif tag in (5, 6):
            pos, i = pos + 9, i + 1
        elif tag in (7, 8, 16, 19, 20):
            pool[i] = struct.unpack(">H", classfile[pos + 1:pos + 3])[0]
            pos += 3
        elif tag in (9, 10, 11, 12, 17, 18):
            pool[i] = (tag,) + struct.unpack(">HH", classfile[pos + 1:pos + 5])
            pos += 5
        elif tag == 15:
            pos += 4
        else:
            raise ValueError("constant pool tag %d" % tag)
        i += 1
    pos += 6
    pos += 2 + 2 * struct.unpack(">H", classfile[pos:pos + 2])[0]  # interfaces
    for kind in ("fields", "methods"):
        members = struct.unpack(">H", classfile[pos:pos + 2])[0]
        pos += 2
        for _member in range(members):
            name, attributes = pool[struct.unpack(">H", classfile[pos + 2:pos + 4])[0]], \
                struct.unpack(">H", classfile[pos + 6:pos + 8])[0]
            pos += 8
            for _attribute in range(attributes):
                attr_name, size = struct.unpack(">HI", classfile[pos:pos + 6])
                body = classfile[pos + 6:pos + 6 + size]
                pos += 6 + size
                if kind == "methods" and name == method and pool[attr_name] == "Code":
                    code = body[8:8 + struct.unpack(">I", body[4:8])[0]]
                    found = []
                    for at in range(len(code) - 2):
                        ref = struct.unpack(">H", code[at + 1:at + 3])[0]
                        if code[at] == 0xb2 and ref < count and isinstance(pool[ref], tuple) and pool[ref][0] == 9:
                            name_and_type = pool[pool[ref][2]]
                            found.append(pool[name_and_type[1]])
                    return found
    raise ValueError("no method %s" % method)


def test_the_operations_each_resource_type_takes_are_kafkas_own():
    """kafka_acls.SUPPORTED_OPERATIONS against AclEntry.supportedOperations in the lab's Kafka:
    the operations its switch reads, case by case (TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID,
    DELEGATION_TOKEN, USER), less TWO_PHASE_COMMIT, which kafka-python cannot name."""
    with tarfile.open(harness.find_archive()) as archive:
        member = [m for m in archive.getmembers() if os.path.basename(m.name).startswith("kafka-server-")
                  and m.name.endswith(".jar") and "common" not in m.name][0]
        with zipfile.ZipFile(archive.extractfile(member)) as jar:
            classfile = jar.read("org/apache/kafka/security/authorizer/AclEntry.class")
    read = [name for name in static_fields_read(classfile, "supportedOperations") if name.isupper()]
    assert "TWO_PHASE_COMMIT" in read  # Kafka 4.x: the one operation the module leaves out
    ours = [op for resource_type in kafka_acls.RESOURCE_TYPES for op in kafka_acls.SUPPORTED_OPERATIONS[resource_type]]
    assert [name for name in read if name != "TWO_PHASE_COMMIT"] == ours
