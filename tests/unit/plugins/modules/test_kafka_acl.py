# -*- coding: utf-8 -*-
"""kafkaops.mirrormaker.kafka_acl: the real module's main() run in this process as Ansible runs it
(arguments in through AnsibleModule, the JSON result out), with kafka-python's KafkaAdminClient
replaced by acl_admin_double, a TEST DOUBLE of its ACL calls, and the reachability probe by a
stand-in that says the servers answered.  The double shows what a real broker cannot on demand:
every call the run made, so that check mode is seen to write nothing and a re-run to write
nothing.  Against a real broker with an authorizer: tests/live/test_kafka_acl.py.
"""

from __future__ import annotations

import json
import os
import sys

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import acls as kafka_acls

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import client as kafka_client
from ansible_collections.kafkaops.mirrormaker.plugins.modules import kafka_acl as module

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "module_utils"))
from acl_admin_double import AclAdminDouble  # noqa: E402

B = kafka_acls.Binding
SERVER = "127.0.0.1:9093"
SCRAM = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512", "sasl.plain.username": "admin",
         "sasl.plain.password": "adm1n-s3cret"}


def acl(operation, resource_name="orders", principal="User:mm2", **extra):
    item = {"principal": principal, "operation": operation, "resource_type": "TOPIC", "resource_name": resource_name}
    item.update(extra)
    return item


def binding(operation, resource_name="orders", principal="User:mm2", pattern_type="LITERAL", host="*",
            permission="ALLOW", resource_type="TOPIC"):
    return B(principal, host, operation, permission, resource_type, resource_name, pattern_type)


@pytest.fixture
def run(monkeypatch, capsys):
    """run(admin, acls, check=False, diff=False, **params) -> (exit code, result)."""
    monkeypatch.setattr(kafka_client, "unreachable_message", lambda *args, **kwargs: None)

    def do_run(admin, acls, check=False, diff=False, **params):
        monkeypatch.setattr(module, "KafkaAdminClient", admin)
        args = dict(bootstrap_servers=SERVER, client_properties=SCRAM, acls=acls, _ansible_check_mode=check,
                    _ansible_diff=diff)
        args.update(params)
        with patch_module_args(args):
            with pytest.raises(SystemExit) as exited:
                module.main()
        return exited.value.code, json.loads(capsys.readouterr().out)
    return do_run


def test_create_then_a_re_run_changes_nothing(run):
    admin = AclAdminDouble([binding("READ", principal="User:alice")])
    code, result = run(admin, [acl("READ"), acl("describe"), acl("READ")])
    assert code == 0, result
    assert result["changed"] is True
    assert result["added"] == kafka_acls.as_dicts([binding("READ"), binding("DESCRIBE")])
    assert result["removed"] == []
    assert result["acls"] == result["added"]  # alice's binding is not a principal concerned
    assert result["msg"] == "ACL bindings on the cluster at 127.0.0.1:9093: created 2"
    assert admin.writes() == [("create", kafka_acls.ordered([binding("DESCRIBE"), binding("READ")]))]
    assert admin.closed and admin.connected_with["sasl_plain_username"] == "admin"
    assert admin.connected_with["client_id"] == "kafkaops-acl"

    again = AclAdminDouble(admin.bindings)
    code, result = run(again, [acl("READ"), acl("DESCRIBE")])
    assert code == 0 and result["changed"] is False
    assert result["added"] == [] and result["removed"] == []
    assert result["msg"] == "ACL bindings on the cluster at 127.0.0.1:9093: as asked, nothing to change"
    assert again.writes() == []
    assert again.calls == [("describe", "User:mm2")]


def test_absent_deletes_only_what_exists(run):
    admin = AclAdminDouble([binding("READ"), binding("WRITE")])
    code, result = run(admin, [acl("READ"), acl("DESCRIBE")], state="absent")
    assert code == 0 and result["changed"] is True
    assert result["removed"] == kafka_acls.as_dicts([binding("READ")]) and result["added"] == []
    assert result["acls"] == kafka_acls.as_dicts([binding("WRITE")])
    assert admin.bindings == {binding("WRITE")}
    assert admin.writes() == [("delete", [binding("READ")])]

    code, result = run(AclAdminDouble(admin.bindings), [acl("READ")], state="absent")
    assert code == 0 and result["changed"] is False


