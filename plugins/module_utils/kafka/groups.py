# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Consumer groups' committed offsets, end offsets and lag on one cluster (for ``kafka_group_offsets_info``).

Pure functions: they take a kafka-python (3.x) ``KafkaAdminClient`` and ``KafkaConsumer``, or
anything that answers the same calls, and never import kafka-python themselves, so that the
module can report a missing library with ``missing_required_lib`` and the unit tests can pass
fakes.  Calls used:

* ``admin.describe_groups(ids)`` -> ``{id: {"group_state", "members", "error", ...}}``;
* ``admin.list_group_offsets({id: None})`` -> ``{id: {TopicPartition: OffsetAndMetadata}}``;
* ``admin.describe_topics(names)`` -> ``[{"name", "error_code", "partitions": [{"partition_index"}]}]``;
* ``consumer.end_offsets([TopicPartition], timeout_ms)`` -> ``{TopicPartition: int}``: the log end
  offset, or the last stable offset for a consumer made with ``isolation_level='read_committed'``.

How the module reaches the cluster (client_properties, the bootstrap, retries) is in kafka_client.py.
"""

from __future__ import annotations

import re

ISOLATION_LEVELS = ("read_committed", "read_uncommitted")


def lag(committed, end):
    """Offsets between the committed offset and the end; None when the end is unknown.

    Negative when the committed offset is beyond the end (a topic deleted and created again, a
    translated offset ahead of the target's log): shown as it is, not hidden as 0.
    """
    if end is None or committed is None:
        return None
    return end - committed


def total_lag(partitions):
    """Sum of the partitions' positive lags: the offsets the group has yet to read."""
    return sum(p["lag"] for p in partitions if p["lag"] is not None and p["lag"] > 0)


def group_state(description):
    """(state, members, warning) from a describe_groups entry.

    A group unknown to the cluster is an answer, not a fault: the broker says ``Dead`` (Kafka 4
    adds the error GROUP_ID_NOT_FOUND, "Group g not found."), and so does the report.  A group of
    the KIP-848 consumer protocol gets the same error with "is not a classic group": kafka-python
    cannot describe it, so its state and members are unknown (None) and a warning says why.
    """
    if description is None:
        return None, None, "the cluster did not describe the group"
    error = description.get("error")
    state = description.get("group_state")
    members = len(description.get("members") or [])
    if not error:
        return state, members, None
    if "GroupIdNotFound" in error and "not a classic group" not in error:
        return state, members, None
    return None, None, "state and members unknown, the cluster answered: %s" % error


def partition_rows(committed, ends, topics=None):
    """The report's partitions of one group, sorted by topic and partition.

    ``committed``: {TopicPartition: OffsetAndMetadata}; ``ends``: {(topic, partition): end offset}
    for the partitions that exist.  A partition without a committed offset (offset -1) is left out.
    """
    rows = []
    for tp, meta in committed.items():
        offset = getattr(meta, "offset", meta)
        if offset is None or offset < 0 or (topics is not None and tp.topic not in topics):
            continue
        end = ends.get((tp.topic, tp.partition))
        rows.append({"topic": tp.topic, "partition": tp.partition, "committed": offset, "end": end,
                     "lag": lag(offset, end)})
    rows.sort(key=lambda row: (row["topic"], row["partition"]))
    return rows


def existing_partitions(described, error_name=None):
    """{topic: set of partition numbers} from describe_topics; topics that do not exist are left out.

    Raises ValueError naming the topic for any other error (e.g. not authorised): an end offset
    that cannot be read must not look like a topic that is gone.
    """
    found = {}
    for topic in described:
        code = topic.get("error_code") or 0
        if code == 3:  # UNKNOWN_TOPIC_OR_PARTITION: deleted since the group committed
            continue
        if code:
            raise ValueError("topic %r: the cluster answered %s when asked for its partitions"
                             % (topic.get("name"), error_name(code) if error_name else "error_code %d" % code))
        found[topic["name"]] = set(p["partition_index"] for p in topic.get("partitions") or [])
    return found


def _once(fn, *args, **kwargs):
    return fn(*args, **kwargs)


class NotReady(Exception):
    """The cluster answered for a group that its coordinator is not ready; worth another try."""

    retriable = True


# describe_groups puts a group's error in its answer as text, "[Error 16] NotCoordinatorError: ..."
# (it raises nothing): COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
_NOT_READY = re.compile(r"^\[Error (14|15|16)\]")


def describe_groups(admin, groups):
    """admin.describe_groups(groups); raises NotReady when a group's coordinator is not ready."""
    descriptions = admin.describe_groups(groups)
    for group in groups:
        error = (descriptions.get(group) or {}).get("error")
        if error and _NOT_READY.match(error):
            raise NotReady("group %r: %s" % (group, error))
    return descriptions


def read_groups(admin, consumer, groups, topics=None, timeout_ms=30000, error_name=None, retry=_once):
    """({group: {state, members, partitions, total_lag}}, warnings) for ``groups`` (in their order).

    ``topics``: None for every topic the groups committed offsets on, else only these.  The end
    offsets are read in one call for all groups, for the partitions that still exist; a committed
    partition of a deleted topic (or partition) has ``end`` and ``lag`` None.  Each call to the
    cluster goes through ``retry`` (see kafka_client.Retry).
    """
    wanted = None if topics is None else set(topics)
    descriptions = retry(describe_groups, admin, list(groups))
    committed = retry(admin.list_group_offsets, dict((group, None) for group in groups))
    tps = {}
    for offsets in committed.values():
        for tp in offsets:
            if wanted is None or tp.topic in wanted:
                tps[(tp.topic, tp.partition)] = tp
    exists = {}
    if tps:
        exists = existing_partitions(retry(admin.describe_topics, sorted(set(t for t, _p in tps))), error_name)
    readable = [tp for (topic, partition), tp in sorted(tps.items()) if partition in exists.get(topic, ())]
    ends = {}
    if readable:
        for tp, end in retry(consumer.end_offsets, readable, timeout_ms=timeout_ms).items():
            ends[(tp.topic, tp.partition)] = end
    report, warnings = {}, []
    for group in groups:
        state, members, warning = group_state(descriptions.get(group))
        if warning:
            warnings.append("group %r: %s" % (group, warning))
        partitions = partition_rows(committed.get(group) or {}, ends, wanted)
        gone = ["%s-%d" % (p["topic"], p["partition"]) for p in partitions if p["end"] is None]
        if gone:
            warnings.append("group %r: committed offsets on partitions the cluster does not have (end and lag "
                            "null): %s" % (group, ", ".join(gone)))
        report[group] = {"state": state, "members": members, "partitions": partitions,
                         "total_lag": total_lag(partitions)}
    return report, warnings


def read_topic_offsets(admin, consumer, topics, topic_partition, timeout_ms=30000, error_name=None, retry=_once):
    """({topic: [{partition, start, end}]}, [topics the cluster does not have]) for ``topics``.

    ``start`` is the log start offset and ``end`` the end of the consumer's isolation level, both
    read in one call each for every partition. ``topic_partition`` makes kafka-python's
    TopicPartition (passed in: nothing here imports kafka-python).
    """
    wanted = sorted(set(topics))
    exists = existing_partitions(retry(admin.describe_topics, wanted), error_name)
    tps = [topic_partition(t, p) for t in wanted for p in sorted(exists.get(t, ()))]
    starts, ends = {}, {}
    if tps:
        starts = retry(consumer.beginning_offsets, tps, timeout_ms=timeout_ms)
        ends = retry(consumer.end_offsets, tps, timeout_ms=timeout_ms)
        starts = dict(((tp.topic, tp.partition), o) for tp, o in starts.items())
        ends = dict(((tp.topic, tp.partition), o) for tp, o in ends.items())
    report = dict((t, [{"partition": p, "start": starts.get((t, p)), "end": ends.get((t, p))}
                       for p in sorted(exists[t])]) for t in wanted if t in exists)
    return report, [t for t in wanted if t not in exists]
