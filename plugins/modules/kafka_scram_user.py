#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kafka_scram_user
short_description: Create, change or delete the SCRAM credentials of Kafka users on a running cluster
version_added: 0.1.0
description:
  - Makes the SCRAM credentials of O(users) present on, or absent from, one running Kafka cluster
    through the admin API (C(DescribeUserScramCredentials), C(AlterUserScramCredentials)), as
    C(kafka-configs.sh --alter --entity-type users --add-config 'SCRAM-SHA-512=[password=...]') does.
    Users the cluster must have from its first start are created at format time by the
    C(kafka_broker) role (C(kafka_broker_scram_users)); this module is for the users that come later.
  - A credential is one user and one mechanism; a user may have one of each mechanism.
  - It first describes the credentials the cluster has, then adds, sets again or deletes only what
    O(users) asks for. C(changed) is V(true) only when a credential was written.
  - The cluster never tells a password, only a credential's mechanism and iteration count. With
    O(update_password=on_create) an existing credential with the iterations asked for is left
    alone, whatever its password; one with other iterations is set again with the password given.
    With O(update_password=always) every present credential is set again on every run, so the task
    always reports C(changed). With O(update_password=when_refused) the module logs in as each such
    user, with its mechanism and the password given, over the same servers and transport as its own
    connection, and sets the password again only where the cluster refuses that login; so a
    password changed in the inventory is rolled out, and a re-run changes nothing.
  - kafka-python salts and hashes the password on the managed host (PBKDF2 with the iteration
    count); only the salted hash reaches the cluster. Passwords are never in the output, the diff or
    the host's log.
  - Check mode describes, and reports in RV(added), RV(updated), RV(removed), RV(credentials) and the
    diff exactly what a real run would do, without writing.
  - The caller needs DESCRIBE on the cluster resource (V(CLUSTER) V(kafka-cluster)) to read the
    credentials and ALTER on it to change them, or to be one of the brokers' C(super.users). A refusal
    fails the task with a message naming the principal the module connected as and the permission it
    lacks.
