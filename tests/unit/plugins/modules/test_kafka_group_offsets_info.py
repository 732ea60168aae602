# -*- coding: utf-8 -*-
"""kafka_group_offsets_info: the pure logic of module_utils/kafka/groups.py and the module's input checks.

The admin client and the consumer are test doubles (FakeAdmin, FakeConsumer) that answer with
kafka-python 3.x's shapes, used only for what a real broker cannot show cheaply: the arithmetic,
the sorting, a deleted topic, a group kafka-python cannot describe, a coordinator not ready.
The connection options it shares with kafka_acl are tested in module_utils/test_kafka_client.py.
tests/live/test_kafka_group_offsets_info.py runs the module against a real broker.
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import client as kc
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import groups as kg
from ansible_collections.kafkaops.mirrormaker.plugins.modules import kafka_group_offsets_info as module

# kafka.structs' namedtuples, with their field names (kafka-python is not needed to run these tests)
TopicPartition = collections.namedtuple("TopicPartition", "topic partition")
OffsetAndMetadata = collections.namedtuple("OffsetAndMetadata", "offset metadata leader_epoch")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "module_utils"))
from clock_double import Clock  # noqa: E402


def committed(*triples):
    return dict((TopicPartition(t, p), OffsetAndMetadata(o, "", -1)) for t, p, o in triples)


class FakeAdmin(object):
    """Test double of KafkaAdminClient: the calls read_groups makes, answered from dicts."""

    def __init__(self, descriptions, offsets, topics):
        self.descriptions, self.offsets, self.topics = descriptions, offsets, topics
        self.asked_topics = None

    def describe_groups(self, group_ids):
        return dict((g, self.descriptions[g]) for g in group_ids if g in self.descriptions)

    def list_group_offsets(self, specs):
        assert all(v is None for v in specs.values())
        return dict((g, self.offsets.get(g, {})) for g in specs)

    def describe_topics(self, names):
        self.asked_topics = names
        return [{"name": n, "error_code": 0, "partitions": [{"partition_index": i} for i in range(self.topics[n])]}
                if n in self.topics else {"name": n, "error_code": 3, "partitions": []} for n in names]


class FakeConsumer(object):
    """Test double of KafkaConsumer.end_offsets; fails on a partition that does not exist, as the
    real one does (it waits out its timeout)."""

    def __init__(self, ends):
        self.ends = ends
        self.asked = None

    def end_offsets(self, partitions, timeout_ms=None):
        self.asked = list(partitions)
        return dict((tp, self.ends[(tp.topic, tp.partition)]) for tp in partitions)


def described(state, members=0, error=None):
    return {"group_state": state, "members": [{"member_id": "m%d" % i} for i in range(members)], "error": error}


# ---------------------------------------------------------------------------- lag arithmetic

@pytest.mark.parametrize("committed_offset, end, expected", [
    (3, 5, 2),
    (5, 5, 0),
    (0, 0, 0),
    (7, 5, -2),       # beyond the end: shown, not hidden
    (3, None, None),  # partition gone
])
def test_lag(committed_offset, end, expected):
    assert kg.lag(committed_offset, end) == expected


@pytest.mark.parametrize("lags, expected", [
    ([2, 0, 5], 7),
    ([2, -3], 2),     # a negative lag does not cancel another partition's
    ([None, 4], 4),
    ([], 0),
])
def test_total_lag_sums_positive_lags(lags, expected):
    assert kg.total_lag([{"lag": value} for value in lags]) == expected


def test_partition_rows_are_sorted_filtered_and_skip_uncommitted():
    offsets = committed(("orders", 1, 5), ("audit", 0, 1), ("orders", 0, 3), ("orders", 2, -1))
    ends = {("orders", 0): 5, ("orders", 1): 5, ("audit", 0): 4}
    assert kg.partition_rows(offsets, ends) == [
        {"topic": "audit", "partition": 0, "committed": 1, "end": 4, "lag": 3},
        {"topic": "orders", "partition": 0, "committed": 3, "end": 5, "lag": 2},
        {"topic": "orders", "partition": 1, "committed": 5, "end": 5, "lag": 0},
    ]
    assert [r["topic"] for r in kg.partition_rows(offsets, ends, {"orders"})] == ["orders", "orders"]


def test_partitions_sort_by_number_not_text():
    offsets = committed(*[("t", p, p) for p in (10, 2, 1)])
    rows = kg.partition_rows(offsets, dict((("t", p), 20) for p in (1, 2, 10)))
    assert [r["partition"] for r in rows] == [1, 2, 10]


# ---------------------------------------------------------------------------- group state

@pytest.mark.parametrize("description, expected", [
    (described("Stable", 2), ("Stable", 2, None)),
    (described("Empty"), ("Empty", 0, None)),
    # Kafka 4: an unknown group is Dead with GROUP_ID_NOT_FOUND, an answer rather than a fault
    (described("Dead", error="[Error 69] GroupIdNotFoundError: Group nope not found."), ("Dead", 0, None)),
    (described("Dead"), ("Dead", 0, None)),  # Kafka 3: Dead without an error
])
def test_group_state(description, expected):
    assert kg.group_state(description) == expected


@pytest.mark.parametrize("error", [
    "[Error 69] GroupIdNotFoundError: Group g is not a classic group.",
    "[Error 30] GroupAuthorizationFailedError: ",
])
def test_group_state_unknown_when_the_broker_will_not_describe_it(error):
    state, members, warning = kg.group_state(described("Dead", error=error))
    assert (state, members) == (None, None)
    assert warning == "state and members unknown, the cluster answered: " + error


# ---------------------------------------------------------------------------- read_groups

def test_read_groups_reports_each_group_in_order():
    admin = FakeAdmin(
        {"g1": described("Empty"), "g2": described("Stable", 1),
         "nobody": described("Dead", error="[Error 69] GroupIdNotFoundError: Group nobody not found.")},
        {"g1": committed(("orders", 1, 5), ("orders", 0, 3)), "g2": committed(("orders", 0, 1), ("audit", 0, 9))},
        {"orders": 2, "audit": 1})
    consumer = FakeConsumer({("orders", 0): 5, ("orders", 1): 5, ("audit", 0): 9})
    report, warnings = kg.read_groups(admin, consumer, ["g2", "g1", "nobody"])
    assert list(report) == ["g2", "g1", "nobody"]
    assert report["g1"] == {"state": "Empty", "members": 0, "total_lag": 2, "partitions": [
        {"topic": "orders", "partition": 0, "committed": 3, "end": 5, "lag": 2},
        {"topic": "orders", "partition": 1, "committed": 5, "end": 5, "lag": 0}]}
    assert report["g2"]["total_lag"] == 4 and report["g2"]["members"] == 1
    assert report["nobody"] == {"state": "Dead", "members": 0, "partitions": [], "total_lag": 0}
    assert warnings == []
    # one end_offsets call for every group's partitions, each partition once, in order
    assert consumer.asked == [TopicPartition("audit", 0), TopicPartition("orders", 0), TopicPartition("orders", 1)]


def test_read_groups_restricted_to_topics_asks_only_for_them():
    admin = FakeAdmin({"g": described("Empty")}, {"g": committed(("orders", 0, 3), ("audit", 0, 1))},
                      {"orders": 1, "audit": 1})
    consumer = FakeConsumer({("orders", 0): 5, ("audit", 0): 4})
    report, _warnings = kg.read_groups(admin, consumer, ["g"], topics=["orders", "not-there"])
    assert [(p["topic"], p["lag"]) for p in report["g"]["partitions"]] == [("orders", 2)]
    assert admin.asked_topics == ["orders"]
    assert consumer.asked == [TopicPartition("orders", 0)]


def test_read_groups_without_committed_offsets_reads_no_ends():
    admin = FakeAdmin({"g": described("Dead")}, {}, {})
    consumer = FakeConsumer({})
    report, _warnings = kg.read_groups(admin, consumer, ["g"])
    assert report["g"]["partitions"] == [] and consumer.asked is None and admin.asked_topics is None


def test_a_deleted_topic_has_no_end_and_a_warning():
    admin = FakeAdmin({"g": described("Empty")}, {"g": committed(("gone", 0, 3), ("orders", 0, 1), ("orders", 4, 2))},
                      {"orders": 1})
    consumer = FakeConsumer({("orders", 0): 1})
    report, warnings = kg.read_groups(admin, consumer, ["g"])
    assert report["g"]["partitions"] == [
        {"topic": "gone", "partition": 0, "committed": 3, "end": None, "lag": None},
        {"topic": "orders", "partition": 0, "committed": 1, "end": 1, "lag": 0},
        {"topic": "orders", "partition": 4, "committed": 2, "end": None, "lag": None}]
    assert consumer.asked == [TopicPartition("orders", 0)]  # never asked for a partition that does not exist
    assert warnings == ["group 'g': committed offsets on partitions the cluster does not have (end and lag null): "
                        "gone-0, orders-4"]


def test_a_topic_the_cluster_will_not_describe_is_an_error_naming_it():
    with pytest.raises(ValueError, match=r"^topic 'secret-orders': the cluster answered error 29 \(X\) when asked "
                                         r"for its partitions$"):
        kg.existing_partitions([{"name": "secret-orders", "error_code": 29, "partitions": []}],
                               lambda code: "error %d (X)" % code)


def test_a_group_kafka_python_cannot_describe_keeps_its_offsets():
    error = "[Error 69] GroupIdNotFoundError: Group g is not a classic group."
    admin = FakeAdmin({"g": described("Dead", error=error)}, {"g": committed(("t", 0, 1))}, {"t": 1})
    report, warnings = kg.read_groups(admin, FakeConsumer({("t", 0): 3}), ["g"])
    assert report["g"]["state"] is None and report["g"]["members"] is None and report["g"]["total_lag"] == 2
    assert warnings == ["group 'g': state and members unknown, the cluster answered: " + error]


# ---------------------------------------------------------------------------- the module's own input checks

def params(**overrides):
    base = {"groups": ["g"], "topics": None, "timeout": 30}
    base.update(overrides)
    return base


@pytest.mark.parametrize("overrides, errors", [
    ({}, []),
    ({"groups": []}, ["groups: must name at least one consumer group"]),
    ({"groups": ["g", " "]}, ["groups[1]: ' ' is blank (a group id)"]),
    ({"topics": []}, ["topics: an empty list reports nothing; leave it out to report every topic"]),
    ({"topics": ["t", ""]}, ["topics[1]: '' is blank (a topic name)"]),
    ({"timeout": 0}, ["timeout: 0 is not from 1 to 300 seconds"]),
    ({"timeout": 301}, ["timeout: 301 is not from 1 to 300 seconds"]),
])
def test_input_errors(overrides, errors):
    assert module.input_errors(params(**overrides), [], []) == errors


# ---------------------------------------------------------------------------- tries again while the cluster is not ready

class NotReadyYet(FakeAdmin):
    """A FakeAdmin whose first ``not_ready`` describe_groups answer as a broker that just started
    (kafka-python puts the group's error into the answer as text; it raises nothing)."""

    def __init__(self, not_ready, *args):
        FakeAdmin.__init__(self, *args)
        self.not_ready = not_ready
        self.describes = 0

    def describe_groups(self, group_ids):
        self.describes += 1
        if self.describes <= self.not_ready:
            return dict((g, described("Dead", error="[Error 16] NotCoordinatorError: None")) for g in group_ids)
        return FakeAdmin.describe_groups(self, group_ids)


def test_a_group_coordinator_not_ready_is_asked_again():
    clock = Clock()
    admin = NotReadyYet(1, {"g": described("Empty")}, {"g": committed(("t", 0, 1))}, {"t": 1})
    report, warnings = kg.read_groups(admin, FakeConsumer({("t", 0): 1}), ["g"],
                                      retry=kc.Retry(5, clock=clock, sleep=clock.sleep))
    assert admin.describes == 2 and report["g"]["state"] == "Empty" and warnings == []


def test_a_group_coordinator_never_ready_is_an_error_naming_the_group():
    clock = Clock()
    admin = NotReadyYet(1000, {}, {}, {})
    with pytest.raises(kg.NotReady, match=r"^group 'g': \[Error 16\] NotCoordinatorError: None$"):
        kg.read_groups(admin, FakeConsumer({}), ["g"], retry=kc.Retry(5, clock=clock, sleep=clock.sleep))
    assert admin.describes == 10


def test_the_old_name_redirects_to_the_info_module():
    """meta/runtime.yml: playbooks written for kafka_group_offsets keep working."""
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
    binary = shutil.which("ansible-doc", path=os.path.dirname(sys.executable)) or "ansible-doc"
    done = subprocess.run([binary, "-t", "module", "--json", "kafkaops.mirrormaker.kafka_group_offsets"],
                          capture_output=True, text=True, check=False, timeout=120,
                          env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(repo, ".collections")))
    assert done.returncode == 0, done.stderr
    docs = json.loads(done.stdout)
    assert [entry["doc"]["module"] for entry in docs.values()] == ["kafka_group_offsets_info"]
