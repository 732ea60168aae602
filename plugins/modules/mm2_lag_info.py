#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: mm2_lag_info
short_description: Report how far MirrorMaker 2's targets are behind their sources, per flow, topic and partition
version_added: 0.1.0
description:
  - For each flow of the plan the mirrormaker or connect role built, reads what MirrorMaker 2 has
    copied (the source offsets its C(MirrorSourceConnector) committed) and the source partitions'
    log end offsets, and reports per partition how many records and how many seconds the target
    is behind. The figures are derived in C(plugins/module_utils/mm2/lag.py); its docstring and
    C(docs/monitoring.md) define them.
  - In the dedicated layout (O(layout=dedicated), C(connect-mirror-maker.sh)) the committed offsets
    are read from the offsets topic of the flow's herder on the target cluster, C(mm2-offsets.<source>.internal)
    unless the plan's properties name another.
  - In the Connect layout (O(layout=connect)) they are read with C(GET /connectors/<name>/offsets)
    (KIP-875, Kafka 3.5 or later) from the worker at O(url).
  - RV(lag[].records) is the number of offsets from the first source record MirrorMaker 2 has not copied
    to the log end offset, 0 when every record was copied. RV(lag[].seconds) is the age of that record
    (the time of the reading minus the record's timestamp), 0 when nothing is behind.
  - Only partitions on which MirrorMaker 2 committed an offset are reported.
  - Read-only; it changes nothing and runs in check mode too. C(changed) is always V(false).
options:
  plan:
    description:
      - The plan the role built, read as it is, never a rendered file.
      - With O(layout=dedicated), the mirrormaker role's flow model (what C(kafkaops.mirrormaker.mm2_config)
        returns, registered as C(__mirrormaker_model)) with its C(properties) (mm2.properties as a
        mapping) and C(flows) (the effective flows, with their bootstrap servers).
      - With O(layout=connect), the connect role's plan (C(__connect_plan), from
        C(kafkaops.mirrormaker.connect_plan)) with its C(flow) and C(connectors).
      - Its secret values never appear in the output.
    type: dict
    required: true
  layout:
    description:
      - V(dedicated) for MirrorMaker 2 run by C(connect-mirror-maker.sh) (the mirrormaker role),
        V(connect) for its connectors on a Kafka Connect cluster (the connect role).
    type: str
    required: true
    choices: [dedicated, connect]
  flows:
    description:
      - Report only these flows (V(SOURCE->TARGET)); left out, every enabled flow of the plan.
      - A name that is not an enabled flow of the plan is refused.
    type: list
    elements: str
  client_properties:
    description:
      - Client settings per cluster alias, each a mapping of the keys the collection's kafka-python
        modules take as their C(client_properties) (see M(kafkaops.mirrormaker.kafka_group_offsets_info)),
        that is V(security.protocol), V(sasl.mechanism), V(sasl.plain.username), V(sasl.plain.password),
        V(sasl.kerberos.service.name), V(ssl.cafile), V(ssl.certfile), V(ssl.keyfile),
        V(ssl.password), V(ssl.endpoint.identification.algorithm).
      - A cluster without an entry is reached with V(PLAINTEXT). The plan's Java client settings
        (JAAS lines, Java key stores) are not read, since kafka-python cannot use them.
    type: dict
    default: {}
extends_documentation_fragment:
  - kafkaops.mirrormaker.connect_rest
  - kafkaops.mirrormaker.read_only
  - ansible.builtin.action_common_attributes
