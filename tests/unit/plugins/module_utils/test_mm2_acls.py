# -*- coding: utf-8 -*-
"""The ACL derivation: both layouts, both replication policies, active-active, the guide's lists.

The Red Hat guide's lists (disaster-recovery chapter, offset-syncs on the target) are typed from
the issue's wording; tests/unit/fixtures/redhat_dr/README.md says why the page could not be read
in full here.  The examples are the repository's own inventories, loaded as Ansible would.
"""

from __future__ import annotations

import os

import pytest
import yaml

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import acls as mm2_acls

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import connect as mm2_connect
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import model as mm2_model
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import tuning

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
MM2 = "User:mm2"


def _load(path):
    with open(os.path.join(REPO, path)) as handle:
        return yaml.safe_load(handle)


def _ops(acls, cluster, rtype, name, ptype="LITERAL"):
    return set(b["operation"] for b in acls.get(cluster, [])
               if (b["resource_type"], b["resource_name"], b["pattern_type"]) == (rtype, name, ptype))


def _all(acls, cluster):
    return set((b["operation"], b["resource_type"], b["resource_name"], b["pattern_type"]) for b in acls[cluster])


def _dr_plan(tasks_max=None, exactly_once=None, overrides=None, authorizers=None, topics=None):
    """mm2_connect.plan for inventories/disaster_recovery, with the connect role's defaults.

    tasks_max, topics: the flow's instead of the example's; authorizers: which clusters the
    inventory runs with an authorizer (none by default, as the example)."""
    inv = _load("inventories/disaster_recovery/group_vars/all.yml")
    defaults = {key: tuning.role_default(value) for key, value in _load("roles/connect/defaults/main.yml").items()}
    flow_defaults = defaults["connect_flow_default_properties"]
    eos = inv["mirrormaker_exactly_once"] if exactly_once is None else exactly_once
    settings = {"rest": {"port": 8083, "advertised_host": "west-connect-1"}, "secrets_dir": "/etc/kafka-connect/secrets",
                "worker_defaults": defaults["connect_worker_default_properties"],
                "connector_properties": overrides or {},
                "authorizers": {"east": False, "west": False} if authorizers is None else authorizers}
    props = dict(defaults["connect_default_properties"], **(inv.get("mirrormaker_properties") or {}))
    flows = [dict(flow, **({"topics": topics} if topics else {}), **({"tasks_max": tasks_max} if tasks_max else {}))
             for flow in inv["mirrormaker_flows"]]
    plan = mm2_connect.plan(inv["mirrormaker_clusters"], flows, props,
                            {"exactly_once": eos, "internal_rest": True, "flow_defaults": flow_defaults},
                            "east", "west", settings)
    assert plan["errors"] == []
    return plan


def _dr(**kwargs):
    wildcard = kwargs.pop("allow_wildcard", ())
    result = mm2_acls.derive_connect([_dr_plan(**kwargs)], MM2, wildcard)
    assert result["errors"] == []
    return result["acls"]


def _pulse(allow_wildcard=("topics", "groups")):
    inv = _load("inventories/pulse_example/group_vars/mirrormakers.yml")
    options = {"exactly_once": inv["mirrormaker_exactly_once"], "internal_rest": inv["mirrormaker_internal_rest"],
               "flow_defaults": inv["mirrormaker_flow_default_properties"]}
    props = dict(inv["mirrormaker_default_properties"], **inv["mirrormaker_properties"])
    return mm2_acls.derive_dedicated(inv["mirrormaker_clusters"], inv["mirrormaker_flows"], props, options,
                                     MM2, allow_wildcard)


def _dedicated(flows, properties=None, exactly_once=False, principals=MM2, allow_wildcard=()):
    clusters = [{"alias": "A", "bootstrap_servers": ["a1:9092"]}, {"alias": "B", "bootstrap_servers": ["b1:9092"]}]
    return mm2_acls.derive_dedicated(clusters, flows, properties or {},
                                     {"exactly_once": exactly_once, "internal_rest": True}, principals, allow_wildcard)


# ---------------------------------------------------------------- regexes


@pytest.mark.parametrize("regex, pattern", [
    ("orders", ("LITERAL", "orders")),
    ("orders.v1", ("LITERAL", "orders.v1")),
    (r"orders\.v1", ("LITERAL", "orders.v1")),
    ("mm2-smoke.*", ("PREFIXED", "mm2-smoke")),
    (r"dr\-.*", ("PREFIXED", "dr-")),
    ("app_", ("LITERAL", "app_")),
    (".*", None),
    ("orders|audit", None),
    ("orders.+", None),
    ("[a-z]+", None),
    (r"orders\.*", None),
    ("ord.*ers", None),
])
def test_regex_becomes_a_binding_only_when_literal_or_prefix(regex, pattern):
    assert mm2_acls.regex_pattern(regex) == pattern


