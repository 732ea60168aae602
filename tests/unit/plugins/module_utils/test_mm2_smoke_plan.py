# -*- coding: utf-8 -*-
"""module_utils/mm2/smoke_plan.py: the mm2_smoke role's refusals (one message per fault, naming the
variable), the checks' waits derived from MirrorMaker 2's intervals, the job's Kerberos login, and the
job's configuration. Through the role, on a dry run: tests/golden (the smoke job's configuration);
against real brokers: tests/live/test_role.py."""

from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import smoke_plan as sp

JARS = "/srv/jars"
KAFKA_JAR = "spark-sql-kafka-0-10_2.13-4.2.0.jar"


def inputs(**over):
    base = dict(mode="smoke", checks=["markers", "offsets"], topics=["mm2-smoke"], records=100, payload_bytes=256,
                partitions=3, timeouts={"markers": 180}, reconcile_topics=[], extra_checks={}, jars_src=JARS,
                wheels_src="", spark_master="local[2]", spark_master_timeout=10, user="mm2-smoke", jaas={},
                krb5_conf="", lag_exporter_enabled=False, lag_exporter_address="0.0.0.0", lag_exporter_port=9405,
                lag_exporter_timeout=8, install_dir="/opt/kafkaops-mm2-smoke", python="")
    base.update(over)
    return base


def fs(dirs=(JARS,), jars=(KAFKA_JAR, "kafka-clients-3.9.2.jar")):
    """isdir, listdir and isfile of a controller holding ``dirs``, the jars in JARS."""
    return (lambda path: path in dirs), (lambda _path: list(jars)), (lambda path: path.endswith(".jar"))


def size(path):
    """A controller file's size: its name's length."""
    return len(path.rsplit("/", 1)[-1])


def faults(**over):
    isdir, listdir, isfile = fs()
    return sp.faults(inputs(**over), isdir, listdir, isfile)


def test_the_defaults_pass():
    assert faults() == []


