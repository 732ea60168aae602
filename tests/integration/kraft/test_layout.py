"""Cluster A's layout: controllers on hosts of their own, brokers without a controller role."""

from __future__ import annotations

from conftest import hosts_of, targets

testinfra_hosts = targets("kafka_controllers") + targets("kafka_a_brokers")


def server_properties(host):
    text = host.file("/etc/kafka/server.properties").content_string
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))


def test_each_host_has_only_its_role(host):
    props = server_properties(host)
    controller = host.backend.get_hostname() in hosts_of("kafka_controllers")
    assert props["process.roles"] == ("controller" if controller else "broker")
    voters = props["controller.quorum.voters"].split(",")
    assert sorted(v.split("@")[1].split(":")[0] for v in voters) == sorted(hosts_of("kafka_controllers"))
    assert host.socket("tcp://0.0.0.0:9093").is_listening is controller
    assert host.socket("tcp://0.0.0.0:9092").is_listening is not controller
    assert host.service("kafka").is_running
