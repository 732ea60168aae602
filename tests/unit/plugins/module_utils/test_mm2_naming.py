# -*- coding: utf-8 -*-
"""MirrorMaker 2's names: the one home (module_utils/mm2/naming.py)."""

from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import naming


@pytest.mark.parametrize("source, expected", [
    ("A", ["A-mm2", "mm2-offsets.A.internal", "mm2-configs.A.internal", "mm2-status.A.internal"]),
    ("east.dc", ["east.dc-mm2", "mm2-offsets.east.dc.internal", "mm2-configs.east.dc.internal",
                 "mm2-status.east.dc.internal"]),
])
def test_herder_names(source, expected):
    names = naming.herder_names(source)
    assert list(names) == ["group.id", "offset.storage.topic", "config.storage.topic", "status.storage.topic"]
    assert list(names.values()) == expected


DEFAULT_HERDER = {"group.id": "A-mm2", "offset.storage.topic": "mm2-offsets.A.internal",
                  "config.storage.topic": "mm2-configs.A.internal", "status.storage.topic": "mm2-status.A.internal",
                  "exactly.once.source.support": "disabled"}


# MirrorMakerConfig.workerConfig: clusterProps(target), then the top-level storage keys over them.
@pytest.mark.parametrize("props, changed", [
    ({}, {}),
    ({"B.group.id": "g", "B.exactly.once.source.support": "enabled"},
     {"group.id": "g", "exactly.once.source.support": "enabled"}),
    # a top-level group.id or exactly-once setting is not a worker setting of any herder
    ({"group.id": "g", "exactly.once.source.support": "enabled"}, {}),
    # another target's keys are not this herder's
    ({"A.group.id": "g", "A.offset.storage.topic": "t"}, {}),
    ({"B.offset.storage.topic": "mine"}, {"offset.storage.topic": "mine"}),
    # a top-level storage key wins over the target's own
    ({"B.offset.storage.topic": "mine", "offset.storage.topic": "top", "status.storage.topic": "s"},
     {"offset.storage.topic": "top", "status.storage.topic": "s"}),
])
def test_herder_settings(props, changed):
    assert dict(naming.herder_settings(props, "A", "B")) == dict(DEFAULT_HERDER, **changed)


@pytest.mark.parametrize("separator, enabled, location, expected", [
    (".", True, "source", ["heartbeats", "A.checkpoints.internal", "mm2-offset-syncs.B.internal"]),
    ("_", True, "target", ["heartbeats", "A_checkpoints_internal", "mm2-offset-syncs_A_internal"]),
    ("_", False, "source", ["heartbeats", "A.checkpoints.internal", "mm2-offset-syncs.B.internal"]),
])
def test_internal_topics(separator, enabled, location, expected):
    assert list(naming.internal_topics("A", "B", separator, enabled, location).values()) == expected