def test_a_wildcard_regex_is_refused_naming_the_flow_and_the_opt_in():
    result = _dedicated([{"source": "A", "target": "B", "topics": ["orders", ".*"], "groups": ["app"]}])
    assert result["acls"] == {}
    assert len(result["errors"]) == 1
    assert "A->B topics '.*'" in result["errors"][0]
    assert "mm2_acls_allow_wildcard: [topics]" in result["errors"][0]


def test_default_groups_regex_is_refused_too():
    result = _dedicated([{"source": "A", "target": "B", "topics": ["orders"]}])
    assert [e for e in result["errors"] if "groups '.*'" in e]


def test_wildcard_opt_in_grants_every_topic_on_source_and_only_remote_ones_on_target():
    result = _dedicated([{"source": "A", "target": "B", "topics": [".*"], "groups": ["app"]}],
                        allow_wildcard=["topics"])
    assert result["errors"] == []
    assert _ops(result["acls"], "A", "TOPIC", "*") == {"READ", "DESCRIBE", "DESCRIBE_CONFIGS"}
    # DefaultReplicationPolicy: every remote topic starts with "A."
    assert _ops(result["acls"], "B", "TOPIC", "A.", "PREFIXED") == {"CREATE", "WRITE", "DESCRIBE", "ALTER", "ALTER_CONFIGS"}
    assert not _ops(result["acls"], "B", "TOPIC", "*")


def test_unknown_wildcard_kind_and_bad_principals_are_refused():
    result = _dedicated([{"source": "A", "target": "B", "topics": ["t"], "groups": ["g"]}],
                        principals={"A": "mm2", "C": "User:x"}, allow_wildcard=["everything"])
    errors = "\n".join(result["errors"])
    assert "mm2_acls_principals.A: 'mm2' is not a principal of the form User:<name>" in errors
    assert "mm2_acls_principals: no principal for cluster B" in errors
    assert "mm2_acls_principals.C: no such cluster" in errors
    assert "mm2_acls_allow_wildcard: 'everything'" in errors


def test_a_policy_whose_remote_names_cannot_be_predicted_is_refused():
    result = _dedicated([{"source": "A", "target": "B", "topics": ["t"], "groups": ["g"],
                          "replication_policy": "com.example.MyPolicy"}])
    assert [e for e in result["errors"] if "com.example.MyPolicy" in e and "cannot be predicted" in e]


# ------------------------------------------------------- the guide's lists


# The guide's section 5.7 lists for the example's topics (orders, payments, shipments-.*) and groups
# (billing, fulfilment-.*); identity replication keeps the topic names on the target.
TOPICS = [("orders", "LITERAL"), ("payments", "LITERAL"), ("shipments-", "PREFIXED")]
GROUPS = [("billing", "LITERAL"), ("fulfilment-", "PREFIXED")]
CLUSTER = ("CLUSTER", "kafka-cluster", "LITERAL")
GUIDE_SOURCE = set((op, "TOPIC", name, ptype) for name, ptype in TOPICS for op in ("READ", "DESCRIBE", "DESCRIBE_CONFIGS"))
GUIDE_SOURCE |= set(("DESCRIBE", "GROUP", name, ptype) for name, ptype in GROUPS) | {("DESCRIBE",) + CLUSTER}
GUIDE_TARGET = set((op, "TOPIC", name, ptype) for name, ptype in TOPICS
                   for op in ("CREATE", "DESCRIBE", "WRITE", "ALTER", "ALTER_CONFIGS", "READ"))
GUIDE_TARGET |= set((op, "GROUP", name, ptype) for name, ptype in GROUPS for op in ("DESCRIBE", "READ"))
GUIDE_TARGET |= set((op, "TOPIC", "mm2-offset-syncs.east.internal", "LITERAL") for op in ("CREATE", "DESCRIBE", "WRITE", "READ"))
GUIDE_TARGET |= set((op, "TOPIC", "east.checkpoints.internal", "LITERAL") for op in ("CREATE", "DESCRIBE", "WRITE"))
GUIDE_TARGET |= {("DESCRIBE",) + CLUSTER, ("ALTER",) + CLUSTER}
# What only the ACL sync needs (and the DESCRIBE the guide lists beside ALTER on the target).
SYNC_SOURCE = {("DESCRIBE",) + CLUSTER}
SYNC_TARGET = {("DESCRIBE",) + CLUSTER, ("ALTER",) + CLUSTER}