notes:
  - O(timeout) also bounds each cluster's connection and each read from it (the offsets topic, the
    end offsets, the first record not copied); from 1 to 300.
  - The offsets read trail what MirrorMaker 2 copied by up to the worker's C(offset.flush.interval.ms)
    (10 s as the roles ship it, 60 s as Kafka's default), so records copied since the last flush
    are still reported as behind.
  - Transaction markers (control records) are counted only where they lie between records still
    to copy; the markers right after the last copied record and at the end of the log are not.
    The first record not copied is read with the isolation level of MirrorMaker 2's source
    consumer (C(consumer.isolation.level) of the flow, V(read_uncommitted) unless set).
  - The age is measured with this host's clock against the record's timestamp, the producer's
    clock unless the topic keeps C(LogAppendTime); a producer whose clock runs ahead shows a
    negative age, as it is.
  - Needs kafka-python 3.0 or later on the managed host (the mm2_smoke role's venv has it; point
    C(ansible_python_interpreter) at that venv's python).
seealso:
  - module: kafkaops.mirrormaker.kafka_group_offsets_info
  - name: KIP-875 (first-class offsets support in Kafka Connect)
    description: GET /connectors/<name>/offsets, which the Connect layout reads.
    link: https://cwiki.apache.org/confluence/display/KAFKA/KIP-875%3A+First-class+offsets+support+in+Kafka+Connect
author:
  - kafkaops maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: How far cluster B is behind A, as the dedicated MirrorMaker 2 of this node copies it
  kafkaops.mirrormaker.mm2_lag_info:
    layout: dedicated
    plan: "{{ __mirrormaker_model }}"
  vars:
    ansible_python_interpreter: /opt/kafkaops-mm2-smoke/venv/bin/python
  register: __lag

- name: The same for a Connect cluster's flow, from its REST API
  kafkaops.mirrormaker.mm2_lag_info:
    layout: connect
    plan: "{{ __connect_plan }}"
    url: http://127.0.0.1:8083
    client_properties:
      A: {security.protocol: SASL_PLAINTEXT, sasl.mechanism: SCRAM-SHA-512, sasl.plain.username: lag,
          sasl.plain.password: "{{ vault_lag_password }}"}
  vars:
    ansible_python_interpreter: /opt/kafkaops-mm2-smoke/venv/bin/python
  register: __lag

- name: No flow more than a minute behind
  ansible.builtin.assert:
    that: item.value.seconds < 60
  loop: "{{ __lag.flows | dict2items }}"
"""

RETURN = r"""
lag:
  description:
    - One row per source partition on which MirrorMaker 2 committed an offset, sorted by flow,
      topic and partition.
  returned: success
  type: list
  elements: dict
  sample:
    - {flow: A->B, topic: orders, partition: 0, records: 0, seconds: 0.0, end: 120, next: 120}
    - {flow: A->B, topic: orders, partition: 1, records: 40, seconds: 12.402, end: 160, next: 120}
  contains:
    flow:
      description: The flow, V(SOURCE->TARGET).
      type: str
      returned: always
    topic:
      description: The topic on the source cluster.
      type: str
      returned: always
    partition:
      description: The partition number.
      type: int
      returned: always
    records:
      description:
        - Offsets from the first source record not yet copied to the log end offset; 0 when every
          record was copied.
      type: int
      returned: always
    seconds:
      description:
        - The age of the first source record not yet copied, in seconds (milliseconds as decimals);
          0 when every record was copied.
      type: float
      returned: always
    end:
      description: The source partition's log end offset.
      type: int
      returned: always
    next:
      description:
        - The first source offset MirrorMaker 2 has not copied by its committed offset (that
          offset plus one), the log start when it committed none.
      type: int
      returned: always
flows:
  description: Per flow, the sum of its rows' records, the largest of their seconds and how many partitions.
  returned: success
  type: dict
  sample: {"A->B": {records: 40, seconds: 12.402, partitions: 2}}
sources:
  description: Where each flow's committed offsets were read, and the isolation level of its source consumer.
  returned: success
  type: list
  elements: dict
  sample:
    - {flow: A->B, offsets: "topic mm2-offsets.A.internal on B (127.0.0.1:9092)", isolation_level: read_uncommitted}
measured_at:
  description: When the reading ended (UTC, ISO 8601); the ages are taken at this moment.
  returned: success
  type: str
  sample: "2026-11-27T17:02:11.204Z"
"""

import datetime
import time
import traceback

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.connect import rest as connect_rest
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import client as kafka_client
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.client import Failed, error_text
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import lag as mm2_lag

KAFKA_IMPORT_ERROR = None
kafka_version = None  # bound without kafka-python too: main names it in its refusal
try:
    from kafka import KafkaConsumer, TopicPartition
    from kafka import __version__ as kafka_version
    from kafka import errors as kafka_errors
except ImportError:
    KAFKA_IMPORT_ERROR = traceback.format_exc()

CLIENT_ID = "kafkaops-mm2-lag"
POLL_MS = 500


def input_errors(params):
    """Every fault of the options that needs no cluster, each naming its option."""
    errors = connect_rest.check_connection_params(params) + kafka_client.timeout_errors(params["timeout"])
    flows = params["flows"]
    if flows is not None and not flows:
        errors.append("flows: an empty list reports nothing; leave it out to report every enabled flow")
    for alias, props in (params["client_properties"] or {}).items():
        if not isinstance(props, dict):
            errors.append("client_properties.%s: must be a mapping of client settings" % alias)
            continue
        errors.extend(e.replace("client_properties", "client_properties.%s" % alias, 1)
                      for e in kafka_client.client_kwargs(props)[1])
    return errors


def flows_to_read(params):
    """The flows of the plan to report (lag.dedicated_flows or lag.connect_flow); raises Failed."""
    try:
        if params["layout"] == "dedicated":
            flows = mm2_lag.dedicated_flows(params["plan"])
        else:
            flows = [mm2_lag.connect_flow(params["plan"])]
    except (mm2_lag.LagInputError, KeyError) as exc:
        raise Failed(str(exc) if isinstance(exc, mm2_lag.LagInputError) else "plan: no %s" % exc)
    known = [f["name"] for f in flows]
    unknown = [name for name in params["flows"] or [] if name not in known]
    if unknown or not flows:
        raise Failed("flows: %s %s not an enabled flow of the plan (%s)" % (
            ", ".join(unknown) or "-", "is" if len(unknown) == 1 else "are", ", ".join(known) or "none"))
    return [f for f in flows if f["name"] in params["flows"]] if params["flows"] else flows


class Clusters(object):
    """One kafka_client.Session per (cluster alias, isolation level), made when first asked for."""

    def __init__(self, params, connection_errors):
        self.params, self.connection_errors = params, connection_errors
        self.sessions, self.consumers = [], {}

    def consumer(self, alias, servers_text, isolation_level):
        key = (alias, isolation_level)
        if key not in self.consumers:
            servers, errors = kafka_client.bootstrap_list(servers_text)
            if errors:
                raise Failed("plan: cluster %s: %s" % (alias, "; ".join(errors)))
            kwargs = kafka_client.client_kwargs((self.params["client_properties"] or {}).get(alias) or {})[0]
            session = kafka_client.Session(servers, kwargs, self.params["timeout"], self.connection_errors,
                                           CLIENT_ID, kafka_errors.KafkaError)
            try:
                session.__enter__()
            except Failed as exc:
                raise Failed("cluster %s: %s" % (alias, exc))
            self.sessions.append(session)
            self.consumers[key] = (session, session.client(
                KafkaConsumer, group_id=None, enable_auto_commit=False, isolation_level=isolation_level))
        return self.consumers[key]

    def close(self):
        for session in reversed(self.sessions):
            session.__exit__(None, None, None)


def _deadline(seconds, what):
    end = time.monotonic() + seconds

    def check():
        if time.monotonic() > end:
            raise Failed("%s: not done within %d s (timeout)" % (what, seconds))
    return check


def _partitions(session, consumer, topic):
    parts = session.retry(consumer.partitions_for_topic, topic)
    return sorted(parts) if parts else []


def read_offsets_topic(session, consumer, topic, timeout, where):
    """(key, value) byte pairs of the whole offsets topic, in log order within each partition."""
    tps = [TopicPartition(topic, p) for p in _partitions(session, consumer, topic)]
    if not tps:
        raise Failed("%s: the offsets topic %s does not exist (has this flow's MirrorMaker 2 ever run?)" % (where, topic))
    consumer.assign(tps)
    ends = session.retry(consumer.end_offsets, tps)
    consumer.seek_to_beginning(*tps)
    check = _deadline(timeout, "%s: reading the offsets topic %s" % (where, topic))
    records = []
    pending = [tp for tp in tps if ends[tp] > 0]
    while pending:
        check()
        for batch in consumer.poll(timeout_ms=POLL_MS).values():
            records.extend((r.key, r.value) for r in batch)
        pending = [tp for tp in pending if consumer.position(tp) < ends[tp]]
    consumer.unsubscribe()
    return records


def first_records(session, consumer, nexts, timeout, where):
    """{(topic, partition): (offset, timestamp ms)} of the first record at or after each partition's
    offset in ``nexts`` ({TopicPartition: offset}) that ``consumer`` returns; a partition read to
    its end (the last stable offset under read_committed) without one is left out."""
    if not nexts:
        return {}
    tps = list(nexts)
    consumer.assign(tps)
    ends = session.retry(consumer.end_offsets, tps)
    for tp in tps:
        consumer.seek(tp, nexts[tp])
    check = _deadline(timeout, "%s: reading the first records not copied" % where)
    found = {}
    pending = [tp for tp in tps if nexts[tp] < ends[tp]]
    while pending:
        check()
        for tp, batch in consumer.poll(timeout_ms=POLL_MS).items():
            if tp in found:
                continue
            first = next((r for r in batch if r.offset >= nexts[tp]), None)
            if first is not None:
                found[tp] = (first.offset, first.timestamp)
                consumer.pause(tp)
        pending = [tp for tp in pending if tp not in found and consumer.position(tp) < ends[tp]]
    consumer.unsubscribe()
    return dict(((tp.topic, tp.partition), value) for tp, value in found.items())


def committed_offsets(flow, params, clusters):
    """(MM2's committed offsets of the flow, where they were read)."""
    source = flow["source"]
    if flow["offsets_topic"] is None:
        client = connect_rest.ConnectClient.from_params(params)
        path = connect_rest.connector_path(flow["connector"], "offsets")
        try:
            answer = client.call("GET", path)[1]
        except connect_rest.ConnectError as exc:
            raise Failed("flow %s: %s" % (flow["name"], exc))
        try:
            return mm2_lag.committed_from_rest(answer, source), "GET %s%s" % (client.url, path)
        except mm2_lag.LagInputError as exc:
            raise Failed("flow %s: %s" % (flow["name"], exc))
    session, consumer = clusters.consumer(flow["target"], flow["target_bootstrap_servers"], "read_committed")
    where = "flow %s" % flow["name"]
    records = read_offsets_topic(session, consumer, flow["offsets_topic"], params["timeout"], where)
    try:
        committed = mm2_lag.committed_from_topic(records, flow["connector"], source)
    except mm2_lag.LagInputError as exc:
        raise Failed("%s: %s" % (where, exc))
    return committed, "topic %s on %s (%s)" % (flow["offsets_topic"], flow["target"], flow["target_bootstrap_servers"])


def flow_rows(flow, params, clusters, warnings):
    """The lag rows of one flow."""
    committed, where = committed_offsets(flow, params, clusters)
    session, plain = clusters.consumer(flow["source"], flow["source_bootstrap_servers"], "read_uncommitted")
    existing = {}
    for topic in sorted(set(t for t, _p in committed)):
        existing[topic] = set(_partitions(session, plain, topic))
    gone = sorted("%s-%d" % tp for tp in committed if tp[1] not in existing.get(tp[0], ()))
    if gone:
        warnings.append("flow %s: MirrorMaker 2 committed offsets on partitions the source no longer has: %s"
                        % (flow["name"], ", ".join(gone)))
    tps = dict(((t, p), TopicPartition(t, p)) for (t, p) in committed if p in existing.get(t, ()))
    ends, starts = {}, {}
    if tps:
        for tp, end in session.retry(plain.end_offsets, list(tps.values())).items():
            ends[(tp.topic, tp.partition)] = end
        for tp, start in session.retry(plain.beginning_offsets, list(tps.values())).items():
            starts[(tp.topic, tp.partition)] = start
    beyond = sorted("%s-%d" % k for k in ends if committed[k] + 1 > ends[k])
    if beyond:
        warnings.append("flow %s: MirrorMaker 2's committed offset is beyond the source's end on %s (a topic created "
                        "again?)" % (flow["name"], ", ".join(beyond)))
    nexts = dict((tps[k], mm2_lag.next_offset(committed[k], starts[k])) for k in ends)
    reader_session, reader = clusters.consumer(flow["source"], flow["source_bootstrap_servers"], flow["isolation_level"])
    firsts = first_records(reader_session, reader, dict((tp, n) for tp, n in nexts.items()
                                                        if n < ends[(tp.topic, tp.partition)]),
                           params["timeout"], "flow %s" % flow["name"])
    now_ms = int(time.time() * 1000)
    try:
        found = mm2_lag.rows(flow["name"], ends, starts, committed, firsts, now_ms)
    except mm2_lag.LagInputError as exc:
        raise Failed(str(exc))
    return found, {"flow": flow["name"], "offsets": where, "isolation_level": flow["isolation_level"]}


def measure(params, connection_errors):
    """(rows, sources, warnings); raises Failed with the message for fail_json."""
    flows = flows_to_read(params)
    clusters = Clusters(params, connection_errors)
    rows, sources, warnings = [], [], []
    try:
        for flow in flows:
            try:
                found, source = flow_rows(flow, params, clusters, warnings)
            except kafka_errors.KafkaError as exc:
                raise Failed("flow %s: reading the offsets failed: %s" % (flow["name"], error_text(exc)))
            rows.extend(found)
            sources.append(source)
    finally:
        clusters.close()
    return rows, sources, warnings


def main():
    argument_spec = connect_rest.argument_spec()
    argument_spec.update(
        plan=dict(type="dict", required=True, no_log=True),
        layout=dict(type="str", required=True, choices=["dedicated", "connect"]),
        flows=dict(type="list", elements="str"),
        client_properties=dict(type="dict", default={}, no_log=True),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    params = module.params
    # Only the secret values stay masked: topic names and aliases are what the answer is made of.
    kafka_client.mask_only_secrets(module, {"plan": params["plan"], "client_properties": params["client_properties"]})
    if params.get("url_password"):
        module.no_log_values.add(params["url_password"])
    errors = input_errors(params)
    if errors:
        module.fail_json(msg="; ".join(errors))
    if KAFKA_IMPORT_ERROR:
        module.fail_json(msg=missing_required_lib("kafka-python"), exception=KAFKA_IMPORT_ERROR)
    too_old = kafka_client.version_error(kafka_version)
    if too_old:
        module.fail_json(msg=too_old)
    for alias, props in (params["client_properties"] or {}).items():
        gssapi_error = kafka_client.gssapi_import_error(kafka_client.client_kwargs(props)[0])
        if gssapi_error:
            module.fail_json(msg=missing_required_lib("gssapi", reason="for sasl.mechanism GSSAPI of cluster %s" % alias),
                             exception=gssapi_error)
    connection_errors = kafka_client.capture_kafka_log()
    try:
        rows, sources, warnings = measure(params, connection_errors)
    except Failed as exc:
        module.fail_json(msg=str(exc))
    for warning in warnings:
        module.warn(warning)
    flows = mm2_lag.by_flow(rows)
    measured_at = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    msg = "; ".join("%s: %d records, %.3f s behind over %d partitions" % (name, f["records"], f["seconds"], f["partitions"])
                    for name, f in flows.items()) or "no partition with a committed offset"
    module.exit_json(changed=False, lag=rows, flows=flows, sources=sources, measured_at=measured_at, msg=msg)


if __name__ == "__main__":
    main()
