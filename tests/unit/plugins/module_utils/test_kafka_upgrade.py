# -*- coding: utf-8 -*-
"""Rolling upgrades (module_utils/kafka/upgrade.py)."""

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import upgrade

# as kafka-features.sh describe prints it (4.3 and 3.9 tools: tab-separated)
DESCRIBE_39 = (
    "Feature: kraft.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\tEpoch: 9\n"
    "Feature: metadata.version\tSupportedMinVersion: 3.0-IV1\tSupportedMaxVersion: 3.9-IV0\t"
    "FinalizedVersionLevel: 3.9-IV0\tEpoch: 9\n"
)
DESCRIBE_43 = (
    "Feature: group.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 1\tEpoch: 40\n"
    "Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: 4.3-IV0\t"
    "FinalizedVersionLevel: 4.3-IV0\tEpoch: 40\n"
)


@pytest.mark.parametrize("text, parsed", [
    ("3.9.1", (3, 9, 1)), ("4.3.1", (4, 3, 1)), ("3.9-IV0", (3, 9, 0)), ("4.10.0", (4, 10, 0)),
    ("", None), ("latest", None), (None, None),
])
def test_version(text, parsed):
    assert upgrade.version(text) == parsed


def test_steps_run_controllers_then_brokers_then_connect_then_mirrormaker_in_inventory_order():
    nodes = [{"host": "mm1", "kind": "mirrormaker", "installed": "3.9.1"},
             {"host": "b2", "kind": "broker", "installed": "3.9.1"},
             {"host": "w1", "kind": "connect", "installed": "4.3.1"},
             {"host": "c1", "kind": "controller", "installed": "3.9.1"},
             {"host": "b1", "kind": "broker", "installed": "4.4.0"},
             {"host": "new", "kind": "broker", "installed": ""}]
    assert [(s["host"], s["action"]) for s in upgrade.steps(nodes, "4.3.1")] == [
        ("c1", "upgrade"), ("b2", "upgrade"), ("b1", "downgrade"), ("new", "install"), ("w1", "none"),
        ("mm1", "upgrade")]
    assert upgrade.steps(nodes[:1], "4.3.1") == [
        {"host": "mm1", "kind": "mirrormaker", "from": "3.9.1", "to": "4.3.1", "action": "upgrade"}]


@pytest.mark.parametrize("text, features", [
    (DESCRIBE_39, {"metadata.version": "3.9-IV0"}),
    (DESCRIBE_43, {"group.version": "1", "metadata.version": "4.3-IV0"}),
    ("", {}),
])
def test_parse_features(text, features):
    assert upgrade.parse_features(text) == features


# as kafka-features.sh upgrade prints it (FeatureCommand.update): one line per feature, sorted
@pytest.mark.parametrize("text, updated, refused", [
    ("group.version was upgraded to 1.\nmetadata.version was upgraded to 27.\n",
     {"group.version": 1, "metadata.version": 27}, []),
    ("metadata.version can be upgraded to 27.\ntransaction.version can be upgraded to 2.\n",
     {"metadata.version": 27, "transaction.version": 2}, []),
    ("Could not upgrade metadata.version to 27. Invalid update version 27 for feature metadata.version.\n"
     "group.version was upgraded to 1.\n",
     {"group.version": 1}, ["Could not upgrade metadata.version to 27. Invalid update version 27 for feature "
                            "metadata.version."]),
    ("Can not upgrade group.version to 1. Timed out.\n", {}, ["Can not upgrade group.version to 1. Timed out."]),
    ("", {}, []),
    # a deprecation notice or a log line is neither
    (" `metadata` flag is deprecated and may be removed in a future release.\n", {}, []),
])
def test_parse_update(text, updated, refused):
    assert upgrade.parse_update(text) == (updated, refused)


