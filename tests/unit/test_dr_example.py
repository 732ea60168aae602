# -*- coding: utf-8 -*-
"""inventories/disaster_recovery against the Red Hat guide's own examples.

Guide: Red Hat, "Setting up MirrorMaker for disaster recovery" (../shared/sources at the time of
writing). Its worker properties, both connector examples and both ACL lists are in
tests/unit/fixtures/redhat_dr, copied from the page's text unchanged (placeholders kept). The
connect role's own preflight (argument spec, rules, the connect_plan action) and the mm2_acls
preflight run with ansible-playbook against the example inventory for a worker host; the plan's
worker properties and connector configs are compared with the guide's key for key, both ways, and
the derived ACLs with the guide's lists. Every difference is a named departure with its reason; a
difference not named fails, and so does a named one that is no longer a difference.

Both ways the example can run: as it is (brokers without an authorizer: the connect role sets
``sync.topic.acls.enabled=false``, the guide's example value) and with
``kafka_broker_authorizer_enabled: true`` on the brokers (the ACL sync on, the case the guide's
ACL lists are written for: "Most production environments use authorizations").
"""

from __future__ import annotations

import json
import os
import re

import pytest

import local_playbook
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.properties import parse_properties

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
INVENTORY = os.path.join(REPO, "inventories", "disaster_recovery")
WORKER = "west-connect-1.example.invalid"
EAST = "east-kafka-1.example.invalid:9092,east-kafka-2.example.invalid:9092,east-kafka-3.example.invalid:9092"
WEST = "west-kafka-1.example.invalid:9092,west-kafka-2.example.invalid:9092,west-kafka-3.example.invalid:9092"

FIXTURES = os.path.join(REPO, "tests", "unit", "fixtures", "redhat_dr")
# The example's topic and group lists, as the connectors get them.
TOPICS = ["orders", "payments", "shipments-.*"]
GROUPS = ["billing", "fulfilment-.*"]
# The guide's placeholders and aliases, as the example inventory fills them in.
PLACES = {"<SOURCE_BOOTSTRAP_SERVERS>": EAST, "<TARGET_BOOTSTRAP_SERVERS>": WEST,
          "<TOPICS>": ",".join(TOPICS), "<GROUPS>": ",".join(GROUPS)}
ALIASES = {"A": "east", "B": "west"}


def _fill(value):
    value = PLACES.get(value, value).replace("A-to-B", "%s-to-%s" % (ALIASES["A"], ALIASES["B"]))
    return ALIASES.get(value, value)


def guide_worker():
    """The guide's connect-distributed.properties, typed exactly, with the example's names."""
    with open(os.path.join(FIXTURES, "connect-distributed.properties"), encoding="utf-8") as handle:
        return {key: _fill(value) for key, value in parse_properties(handle.read()).items()}


def guide_connector(name):
    """One of the guide's connector examples, typed exactly, with the example's names."""
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        doc = json.load(handle)
    return _fill(doc["name"]), {key: _fill(value) for key, value in doc["config"].items()}


