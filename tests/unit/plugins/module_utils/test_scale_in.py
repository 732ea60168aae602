# -*- coding: utf-8 -*-
"""Unit tests for plugins/module_utils/common/scale_in.py: nodes taken out by a variable."""

from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.filter import kafka as kafka_filter
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import scale_in

HOSTVARS = {"mm1": {}, "mm2": {"mirrormaker_state": "absent"}, "mm3": {"mirrormaker_state": "present"},
            "w1": {"connect_state": "absent"}}


@pytest.mark.parametrize("hosts, state_var, remaining", [
    (["mm1", "mm2", "mm3"], "mirrormaker_state", ["mm1", "mm3"]),
    (["mm3", "mm2", "mm1"], "mirrormaker_state", ["mm3", "mm1"]),
    # another role's variable takes nothing out
    (["mm1", "mm2", "w1"], "connect_state", ["mm1", "mm2"]),
    ([], "mirrormaker_state", []),
])
def test_remaining(hosts, state_var, remaining):
    assert scale_in.remaining(HOSTVARS, hosts, state_var) == remaining
    assert kafka_filter.kafkaops_remaining(hosts, HOSTVARS, state_var) == remaining


LEFT = {"mm1": {"__kafka_common_taken_out": {"mirrormaker": {"at": 10.5, "id": ""}}},
        "mm2": {"mirrormaker_state": "absent"},
        "w1": {"__kafka_common_taken_out": {"connect": {"at": 12.0, "id": "w1:8083"}}},
        "both": {"__kafka_common_taken_out": {"connect": {"at": 3.0, "id": "both:8083"}, "mirrormaker": {"at": 2.0}}}}


@pytest.mark.parametrize("hosts, role, expected", [
    # only what this run recorded counts: mm2 is absent by its variable but was already gone
    (["mm1", "mm2", "both"], "mirrormaker", [{"host": "mm1", "at": 10.5, "id": ""}, {"host": "both", "at": 2.0, "id": ""}]),
    (["both", "w1", "mm1"], "connect", [{"host": "both", "at": 3.0, "id": "both:8083"}, {"host": "w1", "at": 12.0, "id": "w1:8083"}]),
    (["mm2", "unknown"], "connect", []),
])
def test_the_hosts_this_run_took_out(hosts, role, expected):
    assert kafka_filter.kafkaops_left(hosts, LEFT, role) == expected


@pytest.mark.parametrize("host, play_hosts, expected", [
    # the nodes that stay are in the run: the run can wait on them
    ("mm2", ["mm1", "mm2", "mm3"], []),
    # a node that stays is refused nothing
    ("mm1", ["mm1"], []),
    # --limit mm2: nothing would wait for its tasks to run elsewhere
    ("mm2", ["mm2"], ["mirrormaker_state: absent on mm2, but mm1, mm3, which take over its tasks, are not in this "
                      "run (--limit?): the run waits on them until they run its tasks"]),
    ("mm2", ["mm2", "mm3"], ["mirrormaker_state: absent on mm2, but mm1, which take over its tasks, are not in this "
                             "run (--limit?): the run waits on them until they run its tasks"]),
])
def test_a_node_is_taken_out_only_with_the_nodes_that_take_over(host, play_hosts, expected):
    got = kafka_filter.kafkaops_scale_in_faults(host, "mirrormaker_state", ["mm1", "mm2", "mm3"], play_hosts, HOSTVARS)
    assert got == expected


def test_every_node_taken_out_needs_no_one_to_wait_on():
    hostvars = {"mm1": {"mirrormaker_state": "absent"}, "mm2": {"mirrormaker_state": "absent"}}
    assert scale_in.faults("mirrormaker_state", "mm1", ["mm1", "mm2"], ["mm1"], hostvars) == []