@pytest.mark.parametrize("target, finalized, faults", [
    ("4.3.1", {"A": "3.9-IV0"}, []),
    ("3.9.1", {"A": "3.9-IV0"}, []),
    # a patch release of the finalized line is the same metadata
    ("4.3.0", {"A": "4.3-IV0"}, []),
    ("3.9.1", {"A": "4.3-IV0", "B": "3.9-IV0"},
     ["kafka_common_version: 3.9.1 is older than cluster A's finalized metadata.version 4.3-IV0, whose records "
      "3.9.1 cannot read; a finalized level is never lowered by this playbook"]),
])
def test_downgrade_faults(target, finalized, faults):
    assert upgrade.downgrade_faults(target, finalized) == faults


@pytest.mark.parametrize("target, finalized, installed, faults", [
    ("4.3.1", {"A": "3.9-IV0"}, {"A": "3.9.1"}, []),
    ("4.3.1", {"A": "3.3-IV3"}, {"A": "3.3.2"}, []),
    # 3.x runs clusters at any KRaft level
    ("3.9.1", {"A": "3.0-IV1"}, {"A": "3.7.0"}, []),
    ("4.3.1", {"A": "3.0-IV1", "B": "3.9-IV0"}, {"A": "3.9.1", "B": "3.9.1"},
     ["kafka_common_version: 4.3.1 runs only clusters at metadata.version 3.3 or later, and cluster A's is 3.0-IV1: "
      "finalize it at 3.9.1 first (kafka-features.sh upgrade --release-version 3.9)"]),
    ("4.0.0", {"A": "3.2-IV0"}, {},
     ["kafka_common_version: 4.0.0 runs only clusters at metadata.version 3.3 or later, and cluster A's is 3.2-IV0: "
      "finalize it at its installed release first (kafka-features.sh upgrade --release-version <release>)"]),
])
def test_minimum_faults(target, finalized, installed, faults):
    assert upgrade.minimum_faults(target, finalized, installed) == faults


@pytest.mark.parametrize("target, level, needed", [
    ("4.3.1", "3.9-IV0", True), ("4.3.1", "4.3-IV0", False), ("4.3.1", "4.4-IV0", False), ("4.3.1", None, True),
])
def test_finalize_needed(target, level, needed):
    assert upgrade.finalize_needed(target, level) is needed
    assert upgrade.finalize_release(target) == "4.3"


@pytest.mark.parametrize("target, properties, faults", [
    ("3.9.1", {"kafka_broker_properties": {"log.message.format.version": "3.0"}}, []),
    ("4.3.1", {"kafka_broker_properties": {"num.partitions": 3}}, []),
    ("4.3.1", {"kafka_broker_properties": {"log.message.timestamp.difference.max.ms": 1, "num.partitions": 3},
               "kafka_broker_default_properties": {"message.format.version": "3.0"}},
     ["kafka_broker_default_properties: message.format.version was removed in Kafka 4.0 (kafka_common_version "
      "4.3.1); use nothing: 4.0 writes the one message format (KIP-724)",
      "kafka_broker_properties: log.message.timestamp.difference.max.ms was removed in Kafka 4.0 "
      "(kafka_common_version 4.3.1); use log.message.timestamp.before.max.ms and "
      "log.message.timestamp.after.max.ms (KIP-937)"]),
    # MirrorMaker's settings, in either layout
    ("4.3.1", {"mirrormaker_properties": {"use.incremental.alter.configs": "requested"},
               "connect_properties": {"metrics.jmx.blacklist": "y"}},
     ["connect_properties: metrics.jmx.blacklist was removed in Kafka 4.0 (kafka_common_version 4.3.1); use "
      "metrics.jmx.exclude",
      "mirrormaker_properties: use.incremental.alter.configs was removed in Kafka 4.0 (kafka_common_version 4.3.1); "
      "use nothing: MirrorMaker 2 always uses incremental alter configs"]),
    # the Pulse page's topics.blacklist / groups.blacklist: the model renders them as *.exclude
    ("4.3.1", {"mirrormaker_properties": {"topics.blacklist": "x", "groups.blacklist": "y",
                                          "config.properties.blacklist": "z"}}, []),
])
def test_removed_faults(target, properties, faults):
    assert upgrade.removed_faults(target, properties) == faults
