# -*- coding: utf-8 -*-
"""A KRaft cluster's layout across the play's hosts (module_utils/kafka/layout.py)."""

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import layout


def me(host, cluster="A", node_id=-1, roles=("broker", "controller"), quorum=(), listeners=None, **kw):
    item = {
        "host": host,
        "cluster": cluster,
        "node_id": node_id,
        "roles": list(roles),
        "listeners": listeners if listeners is not None else [{"name": "PLAINTEXT", "port": 9092, "protocol": "PLAINTEXT"}],
        "controller_listener": {"name": "CONTROLLER", "port": 9093, "protocol": "PLAINTEXT"},
        "inter_broker_listener": "PLAINTEXT",
        "advertised_host": host + ".example",
        "bind_host": "",
        "quorum_hosts": list(quorum),
    }
    item.update(kw)
    return item


def test_plan_of_a_three_node_combined_cluster_beside_another_cluster():
    hosts = [me("a2"), me("a1"), me("a3"), me("b1", cluster="B")]
    plan = layout.plan(hosts, "a2")
    assert plan["errors"] == []
    assert plan["node_id"] == 2
    assert plan["members"] == ["a1", "a2", "a3"]
    assert plan["voters"] == "1@a1.example:9093,2@a2.example:9093,3@a3.example:9093"
    assert plan["bootstrap_servers"] == "a1.example:9092,a2.example:9092,a3.example:9092"
    assert plan["listeners"] == "PLAINTEXT://:9092,CONTROLLER://:9093"
    assert plan["advertised_listeners"] == "PLAINTEXT://a2.example:9092"
    assert plan["protocol_map"] == "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"


def test_split_roles_controllers_listen_only_on_the_controller_port():
    hosts = [me("c1", roles=["controller"]), me("b1", roles=["broker"])]
    assert layout.plan(hosts, "c1")["listeners"] == "CONTROLLER://:9093"
    plan = layout.plan(hosts, "b1")
    assert plan["listeners"] == "PLAINTEXT://:9092"
    assert plan["voters"] == "2@c1.example:9093"


@pytest.mark.parametrize(
    "hosts, host, fragment",
    [
        ([me("a1", listeners=[{"name": "PLAINTEXT", "port": 9093, "protocol": "PLAINTEXT"}])], "a1",
         "kafka_broker_controller_listener.port: 9093 collides with kafka_broker_listeners[0]"),
        ([me("a1", listeners=[{"name": "PLAINTEXT", "port": 9092, "protocol": "PLAINTEXT"},
                              {"name": "SASL", "port": 9092, "protocol": "SASL_SSL"}])], "a1",
         "kafka_broker_listeners[1].port: 9092 collides"),
        ([me("a1", listeners=[{"name": "PLAINTEXT", "port": 9092, "protocol": "TLS"}])], "a1",
         "kafka_broker_listeners[0].protocol: 'TLS'"),
        ([me("a1", listeners=[{"name": "plain", "port": 9092, "protocol": "PLAINTEXT"}])], "a1",
         "kafka_broker_listeners[0].name: 'plain'"),
        ([me("a1", inter_broker_listener="REPLICATION")], "a1", "kafka_broker_inter_broker_listener: 'REPLICATION'"),
        ([me("a1", quorum=["a1", "ghost"])], "a1", "kafka_broker_controller_quorum_hosts: 'ghost' is not a host"),
        ([me("a1", quorum=["a1", "b1"]), me("b1", cluster="B")], "a1", "'b1' belongs to cluster 'B'"),
        ([me("a1", node_id=1), me("a2", node_id=1)], "a2", "kafka_broker_node_id: a1 and a2"),
        ([me("a1", roles=["broker"])], "a1", "has no host with the controller role"),
        ([me("a1", roles=["zookeeper"])], "a1", "kafka_broker_process_roles: ['zookeeper']"),
        ([me("a1", roles=[]), me("a2")], "a1", "kafka_broker_process_roles: [] must be a non-empty list"),
        ([me("a1", quorum=["a1", "a2"]), me("a2", roles=["broker"], quorum=["a1", "a2"])], "a1",
         "kafka_broker_controller_quorum_hosts: 'a2' does not have the controller process role"),
        ([me("a1", listeners=[{"name": "PLAINTEXT", "port": 9092, "protocol": "PLAINTEXT"},
                              {"name": "PLAINTEXT", "port": 9094, "protocol": "SSL"}])], "a1",
         "kafka_broker_listeners[1].name: 'PLAINTEXT' is already used by kafka_broker_listeners[0]"),
        ([me("a1", listeners=[{"name": "PLAINTEXT", "port": 9092, "protocol": "PLAINTEXT"},
                              {"name": "CONTROLLER", "port": 9094, "protocol": "PLAINTEXT"}])], "a1",
         "kafka_broker_controller_listener.name: 'CONTROLLER' is already used by kafka_broker_listeners[1]"),
        ([me("a1", listeners=[{"name": "PLAINTEXT", "port": 0, "protocol": "PLAINTEXT"}])], "a1",
         "kafka_broker_listeners[0].port: 0 is not a TCP port"),
        ([me("a1", listeners=[{"name": "PLAINTEXT", "port": 65536, "protocol": "PLAINTEXT"}])], "a1",
         "kafka_broker_listeners[0].port: 65536 is not a TCP port"),
        ([me("a1", listeners=[{"name": "PLAINTEXT", "port": "9092", "protocol": "PLAINTEXT"}])], "a1",
         "kafka_broker_listeners[0].port: '9092' is not a TCP port"),
        ([me("a1", listeners=[{"name": "PLAINTEXT", "port": True, "protocol": "PLAINTEXT"}])], "a1",
         "kafka_broker_listeners[0].port: True is not a TCP port"),
        ([me("a1", controller_listener={"name": "CONTROLLER", "port": -1, "protocol": "PLAINTEXT"})], "a1",
         "kafka_broker_controller_listener.port: -1 is not a TCP port"),
        ([me("a1", cluster_id="MkU3OEVBNTcwNTJENDM2Qg"), me("a2"), me("a3", cluster_id="AAAAAAAAAAAAAAAAAAAAAA")],
         "a2", "kafka_broker_cluster_id: hosts of cluster 'A' give different ids: AAAAAAAAAAAAAAAAAAAAAA (a3); "
               "MkU3OEVBNTcwNTJENDM2Qg (a1)"),
    ],
    ids=["controller-port-collides", "listener-port-collides", "bad-protocol", "lower-case-name",
         "inter-broker-not-served", "quorum-ghost", "quorum-other-cluster", "node-id-twice", "no-controller",
         "unknown-role", "no-roles", "quorum-host-not-controller", "listener-name-twice",
         "controller-name-is-a-listeners", "port-zero", "port-too-high", "port-a-string", "port-a-bool",
         "controller-port-negative", "cluster-ids-differ"],
)
def test_plan_refuses_bad_layouts_naming_the_variable(hosts, host, fragment):
    errors = layout.plan(hosts, host)["errors"]
    # One message per fault: the fault is named once, whatever else the layout gets wrong.
    assert len([e for e in errors if fragment in e]) == 1, errors


