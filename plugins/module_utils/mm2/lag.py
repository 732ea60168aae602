# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""MirrorMaker 2's replication lag per flow, topic and partition: the one home of its derivation.

Pure functions (no client, no clock): the ``mm2_lag_info`` module reads the inputs and hands them
here; the status report and the smoke job show what comes out, they never derive it again.

Facts of Apache Kafka this rests on (connect/mirror, connect/runtime):

* MirrorSourceTask commits, per source partition ``{"cluster": <source alias>, "topic": t,
  "partition": p}`` (MirrorUtils.wrapPartition), the source offset ``{"offset": o}``
  (MirrorUtils.wrapOffset) of the last record it copied, and on a restart seeks to ``o + 1``
  (MirrorSourceTask.initializeConsumer). Without an offset it starts where its consumer's
  ``auto.offset.reset`` says, ``earliest`` unless set (MirrorConnectorConfig).
* Connect keeps those offsets in the worker's offsets topic, each record keyed by the JSON list
  ``["<connector name>", {partition}]`` with the offset map as its JSON value, a null value
  removing it (OffsetStorageWriter, OffsetUtils); in dedicated mode the herder of flow
  ``S->T`` keeps them on ``T`` (MirrorMakerConfig.workerConfig: ``mm2-offsets.S.internal``
  unless the properties name another), in the Connect layout ``GET /connectors/<name>/offsets``
  (KIP-875) answers ``{"offsets": [{"partition": {...}, "offset": {...}}]}``.
* A task commits on the worker's ``offset.flush.interval.ms`` (and when it stops cleanly): the
  offsets read here trail what was copied by up to that interval.

The figures of one source partition:

* ``next``: the first source offset MirrorMaker 2 has not copied, as its committed offset says
  (that offset plus one, or the log start when it committed none; never below the log start).
* ``records``: offsets from the first source record MirrorMaker 2 would copy that it has not
  copied, to the log end offset; 0 when no such record exists. A consumer never returns control
  records (transaction markers), so those right after the last copied record, or at the end of
  the log, are not counted; those between records still to copy are (one per transaction and
  partition), and so are the records of aborted transactions when MM2 reads with
  ``read_uncommitted`` (it copies them then) and, under ``read_committed``, only those the reader
  saw as the first one (it skips the rest). Offsets a compaction removed are counted too.
