# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Reading MirrorMaker 2's replication lag from the clusters (and a Connect worker): the one home of
the reading, for the ``mm2_lag_info`` module and the lag exporter (``smoke/mm2_smoke/lag_exporter.py``).

The figures are derived in ``lag.py``; this reads their inputs with kafka-python: the offsets
MirrorMaker 2 committed (its offsets topic, or ``GET /connectors/<name>/offsets``), the source
partitions' log start and end offsets, and the first record not copied. ``params`` are the
module's options (``argument_spec()``), whoever passes them.
"""

from __future__ import annotations

import time
import traceback

from ansible.module_utils.basic import missing_required_lib
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.connect import rest as connect_rest
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import client as kafka_client
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.client import Failed, error_text
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import lag as mm2_lag

KAFKA_IMPORT_ERROR = None
kafka_version = None  # bound without kafka-python too: library_fault names it
try:
    from kafka import KafkaConsumer, TopicPartition
    from kafka import __version__ as kafka_version
    from kafka import errors as kafka_errors
except ImportError:
    KAFKA_IMPORT_ERROR = traceback.format_exc()

CLIENT_ID = "kafkaops-mm2-lag"
POLL_MS = 500


def argument_spec():
    """The options of a reading (the module's, documented there): the Connect connection's and these."""
    spec = connect_rest.argument_spec()
    spec.update(
        plan=dict(type="dict", required=True, no_log=True),
        layout=dict(type="str", required=True, choices=["dedicated", "connect"]),
        flows=dict(type="list", elements="str"),
        client_properties=dict(type="dict", default={}, no_log=True),
    )
    return spec


def library_fault(params):
    """(message, traceback) when kafka-python, or gssapi for a GSSAPI cluster, cannot be used; else None."""
    if KAFKA_IMPORT_ERROR:
        return missing_required_lib("kafka-python"), KAFKA_IMPORT_ERROR
    too_old = kafka_client.version_error(kafka_version)
    if too_old:
        return too_old, None
    for alias, props in (params["client_properties"] or {}).items():
        gssapi_error = kafka_client.gssapi_import_error(kafka_client.client_kwargs(props)[0])
        if gssapi_error:
            return missing_required_lib("gssapi", reason="for sasl.mechanism GSSAPI of cluster %s" % alias), gssapi_error
    return None


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