# Where the plan departs from the guide's examples, key by key, and why. A difference not listed
# here fails, and so does a listed one that is no longer a difference.
WORKER_DEPARTURES = {
    "header.converter": "added: ByteArrayConverter for headers too, so that headers are copied as bytes like the "
                        "records' keys and values",
    "config.providers": "added: the file config provider keeps the clusters' secrets out of the connector configs",
    "config.providers.file.class": "added: the file config provider's class",
    "listeners": "added: the guide names the key and its default http://:8083 but its example leaves it out; the "
                 "role sets it from connect_rest_port",
    "rest.advertised.host.name": "added: the other workers reach this one at its host name (connect_advertised_host)",
    "rest.advertised.port": "added: with rest.advertised.host.name",
    "rest.advertised.listener": "added: with rest.advertised.host.name",
    "scheduled.rebalance.max.delay.ms": "added: a dead worker's tasks move after 30 s instead of 300 s",
    "offset.flush.interval.ms": "added: at most 10 s of records sent again after a crash without exactly-once",
}
# Every connector of a flow gets the flow's whole configuration, as dedicated mode gives every herder.
SHARED_REASON = "added: every connector of a flow gets the flow's whole configuration, as in dedicated mode"
TUNING_REASON = "added: the collection's client tuning (bench/mm2_throughput), for the task's consumer of the source"
SOURCE_DEPARTURES = {
    "tasks.max": "8, not 30: the guide's rule, as many tasks as CPU cores in the Connect cluster (the example's two "
                 "workers of 4 cores); the guide's examples set 30 (docs/disaster_recovery.md)",
    "exactly.once.support": "added: exactly-once (mirrormaker_exactly_once), which the guide's section 5.5 "
                            "describes",
    "transaction.boundary": "added: poll, the default the guide's section 5.5 names, written out",
    "producer.override.batch.size": "added: the collection's tuning (bench/mm2_throughput); the guide suggests a "
                                    "larger batch size for high throughput",
    "producer.override.linger.ms": "added: the collection's tuning (bench/mm2_throughput)",
    "producer.override.compression.type": "added: the collection's tuning; the guide suggests compression for high "
                                          "throughput",
    "groups": SHARED_REASON, "emit.checkpoints.enabled": SHARED_REASON,
    "emit.checkpoints.interval.seconds": SHARED_REASON, "emit.heartbeats.enabled": SHARED_REASON,
    "sync.group.offsets.enabled": SHARED_REASON, "sync.group.offsets.interval.seconds": SHARED_REASON,
    "refresh.groups.interval.seconds": SHARED_REASON,
    "refresh.topics.interval.seconds": "added: 60 s instead of 600 s, so that new topics are found sooner",
    "sync.topic.configs.enabled": "added: MirrorMaker 2's default (true), written out", "checkpoints.topic.replication.factor": SHARED_REASON,
    "heartbeats.topic.replication.factor": SHARED_REASON,
    "consumer.fetch.max.bytes": TUNING_REASON, "consumer.max.partition.fetch.bytes": TUNING_REASON,
    "consumer.max.poll.records": TUNING_REASON,
}
CHECKPOINT_DEPARTURES = {
    "tasks.max": SOURCE_DEPARTURES["tasks.max"],
    "emit.checkpoints.enabled": "added: MirrorMaker 2's default (true), written out",
    "emit.checkpoints.interval.seconds": "added: 10 s instead of 60 s, so that offsets are translated sooner",
    "sync.group.offsets.interval.seconds": "added: 10 s instead of 60 s, so that offsets are committed sooner",
    "refresh.groups.interval.seconds": "added: 60 s instead of 600 s, so that new groups are found sooner",
    "topics": "added: the flow's topics, whose groups' offsets the connector translates",
    "transaction.boundary": "added: poll, the flow's boundary, which every connector of the flow gets (an "
                            "exactly-once worker runs every source task in transactions)",
    "heartbeats.replication.enabled": SHARED_REASON, "replication.factor": SHARED_REASON,
    "offset-syncs.topic.replication.factor": SHARED_REASON, "emit.heartbeats.enabled": SHARED_REASON,
    "refresh.topics.interval.seconds": SHARED_REASON, "sync.topic.configs.enabled": SHARED_REASON,
    "heartbeats.topic.replication.factor": SHARED_REASON,
    "consumer.fetch.max.bytes": SHARED_REASON, "consumer.max.partition.fetch.bytes": SHARED_REASON,
    "consumer.max.poll.records": SHARED_REASON, "producer.override.batch.size": SHARED_REASON,
    "producer.override.linger.ms": SHARED_REASON, "producer.override.compression.type": SHARED_REASON,
}


def differences(guide, ours):
    """Keys missing, extra or with another value, either way."""
    return sorted(key for key in set(guide) | set(ours) if guide.get(key) != ours.get(key))


# With an authorizer on the brokers: what changes from the example as it is, and why.
AUTHORIZER_SOURCE_DEPARTURES = {
    "sync.topic.acls.enabled": "true: the clusters run an authorizer, and the guide turns the ACL sync off only "
                               "\"If you don't use authorizations\"",
}

BROKERS = """
# the broker preflight as the preflight play runs it first: it records each broker's authorizer
- hosts: kafka_brokers
  connection: local
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: kafkaops.mirrormaker.kafka_broker
        tasks_from: preflight
"""
PLAYBOOK = """
- hosts: {worker}
  connection: local
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: kafkaops.mirrormaker.connect
        tasks_from: preflight
    - ansible.builtin.copy:
        content: "{{{{ __connect_plan | to_json }}}}"
        dest: {dest}
        mode: "0600"
    # the ACL preflight as the preflight play runs it: once, from the workers' plans
    - ansible.builtin.include_role:
        name: kafkaops.mirrormaker.mm2_acls
        tasks_from: preflight
      run_once: true
    - ansible.builtin.copy:
        content: "{{{{ __mm2_acls_derived | to_json }}}}"
        dest: {acls}
        mode: "0600"
"""
# The two ways the example runs: as it is, and with an authorizer on every broker.
AUTHORIZER = {"as-is": False, "authorizer": True}


