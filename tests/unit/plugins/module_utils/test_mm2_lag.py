# -*- coding: utf-8 -*-
"""MirrorMaker 2's replication lag: the one home of its derivation (module_utils/mm2/lag.py).

tests/live/test_mm2_lag.py reads the same figures from a real MirrorMaker 2 held back, in both layouts.
"""

from __future__ import annotations

import json

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import lag
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import model as mm2_model


def key(connector, cluster, topic, partition):
    """A key as Connect's JsonConverter (schemas off) writes it: ["<connector>", {partition}]."""
    return json.dumps([connector, {"cluster": cluster, "partition": partition, "topic": topic}],
                      separators=(",", ":")).encode()


def value(offset):
    return None if offset is None else json.dumps({"offset": offset}).encode()


@pytest.mark.parametrize("records, expected", [
    ([], {}),
    ([(key("MirrorSourceConnector", "A", "t", 0), value(4))], {("t", 0): 4}),
    # the later record of a key wins
    ([(key("MirrorSourceConnector", "A", "t", 0), value(4)), (key("MirrorSourceConnector", "A", "t", 0), value(9))],
     {("t", 0): 9}),
    # a null value (an offset reset, KIP-875) removes the offset
    ([(key("MirrorSourceConnector", "A", "t", 0), value(4)), (key("MirrorSourceConnector", "A", "t", 0), None)], {}),
    # other connectors, other clusters, keys that are not Connect's, passed over
    ([(key("MirrorCheckpointConnector", "A", "t", 0), value(4)), (key("MirrorSourceConnector", "C", "t", 0), value(4)),
      (b"not json", value(1)), (None, value(1)), (b'["MirrorSourceConnector"]', value(1)),
      (key("MirrorSourceConnector", "A", "u", 1), value(0))], {("u", 1): 0}),
])
def test_committed_from_topic(records, expected):
    assert lag.committed_from_topic(records, "MirrorSourceConnector", "A") == expected


@pytest.mark.parametrize("raw", [b'{"offset": "x"}', b'{"other": 1}', b'[1]'])
def test_committed_from_topic_refuses_an_offset_that_is_not_mm2s(raw):
    with pytest.raises(lag.LagInputError, match="t-0"):
        lag.committed_from_topic([(key("MirrorSourceConnector", "A", "t", 0), raw)], "MirrorSourceConnector", "A")


@pytest.mark.parametrize("answer, expected", [
    ({"offsets": []}, {}),
    ({"offsets": [{"partition": {"cluster": "A", "partition": 2, "topic": "t"}, "offset": {"offset": 41}},
                  {"partition": {"cluster": "B", "partition": 0, "topic": "t"}, "offset": {"offset": 1}},
                  {"partition": {"cluster": "A", "partition": 0, "topic": "u"}, "offset": None}]},
     {("t", 2): 41}),
])
def test_committed_from_rest(answer, expected):
    assert lag.committed_from_rest(answer, "A") == expected


@pytest.mark.parametrize("answer", [None, {}, {"offsets": {}}, [1]])
def test_committed_from_rest_refuses_another_shape(answer):
    with pytest.raises(lag.LagInputError, match="offsets"):
        lag.committed_from_rest(answer, "A")


@pytest.mark.parametrize("committed, start, expected", [
    (None, 0, 0),      # nothing committed: MM2 starts at the log start (auto.offset.reset earliest)
    (None, 7, 7),
    (4, 0, 5),         # the last copied record's offset plus one
    (4, 10, 10),       # retention removed records MM2 had not copied
])
def test_next_offset(committed, start, expected):
    assert lag.next_offset(committed, start) == expected


NOW = 1_000_000_000


