"""kafka_reachable against the session's REAL brokers A and B (harness.Lab, Kafka from the lab archive).

check_cluster asks a real broker; the module runs through ansible-playbook on this machine
(connection local) with the collection found through <repo>/.collections, and passes for the real
brokers, and fails naming the cluster's label for a closed port, in check mode too.  A third real
broker from the same archive has SSL, SASL_PLAINTEXT, SASL_SSL and client-certificate listeners,
for what the probe claims about them (it answers ApiVersions on SASL listeners before any
authentication; TLS without verification).
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

import pytest
import yaml

import harness

COLLECTIONS = os.path.join(harness.REPO, ".collections")
LINK = os.path.join(COLLECTIONS, "ansible_collections", "kafkaops", "mirrormaker")
if not os.path.lexists(LINK):  # made by scripts/bootstrap.sh; as in tests/unit/conftest.py
    os.makedirs(os.path.dirname(LINK), exist_ok=True)
    os.symlink(harness.REPO, LINK)
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.probe import check_cluster  # noqa: E402

HOST = socket.gethostname()


def closed_port_server():
    """127.0.0.1:<a port nobody listens on> (bound, then released)."""
    return "127.0.0.1:%d" % harness.free_ports(1)[0]


def labels(lab):
    return {name: "mirrormaker_clusters[%d] (alias %s)" % (i, name) for i, name in enumerate(sorted(lab.brokers))}


def play(tmp_path, clusters, *args, **options):
    """Run kafka_reachable in a playbook on localhost; returns (process, registered result)."""
    result_file = tmp_path / "result.json"
    if result_file.exists():
        result_file.unlink()
    task = dict({"clusters": "{{ probe_clusters }}"}, **options)
    playbook = [{
        "name": "Probe the clusters",
        "hosts": "all",
        "gather_facts": False,
        "tasks": [{
            "name": "Reachability",
            "block": [{"name": "Probe", "kafkaops.mirrormaker.kafka_reachable": task, "register": "__probe"}],
            "always": [{"name": "Keep the result for the test", "check_mode": False,
                        "ansible.builtin.copy": {"content": "{{ __probe | to_json }}", "dest": str(result_file),
                                                 "mode": "0600"}}],
        }],
    }]
    (tmp_path / "probe.yml").write_text(yaml.safe_dump(playbook, sort_keys=False))
    (tmp_path / "vars.json").write_text(json.dumps({"probe_clusters": clusters,
                                                    "ansible_python_interpreter": sys.executable}))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_CONFIG=os.path.join(harness.REPO, "ansible.cfg"),
               ANSIBLE_FORCE_COLOR="0", ANSIBLE_NOCOLOR="1")
    playbook_bin = shutil.which("ansible-playbook", path=os.path.dirname(sys.executable)) or "ansible-playbook"
    proc = subprocess.run([playbook_bin, "-i", "localhost,", "-c", "local", "-e", "@" + str(tmp_path / "vars.json"),
                           str(tmp_path / "probe.yml"), *args],
                          capture_output=True, text=True, timeout=300, env=env, check=False)
    sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-2000:])
    result = json.loads(result_file.read_text()) if result_file.exists() else None
    return proc, result


SECURED_LISTENERS = {  # listener name: (security protocol, extra broker settings)
    "SSL": ("SSL", []),
    "SASL_PLAINTEXT": ("SASL_PLAINTEXT", []),
    "SASL_SSL": ("SASL_SSL", []),
    "MTLS": ("SSL", ["listener.name.mtls.ssl.client.auth=required"]),
}


@pytest.fixture(scope="module")
def secured(lab, tmp_path_factory):
    """A real single-node KRaft broker with a listener per entry of SECURED_LISTENERS (TLS from a
    throw-away self-signed PKCS12 keystore, SASL/PLAIN with one user); {listener name: host:port}."""
    keytool = shutil.which("keytool")
    if not keytool:
        pytest.skip("keytool (JDK) not installed")
    d = tmp_path_factory.mktemp("secured-broker")
    store = d / "broker.p12"
    subprocess.run([keytool, "-genkeypair", "-alias", "broker", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
                    "-dname", "CN=127.0.0.1", "-ext", "SAN=IP:127.0.0.1", "-storetype", "PKCS12",
                    "-keystore", str(store), "-storepass", "changeit", "-keypass", "changeit"],
                   check=True, capture_output=True, timeout=120)
    ports = harness.free_ports(len(SECURED_LISTENERS) + 2)
    plain, controller = ports[:2]
    addresses = dict(zip(SECURED_LISTENERS, ("127.0.0.1:%d" % p for p in ports[2:])))
    addresses["PLAINTEXT"] = "127.0.0.1:%d" % plain
    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_probe="probe-secret";'
    props = [
        "process.roles=broker,controller",
        "node.id=1",
        "controller.quorum.voters=1@127.0.0.1:%d" % controller,
        "listeners=%s,CONTROLLER://127.0.0.1:%d" % (",".join("%s://%s" % kv for kv in addresses.items()), controller),
        "advertised.listeners=%s" % ",".join("%s://%s" % kv for kv in addresses.items()),
        "inter.broker.listener.name=PLAINTEXT",
        "controller.listener.names=CONTROLLER",
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,"
        + ",".join("%s:%s" % (name, proto) for name, (proto, _extra) in SECURED_LISTENERS.items()),
        "ssl.keystore.type=PKCS12",
        "ssl.keystore.location=%s" % store,
        "ssl.keystore.password=changeit",
        "ssl.key.password=changeit",
        "sasl.enabled.mechanisms=PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + jaas,
        "listener.name.sasl_ssl.plain.sasl.jaas.config=" + jaas,
        "log.dirs=%s" % (d / "data"),
        "offsets.topic.replication.factor=1",
        "share.coordinator.state.topic.replication.factor=1",
        "share.coordinator.state.topic.min.isr=1",
        "transaction.state.log.replication.factor=1",
        "transaction.state.log.min.isr=1",
    ] + [line for _proto, extra in SECURED_LISTENERS.values() for line in extra]
    (d / "server.properties").write_text("\n".join(props) + "\n")
    subprocess.run([lab.bin("kafka-storage.sh"), "format", "-t", "kafkaops-probe-test-0", "-c", str(d / "server.properties")],
                   check=True, timeout=120, capture_output=True, env=dict(os.environ, KAFKA_HEAP_OPTS="-Xmx256m"))
    out = str(d / "stdout.log")
    proc = harness.start_process([lab.bin("kafka-server-start.sh"), str(d / "server.properties")], out,
                                 env=dict(os.environ, LOG_DIR=str(d / "logs"), KAFKA_HEAP_OPTS="-Xmx384m -Xms128m"))
    try:
        harness.wait_for_log(out, r"Kafka Server started", 120, proc)
        yield addresses
    finally:
        harness.stop_process(proc, 30)


def test_check_cluster_asks_a_real_broker(lab):
    closed, real = closed_port_server(), lab.bootstrap("A")
    result = check_cluster([closed, real], 10)
    assert result["reachable"] is True
    assert result["answered"] == real
    assert result["failures"] == {closed: "connection refused"}
    # Kafka 4.x still answers ApiVersions v0 (valid versions 0-4) with error_code 0 and its API keys.
    assert result["detail"].startswith("ApiVersions v0 answered: error_code 0 (NONE), ")
    assert result["detail"].endswith(", ApiVersions v0-v4")
    assert result["seconds"] < 10


@pytest.mark.parametrize("check", [False, True], ids=["run", "check_mode"])
def test_module_passes_for_the_real_brokers(lab, tmp_path, check):
    names = labels(lab)
    clusters = [{"name": names["A"], "bootstrap_servers": [closed_port_server(), lab.bootstrap("A")]},
                {"name": names["B"], "bootstrap_servers": lab.bootstrap("B"), "security_protocol": "PLAINTEXT"}]
    proc, result = play(tmp_path, clusters, *(["--check"] if check else []), timeout=5)
    assert proc.returncode == 0, proc.stdout
    assert result["changed"] is False
    assert result["probed_from"] == HOST
    assert list(result["clusters"]) == [names["A"], names["B"]]
    a, b = result["clusters"][names["A"]], result["clusters"][names["B"]]
    assert a["reachable"] and a["answered"] == lab.bootstrap("A") and a["attempts"] == 1
    assert list(a["failures"].values()) == ["connection refused"]
    assert b["reachable"] and b["answered"] == lab.bootstrap("B") and b["failures"] == {}
    assert re.search(r"TASK \[Probe\] \*+\nok: \[localhost\]", proc.stdout)  # ok, not changed


@pytest.mark.parametrize("check", [False, True], ids=["run", "check_mode"])
def test_module_fails_naming_the_alias_for_a_closed_port(lab, tmp_path, check):
    names = labels(lab)
    closed = closed_port_server()
    clusters = [{"name": names["A"], "bootstrap_servers": [lab.bootstrap("A")]},
                {"name": names["B"], "bootstrap_servers": [closed]}]
    proc, result = play(tmp_path, clusters, *(["--check"] if check else []), timeout=3)
    assert proc.returncode == 2, proc.stdout
    msg = "%s: no bootstrap server answered from %s within 3 s (%s: connection refused)" % (names["B"], HOST, closed)
    assert result["msg"] == msg
    assert msg in proc.stdout
    assert result["clusters"][names["A"]]["reachable"] is True
    assert result["clusters"][names["B"]]["failures"] == {closed: "connection refused"}


def test_every_unreachable_cluster_has_its_message_and_retries_are_counted(lab, tmp_path):
    closed_b, closed_c = closed_port_server(), closed_port_server()
    clusters = [{"name": "alias A", "bootstrap_servers": lab.bootstrap("A")},
                {"name": "alias B", "bootstrap_servers": closed_b},
                {"name": "alias C", "bootstrap_servers": "%s, kafka-probe-test.invalid:9092" % closed_c}]
    start = time.monotonic()
    proc, result = play(tmp_path, clusters, timeout=2, retries_until=3)
    assert proc.returncode == 2, proc.stdout
    assert time.monotonic() - start >= 3
    parts = result["msg"].split("; ")
    assert len(parts) == 2
    attempts = result["clusters"]["alias B"]["attempts"]
    assert attempts >= 3
    assert parts[0].startswith("alias B: no bootstrap server answered from %s within 2 s in any of %d attempts over "
                               % (HOST, attempts))
    assert parts[0].endswith(" s (%s: connection refused)" % closed_b)
    assert parts[1].endswith("(%s: connection refused, kafka-probe-test.invalid:9092: name does not resolve)" % closed_c)
    assert result["clusters"]["alias A"]["attempts"] == 1


def test_bad_input_names_the_cluster_and_the_value(tmp_path):
    clusters = [{"name": "mirrormaker_clusters[0] (alias A)", "bootstrap_servers": ["kafka-a1"]},
                {"name": "mirrormaker_clusters[1] (alias B)", "bootstrap_servers": "kafka-b1:9092,::1:9092"}]
    proc, result = play(tmp_path, clusters)
    assert proc.returncode == 2, proc.stdout
    assert result["msg"] == (
        "mirrormaker_clusters[0] (alias A): bootstrap_servers: 'kafka-a1' is not host:port; "
        "mirrormaker_clusters[1] (alias B): bootstrap_servers: '::1:9092' is not host:port "
        "(write an IPv6 address in brackets, e.g. [::1]:9092)")
    assert "clusters" not in result


@pytest.mark.parametrize("listener", ["SSL", "SASL_PLAINTEXT", "SASL_SSL"])
def test_secured_listeners_answer_without_credentials(secured, listener):
    # TLS with the broker's untrusted self-signed certificate (verification off); SASL listeners
    # answer ApiVersions before authentication.
    result = check_cluster([secured[listener]], 10, SECURED_LISTENERS[listener][0])
    assert result["reachable"] is True, result["failures"]
    assert result["detail"].startswith("ApiVersions v0 answered: error_code 0 (NONE), ")


@pytest.mark.parametrize("listener, protocol, reason", [
    # the broker reads the ClientHello as a request of an impossible size and closes
    ("PLAINTEXT", "SSL", r"^TLS handshake failed: the server closed the connection \(UNEXPECTED_EOF_WHILE_READING\); "
                         r"is the listener PLAINTEXT or SASL_PLAINTEXT\?$"),
    ("SASL_PLAINTEXT", "SASL_SSL", r"^TLS handshake failed: the server closed the connection "),
    # the broker's TLS engine answers the plaintext request with a TLS alert record
    ("SSL", "PLAINTEXT", r"^answered but is not Kafka \(it answered with TLS: is the listener SSL or SASL_SSL\?\)$"),
    # with TLS 1.3 the client's handshake ends before the broker checks for a certificate; the
    # broker's alert (bad_certificate) normally arrives before its close
    ("MTLS", "SSL", r"^TLS handshake failed: the listener requires a client certificate \(ssl.client.auth=required\) "
                    r"and the probe sends none \(SSLV3_ALERT_BAD_CERTIFICATE\)$"),
])
def test_wrong_security_protocol_is_named(secured, listener, protocol, reason):
    result = check_cluster([secured[listener]], 5, protocol)
    assert result["reachable"] is False
    sys.stderr.write("%s probed as %s: %s\n" % (listener, protocol, result["failures"][secured[listener]]))
    assert re.search(reason, result["failures"][secured[listener]])


def test_no_clusters_probes_nothing(tmp_path):
    proc, result = play(tmp_path, [])
    assert proc.returncode == 0, proc.stdout
    assert result["clusters"] == {} and result["msg"] == "no clusters given, nothing to probe"
