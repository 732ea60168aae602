# -*- coding: utf-8 -*-
"""The Connect layout derived from the flow model: names, worker properties, connector configs,
secrets moved to FileConfigProvider files, and the refusals (each naming the variable)."""

from __future__ import annotations

import os
import sys

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import connect as mm2_connect

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import naming

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clock_double import Clock  # noqa: E402

JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="mm2" password="s3cret";'
CLUSTERS = [
    {"alias": "A", "bootstrap_servers": ["a1:9092", "a2:9092"],
     "properties": {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": JAAS,
                    "config.storage.replication.factor": -1}},
    {"alias": "B", "bootstrap_servers": "b1:9092",
     "properties": {"security.protocol": "SASL_SSL", "ssl.truststore.password": "tspass"}},
]
FLOWS = [{"source": "A", "target": "B", "replication_policy": "identity", "topics": ["orders.*"],
          "groups": ["billing"], "emit_heartbeats": False, "sync_group_offsets": True}]
REST = {"port": 8083, "advertised_host": "w1.example", "bind_host": ""}


def settings(**extra):
    base = {"rest": REST, "secrets_dir": "/etc/kafka-connect/secrets", "worker_defaults": {}, "worker_properties": {},
            "connector_properties": {}}
    base.update(extra)
    return base


def plan(flows=None, eos=True, properties=None, broker_counts=None, **extra):
    return mm2_connect.plan(CLUSTERS, flows or FLOWS, properties or {"listeners": "http://x:1", "refresh.topics.interval.seconds": 30},
                            {"exactly_once": eos, "flow_defaults": {"tasks.max": 4}, "broker_counts": broker_counts or {}},
                            "A", "B", settings(**extra))


def test_naming_rules_have_one_home():
    assert mm2_connect.connector_name("A", "B", "MirrorSourceConnector") == "A-to-B-MirrorSourceConnector"
    assert mm2_connect.names("A", "B") == {
        "group_id": "connect-mirrormaker-A-to-B",
        "offsets": "__connect-mirrormaker-A-to-B-offsets",
        "configs": "__connect-mirrormaker-A-to-B-configs",
        "status": "__connect-mirrormaker-A-to-B-status"}
    assert mm2_connect.names("A", "B", "g", "p")["status"] == "p-status"


def test_source_and_checkpoint_connectors_from_the_flow_model():
    result = plan()
    assert result["errors"] == []
    assert list(result["connectors"]) == ["A-to-B-MirrorSourceConnector", "A-to-B-MirrorCheckpointConnector"]
    src = result["connectors"]["A-to-B-MirrorSourceConnector"]
    assert src["replication.policy.class"] == naming.IDENTITY_POLICY
    assert (src["source.cluster.alias"], src["target.cluster.alias"]) == ("A", "B")
    assert src["source.cluster.bootstrap.servers"] == "a1:9092,a2:9092"
    assert src["offset-syncs.topic.location"] == "target"
    assert src["heartbeats.replication.enabled"] == "false"
    assert src["replication.factor"] == "-1"
    assert (src["exactly.once.support"], src["consumer.isolation.level"], src["transaction.boundary"]) == (
        "required", "read_committed", "poll")
    assert "transaction.boundary.interval.ms" not in src
    assert src["topics"] == "orders.*" and src["refresh.topics.interval.seconds"] == "30"
    # Worker keys given for dedicated mode never reach a connector.
    assert "listeners" not in src and "source.cluster.config.storage.replication.factor" not in src
    chk = result["connectors"]["A-to-B-MirrorCheckpointConnector"]
    assert chk["groups"] == "billing" and chk["sync.group.offsets.enabled"] == "true"
    # Exactly-once keys are the source connector's only: a read_committed checkpoint task would not
    # load its checkpoint store while any transaction on the checkpoints topic is open. The flow's
    # transaction boundary is every connector's, as dedicated mode gives it (an exactly-once worker
    # runs every source task in transactions).
    assert not {"exactly.once.support", "consumer.isolation.level"} & set(chk)
    assert chk["transaction.boundary"] == "poll"
    assert list(src) == sorted(src)


