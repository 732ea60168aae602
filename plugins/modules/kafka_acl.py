#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kafka_acl
short_description: Create or delete Kafka ACL bindings of named principals
version_added: 0.1.0
description:
  - Makes the ACL bindings O(acls) present on, or absent from, one Kafka cluster whose brokers run an
    authorizer (C(authorizer.class.name), for KRaft
    C(org.apache.kafka.metadata.authorizer.StandardAuthorizer)), through the Kafka admin API.
  - It first describes the bindings the cluster has for each principal named in O(acls), then
    creates only the bindings that are missing (O(state=present)) or deletes only those that exist
    (O(state=absent)). C(changed) is V(true) only when a binding was created or deleted.
  - With O(exclusive=true) and O(state=present), a principal's other bindings on a resource that
    O(acls) names for that principal are deleted too (same resource type, name and pattern type; any
    host, operation and permission). Bindings of other principals, and a principal's bindings on
    resources O(acls) does not pair it with, are never touched.
  - Bindings are created before any is deleted, so a principal whose bindings are replaced does not
    lose access in between.
  - Check mode describes, and reports in RV(added), RV(removed), RV(acls) and the diff exactly what a
    real run would do, without writing.
  - The caller needs DESCRIBE on the cluster resource (V(CLUSTER) V(kafka-cluster)) to read the
    bindings and ALTER on it to change them, or to be one of the brokers' C(super.users). A refusal
    fails the task with a message naming the principal the module connected as and the permission it
    lacks.
