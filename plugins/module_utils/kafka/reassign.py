# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Moving partition replicas off a broker that leaves its cluster (``kafka_broker_state: absent``).

A broker still holding replicas must not simply stop: its partitions would run one replica short
for good, and a partition whose only in-sync replica it is would go offline. ``move_off`` gives
each partition it holds a new replica set in which another broker takes its place, chosen so the
replicas spread evenly: the remaining broker holding the fewest replicas that is not already in
the set, lowest id first on a tie. The set keeps its order otherwise: the preferred leader stays
the preferred leader unless it is the one leaving.

``throttles`` gives the settings Apache's ``kafka-reassign-partitions.sh --throttle`` sets for such
a move (``ReassignPartitionsCommand``): the rate on every broker the moves touch, the moving
partitions' current replicas as leader-throttled and their new replicas as follower-throttled,
so that copying the data to the new replicas cannot starve the traffic clients wait on.

Pure: the module reads the cluster and applies the result.
"""

from __future__ import annotations

RATE_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"


def label(topic_partition):
    """``orders-3`` for (orders, 3), as Kafka's tools name a partition."""
    return "%s-%d" % topic_partition


def held(assignment, broker):
    """The partitions of ``assignment`` ({(topic, partition): [replica ids]}) with a replica on
    ``broker``, sorted."""
    return sorted(tp for tp, replicas in assignment.items() if broker in replicas)


def move_off(assignment, leaving, brokers):
    """({(topic, partition): new replicas} for every partition with a replica on a broker of
    ``leaving``, errors): each such replica replaced by a broker of ``brokers`` (those that stay)
    that the partition does not have yet, the least loaded first. An error names each partition no
    broker can take, as when its replication factor exceeds the brokers that stay."""
    leaving = set(leaving)
    staying = sorted(b for b in set(brokers) if b not in leaving)
    load = dict((b, 0) for b in staying)
    for replicas in assignment.values():
        for replica in replicas:
            if replica in load:
                load[replica] += 1
    moves, errors = {}, []
    for tp in sorted(assignment):
        replicas = list(assignment[tp])
        if not leaving.intersection(replicas):
            continue
        target = list(replicas)
        for position, replica in enumerate(replicas):
            if replica not in leaving:
                continue
            free = [b for b in staying if b not in target]
            if not free:
                errors.append("%s: its replicas are on brokers %s; no broker that stays (%s) is free to take "
                              "broker %d's replica (the partition needs as many brokers as replicas)"
                              % (label(tp), ",".join(str(r) for r in replicas),
                                 ",".join(str(b) for b in staying) or "none", replica))
                break
            chosen = min(free, key=lambda b: (load[b], b))
            load[chosen] += 1
            target[position] = chosen
        else:
            moves[tp] = target
    return moves, errors


def throttles(assignment, moves, rate):
    """(broker settings {broker id: {key: value}}, topic settings {topic: {key: value}}) that throttle
    ``moves`` at ``rate`` bytes per second, as ``kafka-reassign-partitions.sh --throttle`` does."""
    brokers, leaders, followers = set(), {}, {}
    for tp in sorted(moves):
        topic, partition = tp
        current, target = list(assignment[tp]), list(moves[tp])
        brokers.update(current)
        brokers.update(target)
        leaders.setdefault(topic, []).extend("%d:%d" % (partition, r) for r in current)
        followers.setdefault(topic, []).extend("%d:%d" % (partition, r) for r in target if r not in current)
    broker_settings = dict((b, dict((k, str(rate)) for k in RATE_KEYS)) for b in sorted(brokers))
    topic_settings = {}
    for topic in sorted(leaders):
        topic_settings[topic] = {LEADER_REPLICAS: ",".join(leaders[topic])}
        if followers.get(topic):
            topic_settings[topic][FOLLOWER_REPLICAS] = ",".join(followers[topic])
    return broker_settings, topic_settings
