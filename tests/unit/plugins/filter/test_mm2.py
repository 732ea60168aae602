# -*- coding: utf-8 -*-
"""Unit tests for plugins/module_utils/mm2/model.py and plugins/filter/mm2.py."""

from __future__ import annotations

import copy
import random
import re
from collections import OrderedDict

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.kafkaops.mirrormaker.plugins.filter import mm2 as mm2_filter
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import properties as jp
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import values
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import model as m
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import naming

FILTERS = mm2_filter.FilterModule().filters()
DEFAULT = naming.DEFAULT_POLICY
IDENTITY = naming.IDENTITY_POLICY


def base():
    """A valid two-cluster, one-flow configuration: (clusters, flows, properties, options)."""
    clusters = [
        {"alias": "A", "bootstrap_servers": ["a1:9092", "a2:9092"], "broker_count": 3,
         "properties": {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512"},
         "sasl_jaas_config": 'org.apache.kafka.common.security.scram.ScramLoginModule required username="mm2";'},
        {"alias": "B", "bootstrap_servers": "b1:9092, b2:9092", "broker_count": 3},
    ]
    flows = [{"source": "A", "target": "B", "enabled": True, "topics": ["orders.*", "payments"],
              "emit_heartbeats": True, "emit_checkpoints": True, "sync_group_offsets": False,
              "tasks_max": 4}]
    properties = {"replication.factor": 3, "refresh.topics.enabled": True, "topics.exclude": [r".*\.internal"]}
    options = {"exactly_once": False, "internal_rest": True}
    return clusters, flows, properties, options


def errors_of(cfg):
    return FILTERS["mm2_validate"](*cfg)


# ----------------------------------------------------------------- happy paths


def test_filter_names():
    assert set(FILTERS) == {"mm2_properties", "mm2_validate", "mm2_warnings", "mm2_effective_flows",
                            "mm2_clients", "mm2_remote_topic", "mm2_escape", "mm2_inventory_broker_counts",
                            "mm2_inventory_authorizers", "mm2_probe_targets", "mm2_failback_flows",
                            "mm2_failback_start_offsets", "mm2_failback_running", "mm2_failback_groups_pending"}


def test_clients_carry_bootstrap_and_client_settings_with_jaas():
    clusters, flows, props, opts = base()
    out = FILTERS["mm2_clients"](clusters, flows, props, opts)
    assert list(out) == ["A", "B"]
    assert out["A"]["bootstrap_servers"] == "a1:9092,a2:9092"
    assert out["B"]["bootstrap_servers"] == "b1:9092,b2:9092"
    assert out["A"]["properties"]["security.protocol"] == "SASL_SSL"
    assert out["A"]["properties"]["sasl.jaas.config"].startswith("org.apache.kafka.common.security.scram")
    assert out["B"]["properties"] == {}
    clusters[1]["alias"] = "A"
    with pytest.raises(AnsibleFilterError, match="duplicate alias"):
        FILTERS["mm2_clients"](clusters, flows, props, opts)


def test_properties_happy_path_exact_order():
    cfg = base()
    assert errors_of(cfg) == []
    props = FILTERS["mm2_properties"](*cfg)
    assert list(props.items()) == [
        ("clusters", "A,B"),
        ("dedicated.mode.enable.internal.rest", "true"),
        ("refresh.topics.enabled", "true"),
        ("replication.factor", "3"),
        ("topics.exclude", r".*\.internal"),
        ("A.bootstrap.servers", "a1:9092,a2:9092"),
        ("A.sasl.jaas.config", 'org.apache.kafka.common.security.scram.ScramLoginModule required username="mm2";'),
        ("A.sasl.mechanism", "SCRAM-SHA-512"),
        ("A.security.protocol", "SASL_SSL"),
        ("B.bootstrap.servers", "b1:9092,b2:9092"),
        ("A->B.enabled", "true"),
        ("A->B.emit.checkpoints.enabled", "true"),
        ("A->B.emit.heartbeats.enabled", "true"),
        ("A->B.sync.group.offsets.enabled", "false"),
        ("A->B.tasks.max", "4"),
        ("A->B.topics", "orders.*,payments"),
    ]
    assert FILTERS["mm2_warnings"](*cfg) == []


@pytest.mark.parametrize("value, expected", [
    (True, "true"), (False, "false"), (3, "3"), (0.5, "0.5"), (None, ""), ("x y", "x y"),
    (["a", "b", 1, True], "a,b,1,true"), ((), ""),
])
def test_render_value(value, expected):
    assert values.render_value(value) == expected


def test_omitted_topics_not_rendered_and_empty_list_means_unset():
    clusters, flows, props, opts = base()
    flows[0].pop("topics")
    flows[0]["groups"] = []
    flows[0]["groups_exclude"] = []
    out = FILTERS["mm2_properties"](clusters, flows, props, opts)
    assert not any(k.startswith("A->B.topics") or k.startswith("A->B.groups") for k in out)


def test_flow_enabled_defaults_true_and_disabled_rendered():
    clusters, flows, props, opts = base()
    flows[0].pop("enabled")
    flows.append({"source": "B", "target": "A", "enabled": False})
    out = FILTERS["mm2_properties"](clusters, flows, props, opts)
    assert out["A->B.enabled"] == "true"
    assert out["B->A.enabled"] == "false"


def test_internal_rest_false_not_rendered():
    clusters, flows, props, _opts = base()
    out = FILTERS["mm2_properties"](clusters, flows, props, {"internal_rest": False})
    assert "dedicated.mode.enable.internal.rest" not in out


def test_flow_defaults_fill_every_flow_but_yield_to_flow_and_global_keys():
    clusters, flows, props, opts = base()
    flows.append({"source": "B", "target": "A", "properties": {"consumer.max.poll.records": 10}})
    props["producer.override.linger.ms"] = 5
    opts["flow_defaults"] = {"tasks.max": 8, "consumer.max.poll.records": 5000,
                             "producer.override.linger.ms": 20, "producer.override.compression.type": "lz4"}
    out = FILTERS["mm2_properties"](clusters, flows, props, opts)
    assert out["A->B.tasks.max"] == "4"  # the flow's tasks_max field wins
    assert out["B->A.tasks.max"] == "8"
    assert out["A->B.consumer.max.poll.records"] == "5000"
    assert out["B->A.consumer.max.poll.records"] == "10"
    assert out["A->B.producer.override.compression.type"] == "lz4"
    # the user's global key is not shadowed by a per-flow default
    assert "A->B.producer.override.linger.ms" not in out
    assert out["producer.override.linger.ms"] == "5"
    flows_out = FILTERS["mm2_effective_flows"](clusters, flows, props, opts)
    assert [f["tasks_max"] for f in flows_out] == [4, 8]


@pytest.mark.parametrize("defaults, expected", [
    ({"enabled": False}, "mirrormaker_flow_default_properties['enabled']: use mirrormaker_flows[].enabled"),
    ({"A->B.tasks.max": 2}, "mirrormaker_flow_default_properties['A->B.tasks.max']: keys apply to every flow"),
    (["tasks.max"], "mirrormaker_flow_default_properties: must be a mapping"),
])
def test_flow_defaults_refused(defaults, expected):
    clusters, flows, props, opts = base()
    opts["flow_defaults"] = defaults
    errors = m.validate(clusters, flows, props, opts)
    assert any(e.startswith(expected) for e in errors), errors


@pytest.mark.parametrize("global_beats, a_to_b, b_to_a, targets", [
    # MirrorMakerConfig.clusterPairs: an unlisted pair runs a herder for its heartbeats
    (None, {"enabled": True}, None, {"A", "B"}),
    (False, {"enabled": True}, None, {"B"}),
    # a disabled flow still emits heartbeats, unless it is told not to
    (None, {"enabled": False}, {"enabled": False, "emit_heartbeats": False}, {"B"}),
    (False, {"enabled": False}, {"enabled": False}, set()),
    (False, {"enabled": False, "emit_heartbeats": True}, {"enabled": True}, {"A", "B"}),
])
def test_herders_run_for_enabled_flows_and_for_heartbeats(global_beats, a_to_b, b_to_a, targets):
    clusters, flows, props, opts = base()
    flows[0].update(a_to_b)
    if "emit_heartbeats" not in a_to_b:
        del flows[0]["emit_heartbeats"]
    if b_to_a is not None:
        flows.append(dict({"source": "B", "target": "A", "topics": ["back.*"]}, **b_to_a))
    if global_beats is not None:
        props["emit.heartbeats.enabled"] = global_beats
    model = m.load(clusters, flows, props, opts)
    assert model.herder_targets() == targets
    # every herder's worker gets the collection's worker settings (a heartbeat herder's delay too)
    opts["worker_defaults"] = {"scheduled.rebalance.max.delay.ms": 30000}
    out = m.load(clusters, flows, props, opts).properties()
    assert {k.split(".", 1)[0] for k in out if k.endswith(".scheduled.rebalance.max.delay.ms")} == targets


@pytest.mark.parametrize("worker_defaults, b_props, expected", [
    # Connect's own default when nothing sets it
    ({}, {}, 300.0),
    ({"scheduled.rebalance.max.delay.ms": 30000}, {}, 30.0),
    # the cluster's own key wins over the worker defaults, and the longest herder counts (B 45 s, A 30 s)
    ({"scheduled.rebalance.max.delay.ms": 30000}, {"scheduled.rebalance.max.delay.ms": 45000}, 45.0),
])
def test_handover_seconds_is_the_longest_herder_delay(worker_defaults, b_props, expected):
    clusters, flows, props, opts = base()
    clusters[1]["properties"] = b_props
    opts["worker_defaults"] = worker_defaults
    assert m.load(clusters, flows, props, opts).handover_seconds() == expected


def test_handover_seconds_without_herders():
    clusters, flows, props, opts = base()
    flows[0].update(enabled=False, emit_heartbeats=False)
    props["emit.heartbeats.enabled"] = False
    assert m.load(clusters, flows, props, opts).handover_seconds() == 0.0


def test_exactly_once_renders_target_key():
    clusters, flows, props, _opts = base()
    clusters[0]["properties"]["consumer.isolation.level"] = "read_committed"
    cfg = (clusters, flows, props, {"exactly_once": True, "internal_rest": True})
    out = FILTERS["mm2_properties"](*cfg)
    assert out["B.exactly.once.source.support"] == "enabled"
    assert "A.exactly.once.source.support" not in out
    assert out["dedicated.mode.enable.internal.rest"] == "true"
    assert FILTERS["mm2_warnings"](*cfg) == []


@pytest.mark.parametrize("eos, flow, props, rendered", [
    # exactly-once without a boundary: per poll, said in the file
    (True, {}, {}, {"A->B.transaction.boundary": "poll"}),
    (True, {"transaction_boundary": "poll"}, {}, {"A->B.transaction.boundary": "poll"}),
    # the interval boundary without an interval: a second, not offset.flush.interval.ms
    (True, {"transaction_boundary": "interval"}, {},
     {"A->B.transaction.boundary": "interval", "A->B.transaction.boundary.interval.ms": "1000"}),
    (True, {"transaction_boundary": "interval", "transaction_boundary_interval_ms": 5000}, {},
     {"A->B.transaction.boundary": "interval", "A->B.transaction.boundary.interval.ms": "5000"}),
    # set globally: the flow follows it, and an interval boundary still gets its interval
    (True, {}, {"transaction.boundary": "poll"}, {"transaction.boundary": "poll"}),
    (True, {}, {"transaction.boundary": "interval"},
     {"transaction.boundary": "interval", "A->B.transaction.boundary.interval.ms": "1000"}),
    # without exactly-once there are no transactions to bound
    (False, {}, {}, {}),
])
def test_an_exactly_once_flow_bounds_its_transactions(eos, flow, props, rendered):
    clusters, flows, base_props, _opts = base()
    clusters[0]["properties"]["consumer.isolation.level"] = "read_committed"
    flows[0].update(flow)
    options = {"exactly_once": eos, "internal_rest": True}
    out = FILTERS["mm2_properties"](clusters, flows, dict(base_props, **props), options)
    assert {key: value for key, value in out.items() if "transaction." in key} == rendered


@pytest.mark.parametrize("eos, flow, message", [
    (True, {"transaction_boundary": "connector"},
     "mirrormaker_flows[0].transaction_boundary: must be poll or interval, got 'connector'"),
    (True, {"transaction_boundary_interval_ms": 0},
     "mirrormaker_flows[0].transaction_boundary_interval_ms: must be a positive integer, got 0"),
    (True, {"transaction_boundary": "poll", "transaction_boundary_interval_ms": 500},
     "mirrormaker_flows[0].transaction_boundary_interval_ms: counts only with the interval boundary; the flow "
     "commits per poll (mirrormaker_flows[0].transaction_boundary)"),
    (True, {"transaction_boundary_interval_ms": 500},
     "mirrormaker_flows[0].transaction_boundary_interval_ms: counts only with the interval boundary; the flow "
     "commits per poll (transaction_boundary's default)"),
    (False, {"transaction_boundary": "interval"},
     "mirrormaker_flows[0].transaction_boundary: transactions are exactly-once's, which is off "
     "(mirrormaker_exactly_once)"),
    (False, {"properties": {"transaction.boundary.interval.ms": 100}},
     "mirrormaker_flows[0].properties['transaction.boundary.interval.ms']: transactions are exactly-once's, "
     "which is off (mirrormaker_exactly_once)"),
])
def test_a_transaction_setting_that_cannot_hold_is_refused(eos, flow, message):
    clusters, flows, props, _opts = base()
    clusters[0]["properties"]["consumer.isolation.level"] = "read_committed"
    flows[0].update(flow)
    assert errors_of((clusters, flows, props, {"exactly_once": eos, "internal_rest": True})) == [message]


def test_flow_properties_rendered_with_prefix_and_deprecated_renamed():
    clusters, flows, props, opts = base()
    flows[0]["properties"] = {"offset.lag.max": 100, "topics.blacklist": "x.*", "producer.override.acks": "all"}
    cfg = (clusters, flows, props, opts)
    out = FILTERS["mm2_properties"](*cfg)
    assert out["A->B.offset.lag.max"] == "100"
    assert out["A->B.producer.override.acks"] == "all"
    assert out["A->B.topics.exclude"] == "x.*"
    assert "A->B.topics.blacklist" not in out
    assert any("mirrormaker_flows[0].properties['topics.blacklist']" in w for w in FILTERS["mm2_warnings"](*cfg))


# -------------------------------------------------------------- policies


def test_uniform_non_default_policy_is_rendered_globally():
    clusters, flows, props, opts = base()
    flows[0]["replication_policy"] = "identity"
    out = FILTERS["mm2_properties"](clusters, flows, props, opts)
    assert out["replication.policy.class"] == IDENTITY
    assert "A->B.replication.policy.class" not in out


def test_default_policy_not_rendered():
    clusters, flows, props, opts = base()
    flows[0]["replication_policy"] = "default"
    out = FILTERS["mm2_properties"](clusters, flows, props, opts)
    assert not any(k.endswith("replication.policy.class") for k in out)


def test_mixed_policies_rendered_per_flow_with_warning():
    clusters, flows, props, opts = base()
    clusters.append({"alias": "C", "bootstrap_servers": ["c1:9092"]})
    flows[0]["replication_policy"] = "identity"
    flows.append({"source": "A", "target": "C"})
    cfg = (clusters, flows, props, opts)
    out = FILTERS["mm2_properties"](*cfg)
    assert out["A->B.replication.policy.class"] == IDENTITY
    assert "replication.policy.class" not in out
    assert "A->C.replication.policy.class" not in out
    assert any("different replication policies" in w for w in FILTERS["mm2_warnings"](*cfg))


def test_global_policy_alias_normalised_and_flow_override():
    clusters, flows, props, opts = base()
    clusters.append({"alias": "C", "bootstrap_servers": ["c1:9092"]})
    props["replication.policy.class"] = "identity"
    flows.append({"source": "A", "target": "C", "replication_policy": "com.example.MyPolicy"})
    out = FILTERS["mm2_properties"](clusters, flows, props, opts)
    assert out["replication.policy.class"] == IDENTITY
    assert out["A->C.replication.policy.class"] == "com.example.MyPolicy"
    assert "A->B.replication.policy.class" not in out


@pytest.mark.parametrize("source, topic, policy, sep, expected", [
    ("A", "orders", "default", ".", "A.orders"),
    ("A", "orders", None, ".", "A.orders"),
    ("us-west", "orders", DEFAULT, "_", "us-west_orders"),
    ("A", "orders", "identity", ".", "orders"),
    ("A", "orders", IDENTITY, "_", "orders"),
    ("A", "B.orders", "default", ".", "A.B.orders"),
])
def test_remote_topic(source, topic, policy, sep, expected):
    assert FILTERS["mm2_remote_topic"](source, topic, policy, sep) == expected


def test_remote_topic_custom_policy_refused():
    with pytest.raises(AnsibleFilterError, match="cannot predict"):
        FILTERS["mm2_remote_topic"]("A", "t", "com.example.MyPolicy")


# -------------------------------------------------------------- effective flows


def test_effective_flows():
    clusters, flows, props, opts = base()
    props["replication.policy.separator"] = "_"
    props["groups.blacklist"] = ["console-consumer-.*"]
    flows.append({"source": "B", "target": "A", "topics_exclude": "tmp.*", "sync_group_offsets": True})
    eff = FILTERS["mm2_effective_flows"](clusters, flows, props, opts)
    assert [f["name"] for f in eff] == ["A->B", "B->A"]
    ab, ba = eff
    assert ab["index"] == 0 and ba["index"] == 1
    assert ab["topics"] == ["orders.*", "payments"] and ab["topics_origin"] == "flow"
    assert ab["topics_regex"] == "orders.*|payments"
    assert ab["topics_exclude"] == [r".*\.internal"] and ab["topics_exclude_origin"] == "global"
    assert ab["groups"] == [".*"] and ab["groups_origin"] == "mm2-default"
    assert ab["groups_exclude"] == ["console-consumer-.*"]
    assert ba["topics_exclude"] == ["tmp.*"]
    assert ab["replication_policy"] == DEFAULT and ab["replication_policy_alias"] == "default"
    assert ab["separator"] == "_" and ab["remote_topic_prefix"] == "A_"
    assert ab["internal_topics"] == {"heartbeats": "heartbeats", "checkpoints": "A_checkpoints_internal",
                                     "offset_syncs": "mm2-offset-syncs_B_internal"}
    assert ab["source_bootstrap_servers"] == "a1:9092,a2:9092"
    assert ab["target_bootstrap_servers"] == "b1:9092,b2:9092"
    assert ab["tasks_max"] == 4 and ba["tasks_max"] is None
    assert ab["sync_group_offsets"] is False and ba["sync_group_offsets"] is True
    assert ab["emit_heartbeats"] is True and ab["exactly_once"] is False
    assert not any("jaas" in str(v) for f in eff for v in f.values())
    assert re.fullmatch(ab["topics_regex"], "orders-eu") and not re.fullmatch(ab["topics_regex"], "x.payments")


def test_effective_flows_identity_prefix_empty():
    clusters, flows, props, opts = base()
    flows[0]["replication_policy"] = "identity"
    eff = FILTERS["mm2_effective_flows"](clusters, flows, props, opts)
    assert eff[0]["remote_topic_prefix"] == ""
    assert eff[0]["internal_topics"]["checkpoints"] == "A.checkpoints.internal"


def test_effective_flows_offset_syncs_topic_named_after_the_cluster_it_does_not_live_on():
    clusters, flows, props, opts = base()
    eff = FILTERS["mm2_effective_flows"](clusters, flows, props, opts)
    assert eff[0]["offset_syncs_location"] == "source"
    assert eff[0]["internal_topics"]["offset_syncs"] == "mm2-offset-syncs.B.internal"
    flows[0]["properties"] = {"offset-syncs.topic.location": "target"}
    eff = FILTERS["mm2_effective_flows"](clusters, flows, props, opts)
    assert eff[0]["offset_syncs_location"] == "target"
    assert eff[0]["internal_topics"]["offset_syncs"] == "mm2-offset-syncs.A.internal"


# -------------------------------------------------------------- determinism


def _shuffled(value, rnd):
    if isinstance(value, dict):
        keys = list(value)
        rnd.shuffle(keys)
        return OrderedDict((k, _shuffled(value[k], rnd)) for k in keys)
    if isinstance(value, list) and value and isinstance(value[0], dict):
        items = [_shuffled(v, rnd) for v in value]
        rnd.shuffle(items)
        return items
    return copy.deepcopy(value)


def test_deterministic_with_shuffled_input():
    clusters, flows, props, opts = base()
    clusters.append({"alias": "C", "bootstrap_servers": ["c1:9092"], "properties": {"z.k": 1, "a.k": 2, "m.k": 3}})
    flows += [{"source": "B", "target": "A", "properties": {"b": 1, "a": 2, "c": 3}},
              {"source": "C", "target": "A", "groups": ["g1"]}, {"source": "A", "target": "C"}]
    props.update({"x.y": 1, "a.b": 2, "tasks.max": 8, "groups.blacklist": ["t"], "unset.key": None})
    reference = FILTERS["mm2_properties"](clusters, flows, props, opts)
    for seed in range(10):
        rnd = random.Random(seed)
        args = [_shuffled(x, rnd) for x in (clusters, flows, props, opts)]
        again = FILTERS["mm2_properties"](*args)
        assert list(again.items()) == list(reference.items())
        assert jp.format_properties(again) == jp.format_properties(reference)


# -------------------------------------------------------------- refusals


def _set(path, value):
    """Return a mutator setting cfg[path...] = value (path of keys/indexes)."""
    def mutate(cfg):
        target = cfg
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value
    return mutate


def _append(index, item):
    def mutate(cfg):
        cfg[index].append(item)
    return mutate


def _del(path):
    def mutate(cfg):
        target = cfg
        for part in path[:-1]:
            target = target[part]
        del target[path[-1]]
    return mutate


def _both(*mutators):
    def mutate(cfg):
        for one in mutators:
            one(cfg)
    return mutate


C, F, P, O = 0, 1, 2, 3
REFUSALS = [
    ("unknown-target", _set((F, 0, "target"), "C"),
     "mirrormaker_flows[0].target: unknown cluster alias 'C' (known: A, B)"),
    ("unknown-source", _set((F, 0, "source"), "Z"), "mirrormaker_flows[0].source: unknown cluster alias 'Z'"),
    ("missing-source", _set((F, 0, "source"), None), "mirrormaker_flows[0].source: required"),
    ("self-flow", _set((F, 0, "target"), "A"), "mirrormaker_flows[0].target: flow A->A replicates a cluster to itself"),
    ("duplicate-alias", _append(C, {"alias": "A", "bootstrap_servers": ["x:1"]}),
     "mirrormaker_clusters[2].alias: duplicate alias 'A' (first defined at mirrormaker_clusters[0])"),
    ("duplicate-flow", _append(F, {"source": "A", "target": "B"}),
     "mirrormaker_flows[1]: duplicate flow A->B (also mirrormaker_flows[0])"),
    ("alias-dot", _set((C, 1, "alias"), "B.x"), "mirrormaker_clusters[1].alias: 'B.x' cannot be used in MM2 property keys"),
    ("alias-arrow", _set((C, 1, "alias"), "B->x"), "mirrormaker_clusters[1].alias: 'B->x' cannot be used"),
    ("alias-trailing-dash", _set((C, 1, "alias"), "B-"), "mirrormaker_clusters[1].alias: 'B-' cannot be used"),
    ("alias-blank", _set((C, 1, "alias"), "B x"), "mirrormaker_clusters[1].alias: 'B x' cannot be used"),
    ("alias-equals", _set((C, 1, "alias"), "B=x"), "mirrormaker_clusters[1].alias: 'B=x' cannot be used"),
    ("alias-missing", _set((C, 1, "alias"), ""), "mirrormaker_clusters[1].alias: required"),
    ("regex-topics", _set((F, 0, "topics"), ["ok", "bad("]), "mirrormaker_flows[0].topics: regex 'bad(' does not compile"),
    ("regex-topics-exclude", _set((F, 0, "topics_exclude"), "[z-a]"), "mirrormaker_flows[0].topics_exclude: regex '[z-a]'"),
    ("regex-groups", _set((F, 0, "groups"), ["*g"]), "mirrormaker_flows[0].groups: regex '*g'"),
    ("regex-groups-exclude", _set((F, 0, "groups_exclude"), ["a)"]), "mirrormaker_flows[0].groups_exclude: regex 'a)'"),
    ("regex-topics-blacklist-field", _set((F, 0, "topics_blacklist"), ["a)"]),
     "mirrormaker_flows[0].topics_blacklist: regex 'a)'"),
    ("regex-flow-props", _set((F, 0, "properties"), {"groups": "(x"}), "mirrormaker_flows[0].properties['groups']: regex '(x'"),
    ("regex-global-topics", _set((P, "topics"), "(x"), "mirrormaker_properties['topics']: regex '(x'"),
    ("regex-global-topics-exclude", _set((P, "topics.exclude"), ["?"]), "mirrormaker_properties['topics.exclude']: regex '?'"),
    ("regex-global-groups", _set((P, "groups"), "+"), "mirrormaker_properties['groups']: regex '+'"),
    ("regex-global-groups-exclude", _set((P, "groups.exclude"), "(?<"), "mirrormaker_properties['groups.exclude']: regex '(?<'"),
    ("regex-global-blacklist", _set((P, "groups.blacklist"), "["),
     "mirrormaker_properties['groups.blacklist']: regex '['"),
    ("regex-comma-in-item", _set((F, 0, "topics"), ["a{1,3}"]),
     "mirrormaker_flows[0].topics: 'a{1,3}' contains ','"),
    ("rf-global", _set((C, 1, "broker_count"), 1),
     "mirrormaker_properties['replication.factor']: replication factor 3 exceeds broker_count 1 of cluster 'B' "
     "(mirrormaker_clusters[1].broker_count)"),
    ("rf-global-internal", _set((P, "heartbeats.topic.replication.factor"), 4),
     "mirrormaker_properties['heartbeats.topic.replication.factor']: replication factor 4 exceeds broker_count 3"),
    ("rf-cluster-storage", _set((C, 0, "properties", "offset.storage.replication.factor"), 5),
     "mirrormaker_clusters[0].properties['offset.storage.replication.factor']: replication factor 5 exceeds "
     "broker_count 3 of cluster 'A'"),
    ("rf-flow", _set((F, 0, "properties"), {"replication.factor": 9}),
     "mirrormaker_flows[0].properties['replication.factor']: replication factor 9 exceeds broker_count 3 of cluster 'B'"),
    ("rf-not-int", _set((P, "replication.factor"), "three"),
     "mirrormaker_properties['replication.factor']: replication factor must be an integer"),
    ("rf-zero", _set((P, "replication.factor"), 0), "mirrormaker_properties['replication.factor']: replication factor must be >= 1"),
    ("active-active-identity", _both(_set((F, 0, "replication_policy"), "identity"),
                                     _append(F, {"source": "B", "target": "A"})),
     "mirrormaker_flows[0].replication_policy: A->B uses IdentityReplicationPolicy while A->B and B->A are both enabled"),
    ("active-active-identity-global", _both(_set((P, "replication.policy.class"), IDENTITY),
                                            _append(F, {"source": "B", "target": "A"})),
     "mirrormaker_properties['replication.policy.class']: A->B uses IdentityReplicationPolicy"),
    ("exactly-once-no-rest", _set((O,), {"exactly_once": True, "internal_rest": False}),
     "mirrormaker_exactly_once: requires mirrormaker_internal_rest: true"),
    ("exactly-once-not-bool", _set((O,), {"exactly_once": "yes"}), "mirrormaker_exactly_once: must be a boolean"),
    ("internal-rest-not-bool", _set((O,), {"internal_rest": 1}), "mirrormaker_internal_rest: must be a boolean"),
    ("empty-clusters", _set((C,), []), "mirrormaker_clusters: must be a non-empty list"),
    ("clusters-not-list", _set((C,), {"alias": "A"}), "mirrormaker_clusters: must be a non-empty list"),
    ("cluster-not-mapping", _set((C, 1), "B"), "mirrormaker_clusters[1]: must be a mapping"),
    ("empty-flows", _set((F,), []), "mirrormaker_flows: must be a non-empty list"),
    ("empty-bootstrap", _set((C, 1, "bootstrap_servers"), []), "mirrormaker_clusters[1].bootstrap_servers: must list at least one"),
    ("empty-bootstrap-str", _set((C, 1, "bootstrap_servers"), " "), "mirrormaker_clusters[1].bootstrap_servers: must list"),
    ("bad-bootstrap", _set((C, 1, "bootstrap_servers"), ["b1"]), "mirrormaker_clusters[1].bootstrap_servers: 'b1' is not host:port"),
    ("broker-count", _set((C, 1, "broker_count"), 0), "mirrormaker_clusters[1].broker_count: must be a positive integer"),
    ("enabled-not-bool", _set((F, 0, "enabled"), "yes"), "mirrormaker_flows[0].enabled: must be a boolean, got 'yes' (str)"),
    ("heartbeats-not-bool", _set((F, 0, "emit_heartbeats"), "true"), "mirrormaker_flows[0].emit_heartbeats: must be a boolean"),
    ("tasks-max", _set((F, 0, "tasks_max"), 0), "mirrormaker_flows[0].tasks_max: must be a positive integer"),
    ("policy-name", _set((F, 0, "replication_policy"), "fancy"), "mirrormaker_flows[0].replication_policy: 'fancy' is neither"),
    ("reserved-clusters", _set((P, "clusters"), "A,B"), "mirrormaker_properties['clusters']: set by the role"),
    ("reserved-rest", _set((P, "dedicated.mode.enable.internal.rest"), True),
     "mirrormaker_properties['dedicated.mode.enable.internal.rest']: set by the role from mirrormaker_internal_rest"),
    ("global-flow-key", _set((P, "A->B.topics"), "x"), "mirrormaker_properties['A->B.topics']: flow-scoped key"),
    ("global-cluster-key", _set((P, "A.security.protocol"), "SSL"),
     "mirrormaker_properties['A.security.protocol']: starts with cluster alias 'A'"),
    ("global-blacklist-and-exclude", _set((P, "topics.blacklist"), "x"),
     "mirrormaker_properties['topics.blacklist']: both 'topics.exclude' and 'topics.blacklist' are set"),
    ("flow-blacklist-and-exclude", _both(_set((F, 0, "topics_exclude"), "a"), _set((F, 0, "topics_blacklist"), "b")),
     "mirrormaker_flows[0].topics_blacklist: both topics_blacklist and topics_exclude are set"),
    ("flow-props-blacklist-and-exclude", _set((F, 0, "properties"), {"groups.exclude": "a", "groups.blacklist": "b"}),
     "mirrormaker_flows[0].properties['groups.blacklist']: both 'groups.exclude' and 'groups.blacklist' are set"),
    ("flow-field-and-property", _set((F, 0, "properties"), {"tasks.max": 2}),
     "mirrormaker_flows[0].properties['tasks.max']: also set by mirrormaker_flows[0].tasks_max"),
    ("flow-enabled-property", _set((F, 0, "properties"), {"enabled": True}),
     "mirrormaker_flows[0].properties['enabled']: use mirrormaker_flows[0].enabled"),
    ("cluster-bootstrap-property", _set((C, 1, "properties"), {"bootstrap.servers": "x:1"}),
     "mirrormaker_clusters[1].properties['bootstrap.servers']: use mirrormaker_clusters[1].bootstrap_servers"),
    ("cluster-jaas-twice", _set((C, 0, "properties", "sasl.jaas.config"), "x"),
     "mirrormaker_clusters[0].sasl_jaas_config: also set"),
    ("nested-global", _set((P, "x"), {"y": 1}), "mirrormaker_properties['x']: nested mappings"),
    ("properties-not-mapping", _set((P,), ["x"]), "mirrormaker_properties: must be a mapping"),
    # A typo must not widen replication: an ignored 'topic' would mirror every topic.
    ("unknown-flow-key", _set((F, 0, "topic"), "x"), "mirrormaker_flows[0].topic: unknown key; did you mean 'topics'?"),
    ("unknown-cluster-key", _set((C, 0, "bootstrap_server"), ["x:1"]),
     "mirrormaker_clusters[0].bootstrap_server: unknown key; did you mean 'bootstrap_servers'?"),
    ("unknown-cluster-key-far", _set((C, 0, "zzz"), 1),
     "mirrormaker_clusters[0].zzz: unknown key; known keys: alias, bootstrap_servers, broker_count"),
    ("rf-inventory", _both(_del((C, 1, "broker_count")), _set((O,), {"broker_counts": {"B": 1}})),
     "mirrormaker_properties['replication.factor']: replication factor 3 exceeds the 1 broker(s) the inventory has "
     "for cluster 'B'"),
]


@pytest.mark.parametrize("mutate, expected", [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
def test_refusals(mutate, expected):
    cfg = list(base())
    mutate(cfg)
    errors = FILTERS["mm2_validate"](*cfg)
    assert any(expected in e for e in errors), errors
    path = expected.split(": ")[0]  # the variable path at fault
    assert path.startswith("mirrormaker_")
    assert any(e.startswith(path + ": ") for e in errors)
    assert all(e.startswith(("mirrormaker_", "options")) for e in errors)
    with pytest.raises(AnsibleFilterError, match=re.escape(expected)):
        FILTERS["mm2_properties"](*cfg)
    with pytest.raises(AnsibleFilterError):
        FILTERS["mm2_effective_flows"](*cfg)


def test_regex_error_mentions_python_approximation():
    cfg = list(base())
    cfg[F][0]["topics"] = ["("]
    assert any("approximation of java.util.regex" in e for e in errors_of(cfg))


def test_rf_minus_one_and_unknown_broker_count_accepted():
    cfg = list(base())
    cfg[P]["replication.factor"] = -1
    cfg[C][1].pop("broker_count")
    cfg[P]["checkpoints.topic.replication.factor"] = 7  # B has no broker_count, A: 7 > 3
    errors = errors_of(cfg)
    assert len(errors) == 1 and "cluster 'A'" in errors[0]


def test_active_active_default_policy_ok():
    cfg = list(base())
    cfg[F].append({"source": "B", "target": "A"})
    assert errors_of(cfg) == []


def test_active_active_identity_with_one_direction_disabled_ok():
    cfg = list(base())
    cfg[P]["replication.policy.class"] = "identity"
    cfg[F].append({"source": "B", "target": "A", "enabled": False})
    assert errors_of(cfg) == []


# ------------------------------------------------------------------ warnings


@pytest.mark.parametrize("mutate, expected", [
    (_both(_del((P, "topics.exclude")), _set((P, "topics.blacklist"), "x")),
     "mirrormaker_properties['topics.blacklist']: 'topics.blacklist' is deprecated (KIP-629); rendered as 'topics.exclude'"),
    (_set((P, "groups.blacklist"), "x"), "mirrormaker_properties['groups.blacklist']: 'groups.blacklist' is deprecated"),
    (_set((F, 0, "groups_blacklist"), ["g"]), "mirrormaker_flows[0].groups_blacklist: deprecated (KIP-629); use groups_exclude"),
    (_set((O,), {"exactly_once": True}), "mirrormaker_clusters[0].properties: exactly-once is on; set consumer.isolation.level"),
], ids=["global-topics-blacklist", "global-groups-blacklist", "flow-groups-blacklist", "eos-isolation"])
def test_warnings(mutate, expected):
    cfg = list(base())
    mutate(cfg)
    assert errors_of(cfg) == []
    assert any(expected in w for w in FILTERS["mm2_warnings"](*cfg)), FILTERS["mm2_warnings"](*cfg)


def test_deprecated_names_rendered_as_exclude():
    cfg = list(base())
    cfg[P].pop("topics.exclude")
    cfg[P]["topics.blacklist"] = ["a", "b"]
    cfg[F][0]["groups_blacklist"] = "g.*"
    out = FILTERS["mm2_properties"](*cfg)
    assert out["topics.exclude"] == "a,b" and out["A->B.groups.exclude"] == "g.*"
    assert not any("blacklist" in k for k in out)


# ------------------------------------------------- Java properties semantics


TRICKY = OrderedDict([
    ("topics.exclude", r".*[\-\.]internal,.*\.replica,__consumer_offsets"),
    ("windows.path", "C:\\path\\to\\dir\\"),
    ("leading.space", "  two leading blanks"),
    ("trailing.space", "trailing blank "),
    ("tab.and.newline", "a\tb\nc\rd\fe"),
    ("unicode", "caf\u00e9 \u2603 \U0001F600"),
    ("hash", "#not a comment"),
    ("bang", "!not a comment"),
    ("separators", "a=b:c d"),
    ("literal.u", "\\u0041 stays literal"),
    ("empty", ""),
    ("key with = and : and blank", "v"),
    ("#hashkey", "v"),
    ("!bangkey", "v"),
    ("A->B.topics", r"orders\..*"),
    ("jaas", 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p\\w";'),
])


def test_escape_roundtrip_python_parser():
    text = jp.format_properties(TRICKY)
    assert text.isascii()
    assert dict(jp.parse_properties(text)) == dict(TRICKY)


def test_escape_examples():
    assert jp.escape_value(r".*[\-\.]internal") == r".*[\\-\\.]internal"
    assert jp.escape_key("A->B.enabled") == "A->B.enabled"
    assert jp.escape_value("host:9092,host2:9092") == "host:9092,host2:9092"
    assert FILTERS["mm2_escape"]("a b", key=True) == "a\\ b"


JAVA_EDGE_CASES = "\n".join([
    "# comment",
    "! bang comment \\",
    "plain=value",
    "  indented.key = spaced value  ",
    "colon:value",
    "blank value with space",
    "cont=first \\",
    "    second \\",
    "\tthird",
    "even.backslashes=ends with two \\\\",
    "next.line=present",
    "esc\\ key\\=x\\:y=v",
    "unicode=\\u00e9\\u2603",
    "unknown.escapes=\\-\\.\\q\\#",
    "empty.value=",
    "only.key",
    "dup=1",
    "dup=2",
    "sep.twice==v",
    "sep.mix= :v",
    "crlf=a\r\ncr=b\rlast=c\\",
])


def test_python_parser_matches_java(tmp_path, java_load):
    rendered = tmp_path / "rendered.properties"
    rendered.write_text(jp.format_properties(TRICKY) + "\n", encoding="ascii")
    edge = tmp_path / "edge.properties"
    edge.write_bytes(JAVA_EDGE_CASES.encode("ascii"))
    page = tmp_path / "page_raw.properties"
    page.write_text("topics.blacklist=.*[\\-\\.]internal, .*\\.replica, __consumer_offsets\n"
                    "groups.blacklist=console-consumer-.*, connect-.*, __.*\n", encoding="ascii")
    j_rendered, j_edge, j_page = java_load([str(rendered), str(edge), str(page)])
    # 1. what we render is read back by Java exactly as configured
    assert j_rendered == dict(TRICKY)
    # 2. the Python parser implements Properties.load semantics
    assert dict(jp.parse_properties(edge.read_text(encoding="ascii"))) == j_edge
    assert dict(jp.parse_properties(rendered.read_text(encoding="ascii"))) == j_rendered
    assert j_edge["cont"] == "first second third" and j_edge["dup"] == "2"
    # 3. finding: the page's raw regexes lose their backslashes when Java loads them
    assert j_page["topics.blacklist"] == ".*[-.]internal, .*.replica, __consumer_offsets"
    assert dict(jp.parse_properties(page.read_text(encoding="ascii"))) == j_page


def test_raw_page_regex_meaning_changes():
    as_written = re.compile(r".*\.replica")
    as_java_reads_it = re.compile(r".*.replica")
    assert not as_written.fullmatch("orders_replica")
    assert as_java_reads_it.fullmatch("orders_replica")


def test_parser_malformed_unicode():
    with pytest.raises(ValueError, match="Malformed"):
        jp.parse_properties("k=\\u12G4")


# ------------------------------------------------------------- inventory-derived inputs


def test_inventory_broker_counts_follow_the_bootstrap_hosts():
    hostvars = {
        "kafka-a1": {"__kafka_broker_plan": {"brokers": ["kafka-a1", "kafka-a2"],
                                             "bootstrap_servers": "a1.dc:9092,a2.dc:9092"}},
        "kafka-a2": {"__kafka_broker_plan": {"brokers": ["kafka-a1", "kafka-a2"],
                                             "bootstrap_servers": "a1.dc:9092,a2.dc:9092"}},
        "kafka-b1": {},
    }
    clusters = [{"alias": "A", "bootstrap_servers": ["a2.dc:9092"]},
                {"alias": "B", "bootstrap_servers": "kafka-b1:9092"},
                {"alias": "C", "bootstrap_servers": "elsewhere:9092"}]
    counts = FILTERS["mm2_inventory_broker_counts"](clusters, hostvars, ["kafka-a1", "kafka-a2", "kafka-b1"])
    assert counts == {"A": 2}


STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


@pytest.mark.parametrize("b_values, expected_b", [
    # the broker preflight ran: what it recorded of the rendered server.properties
    ({"__kafka_broker_authorizer": STANDARD}, True),
    ({"__kafka_broker_authorizer": "", "kafka_broker_authorizer_enabled": True}, False),
    # not part of the run (--limit): the host's inventory values, combined as the role combines them
    ({}, False),
    ({"kafka_broker_authorizer_enabled": True}, True),
    ({"kafka_broker_authorizer_enabled": "yes"}, True),
    ({"kafka_broker_authorizer_enabled": True, "kafka_broker_properties": {"authorizer.class.name": ""}}, False),
    ({"kafka_broker_default_properties": {"authorizer.class.name": "x.Authorizer"}}, True),
    ({"kafka_broker_default_properties": {"authorizer.class.name": "x.Authorizer"},
      "kafka_broker_properties": {"authorizer.class.name": " "}}, False),
    # a host the inventory points at a cluster run elsewhere says nothing about it
    ({"kafkaops_external_bootstrap_servers": "far:9092", "kafka_broker_authorizer_enabled": True}, None),
], ids=["recorded", "recorded-none", "limited-default", "limited-enabled", "limited-yes", "limited-emptied",
        "limited-defaults", "limited-defaults-emptied", "external"])
def test_inventory_authorizers_follow_the_bootstrap_hosts(b_values, expected_b):
    """A is found through the bootstrap servers its broker preflight derived, B by its host's
    inventory name; C runs elsewhere and is left out."""
    hostvars = {"kafka-a1": {"__kafka_broker_plan": {"brokers": ["kafka-a1"], "bootstrap_servers": "a1.dc:9092"},
                             "__kafka_broker_authorizer": ""},
                "kafka-b1": dict(b_values)}
    clusters = [{"alias": "A", "bootstrap_servers": ["a1.dc:9092"]}, {"alias": "B", "bootstrap_servers": "kafka-b1:9092"},
                {"alias": "C", "bootstrap_servers": "elsewhere:9092"}]
    expected = {"A": False} if expected_b is None else {"A": False, "B": expected_b}
    assert FILTERS["mm2_inventory_authorizers"](clusters, hostvars, ["kafka-a1", "kafka-b1"]) == expected
    # the broker counts need the plan: B's host has none
    assert FILTERS["mm2_inventory_broker_counts"](clusters, hostvars, ["kafka-a1", "kafka-b1"]) == {"A": 1}


def test_probe_targets_name_the_cluster_and_its_protocol():
    clusters = [{"alias": "A", "bootstrap_servers": "a:1, a2:1"},
                {"alias": "B", "bootstrap_servers": ["b:1"], "properties": {"security.protocol": "SASL_SSL"}}]
    assert FILTERS["mm2_probe_targets"](clusters, ["B"]) == [
        {"name": "mirrormaker_clusters[1] (alias B)", "bootstrap_servers": ["b:1"], "security_protocol": "SASL_SSL"}]


def test_worker_properties_rendered_per_target_of_a_herder():
    cfg = list(base())
    cfg[O] = dict(cfg[O] or {}, worker_defaults={"scheduled.rebalance.max.delay.ms": 30000})
    cfg[C][1].setdefault("properties", {})
    props = FILTERS["mm2_properties"](*cfg)
    assert props["B.scheduled.rebalance.max.delay.ms"] == "30000"
    # B->A is not listed, but runs a herder for its heartbeats (emit.heartbeats.enabled defaults to true)
    assert props["A.scheduled.rebalance.max.delay.ms"] == "30000"
    cfg[2] = dict(cfg[2], **{"emit.heartbeats.enabled": False})
    assert "A.scheduled.rebalance.max.delay.ms" not in FILTERS["mm2_properties"](*cfg)
    assert "scheduled.rebalance.max.delay.ms" not in props  # a top-level worker key is ignored by MM2


def test_worker_properties_refuse_client_keys():
    cfg = list(base())
    cfg[O] = dict(cfg[O] or {}, worker_defaults={"producer.linger.ms": 5})
    assert any(e.startswith("mirrormaker_worker_properties['producer.linger.ms']: worker keys only")
               for e in errors_of(cfg))


def test_plain_turns_nested_ordered_dicts_and_tuples_into_dicts_and_lists():
    nested = OrderedDict([("a", OrderedDict([("b", (1, OrderedDict([("c", 2)])))]))])
    result = values.plain(nested)
    assert result == {"a": {"b": [1, {"c": 2}]}}
    assert not isinstance(result, OrderedDict) and not isinstance(result["a"], OrderedDict)
    assert isinstance(result["a"]["b"], list) and not isinstance(result["a"]["b"][1], OrderedDict)