* ``seconds``: the age of that first record not yet copied, the time of the reading minus the
  record's timestamp (``CreateTime``, the producer's clock, unless the topic keeps
  ``LogAppendTime``), 0 when no record is behind. It grows with the wall clock while MM2 copies
  nothing, and is not the time a record takes to cross (the smoke job's latency is).
"""

from __future__ import annotations

import json
from collections import OrderedDict

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import render_value
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import naming

SOURCE_CONNECTOR = "MirrorSourceConnector"
CLUSTER_KEY, TOPIC_KEY, PARTITION_KEY, OFFSET_KEY = "cluster", "topic", "partition", "offset"
ISOLATION_LEVELS = ("read_uncommitted", "read_committed")


class LagInputError(ValueError):
    """An input that does not read as MirrorMaker 2's: the message names it."""


# ------------------------------------------------------------------ committed offsets


def _source_partition(partition, source):
    """(topic, partition) of a MirrorSourceTask source partition of cluster ``source``, else None."""
    if not isinstance(partition, dict) or partition.get(CLUSTER_KEY) != source:
        return None
    topic, number = partition.get(TOPIC_KEY), partition.get(PARTITION_KEY)
    if not isinstance(topic, str) or isinstance(number, bool) or not isinstance(number, int):
        return None
    return topic, number


def _offset(offset):
    """The offset of a MirrorSourceTask source offset map; None for a null (removed) one."""
    if offset is None:
        return None
    value = offset.get(OFFSET_KEY) if isinstance(offset, dict) else None
    if isinstance(value, bool) or not isinstance(value, int):
        raise LagInputError("source offset %r is not {\"offset\": <number>}" % (offset,))
    return value


def committed_from_topic(records, connector, source):
    """{(topic, partition): last copied offset} from the offsets topic's ``(key, value)`` byte
    pairs in log order (within each partition of that topic), for ``connector``'s partitions of
    cluster ``source``. Later records win; a null value removes the partition's offset. Records of
    other connectors, other clusters, or keys that are not Connect's JSON list are passed over
    (the topic may be shared)."""
    out = {}
    for key, value in records:
        try:
            decoded = json.loads(key.decode("utf-8")) if key is not None else None
        except ValueError:
            continue
        if not (isinstance(decoded, list) and len(decoded) == 2 and decoded[0] == connector):
            continue
        where = _source_partition(decoded[1], source)
        if where is None:
            continue
        if value is None:
            out.pop(where, None)
            continue
        try:
            offset = _offset(json.loads(value.decode("utf-8")))
        except ValueError as exc:
            raise LagInputError("offsets topic record of %s %s-%d: %s" % (connector, where[0], where[1], exc))
        if offset is None:
            out.pop(where, None)
        else:
            out[where] = offset
    return out


def committed_from_rest(answer, source):
    """{(topic, partition): last copied offset} from ``GET /connectors/<name>/offsets``."""
    if not isinstance(answer, dict) or not isinstance(answer.get("offsets"), list):
        raise LagInputError("GET /connectors/<name>/offsets answered %r, not {\"offsets\": [...]}" % (answer,))
    out = {}
    for entry in answer["offsets"]:
        where = _source_partition((entry or {}).get("partition"), source)
        if where is None:
            continue
        offset = _offset(entry.get("offset"))
        if offset is not None:
            out[where] = offset
    return out


# ------------------------------------------------------------------ the figures


def next_offset(committed, start):
    """The first source offset not copied: the committed (last copied) offset plus one, or the
    log start when nothing was committed or retention removed what follows the committed one."""
    if committed is None:
        return start
    return max(committed + 1, start)


def partition_row(flow, topic, partition, end, start, committed, first, now_ms):
    """The lag of one source partition (see the module's docstring for each figure).

    ``end``: the log end offset; ``start``: the log start offset; ``committed``: MM2's committed
    offset (the last record it copied) or None; ``first``: ``(offset, timestamp_ms)`` of the first
    record at or after ``next`` that MM2's consumer would read, or None when there is none;
    ``now_ms``: when it was read."""
    nxt = next_offset(committed, start)
    if first is None:
        records, seconds = 0, 0.0
    else:
        offset, timestamp_ms = first
        if offset < nxt or offset >= end:
            raise LagInputError("%s %s-%d: the first record not copied is at offset %d, outside [%d, %d)"
                                % (flow, topic, partition, offset, nxt, end))
        records = end - offset
        seconds = round((now_ms - timestamp_ms) / 1000.0, 3)
    return OrderedDict([("flow", flow), ("topic", topic), ("partition", partition), ("records", records),
                        ("seconds", seconds), ("end", end), ("next", nxt)])


def rows(flow, ends, starts, committed, firsts, now_ms):
    """The rows of one flow, sorted by topic and partition: one per partition of ``ends``
    ({(topic, partition): log end offset}); ``starts`` the log start offsets, ``committed`` and
    ``firsts`` as partition_row takes them (a partition absent from them has none)."""
    return [partition_row(flow, topic, partition, ends[(topic, partition)], starts[(topic, partition)],
                          committed.get((topic, partition)), firsts.get((topic, partition)), now_ms)
            for topic, partition in sorted(ends)]


def by_flow(lag_rows):
    """{flow: {records: sum of its rows, seconds: the largest, partitions: how many}}, by flow name."""
    out = OrderedDict()
    for row in sorted(lag_rows, key=lambda r: r["flow"]):
        flow = out.setdefault(row["flow"], OrderedDict([("records", 0), ("seconds", 0.0), ("partitions", 0)]))
        flow["records"] += row["records"]
        flow["seconds"] = max(flow["seconds"], row["seconds"])
        flow["partitions"] += 1
    return out


def table(lag_rows):
    """The rows as text lines, a header first (for a terminal)."""
    lines = ["%-12s %-40s %9s %12s %10s" % ("flow", "topic-partition", "records", "seconds", "next/end")]
    for row in lag_rows:
        where = "%s-%d" % (row["topic"], row["partition"])
        offsets = "%d/%d" % (row["next"], row["end"])
        lines.append("%-12s %-40s %9d %12.3f %10s" % (row["flow"], where, row["records"], row["seconds"], offsets))
    return lines


# ------------------------------------------------------------------ where to read, from the plans


def _isolation(value, where):
    level = render_value(value).strip().lower() if value is not None else "read_uncommitted"
    if level not in ISOLATION_LEVELS:
        raise LagInputError("%s: %r is not one of %s" % (where, value, ", ".join(ISOLATION_LEVELS)))
    return level


def _first(props, keys):
    for key in keys:
        if props.get(key) is not None:
            return key, props[key]
    return keys[-1], None


def dedicated_flows(plan, wanted=None):
    """What to read for each enabled flow of the mirrormaker role's plan (mm2_config's result:
    ``properties`` as mm2.properties has them, ``flows`` the effective flows), as
    {name, source, target, source_bootstrap_servers, target_bootstrap_servers, offsets_topic,
    connector, isolation_level}. The offsets topic is MirrorMakerConfig.workerConfig's: the
    target's ``offset.storage.topic`` overridden by a top-level one, else ``mm2-offsets.<source>.internal``.
    The source consumer's isolation level is the first of ``S->T.source.consumer.isolation.level``,
    ``S.consumer.isolation.level``, ``S->T.consumer.isolation.level`` and the top-level
    ``consumer.isolation.level``, ``read_uncommitted`` unless one is set."""
    if not isinstance(plan, dict) or not isinstance(plan.get("properties"), dict) or not isinstance(plan.get("flows"), list):
        raise LagInputError("plan: not the mirrormaker role's plan (mm2_config's result with properties and flows)")
    props = plan["properties"]
    out = []
    for flow in plan["flows"]:
        if not flow.get("enabled") or (wanted and flow["name"] not in wanted):
            continue
        source, target = flow["source"], flow["target"]
        topic = naming.herder_settings(props, source, target)["offset.storage.topic"]
        # MirrorConnectorConfig.sourceConsumerConfig: source.consumer.* over consumer.*; the source
        # cluster's consumer.* become source.consumer.* (MirrorMakerConfig.connectorBaseConfig)
        key, value = _first(props, ["%s->%s.source.consumer.isolation.level" % (source, target),
                                    "%s.consumer.isolation.level" % source,
                                    "%s->%s.consumer.isolation.level" % (source, target), "consumer.isolation.level"])
        out.append(OrderedDict([
            ("name", flow["name"]), ("source", source), ("target", target),
            ("source_bootstrap_servers", flow["source_bootstrap_servers"]),
            ("target_bootstrap_servers", flow["target_bootstrap_servers"]),
            ("offsets_topic", render_value(topic)), ("connector", SOURCE_CONNECTOR),
            ("isolation_level", _isolation(value, "plan.properties[%r]" % key))]))
    return out


def connect_flow(plan):
    """What to read for the connect role's plan (connect_plan's result): its flow, with the name of
    its MirrorSourceConnector (whose offsets ``GET /connectors/<name>/offsets`` gives) and that
    connector's ``consumer.isolation.level``."""
    if not isinstance(plan, dict) or not isinstance(plan.get("flow"), dict) or not isinstance(plan.get("connectors"), dict):
        raise LagInputError("plan: not the connect role's plan (connect_plan's result with flow and connectors)")
    flow = plan["flow"]
    names = [name for name, config in plan["connectors"].items()
             if str((config or {}).get("connector.class", "")).endswith("." + SOURCE_CONNECTOR)]
    if len(names) != 1:
        raise LagInputError("plan.connectors: %d MirrorSourceConnector(s) in the plan of flow %s, not one"
                            % (len(names), flow.get("name")))
    config = plan["connectors"][names[0]]
    return OrderedDict([
        ("name", flow["name"]), ("source", flow["source"]), ("target", flow["target"]),
        ("source_bootstrap_servers", flow["source_bootstrap_servers"]),
        ("target_bootstrap_servers", flow["target_bootstrap_servers"]),
        ("offsets_topic", None), ("connector", names[0]),
        ("isolation_level", _isolation(config.get("consumer.isolation.level"),
                                       "plan.connectors[%r]['consumer.isolation.level']" % names[0]))])


# ------------------------------------------------------------------ exported to Prometheus

# The lag exporter's series (smoke/mm2_smoke/lag_exporter.py, docs/monitoring.md): a gauge per
# figure, one sample per row, labelled as the rows are keyed.
METRICS = (
    ("kafkaops_mm2_lag_records", "records",
     "Offsets from the first source record MirrorMaker 2 has not copied to the log end offset (0: all copied)"),
    ("kafkaops_mm2_lag_seconds", "seconds",
     "Age of the first source record MirrorMaker 2 has not copied, in seconds (0: all copied)"),
)
METRIC_LABELS = ("flow", "topic", "partition")


def metric_samples(lag_rows):
    """[(metric name, help, [(label values, value)])] of the rows, in METRICS order, the samples in
    the rows' order; the label values are METRIC_LABELS' as text."""
    return [(name, text, [(tuple(str(row[label]) for label in METRIC_LABELS), row[figure]) for row in lag_rows])
            for name, figure, text in METRICS]
