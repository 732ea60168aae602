# -*- coding: utf-8 -*-
"""Settings a Kafka release no longer has (module_utils/kafka/upgrade.py)."""

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import upgrade


@pytest.mark.parametrize("text, parsed", [
    ("3.9.1", (3, 9, 1)), ("4.3.1", (4, 3, 1)), ("3.9-IV0", (3, 9, 0)), ("4.10.0", (4, 10, 0)),
    ("", None), ("latest", None), (None, None),
])
def test_version(text, parsed):
    assert upgrade.version(text) == parsed


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
])
def test_removed_faults(target, properties, faults):
    assert upgrade.removed_faults(target, properties) == faults
