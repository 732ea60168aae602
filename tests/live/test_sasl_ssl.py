"""SASL_SSL against REAL brokers whose certificates come from a lab CA made by openssl (tests/live/tls.py).

A lab of its own: clusters TA and TB from ``harness.Lab.start_secured_broker(name, tls=True)``, each one
KRaft node with StandardAuthorizer whose client and inter-broker listener is SASL_SSL with
SCRAM-SHA-512; key stores and trust stores are PEM files (no keytool, no store password).

- the collection's kafka_acl module (``ansible localhost -m``, as test_kafka_acl.py runs it) reaches TA
  with ``ssl.cafile`` and creates a binding, read back apart from the module;
- dedicated MirrorMaker 2, started with the mm2.properties the flow model renders from the clusters'
  Java client settings (SASL_SSL, a PEM trust store), mirrors TA -> TB;
- a client trusting another CA is refused by the TLS handshake, the module and Apache Kafka's own CLI
  alike, and so is one reaching the broker by a host name its certificate does not list, unless it
  turns host name verification off;
- no password and no private key shows in the module's output, whether it succeeds or fails.
"""

import os
import re
import signal
import socket
import ssl
import subprocess
import time
import uuid

import pytest

import harness
import tls
from jobtools import run_ansible_module

MODULE = "kafkaops.mirrormaker.kafka_acl"
TOPIC = "tls-demo.orders"
REMOTE = "TA." + TOPIC
FLOWS = [{"source": "TA", "target": "TB", "topics": ["tls-demo.*"]}]
RECORDS = 40
# Java's words for a peer it does not trust and for a host name the certificate does not list
UNTRUSTED = re.compile(r"SSLHandshakeException|PKIX path (building|validation) failed|unable to find valid certification path")
WRONG_HOST = re.compile(r"No subject alternative (DNS )?name[s]? matching")


def _interrupt(signum, _frame):
    raise KeyboardInterrupt("signal %d" % signum)


@pytest.fixture(scope="module")
def tls_lab():
    """TA and TB over SASL_SSL, TOPIC on TA with RECORDS records, and MirrorMaker 2 TA -> TB already
    started, so that it replicates while the module's tests run."""
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGHUP, _interrupt)
    if not harness.find_archive():
        pytest.fail("no lab Kafka archive in .cache/kafka: run scripts/bootstrap.sh (lab/kafka-dist/assemble.sh)")
    lab = harness.Lab()
    try:
        t0 = time.time()
        for name in ("TA", "TB"):
            lab.start_secured_broker(name, users=("alice",), tls=True)
        harness.log("TLS clusters up after %.1fs" % (time.time() - t0))
        from kafka import KafkaProducer
        from kafka.admin import KafkaAdminClient, NewTopic
        admin = KafkaAdminClient(bootstrap_servers=lab.bootstrap("TA"), **lab.kafka_python_kwargs("TA"))
        try:
            admin.create_topics([NewTopic(TOPIC, 1, 1)])
        finally:
            admin.close()
        producer = KafkaProducer(bootstrap_servers=lab.bootstrap("TA"), **lab.kafka_python_kwargs("TA"))
        try:
            for i in range(RECORDS):
                producer.send(TOPIC, ("tls-%d" % i).encode())
            producer.flush(30)
        finally:
            producer.close()
        lab.props = lab.start_mm2(FLOWS, extra_globals={"offset.lag.max": 0})
        yield lab
    finally:
        lab.stop()


def secrets(lab):
    """Every password of the lab's users and the body of every private key the lab's CAs made."""
    found = [pw for b in lab.brokers.values() for pw in b["users"].values()]
    for root, _dirs, files in os.walk(lab.tmp):
        if os.path.basename(root).startswith("tls-"):
            found += [tls.key_material(os.path.join(root, f)) for f in files if f.endswith(".key")]
    assert len(found) >= 5, found  # 2 users on each cluster, the CA's key and the brokers' keys
    return found


def assert_no_secret(lab, proc):
    shown = proc.stdout + proc.stderr
    leaked = [s[:4] + "..." for s in secrets(lab) if s in shown or s[-64:] in shown]
    assert leaked == [], "secrets in the module's output: %s" % leaked


def run(lab, args, *extra, cluster="TA", properties=None, bootstrap=None, timeout=20):
    """The module against ``cluster`` as its admin, or with ``properties``; a refused handshake takes
    the whole ``timeout`` (kafka-python retries it), so the refusals get a short one."""
    args = dict({"bootstrap_servers": bootstrap or lab.bootstrap(cluster),
                 "client_properties": properties or lab.client_properties(cluster), "timeout": timeout}, **args)
    proc, result = run_ansible_module(MODULE, args, *extra)
    assert_no_secret(lab, proc)
    return proc, result


