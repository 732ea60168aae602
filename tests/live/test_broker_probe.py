"""The kafka_broker health probe on a REAL secured broker, with the broker's own login.

A broker is healthy when the cluster metadata lists it under its node id; the role asks with
kafka-broker-api-versions.sh on the inter-broker listener. The secured lab's brokers have only
a SASL_PLAINTEXT client listener (SCRAM-SHA-512 with the admin as the inter-broker login, and
GSSAPI as kafka/localhost from the lab KDC's keytab), so that probe needs the client file the
role renders: this test reads the running broker's server.properties, builds the probe's client
properties with plugins/module_utils/kafka/probe_config.py exactly as the role does (the probe
listener is the inter-broker listener), writes them as the --command-config and runs the lab's
kafka-broker-api-versions.sh, with the probe's environment (krb5.conf for GSSAPI). It must list
``(id: 1 ``; without the file, or for GSSAPI without the krb5.conf, it must not.
"""

import os
import subprocess

import pytest

import harness
from jobtools import use_collection

use_collection()
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import probe_config as kafka_probe_config  # noqa: E402  pylint: disable=wrong-import-position

EXPECT = "(id: 1 "
# A probe that cannot log in keeps retrying; the role's wait would give up after its timeout, here
# a shorter one shows the same thing.
REFUSED_TIMEOUT = 45


def read_properties(path):
    """server.properties as the role's dict (the lab writes plain key=value lines, no escapes)."""
    props = {}
    with open(path) as fh:
        for line in fh:
            line = line.strip()
            if line and not line.startswith(("#", "!")):
                key, _sep, value = line.partition("=")
                props[key.strip()] = value.strip()
    return props


def probe_listener(props):
    """The role's probe listener: the inter-broker listener, {name, protocol}."""
    name = props["inter.broker.listener.name"]
    protocols = dict(item.split(":", 1) for item in props["listener.security.protocol.map"].split(","))
    return {"name": name, "protocol": protocols[name]}


def write_properties(path, props):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write("".join("%s=%s\n" % item for item in sorted(props.items())))


def run_probe(lab, name, command_config=None, environment=None, timeout=120):
    """(rc, output) of the role's probe command against cluster ``name``; rc None when it never ended."""
    argv = [lab.bin("kafka-broker-api-versions.sh"), "--bootstrap-server", lab.bootstrap(name)]
    if command_config:
        argv += ["--command-config", command_config]
    env = {k: v for k, v in os.environ.items() if k != "KAFKA_OPTS"}
    env.update(KAFKA_HEAP_OPTS="-Xmx256m", **(environment or {}))
    try:
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        return None, "%s%s" % (exc.stdout or "", exc.stderr or "")
    return proc.returncode, proc.stdout + proc.stderr


def last_line(output):
    """The reason the tool gives (its first exception line), for the log."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    reasons = [line for line in lines if "Exception" in line or "Error" in line]
    return (reasons or lines or ["no output"])[0][:300]


def healthy(rc, output):
    return rc == 0 and EXPECT in output


@pytest.fixture(scope="module")
def broker(secured_lab):
    d = secured_lab.brokers["A"]["dir"]
    return secured_lab, d, read_properties(os.path.join(d, "server.properties"))


def test_scram_probe_lists_the_broker(broker):
    lab, d, props = broker
    listener = probe_listener(props)
    assert listener == {"name": "SASL_PLAINTEXT", "protocol": "SASL_PLAINTEXT"}
    config = kafka_probe_config.probe_config(props, listener, lab.kdc.krb5_conf)
    assert config["refusal"] == ""
    assert config["properties"]["sasl.mechanism"] == "SCRAM-SHA-512"
    assert config["properties"]["sasl.jaas.config"] == props["listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config"]
    assert config["environment"] == {}
    path = os.path.join(d, "probe-scram.properties")
    write_properties(path, config["properties"])
    rc, output = run_probe(lab, "A", path, config["environment"])
    assert healthy(rc, output), output[-3000:]
    harness.log("SCRAM probe: %s" % [line for line in output.splitlines() if EXPECT in line][0][:120])


def test_gssapi_probe_lists_the_broker(broker):
    lab, d, props = broker
    # The same cluster's server.properties for a broker that logs in to its peers with Kerberos:
    # the running broker offers GSSAPI on that listener with exactly this login line, so what the
    # probe sends is what the role's probe of such a broker sends.
    kerberos_broker = dict(props, **{"sasl.mechanism.inter.broker.protocol": "GSSAPI"})
    config = kafka_probe_config.probe_config(kerberos_broker, probe_listener(props), lab.kdc.krb5_conf)
    assert config["refusal"] == ""
    assert config["properties"]["sasl.mechanism"] == "GSSAPI"
    assert config["properties"]["sasl.jaas.config"] == props["listener.name.sasl_plaintext.gssapi.sasl.jaas.config"]
    assert config["properties"]["sasl.kerberos.service.name"] == "kafka"
    assert config["environment"] == {"KAFKA_OPTS": "-Djava.security.krb5.conf=%s" % lab.kdc.krb5_conf}
    path = os.path.join(d, "probe-gssapi.properties")
    write_properties(path, config["properties"])
    seen = len(lab.kdc.log_lines())
    rc, output = run_probe(lab, "A", path, config["environment"])
    assert healthy(rc, output), output[-3000:]
    # It logged in as the broker: the KDC issued kafka/localhost a ticket for kafka/localhost.
    realm = lab.kdc.realm
    assert [line for line in lab.kdc.log_lines()[seen:]
            if "TGS_REQ" in line and "ISSUE" in line and "kafka/localhost@%s for kafka/localhost@%s" % (realm, realm) in line]

    # Without the krb5.conf the JVM does not know the lab's realm: no login, no answer.
    rc, output = run_probe(lab, "A", path, {}, timeout=REFUSED_TIMEOUT)
    assert not healthy(rc, output), output[-3000:]
    harness.log("GSSAPI probe without the krb5.conf: rc %s, %s" % (rc, last_line(output)))


def test_without_the_command_config_the_probe_fails(broker):
    lab, _d, _props = broker
    rc, output = run_probe(lab, "A", timeout=REFUSED_TIMEOUT)
    assert not healthy(rc, output), output[-3000:]
    harness.log("probe without --command-config: rc %s, %s" % (rc, last_line(output)))