@pytest.mark.parametrize("over, message", [
    ({"mode": "audit"}, "mm2_smoke_mode: audit is not smoke or reconcile"),
    ({"checks": []}, "mm2_smoke_checks: must name at least one of markers, offsets, configs, new_topics, heartbeats, cycles"),
    ({"checks": ["markers", "latency", "latency"]},
     "mm2_smoke_checks: latency is not one of markers, offsets, configs, new_topics, heartbeats, cycles"),
    ({"topics": []}, "mm2_smoke_topics: must name at least one topic"),
    ({"topics": ["ok", "a b"]}, "mm2_smoke_topics: ['a b'] are not topic names (letters, digits, . _ -)"),
    ({"records": 0}, "mm2_smoke_records: 0 is not a positive number"),
    ({"records": "many"}, "mm2_smoke_records: many is not a positive number"),
    ({"payload_bytes": -1}, "mm2_smoke_payload_bytes: -1 is not a positive number"),
    ({"partitions": 0}, "mm2_smoke_partitions: 0 is not a positive number"),
    ({"timeouts": {"offsets": 0}}, "mm2_smoke_timeouts.offsets: 0 is not a positive number of seconds"),
    ({"timeouts": {"markers": "soon"}}, "mm2_smoke_timeouts.markers: soon is not a positive number of seconds"),
    ({"timeouts": {"checkpoints": 60}},
     "mm2_smoke_timeouts.checkpoints: not a wait of the job (markers, offsets, configs, new_topic, heartbeats, bootstrap)"),
    ({"jars_src": ""}, "mm2_smoke_jars_src: the job reads Kafka through Spark's Kafka source; give the directory of its "
                       "jars (lab/spark/fetch.sh makes them)"),
    ({"jars_src": "/nowhere"}, "mm2_smoke_jars_src: /nowhere is not a directory on the controller"),
    ({"spark_master": "spark://spark-1:7077,spark-2"},
     "mm2_smoke_spark_master: spark://spark-1:7077,spark-2 is not spark://host:port[,host:port...] (a standalone "
     "master and its standbys; spark-2 is not host:port)"),
    ({"spark_master_timeout": 0}, "mm2_smoke_spark_master_timeout: 0 is not a positive number of seconds"),
    ({"user": "Smoke User"}, "mm2_smoke_user: Smoke User is not a user name (lower case letters, digits, _ and -)"),
    ({"user": "root"}, "mm2_smoke_user: the job runs unprivileged; root is refused (empty runs it as the connection's user)"),
    ({"wheels_src": "/nowhere"}, "mm2_smoke_wheels_src: /nowhere is not a directory on the controller"),
    ({"lag_exporter_address": "0.0.0.0 --debug"},
     "mm2_smoke_lag_exporter_address: '0.0.0.0 --debug' is not a host name or an IP address to listen on"),
    ({"lag_exporter_address": ""}, "mm2_smoke_lag_exporter_address: '' is not a host name or an IP address to listen on"),
    ({"lag_exporter_port": 0}, "mm2_smoke_lag_exporter_port: 0 is not a port (1 to 65535)"),
    ({"lag_exporter_port": 65536}, "mm2_smoke_lag_exporter_port: 65536 is not a port (1 to 65535)"),
    ({"lag_exporter_port": True}, "mm2_smoke_lag_exporter_port: True is not a port (1 to 65535)"),
    ({"lag_exporter_timeout": 0}, "mm2_smoke_lag_exporter_timeout: 0 is not from 1 to 300 seconds"),
    ({"lag_exporter_timeout": 301}, "mm2_smoke_lag_exporter_timeout: 301 is not from 1 to 300 seconds"),
    ({"lag_exporter_enabled": True, "user": ""},
     "mm2_smoke_lag_exporter_enabled: the exporter is a service of mm2_smoke_user, which is empty (the connection's "
     "user runs the job, a service has none)"),
    ({"lag_exporter_enabled": True, "install_dir": "/opt/mm2 smoke"},
     "mm2_smoke_install_dir: '/opt/mm2 smoke' goes into the lag exporter's systemd unit: an absolute path of letters, "
     "digits and . _ / + - only"),
    ({"lag_exporter_enabled": True, "python": "/usr/bin/python3 -X dev"},
     "mm2_smoke_python: '/usr/bin/python3 -X dev' goes into the lag exporter's systemd unit: an absolute path of "
     "letters, digits and . _ / + - only"),
])
def test_each_fault_is_one_message_naming_the_variable(over, message):
    assert faults(**over) == [message]


@pytest.mark.parametrize("over", [
    {"timeouts": {"new_topic": None}},  # the job derives it
    {"spark_master": "spark://[::1]:7077,spark-2.example:7077"},
    {"spark_master": "yarn"},
    {"user": ""},
    {"mode": "reconcile"},
    {"lag_exporter_enabled": True},
    {"lag_exporter_enabled": True, "python": "/usr/bin/python3.11"},
    {"install_dir": "/opt/mm2 smoke"},  # only the exporter's unit carries it
])
def test_accepted(over):
    assert faults(**over) == []


@pytest.mark.parametrize("address, port, listen, url", [
    ("0.0.0.0", 9405, "0.0.0.0:9405", "http://127.0.0.1:9405/metrics"),
    ("mm2-1.example", "9500", "mm2-1.example:9500", "http://mm2-1.example:9500/metrics"),
    ("::", 9405, "[::]:9405", "http://[::1]:9405/metrics"),
    ("fe80::1", 9405, "[fe80::1]:9405", "http://[fe80::1]:9405/metrics"),
])
def test_lag_exporter_listen_and_url(address, port, listen, url):
    given = inputs(lag_exporter_address=address, lag_exporter_port=port)
    assert faults(lag_exporter_address=address, lag_exporter_port=port) == []
    assert (sp.lag_exporter_listen(given), sp.lag_exporter_url(given)) == (listen, url)


