# -*- coding: utf-8 -*-
"""inventories/disaster_recovery reproduces the Red Hat guide's disaster-recovery layout.

Guide: "Disaster Recovery using MirrorMaker 2" (Red Hat Streams for Apache Kafka 3.x, chapter 5,
"Setting up MirrorMaker for disaster recovery"); see tests/unit/fixtures/redhat_dr/README.md for
how the lists below were typed. The connect role's own preflight (argument spec, rules, the
connect_plan action) runs with ansible-playbook against the example inventory for a worker host;
its plan's worker properties and both connector configs are compared key for key with the guide's.
The collection adds keys of its own (the file config provider, the header converter, the REST
advertisement, restart tuning, the shared flow keys every connector of a flow gets as in dedicated
mode): they are listed here, so that any other extra key or any difference fails.
"""

from __future__ import annotations

import json
import os

import pytest

import local_playbook

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
INVENTORY = os.path.join(REPO, "inventories", "disaster_recovery")
WORKER = "west-connect-1.example.invalid"
EAST = "east-kafka-1.example.invalid:9092,east-kafka-2.example.invalid:9092,east-kafka-3.example.invalid:9092"
WEST = "west-kafka-1.example.invalid:9092,west-kafka-2.example.invalid:9092,west-kafka-3.example.invalid:9092"

GUIDE_WORKER = {
    "bootstrap.servers": WEST,
    "group.id": "connect-mirrormaker-east-to-west",
    "plugin.discovery": "service_load",
    "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
    "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
    "config.storage.topic": "__connect-mirrormaker-east-to-west-configs",
    "offset.storage.topic": "__connect-mirrormaker-east-to-west-offsets",
    "status.storage.topic": "__connect-mirrormaker-east-to-west-status",
    "config.storage.replication.factor": "-1",
    "offset.storage.replication.factor": "-1",
    "status.storage.replication.factor": "-1",
    "listeners": "http://:8083",
    "exactly.once.source.support": "enabled",
}
COLLECTION_WORKER = {
    "header.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
    "config.providers": "file",
    "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
    "rest.advertised.host.name": WORKER,
    "rest.advertised.port": "8083",
    "rest.advertised.listener": "http",
    "scheduled.rebalance.max.delay.ms": "30000",
    "offset.flush.interval.ms": "10000",
}
GUIDE_COMMON = {
    "source.cluster.alias": "east",
    "target.cluster.alias": "west",
    "source.cluster.bootstrap.servers": EAST,
    "target.cluster.bootstrap.servers": WEST,
    "replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
    "offset-syncs.topic.location": "target",
    "topics": ".*",
}
GUIDE_SOURCE = dict(GUIDE_COMMON, **{
    "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
    "tasks.max": "4",
    "heartbeats.replication.enabled": "false",
    "replication.factor": "-1",
    "offset-syncs.topic.replication.factor": "-1",
    "exactly.once.support": "required",
    "consumer.isolation.level": "read_committed",
    "transaction.boundary": "poll",
    "producer.override.batch.size": "1048576",
    "producer.override.linger.ms": "20",
    "producer.override.compression.type": "lz4",
})
GUIDE_CHECKPOINT = dict(GUIDE_COMMON, **{
    "connector.class": "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
    "tasks.max": "4",
    "groups": ".*",
    "emit.checkpoints.enabled": "true",
    "emit.checkpoints.interval.seconds": "10",
    "sync.group.offsets.enabled": "true",
    "sync.group.offsets.interval.seconds": "10",
    "checkpoints.topic.replication.factor": "-1",
    "refresh.groups.interval.seconds": "60",
})
# Every connector of a flow gets the flow's whole configuration, as dedicated mode gives it.
SHARED = {"heartbeats.replication.enabled", "replication.factor", "offset-syncs.topic.replication.factor",
          "checkpoints.topic.replication.factor", "heartbeats.topic.replication.factor", "groups",
          "emit.checkpoints.enabled", "emit.checkpoints.interval.seconds", "emit.heartbeats.enabled",
          "sync.group.offsets.enabled", "sync.group.offsets.interval.seconds", "refresh.groups.interval.seconds",
          "refresh.topics.interval.seconds", "sync.topic.configs.enabled", "consumer.isolation.level",
          "consumer.fetch.max.bytes", "consumer.max.partition.fetch.bytes", "consumer.max.poll.records",
          "producer.override.batch.size", "producer.override.linger.ms", "producer.override.compression.type"}

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


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    work = tmp_path_factory.mktemp("dr")
    dest = work / "plan.json"
    playbook = work / "plan.yml"
    playbook.write_text(PLAYBOOK.format(worker=WORKER, dest=dest, acls=work / "acls.json"))
    result = local_playbook.run(playbook, "-e", "connect_advertised_host=" + WORKER, inventory=INVENTORY)
    assert result.returncode == 0, result.stdout + result.stderr
    return dict(json.loads(dest.read_text()), acls=json.loads((work / "acls.json").read_text()))