def test_exclusive_replaces_the_principals_bindings_on_the_named_resources_only(run):
    keep = [binding("WRITE", "payments"), binding("WRITE", principal="User:alice"),
            binding("WRITE", "orders", pattern_type="PREFIXED")]
    admin = AclAdminDouble([binding("READ"), binding("WRITE"), binding("ALL", permission="DENY", host="10.0.0.9")]
                           + keep)
    code, result = run(admin, [acl("READ"), acl("DESCRIBE")], exclusive=True)
    assert code == 0 and result["changed"] is True
    assert result["added"] == kafka_acls.as_dicts([binding("DESCRIBE")])
    assert result["removed"] == kafka_acls.as_dicts([binding("WRITE"), binding("ALL", permission="DENY",
                                                                               host="10.0.0.9")])
    assert admin.bindings == set([binding("READ"), binding("DESCRIBE")] + keep)
    # created before deleted: the principal keeps its access while its bindings are replaced
    assert [call[0] for call in admin.writes()] == ["create", "delete"]
    assert result["acls"] == kafka_acls.as_dicts([binding("READ"), binding("DESCRIBE"), binding("WRITE", "payments"),
                                                  binding("WRITE", "orders", pattern_type="PREFIXED")])


@pytest.mark.parametrize("params", [{}, {"exclusive": True}, {"state": "absent"}])
def test_check_mode_reports_what_a_run_would_do_and_writes_nothing(run, params):
    existing = [binding("READ"), binding("WRITE")]
    wanted = [acl("READ"), acl("DESCRIBE")]
    checked = AclAdminDouble(existing)
    code, checked_result = run(checked, wanted, check=True, diff=True, **params)
    assert code == 0, checked_result
    assert checked.writes() == [] and checked.bindings == set(existing)

    real = AclAdminDouble(existing)
    code, real_result = run(real, wanted, diff=True, **params)
    assert code == 0
    for key in ("changed", "added", "removed", "acls", "diff"):
        assert checked_result[key] == real_result[key], key
    assert real_result["acls"] == kafka_acls.as_dicts(real.bindings)
    assert checked_result["msg"].replace("would create", "created").replace("would delete", "deleted") == \
        real_result["msg"]


def test_diff_lists_bindings_before_and_after(run):
    admin = AclAdminDouble([binding("READ"), binding("WRITE")])
    code, result = run(admin, [acl("READ"), acl("DESCRIBE", "orders.", pattern_type="prefixed")], exclusive=True,
                       diff=True)
    assert code == 0
    assert result["diff"] == {
        "before": "User:mm2 ALLOW READ TOPIC:LITERAL:orders @*\nUser:mm2 ALLOW WRITE TOPIC:LITERAL:orders @*\n",
        "after": "User:mm2 ALLOW DESCRIBE TOPIC:PREFIXED:orders. @*\nUser:mm2 ALLOW READ TOPIC:LITERAL:orders @*\n",
        "before_header": "ACLs of User:mm2", "after_header": "ACLs of User:mm2"}


def test_no_diff_unless_asked(run):
    code, result = run(AclAdminDouble(), [acl("READ")])
    assert code == 0 and "diff" not in result


def test_no_authorizer_is_named(run):
    code, result = run(AclAdminDouble(authorizer=False), [acl("READ")])
    assert code == 1 and result["failed"] is True and result["changed"] is False
    assert result["msg"] == (
        "the cluster at 127.0.0.1:9093 has no authorizer (authorizer.class.name), so it keeps no ACLs: set "
        "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer on its brokers and controllers "
        "([Error 54] SecurityDisabledError: No Authorizer is configured on the broker)")


def test_a_caller_that_may_not_describe_is_named_with_the_permissions(run):
    alice = dict(SCRAM, **{"sasl.plain.username": "alice"})
    code, result = run(AclAdminDouble(may_describe=False, may_alter=False), [acl("READ")], client_properties=alice)
    assert code == 1
    assert result["msg"].startswith("User:alice may not describe the ACLs of the cluster at 127.0.0.1:9093: it needs "
                                    "DESCRIBE on CLUSTER kafka-cluster to read them and ALTER on CLUSTER "
                                    "kafka-cluster to change them")