options:
  users:
    description:
      - The credentials, each a mapping with the keys below. Every item is checked before the
        cluster is asked; each fault is named C(users[i].<key>), one message per fault.
      - The same user and mechanism listed twice is refused; list a user twice with different
        mechanisms to give it both.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description:
          - The user name (the principal C(User:<name>)); required, not empty. Any string, a V(,)
            included (unlike C(kafka_broker_scram_users), which the format's command line limits).
        type: str
      password:
        description:
          - The password; required, not empty, with O(users[].state=present). Not needed with
            O(users[].state=absent).
        type: str
      mechanism:
        description:
          - V(SCRAM-SHA-256) or V(SCRAM-SHA-512). The brokers' C(sasl.enabled.mechanisms) must offer
            it for the user to log in with it.
        type: str
        default: SCRAM-SHA-512
      iterations:
        description:
          - The PBKDF2 iteration count, from 4096 to 16384 (Kafka's bounds).
        type: int
        default: 4096
      state:
        description:
          - V(present), the user has a credential of this mechanism; V(absent), it has none (any
            credential of its other mechanism stays).
        type: str
        default: present
  update_password:
    description:
      - V(on_create), set the password only when the credential is added, or set again for other
        iterations; V(always), set every present credential again on each run (always C(changed));
        V(when_refused), as V(on_create), and also set again every present credential whose login
        with the password given the cluster refuses.
      - V(when_refused) needs C(security.protocol) V(SASL_PLAINTEXT) or V(SASL_SSL) in
        O(client_properties), and the listener must offer each user's mechanism. A login is given
        up to 10 seconds (at most O(timeout)); a refused one takes that long, as kafka-python tries
        again until then. A login neither accepted nor refused (kafka-python saw the connection close
        before the broker's answer) is tried again until O(timeout) has passed; then (a mechanism
        the listener does not offer, no answer) the task fails naming the item, and nothing is written.
    type: str
    choices: [on_create, always, when_refused]
    default: on_create
extends_documentation_fragment:
  - kafkaops.mirrormaker.kafka_client
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Describes the credentials and reports what a real run would add, set again and delete, writing nothing.
  diff_mode:
    support: full
    details: >-
      One line per credential of the users concerned (user, mechanism, iterations), before and after, sorted;
      a credential the run writes is marked C((password set)). Never a password.
  platform:
    platforms: posix
notes:
  - A user with no credential left is gone as far as SCRAM is concerned, but its ACLs, quotas and other
    configs stay (see M(kafkaops.mirrormaker.kafka_acl)).
  - The brokers apply a change a moment after the controller commits it, so a login right after the
    task may still be refused, or accepted with the old password, for a short while.
seealso:
  - module: kafkaops.mirrormaker.kafka_acl
  - name: Kafka SASL/SCRAM
    description: SCRAM credentials, mechanisms and iterations.
    link: https://kafka.apache.org/documentation/#security_sasl_scram
author:
  - kafkaops maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: MirrorMaker 2's user on cluster A, added after the cluster's first start
  kafkaops.mirrormaker.kafka_scram_user:
    bootstrap_servers: kafka-a1:9093,kafka-a2:9093
    client_properties:
      security.protocol: SASL_SSL
      sasl.mechanism: SCRAM-SHA-512
      sasl.plain.username: admin
      sasl.plain.password: "{{ vault_kafka_admin_password }}"
      ssl.cafile: /etc/kafka/ca.pem
    users:
      - name: mm2
        password: "{{ vault_kafka_mm2_password }}"
  vars:
    ansible_python_interpreter: /opt/mm2-smoke/venv/bin/python

- name: Roll out a password changed in the inventory (set only where the login with it is refused)
  kafkaops.mirrormaker.kafka_scram_user:
    bootstrap_servers: kafka-a1:9093
    client_properties: "{{ kafka_admin_client_properties }}"
    update_password: when_refused
    users:
      - {name: billing, password: "{{ vault_billing_password }}"}

- name: Set a password again on every run and give the user both mechanisms
  kafkaops.mirrormaker.kafka_scram_user:
    bootstrap_servers: kafka-a1:9093
    client_properties: "{{ kafka_admin_client_properties }}"
    update_password: always
    users:
      - {name: billing, password: "{{ vault_billing_password }}", mechanism: SCRAM-SHA-512, iterations: 8192}
      - {name: billing, password: "{{ vault_billing_password }}", mechanism: SCRAM-SHA-256}

- name: A retired application can no longer log in with SCRAM-SHA-512
  kafkaops.mirrormaker.kafka_scram_user:
    bootstrap_servers: kafka-a1:9093
    client_properties: "{{ kafka_admin_client_properties }}"
    users:
      - {name: reports, state: absent}
"""

RETURN = r"""
added:
  description: The credentials added, or that check mode would add, sorted by user and mechanism.
  returned: success
  type: list
  elements: dict
  sample:
    - {name: mm2, mechanism: SCRAM-SHA-512, iterations: 4096}
  contains:
    name:
      description: The user name.
      type: str
      returned: always
    mechanism:
      description: V(SCRAM-SHA-256) or V(SCRAM-SHA-512).
      type: str
      returned: always
    iterations:
      description: The iteration count.
      type: int
      returned: always
updated:
  description:
    - The existing credentials set again (other iterations, O(update_password=always), or a login
      refused with O(update_password=when_refused)), or that
      check mode would set again; each as in RV(added), with C(before_iterations), the count it had.
  returned: success
  type: list
  elements: dict
  sample:
    - {name: billing, mechanism: SCRAM-SHA-512, iterations: 8192, before_iterations: 4096}
removed:
  description: The credentials deleted, or that check mode would delete; each as in RV(added).
  returned: success
  type: list
  elements: dict
  sample:
    - {name: reports, mechanism: SCRAM-SHA-512, iterations: 4096}
credentials:
  description:
    - Every SCRAM credential of the users named in O(users) once the run is done (in check mode, as
      it would be), sorted; each as in RV(added). No password.
  returned: success
  type: list
  elements: dict
  sample:
    - {name: billing, mechanism: SCRAM-SHA-256, iterations: 4096}
    - {name: billing, mechanism: SCRAM-SHA-512, iterations: 8192}
"""

import traceback

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import client as kafka_client
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import scram_admin as scram
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

CLIENT_ID = "kafkaops-scram-user"
LOGIN_CLIENT_ID = CLIENT_ID + "-login"
# kafka-python retries a refused login until its bootstrap deadline: this bounds each check
LOGIN_SECONDS = 10


def input_errors(params, servers_errors, user_errors, property_errors):
    protocol = (params["client_properties"] or {}).get("security.protocol")
    return (list(servers_errors) + list(user_errors) + kafka_client.timeout_errors(params["timeout"])
            + list(property_errors) + scram.when_refused_errors(params["update_password"], protocol))


def try_login(session, wanted):
    """None when the cluster accepts the login of ``wanted``, else what kafka-python logged."""
    seconds = min(session.timeout, LOGIN_SECONDS)
    del session.connection_errors.reasons[:]
    try:
        client = KafkaAdminClient(bootstrap_servers=session.servers, client_id=LOGIN_CLIENT_ID,
                                  request_timeout_ms=seconds * 1000, bootstrap_timeout_ms=seconds * 1000,
                                  **scram.login_kwargs(session.kwargs, wanted))
    except kafka_errors.KafkaError:
        return list(session.connection_errors.reasons)
    client.close()
    return None


def run(module, servers, kwargs, wanted, connection_errors):
    """The module's result; raises Failed with the message for fail_json (and whether anything was written)."""
    params = module.params
    shown = ",".join(servers)
    users = scram.concerned(wanted)
    with kafka_client.Session(servers, kwargs, params["timeout"], connection_errors, CLIENT_ID,
                              kafka_errors.KafkaError) as session:
        admin = session.client(KafkaAdminClient)
        try:
            existing = scram.read(admin, users, session.retry)
            refused = []
            if params["update_password"] == "when_refused":
                refused = scram.refused(wanted, scram.unproven(wanted, existing), lambda w: try_login(session, w),
                                        session.retry)
            changes = scram.plan(wanted, existing, params["update_password"], refused)
            if not module.check_mode:
                scram.write(admin, changes, wanted, kafka_admin, session.retry)
        except scram.LoginUnanswered as exc:
            raise Failed(scram.unanswered_message(exc, shown))
        except scram.ScramCallFailed as exc:
            failed = Failed(scram.failure_message(exc, shown, kafka_client.caller(kwargs)))
            failed.changed = bool(exc.done)
            raise failed
        except kafka_errors.KafkaError as exc:
            raise Failed("the SCRAM credentials of the cluster at %s could not be read or written: %s"
                         % (shown, error_text(exc)))
    result = dict(changed=bool(changes), added=scram.changed_dicts(changes, "add"),
                  updated=scram.changed_dicts(changes, "update"), removed=scram.changed_dicts(changes, "remove"),
                  credentials=scram.as_dicts(scram.after(existing, changes)),
                  msg=scram.summary(changes, module.check_mode, shown))
    if module._diff:
        result["diff"] = scram.diff(existing, changes, users)
    return result


def main():
    argument_spec = kafka_client.argument_spec()
    argument_spec.update(
        # no choices or required here: each fault is reported as users[i].<key> by kafka_scram's rules
        users=dict(type="list", elements="dict", required=True, options=dict(
            name=dict(type="str"),
            password=dict(type="str", no_log=True),
            mechanism=dict(type="str", default="SCRAM-SHA-512"),
            iterations=dict(type="int", default=4096),
            state=dict(type="str", default="present"),
        )),
        update_password=dict(type="str", default="on_create", choices=list(scram.UPDATE_PASSWORD),
                             # a policy, not a secret: without this Ansible warns on the name
                             no_log=False),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    params = module.params
    wanted, user_errors = scram.normalise(params["users"])
    # a password equal to a plain client property must stay masked
    passwords = [str(u["password"]) for u in params["users"] or [] if isinstance(u, dict) and u.get("password")]
    servers, kwargs, connection_errors = kafka_client.start(
        module, KAFKA_IMPORT_ERROR, kafka_version,
        lambda servers_errors, property_errors: input_errors(params, servers_errors, user_errors, property_errors),
        secrets=passwords)
    try:
        result = run(module, servers, kwargs, wanted, connection_errors)
    except Failed as exc:
        module.fail_json(msg=str(exc), changed=getattr(exc, "changed", False))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