def _plan(work, authorizer, brokers=True):
    """The plan and the derived ACLs of the example's first worker; ``brokers`` false: as a run
    limited to the workers (``--limit connect_workers``) builds them, without the brokers' preflight."""
    dest = work / "plan.json"
    playbook = work / "plan.yml"
    playbook.write_text((BROKERS if brokers else "") + PLAYBOOK.format(worker=WORKER, dest=dest, acls=work / "acls.json"))
    result = local_playbook.run(playbook, "-e", "connect_advertised_host=" + WORKER,
                                "-e", "kafka_broker_advertised_host={{ inventory_hostname }}",
                                "-e", json.dumps({"kafka_broker_authorizer_enabled": authorizer}),
                                inventory=INVENTORY)
    assert result.returncode == 0, result.stdout + result.stderr
    return dict(json.loads(dest.read_text()), acls=json.loads((work / "acls.json").read_text()), output=result.stdout)


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    return {name: _plan(tmp_path_factory.mktemp(name), authorizer) for name, authorizer in AUTHORIZER.items()}


@pytest.fixture(scope="module")
def plan(plans):
    """The example as it is."""
    return plans["as-is"]


def test_worker_properties_key_for_key(plan):
    assert plan["errors"] == []
    assert differences(guide_worker(), plan["worker_properties"]) == sorted(WORKER_DEPARTURES)


@pytest.mark.parametrize("variant, fixture, departures", [
    ("as-is", "mirror-source-connector.json", SOURCE_DEPARTURES),
    ("as-is", "mirror-checkpoint-connector.json", CHECKPOINT_DEPARTURES),
    ("authorizer", "mirror-source-connector.json", dict(SOURCE_DEPARTURES, **AUTHORIZER_SOURCE_DEPARTURES)),
    ("authorizer", "mirror-checkpoint-connector.json", CHECKPOINT_DEPARTURES),
])
def test_connector_key_for_key(plans, variant, fixture, departures):
    plan = plans[variant]
    assert list(plan["connectors"]) == ["east-to-west-MirrorSourceConnector", "east-to-west-MirrorCheckpointConnector"]
    name, guide = guide_connector(fixture)
    found = differences(guide, plan["connectors"][name])
    assert found == sorted(departures), (sorted(set(found) - set(departures)), sorted(set(departures) - set(found)))


@pytest.mark.parametrize("variant", list(AUTHORIZER))
def test_a_run_limited_to_the_workers_renders_the_same_connectors(plans, tmp_path, variant):
    """Without the brokers' preflight in the run, their inventory values say whether they run an
    authorizer: the connectors, and so what connect_connector would PUT, stay the same."""
    limited = _plan(tmp_path, AUTHORIZER[variant], brokers=False)
    assert limited["connectors"] == plans[variant]["connectors"]


def test_the_example_keeps_the_guides_operating_rules(plans):
    """Both clusters alike (three brokers each, the same authorizer setting), no flow into the
    primary: the connect preflight warns about none of the guide's operating rules."""
    for plan in plans.values():
        assert plan["warnings"] == []
        assert "[WARNING]" not in plan["output"]


def test_no_secret_files_without_secrets(plan):
    assert plan["secret_files"] == {}


# What the guide's ACL bullets name, as (resource type, name, pattern type) in the example: its
# topics and groups are names and prefixes, and IdentityReplicationPolicy keeps the topic names on
# the target, so "each mirrored topic" is the same resources as "each topic to mirror".
TOPIC_RESOURCES = [("TOPIC", "orders", "LITERAL"), ("TOPIC", "payments", "LITERAL"), ("TOPIC", "shipments-", "PREFIXED")]
GROUP_RESOURCES = [("GROUP", "billing", "LITERAL"), ("GROUP", "fulfilment-", "PREFIXED")]
RESOURCES = {
    "each topic to mirror": TOPIC_RESOURCES, "each mirrored topic": TOPIC_RESOURCES,
    "each topic with offsets for each mirrored consumer group": TOPIC_RESOURCES,
    "each consumer group to mirror": GROUP_RESOURCES, "each mirrored consumer group": GROUP_RESOURCES,
    "the cluster": [("CLUSTER", "kafka-cluster", "LITERAL")],
    "the offset-syncs topic": [("TOPIC", "mm2-offset-syncs.east.internal", "LITERAL")],
    "the checkpoints topic": [("TOPIC", "east.checkpoints.internal", "LITERAL")],
}
BULLET = re.compile(r"^\s*\u2022 (?P<operations>[A-Z_]+(?:(?:, | and )[A-Z_]+)*) (?:on|for) (?P<what>.+)$")


