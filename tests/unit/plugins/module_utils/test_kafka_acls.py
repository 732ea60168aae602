# -*- coding: utf-8 -*-
"""module_utils/kafka/acls.py: bindings checked and normalised (every refusal names acls[i].<key>),
what to create and delete (exclusive touches only the principal/resource pairs named), the text of
a binding, kafka-python's types both ways, the calls against acl_admin_double (a TEST DOUBLE of
KafkaAdminClient's ACL calls) and the failure messages.  Against a real broker with an authorizer:
tests/live/test_kafka_acl.py.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from kafka import admin as kafka_admin
from kafka import errors as kafka_errors

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import acls as ka

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from acl_admin_double import AclAdminDouble  # noqa: E402

B = ka.Binding
COLLECTIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", ".collections")


def binding(principal="User:mm2", operation="READ", resource_type="TOPIC", resource_name="orders",
            pattern_type="LITERAL", permission="ALLOW", host="*"):
    return B(principal, host, operation, permission, resource_type, resource_name, pattern_type)


OMIT = object()


def one(**item):
    """acls with one binding: READ on TOPIC orders for User:mm2, changed by ``item`` (OMIT: key left out)."""
    base = {"principal": "User:mm2", "operation": "READ", "resource_type": "TOPIC", "resource_name": "orders"}
    base.update(item)
    return [dict((k, v) for k, v in base.items() if v is not OMIT)]


# ---------------------------------------------------------------------------- normalise

def test_defaults_fill_host_permission_and_pattern_type():
    assert ka.normalise(one()) == ([binding()], [])


@pytest.mark.parametrize("given, name", [
    ("read", "READ"),
    ("Read", "READ"),
    ("describe_configs", "DESCRIBE_CONFIGS"),
    ("DescribeConfigs", "DESCRIBE_CONFIGS"),    # kafka-acls.sh's spelling
    ("describe-configs", "DESCRIBE_CONFIGS"),
    (" alterConfigs ", "ALTER_CONFIGS"),
])
def test_operation_names_are_case_insensitive(given, name):
    bindings, errors = ka.normalise(one(operation=given))
    assert errors == [] and bindings[0].operation == name


def test_every_key_normalised():
    bindings, errors = ka.normalise([{"principal": "User:mm2", "host": "10.0.0.7", "operation": "write",
                                      "permission": "deny", "resource_type": "transactionalId",
                                      "resource_name": "mm2-", "pattern_type": "prefixed"}])
    assert errors == []
    assert bindings == [B("User:mm2", "10.0.0.7", "WRITE", "DENY", "TRANSACTIONAL_ID", "mm2-", "PREFIXED")]


def test_a_binding_given_twice_counts_once_and_order_is_kept():
    bindings, errors = ka.normalise(one(operation="WRITE") + one() + one(operation="write"))
    assert errors == [] and [b.operation for b in bindings] == ["WRITE", "READ"]


def test_null_optional_keys_take_their_defaults():
    assert ka.normalise(one(host=None, permission=None, pattern_type=None)) == ([binding()], [])


def test_a_numeric_resource_name_is_its_text():
    assert ka.normalise(one(resource_name=2024))[0] == [binding(resource_name="2024")]


def test_ipv6_host():
    assert ka.normalise(one(host="::1"))[0] == [binding(host="::1")]


@pytest.mark.parametrize("acls, errors", [
    (one(operaton="READ"),
     ["acls[0].operaton: not a key of a binding (it takes principal, host, operation, permission, resource_type, "
      "resource_name, pattern_type)"]),
    (one(operation=OMIT), ["acls[0].operation: required"]),
    (one(resource_name=None), ["acls[0].resource_name: required"]),
    (one(operation="REED"),
     ["acls[0].operation: 'REED' is not one of ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, "
      "DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS"]),
    (one(operation="ANY"),  # a filter's value, not a binding's
     ["acls[0].operation: 'ANY' is not one of ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, "
      "DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS"]),
    (one(permission="maybe"), ["acls[0].permission: 'maybe' is not ALLOW or DENY"]),
    (one(resource_type="broker"),
     ["acls[0].resource_type: 'broker' is not one of TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN, USER"]),
    (one(pattern_type="MATCH"), ["acls[0].pattern_type: 'MATCH' is not LITERAL or PREFIXED"]),
    (one(principal="mm2"),
     ["acls[0].principal: 'mm2' does not start with User: (a principal is User:<name>, e.g. User:mm2, or User:* for "
      "every user)"]),
    (one(principal="Group:ops"),
     ["acls[0].principal: 'Group:ops' does not start with User: (a principal is User:<name>, e.g. User:mm2, or "
      "User:* for every user)"]),
    (one(principal="User: "), ["acls[0].principal: 'User: ' has no name after User:"]),
    (one(host="kafka-a1"),
     ["acls[0].host: 'kafka-a1' is not * or an IP address (Kafka matches the client's address, not a host name)"]),
    (one(resource_name=" "), ["acls[0].resource_name: must not be blank"]),
    (one(resource_name=["orders"]), ["acls[0].resource_name: must be a string, not list"]),
    (one(operation=True), ["acls[0].operation: must be a string, not bool"]),
    (one(resource_type="CLUSTER", resource_name="prod", operation="ALTER"),
     ["acls[0].resource_name: 'prod' is not kafka-cluster, the one name of a CLUSTER resource"]),
    (one(resource_type="CLUSTER", resource_name="kafka-cluster", operation="ALTER", pattern_type="PREFIXED"),
     ["acls[0].pattern_type: PREFIXED does not apply to CLUSTER (its one resource is LITERAL kafka-cluster)"]),
    (one(resource_type="CLUSTER", resource_name="kafka-cluster"),
     ["acls[0].operation: READ does not apply to a CLUSTER resource (it takes ALL, CREATE, CLUSTER_ACTION, "
      "DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER, DESCRIBE)"]),
    (one(resource_type="GROUP", operation="WRITE"),
     ["acls[0].operation: WRITE does not apply to a GROUP resource (it takes ALL, READ, DESCRIBE, DELETE, "
      "DESCRIBE_CONFIGS, ALTER_CONFIGS)"]),
    (["User:mm2 READ orders"],
     ["acls[0]: must be a mapping with principal, operation, resource_type, resource_name, not str"]),
    ([], ["acls: must list at least one binding"]),
    ("User:mm2", ["acls: must be a list of bindings, not str"]),
])
def test_refusals_name_the_binding_and_the_key(acls, errors):
    assert ka.normalise(acls) == ([], errors)


def test_each_fault_of_each_binding_is_named_and_the_good_ones_kept():
    bindings, errors = ka.normalise(one() + one(principal="mm2", permission="x") + one(operation="WRITE"))
    assert bindings == [binding(), binding(operation="WRITE")]
    assert errors == [
        "acls[1].principal: 'mm2' does not start with User: (a principal is User:<name>, e.g. User:mm2, or User:* "
        "for every user)",
        "acls[1].permission: 'x' is not ALLOW or DENY"]


def test_every_documented_operation_is_supported_by_some_resource_type():
    supported = set(op for ops in ka.SUPPORTED_OPERATIONS.values() for op in ops) | {"ALL"}
    assert supported == set(ka.OPERATIONS)
    assert set(ka.SUPPORTED_OPERATIONS) == set(ka.RESOURCE_TYPES)


# ---------------------------------------------------------------------------- text and order

def test_text_is_one_line():
    assert ka.text(binding()) == "User:mm2 ALLOW READ TOPIC:LITERAL:orders @*"
    assert ka.text(B("User:x", "10.0.0.1", "DESCRIBE", "DENY", "CLUSTER", "kafka-cluster", "LITERAL")) == \
        "User:x DENY DESCRIBE CLUSTER:LITERAL:kafka-cluster @10.0.0.1"


def test_ordered_and_as_dicts():
    bindings = [binding(operation="WRITE"), binding(principal="User:a"), binding(), binding()]
    assert [ka.text(b) for b in ka.ordered(bindings)] == [
        "User:a ALLOW READ TOPIC:LITERAL:orders @*",
        "User:mm2 ALLOW READ TOPIC:LITERAL:orders @*",
        "User:mm2 ALLOW WRITE TOPIC:LITERAL:orders @*"]
    assert ka.as_dicts([binding()]) == [{"principal": "User:mm2", "host": "*", "operation": "READ",
                                         "permission": "ALLOW", "resource_type": "TOPIC", "resource_name": "orders",
                                         "pattern_type": "LITERAL"}]


# ---------------------------------------------------------------------------- plan

READ, WRITE, DESCRIBE = binding(), binding(operation="WRITE"), binding(operation="DESCRIBE")


def test_present_creates_only_what_is_missing():
    assert ka.plan([READ, WRITE], {READ}, "present") == ([WRITE], [])


def test_present_with_everything_there_does_nothing():
    assert ka.plan([READ], {READ, WRITE}, "present") == ([], [])


def test_absent_deletes_only_what_exists():
    assert ka.plan([READ, WRITE], {READ, DESCRIBE}, "absent") == ([], [READ])


def test_absent_ignores_exclusive():
    assert ka.plan([READ], {READ, WRITE}, "absent", exclusive=True) == ([], [READ])


def test_exclusive_removes_the_principals_other_bindings_on_the_named_resources_only():
    other_host = binding(operation="WRITE", host="10.0.0.9")
    deny = binding(permission="DENY", operation="ALL")
    prefixed = binding(pattern_type="PREFIXED", operation="WRITE")       # another resource: orders*
    other_topic = binding(resource_name="payments", operation="WRITE")   # a resource not named
    other_principal = binding(principal="User:alice", operation="WRITE")
    group = binding(resource_type="GROUP", resource_name="orders", operation="DELETE")
    existing = {READ, WRITE, other_host, deny, prefixed, other_topic, other_principal, group}
    add, remove = ka.plan([READ, DESCRIBE], existing, "present", exclusive=True)
    assert add == [DESCRIBE]
    assert remove == ka.ordered([WRITE, other_host, deny])


def test_exclusive_pairs_each_principal_with_its_own_resources():
    # bob is named on payments only: his binding on orders stays although orders is named (for mm2)
    bob_orders, bob_payments = binding(principal="User:bob"), binding(principal="User:bob", resource_name="payments")
    bob_payments_write = binding(principal="User:bob", resource_name="payments", operation="WRITE")
    add, remove = ka.plan([READ, bob_payments], {WRITE, bob_orders, bob_payments_write}, "present", exclusive=True)
    assert add == ka.ordered([READ, bob_payments])
    assert remove == ka.ordered([WRITE, bob_payments_write])


def test_without_exclusive_nothing_is_removed():
    assert ka.plan([READ], {WRITE}, "present") == ([READ], [])


def test_after_and_diff():
    existing = {READ, WRITE}
    after = ka.after(existing, [DESCRIBE], [WRITE])
    assert after == ka.ordered([READ, DESCRIBE])
    assert ka.diff(existing, after, ["User:mm2"]) == {
        "before": "User:mm2 ALLOW READ TOPIC:LITERAL:orders @*\nUser:mm2 ALLOW WRITE TOPIC:LITERAL:orders @*\n",
        "after": "User:mm2 ALLOW DESCRIBE TOPIC:LITERAL:orders @*\nUser:mm2 ALLOW READ TOPIC:LITERAL:orders @*\n",
        "before_header": "ACLs of User:mm2", "after_header": "ACLs of User:mm2"}
    assert ka.diff(set(), [], ["User:a", "User:b"])["before"] == ""


# ---------------------------------------------------------------------------- kafka-python's types

def test_to_acl_and_back():
    b = B("User:mm2", "10.0.0.7", "DESCRIBE_CONFIGS", "DENY", "TOPIC", "orders.", "PREFIXED")
    acl = ka.to_acl(b, kafka_admin)
    assert isinstance(acl, kafka_admin.ACL)
    assert acl.operation is kafka_admin.ACLOperation.DESCRIBE_CONFIGS
    assert acl.resource_pattern.pattern_type is kafka_admin.ACLResourcePatternType.PREFIXED
    assert ka.from_acl(acl) == b
    assert ka.from_acl(ka.to_filter(b, kafka_admin)) == b


def test_principal_filter_matches_any_resource_host_and_operation():
    acl_filter = ka.principal_filter("User:mm2", kafka_admin)
    assert acl_filter.principal == "User:mm2" and acl_filter.host is None
    assert acl_filter.operation is kafka_admin.ACLOperation.ANY
    assert acl_filter.permission_type is kafka_admin.ACLPermissionType.ANY
    assert acl_filter.resource_pattern.resource_type is kafka_admin.ResourceType.ANY
    assert acl_filter.resource_pattern.pattern_type is kafka_admin.ACLResourcePatternType.ANY


def test_no_kafka_python_needed_to_import():
    code = ("import sys; sys.modules['kafka'] = None; sys.path.insert(0, %r)\n"
            "from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import acls as kafka_acls, client as kafka_client\n"
            "print(kafka_acls.normalise([{'principal': 'User:a', 'operation': 'READ', 'resource_type': 'TOPIC', "
            "'resource_name': 't'}])[1])" % COLLECTIONS)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"


# ---------------------------------------------------------------------------- the calls

def test_read_asks_once_per_principal_and_keeps_only_theirs():
    admin = AclAdminDouble([READ, binding(principal="User:alice"), binding(principal="User:bob")])
    assert ka.read(admin, ["User:alice", "User:mm2"], kafka_admin) == {READ, binding(principal="User:alice")}
    assert admin.calls == [("describe", "User:alice"), ("describe", "User:mm2")]


def test_create_and_delete_write_exactly_the_bindings():
    admin = AclAdminDouble([READ, WRITE])
    ka.create(admin, [DESCRIBE], kafka_admin)
    ka.delete(admin, [WRITE], kafka_admin)
    assert admin.bindings == {READ, DESCRIBE}
    ka.create(admin, [], kafka_admin)
    ka.delete(admin, [], kafka_admin)
    assert admin.writes() == [("create", [DESCRIBE]), ("delete", [WRITE])]


def test_describe_without_an_authorizer_raises_naming_the_call():
    with pytest.raises(ka.AclCallFailed) as failed:
        ka.read(AclAdminDouble(authorizer=False), ["User:mm2"], kafka_admin)
    assert failed.value.action == "describe"
    assert isinstance(failed.value.error, kafka_errors.SecurityDisabledError)


def test_a_create_refused_for_one_binding_names_it_and_what_was_created():
    admin = AclAdminDouble(refuse=[WRITE])
    with pytest.raises(ka.AclCallFailed) as failed:
        ka.create(admin, [READ, WRITE], kafka_admin)
    assert (failed.value.action, failed.value.error) == ("create", kafka_errors.InvalidRequestError)
    assert failed.value.failed == [WRITE] and failed.value.done == [READ]


def test_a_delete_refused_raises():
    admin = AclAdminDouble([READ], may_alter=False)
    with pytest.raises(ka.AclCallFailed) as failed:
        ka.delete(admin, [READ], kafka_admin)
    assert (failed.value.action, failed.value.error) == ("delete", kafka_errors.ClusterAuthorizationFailedError)
    assert failed.value.failed == [READ] and failed.value.done == [] and admin.bindings == {READ}


def test_a_binding_kafka_python_cannot_read_is_named_with_its_principal():
    class NewerKafka(AclAdminDouble):
        def describe_acls(self, acl_filter):
            # kafka-python 3.0.12 meeting Kafka 4's TWO_PHASE_COMMIT (15) in an answer
            return [kafka_admin.ACLOperation(15)], kafka_errors.NoError
    with pytest.raises(ka.AclCallFailed) as failed:
        ka.read(NewerKafka(), ["User:tx"], kafka_admin)
    assert ka.failure_message(failed.value, SHOWN, "User:admin") == (
        "the cluster at kafka-a1:9093 holds a binding of User:tx that this kafka-python cannot read, an operation, "
        "resource or pattern type it has no name for (such as Kafka 4's TWO_PHASE_COMMIT): ValueError: 15 is not a "
        "valid ACLOperation")


def test_an_error_that_is_not_kafkas_is_not_dressed_as_one():
    class Broken(AclAdminDouble):
        def describe_acls(self, acl_filter):
            raise RuntimeError("bug")
    with pytest.raises(RuntimeError):
        ka.read(Broken(), ["User:mm2"], kafka_admin)


# ---------------------------------------------------------------------------- messages

SHOWN = "kafka-a1:9093"


@pytest.mark.parametrize("failure, message", [
    (ka.AclCallFailed("describe", kafka_errors.SecurityDisabledError("No Authorizer is configured on the broker")),
     "the cluster at kafka-a1:9093 has no authorizer (authorizer.class.name), so it keeps no ACLs: set "
     "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer on its brokers and controllers "
     "([Error 54] SecurityDisabledError: No Authorizer is configured on the broker)"),
    (ka.AclCallFailed("describe", kafka_errors.ClusterAuthorizationFailedError("Cluster authorization failed.")),
     "User:alice may not describe the ACLs of the cluster at kafka-a1:9093: it needs DESCRIBE on CLUSTER "
     "kafka-cluster to read them and ALTER on CLUSTER kafka-cluster to change them, or to be one of the brokers' "
     "super.users ([Error 31] ClusterAuthorizationFailedError: Cluster authorization failed.)"),
    # the broker's answer carried no message
    (ka.AclCallFailed("describe", kafka_errors.ClusterAuthorizationFailedError(None)),
     "User:alice may not describe the ACLs of the cluster at kafka-a1:9093: it needs DESCRIBE on CLUSTER "
     "kafka-cluster to read them and ALTER on CLUSTER kafka-cluster to change them, or to be one of the brokers' "
     "super.users ([Error 31] ClusterAuthorizationFailedError)"),
    (ka.AclCallFailed("create", kafka_errors.ClusterAuthorizationFailedError, [READ]),
     "User:alice may not create ACLs on the cluster at kafka-a1:9093: it needs ALTER on CLUSTER kafka-cluster, or "
     "to be one of the brokers' super.users ([Error 31] ClusterAuthorizationFailedError)"),
    (ka.AclCallFailed("delete", kafka_errors.ClusterAuthorizationFailedError, [READ]),
     "User:alice may not delete ACLs on the cluster at kafka-a1:9093: it needs ALTER on CLUSTER kafka-cluster, or "
     "to be one of the brokers' super.users ([Error 31] ClusterAuthorizationFailedError)"),
    (ka.AclCallFailed("create", kafka_errors.InvalidRequestError, [WRITE], [READ]),
     "creating ACLs on the cluster at kafka-a1:9093 failed for User:mm2 ALLOW WRITE TOPIC:LITERAL:orders @*: "
     "[Error 42] InvalidRequestError; created before the failure: User:mm2 ALLOW READ TOPIC:LITERAL:orders @*"),
    (ka.AclCallFailed("delete", kafka_errors.ClusterAuthorizationFailedError, [WRITE], [READ]),
     "User:alice may not delete ACLs on the cluster at kafka-a1:9093: it needs ALTER on CLUSTER kafka-cluster, or "
     "to be one of the brokers' super.users ([Error 31] ClusterAuthorizationFailedError); deleted before the "
     "failure: User:mm2 ALLOW READ TOPIC:LITERAL:orders @*"),
])
def test_failure_messages(failure, message):
    assert ka.failure_message(failure, SHOWN, "User:alice") == message