def test_a_caller_without_alter_is_named_and_check_mode_does_not_need_it(run):
    alice = dict(SCRAM, **{"sasl.plain.username": "alice"})
    code, result = run(AclAdminDouble(may_alter=False), [acl("READ")], client_properties=alice)
    assert code == 1 and result["changed"] is False
    assert result["msg"] == ("User:alice may not create ACLs on the cluster at 127.0.0.1:9093: it needs ALTER on "
                             "CLUSTER kafka-cluster, or to be one of the brokers' super.users "
                             "([Error 31] ClusterAuthorizationFailedError)")
    code, result = run(AclAdminDouble(may_alter=False), [acl("READ")], client_properties=alice, check=True)
    assert code == 0 and result["changed"] is True


def test_a_delete_refused_after_a_create_says_what_was_created(run):
    class CreateOnly(AclAdminDouble):
        def delete_acls(self, acl_filters):
            self.may_alter = False
            return AclAdminDouble.delete_acls(self, acl_filters)

    admin = CreateOnly([binding("WRITE")])
    code, result = run(admin, [acl("READ")], exclusive=True)
    assert code == 1 and result["changed"] is True
    assert result["msg"] == ("User:admin may not delete ACLs on the cluster at 127.0.0.1:9093: it needs ALTER on "
                             "CLUSTER kafka-cluster, or to be one of the brokers' super.users "
                             "([Error 31] ClusterAuthorizationFailedError); created before the failure: "
                             "User:mm2 ALLOW READ TOPIC:LITERAL:orders @*")


def test_bad_input_is_refused_before_any_call_one_message_per_fault(run):
    admin = AclAdminDouble()
    code, result = run(admin, [acl("READ", host="kafka-a1"), {"principal": "mm2", "operation": "READ",
                                                              "resource_type": "TOPIC", "resource_name": "t",
                                                              "permision": "DENY"}],
                       state="absent", exclusive=True, timeout=0, bootstrap_servers="kafka-a1")
    assert code == 1
    assert result["msg"].split("; ") == [
        "bootstrap_servers: 'kafka-a1' is not host:port",
        "acls[0].host: 'kafka-a1' is not * or an IP address (Kafka matches the client's address, not a host name)",
        "acls[1].permision: not a key of a binding (it takes principal, host, operation, permission, resource_type, "
        "resource_name, pattern_type)",
        "acls[1].principal: 'mm2' does not start with User: (a principal is User:<name>, e.g. User:mm2, or User:* for "
        "every user)",
        "exclusive: only with state present (state absent deletes the bindings of acls and no other)",
        "timeout: 0 is not from 1 to 300 seconds"]
    assert admin.calls == [] and admin.connected_with is None


def test_the_password_is_never_in_the_result_but_the_user_is(run):
    code, result = run(AclAdminDouble(may_alter=False), [acl("READ")])
    assert code == 1
    text = json.dumps(result)
    assert "adm1n-s3cret" not in text
    shown = result["invocation"]["module_args"]["client_properties"]
    assert shown["sasl.plain.username"] == "admin" and shown["security.protocol"] == "SASL_PLAINTEXT"


def test_gssapi_without_the_library_is_named(run, monkeypatch):
    monkeypatch.setattr(kafka_client, "gssapi_import_error", lambda kwargs: "Traceback: No module named 'gssapi'")
    admin = AclAdminDouble()
    code, result = run(admin, [acl("READ")], client_properties={"security.protocol": "SASL_PLAINTEXT",
                                                                "sasl.mechanism": "GSSAPI"})
    assert code == 1
    assert result["msg"].startswith("Failed to import the required Python library (gssapi) on ")
    assert "for sasl.mechanism GSSAPI" in result["msg"]
    assert admin.calls == [] and admin.connected_with is None


def test_an_unreachable_cluster_is_named(capsys):
    closed = "127.0.0.1:%d" % _closed_port()
    args = dict(bootstrap_servers=closed, acls=[acl("READ")], timeout=3)
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exited:
            module.main()
    result = json.loads(capsys.readouterr().out)
    assert exited.value.code == 1
    assert result["msg"].startswith("bootstrap_servers: no bootstrap server answered from ")
    assert result["msg"].endswith(" within 3 s (%s: connection refused)" % closed)


def _closed_port():
    import socket
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port
