#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kafka_broker_drain
short_description: Move every partition replica off a Kafka broker before it leaves its cluster
version_added: 0.1.0
description:
  - Reads, with kafka-python, which partitions have a replica on broker O(broker_id), internal topics
    included. With none there is nothing to do.
  - Without O(move), refuses while any is left, naming each partition (C(topic-partition)); a broker
    that still holds replicas must not simply stop.
  - With O(move), gives each such partition a new replica set in which a broker that stays takes the
    leaving broker's place, the broker with the fewest replicas first (the rule is in
    C(plugins/module_utils/kafka/reassign.py)), and applies it with the Admin API's partition
    reassignment (KIP-455). Copying is throttled at O(throttle) bytes per second with the settings
    Apache's C(kafka-reassign-partitions.sh --throttle) sets, which are removed once every move is done.
  - Waits until the cluster runs no reassignment of those partitions and none has a replica on the
    broker left, at most O(wait_timeout) seconds. A reassignment already running when the task
    starts (one an earlier run left) is waited for first.
  - The broker may be stopped, or no longer registered; its replicas are then copied from the others.
    RV(registered) tells whether the KRaft controllers still have it registered.
options:
  broker_id:
    description:
      - The node id of the broker that leaves.
    type: int
    required: true
  move:
    description:
      - Move the broker's replicas off it. V(false) only checks that it holds none.
    type: bool
    default: false
  throttle:
    description:
      - The replication rate, in bytes per second, each broker the moves touch may spend on them
        (C(leader.replication.throttled.rate) and C(follower.replication.throttled.rate)). V(0) sets no
        throttle.
    type: int
    default: 52428800
  wait_timeout:
    description:
      - Seconds to wait for the moves to finish. On a timeout the task fails and the reassignment and
        its throttle stay in place; a re-run waits for them again.
    type: int
    default: 1800
extends_documentation_fragment:
  - kafkaops.mirrormaker.kafka_client
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reads the replicas and reports the moves a real run would make, changing nothing.
  diff_mode:
    support: full
    details: The replica set of each partition that moves, before and after.
  platform:
    platforms: posix
notes:
  - A partition with as many replicas as the brokers that stay has no broker to move to; the task
    refuses it, naming the partition, before anything moves.
  - The broker stays registered with the KRaft controllers after it stops; C(kafka-cluster.sh unregister)
    removes it (the kafka_broker role does so for V(kafka_broker_state=absent)).
seealso:
  - name: Kafka operations, decommissioning brokers and throttles
    description: Partition reassignment and replication quotas.
    link: https://kafka.apache.org/documentation/#basic_ops_decommissioning_brokers
author:
  - kafkaops maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Move broker 4's replicas to the brokers that stay
  kafkaops.mirrormaker.kafka_broker_drain:
    bootstrap_servers: kafka-a1:9092,kafka-a2:9092,kafka-a3:9092
    broker_id: 4
    move: true
    throttle: 20971520
  delegate_to: localhost
"""

RETURN = r"""
held:
  description: The partitions (C(topic-partition)) with a replica on the broker when the task started.
  returned: success, and on a refusal
  type: list
  elements: str
  sample: [orders-0, __consumer_offsets-7]
moves:
  description: Per partition moved, its replicas before and after.
  returned: success
  type: list
  elements: dict
  sample: [{partition: orders-0, before: [1, 4, 2], after: [1, 3, 2]}]
registered:
  description: Whether the controllers had the broker registered (fenced or not) when the task started.
  returned: success, and on a refusal
  type: bool
seconds:
  description: How long the moves took, from the reassignment to the last partition done.
  returned: when replicas moved
  type: float