@pytest.mark.parametrize("end, start, committed, first, records, seconds", [
    # all copied
    (10, 0, 9, None, 0, 0.0),
    # nothing yet: every record of the log is behind, the first one the oldest
    (10, 0, None, (0, NOW - 2500), 10, 2.5),
    # held back: 4 records since the last copied one (offset 5)
    (10, 0, 5, (6, NOW - 12000), 4, 12.0),
    # a transaction's commit marker right after the last copied record and at the end: not counted
    (12, 0, 5, None, 0, 0.0),
    (12, 0, 5, (7, NOW - 1000), 5, 1.0),
    # an empty partition, and one whose records retention removed
    (0, 0, None, None, 0, 0.0),
    (50, 50, 10, None, 0, 0.0),
    # the producer's clock ahead of the reader's: shown as it is
    (10, 0, 5, (6, NOW + 500), 4, -0.5),
])
def test_partition_row(end, start, committed, first, records, seconds):
    row = lag.partition_row("A->B", "t", 0, end, start, committed, first, NOW)
    assert list(row) == ["flow", "topic", "partition", "records", "seconds", "end", "next"]
    assert (row["records"], row["seconds"]) == (records, seconds)
    assert row["next"] == lag.next_offset(committed, start)


@pytest.mark.parametrize("first", [(4, NOW), (10, NOW)])
def test_partition_row_refuses_a_first_record_outside_what_is_behind(first):
    with pytest.raises(lag.LagInputError, match="A->B t-0"):
        lag.partition_row("A->B", "t", 0, 10, 0, 4, first, NOW)


def test_rows_and_by_flow():
    ends = {("t", 1): 5, ("t", 0): 8, ("a", 0): 3}
    starts = dict.fromkeys(ends, 0)
    firsts = {("t", 1): (2, NOW - 3000), ("a", 0): (0, NOW - 9000)}
    got = lag.rows("A->B", ends, starts, {("t", 0): 7, ("t", 1): 1}, firsts, NOW)
    assert [(r["topic"], r["partition"], r["records"], r["seconds"]) for r in got] == [
        ("a", 0, 3, 9.0), ("t", 0, 0, 0.0), ("t", 1, 3, 3.0)]
    more = lag.rows("B->A", {("x", 0): 1}, {("x", 0): 0}, {("x", 0): 0}, {}, NOW)
    assert lag.by_flow(more + got) == {"A->B": {"records": 6, "seconds": 9.0, "partitions": 3},
                                       "B->A": {"records": 0, "seconds": 0.0, "partitions": 1}}
    lines = lag.table(got)
    assert len(lines) == 4 and "t-1" in lines[3] and " 3 " in lines[3]


CLUSTERS = [{"alias": "A", "bootstrap_servers": ["a:9092"]}, {"alias": "B", "bootstrap_servers": ["b:9092"]}]
FLOWS = [{"source": "A", "target": "B", "topics": ["t.*"]}, {"source": "B", "target": "A", "topics": ["t.*"]}]


def plan(properties=None, clusters=None, flows=None):
    model = mm2_model.load(clusters or CLUSTERS, flows or FLOWS, properties or {})
    assert not model.errors, model.errors
    return {"properties": dict(model.properties()), "flows": model.effective_flows()}


@pytest.mark.parametrize("properties, clusters, wanted, expected", [
    ({}, None, None, [("A->B", "mm2-offsets.A.internal", "read_uncommitted"),
                      ("B->A", "mm2-offsets.B.internal", "read_uncommitted")]),
    ({}, None, ["B->A"], [("B->A", "mm2-offsets.B.internal", "read_uncommitted")]),
    # the target's worker setting, and a top-level one over it (MirrorMakerConfig.workerConfig)
    ({}, [{"alias": "A", "bootstrap_servers": ["a:9092"], "properties": {"offset.storage.topic": "offs-on-a"}},
          CLUSTERS[1]], None,
     [("A->B", "mm2-offsets.A.internal", "read_uncommitted"), ("B->A", "offs-on-a", "read_uncommitted")]),
    ({"offset.storage.topic": "offs"}, None, ["A->B"], [("A->B", "offs", "read_uncommitted")]),
    # the source consumer's isolation level: the source cluster's, a flow's over it
    ({}, [{"alias": "A", "bootstrap_servers": ["a:9092"], "properties": {"consumer.isolation.level": "read_committed"}},
          CLUSTERS[1]], None,
     [("A->B", "mm2-offsets.A.internal", "read_committed"), ("B->A", "mm2-offsets.B.internal", "read_uncommitted")]),
])
def test_dedicated_flows(properties, clusters, wanted, expected):
    got = lag.dedicated_flows(plan(properties, clusters), wanted)
    assert [(f["name"], f["offsets_topic"], f["isolation_level"]) for f in got] == expected
    assert all(f["connector"] == "MirrorSourceConnector" for f in got)
    assert got[0]["source_bootstrap_servers"] in ("a:9092", "b:9092")