options:
  acls:
    description:
      - The bindings, each a mapping with the keys below. A key outside them is refused, as is a
        value that is not valid for its key; each message names C(acls[i].<key>) and the value.
      - C(principal) (required), the principal, C(User:<name>) (the SASL user, or the name the
        brokers' C(ssl.principal.mapping.rules) give a client certificate); V(User:*) is every user.
      - C(host), the client address the binding applies to, V(*) (the default, any) or an IP address.
        Kafka matches the client's address, not a host name.
      - C(operation) (required), one of V(ALL), V(READ), V(WRITE), V(CREATE), V(DELETE), V(ALTER),
        V(DESCRIBE), V(CLUSTER_ACTION), V(DESCRIBE_CONFIGS), V(ALTER_CONFIGS), V(IDEMPOTENT_WRITE),
        V(CREATE_TOKENS), V(DESCRIBE_TOKENS). Case does not matter, and C(kafka-acls.sh)'s spelling
        (V(DescribeConfigs)) is taken too. It must be one the resource type has, as
        C(kafka-acls.sh) checks; for example V(READ) does not apply to V(CLUSTER).
      - C(permission), V(ALLOW) (the default) or V(DENY).
      - C(resource_type) (required), one of V(TOPIC), V(GROUP), V(CLUSTER), V(TRANSACTIONAL_ID),
        V(DELEGATION_TOKEN), V(USER).
      - C(resource_name) (required), the topic, group, transactional id, token id or user name; V(*)
        with V(LITERAL) is every resource of the type. A V(CLUSTER) resource is always
        V(kafka-cluster).
      - C(pattern_type), V(LITERAL) (the default, the name itself) or V(PREFIXED) (every resource
        whose name starts with C(resource_name)).
      - The same binding given twice counts once.
    type: list
    elements: dict
    required: true
  state:
    description:
      - V(present), the bindings exist; V(absent), they do not.
    type: str
    choices: [present, absent]
    default: present
  exclusive:
    description:
      - With O(state=present), also delete each principal's bindings on the resources O(acls) names
        for it that O(acls) does not list (see the description). Refused with O(state=absent).
    type: bool
    default: false
extends_documentation_fragment:
  - kafkaops.mirrormaker.kafka_client
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Describes the bindings and reports what a real run would create and delete, writing nothing.
  diff_mode:
    support: full
    details: One line per binding of the principals concerned, before and after, sorted.
  platform:
    platforms: posix
notes:
  - Without an authorizer the cluster answers C(SECURITY_DISABLED), and the task fails saying so.
  - Kafka's deny rules win over allow rules, and a resource without any binding is open to nobody but
    the super users unless the brokers set C(allow.everyone.if.no.acl.found=true).
seealso:
  - module: kafkaops.mirrormaker.kafka_reachable
  - name: Kafka authorization and ACLs
    description: Operations, resources and the StandardAuthorizer.
    link: https://kafka.apache.org/documentation/#security_authz
author:
  - kafkaops maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: MirrorMaker 2's principal on cluster A reads the mirrored topics and keeps its offsets
  kafkaops.mirrormaker.kafka_acl:
    bootstrap_servers: kafka-a1:9093,kafka-a2:9093
    client_properties:
      security.protocol: SASL_SSL
      sasl.mechanism: SCRAM-SHA-512
      sasl.plain.username: admin
      sasl.plain.password: "{{ vault_kafka_admin_password }}"
      ssl.cafile: /etc/kafka/ca.pem
    acls:
      - {principal: "User:mm2", operation: READ, resource_type: TOPIC, resource_name: orders, pattern_type: PREFIXED}
      - {principal: "User:mm2", operation: DESCRIBE, resource_type: TOPIC, resource_name: orders, pattern_type: PREFIXED}
      - {principal: "User:mm2", operation: DESCRIBE_CONFIGS, resource_type: TOPIC, resource_name: "*"}
      - {principal: "User:mm2", operation: DESCRIBE, resource_type: CLUSTER, resource_name: kafka-cluster}
  vars:
    ansible_python_interpreter: /opt/mm2-smoke/venv/bin/python

- name: Exactly these bindings for mm2 on those topics; its other bindings there are deleted
  kafkaops.mirrormaker.kafka_acl:
    bootstrap_servers: kafka-a1:9093
    client_properties: "{{ kafka_admin_client_properties }}"
    exclusive: true
    acls:
      - {principal: "User:mm2", operation: READ, resource_type: TOPIC, resource_name: orders, pattern_type: PREFIXED}
      - {principal: "User:mm2", operation: DESCRIBE, resource_type: TOPIC, resource_name: orders, pattern_type: PREFIXED}

- name: A retired application loses its group
  kafkaops.mirrormaker.kafka_acl:
    bootstrap_servers: kafka-a1:9093
    client_properties: "{{ kafka_admin_client_properties }}"
    state: absent
    acls:
      - {principal: "User:billing", operation: READ, resource_type: GROUP, resource_name: billing}
"""

RETURN = r"""
added:
  description: The bindings created, or that check mode would create, sorted.
  returned: success
  type: list
  elements: dict
  sample:
    - {principal: "User:mm2", host: "*", operation: READ, permission: ALLOW, resource_type: TOPIC,
       resource_name: orders, pattern_type: PREFIXED}
  contains:
    principal:
      description: The principal, C(User:<name>).
      type: str
      returned: always
    host:
      description: V(*) or an IP address.
      type: str
      returned: always
    operation:
      description: The operation, Kafka's upper-case name.
      type: str
      returned: always
    permission:
      description: V(ALLOW) or V(DENY).
      type: str
      returned: always
    resource_type:
      description: V(TOPIC), V(GROUP), V(CLUSTER), V(TRANSACTIONAL_ID), V(DELEGATION_TOKEN) or V(USER).
      type: str
      returned: always
    resource_name:
      description: The resource's name or prefix.
      type: str
      returned: always
    pattern_type:
      description: V(LITERAL) or V(PREFIXED).
      type: str
      returned: always
removed:
  description: The bindings deleted, or that check mode would delete, sorted; each as in RV(added).
  returned: success
  type: list
  elements: dict
  sample:
    - {principal: "User:mm2", host: "*", operation: WRITE, permission: ALLOW, resource_type: TOPIC,
       resource_name: orders, pattern_type: PREFIXED}
acls:
  description:
    - Every binding of the principals named in O(acls) once the run is done (in check mode, as it
      would be), on any resource, sorted; each as in RV(added).
  returned: success
  type: list
  elements: dict
  sample:
    - {principal: "User:mm2", host: "*", operation: READ, permission: ALLOW, resource_type: TOPIC,
       resource_name: orders, pattern_type: PREFIXED}
"""

import traceback

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import acls as kafka_acls
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import client as kafka_client
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.acls import AclCallFailed
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.client import Failed, error_text

KAFKA_IMPORT_ERROR = None
kafka_version = None  # bound without kafka-python too: main hands it to kafka_client.start
try:
    from kafka import __version__ as kafka_version
    from kafka import admin as kafka_admin
    from kafka import errors as kafka_errors
    from kafka.admin import KafkaAdminClient
except ImportError:
    KAFKA_IMPORT_ERROR = traceback.format_exc()

CLIENT_ID = "kafkaops-acl"


def input_errors(params, servers_errors, acl_errors, property_errors):
    errors = list(servers_errors) + list(acl_errors)
    if params["exclusive"] and params["state"] == "absent":
        errors.append("exclusive: only with state present (state absent deletes the bindings of acls and no other)")
    errors.extend(kafka_client.timeout_errors(params["timeout"]))
    return errors + list(property_errors)


def summary(add, remove, check_mode, shown):
    parts = []
    for count, verb in ((len(add), "create"), (len(remove), "delete")):
        if count:
            parts.append("%s %d" % ("would %s" % verb if check_mode else verb + "d", count))
    return "ACL bindings on the cluster at %s: %s" % (shown, ", ".join(parts) or "as asked, nothing to change")


def manage(admin, wanted, state, exclusive, check_mode, retry, types):
    """(existing, add, remove) once written (not in check mode).  Raises AclCallFailed; a failed
    delete after a create lists the created bindings in ``done`` too."""
    concerned = kafka_acls.principals(wanted)
    existing = kafka_acls.read(admin, concerned, types, retry)
    add, remove = kafka_acls.plan(wanted, existing, state, exclusive)
    if not check_mode:
        kafka_acls.create(admin, add, types, retry)
        try:
            kafka_acls.delete(admin, remove, types, retry)
        except AclCallFailed as exc:
            exc.created = add
            raise
    return existing, add, remove


def run(module, servers, kwargs, wanted, connection_errors):
    """The module's result; raises Failed with the message for fail_json (and whether anything was written)."""
    params = module.params
    shown = ",".join(servers)
    with kafka_client.Session(servers, kwargs, params["timeout"], connection_errors, CLIENT_ID,
                              kafka_errors.KafkaError) as session:
        admin = session.client(KafkaAdminClient)
        try:
            existing, add, remove = manage(admin, wanted, params["state"], params["exclusive"], module.check_mode,
                                           session.retry, kafka_admin)
        except AclCallFailed as exc:
            msg = kafka_acls.failure_message(exc, shown, kafka_client.caller(kwargs))
            created = getattr(exc, "created", [])
            if created:
                msg += "; created before the failure: %s" % "; ".join(kafka_acls.text(b) for b in created)
            failed = Failed(msg)
            failed.changed = bool(created or exc.done)
            raise failed
        except kafka_errors.KafkaError as exc:
            raise Failed("the ACLs of the cluster at %s could not be read or written: %s" % (shown, error_text(exc)))
    result_after = kafka_acls.after(existing, add, remove)
    result = dict(changed=bool(add or remove), added=kafka_acls.as_dicts(add), removed=kafka_acls.as_dicts(remove),
                  acls=kafka_acls.as_dicts(result_after), msg=summary(add, remove, module.check_mode, shown))
    if module._diff:
        result["diff"] = kafka_acls.diff(existing, result_after, kafka_acls.principals(wanted))
    return result


def main():
    argument_spec = kafka_client.argument_spec()
    argument_spec.update(
        acls=dict(type="list", elements="dict", required=True),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        exclusive=dict(type="bool", default=False),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    params = module.params
    wanted, acl_errors = kafka_acls.normalise(params["acls"])
    servers, kwargs, connection_errors = kafka_client.start(
        module, KAFKA_IMPORT_ERROR, kafka_version,
        lambda servers_errors, property_errors: input_errors(params, servers_errors, acl_errors, property_errors))
    try:
        result = run(module, servers, kwargs, wanted, connection_errors)
    except Failed as exc:
        module.fail_json(msg=str(exc), changed=getattr(exc, "changed", False))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
