# -*- coding: utf-8 -*-
"""The MirrorMaker 2 settings both layouts ship: one home (module_utils/mm2/tuning.py), read by the
mm2_defaults lookup in both roles' defaults, and described by the docs with the same values."""

from __future__ import annotations

import os
import re

import pytest
import yaml

from ansible.errors import AnsibleLookupError
from ansible_collections.kafkaops.mirrormaker.plugins.lookup.mm2_defaults import LookupModule
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import tuning

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))


def _defaults(role):
    with open(os.path.join(REPO, "roles", role, "defaults", "main.yml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@pytest.mark.parametrize("name, expected", [
    ("flow_tuning", {"tasks.max": 4, "producer.override.batch.size": 1048576, "producer.override.linger.ms": 20,
                     "producer.override.compression.type": "lz4", "consumer.fetch.max.bytes": 52428800,
                     "consumer.max.partition.fetch.bytes": 10485760, "consumer.max.poll.records": 5000}),
    ("worker", {"scheduled.rebalance.max.delay.ms": 30000, "offset.flush.interval.ms": 10000}),
])
def test_lookup_returns_the_named_set(name, expected):
    assert LookupModule().run([name]) == [expected]


def test_lookup_returns_a_copy():
    LookupModule().run(["worker"])[0]["offset.flush.interval.ms"] = 1
    assert tuning.WORKER["offset.flush.interval.ms"] == 10000


@pytest.mark.parametrize("name", ["", "flow", "Worker"])
def test_lookup_refuses_an_unknown_set(name):
    with pytest.raises(AnsibleLookupError, match="is not one of flow_tuning, worker"):
        LookupModule().run([name])


@pytest.mark.parametrize("role, variable, name", [
    ("mirrormaker", "mirrormaker_flow_default_properties", "flow_tuning"),
    ("connect", "connect_flow_default_properties", "flow_tuning"),
    ("mirrormaker", "mirrormaker_worker_properties", "worker"),
    ("connect", "connect_worker_default_properties", "worker"),
])
def test_both_roles_read_the_one_home(role, variable, name):
    assert tuning.role_default(_defaults(role)[variable]) == tuning.defaults(name)


@pytest.mark.parametrize("value", [{}, "", "{{ lookup('other', 'worker') }}", 3])
def test_role_default_leaves_other_values(value):
    assert tuning.role_default(value) == value


def test_docs_table_gives_the_shipped_tuning():
    with open(os.path.join(REPO, "docs", "mirrormaker.md"), encoding="utf-8") as handle:
        text = handle.read()
    section = text.split("## Defaults that perform", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `([\w.]+)` \| (\w+) \|", section, re.M))
    assert rows == {key: str(value) for key, value in tuning.FLOW_TUNING.items()}
