# -*- coding: utf-8 -*-
"""kafka_broker_drain's run: what it applies, in which order, and when it stops waiting.

The cluster is a test double (FakeCluster) of the module's own Cluster class, used only for what
one real broker cannot show: moves to other brokers, a reassignment that outlasts the timeout, a
reassignment an earlier run left. tests/live/test_kafka_broker_drain.py reads a real broker;
tests/integration/kraft moves a real broker's replicas under load.
"""

from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.client import Failed
from ansible_collections.kafkaops.mirrormaker.plugins.modules import kafka_broker_drain as module


class FakeModule(object):
    def __init__(self, check_mode=False, diff=False, **params):
        self.check_mode, self._diff = check_mode, diff
        self.params = dict(broker_id=4, move=True, throttle=100, wait_timeout=30)
        self.params.update(params)


class FakeCluster(object):
    """Applies a reassignment after ``polls`` reads of the ongoing ones; records every write."""

    def __init__(self, assignment, brokers, polls=1, ongoing=()):
        self.current, self.registered, self.polls = dict(assignment), brokers, polls
        self.ongoing, self.pending, self.writes = list(ongoing), {}, []

    def assignment(self):
        return dict(self.current)

    def brokers(self):
        return dict(self.registered)

    def reassigning(self, partitions=None):
        if self.ongoing or self.pending:
            self.polls -= 1
            if self.polls < 0:
                self.current.update(self.pending)
                self.pending, self.ongoing = {}, []
        moving = sorted(set(self.ongoing) | set(self.pending))
        return [tp for tp in moving if partitions is None or tp in partitions]

    def reassign(self, moves):
        self.writes.append(("reassign", dict(moves)))
        self.pending.update(moves)

    def configure(self, brokers, topics, delete=False):
        self.writes.append(("unthrottle" if delete else "throttle", sorted(brokers), sorted(topics)))


@pytest.fixture(autouse=True)
def no_pause(monkeypatch):
    monkeypatch.setattr(module, "POLL_SECONDS", 0)


ASSIGNMENT = {("t", 0): [1, 4], ("t", 1): [2, 3], ("__consumer_offsets", 0): [4, 2]}
BROKERS = {1: False, 2: False, 3: False, 4: False}


def test_moves_throttled_then_unthrottled_once_done():
    cluster = FakeCluster(ASSIGNMENT, BROKERS)
    result = module.run(FakeModule(diff=True), cluster)
    assert result["changed"] is True and result["registered"] is True
    assert result["held"] == ["__consumer_offsets-0", "t-0"]
    assert result["moves"] == [{"partition": "__consumer_offsets-0", "before": [4, 2], "after": [1, 2]},
                               {"partition": "t-0", "before": [1, 4], "after": [1, 3]}]
    assert cluster.writes == [("throttle", [1, 2, 3, 4], ["__consumer_offsets", "t"]),
                              ("reassign", {("__consumer_offsets", 0): [1, 2], ("t", 0): [1, 3]}),
                              ("unthrottle", [1, 2, 3, 4], ["__consumer_offsets", "t"])]
    assert result["diff"]["before"] == "__consumer_offsets-0: [4, 2]\nt-0: [1, 4]\n"
    assert cluster.current[("t", 0)] == [1, 3]


def test_check_mode_reports_the_moves_and_writes_nothing():
    cluster = FakeCluster(ASSIGNMENT, BROKERS)
    result = module.run(FakeModule(check_mode=True), cluster)
    assert result["changed"] is True and len(result["moves"]) == 2 and cluster.writes == []


def test_no_throttle_sets_none():
    cluster = FakeCluster(ASSIGNMENT, BROKERS)
    module.run(FakeModule(throttle=0), cluster)
    assert [w[0] for w in cluster.writes] == ["throttle", "reassign", "unthrottle"]
    assert cluster.writes[0] == ("throttle", [], []) and cluster.writes[2] == ("unthrottle", [], [])


def test_a_fenced_broker_takes_no_replica():
    cluster = FakeCluster({("t", 0): [4]}, {1: True, 2: False, 4: False})
    result = module.run(FakeModule(), cluster)
    assert result["moves"] == [{"partition": "t-0", "before": [4], "after": [2]}]


def test_a_move_that_outlasts_the_timeout_fails_leaving_the_throttle():
    cluster = FakeCluster(ASSIGNMENT, BROKERS, polls=10 ** 9)
    with pytest.raises(Failed) as failed:
        module.run(FakeModule(wait_timeout=1), cluster)
    assert failed.value.args[0] == ("wait_timeout: 2 of 2 partitions still moving off broker 4 after 1 s "
                                    "(__consumer_offsets-0, t-0); the reassignment and its throttle stay in "
                                    "place, a re-run waits for them")
    assert [w[0] for w in cluster.writes] == ["throttle", "reassign"]


def test_a_reassignment_an_earlier_run_left_is_waited_for_first():
    cluster = FakeCluster({("t", 0): [1, 2]}, BROKERS, polls=2, ongoing=[("t", 0)])
    result = module.run(FakeModule(), cluster)
    assert result["changed"] is False and result["held"] == [] and cluster.polls < 0


def test_without_move_the_broker_holding_replicas_is_refused():
    cluster = FakeCluster(ASSIGNMENT, BROKERS)
    with pytest.raises(Failed) as failed:
        module.run(FakeModule(move=False), cluster)
    assert failed.value.args[0].startswith("move: broker 4 still holds replicas of 2 partitions "
                                           "(__consumer_offsets-0, t-0)")
    assert failed.value.args[1]["held"] == ["__consumer_offsets-0", "t-0"] and cluster.writes == []


@pytest.mark.parametrize("count, text", [
    (2, "p-0, p-1"),
    (20, ", ".join("p-%d" % i for i in range(20))),
    (23, ", ".join("p-%d" % i for i in range(20)) + " and 3 more"),
])
def test_some_names_the_first_twenty(count, text):
    assert module.some(["p-%d" % i for i in range(count)]) == text