@pytest.mark.parametrize("authorizers, sync", [
    ({"A": True, "B": True}, "true"),
    ({"A": False, "B": False}, "false"),
    ({"A": True, "B": False}, "false"),
    ({"A": False}, "false"),
    ({"B": True}, "true"),
    ({}, "true"),
    ({"A": False, "B": False, "C": True}, "false"),
    ({"A": True, "B": True, "C": False}, "true"),  # another flow's cluster does not count
])
def test_topic_acl_sync_follows_the_clusters_authorizers(authorizers, sync):
    assert mm2_connect.topic_acls_sync(authorizers, "A", "B") == sync
    connectors = plan(authorizers=authorizers)["connectors"]
    assert connectors["A-to-B-MirrorSourceConnector"]["sync.topic.acls.enabled"] == sync
    # the source connector's key only, as in the guide's example
    assert "sync.topic.acls.enabled" not in connectors["A-to-B-MirrorCheckpointConnector"]


@pytest.mark.parametrize("where, value, sync", [
    ("properties", False, "false"), ("properties", True, "true"),
    ("flow", False, "false"),
    ("connector", True, "true"), ("connector", False, "false"),
])
def test_a_sync_topic_acls_setting_given_wins_over_the_inventory(where, value, sync):
    authorizers = {"A": sync == "false", "B": sync == "false"}  # the inventory says the opposite
    properties = {"sync.topic.acls.enabled": value} if where == "properties" else None
    flows = [dict(FLOWS[0], properties={"sync.topic.acls.enabled": value})] if where == "flow" else None
    overrides = {"MirrorSourceConnector": {"sync.topic.acls.enabled": value}} if where == "connector" else {}
    result = plan(flows, properties=properties, authorizers=authorizers, connector_properties=overrides)
    assert result["errors"] == []
    assert result["connectors"]["A-to-B-MirrorSourceConnector"]["sync.topic.acls.enabled"] == sync


REVERSE = {"source": "B", "target": "A", "topics": ["x"], "groups": ["y"]}


@pytest.mark.parametrize("flows, broker_counts, authorizers, expected", [
    (None, {"A": 3, "B": 3}, {"A": True, "B": True}, []),
    (None, {}, {}, []),
    (None, {"A": 3, "B": 4}, {}, []),
    (None, {"A": 3, "B": 1}, {},
     ["kafka_brokers: the disaster-recovery cluster B has 1 broker(s), its primary A has 3; "
      "the guide: \"both clusters should have similar resources\""]),
    (None, {"B": 1}, {}, []),  # A runs elsewhere: nothing to compare
    (None, {}, {"A": True, "B": False},
     ["kafka_broker_authorizer_enabled: cluster A runs an authorizer and cluster B none; the guide: \"Both clusters "
      "should also have similar configurations\""]),
    (None, {}, {"A": False, "B": True}, ["kafka_broker_authorizer_enabled: cluster A runs no authorizer and cluster B one"]),
    (None, {}, {"A": True}, []),
    ([dict(FLOWS[0], replication_policy="default"), REVERSE], {}, {},
     ["mirrormaker_flows[1].enabled: flow B->A is enabled while B is the disaster-recovery cluster of A->B; the guide's "
      "disaster-recovery cluster is a hot standby: \"Clients must only be connected to the primary cluster"]),
    ([FLOWS[0], dict(REVERSE, enabled=False)], {}, {}, []),
], ids=["alike", "unknown", "bigger-standby", "smaller-standby", "one-known", "authorizer-primary-only",
        "authorizer-standby-only", "one-authorizer-known", "reverse-flow", "reverse-flow-disabled"])