def test_worker_properties_key_for_key(plan):
    assert plan["errors"] == []
    assert plan["worker_properties"] == dict(GUIDE_WORKER, **COLLECTION_WORKER)


@pytest.mark.parametrize("name, guide", [("east-to-west-MirrorSourceConnector", GUIDE_SOURCE),
                                         ("east-to-west-MirrorCheckpointConnector", GUIDE_CHECKPOINT)])
def test_connector_key_for_key(plan, name, guide):
    assert list(plan["connectors"]) == ["east-to-west-MirrorSourceConnector", "east-to-west-MirrorCheckpointConnector"]
    config = plan["connectors"][name]
    for key, value in guide.items():
        assert config.get(key) == value, key
    assert set(config) - set(guide) <= SHARED, sorted(set(config) - set(guide) - SHARED)


def test_no_secret_files_without_secrets(plan):
    assert plan["secret_files"] == {}


# The guide's ACL lists (offset-syncs on the target), typed from the issue like the lists above.
GUIDE_ACLS = {
    "east": {("READ", "TOPIC", "*"), ("DESCRIBE", "TOPIC", "*"), ("DESCRIBE_CONFIGS", "TOPIC", "*"),
             ("DESCRIBE", "CLUSTER", "kafka-cluster"), ("DESCRIBE", "GROUP", "*")},
    "west": {("CREATE", "TOPIC", "*"), ("DESCRIBE", "TOPIC", "*"), ("WRITE", "TOPIC", "*"), ("ALTER", "TOPIC", "*"),
             ("ALTER_CONFIGS", "TOPIC", "*"), ("DESCRIBE", "GROUP", "*"), ("READ", "GROUP", "*"),
             ("CREATE", "TOPIC", "mm2-offset-syncs.east.internal"), ("DESCRIBE", "TOPIC", "mm2-offset-syncs.east.internal"),
             ("WRITE", "TOPIC", "mm2-offset-syncs.east.internal"), ("READ", "TOPIC", "mm2-offset-syncs.east.internal"),
             ("CREATE", "TOPIC", "east.checkpoints.internal"), ("DESCRIBE", "TOPIC", "east.checkpoints.internal"),
             ("WRITE", "TOPIC", "east.checkpoints.internal"),
             ("DESCRIBE", "CLUSTER", "kafka-cluster"), ("ALTER", "CLUSTER", "kafka-cluster")},
}


def test_the_example_derives_the_guides_acl_lists(plan):
    """The mm2_acls preflight, run on the example's workers, derives at least the guide's lists,
    and on the source (offset syncs on the target) nothing more."""
    derived = plan["acls"]
    assert derived["errors"] == []
    got = dict((cluster, set((b["operation"], b["resource_type"], b["resource_name"]) for b in bindings))
               for cluster, bindings in derived["acls"].items())
    assert got["east"] == GUIDE_ACLS["east"]
    assert GUIDE_ACLS["west"] <= got["west"]
    assert set(b["principal"] for bindings in derived["acls"].values() for b in bindings) == {"User:mm2"}
