# -*- coding: utf-8 -*-
"""Moving replicas off a leaving broker (module_utils/kafka/reassign.py)."""

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import reassign


@pytest.mark.parametrize("assignment, leaving, brokers, moves", [
    # nothing on the leaving broker: nothing moves
    ({("t", 0): [1, 2]}, [4], [1, 2, 3, 4], {}),
    # the one free broker takes the replica, in the leaving one's position
    ({("t", 0): [1, 4, 2]}, [4], [1, 2, 3, 4], {("t", 0): [1, 3, 2]}),
    # a leaving preferred leader is replaced in first position
    ({("t", 0): [4, 1]}, [4], [1, 2, 3, 4], {("t", 0): [2, 1]}),
    # the least loaded broker first, lowest id on a tie; each move counts for the next
    ({("a", 0): [4], ("a", 1): [4], ("a", 2): [4], ("b", 0): [1]}, [4], [1, 2, 3, 4],
     {("a", 0): [2], ("a", 1): [3], ("a", 2): [1]}),
    # two brokers leave at once: neither takes the other's replicas
    ({("t", 0): [3, 4], ("t", 1): [1, 2]}, [3, 4], [1, 2, 3, 4], {("t", 0): [1, 2]}),
    # a broker the cluster no longer lists takes nothing
    ({("t", 0): [4]}, [4], [1, 4], {("t", 0): [1]}),
])
def test_move_off(assignment, leaving, brokers, moves):
    assert reassign.move_off(assignment, leaving, brokers) == (moves, [])


@pytest.mark.parametrize("assignment, brokers, fragment", [
    ({("t", 0): [1, 2, 4]}, [1, 2, 4],
     "t-0: its replicas are on brokers 1,2,4; no broker that stays (1,2) is free to take broker 4's replica"),
    ({("t", 3): [4]}, [4], "t-3: its replicas are on brokers 4; no broker that stays (none) is free"),
])
def test_move_off_refuses_a_partition_no_broker_can_take(assignment, brokers, fragment):
    moves, errors = reassign.move_off(assignment, [4], brokers)
    assert moves == {} and len(errors) == 1 and fragment in errors[0], errors


def test_move_off_moves_the_partitions_it_can_and_names_the_others():
    moves, errors = reassign.move_off({("t", 0): [4, 1], ("t", 1): [1, 2, 4]}, [4], [1, 2, 4])
    assert moves == {("t", 0): [2, 1]}
    assert [e.split(":")[0] for e in errors] == ["t-1"]


@pytest.mark.parametrize("assignment, broker, partitions", [
    ({("t", 1): [4, 1], ("s", 0): [1], ("a", 2): [2, 4]}, 4, [("a", 2), ("t", 1)]),
    ({("t", 1): [1]}, 4, []),
])
def test_held(assignment, broker, partitions):
    assert reassign.held(assignment, broker) == partitions


def test_throttles_as_kafka_reassign_partitions_sets_them():
    assignment = {("t", 0): [1, 4], ("t", 1): [4, 2], ("u", 0): [2, 4], ("v", 0): [1]}
    moves = {("t", 0): [1, 3], ("t", 1): [3, 2], ("u", 0): [2, 1]}
    brokers, topics = reassign.throttles(assignment, moves, 1048576)
    assert brokers == dict((b, {"leader.replication.throttled.rate": "1048576",
                                "follower.replication.throttled.rate": "1048576"}) for b in (1, 2, 3, 4))
    assert topics == {
        "t": {"leader.replication.throttled.replicas": "0:1,0:4,1:4,1:2",
              "follower.replication.throttled.replicas": "0:3,1:3"},
        "u": {"leader.replication.throttled.replicas": "0:2,0:4",
              "follower.replication.throttled.replicas": "0:1"},
    }


@pytest.mark.parametrize("tp, text", [(("orders", 3), "orders-3"), (("a-b", 0), "a-b-0")])
def test_label(tp, text):
    assert reassign.label(tp) == text