def _target_extra(tasks=8):
    """What the derivation grants on the target beyond the guide's list (docs/acls.md)."""
    group = "connect-mirrormaker-east-to-west"
    internal = ["__%s-%s" % (group, kind) for kind in ("offsets", "configs", "status")]
    extra = {("READ", "TOPIC", "east.checkpoints.internal", "LITERAL"),  # CheckpointStore on start
             ("READ", "GROUP", group, "LITERAL")}
    extra |= set((op, "TOPIC", t, "LITERAL") for t in internal for op in ("CREATE", "READ", "WRITE", "DESCRIBE"))
    extra |= set((op, "TRANSACTIONAL_ID", "connect-cluster-" + group, "LITERAL") for op in ("WRITE", "DESCRIBE"))
    for connector in ("MirrorSourceConnector", "MirrorCheckpointConnector"):
        for task in range(tasks):
            name = "%s-east-to-west-%s-%d" % (group, connector, task)
            extra |= set((op, "TRANSACTIONAL_ID", name, "LITERAL") for op in ("WRITE", "DESCRIBE"))
    return extra


# authorizers (what the inventory shows), the connector properties given, the sync value expected
SYNC_CASES = [
    ({"east": True, "west": True}, {}, "true"),
    ({"east": False, "west": False}, {}, "false"),
    ({"east": True, "west": False}, {}, "false"),
    ({}, {}, "true"),  # clusters run elsewhere: MirrorMaker 2's default
    ({"east": False, "west": False}, {"MirrorSourceConnector": {"sync.topic.acls.enabled": True}}, "true"),
    ({"east": True, "west": True}, {"MirrorSourceConnector": {"sync.topic.acls.enabled": False}}, "false"),
]


@pytest.mark.parametrize("authorizers, overrides, sync", SYNC_CASES,
                         ids=["authorizers", "none", "one-side", "elsewhere", "user-on", "user-off"])
def test_dr_example_gives_the_guides_lists_with_the_acl_sync_and_drops_only_its_bindings_without(
        authorizers, overrides, sync):
    """With sync.topic.acls.enabled (the clusters use an authorizer, the case the guide's lists are
    for) the source gets exactly the guide's list (offset syncs on the target) and the target the
    guide's list plus what Kafka itself needs; without it, the same less the cluster bindings only
    the ACL sync needs. A setting in the connector properties wins over the inventory."""
    plan = _dr_plan(authorizers=authorizers, overrides=overrides)
    assert plan["connectors"]["east-to-west-MirrorSourceConnector"]["sync.topic.acls.enabled"] == sync
    acls = _dr(authorizers=authorizers, overrides=overrides)
    on = sync == "true"
    assert _all(acls, "east") == (GUIDE_SOURCE if on else GUIDE_SOURCE - SYNC_SOURCE)
    assert _all(acls, "west") == (GUIDE_TARGET if on else GUIDE_TARGET - SYNC_TARGET) | _target_extra()
    classes = set(c for cluster in acls.values() for b in cluster if b["resource_type"] == "CLUSTER" for c in b["classes"])
    assert classes == ({"source-acls", "target-acls", "guide"} if on else set())


def test_dr_without_exactly_once_has_no_transactional_ids():
    acls = _dr(exactly_once=False)
    assert not [b for b in acls["west"] if b["resource_type"] == "TRANSACTIONAL_ID"]


def test_transactional_ids_follow_tasks_max():
    ids = set(b["resource_name"] for b in _dr(tasks_max=2)["west"] if b["resource_type"] == "TRANSACTIONAL_ID")
    assert len(ids) == 1 + 2 + 2


def test_guides_kafka_acls_example_for_the_offset_syncs_topic():
    bindings = [b for b in _dr()["west"] if b["resource_name"] == "mm2-offset-syncs.east.internal"]
    assert mm2_acls.kafka_acls_commands(bindings, "localhost:9092") == [
        "./bin/kafka-acls.sh --bootstrap-server localhost:9092 --add --allow-principal User:mm2"
        " --operation Create --operation Describe --operation Read --operation Write"
        " --topic mm2-offset-syncs.east.internal"]


def test_every_binding_names_a_known_class():
    for acls in (_dr(), _pulse()["acls"]):
        for bindings in acls.values():
            for b in bindings:
                assert b["classes"] and set(b["classes"]) <= set(mm2_acls.CLASSES)


# ------------------------------------------------------------ dedicated mode