def binding(principal, operation="READ", name="tls-orders"):
    return {"principal": principal, "operation": operation, "resource_type": "TOPIC", "resource_name": name}


def described(lab, principal, cluster="TA"):
    from kafka.admin import (ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, KafkaAdminClient,
                             ResourcePatternFilter, ResourceType)
    admin = KafkaAdminClient(bootstrap_servers=lab.bootstrap(cluster), **lab.kafka_python_kwargs(cluster))
    try:
        acls, _error = admin.describe_acls(ACLFilter(
            principal=principal, host=None, operation=ACLOperation.ANY, permission_type=ACLPermissionType.ANY,
            resource_pattern=ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY)))
    finally:
        admin.close()
    return sorted((a.operation.name, a.resource_pattern.resource_name) for a in acls)


def cli_topics(lab, properties, bootstrap=None, cluster="TA"):
    """kafka-topics.sh --list with ``properties`` as its --command-config."""
    path = os.path.join(lab.brokers[cluster]["dir"], "client-%s.properties" % uuid.uuid4().hex[:8])
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as fh:
        fh.write("".join("%s=%s\n" % kv for kv in sorted(properties.items())))
    return subprocess.run([lab.bin("kafka-topics.sh"), "--bootstrap-server", bootstrap or lab.bootstrap(cluster),
                           "--list", "--command-config", path], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, KAFKA_HEAP_OPTS="-Xmx256m"), check=False)


def wrong_host(lab):
    """A name of this machine that reaches the broker (resolves to 127.0.0.1) but is not in its certificate."""
    port = lab.bootstrap("TA").rsplit(":", 1)[1]
    for name in (socket.gethostname(), socket.getfqdn()):
        try:
            addresses = {info[4][0] for info in socket.getaddrinfo(name, port, socket.AF_INET)}
        except socket.gaierror:
            continue
        if addresses == {"127.0.0.1"} and name not in tls.BROKER_DNS:
            return name
    return None


def test_the_listener_is_tls_with_a_certificate_from_the_lab_ca(tls_lab):
    host, port = tls_lab.bootstrap("TA").rsplit(":", 1)
    context = ssl.create_default_context(cafile=tls_lab.ca.cert)
    with socket.create_connection(("127.0.0.1", int(port)), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=host) as conn:
            cert = conn.getpeercert()
            version = conn.version()
    harness.log("TA at %s: %s, subject %s, SANs %s" % (tls_lab.bootstrap("TA"), version, cert["subject"], cert["subjectAltName"]))
    assert version in ("TLSv1.2", "TLSv1.3")
    assert dict(x[0] for x in cert["issuer"])["commonName"] == tls_lab.ca.name
    assert set(cert["subjectAltName"]) >= {("DNS", "localhost"), ("IP Address", "127.0.0.1")}
    assert tls_lab.security_protocol("TA") == "SASL_SSL"
    assert tls_lab.client_properties("TA")["ssl.cafile"] == tls_lab.ca.cert
    for path in (tls_lab.ca.key,) + tuple(os.path.join(tls_lab.ca.dir, "broker-%s%s" % (n, s))
                                          for n in ("TA", "TB") for s in (".key", "-keystore.pem")):
        assert oct(os.stat(path).st_mode & 0o777) == "0o600", path


def test_kafka_acl_creates_a_binding_over_sasl_ssl(tls_lab):
    principal = "User:tls-reader"
    proc, result = run(tls_lab, {"acls": [binding(principal)]})
    assert proc.returncode == 0, result
    assert result["changed"] is True and len(result["added"]) == 1
    assert result["msg"] == "ACL bindings on the cluster at %s: created 1" % tls_lab.bootstrap("TA")
    deadline = time.monotonic() + 15
    while described(tls_lab, principal) != [("READ", "tls-orders")] and time.monotonic() < deadline:
        time.sleep(0.3)
    assert described(tls_lab, principal) == [("READ", "tls-orders")]
    proc, result = run(tls_lab, {"acls": [binding(principal)]})
    assert proc.returncode == 0 and result["changed"] is False, result
    # the same module over the TLS port without TLS does not get in: the listener is TLS only
    plain = dict(tls_lab.client_properties("TA"), **{"security.protocol": "SASL_PLAINTEXT"})
    del plain["ssl.cafile"]
    proc, result = run(tls_lab, {"acls": [binding(principal)]}, properties=plain, timeout=5)
    harness.log("SASL_PLAINTEXT on the SASL_SSL port: %s" % result.get("msg"))
    assert proc.returncode != 0 and result.get("failed"), result
    assert "it answered with TLS" in result["msg"], result["msg"]