def test_a_jar_directory_without_the_kafka_source_is_named():
    isdir, listdir, isfile = fs(jars=("kafka-clients-3.9.2.jar",))
    assert sp.faults(inputs(), isdir, listdir, isfile) == [
        "mm2_smoke_jars_src: /srv/jars has no spark-sql-kafka-0-10_*.jar (lab/spark/fetch.sh makes them)"]


def test_every_fault_at_once():
    assert len(faults(mode="audit", records=0, user="root", jars_src="")) == 4


@pytest.mark.parametrize("properties, given, expected", [
    # MirrorMaker 2's own defaults when mm2.properties leaves the keys out
    ({}, {}, {"new_topic": 660, "offsets": 690, "configs": 660}),
    ({"refresh.topics.interval.seconds": "10", "refresh.groups.interval.seconds": "10",
      "emit.checkpoints.interval.seconds": "10", "sync.topic.configs.interval.seconds": "10"},
     {"markers": 180}, {"new_topic": 70, "offsets": 50, "configs": 70, "markers": 180}),
    ({"refresh.groups.interval.seconds": "10"}, {"offsets": 300}, {"new_topic": 660, "offsets": 300, "configs": 660}),
])
def test_timeouts_follow_mm2s_intervals_unless_given(properties, given, expected):
    assert sp.timeouts(properties, given) == expected


GSSAPI = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI"}
KERBEROS = {"login_module": "kerberos", "principal": "mm2/h@R"}


@pytest.mark.parametrize("jaas, keytab_src, props, line", [
    (KERBEROS, "/ctl/h.keytab", GSSAPI, 'com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true '
                                        'storeKey=true keyTab="/etc/kafka-mirrormaker/mm2.keytab" principal="mm2/h@R";'),
    (dict(KERBEROS, keytab="/k"), "", GSSAPI, 'com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true '
                                              'storeKey=true keyTab="/k" principal="mm2/h@R";'),
    (KERBEROS, "/ctl/h.keytab", {"security.protocol": "PLAINTEXT"}, None),  # not GSSAPI: untouched
    ({}, "", GSSAPI, None),  # no kerberos login to give
    (KERBEROS, "/ctl/h.keytab", dict(GSSAPI, **{"sasl.jaas.config": "own;"}), "own;"),  # its own line stays
])
def test_a_gssapi_cluster_gets_mirrormakers_login_as_its_jaas_line(jaas, keytab_src, props, line):
    keytab = sp.keytab(jaas, keytab_src, "")
    out = sp.clusters({"A": {"bootstrap_servers": "a:9092", "properties": props}}, jaas, keytab)
    assert out["A"]["properties"].get("sasl.jaas.config") == line
    assert out["A"]["bootstrap_servers"] == "a:9092"


@pytest.mark.parametrize("jaas, keytab_src, fault", [
    ({}, "", "A: sasl.mechanism GSSAPI without sasl.jaas.config, and mm2_smoke_jaas (default mirrormaker_jaas) has no "
             "kerberos login"),
    ({"login_module": "kerberos"}, "/ctl/h.keytab",
     "A: the kerberos login of mm2_smoke_jaas needs a principal and a keytab (mm2_smoke_jaas.keytab, or "
     "mirrormaker_keytab_src)"),
    (KERBEROS, "", "A: the kerberos login of mm2_smoke_jaas needs a principal and a keytab (mm2_smoke_jaas.keytab, "
                   "or mirrormaker_keytab_src)"),
    (KERBEROS, "/ctl/h.keytab", None),
])
def test_kerberos_faults(jaas, keytab_src, fault):
    keytab = sp.keytab(jaas, keytab_src, "")
    out = sp.clusters({"A": {"bootstrap_servers": "a:9092", "properties": dict(GSSAPI)}}, jaas, keytab)
    assert sp.kerberos_faults(out, jaas, keytab) == ([fault] if fault else [])