def test_the_guides_operating_rules_the_inventory_shows_broken_are_warned(flows, broker_counts, authorizers, expected):
    result = plan(flows, broker_counts=broker_counts, authorizers=authorizers)
    assert result["errors"] == []
    assert len(result["warnings"]) == len(expected)
    for warning, start in zip(result["warnings"], expected):
        assert warning.startswith(start), warning


def test_heartbeat_connector_when_the_flow_emits_heartbeats():
    flows = [dict(FLOWS[0], emit_heartbeats=True)]
    assert "A-to-B-MirrorHeartbeatConnector" in plan(flows)["connectors"]


def test_secrets_go_to_provider_files_never_into_the_connector_config():
    result = plan()
    src = result["connectors"]["A-to-B-MirrorSourceConnector"]
    path = "/etc/kafka-connect/secrets/A-to-B-MirrorSourceConnector.properties"
    assert src["source.cluster.sasl.jaas.config"] == "${file:%s:source.cluster.sasl.jaas.config}" % path
    assert src["target.cluster.ssl.truststore.password"] == "${file:%s:target.cluster.ssl.truststore.password}" % path
    assert "s3cret" not in repr(result["connectors"]) and "tspass" not in repr(result["connectors"])
    assert result["secret_files"]["A-to-B-MirrorSourceConnector"] == {
        "path": path, "properties": {"source.cluster.sasl.jaas.config": JAAS, "target.cluster.ssl.truststore.password": "tspass"}}


def test_worker_properties_of_the_layout():
    worker = plan()["worker_properties"]
    assert list(worker) == sorted(worker)
    assert worker["bootstrap.servers"] == "b1:9092"
    assert worker["group.id"] == "connect-mirrormaker-A-to-B"
    assert worker["plugin.discovery"] == "service_load"
    assert worker["key.converter"] == worker["value.converter"] == mm2_connect.BYTE_ARRAY_CONVERTER
    assert worker["config.storage.replication.factor"] == "-1"
    assert worker["exactly.once.source.support"] == "enabled"
    assert worker["listeners"] == "http://:8083" and worker["rest.advertised.host.name"] == "w1.example"
    assert worker["config.providers.file.class"] == mm2_connect.FILE_PROVIDER
    # The target's client security reaches the worker's own clients under every prefix.
    for prefix in ("", "producer.", "consumer.", "admin."):
        assert worker[prefix + "security.protocol"] == "SASL_SSL"
    assert "exactly.once.source.support" not in plan(eos=False)["worker_properties"]


def test_connector_offsets_name_a_connector_of_the_flow():
    offsets = [{"partition": {"cluster": "A", "topic": "orders", "partition": 0}, "offset": {"offset": 9}}]
    result = plan(connector_offsets={"A-to-B-MirrorSourceConnector": offsets})
    assert result["errors"] == [] and result["connector_offsets"] == {"A-to-B-MirrorSourceConnector": offsets}
    errors = plan(connector_offsets={"B-to-A-MirrorSourceConnector": offsets,
                                     "A-to-B-MirrorCheckpointConnector": {"x": 1}})["errors"]
    assert errors == ["connect_connector_offsets.A-to-B-MirrorCheckpointConnector: must be a list of {partition, offset} "
                      "entries (is {'x': 1})",
                      "connect_connector_offsets.B-to-A-MirrorSourceConnector: not a connector of flow A->B (its "
                      "connectors: A-to-B-MirrorSourceConnector, A-to-B-MirrorCheckpointConnector)"]


@pytest.mark.parametrize("states, errors", [
    ({"A-to-B-MirrorCheckpointConnector": "stopped"}, []),
    ({"A-to-B-MirrorCheckpointConnector": "asleep"},
     ["connect_connector_states.A-to-B-MirrorCheckpointConnector: must be one of running, paused, stopped (is 'asleep')"]),
    ({"A-to-B-MirrorHeartbeatConnector": "paused"},
     ["connect_connector_states.A-to-B-MirrorHeartbeatConnector: not a connector of flow A->B (its connectors: "
      "A-to-B-MirrorSourceConnector, A-to-B-MirrorCheckpointConnector)"]),
])
def test_connector_states_name_a_connector_of_the_flow_and_a_state(states, errors):
    result = plan(connector_states=states)
    assert result["errors"] == errors
    assert result["connector_states"] == ({} if errors else states)


