import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.kafkaops.mirrormaker.plugins.filter import kafka

HEX = "ab" * 64


@pytest.mark.parametrize(
    "text",
    [
        HEX + "  kafka_2.13-4.4.0.tgz\n",
        HEX.upper(),
        # Apache's `gpg --print-md SHA512` layout: name, colon, upper-case groups over two lines.
        "kafka_2.13-4.4.0.tgz: " + " ".join(HEX.upper()[i : i + 8] for i in range(0, 64, 8))
        + "\n                      " + " ".join(HEX.upper()[i : i + 8] for i in range(64, 128, 8)) + "\n",
    ],
)
def test_sha512_layouts(text):
    assert kafka.kafka_sha512(text) == HEX


def test_sha512_refuses_text_without_a_digest():
    with pytest.raises(AnsibleFilterError, match="no sha512"):
        kafka.kafka_sha512("404 Not Found")


def claim(host, cluster, given="", existing=""):
    return {"host": host, "cluster": cluster, "given": given, "existing": existing}


def test_one_new_id_per_cluster_shared_by_its_hosts():
    ids = kafka.kafka_cluster_ids([claim("a1", "A"), claim("a2", "A"), claim("b1", "B")])
    assert sorted(ids) == ["A", "B"]
    assert ids["A"] != ids["B"]
    for value in ids.values():
        assert kafka.CLUSTER_ID.match(value) and not value.startswith("-")


def test_existing_storage_keeps_its_id():
    ids = kafka.kafka_cluster_ids([claim("a1", "A", existing="MkU3OEVBNTcwNTJENDM2Qg"), claim("a2", "A")])
    assert ids == {"A": "MkU3OEVBNTcwNTJENDM2Qg"}


@pytest.mark.parametrize(
    "claims, message",
    [
        ([claim("a1", "A", given="MkU3OEVBNTcwNTJENDM2Qg"), claim("a2", "A", given="AAAAAAAAAAAAAAAAAAAAAA")], "different ids"),
        ([claim("a1", "A", given="short")], "22-character"),
        ([claim("a1", "A", given="MkU3OEVBNTcwNTJENDM2Qg\n")], "22-character"),
        ([claim("a1", "A", existing="MkU3OEVBNTcwNTJENDM2Qg"), claim("a2", "A", existing="AAAAAAAAAAAAAAAAAAAAAA")], "a1=MkU3"),
        ([claim("a1", "A", given="AAAAAAAAAAAAAAAAAAAAAA", existing="MkU3OEVBNTcwNTJENDM2Qg")], "formatted with"),
    ],
)
def test_cluster_id_conflicts_are_refused(claims, message):
    with pytest.raises(AnsibleFilterError, match=message):
        kafka.kafka_cluster_ids(claims)


# ------------------------------------------------------------- shared restart and health

# JmxTool --report-format properties from a real MirrorMaker 2 4.3.1 node (dedicated mode).
JMX_HEALTHY = """time=1795455744705
kafka.connect:type=connect-worker-metrics,connector=MirrorSourceConnector:connector-failed-task-count=0
kafka.connect:type=connect-worker-metrics,connector=MirrorSourceConnector:connector-running-task-count=1
kafka.connect:type=connect-worker-metrics,connector=MirrorSourceConnector:connector-total-task-count=1
kafka.connect:type=connect-worker-metrics,connector=MirrorHeartbeatConnector:connector-failed-task-count=0
kafka.connect:type=connect-worker-metrics,connector=MirrorHeartbeatConnector:connector-running-task-count=1
kafka.connect:type=connect-worker-metrics,connector=MirrorHeartbeatConnector:connector-total-task-count=1
kafka.connect:type=connect-worker-rebalance-metrics:leader-name=http://127.0.0.1:43131/
kafka.connect:type=connect-worker-rebalance-metrics:rebalancing=0.0
kafka.connect:type=connect-worker-rebalance-metrics:time-since-last-rebalance-ms=24717.0
"""


def test_jmx_health_joined_and_every_task_running():
    verdict = kafka.mm2_jmx_health(JMX_HEALTHY)
    assert verdict["healthy"], verdict
    assert verdict["connectors"]["MirrorSourceConnector"] == {"failed": 0, "running": 1, "total": 1}


@pytest.mark.parametrize("change, reason", [
    (("connector-running-task-count=1", "connector-running-task-count=0", 1),
     "MirrorSourceConnector: 0 of 1 tasks running, 0 failed"),
    (("connector-failed-task-count=0", "connector-failed-task-count=1", 1), "1 failed"),
    (("rebalancing=0.0", "rebalancing=1.0", 1), "has not joined its group"),
    (("leader-name=http://127.0.0.1:43131/", "leader-name=", 1), "has not joined its group"),
], ids=["task-not-running", "task-failed", "rebalancing", "no-leader"])
def test_jmx_health_refuses(change, reason):
    verdict = kafka.mm2_jmx_health(JMX_HEALTHY.replace(*change))
    assert not verdict["healthy"]
    assert reason in verdict["reason"]


@pytest.mark.parametrize("since, settle, healthy", [
    ("24717.0", 10, True), ("24717.0", 30, False), ("Infinity", 30, True), ("-1.0", 0, False), ("900.0", 0, True),
])
def test_jmx_health_waits_for_the_last_rebalance_to_settle(since, settle, healthy):
    verdict = kafka.mm2_jmx_health(JMX_HEALTHY.replace("rebalance-ms=24717.0", "rebalance-ms=" + since), settle)
    assert verdict["healthy"] is healthy, verdict
    assert healthy or "not settled yet" in verdict["reason"]


def test_jmx_health_before_the_worker_exists():
    verdict = kafka.mm2_jmx_health("Trying to connect to JMX url\n")
    assert not verdict["healthy"] and "no Connect worker metrics" in verdict["reason"]


def test_restart_order_keeps_play_order_and_the_role():
    hostvars = {"b": {"__kafka_common_pending": {"mirrormaker": True}}, "a": {"__kafka_common_pending": {
        "mirrormaker": True, "kafka_broker": True}}, "c": {}, "d": {"__kafka_common_pending": {"mirrormaker": False}}}
    assert kafka.kafka_restart_order(hostvars, ["b", "a", "c", "d"], "mirrormaker") == ["b", "a"]
    assert kafka.kafka_restart_order(hostvars, ["b", "a", "c", "d"], "kafka_broker") == ["a"]


def test_the_upgrade_plan_filter_wraps_the_upgrade_rules():
    filters = kafka.FilterModule().filters()
    plan = filters["kafka_upgrade_plan"]([{"host": "b1", "kind": "broker", "installed": "3.9.1"},
                                          {"host": "c1", "kind": "controller", "installed": "3.9.1"}],
                                         "4.3.1", [{"cluster": "A", "metadata_version": "3.9-IV0", "installed": "3.9.1"}])
    assert [s["host"] for s in plan["steps"]] == ["c1", "b1"] and plan["faults"] == [] and plan["release"] == "4.3"
