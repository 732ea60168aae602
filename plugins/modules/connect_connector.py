#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: connect_connector
short_description: Create, update, pause, stop, resume, restart or delete one Kafka Connect connector over its REST API
version_added: 0.1.0
description:
  - Manages the one connector O(name) of a distributed Kafka Connect cluster through the REST API of
    one of its workers (O(url)), for example the MirrorMaker 2 connectors
    C(MirrorSourceConnector) and C(MirrorCheckpointConnector) of a flow.
  - Touches no other connector. It never lists connectors to delete those it was not asked about.
  - >-
    With O(config), the connector is created, or its whole configuration replaced, with
    C(PUT /connectors/<name>/config), and only when the configuration differs from the live one.
    The values are compared as Connect stores them, as strings. Booleans count as V(true)/V(false),
    numbers as their text, lists as their items joined with commas, null as an empty string. Keys
    of the live configuration that are missing from O(config) count as a difference, since the PUT
    removes them.
  - >-
    The C(name) key that Connect adds to every configuration is ignored unless O(config) gives it.
    When O(config) leaves it out it is not sent either.
  - >-
    O(state) then brings the connector into a target state, read from
    C(GET /connectors/<name>/status). V(paused) pauses it, V(stopped) stops it, and V(running)
    resumes it when it is paused or stopped. Each is done only when the connector is not in that
    state already. V(present) leaves the target state alone. V(restarted) restarts the connector
    and all its tasks. V(absent) deletes the connector.
  - >-
    With O(wait), the module waits until the connector and each of its tasks are in the target
    state, and fails as soon as one of them is C(FAILED). The failure message names the connector
    or task, its worker and the first 40 lines of the Java stack trace Connect reports.
  - Secret values of O(config) and of the live configuration are never shown. The diff and the
    returned configuration show them as V(********), and every secret value is scrubbed from the
    whole result, the module arguments shown with C(-vvv) included. Which values are secret is
    decided by the collection's one rule (C(plugins/module_utils/common/secrets.py), also behind the
    P(kafkaops.mirrormaker.kafka_has_secrets#filter) filter).
  - A whole value that is a config provider reference, such as
    C(${file:/etc/kafka-connect/secrets/A-to-B.properties:source.cluster.ssl.truststore.password}),
    is not a secret. It says where the secret is, and is shown as it is.
options:
  name:
    description:
      - The connector's name, a path segment of the REST API (sent URL-encoded).
      - Connect's server refuses C(/), C(\) and C(%) in a path even when encoded, so such names are
        refused before any request.
    type: str
    required: true
  config:
    description:
      - The connector's whole configuration, including C(connector.class) and C(tasks.max). Values
        are sent as strings (see the description for how they are rendered). Nested mappings are
        refused.
      - Required to create the connector. Without it, an existing connector's configuration is left
        as it is, and the other states act on the connector as it stands.
      - A C(name) key, if given, must equal O(name). Connect refuses a configuration that names
        another connector.
      - Ignored with O(state=absent).
    type: dict
  state:
    description:
      - V(present), the connector exists with O(config). Its target state (running, paused,
        stopped) is left as it is.
      - V(running), as V(present), and resumed when it is paused or stopped.
      - V(paused), as V(present), and paused when it is not paused (C(PUT .../pause)). Its tasks
        stay assigned but do not process records.
      - V(stopped), as V(present), and stopped when it is not stopped (C(PUT .../stop), Kafka 3.5 or
        later, KIP-875). The connector and its tasks are shut down and its task configurations
        removed.
      - V(restarted), as V(present), then the connector and all its tasks are restarted
        (C(POST .../restart?includeTasks=true&onlyFailed=false)). This always reports a change. A
        connector created in the same task has just started and is not restarted again.
      - V(absent), the connector is deleted (C(DELETE /connectors/<name>)) when it exists.
    type: str
    choices: [present, running, paused, stopped, restarted, absent]
    default: present
  offsets:
    description:
      - >-
        The source offsets the connector starts from, as KIP-875's C(GET /connectors/<name>/offsets) gives
        them. Each entry is a C(partition) mapping and its C(offset) mapping, or V(null) for no offset (the
        connector then starts that partition as it starts a new one). For a C(MirrorSourceConnector)
        the partition is C({cluster, topic, partition}) and the offset C({offset}), the last source offset
        copied; it resumes at the next one.
      - >-
        Only the partitions listed are compared and set, with C(PATCH /connectors/<name>/offsets), and
        only when a listed partition's committed offset differs.
      - >-
        Offsets are set only while no task runs. A connector this task creates is created stopped
        (C(POST /connectors) with C(initial_state), Kafka 3.7 or later) and its offsets set before it
        runs; an existing connector only when it is stopped (O(state=stopped) in an earlier task).
        A running or paused connector's offsets are left alone, since they move as it copies and a
        re-run must not rewind it.
      - Needs O(state=running), V(paused) or V(stopped), the state the connector is left in afterwards.
    type: list
    elements: dict
  wait:
    description:
      - Wait until the connector and every task are in the target state. That is C(PAUSED) for
        V(paused) and C(STOPPED), with no task configs and no task listed, for V(stopped). It is
        C(RUNNING) for V(running).
        For V(present) and V(restarted) it is also C(RUNNING), unless the connector rests
        C(PAUSED) or C(STOPPED), the target state those leave alone. For V(absent), wait until
        Connect no longer knows the connector.
      - A connector with no tasks is accepted. A C(MirrorSourceConnector) has none until a topic
        matches its C(topics).
      - Connect's status topic can keep listing a task of a stopped connector after the task has
        stopped (a late status write, cleared at the next rebalance). Once the connector is
        C(STOPPED) with no task configs, tasks still listed after 10 seconds (Connect's default
        C(task.shutdown.graceful.timeout.ms) and a settle) are taken as stale, with a warning.
      - After a change, the states must be seen at least 5 seconds after the last request that
        changed something. Connect applies a change asynchronously, so a status read at once can
        still show the states from before the change, and a task may fail a moment after starting.
      - A connector or task in C(FAILED) fails the task at once, with the trace. Without a change in
        this task that also holds for a connector that already failed before. O(state=restarted)
        restarts it.
    type: bool
    default: true
  wait_timeout:
    description:
      - Seconds O(wait) waits at most. When they pass, the task fails, giving the states that were
        seen.
    type: int
    default: 120
extends_documentation_fragment:
  - kafkaops.mirrormaker.connect_rest
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: >-
      Reads the connector's configuration and status, and reports the change and the diff that a
      real run would make. No request that changes anything is sent, and nothing is waited for.
  diff_mode:
    support: full
    details: >-
      Before is the live configuration and after the configuration given. Secret values show as
      V(********), and a secret whose value changes as V(******** (changed)) on the after side.
  platform:
    platforms: posix
notes:
  - >-
    The requests are sent from the managed host. Run the task on a host that reaches the worker,
    often the worker itself, or C(delegate_to: localhost).
  - >-
    Connect answers 409 while its group rebalances. Such a request is sent again, up to 6 times
    2 seconds apart, and the retries are returned in RV(conflicts).
  - >-
    A connector created with O(state=paused) or O(state=stopped), or with O(offsets), is created in
    that state (C(POST /connectors) with C(initial_state), KIP-980, Kafka 3.7 or later): it never
    runs before it is resumed. A connector created paused has no tasks until it is resumed.
  - >-
    A configuration that Connect's validation refuses (an unknown class, a missing required key)
    fails the task with Connect's list of errors. Settings that only fail when the connector or a
    task starts, such as an invalid C(consumer.*) setting of a C(MirrorSourceConnector), pass
    validation and show up as C(FAILED) states, which O(wait) reports.
seealso:
  - name: Kafka Connect REST API
    description: The requests this module sends.
    link: https://kafka.apache.org/documentation/#connect_rest
  - name: KIP-875, first-class offsets support in Kafka Connect
    description: The C(STOPPED) state, C(PUT /connectors/<name>/stop) and the offsets requests.
    link: https://cwiki.apache.org/confluence/display/KAFKA/KIP-875%3A+First-class+offsets+support+in+Kafka+Connect
  - module: kafkaops.mirrormaker.kafka_properties
    description: Writes the FileConfigProvider files that keep the secrets out of the connector config.
author:
  - kafkaops maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: MirrorMaker 2 source connector of flow A->B, on the Connect cluster next to B
  kafkaops.mirrormaker.connect_connector:
    url: http://connect-b1.example.com:8083
    name: A-to-B-MirrorSourceConnector
    config:
      connector.class: org.apache.kafka.connect.mirror.MirrorSourceConnector
      source.cluster.alias: A
      target.cluster.alias: B
      source.cluster.bootstrap.servers: kafka-a1:9092,kafka-a2:9092
      target.cluster.bootstrap.servers: kafka-b1:9092,kafka-b2:9092
      # read by the worker's FileConfigProvider: the password itself never reaches the REST API
      source.cluster.ssl.truststore.password: "${file:/etc/kafka-connect/secrets/A-to-B.properties:truststore.password}"
      topics: [orders, payments.*]  # sent as "orders,payments.*"
      tasks.max: 4
      sync.topic.acls.enabled: false
  delegate_to: localhost

- name: Pause it for maintenance, over HTTPS with basic authentication
  kafkaops.mirrormaker.connect_connector:
    url: https://connect-b1.example.com:8443
    url_username: ops
    url_password: "{{ vault_connect_password }}"
    ca_path: /etc/pki/kafka/ca.pem
    name: A-to-B-MirrorSourceConnector
    state: paused

- name: Resume it, waiting up to 5 minutes for it and its tasks to run
  kafkaops.mirrormaker.connect_connector:
    name: A-to-B-MirrorSourceConnector
    state: running
    wait_timeout: 300

- name: Restart it and all its tasks (after a failure was fixed outside its config)
  kafkaops.mirrormaker.connect_connector:
    name: A-to-B-MirrorSourceConnector
    state: restarted

- name: Every connector of a flow, from the collection's flow model
  kafkaops.mirrormaker.connect_connector:
    name: "{{ item.key }}"
    config: "{{ item.value }}"
  loop: "{{ __mm2_connectors | dict2items }}"
  loop_control:
    label: "{{ item.key }}"
  register: __connectors

- name: >-
    The reverse flow B->A of a failback, created stopped and started after the last record its source
    held at the failover (offset 1041 of orders-0 on B)
  kafkaops.mirrormaker.connect_connector:
    name: B-to-A-MirrorSourceConnector
    config: "{{ __reverse_connectors['B-to-A-MirrorSourceConnector'] }}"
    offsets:
      - partition: {cluster: B, topic: orders, partition: 0}
        offset: {offset: 1040}
    state: running

- name: Retire the checkpoint connector
  kafkaops.mirrormaker.connect_connector:
    name: A-to-B-MirrorCheckpointConnector
    state: absent
"""

RETURN = r"""
connector:
  description: The connector as it is after the task (in check mode, as it was before).
  returned: success
  type: dict
  contains:
    name:
      description: O(name).
      type: str
      returned: always
    exists:
      description: Whether Connect has the connector.
      type: bool
      returned: always
    config:
      description:
        - The live configuration, C(name) included, secret values as V(********). Empty when the
          connector does not exist.
      type: dict
      returned: always
  sample:
    name: A-to-B-MirrorSourceConnector
    exists: true
    config:
      name: A-to-B-MirrorSourceConnector
      connector.class: org.apache.kafka.connect.mirror.MirrorSourceConnector
      source.cluster.sasl.jaas.config: "********"
      tasks.max: "4"
status:
  description:
    - C(GET /connectors/<name>/status) as last read, traces included. None when Connect has no
      status for the connector (it does not exist, or it was created a moment ago and O(wait=false)).
    - Also returned when the task fails on a C(FAILED) state or a timeout.
  returned: always
  type: dict
  sample:
    name: A-to-B-MirrorSourceConnector
    connector: {state: RUNNING, worker_id: "10.0.0.7:8083"}
    tasks: [{id: 0, state: RUNNING, worker_id: "10.0.0.8:8083"}]
    type: source
actions:
  description:
    - What was done (in check mode, what would be done), in order. Each entry is one of
      V(create), V(update config), V(alter offsets), V(pause), V(stop), V(resume), V(restart),
      V(delete).
  returned: always
  type: list
  elements: str
  sample: [update config, pause]
offsets:
  description:
    - The connector's committed offsets as C(GET /connectors/<name>/offsets) gives them after the task
      (in check mode, as they were), sorted. Returned with O(offsets), or when the connector is
      stopped after the task (a failover reads where it stopped).
  returned: with O(offsets), or when the connector is stopped
  type: list
  elements: dict
  sample:
    - partition: {cluster: A, topic: orders, partition: 0}
      offset: {offset: 41}
conflicts:
  description: The requests Connect answered with 409 (a rebalance) and that were sent again, with its message.
  returned: always
  type: list
  elements: str
  sample: ["PUT /connectors/A-to-B-MirrorSourceConnector/config: Cannot complete request momentarily due to stale configuration"]
diff:
  description:
    - With C(--diff), the masked configuration before and after; with O(offsets), a list of that and,
      when they are set, the listed partitions' offsets before and after.
  returned: when diff mode is on
  type: raw
  sample:
    before: {tasks.max: "1", source.cluster.ssl.truststore.password: "********"}
    after: {tasks.max: "2", source.cluster.ssl.truststore.password: "******** (changed)"}
"""

import json
import time

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.connect import rest as connect_rest
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import secrets
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import render_value

STATES = ("present", "running", "paused", "stopped", "restarted", "absent")
FAILED = "FAILED"
TRACE_LINES = 40
# Connect applies a change asynchronously: a status read right after the request may still show
# the states from before it, and a task with a bad setting fails a moment after it starts.
SETTLE_SECONDS = 5.0
POLL_SECONDS = 0.5
# How long a stopped connector's tasks may still be listed: a worker gives each revoked task
# task.shutdown.graceful.timeout.ms to stop (Connect's default, 5 s; the connect role keeps it),
# and a settle covers the status write that reports it.
STOP_DRAIN_SECONDS = 5.0 + SETTLE_SECONDS
CHANGED_MARK = secrets.MASK + " (changed)"


# --------------------------------------------------------------------------- configuration


def render_config(config):
    """(config as Connect stores it: str -> str, errors naming config.<key>)."""
    rendered, errors = {}, []
    for key, value in (config or {}).items():
        try:
            rendered[render_value(key)] = render_value(value)
        except TypeError as exc:
            errors.append("config.%s: %s (Connect takes a string per key)" % (key, to_native(exc)))
    return rendered, errors


def comparable(live, desired):
    """The live config as it compares with desired: without the ``name`` Connect adds, unless desired gives it."""
    if live is None:
        return None
    if desired is not None and "name" in desired:
        return dict(live)
    return dict((k, v) for k, v in live.items() if k != "name")


def changed_keys(live_view, desired):
    """Sorted keys added, removed or changed by replacing live_view with desired."""
    live_view = live_view or {}
    return sorted(k for k in set(live_view) | set(desired) if live_view.get(k) != desired.get(k))


def masked(config):
    """(copy with secret values as MASK, the raw secret values); provider references stay as they are."""
    if not config:
        return {}, []
    plain = dict((k, v) for k, v in config.items() if not secrets.is_provider_reference(v))
    shown = secrets.mask(plain)
    return dict((k, shown.get(k, v)) for k, v in config.items()), secrets.secret_values(plain)


def config_diff(before, after):
    """{before, after} masked; a secret whose value changes shows as '******** (changed)' after."""
    shown_before, _before_secrets = masked(before)
    shown_after, _after_secrets = masked(after)
    for key, value in shown_after.items():
        if value == secrets.MASK and shown_before.get(key) == secrets.MASK and before[key] != after[key]:
            shown_after[key] = CHANGED_MARK
    return dict(before=shown_before, after=shown_after)


# ------------------------------------------------------------------------------ offsets


def _offset_key(partition):
    return json.dumps(partition, sort_keys=True)


def sorted_offsets(entries):
    """Offsets entries sorted by partition (Connect lists them in no fixed order)."""
    return sorted(entries or [], key=lambda e: _offset_key(e.get("partition")))


def offsets_differ(live, desired):
    """Whether a partition of ``desired`` has another committed offset in ``live`` (a missing
    partition reads as no offset, None)."""
    committed = dict((_offset_key(e.get("partition")), e.get("offset")) for e in live or [])
    return any(committed.get(_offset_key(e["partition"])) != e["offset"] for e in desired)


def offsets_diff(name, live, desired):
    """The listed partitions' offsets before and after, as a diff entry."""
    keys = set(_offset_key(e["partition"]) for e in desired)
    before = [e for e in sorted_offsets(live) if _offset_key(e.get("partition")) in keys]
    return dict(before_header="%s offsets" % name, after_header="%s offsets" % name,
                before=json.dumps(before, indent=2, sort_keys=True) + "\n",
                after=json.dumps(sorted_offsets(desired), indent=2, sort_keys=True) + "\n")


def _either(words):
    """``a, b or c``."""
    return " or ".join(filter(None, (", ".join(words[:-1]), words[-1])))


def offsets_errors(offsets, state):
    """Messages naming offsets[i] at fault."""
    if offsets is None:
        return []
    errors = []
    if state not in connect_rest.CONNECTOR_STATES:
        errors.append("offsets: needs state %s, the state the connector is left in once its offsets are set "
                      "(state is %s)" % (_either(connect_rest.CONNECTOR_STATES), state))
    for i, entry in enumerate(offsets):
        if set(entry) != {"partition", "offset"}:
            errors.append("offsets[%d]: needs exactly the keys partition and offset (has %s)"
                          % (i, ", ".join(sorted(entry)) or "none"))
            continue
        if not isinstance(entry["partition"], dict) or not entry["partition"]:
            errors.append("offsets[%d].partition: must be a non-empty mapping (the source partition)" % i)
        if entry["offset"] is not None and not isinstance(entry["offset"], dict):
            errors.append("offsets[%d].offset: must be a mapping (the source offset) or null (no offset)" % i)
    return errors


# ------------------------------------------------------------------------------- states


def connector_state(status):
    return ((status or {}).get("connector") or {}).get("state")


def initial_state(state, with_offsets):
    """The state a new connector is created in: STOPPED or PAUSED when it must not run first (its
    offsets set before it runs, or a stopped or paused connector asked for), else None (running)."""
    if with_offsets or state == "stopped":
        return "STOPPED"
    if state == "paused":
        return "PAUSED"
    return None


def state_action(state, live_state, created):
    """The request that brings the connector into ``state``: 'pause', 'stop', 'resume', 'restart' or None.

    live_state: the connector's state in its status (None when Connect has none yet).
    created: the connector is created running by this task (one asked paused or stopped is created in
    that state, see initial_state, and arrives here with that live_state).
    """
    if state == "paused" and live_state != "PAUSED":
        return "pause"
    if state == "stopped" and live_state != "STOPPED":
        return "stop"
    if state == "running" and not created and live_state in ("PAUSED", "STOPPED"):
        return "resume"
    if state == "restarted" and not created:
        return "restart"
    return None


def target_state(state, status):
    """The state the connector and its tasks must reach for ``state``."""
    fixed = {"paused": "PAUSED", "stopped": "STOPPED", "running": "RUNNING"}
    if state in fixed:
        return fixed[state]
    # present and restarted leave the target state alone: a connector paused or stopped on
    # purpose is not waited into RUNNING.
    current = connector_state(status)
    return current if current in ("PAUSED", "STOPPED") else "RUNNING"


def _entities(status):
    """[(label, entry)] of the connector and its tasks."""
    entries = [("connector", (status or {}).get("connector") or {})]
    for task in (status or {}).get("tasks") or []:
        entries.append(("task %s" % task.get("id"), task))
    return entries


def summary(status):
    """``connector RUNNING, task 0 FAILED`` (or ``no status``)."""
    if status is None:
        return "no status"
    parts = ["%s %s" % (label, entry.get("state", "?")) for label, entry in _entities(status)]
    if not status.get("tasks"):
        parts.append("no tasks")
    return ", ".join(parts)


def assess(status, target, task_ids=None, drained=False):
    """'done', 'waiting', 'failed' or, for STOPPED only, 'stale' for a status and the target state.

    task_ids: for STOPPED, the ids of the connector's task configs (None when not read).
    drained: for STOPPED, STOP_DRAIN_SECONDS have passed since the connector read STOPPED with no
    task configs.
    """
    if status is None:
        return "waiting"
    if any(entry.get("state") == FAILED for _label, entry in _entities(status)):
        return "failed"
    tasks = status.get("tasks") or []
    if connector_state(status) != target:
        return "waiting"
    if target == "STOPPED":
        # PUT /stop empties the task configs: from then on no worker starts a task of the
        # connector, and a task still listed is one being stopped.
        if task_ids is None or task_ids:
            return "waiting"
        if not tasks:
            return "done"
        # Connect's status topic can keep the entry of a task whose config is gone: the leader
        # clears those when a rebalance completes, and a status write read after that (seen under
        # load: a task's RUNNING, after it had stopped) stays listed until the next rebalance.
        return "stale" if drained else "waiting"
    return "done" if all(t.get("state") == target for t in tasks) else "waiting"


def stale_message(name, status):
    """The warning for a stopped connector whose status still lists tasks."""
    return ("connector %r is STOPPED and has no task configs, but Connect's status still lists %s %s after "
            "%ds: a stale entry of its status topic, cleared at the worker group's next rebalance"
            % (name, "tasks" if len(status.get("tasks") or []) > 1 else "task",
               ", ".join(str(t.get("id")) for t in status.get("tasks") or []), STOP_DRAIN_SECONDS))


def failure_message(name, status):
    """Which of connector ``name`` and its tasks FAILED, on which worker, with the first lines of the trace."""
    lines = []
    for label, entry in _entities(status):
        if entry.get("state") != FAILED:
            continue
        lines.append("connector %r: %s FAILED on worker %s" % (name, label, entry.get("worker_id", "?")))
        trace = (entry.get("trace") or "").splitlines()
        if trace:
            lines.extend(trace[:TRACE_LINES])
            if len(trace) > TRACE_LINES:
                lines.append("... (%d more lines in the returned status)" % (len(trace) - TRACE_LINES))
        else:
            lines.append("(Connect gave no trace)")
    return "\n".join(lines)


def wait_for(client, name, state, timeout, last_write=None, clock=time.monotonic, sleep=time.sleep):
    """Poll the status until the target state is reached; returns (verdict, status, states seen).

    verdict: 'done', 'stale' (STOPPED, with stale task entries: see assess), 'failed' or 'timeout'.
    Without a write in this task (last_write None) the first status counts; after one, only a
    status read SETTLE_SECONDS after it does.
    """
    start = clock()
    deadline = start + timeout
    settled = start if last_write is None else last_write + SETTLE_SECONDS
    seen = []
    stopped_since = None
    while True:
        now = clock()
        status = client.get_status(name)
        shown = summary(status)
        if not seen or seen[-1] != shown:
            seen.append(shown)
        target = target_state(state, status)
        task_ids = None
        if target == "STOPPED" and connector_state(status) == "STOPPED":
            task_ids = client.task_ids(name)
        if task_ids != []:
            stopped_since = None
        elif stopped_since is None:
            stopped_since = now
        drained = stopped_since is not None and now - stopped_since >= STOP_DRAIN_SECONDS
        verdict = assess(status, target, task_ids, drained)
        if verdict != "waiting" and now >= settled:
            return verdict, status, seen
        if now >= deadline:
            return "timeout", status, seen
        sleep(min(POLL_SECONDS, max(deadline - now, 0.01)))


def wait_gone(client, name, timeout, clock=time.monotonic, sleep=time.sleep):
    """Until Connect has neither config nor status for the connector; returns what is left ('' when gone)."""
    deadline = clock() + timeout
    while True:
        left = [what for what, found in (("config", client.get_config(name)), ("status", client.get_status(name)))
                if found is not None]
        if not left or clock() >= deadline:
            return " and ".join(left)
        sleep(POLL_SECONDS)


# ------------------------------------------------------------------------------- errors


def check_params(params):
    """Messages naming the parameter and value at fault; empty when all is well."""
    errors = connect_rest.check_connection_params(params)
    fault = connect_rest.name_fault(params["name"])
    if fault:
        errors.append(fault)
    config = params["config"]
    if config is not None and params["state"] != "absent":
        if "name" in config and render_value(config["name"]) != params["name"]:
            errors.append("config.name: %r differs from name %r; Connect refuses a config that names another "
                          "connector (leave it out: Connect adds it)" % (config["name"], params["name"]))
        _rendered, render_errors = render_config(config)
        errors.extend(render_errors)
    errors.extend(offsets_errors(params["offsets"], params["state"]))
    if params["wait_timeout"] < 1:
        errors.append("wait_timeout: %d must be at least 1 (seconds)" % params["wait_timeout"])
    return errors


def http_error_message(exc, params):
    """The message for a ConnectHTTPError, naming the parameter a user would change."""
    if exc.status in (401, 403):
        return ("url_username/url_password: Kafka Connect at %s refused %s %s with HTTP %d: %s"
                % (exc.url, exc.method, exc.path, exc.status, exc.message))
    if exc.method == "PUT" and exc.path.endswith("/config") and exc.status == 400:
        return "config: Kafka Connect at %s refused the configuration of connector %r (HTTP 400): %s" % (
            exc.url, params["name"], exc.message)
    if exc.path.endswith("/stop") and exc.status in (404, 405):
        return ("state: stopped needs Kafka Connect 3.5 or later (KIP-875, PUT /connectors/<name>/stop); %s" % exc)
    if exc.status == connect_rest.CONFLICT:
        return "%s (still 409, a rebalance, after every retry)" % exc
    return str(exc)


def unreachable_message(exc):
    message = "url: %s" % exc
    if "CERTIFICATE_VERIFY_FAILED" in exc.reason or "certificate verify failed" in exc.reason:
        message += " (give ca_path the CA that signed the worker's certificate)"
    return message


# --------------------------------------------------------------------------------- main


class Run(object):
    """One task's decisions and requests, over a ConnectClient."""

    def __init__(self, module, client):
        self.module = module
        self.client = client
        self.params = module.params
        self.name = self.params["name"]
        self.actions = []
        self.last_write = None

    def hide(self, config):
        """Scrub config's secret values from every output of the module; returns it masked."""
        shown, raw = masked(config)
        self.module.no_log_values.update(raw)
        return shown

    def write(self, action, request, *args):
        self.actions.append(action)
        if not self.module.check_mode:
            request(self.name, *args)
            self.last_write = time.monotonic()

    def result(self, live, status, diff, offsets=None):
        result = dict(changed=bool(self.actions), actions=self.actions, status=status,
                      conflicts=["%s %s: %s" % c for c in self.client.conflicts],
                      connector=dict(name=self.name, exists=live is not None, config=self.hide(live or {})))
        if offsets is not None:
            result["offsets"] = sorted_offsets(offsets)
        if self.module._diff:
            result["diff"] = diff
        return result

    def set_offsets(self, created, live_state, diff):
        """Set the listed offsets of a connector just created stopped, or of a stopped one, when they
        differ (a running or paused connector's are left alone)."""
        desired = self.params["offsets"]
        if created or live_state == "STOPPED":
            live_offsets = [] if created else self.client.get_offsets(self.name)
            diff.append(offsets_diff(self.name, live_offsets, desired))
            if offsets_differ(live_offsets, desired):
                self.write("alter offsets", self.client.alter_offsets, desired)

    def absent(self, live):
        diff = config_diff(comparable(live, None) or {}, {})
        status = None
        if live is not None:
            status = self.client.get_status(self.name)
            self.write("delete", self.client.delete)
        if self.last_write is not None and self.params["wait"]:
            left = wait_gone(self.client, self.name, self.params["wait_timeout"])
            if left:
                self.module.fail_json(msg="connector %r was deleted but Connect still has its %s after %ds"
                                      % (self.name, left, self.params["wait_timeout"]), **self.result(None, None, diff))
        if self.last_write is not None:
            live, status = None, None
        self.module.exit_json(**self.result(live, status, diff))

    def present(self, live):
        state = self.params["state"]
        desired = None
        if self.params["config"] is not None:
            desired, _errors = render_config(self.params["config"])
            self.hide(desired)
        if live is None and desired is None:
            self.module.fail_json(msg="config: connector %r does not exist on %s; its config is needed to create it"
                                  % (self.name, self.client.url), **self.result(None, None, None))
        live_view = comparable(live, desired)
        after = desired if desired is not None else live_view
        diff = config_diff(live_view or {}, after)
        created = live is None
        status = None if created else self.client.get_status(self.name)
        live_state = connector_state(status)
        with_offsets = self.params["offsets"] is not None
        if with_offsets:
            diff = [diff]
        initial = initial_state(state, with_offsets) if created and desired is not None else None
        if initial is not None:
            self.write("create", self.client.create_in, desired, initial)
            live_state, created = initial, False
        elif desired is not None and (created or changed_keys(live_view, desired)):
            self.write("create" if created else "update config", self.client.put_config, desired)
        if with_offsets:
            self.set_offsets(live is None, live_state, diff)
        action = state_action(state, live_state, created)
        if action is not None:
            self.write(action, getattr(self.client, action))
        if self.module.check_mode:
            self.module.exit_json(**self.result(live, status, diff, self.offsets_after(live, status, True)))

        if self.params["wait"]:
            verdict, status, seen = wait_for(self.client, self.name, state, self.params["wait_timeout"], self.last_write)
            if verdict == "failed":
                self.module.fail_json(msg=failure_message(self.name, status),
                                      **self.result(self.client.get_config(self.name), status, diff))
            if verdict == "timeout":
                self.module.fail_json(msg="connector %r did not reach %s within %ds; states seen: %s"
                                      % (self.name, target_state(state, status), self.params["wait_timeout"],
                                         " -> ".join(seen)),
                                      **self.result(self.client.get_config(self.name), status, diff))
            if verdict == "stale":
                self.module.warn(stale_message(self.name, status))
        elif self.last_write is not None or status is None:
            status = self.client.get_status(self.name)
        live = self.client.get_config(self.name) if self.last_write is not None else live
        self.module.exit_json(**self.result(live, status, diff, self.offsets_after(live, status)))

    def offsets_after(self, live, status, before=False):
        """The committed offsets to return: with the offsets option, or for a connector left stopped."""
        if live is None and before:
            return [] if self.params["offsets"] is not None else None
        if self.params["offsets"] is not None or connector_state(status) == "STOPPED":
            return self.client.get_offsets(self.name)
        return None


def main():
    argument_spec = connect_rest.argument_spec()
    argument_spec.update(
        name=dict(type="str", required=True),
        config=dict(type="dict"),
        state=dict(type="str", choices=list(STATES), default="present"),
        wait=dict(type="bool", default=True),
        wait_timeout=dict(type="int", default=120),
        offsets=dict(type="list", elements="dict"),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    # First of all: scrub the secrets from every output, the invocation shown with -vvv included.
    module.no_log_values.update(masked(module.params["config"] or {})[1])
    errors = check_params(module.params)
    if errors:
        module.fail_json(msg="; ".join(errors))

    client = connect_rest.ConnectClient.from_params(module.params)
    run = Run(module, client)
    try:
        live = client.get_config(run.name)
        # a secret only the live config holds is scrubbed too (an error message may quote it)
        run.hide(live or {})
        if module.params["state"] == "absent":
            run.absent(live)
        else:
            run.present(live)
    except connect_rest.ConnectUnreachable as exc:
        module.fail_json(msg=unreachable_message(exc), actions=run.actions)
    except connect_rest.ConnectHTTPError as exc:
        module.fail_json(msg=http_error_message(exc, module.params), actions=run.actions, status_code=exc.status)


if __name__ == "__main__":
    main()
