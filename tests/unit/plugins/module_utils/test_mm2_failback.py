# -*- coding: utf-8 -*-
"""Unit tests for plugins/module_utils/mm2/failback.py: the reverse flow, where each flow starts,
the refusal while the original flow runs, and which groups have moved back."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.kafkaops.mirrormaker.plugins.filter import mm2 as mm2_filter
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import failback
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import model as mm2_model

AB = {"source": "A", "target": "B", "replication_policy": "identity", "topics": ["dr-.*"], "groups": ["dr-.*"],
      "emit_heartbeats": False, "tasks_max": 2, "properties": {"offset.lag.max": 10}}
CLUSTERS = [{"alias": "A", "bootstrap_servers": ["a1:9092"]}, {"alias": "B", "bootstrap_servers": ["b1:9092"]}]


def test_the_reverse_flow_copies_the_same_topics_and_groups_back_with_identity_names():
    flows, errors = failback.reverse_flows([AB], "A", "B", "identity")
    assert errors == []
    assert flows == [dict(AB, enabled=False),
                     {"source": "B", "target": "A", "enabled": True, "replication_policy": "identity",
                      "topics": ["dr-.*"], "groups": ["dr-.*"], "tasks_max": 2, "properties": {"offset.lag.max": 10},
                      "emit_heartbeats": False, "emit_checkpoints": True, "sync_group_offsets": True}]
    # the flow model takes them as they are: one flow enabled, no active-active identity refusal
    model = mm2_model.load(CLUSTERS, flows, {}, {})
    assert model.errors == []
    assert [(f["name"], f["enabled"]) for f in model.effective_flows()] == [("A->B", False), ("B->A", True)]


@pytest.mark.parametrize("flows, source, target, policy, fragment", [
    ([AB], "A", "C", "identity", "mirrormaker_flows: A->C is not a flow of the inventory"),
    ([dict(AB, replication_policy="default")], "A", "B", "default",
     "mirrormaker_flows[0].replication_policy: failback copies back under the topics' own names"),
])
def test_a_flow_that_cannot_fail_back_is_refused_naming_the_variable(flows, source, target, policy, fragment):
    _flows, errors = failback.reverse_flows(flows, source, target, policy)
    assert len(errors) == 1 and errors[0].startswith(fragment), errors
    with pytest.raises(AnsibleFilterError, match="mirrormaker_flows"):
        mm2_filter.mm2_failback_flows(flows, source, target, policy)


def test_a_reverse_flow_the_inventory_has_is_replaced_and_other_flows_stay():
    other = {"source": "A", "target": "C"}
    stale = {"source": "B", "target": "A", "enabled": False, "topics": ["x"]}
    flows, _errors = failback.reverse_flows([other, stale, AB], "A", "B", "identity")
    assert [(f["source"], f["target"], f.get("enabled", True)) for f in flows] == [
        ("A", "C", True), ("A", "B", False), ("B", "A", True)]
    assert flows[-1]["topics"] == ["dr-.*"]


@pytest.mark.parametrize("ends, expected", [
    ({"orders": [{"partition": 1, "end": 7}, {"partition": 0, "end": 42}]},
     [{"partition": {"cluster": "B", "topic": "orders", "partition": 0}, "offset": {"offset": 41}},
      {"partition": {"cluster": "B", "topic": "orders", "partition": 1}, "offset": {"offset": 6}}]),
    # an empty partition: no offset, the connector starts it at the beginning
    ({"audit": [{"partition": 0, "end": 0}]}, [{"partition": {"cluster": "B", "topic": "audit", "partition": 0},
                                                "offset": None}]),
    ({}, []),
])
def test_a_flow_starts_at_the_end_offsets_given(ends, expected):
    assert mm2_filter.mm2_failback_start_offsets(ends, "B") == expected


@pytest.mark.parametrize("statuses, running", [
    ({"A-to-B-S": {"status": {"connector": {"state": "STOPPED"}}}}, []),
    ({"A-to-B-S": {"status": {"connector": {"state": "RUNNING"}}},
      "A-to-B-C": {"status": {"connector": {"state": "PAUSED"}}}}, ["A-to-B-S (RUNNING)", "A-to-B-C (PAUSED)"]),
    # absent: nothing runs
    ({}, []),
])
def test_the_original_flow_counts_as_running_unless_stopped_or_absent(statuses, running):
    assert mm2_filter.mm2_failback_running(statuses, ["A-to-B-S", "A-to-B-C"]) == running


BOUNDARY = {"t": [{"partition": 0, "end": 100}, {"partition": 1, "end": 50}]}
STARTED = {"t": [{"partition": 0, "end": 100}, {"partition": 1, "end": 50}]}


def groups(**partitions):
    return {"g": {"partitions": [{"topic": "t", "partition": p, "committed": c} for p, c in partitions.items()]}}


@pytest.mark.parametrize("on_b, on_a, pending", [
    # read past the boundary on B, not yet moved on A
    (groups(**{"0": 130}), groups(**{"0": 90}), ["g t-0"]),
    # moved: a translated offset past where the reverse flow began on A
    (groups(**{"0": 130}), groups(**{"0": 121}), []),
    # read nothing past the boundary: keeps its offsets on A
    (groups(**{"0": 100, "1": 20}), groups(**{"0": 90}), []),
    # never committed on A at all
    (groups(**{"1": 60}), {}, ["g t-1"]),
])
def test_a_group_has_moved_once_a_translated_offset_landed(on_b, on_a, pending):
    for side in (on_b, on_a):
        for p in side.get("g", {}).get("partitions", []):
            p["partition"] = int(p["partition"])
    assert mm2_filter.mm2_failback_groups_pending(["g"], on_b, on_a, BOUNDARY, STARTED) == pending