def test_a_client_trusting_another_ca_is_refused(tls_lab):
    rogue = tls.Ca(tls_lab.tmp, "rogue-ca")
    props = dict(tls_lab.client_properties("TA"), **{"ssl.cafile": rogue.cert})
    proc, result = run(tls_lab, {"acls": [binding("User:tls-rogue")]}, properties=props, timeout=5)
    harness.log("module, another CA: %s" % result.get("msg"))
    assert proc.returncode != 0 and result.get("failed"), result
    # the broker sends its chain up to the lab's CA, which this client's CA file does not hold
    assert "certificate verify failed: self-signed certificate in certificate chain" in result["msg"], result["msg"]
    assert described(tls_lab, "User:tls-rogue") == []

    java = dict(tls_lab.java_client_properties("TA"), **{"ssl.truststore.location": rogue.cert})
    refused = cli_topics(tls_lab, java)
    shown = [line for line in refused.stderr.splitlines() if UNTRUSTED.search(line)]
    harness.log("kafka-topics.sh, another CA: exit %d, %s" % (refused.returncode, shown[:2]))
    assert refused.returncode != 0 and shown, refused.stdout[-1000:] + refused.stderr[-3000:]
    # the lab's own CA, same command otherwise: it lists the topic
    trusted = cli_topics(tls_lab, tls_lab.java_client_properties("TA"))
    assert trusted.returncode == 0 and TOPIC in trusted.stdout.split(), trusted.stderr[-3000:]


def test_a_host_name_the_certificate_does_not_list_is_refused(tls_lab):
    name = wrong_host(tls_lab)
    if name is None:
        pytest.skip("no name of this machine other than localhost resolves to 127.0.0.1 only")
    bootstrap = "%s:%s" % (name, tls_lab.bootstrap("TA").rsplit(":", 1)[1])
    proc, result = run(tls_lab, {"acls": [binding("User:tls-wrong-host")]}, bootstrap=bootstrap, timeout=5)
    harness.log("module via %s: %s" % (bootstrap, result.get("msg")))
    assert proc.returncode != 0 and result.get("failed"), result
    assert "Hostname mismatch, certificate is not valid for '%s'" % name in result["msg"], result["msg"]

    refused = cli_topics(tls_lab, tls_lab.java_client_properties("TA"), bootstrap=bootstrap)
    shown = [line for line in refused.stderr.splitlines() if WRONG_HOST.search(line)]
    harness.log("kafka-topics.sh via %s: exit %d, %s" % (bootstrap, refused.returncode, shown[:1]))
    assert refused.returncode != 0 and shown, refused.stdout[-1000:] + refused.stderr[-3000:]

    # host name verification is what refused it: turned off, the same name gets in
    lax = dict(tls_lab.client_properties("TA"), **{"ssl.endpoint.identification.algorithm": ""})
    proc, result = run(tls_lab, {"acls": [binding("User:tls-wrong-host")]}, properties=lax, bootstrap=bootstrap)
    assert proc.returncode == 0 and result["changed"] is True, result


def test_mm2_mirrors_between_sasl_ssl_clusters(tls_lab):
    props = tls_lab.props
    for alias in ("TA", "TB"):
        assert props["%s.security.protocol" % alias] == "SASL_SSL"
        assert props["%s.ssl.truststore.type" % alias] == "PEM"
        assert props["%s.ssl.truststore.location" % alias] == tls_lab.ca.cert
    with open(os.path.join(tls_lab.mm2_dir, "mm2.properties")) as fh:
        rendered = fh.read()
    assert "TA.security.protocol=SASL_SSL" in rendered.splitlines()
    t0 = time.time()
    tls_lab.wait_topic("TB", REMOTE, 120)
    from kafka import KafkaConsumer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=tls_lab.bootstrap("TB"), enable_auto_commit=False,
                             consumer_timeout_ms=3000, **tls_lab.kafka_python_kwargs("TB"))
    values = []
    try:
        tp = TopicPartition(REMOTE, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        deadline = time.time() + 90
        while len(values) < RECORDS and time.time() < deadline:
            values += [r.value.decode() for r in consumer]
    finally:
        consumer.close()
    harness.log("MM2: %d records on TB after %.1fs more" % (len(values), time.time() - t0))
    assert sorted(values) == sorted("tls-%d" % i for i in range(RECORDS))
    with open(tls_lab.mm2_log(), errors="replace") as fh:
        mm2_log = fh.read()
    assert not re.search(r"SSLHandshakeException|SslAuthenticationException", mm2_log)
