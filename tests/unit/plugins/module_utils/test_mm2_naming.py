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


@pytest.mark.parametrize("separator, enabled, location, expected", [
    (".", True, "source", ["heartbeats", "A.checkpoints.internal", "mm2-offset-syncs.B.internal"]),
    ("_", True, "target", ["heartbeats", "A_checkpoints_internal", "mm2-offset-syncs_A_internal"]),
    ("_", False, "source", ["heartbeats", "A.checkpoints.internal", "mm2-offset-syncs.B.internal"]),
])
def test_internal_topics(separator, enabled, location, expected):
    assert list(naming.internal_topics("A", "B", separator, enabled, location).values()) == expected
