# -*- coding: utf-8 -*-
"""A TEST DOUBLE of kafka-python's KafkaAdminClient ACL calls (describe_acls, create_acls,
delete_acls), answering with kafka-python 3.x's own types and errors from a set of bindings it
keeps.  Not Kafka: it stands in only for what a real broker cannot be made to show on demand
(which calls a run made, so that check mode is seen to write nothing; a create that the cluster
refuses for one binding only).  The real thing is tested in tests/live/test_kafka_acl.py.
"""

from __future__ import annotations

from kafka import errors as kafka_errors
from kafka import admin as kafka_admin

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import acls as kafka_acls

_ANY = ("ANY",)


def _matches(acl_filter, binding):
    """As a broker matches an ACLFilter: null or ANY matches every value, otherwise equality."""
    pattern = acl_filter.resource_pattern
    pairs = ((acl_filter.principal, binding.principal), (acl_filter.host, binding.host),
             (acl_filter.operation.name, binding.operation), (acl_filter.permission_type.name, binding.permission),
             (pattern.resource_type.name, binding.resource_type), (pattern.resource_name, binding.resource_name),
             (pattern.pattern_type.name, binding.pattern_type))
    return all(wanted is None or wanted in _ANY or wanted == value for wanted, value in pairs)


class AclAdminDouble(object):
    """``bindings``: kafka_acls.Binding the cluster has.  ``authorizer=False``: every call answers
    SECURITY_DISABLED; ``may_describe`` / ``may_alter`` False: CLUSTER_AUTHORIZATION_FAILED on
    describe / on create and delete (as a broker answers a caller without DESCRIBE / ALTER on the
    cluster); ``refuse``: bindings whose creation the cluster answers with INVALID_REQUEST."""

    def __init__(self, bindings=(), authorizer=True, may_describe=True, may_alter=True, refuse=()):
        self.bindings = set(bindings)
        self.authorizer, self.may_describe, self.may_alter = authorizer, may_describe, may_alter
        self.refuse = set(refuse)
        self.calls = []
        self.connected_with = None
        self.closed = False

    def __call__(self, **kwargs):
        """Stands in for the KafkaAdminClient class: 'constructing' it returns the double."""
        self.connected_with = kwargs
        return self

    def writes(self):
        return [call for call in self.calls if call[0] != "describe"]

    def _check(self, alter):
        if not self.authorizer:
            raise kafka_errors.SecurityDisabledError("No Authorizer is configured on the broker")
        if not (self.may_alter if alter else self.may_describe):
            raise kafka_errors.ClusterAuthorizationFailedError("Cluster authorization failed.")

    def describe_acls(self, acl_filter):
        self.calls.append(("describe", acl_filter.principal))
        self._check(False)
        return ([kafka_acls.to_acl(b, kafka_admin) for b in kafka_acls.ordered(self.bindings) if _matches(acl_filter, b)],
                kafka_errors.NoError)

    def create_acls(self, acls):
        wanted = [kafka_acls.from_acl(acl) for acl in acls]
        self.calls.append(("create", wanted))
        result = {"succeeded": [], "failed": []}
        for acl, binding in zip(acls, wanted):
            if not self.authorizer:
                result["failed"].append(kafka_errors.SecurityDisabledError)
            elif not self.may_alter:
                result["failed"].append(kafka_errors.ClusterAuthorizationFailedError)
            elif binding in self.refuse:
                result["failed"].append(kafka_errors.InvalidRequestError)
            else:
                self.bindings.add(binding)
                result["succeeded"].append(acl)
        return result

    def delete_acls(self, acl_filters):
        self.calls.append(("delete", [kafka_acls.from_acl(f) for f in acl_filters]))
        results = []
        for acl_filter in acl_filters:
            if not self.authorizer or not self.may_alter:
                error = kafka_errors.SecurityDisabledError if not self.authorizer \
                    else kafka_errors.ClusterAuthorizationFailedError
                results.append((acl_filter, [], error))
                continue
            matched = [b for b in self.bindings if _matches(acl_filter, b)]
            self.bindings.difference_update(matched)
            results.append((acl_filter, [kafka_acls.to_acl(b, kafka_admin) for b in matched], kafka_errors.NoError))
        return results

    def close(self):
        self.closed = True