# One given id, on any number of hosts, is the cluster's; another cluster may give another.
@pytest.mark.parametrize("hosts", [
    [me("a1", cluster_id="MkU3OEVBNTcwNTJENDM2Qg"), me("a2")],
    [me("a1", cluster_id="MkU3OEVBNTcwNTJENDM2Qg"), me("a2", cluster_id="MkU3OEVBNTcwNTJENDM2Qg")],
    [me("a1", cluster_id="MkU3OEVBNTcwNTJENDM2Qg"), me("b1", cluster="B", cluster_id="AAAAAAAAAAAAAAAAAAAAAA")],
], ids=["given-on-one-host", "same-on-every-host", "another-cluster"])
def test_plan_accepts_one_given_cluster_id_per_cluster(hosts):
    for member in hosts:
        assert layout.plan(hosts, member["host"])["errors"] == []


@pytest.mark.parametrize("value, refused", [
    ("", False), ("MkU3OEVBNTcwNTJENDM2Qg", False), ("a-b_AAAAAAAAAAAAAAAAAA", False),
    ("short", True), ("MkU3OEVBNTcwNTJENDM2Qg==", True), ("MkU3OEVBNTcwNTJENDM2Q+", True),
    ("MkU3OEVBNTcwNTJENDM2Qg\n", True),
])
def test_cluster_id_form(value, refused):
    expected = ["kafka_broker_cluster_id: %r is not a 22-character base64url id" % value] if refused else []
    assert layout.cluster_id_errors(value) == expected


def test_a_broker_taken_out_keeps_the_node_ids_and_leaves_the_bootstrap_servers():
    hosts = [me("c1", roles=["controller"]), me("b1", roles=["broker"]), me("b2", roles=["broker"], state="absent"),
             me("b3", roles=["broker"])]
    for host, node_id in (("b1", 1), ("b2", 2), ("b3", 3)):
        plan = layout.plan(hosts, host)
        assert plan["errors"] == [] and plan["node_id"] == node_id
        assert plan["bootstrap_servers"] == "b1.example:9092,b3.example:9092"
    hosts[1]["state"] = "absent"
    assert layout.plan(hosts, "b3")["first_broker"] == "b3"


@pytest.mark.parametrize("hosts, host, fragment", [
    ([me("c1", roles=["controller"], state="absent"), me("b1", roles=["broker"])], "c1",
     "kafka_broker_state: absent on c1, a KRaft controller (kafka_broker_process_roles controller)"),
    ([me("a1", state="absent"), me("a2")], "a1",
     "kafka_broker_state: absent on a1, a KRaft controller (kafka_broker_process_roles broker,controller)"),
    ([me("c1", roles=["controller"]), me("b1", roles=["broker"], state="absent")], "b1",
     "kafka_broker_state: absent on every broker of cluster 'A'"),
])
def test_plan_refuses_taking_out_a_controller_or_the_last_broker(hosts, host, fragment):
    errors = layout.plan(hosts, host)["errors"]
    assert len(errors) == 1 and errors[0].startswith(fragment), errors