"""

import time
import traceback

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import client as kafka_client
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import reassign
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.client import Failed, error_text

KAFKA_IMPORT_ERROR = None
kafka_version = None  # bound without kafka-python too: main hands it to kafka_client.start
try:
    from kafka import TopicPartition
    from kafka import __version__ as kafka_version
    from kafka import errors as kafka_errors
    from kafka.admin import AlterConfigOp, ConfigResource, KafkaAdminClient
except ImportError:
    KAFKA_IMPORT_ERROR = traceback.format_exc()

CLIENT_ID = "kafkaops-broker-drain"
POLL_SECONDS = 2
SHOWN = 20


def input_errors(params, servers_errors, property_errors):
    errors = list(servers_errors)
    if params["broker_id"] < 0:
        errors.append("broker_id: must be a node id, 0 or more (is %d)" % params["broker_id"])
    if params["throttle"] < 0:
        errors.append("throttle: must be bytes per second, 0 (no throttle) or more (is %d)" % params["throttle"])
    if params["wait_timeout"] < 1:
        errors.append("wait_timeout: must be 1 second or more (is %d)" % params["wait_timeout"])
    errors.extend(kafka_client.timeout_errors(params["timeout"]))
    return errors + list(property_errors)


def some(labels):
    """The first SHOWN partition names, and how many more."""
    more = len(labels) - SHOWN
    return ", ".join(labels[:SHOWN]) + (" and %d more" % more if more > 0 else "")


class Cluster(object):
    """The reads and writes of one run, on one admin client."""

    def __init__(self, admin, retry):
        self.admin, self.retry = admin, retry

    def assignment(self):
        """{(topic, partition): [replica ids]} of every topic, internal ones included."""
        out = {}
        for topic in self.retry(self.admin.describe_topics):
            for part in topic.get("partitions") or []:
                out[(topic["name"], part["partition_index"])] = list(part["replica_nodes"])
        return out

    def brokers(self):
        """{broker id: fenced} of every broker the controllers have registered."""
        described = self.retry(self.admin.describe_cluster)
        return dict((b["broker_id"], bool(b.get("is_fenced"))) for b in described.get("brokers") or [])

    def reassigning(self, partitions=None):
        """The partitions of ``partitions`` (all when None) a reassignment still moves."""
        ongoing = self.retry(self.admin.list_partition_reassignments,
                             [TopicPartition(t, p) for t, p in partitions] if partitions else None)
        return sorted((tp.topic, tp.partition) for tp in ongoing)

    def reassign(self, moves):
        answer = self.admin.alter_partition_reassignments(
            dict((TopicPartition(t, p), replicas) for (t, p), replicas in moves.items()))
        refused = sorted("%s-%d: %s" % (tp.topic, tp.partition, error_text(err()) if isinstance(err, type) else err)
                         for tp, err in answer.items() if err is not None)
        if refused:
            raise Failed("the cluster refused to move %s" % some(refused))

    def configure(self, brokers, topics, delete=False):
        """Set (or delete) the throttle settings on brokers and topics."""
        resources = []
        for broker, settings in sorted(brokers.items()):
            resources.append(ConfigResource("BROKER", str(broker), self._ops(settings, delete)))
        for topic, settings in sorted(topics.items()):
            resources.append(ConfigResource("TOPIC", topic, self._ops(settings, delete)))
        if not resources:
            return
        # kafka-python checks keys against the dynamic configs it knows, which lack the throttle rates.
        answer = self.admin.alter_configs(resources, incremental=True, raise_on_unknown=False)
        failed = sorted("%s %s: %s" % (kind, name, result) for kind, results in answer.items()
                        for name, result in results.items() if result != "OK")
        if failed:
            raise Failed("%s the replication throttle failed: %s"
                         % ("removing" if delete else "setting", "; ".join(failed)))

    @staticmethod
    def _ops(settings, delete):
        return dict((k, (AlterConfigOp.DELETE, None) if delete else (AlterConfigOp.SET, v))
                    for k, v in settings.items())


def wait_done(cluster, partitions, broker, deadline, clock=time.monotonic, sleep=time.sleep):
    """Wait until no reassignment moves ``partitions`` and none has a replica on ``broker``; the
    partitions still moving (or still on it) when ``deadline`` passes, else []."""
    while True:
        moving = cluster.reassigning(partitions)
        if not moving:
            moving = reassign.held(cluster.assignment(), broker) if broker is not None else []
        if not moving or clock() >= deadline:
            return moving
        sleep(POLL_SECONDS)


def run(module, cluster):
    params = module.params
    broker = params["broker_id"]
    deadline = time.monotonic() + params["wait_timeout"]
    registered = cluster.brokers()
    earlier = cluster.reassigning()
    if earlier and not module.check_mode:
        left = wait_done(cluster, earlier, None, deadline)
        if left:
            raise Failed("wait_timeout: a reassignment started earlier still moves %s after %d s"
                         % (some([reassign.label(tp) for tp in left]), params["wait_timeout"]))
    assignment = cluster.assignment()
    held = reassign.held(assignment, broker)
    result = dict(changed=False, held=[reassign.label(tp) for tp in held], moves=[], registered=broker in registered)
    if not held:
        return result
    if not params["move"]:
        raise Failed("move: broker %d still holds replicas of %d partitions (%s); it must not stop before they "
                     "move off (move=true moves them)" % (broker, len(held), some(result["held"])), result)
    staying = [b for b, fenced in registered.items() if b != broker and not fenced]
    moves, errors = reassign.move_off(assignment, [broker], staying)
    if errors:
        raise Failed("broker_id: broker %d's replicas cannot all move: %s" % (broker, "; ".join(errors)), result)
    result.update(changed=True, moves=[dict(partition=reassign.label(tp), before=assignment[tp], after=moves[tp])
                                       for tp in sorted(moves)])
    if module._diff:
        result["diff"] = dict(before="".join("%s: %s\n" % (m["partition"], m["before"]) for m in result["moves"]),
                              after="".join("%s: %s\n" % (m["partition"], m["after"]) for m in result["moves"]))
    if module.check_mode:
        return result
    brokers, topics = reassign.throttles(assignment, moves, params["throttle"]) if params["throttle"] else ({}, {})
    cluster.configure(brokers, topics)
    started = time.monotonic()
    cluster.reassign(moves)
    left = wait_done(cluster, sorted(moves), broker, deadline)
    if left:
        raise Failed("wait_timeout: %d of %d partitions still moving off broker %d after %d s (%s); the "
                     "reassignment and its throttle stay in place, a re-run waits for them"
                     % (len(left), len(moves), broker, params["wait_timeout"],
                        some([reassign.label(tp) for tp in left])), result)
    result["seconds"] = round(time.monotonic() - started, 1)
    cluster.configure(brokers, topics, delete=True)
    return result


def main():
    argument_spec = kafka_client.argument_spec()
    argument_spec.update(
        broker_id=dict(type="int", required=True),
        move=dict(type="bool", default=False),
        throttle=dict(type="int", default=52428800),
        wait_timeout=dict(type="int", default=1800),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    params = module.params
    servers, kwargs, connection_errors = kafka_client.start(
        module, KAFKA_IMPORT_ERROR, kafka_version,
        lambda servers_errors, property_errors: input_errors(params, servers_errors, property_errors))
    try:
        with kafka_client.Session(servers, kwargs, params["timeout"], connection_errors, CLIENT_ID,
                                  kafka_errors.KafkaError) as session:
            cluster = Cluster(session.client(KafkaAdminClient), session.retry)
            try:
                result = run(module, cluster)
            except (kafka_errors.KafkaError, ValueError) as exc:
                raise Failed("draining broker %d through %s failed: %s"
                             % (params["broker_id"], ",".join(servers), error_text(exc)))
    except Failed as exc:
        extra = exc.args[1] if len(exc.args) > 1 else {}
        module.fail_json(msg=exc.args[0], **extra)
    moved = len(result["moves"])
    verb = "would move" if module.check_mode else "moved"
    result["msg"] = ("broker %d holds no replica" % params["broker_id"] if not result["held"] else
                     "%s %d partitions off broker %d" % (verb, moved, params["broker_id"]))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