def test_dedicated_flows_a_flows_own_isolation_level():
    flows = [dict(FLOWS[0], properties={"source.consumer.isolation.level": "read_committed"}), FLOWS[1]]
    got = lag.dedicated_flows(plan(flows=flows))
    assert [(f["name"], f["isolation_level"]) for f in got] == [("A->B", "read_committed"), ("B->A", "read_uncommitted")]


def test_dedicated_flows_leaves_out_a_disabled_flow():
    flows = [dict(FLOWS[0]), dict(FLOWS[1], enabled=False)]
    assert [f["name"] for f in lag.dedicated_flows(plan(flows=flows))] == ["A->B"]


@pytest.mark.parametrize("given, match", [
    (None, "mirrormaker role's plan"),
    ({"flows": []}, "mirrormaker role's plan"),
    ({"properties": {"A.consumer.isolation.level": "committed"},
      "flows": [{"name": "A->B", "source": "A", "target": "B", "enabled": True, "source_bootstrap_servers": "a",
                 "target_bootstrap_servers": "b"}]}, r"plan.properties\['A.consumer.isolation.level'\]"),
])
def test_dedicated_flows_refuses(given, match):
    with pytest.raises(lag.LagInputError, match=match):
        lag.dedicated_flows(given)


def connect_plan(source_config):
    flow = {"name": "A->B", "source": "A", "target": "B", "source_bootstrap_servers": "a:9092",
            "target_bootstrap_servers": "b:9092"}
    return {"flow": flow, "connectors": {
        "mm2-A-B-source": dict({"connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector"},
                               **source_config),
        "mm2-A-B-checkpoint": {"connector.class": "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"}}}


@pytest.mark.parametrize("config, level", [
    ({}, "read_uncommitted"),
    ({"consumer.isolation.level": "read_committed"}, "read_committed"),
])
def test_connect_flow(config, level):
    got = lag.connect_flow(connect_plan(config))
    assert (got["name"], got["connector"], got["isolation_level"], got["offsets_topic"]) == (
        "A->B", "mm2-A-B-source", level, None)


@pytest.mark.parametrize("given, match", [
    ({"flow": {}}, "connect role's plan"),
    ({"flow": {"name": "A->B"}, "connectors": {}}, "0 MirrorSourceConnector"),
])
def test_connect_flow_refuses(given, match):
    with pytest.raises(lag.LagInputError, match=match):
        lag.connect_flow(given)


@pytest.mark.parametrize("rows, expected", [
    ([], [("kafkaops_mm2_lag_records", []), ("kafkaops_mm2_lag_seconds", [])]),
    ([{"flow": "A->B", "topic": "t", "partition": 0, "records": 3, "seconds": 1.5, "end": 9, "next": 6},
      {"flow": "A->B", "topic": "t", "partition": 1, "records": 0, "seconds": 0.0, "end": 4, "next": 4}],
     [("kafkaops_mm2_lag_records", [(("A->B", "t", "0"), 3), (("A->B", "t", "1"), 0)]),
      ("kafkaops_mm2_lag_seconds", [(("A->B", "t", "0"), 1.5), (("A->B", "t", "1"), 0.0)])]),
])
def test_metric_samples(rows, expected):
    assert [(name, samples) for name, _help, samples in lag.metric_samples(rows)] == expected