@pytest.mark.parametrize("worker_defaults, worker_properties, seconds", [
    ({}, {}, 300.0),
    ({"scheduled.rebalance.max.delay.ms": 30000}, {}, 30.0),
    ({"scheduled.rebalance.max.delay.ms": 30000}, {"scheduled.rebalance.max.delay.ms": "5000"}, 5.0),
    ({}, {"scheduled.rebalance.max.delay.ms": "soon"}, 300.0),
])
def test_a_leaving_workers_tasks_wait_the_workers_rebalance_delay(worker_defaults, worker_properties, seconds):
    assert plan(worker_defaults=worker_defaults, worker_properties=worker_properties)["handover_seconds"] == seconds


@pytest.mark.parametrize("overrides, fragment", [
    ({"MirrorCheckpointConnector": {"offset-syncs.topic.location": "source"}}, "'offset-syncs.topic.location'"),
    ({"MirrorCheckpointConnector": {"replication.policy.class": naming.DEFAULT_POLICY}}, "'replication.policy.class'"),
    ({"MirrorSourceConnector": {"replication.policy.separator": "_"}}, "'replication.policy.separator'"),
    ({"MirrorSourceConnector": {"topics": "other"}}, "'topics'"),
    ({"MirrorSourceConnector": {"transaction.boundary": "connector"}}, "transaction.boundary='connector'"),
    ({"MirrorSourceConnector": {"consumer.isolation.level": "read_uncommitted"}}, "read_committed"),
    ({"MirrorSourcConnector": {"tasks.max": 1}}, "did you mean 'MirrorSourceConnector'"),
    ({"MirrorSourceConnector": {"name": "mirror"}},
     "connector A-to-B-MirrorSourceConnector would be configured with name='mirror'"),
])
def test_refused_connector_settings_name_the_variable(overrides, fragment):
    errors = plan(connector_properties=overrides)["errors"]
    assert errors and all(e.startswith("connect_connector_properties") for e in errors), errors
    assert any(fragment in e for e in errors), errors


def test_exactly_once_on_a_connector_needs_the_workers_support():
    errors = plan(eos=False, connector_properties={"MirrorSourceConnector": {
        "exactly.once.support": "required", "consumer.isolation.level": "read_committed"}})["errors"]
    assert errors == ["connect_connector_properties: MirrorSourceConnector asks for exactly.once.support=required but "
                      "the workers do not enable exactly.once.source.support; set connect_exactly_once: true"]
    errors = plan(worker_properties={"exactly.once.source.support": None})["errors"]
    assert any(e.startswith("connect_worker_properties: exactly.once.source.support is turned off") for e in errors)


@pytest.mark.parametrize("name", ["A/B", "A to B", "", "a\tb"])
def test_connector_names_the_rest_path_cannot_carry(name):
    assert mm2_connect.connector_name_fault(name, "connect_source")


def test_a_flow_that_does_not_exist_or_is_disabled():
    assert plan(flows=[{"source": "B", "target": "A"}])["errors"] == [
        "connect_source/connect_target: A->B is not a flow of connect_flows (flows: B->A)"]
    assert "is disabled" in plan(flows=[dict(FLOWS[0], enabled=False)])["errors"][0]


def _worker(host, flow, bootstrap="b1:9092", **names):
    source, target = flow.split("->")
    return {"host": host, "flow": flow, "target_bootstrap": bootstrap,
            "names": dict(mm2_connect.names(source, target, names.get("group_id", ""), names.get("prefix", "")))}