def test_dedicated_one_way_flow_runs_the_reverse_herder_for_heartbeats():
    result = _dedicated([{"source": "A", "target": "B", "topics": ["orders"], "groups": ["app"]}])
    acls = result["acls"]
    assert result["errors"] == []
    # default location: the offset syncs live on the source, named after the target
    assert _ops(acls, "A", "TOPIC", "mm2-offset-syncs.B.internal") == {"CREATE", "WRITE", "DESCRIBE", "READ"}
    assert not _ops(acls, "B", "TOPIC", "mm2-offset-syncs.A.internal")
    # herder A->B on B, heartbeat-only herder B->A on A
    assert _ops(acls, "B", "GROUP", "A-mm2") == {"READ"}
    assert _ops(acls, "A", "GROUP", "B-mm2") == {"READ"}
    assert _ops(acls, "A", "TOPIC", "mm2-offsets.B.internal") == {"CREATE", "READ", "WRITE", "DESCRIBE"}
    assert _ops(acls, "A", "TOPIC", "heartbeats") >= {"CREATE", "WRITE", "READ"}
    assert _ops(acls, "B", "TOPIC", "A.heartbeats") >= {"CREATE", "WRITE"}
    assert _ops(acls, "B", "TOPIC", "A.orders") == {"CREATE", "WRITE", "DESCRIBE", "ALTER", "ALTER_CONFIGS"}
    # B is never read as a source
    assert not _ops(acls, "B", "TOPIC", "orders")


def test_dedicated_without_heartbeats_runs_no_reverse_herder():
    result = _dedicated([{"source": "A", "target": "B", "topics": ["orders"], "groups": ["app"]}],
                        {"emit.heartbeats.enabled": False, "heartbeats.replication.enabled": False})
    acls = result["acls"]
    assert not _ops(acls, "A", "GROUP", "B-mm2")
    assert not [b for b in acls["A"] if b["resource_name"] == "heartbeats"]
    assert "heartbeats" not in set(b["resource_name"] for b in acls["B"])


def test_settings_turned_off_drop_their_bindings():
    result = _dedicated([{"source": "A", "target": "B", "topics": ["orders"], "groups": ["app"]}],
                        {"sync.topic.acls.enabled": False, "sync.topic.configs.enabled": False,
                         "emit.checkpoints.enabled": False})
    acls = result["acls"]
    assert not [b for b in acls["A"] + acls["B"] if b["resource_type"] == "CLUSTER"]
    assert not [b for b in acls["A"] + acls["B"] if b["operation"] in ("DESCRIBE_CONFIGS", "ALTER_CONFIGS")
                and b["resource_name"] != "heartbeats"]
    assert not [b for b in acls["A"] if b["resource_type"] == "GROUP" and b["resource_name"] == "app"]
    assert not _ops(acls, "B", "TOPIC", "A.checkpoints.internal")
    # offset syncs are still written, no longer read
    assert _ops(acls, "A", "TOPIC", "mm2-offset-syncs.B.internal") == {"CREATE", "WRITE", "DESCRIBE"}


def test_dedicated_offset_syncs_on_target_and_identity_policy():
    result = _dedicated([{"source": "A", "target": "B", "topics": ["orders"], "groups": ["app"],
                          "replication_policy": "identity", "properties": {"offset-syncs.topic.location": "target"}}])
    acls = result["acls"]
    assert result["errors"] == []
    assert _ops(acls, "B", "TOPIC", "mm2-offset-syncs.A.internal") == {"CREATE", "WRITE", "DESCRIBE", "READ"}
    assert not _ops(acls, "A", "TOPIC", "mm2-offset-syncs.B.internal")
    assert _ops(acls, "B", "TOPIC", "orders") == {"CREATE", "WRITE", "DESCRIBE", "ALTER", "ALTER_CONFIGS"}


def test_dedicated_exactly_once_transactional_ids_per_herder():
    result = _dedicated([{"source": "A", "target": "B", "topics": ["orders"], "groups": ["app"]}],
                        {"tasks.max": 2}, exactly_once=True)
    ids = set(b["resource_name"] for b in result["acls"]["B"] if b["resource_type"] == "TRANSACTIONAL_ID")
    assert {"connect-cluster-A-mm2", "A-mm2-MirrorSourceConnector-0", "A-mm2-MirrorSourceConnector-1",
            "A-mm2-MirrorCheckpointConnector-0", "A-mm2-MirrorCheckpointConnector-1",
            "A-mm2-MirrorHeartbeatConnector-0"} == ids