MODEL = {"properties": {"refresh.topics.interval.seconds": "10", "sync.topic.configs.enabled": "false"},
         "flows": [{"name": "A->B", "enabled": True}],
         "clients": {"A": {"bootstrap_servers": "a:9092", "properties": {}},
                     "B": {"bootstrap_servers": "b:9092", "properties": {"sasl.plain.password": "s3cret"}}}}


def test_the_plan_holds_the_jobs_configuration():
    isdir, listdir, isfile = fs()
    plan, errors = sp.plan(inputs(reconcile_topics=[], extra_checks={"reconcile": {"samples": 9}}), MODEL,
                           isdir=isdir, listdir=listdir, isfile=isfile, getsize=size)
    assert errors == []
    config = plan["config"]
    assert config["version"] == 1 and config["krb5_conf"] is None and config["flows"] == MODEL["flows"]
    assert config["checks"]["refresh_interval_s"] == 10 and config["checks"]["sync_topic_configs"] is False
    # extra checks are combined recursively, last
    assert config["checks"]["reconcile"] == {"topics": ["mm2-smoke"], "samples": 9}
    assert plan["has_secrets"] is True and plan["jars"] == sorted(["kafka-clients-3.9.2.jar", KAFKA_JAR])
    assert (plan["local"], plan["standalone"], plan["master_addresses"]) == (True, False, [])
    jars = "%s 23\n%s %d\n" % ("kafka-clients-3.9.2.jar", KAFKA_JAR, len(KAFKA_JAR))
    assert plan["artifacts"] == [{"name": "jars", "src": JARS, "manifest": jars}]


WHEELS = "/srv/wheels"


@pytest.mark.parametrize("over, wheels", [
    # the role's own venv, from the wheels given
    ({"wheels_src": WHEELS}, [{"name": "wheels", "src": WHEELS,
                               "manifest": "%s 23\n%s %d\n" % ("kafka-clients-3.9.2.jar", KAFKA_JAR, len(KAFKA_JAR))}]),
    # no wheels: the venv comes from a package index
    ({}, []),
    # mm2_smoke_python: no venv is made, so the wheels are not copied
    ({"wheels_src": WHEELS, "python": "/usr/bin/python3"}, []),
], ids=["own-venv", "no-wheels", "given-python"])
def test_the_artifacts_are_the_directories_the_role_copies(over, wheels):
    isdir, listdir, isfile = fs(dirs=(JARS, WHEELS))
    artifacts = sp.artifacts(inputs(**over), isdir, listdir, isfile, size)
    assert artifacts[:-1] == wheels and artifacts[-1]["name"] == "jars"
    assert artifacts[-1]["manifest"].startswith("kafka-clients-3.9.2.jar 23\n")


def test_a_plan_without_an_enabled_flow_is_refused():
    isdir, listdir, isfile = fs()
    model = dict(MODEL, flows=[{"name": "A->B", "enabled": False}])
    _plan, errors = sp.plan(inputs(), model, isdir=isdir, listdir=listdir, isfile=isfile, getsize=size)
    assert errors == ["mm2_smoke_flows has no enabled flow to check."]


@pytest.mark.parametrize("enabled, properties, errors", [
    (True, {}, []),
    (True, {"security.protocol": "plaintext"}, []),
    (False, {"security.protocol": "SASL_SSL"}, []),
    (True, {"security.protocol": "SASL_SSL"},
     ["mm2_smoke_lag_exporter_enabled: the lag exporter reaches PLAINTEXT clusters only (the role passes it no client "
      "settings); secured: B (SASL_SSL)"]),
])
def test_the_lag_exporter_is_refused_on_a_secured_cluster(enabled, properties, errors):
    isdir, listdir, isfile = fs()
    model = dict(MODEL, clients={"A": {"bootstrap_servers": "a:9092", "properties": {}},
                                 "B": {"bootstrap_servers": "b:9092", "properties": properties}})
    assert sp.plan(inputs(lag_exporter_enabled=enabled), model, isdir=isdir, listdir=listdir, isfile=isfile, getsize=size)[1] == errors