def test_connect_clusters_sharing_state_on_one_kafka_cluster_are_refused():
    assert mm2_connect.check_clusters([_worker("w1", "A->B"), _worker("w2", "A->B"), _worker("w3", "C->B")]) == []
    shared = mm2_connect.check_clusters([_worker("w1", "A->B"), _worker("w3", "C->B", group_id="connect-mirrormaker-A-to-B")])
    assert len(shared) == 1 and "share connect-mirrormaker-A-to-B" in shared[0]
    # The same names on another Kafka cluster share nothing.
    elsewhere = _worker("w3", "C->D", bootstrap="d1:9092", group_id="connect-mirrormaker-A-to-B")
    assert mm2_connect.check_clusters([_worker("w1", "A->B"), elsewhere]) == []
    split = mm2_connect.check_clusters([_worker("w1", "A->B"), _worker("w2", "A->B", group_id="other")])
    assert len(split) == 1 and "disagree" in split[0]


def test_health_of_a_worker():
    ok = {"c": {"status": {"connector": {"state": "RUNNING"}, "tasks": [{"id": 0, "state": "RUNNING"}]}},
          "d": {"status": {"connector": {"state": "RUNNING"}, "tasks": []}}}
    assert mm2_connect.unhealthy(ok) == []
    bad = {"c": {"status": {"connector": {"state": "RUNNING"},
                            "tasks": [{"id": 1, "state": "FAILED", "worker_id": "w1:8083"}]}}}
    assert mm2_connect.unhealthy(bad) == ["c task 1 is FAILED on w1:8083"]
    assert mm2_connect.unhealthy({"c": {"status": {"connector": {"state": "UNASSIGNED"}, "tasks": []}}}) == ["c is UNASSIGNED"]


def _status(*units):
    """GET /connectors?expand=status from (connector, task id or None, state, worker) rows."""
    out = {}
    for name, task, state, worker in units:
        entry = out.setdefault(name, {"status": {"connector": {}, "tasks": []}})["status"]
        if task is None:
            entry["connector"] = {"state": state, "worker_id": worker}
        else:
            entry["tasks"].append({"id": task, "state": state, "worker_id": worker})
    return out


STABLE = _status(("s", None, "RUNNING", "w1:8083"), ("s", 0, "RUNNING", "w2:8083"),
                 ("c", None, "RUNNING", "w2:8083"), ("c", 0, "RUNNING", "w1:8083"))


@pytest.mark.parametrize("second, worker, workers, reasons", [
    (STABLE, None, 0, []),
    (STABLE, "w1:8083", 2, []),
    # A task moved: a rebalance between the reads.
    (_status(("s", None, "RUNNING", "w1:8083"), ("s", 0, "RUNNING", "w1:8083"),
             ("c", None, "RUNNING", "w2:8083"), ("c", 0, "RUNNING", "w1:8083")), None, 0,
     ["s task 0 changed between two reads: RUNNING on w2:8083, then RUNNING on w1:8083"]),
    # A task that was reconfigured away and one that appeared.
    (_status(("s", None, "RUNNING", "w1:8083"), ("s", 0, "RUNNING", "w2:8083"), ("s", 1, "RUNNING", "w2:8083"),
             ("c", None, "RUNNING", "w2:8083")), None, 0,
     ["c task 0 went away between two reads", "s task 1 appeared between two reads"]),
    # The restarted worker runs nothing although there are as many connectors as workers.
    (_status(("s", None, "RUNNING", "w1:8083"), ("s", 0, "RUNNING", "w1:8083"),
             ("c", None, "RUNNING", "w1:8083"), ("c", 0, "RUNNING", "w1:8083")), "w2:8083", 2,
     None),
    # Fewer connectors than workers: a worker may rightly run nothing.
    (STABLE, "w3:8083", 3, []),
])
def test_two_reads_must_agree(second, worker, workers, reasons):
    first = second if reasons is None else STABLE
    got = mm2_connect.unstable(first, second, worker, workers)
    if reasons is None:
        assert got == ["worker w2:8083 runs none of the 2 connectors and their tasks: it is not in the group's "
                       "current assignment"]
    else:
        assert got == reasons


