"""The KRaft brokers as a user would check them: files, unit, quorum, and real records."""

from __future__ import annotations

import re

import pytest
from conftest import cluster_bootstrap, consume, hosts_of, kafka, produce, targets, unique

testinfra_hosts = targets("kafka_brokers")

VERSION_DIR = re.compile(r"^/opt/kafka/kafka_2\.1[23]-\d+\.\d+\.\d+$")


def group_of(host):
    return "kafka_a" if host.backend.get_hostname() in hosts_of("kafka_a") else "kafka_b"


def test_install_is_versioned_root_owned_and_current_points_at_it(host):
    current = host.file("/opt/kafka/current")
    assert current.is_symlink
    assert VERSION_DIR.match(current.linked_to)
    libs = host.file(current.linked_to + "/libs")
    assert libs.user == "root" and libs.group == "root"
    assert host.file(current.linked_to + "/bin/kafka-server-start.sh").user == "root"


@pytest.mark.parametrize(
    "path, user, group, mode",
    [
        ("/etc/kafka", "root", "kafka", 0o750),
        ("/etc/kafka/server.properties", "root", "kafka", 0o640),
        ("/var/lib/kafka/data", "kafka", "kafka", 0o750),
        ("/var/log/kafka", "kafka", "kafka", 0o750),
        ("/etc/systemd/system/kafka.service", "root", "root", 0o644),
    ],
)
def test_owners_and_modes(host, path, user, group, mode):
    f = host.file(path)
    assert f.exists, path
    assert (f.user, f.group, f.mode) == (user, group, mode)


def test_system_trees_stay_root_owned(host):
    for path in ("/etc", "/usr", "/opt/kafka"):
        assert host.file(path).user == "root"


def test_service_user_cannot_log_in(host):
    user = host.user("kafka")
    assert user.shell in ("/usr/sbin/nologin", "/sbin/nologin")
    assert user.group == "kafka"


def test_server_properties_are_sorted_and_structured(host):
    text = host.file("/etc/kafka/server.properties").content_string
    assert "Ansible managed" in text
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    keys = [line.split("=", 1)[0] for line in lines]
    assert keys == sorted(keys)
    props = dict(line.split("=", 1) for line in lines)
    name = host.backend.get_hostname()
    assert props["process.roles"] == "broker,controller"
    assert props["controller.quorum.voters"] == "1@%s:9093" % name
    assert props["advertised.listeners"] == "PLAINTEXT://%s:9092" % name


def test_unit_is_hardened_and_running(host):
    svc = host.service("kafka")
    assert svc.is_running and svc.is_enabled
    show = host.check_output(
        "systemctl show kafka -p User -p NoNewPrivileges -p ProtectSystem -p PrivateTmp -p LimitNOFILE -p Restart")
    props = dict(line.split("=", 1) for line in show.splitlines())
    assert props == {
        "User": "kafka",
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "PrivateTmp": "yes",
        "LimitNOFILE": "100000",
        "Restart": "on-failure",
    }
    assert host.process.filter(user="kafka", comm="java")


def test_listeners_are_open(host):
    assert host.socket("tcp://0.0.0.0:9092").is_listening
    assert host.socket("tcp://0.0.0.0:9093").is_listening


def test_storage_formatted_once_with_the_cluster_id(host):
    meta = host.file("/var/lib/kafka/data/meta.properties").content_string
    cluster_id = re.search(r"^cluster\.id=(\S+)$", meta, re.M).group(1)
    assert re.match(r"^[A-Za-z0-9_-]{22}$", cluster_id)
    assert re.search(r"^node\.id=1$", meta, re.M)


def test_each_cluster_has_its_own_id(host):
    # Every broker asks both clusters: each must see the two ids differ.
    a_host, b_host = hosts_of("kafka_a")[0], hosts_of("kafka_b")[0]
    ids = []
    for bootstrap in (cluster_bootstrap("kafka_a"), cluster_bootstrap("kafka_b")):
        out = kafka(host, "kafka-metadata-quorum.sh", "--bootstrap-server", bootstrap, "describe", "--status").stdout
        ids.append(re.search(r"ClusterId:\s+(\S+)", out).group(1))
    assert ids[0] != ids[1], "clusters %s and %s share cluster id %s" % (a_host, b_host, ids[0])


def test_broker_is_in_the_quorum(host):
    bootstrap = cluster_bootstrap(group_of(host))
    out = kafka(host, "kafka-metadata-quorum.sh", "--bootstrap-server", bootstrap, "describe", "--status").stdout
    assert re.search(r"LeaderId:\s+1\b", out), out
    replication = kafka(host, "kafka-metadata-quorum.sh", "--bootstrap-server", bootstrap,
                        "describe", "--replication").stdout
    # Columns vary by version (4.x adds DirectoryId): read them by header name.
    rows = [line.split() for line in replication.splitlines() if line.strip()]
    header = rows[0]
    nodes = {row[header.index("NodeId")]: row[header.index("Status")] for row in rows[1:]}
    assert nodes.get("1") == "Leader", replication


def test_topic_created_with_kafka_topics(host):
    bootstrap = "%s:9092" % host.backend.get_hostname()
    topic = unique("verify-topic")
    kafka(host, "kafka-topics.sh", "--bootstrap-server", bootstrap, "--create", "--topic", topic,
          "--partitions", "3", "--replication-factor", "1")
    described = kafka(host, "kafka-topics.sh", "--bootstrap-server", bootstrap, "--describe", "--topic", topic).stdout
    assert "PartitionCount: 3" in described


def test_record_produced_is_read_back(host):
    bootstrap = "%s:9092" % host.backend.get_hostname()
    topic = unique("verify-records")
    kafka(host, "kafka-topics.sh", "--bootstrap-server", bootstrap, "--create", "--topic", topic,
          "--partitions", "1", "--replication-factor", "1")
    value = unique("hello")
    produce(host, bootstrap, topic, [value])
    assert consume(host, bootstrap, topic, 1, 30000) == [value]