def guide_acls():
    """{"source"|"target": {(operation, resource type, name, pattern type)}} from the guide's two lists, typed exactly."""
    with open(os.path.join(FIXTURES, "acls.txt"), encoding="utf-8") as handle:
        text = handle.read()
    lists, side = {"source": set(), "target": set()}, None
    for line in text.splitlines():
        if "Source cluster access control" in line:
            side = "source"
        elif "Target cluster access control" in line:
            side = "target"
        match = BULLET.match(line)
        if match:
            for rtype, name, pattern in RESOURCES[match.group("what")]:
                for operation in re.split(r", | and ", match.group("operations")):
                    lists[side].add((operation, rtype, name, pattern))
    return lists


# What the derivation grants on the target beyond the guide's list, and why (docs/acls.md): a
# binding none of these names fails, and so does a reason no binding needs any more.
WORKER_TOPICS = {"__connect-mirrormaker-east-to-west-" + kind for kind in ("offsets", "configs", "status")}
TARGET_ACL_DEPARTURES = {
    "the Connect workers' own group and storage topics; the guide gives the workers the connectors' identity but "
    "lists no grant for them": lambda b: (b[1] == "TOPIC" and b[2] in WORKER_TOPICS and b[0] in (
        "CREATE", "DESCRIBE", "READ", "WRITE")) or b == ("READ", "GROUP", "connect-mirrormaker-east-to-west", "LITERAL"),
    "exactly-once (the guide's section 5.5): the worker's and every source task's transactional id":
        lambda b: b[1] == "TRANSACTIONAL_ID" and b[0] in ("DESCRIBE", "WRITE"),
    "the checkpoint task reads the checkpoints topic back when it starts (CheckpointStore)":
        lambda b: b == ("READ", "TOPIC", "east.checkpoints.internal", "LITERAL"),
}
# What the guide lists and the derivation leaves out when sync.topic.acls.enabled is false (the
# example as it is: its brokers run no authorizer, so no ACL applies at all), and why.
CLUSTER = "kafka-cluster"
NO_SYNC_ACL_DEPARTURES = {
    "DESCRIBE on the source cluster: only the ACL sync needs it (describeAcls)":
        lambda side, b: side == "source" and b == ("DESCRIBE", "CLUSTER", CLUSTER, "LITERAL"),
    "ALTER on the target cluster: only the ACL sync needs it (createAcls)":
        lambda side, b: side == "target" and b == ("ALTER", "CLUSTER", CLUSTER, "LITERAL"),
    "DESCRIBE on the target cluster: no call of Kafka 4.x needs it; the guide lists it beside ALTER, and the "
    "collection grants it with ALTER":
        lambda side, b: side == "target" and b == ("DESCRIBE", "CLUSTER", CLUSTER, "LITERAL"),
}


def test_the_guides_acl_lists_are_read_whole():
    lists = guide_acls()
    # 3 source topic resources x 3 operations + the cluster + 2 groups; on the target 3 topic
    # resources x (5 + 1) + 2 groups x 2 + 4 offset-syncs + 3 checkpoints + 2 on the cluster
    assert len(lists["source"]) == 3 * 3 + 1 + 2 and len(lists["target"]) == 3 * 6 + 2 * 2 + 4 + 3 + 2


def _derived(plan):
    derived = plan["acls"]
    assert derived["errors"] == []
    assert set(b["principal"] for bindings in derived["acls"].values() for b in bindings) == {"User:mm2"}
    return dict((cluster, set((b["operation"], b["resource_type"], b["resource_name"], b["pattern_type"])
                              for b in bindings)) for cluster, bindings in derived["acls"].items())


def _named(found, departures):
    """Each binding of ``found`` named by exactly one departure, and every departure naming one."""
    reasons = {item: [why for why, names in departures.items() if names(*item)] for item in found}
    assert [item for item, why in sorted(reasons.items()) if len(why) != 1] == []
    assert {why[0] for why in reasons.values()} == set(departures)


@pytest.mark.parametrize("variant, sync", [("as-is", "false"), ("authorizer", "true")])
def test_the_example_derives_the_guides_acl_lists(plans, variant, sync):
    """The mm2_acls preflight, run on the example's workers, derives the guide's lists: with the ACL
    sync on, on the source (offset syncs on the target) exactly and on the target the guide's list
    and the grants named; with it off, without the cluster bindings only the sync needs."""
    plan = plans[variant]
    assert plan["connectors"]["east-to-west-MirrorSourceConnector"]["sync.topic.acls.enabled"] == sync
    got, guide = _derived(plan), guide_acls()
    left_out = set(("source", b) for b in guide["source"] - got["east"]) | set(
        ("target", b) for b in guide["target"] - got["west"])
    if sync == "true":
        assert left_out == set()
    else:
        _named(left_out, NO_SYNC_ACL_DEPARTURES)
    assert got["east"] <= guide["source"]
    _named(set((b,) for b in got["west"] - guide["target"]), TARGET_ACL_DEPARTURES)