def test_pulse_active_active_both_clusters_are_source_and_target():
    result = _pulse()
    assert result["errors"] == []
    acls = result["acls"]
    for here, there in (("clusterA", "clusterB"), ("clusterB", "clusterA")):
        assert _ops(acls, here, "TOPIC", "*") == {"READ", "DESCRIBE", "DESCRIBE_CONFIGS"}
        remote = {"CREATE", "WRITE", "DESCRIBE", "ALTER", "ALTER_CONFIGS"}
        assert _ops(acls, here, "TOPIC", there + ".", "PREFIXED") == remote
        assert _ops(acls, here, "GROUP", there + "-mm2") == {"READ"}
        assert _ops(acls, here, "TOPIC", "%s.checkpoints.internal" % there) == {"CREATE", "WRITE", "DESCRIBE", "READ"}
        syncs = "mm2-offset-syncs.%s.internal" % there
        assert _ops(acls, here, "TOPIC", syncs) == {"CREATE", "WRITE", "DESCRIBE", "READ"}
        assert _ops(acls, here, "CLUSTER", "kafka-cluster") == {"DESCRIBE", "ALTER"}


def test_pulse_example_without_opt_in_is_refused_for_topics_and_groups():
    errors = _pulse(allow_wildcard=())["errors"]
    assert len([e for e in errors if "topics '.*'" in e]) == 2
    assert len([e for e in errors if "groups '.*'" in e]) == 2


def test_table_groups_operations_per_resource():
    rows = mm2_acls.table(_dr())
    row = [r for r in rows if r["resource"] == "TOPIC:LITERAL:mm2-offset-syncs.east.internal"][0]
    assert row["cluster"] == "west" and row["operations"] == "CREATE,DESCRIBE,READ,WRITE"
    assert row["classes"] == "offset-syncs"


def test_filters_take_what_the_roles_hold():
    from ansible_collections.kafkaops.mirrormaker.plugins.filter.acls import FilterModule
    filters = FilterModule().filters()
    clusters = [{"alias": "A", "bootstrap_servers": ["a1:9092"]}, {"alias": "B", "bootstrap_servers": ["b1:9092"]}]
    props = mm2_model.build_properties(clusters, [{"source": "A", "target": "B", "topics": ["orders"], "groups": ["app"]}],
                                       {}, {"internal_rest": True})
    result = filters["mm2_acls"](props, {"A": "User:mm2-a", "B": "User:mm2-b"})
    assert result["errors"] == []
    assert result["bootstrap_servers"] == {"A": "a1:9092", "B": "b1:9092"}
    assert set(b["principal"] for b in result["acls"]["A"]) == {"User:mm2-a"}
    lines = filters["mm2_acls_table"](result["acls"])
    assert lines[0].split() == ["CLUSTER", "PRINCIPAL", "RESOURCE", "OPERATIONS", "CLASSES"]
    assert [line for line in lines if "TOPIC:LITERAL:A.orders" in line and "target-write,target-configs" in line]
    connect = filters["mm2_acls"]([], MM2, [], plans=[_dr_plan()])
    assert connect["bootstrap_servers"]["east"].startswith("east-kafka-1")
    both = filters["mm2_acls"]([props], MM2, [], plans=[_dr_plan()])
    assert set(both["acls"]) == {"A", "B", "east", "west"}


def test_a_connect_flow_fault_names_connect_flows():
    plan = _dr_plan(topics=[".*"])
    result = mm2_acls.derive_connect([plan], MM2, ())
    assert result["errors"] and all(e.startswith("connect_flows:") for e in result["errors"])


# ---------------------------------------------------------------- the role's input

def _dedicated_properties():
    clusters = [{"alias": "A", "bootstrap_servers": ["a1:9092"]}, {"alias": "B", "bootstrap_servers": ["b1:9092"]}]
    model = mm2_model.load(clusters, [{"source": "A", "target": "B", "topics": ["orders"], "groups": ["billing"]}],
                           {}, {"exactly_once": False, "internal_rest": True})
    assert model.errors == []
    return dict(model.properties())


@pytest.mark.parametrize("property_sets, admin, expected", [
    ([], [], ["mm2_acls_principals: no MirrorMaker 2 to derive ACLs for (no host of mirrormakers or connect_workers "
              "was checked in this run)"]),
    (None, ["A", "B"], []),
    (None, ["A", "C", "D"], ["mm2_acls_admin: C, D not a cluster alias of the MirrorMaker 2 configuration"]),
], ids=["nothing-to-derive", "admin-known", "admin-unknown"])
def test_layouts_refuse_an_empty_input_and_admin_logins_for_unknown_clusters(property_sets, admin, expected):
    sets = [_dedicated_properties()] if property_sets is None else property_sets
    result = mm2_acls.derive_layouts(sets, [], MM2, (), admin)
    assert result["errors"] == expected