class _Reads(object):
    """Answers in turn; an Exception instance is raised."""

    def __init__(self, clock, answers):
        self.clock, self.answers, self.times = clock, list(answers), []

    def __call__(self):
        self.times.append(self.clock.now)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer


UNASSIGNED = _status(("s", None, "RUNNING", "w1:8083"), ("s", 0, "UNASSIGNED", "w2:8083"),
                     ("c", None, "RUNNING", "w2:8083"), ("c", 0, "RUNNING", "w1:8083"))
MOVED = _status(("s", None, "RUNNING", "w1:8083"), ("s", 0, "RUNNING", "w1:8083"),
                ("c", None, "RUNNING", "w2:8083"), ("c", 0, "RUNNING", "w1:8083"))


@pytest.mark.parametrize("answers, stable, reads, waited", [
    # Two agreeing reads, settle seconds apart.
    ([STABLE], True, 2, 10),
    # Unreachable, then a task not running, then stable: the settle starts at the first healthy read.
    ([OSError("refused"), UNASSIGNED, STABLE, STABLE], True, 3, 20),
    # A read that looks healthy, then the second cooperative round moves a task: two more reads.
    ([STABLE, MOVED, MOVED], True, 3, 20),
    # Never stable: fails at the deadline with the last reason.
    ([STABLE, MOVED, STABLE, MOVED, STABLE, MOVED, STABLE, MOVED], False, None, 60),
])
def test_wait_stable_waits_for_two_agreeing_reads(answers, stable, reads, waited):
    clock = Clock()
    read = _Reads(clock, answers)
    ok, status, reasons, made = mm2_connect.wait_stable(read, 60, 10, poll=5, clock=clock, sleep=clock.sleep)
    assert ok is stable
    assert read.times[-1] == waited
    if stable:
        assert (status, reasons, made) == (answers[-1], [], reads)
    else:
        assert reasons and all("changed between two reads" in r for r in reasons)


# w2 taken out: its task still reads RUNNING (its last status write), then UNASSIGNED while the
# scheduled rebalance delay runs, then the task runs on w1.
GONE_RUNNING = STABLE
GONE_UNASSIGNED = UNASSIGNED
HANDED_OVER = _status(("s", None, "RUNNING", "w1:8083"), ("s", 0, "RUNNING", "w1:8083"),
                      ("c", None, "RUNNING", "w1:8083"), ("c", 0, "RUNNING", "w1:8083"))


@pytest.mark.parametrize("status, reasons", [
    (GONE_RUNNING, ["c is still on w2:8083, which was taken out", "s task 0 is still on w2:8083, which was taken out"]),
    (GONE_UNASSIGNED, ["c is still on w2:8083, which was taken out", "s task 0 is UNASSIGNED on w2:8083"]),
    (HANDED_OVER, []),
])
def test_nothing_may_stay_on_a_worker_taken_out(status, reasons):
    assert mm2_connect.unhealthy(status, gone=["w2:8083"]) == reasons
    # without the rule, a task still read RUNNING on the leaving worker passes
    assert mm2_connect.unhealthy(GONE_RUNNING) == []


def test_wait_stable_waits_until_the_tasks_left_the_worker_taken_out():
    clock = Clock()
    read = _Reads(clock, [GONE_RUNNING, GONE_UNASSIGNED, GONE_UNASSIGNED, HANDED_OVER])
    ok, status, reasons, made = mm2_connect.wait_stable(read, 120, 10, poll=5, clock=clock, sleep=clock.sleep,
                                                        gone=["w2:8083"])
    assert (ok, status, reasons, made) == (True, HANDED_OVER, [], 5)
    assert read.times == [0, 5, 10, 15, 25]
