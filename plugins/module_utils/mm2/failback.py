# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Failback of a disaster-recovery flow (``playbooks/failback.yml``, docs/disaster_recovery.md).

After a failover of flow A->B (its connectors stopped, clients moved to B), failing back runs the
reverse flow B->A with the topics' own names until A holds what clients wrote on B, moves the
consumer groups back with the offsets MirrorMaker 2 translated, and restores A->B.

With IdentityReplicationPolicy MirrorMaker 2 cannot tell a record it copied from one a client
wrote, so both flows are started where the other one's records end:

* B->A starts each partition at B's end offset when A->B stopped (the failover report's boundary):
  the records before it came from A and are there already;
* A->B starts again at A's end offset when B->A stopped: the records since the failover came from
  B and are there already.

A MirrorSourceConnector's committed offset is the last source offset it copied, and it resumes at
the next one (MirrorSourceTask.initializeConsumer), so a partition to start at end offset N is
given N - 1; at 0, no offset (a partition it never copied starts at the beginning).
"""

from __future__ import annotations

IDENTITY = "identity"
# What the reverse flow takes over from the original flow as it is; the rest is the failback's.
CARRIED_FIELDS = ("topics", "topics_exclude", "groups", "groups_exclude", "tasks_max", "transaction_boundary",
                  "transaction_boundary_interval_ms", "properties", "topics_blacklist", "groups_blacklist")


def reverse_flows(flows, source, target, policy_alias, flows_var="mirrormaker_flows"):
    """(flows, errors): ``flows`` with ``source->target`` disabled and ``target->source`` in its
    place enabled, copying the same topics and groups with identity names, checkpointing and syncing
    group offsets, without heartbeats. A reverse flow the inventory already has is replaced.

    ``policy_alias``: the original flow's effective replication policy (its plan's
    ``replication_policy_alias``).
    """
    errors = []
    index = next((i for i, f in enumerate(flows or []) if f.get("source") == source and f.get("target") == target), None)
    if index is None:
        return [], ["%s: %s->%s is not a flow of the inventory: failback reverses the flow the failover stopped"
                    % (flows_var, source, target)]
    if policy_alias != IDENTITY:
        errors.append("%s[%d].replication_policy: failback copies back under the topics' own names "
                      "(IdentityReplicationPolicy), which clients on %s used; flow %s->%s runs %s"
                      % (flows_var, index, target, source, target, policy_alias or "a custom policy"))
    original = flows[index]
    reverse = dict((k, original[k]) for k in CARRIED_FIELDS if k in original)
    reverse.update(source=target, target=source, enabled=True, replication_policy=IDENTITY,
                   emit_heartbeats=False, emit_checkpoints=True, sync_group_offsets=True)
    result = []
    for i, flow in enumerate(flows):
        if i == index:
            result.append(dict(flow, enabled=False))
        elif not (flow.get("source") == target and flow.get("target") == source):
            result.append(flow)
    result.append(reverse)
    return result, errors


def start_at_ends(cluster, ends):
    """KIP-875 offsets that start a MirrorSourceConnector reading ``cluster`` at ``ends``
    (``{topic: [{partition, end}]}``, as kafka_topic_offsets_info gives them), sorted."""
    offsets = []
    for topic in sorted(ends or {}):
        for row in sorted(ends[topic], key=lambda r: r["partition"]):
            end = int(row["end"])
            offsets.append({"partition": {"cluster": cluster, "topic": topic, "partition": int(row["partition"])},
                            "offset": {"offset": end - 1} if end > 0 else None})
    return offsets


def running(statuses, names):
    """``name (STATE)`` of each connector of ``names`` that Connect runs, not stopped and not absent;
    ``statuses`` is ``GET /connectors?expand=status``."""
    found = []
    for name in names:
        state = (((statuses or {}).get(name) or {}).get("status") or {}).get("connector", {}).get("state")
        if state is not None and state != "STOPPED":
            found.append("%s (%s)" % (name, state))
    return found


def groups_pending(groups, on_source, on_target, boundary, started):
    """``group topic-partition`` entries of ``groups`` whose offsets the reverse flow has yet to move.

    A group that read on the failover cluster (``on_source``, kafka_group_offsets_info there) beyond
    the ``boundary`` (the end offsets where the mirrored records ended, ``{topic: [{partition,
    end}]}``) read records clients wrote after the failover; it has moved once its committed offset
    on the original cluster (``on_target``) is past ``started``, that cluster's end offsets when the
    reverse flow began: a translated checkpoint. A group that read nothing past the boundary keeps
    the offsets it has on the original cluster.
    """
    def by_partition(table):
        return dict(((topic, int(row["partition"])), int(row["end"])) for topic, rows in (table or {}).items()
                    for row in rows)

    ends_at_failover, ends_at_start = by_partition(boundary), by_partition(started)
    pending = []
    for group in groups:
        committed_there = dict(((p["topic"], p["partition"]), p["committed"])
                               for p in ((on_target or {}).get(group) or {}).get("partitions", []))
        for p in ((on_source or {}).get(group) or {}).get("partitions", []):
            key = (p["topic"], p["partition"])
            if key not in ends_at_failover or p["committed"] <= ends_at_failover[key]:
                continue
            if committed_there.get(key, -1) <= ends_at_start.get(key, 0):
                pending.append("%s %s-%d" % (group, p["topic"], p["partition"]))
    return pending
