"""The secured lab on real hosts (molecule/secure): a real MIT KDC on a host of its own, brokers with
SASL and StandardAuthorizer, MirrorMaker 2 logging in with its keytab and holding only the ACLs
derived from its own mm2.properties. Converge already ran the smoke job on Spark; these tests ask
the KDC, the brokers' own tools and the files on the hosts.
"""

from __future__ import annotations

import base64
import os
import re
import shlex
import sys
import time
from secrets import token_hex

import pytest

from conftest import (REPO, Producer, ansible_playbook, consume, hosts_of, kafka, node, played, produce,
                      started_at, targets, unique, wait_until)
import recap  # tests/lib, on the path once conftest is loaded

sys.path.insert(0, str(REPO / ".collections"))
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import acls as mm2_acls  # noqa: E402

testinfra_hosts = targets("mirrormakers")[:1]

REALM = "KAFKAOPS.LAB"
ADMIN_CONFIG = "/root/admin-client.properties"
# an application's SCRAM user (kafka_broker_scram_users), whose password a test rotates
APP = "lab-app"
SECRETS = os.path.join(os.environ.get("KAFKAOPS_LAB_KDC_DIR", str(REPO / ".cache/lab-kdc")),
                       os.environ.get("MOLECULE_SCENARIO_NAME", "secure"))
ACL_LINE = re.compile(r"^Current ACLs for resource `ResourcePattern\(resourceType=(\w+), name=(.*), patternType=(\w+)\)`:")
ACL_ENTRY = re.compile(r"\(principal=([^,]+), host=([^,]+), operation=(\w+), permissionType=(\w+)\)")


def broker(host, group):
    return node(host, hosts_of(group)[0])


def bootstrap(group):
    return "%s:9092" % hosts_of(group)[0]


@pytest.fixture(scope="module")
def admin(host):
    """The admin's SCRAM client settings (the password lab/kdc.yml's lookup made), 0600 on both brokers."""
    for group in ("kafka_a", "kafka_b"):
        scram_login(broker(host, group), ADMIN_CONFIG, "admin", secret("admin.password"))
    return ADMIN_CONFIG


def secret(file_name):
    """A password the lab's lookups keep in the controller's secrets directory."""
    with open(os.path.join(SECRETS, file_name)) as fh:
        return fh.read().split()[0]


def scram_login(host, path, name, password):
    """A SCRAM-SHA-512 login over SASL_PLAINTEXT as ``name``, written to ``path`` on ``host`` (0600)."""
    text = ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
            'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required '
            'username="%s" password="%s";\n' % (name, password))
    result = host.run("umask 077 && printf %%s %s > %s" % (shlex.quote(text), path))
    assert result.rc == 0, result.stderr
    return path


def admin_over_tls(host, admin, path, trust_lab_ca=True):
    """The admin's login over SASL_SSL written to ``path`` on ``host`` (0600), trusting the lab CA
    through the trust store the role copied, or Java's own trust store with ``trust_lab_ca`` False."""
    command = "umask 077 && sed 's/^security.protocol=.*/security.protocol=SASL_SSL/' %s > %s" % (admin, path)
    if trust_lab_ca:
        command += (" && printf 'ssl.truststore.type=PEM\\nssl.truststore.location=/etc/kafka/tls/truststore.pem\\n'"
                    " >> %s" % path)
    result = host.run(command)
    assert result.rc == 0, result.stderr
    return path


def write_secret(path, data):
    """Replace the controller file ``path`` with ``data``, readable by its owner alone from the start."""
    fd = os.open(path + ".new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(path + ".new", path)


def kdc(host):
    return node(host, hosts_of("kdc")[0])


def kdc_keytab(name):
    """The keytab lab/kdc.yml made for ``name`` on the KDC host (and fetched to the controller)."""
    return "/var/lib/kafkaops-lab/keytabs/%s.keytab" % name


def kdc_log(host):
    return kdc(host).check_output("cat /var/log/krb5kdc.log")


def server_properties(host, group):
    text = broker(host, group).check_output("cat /etc/kafka/server.properties")
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))


def java_properties(text):
    """key=value lines of a file the role renders (no continuation lines, '\\' escapes only in values)."""
    props = {}
    for line in text.splitlines():
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            props[key.strip()] = value.strip()
    return props


def acls_on(host, group, principal, admin_config):
    """{(resource type, pattern type, name, operation)} granted to `principal`, as kafka-acls.sh lists them."""
    out = kafka(broker(host, group), "kafka-acls.sh", "--bootstrap-server", bootstrap(group), "--command-config",
                admin_config, "--list", "--principal", principal).stdout
    granted, resource = set(), None
    for line in out.splitlines():
        head = ACL_LINE.match(line.strip())
        if head:
            resource = head.groups()
            continue
        entry = ACL_ENTRY.search(line)
        if entry and resource and entry.group(1) == principal:
            assert entry.group(4) == "ALLOW", line
            granted.add((resource[0], resource[2], resource[1], entry.group(3)))
    return granted


def test_brokers_speak_only_sasl_and_only_brokers_and_admin_are_super_users(host):
    for group in ("kafka_a", "kafka_b"):
        props = server_properties(host, group)
        protocols = dict(item.split(":") for item in props["listener.security.protocol.map"].split(","))
        assert set(protocols.values()) == {"SASL_PLAINTEXT", "SASL_SSL"}, props["listener.security.protocol.map"]
        assert props["inter.broker.listener.name"] == "SASL_SSL"
        assert props["super.users"] == "User:kafka;User:admin"
        assert props["authorizer.class.name"].endswith("StandardAuthorizer")
        assert props["sasl.mechanism.inter.broker.protocol"] == "GSSAPI"
        assert props["sasl.mechanism.controller.protocol"] == "GSSAPI"


def test_brokers_and_mirrormaker_got_their_tickets_from_the_kdc(host):
    """Each broker logged in to itself (its controller) as kafka/<host>, and MirrorMaker 2 asked the KDC
    for a ticket to every broker it talks to as mm2/<host>: Kerberos, not a fallback, carried them."""
    log = kdc_log(host)
    mm2 = "mm2/%s@%s" % (hosts_of("mirrormakers")[0], REALM)
    for name in hosts_of("kafka_brokers"):
        service = "kafka/%s@%s" % (name, REALM)
        assert re.search(r"AS_REQ .*ISSUE: .*%s for krbtgt/" % re.escape(service), log), service
        assert re.search(r"TGS_REQ .*ISSUE: .*%s for %s" % (re.escape(mm2), re.escape(service)), log), (mm2, service)


def test_mirrormaker_holds_exactly_the_acls_derived_from_its_configuration(host, admin):
    """The bindings for User:mm2 are the derivation of the mm2.properties the host runs with: on A
    exactly; on B the derivation plus what MirrorMaker 2's own ACL sync (sync.topic.acls, the reason for
    the derived ALTER on B's cluster) copied there: A's topic bindings of its mirrored topics under
    their remote names, WRITE left out. Nothing missing (converge's smoke job passed), nothing more."""
    props = java_properties(host.check_output("cat /etc/kafka-mirrormaker/mm2.properties"))
    derived = mm2_acls.derive_layouts([props], principals="User:mm2")
    assert not derived["errors"], derived["errors"]
    want = {alias: {(b["resource_type"], b["pattern_type"], b["resource_name"], b["operation"]) for b in acls}
            for alias, acls in derived["acls"].items()}
    on_a = acls_on(host, "kafka_a", "User:mm2", admin)
    on_b = acls_on(host, "kafka_b", "User:mm2", admin)
    assert on_a == want["A"]
    assert want["B"] <= on_b, sorted(want["B"] - on_b)
    synced = {("TOPIC", pattern, "A." + name, op) for kind, pattern, name, op in on_a if kind == "TOPIC" and op != "WRITE"}
    extra = on_b - want["B"]
    assert extra <= synced, sorted(extra - synced)
    print("User:mm2 on B beyond the derivation, copied by MirrorMaker's ACL sync: %s" % sorted(extra))
    for group in ("kafka_a", "kafka_b"):
        assert "User:mm2" not in server_properties(host, group)["super.users"]


def test_records_on_a_reach_b_under_mirrormakers_own_login(host, admin):
    """A topic of the flow's other prefix (lab.*), written and read by the admin: MirrorMaker 2 reads it
    on A and writes it on B as User:mm2."""
    topic = unique("lab.secure")
    a, b = broker(host, "kafka_a"), broker(host, "kafka_b")
    kafka(a, "kafka-topics.sh", "--bootstrap-server", bootstrap("kafka_a"), "--command-config", admin,
          "--create", "--topic", topic, "--partitions", "1")
    lines = ["secure-%d" % i for i in range(20)]
    produce(a, bootstrap("kafka_a"), topic, lines, "--command-config", admin)

    def mirrored():
        result = kafka(b, "kafka-console-consumer.sh", "--bootstrap-server", bootstrap("kafka_b"), "--consumer.config",
                       admin, "--topic", "A." + topic, "--from-beginning", "--max-messages", len(lines),
                       "--timeout-ms", 15000, check=False)
        return sorted(line for line in result.stdout.splitlines() if line.startswith("secure-")) == sorted(lines)

    wait_until("the records of %s on B as A.%s" % (topic, topic), mirrored, timeout=180, interval=5)


def test_the_tls_listener_serves_a_client_that_trusts_the_lab_ca_and_no_other(host, admin):
    """The admin over SASL_SSL (9094) with the trust store the role copied (the lab CA, lab/tls.yml)
    lists topics; with Java's own trust store the handshake fails: the certificate is the lab CA's,
    issued for the broker's lab host name, and checked."""
    a = broker(host, "kafka_a")
    tls = admin_over_tls(a, admin, "/root/admin-tls.properties")
    no_ca = admin_over_tls(a, admin, "/root/admin-tls-no-ca.properties", trust_lab_ca=False)
    server = "%s:9094" % hosts_of("kafka_a")[0]
    listed = kafka(a, "kafka-topics.sh", "--bootstrap-server", server, "--command-config", tls, "--list").stdout.split()
    assert "heartbeats" in listed, listed
    refused = kafka(a, "kafka-topics.sh", "--bootstrap-server", server, "--command-config", no_ca, "--list",
                    timeout=60, check=False)
    out = refused.stdout + refused.stderr
    assert refused.rc != 0
    assert "PKIX path building failed" in out or "SSLHandshakeException" in out, out[-3000:]


def test_a_wrong_password_is_refused(host, admin):
    b = broker(host, "kafka_b")
    bad = "/root/wrong-password.properties"
    b.run("umask 077 && sed 's/password=\"[^\"]*\"/password=\"not-the-password\"/' %s > %s" % (admin, bad))
    result = kafka(b, "kafka-topics.sh", "--bootstrap-server", bootstrap("kafka_b"), "--command-config", bad, "--list",
                   timeout=60, check=False)
    assert result.rc != 0
    assert "Authentication failed" in result.stdout + result.stderr, result.stdout + result.stderr


def test_keytabs_are_secrets_on_every_host_and_on_the_controller(host):
    for name in hosts_of("kafka_brokers"):
        keytab = node(host, name).file("/etc/kafka/kafka.keytab")
        assert (keytab.user, keytab.group, keytab.mode) == ("root", "kafka", 0o640), name
    mm2 = host.file("/etc/kafka-mirrormaker/mm2.keytab")
    assert mm2.exists and mm2.mode & 0o077 == 0, oct(mm2.mode)
    for path in [SECRETS] + [os.path.join(SECRETS, name) for name in os.listdir(SECRETS)]:
        assert os.stat(path).st_mode & 0o077 == 0, path


def test_an_authenticated_user_without_acls_gets_nothing(host, admin):
    """alice logs in with her keytab (the KDC issues her a ticket for the broker) and is refused
    by the authorizer: deny by default, so MirrorMaker's grants are the only way in."""
    b = broker(host, "kafka_b")
    with open(os.path.join(SECRETS, "alice.keytab"), "rb") as fh:
        keytab = fh.read()
    login = ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n"
             'sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true '
             'keyTab="/root/alice.keytab" principal="alice@%s";\n' % REALM)
    result = b.run("umask 077 && printf %%s %s | base64 -d > /root/alice.keytab && printf %%s %s > /root/alice.properties"
                   % (shlex.quote(base64.b64encode(keytab).decode()), shlex.quote(login)))
    assert result.rc == 0, result.stderr
    topic = "A.heartbeats"
    assert topic in kafka(b, "kafka-topics.sh", "--bootstrap-server", bootstrap("kafka_b"), "--command-config", admin,
                          "--list").stdout.split()
    result = kafka(b, "kafka-console-consumer.sh", "--bootstrap-server", bootstrap("kafka_b"), "--consumer.config",
                   "/root/alice.properties", "--topic", topic, "--from-beginning", "--max-messages", 1,
                   "--timeout-ms", 20000, timeout=90, check=False)
    out = result.stdout + result.stderr
    assert "TopicAuthorizationException" in out or "Not authorized to access topics" in out, out[-3000:]
    assert re.search(r"TGS_REQ .*ISSUE: .*alice@%s for kafka/%s@%s" % (REALM, re.escape(hosts_of("kafka_b")[0]), REALM),
                     kdc_log(host))


def logs_in(host, group, config):
    """(rc, output) of a topic listing on ``group``'s broker with the login in ``config``."""
    result = kafka(broker(host, group), "kafka-topics.sh", "--bootstrap-server", bootstrap(group), "--command-config",
                   config, "--list", timeout=60, check=False)
    return result.rc, result.stdout + result.stderr


def seq_lines(host, group, topic, count, admin):
    """Up to ``count`` of the producer's lines in ``topic`` on ``group``'s cluster, duplicates kept,
    read until 10 s bring nothing."""
    return [line for line in consume(broker(host, group), bootstrap(group), topic, count, 10000,
                                     "--consumer.config", admin) if line.startswith("seq-")]


def mirrored_producer(host, admin, prefix):
    """A new topic on A and a Producer writing to it as the admin (acks=all), returned once
    MirrorMaker has copied its first records to B: the change that follows happens under
    replication. (topic, producer)"""
    a = broker(host, "kafka_a")
    topic = unique(prefix)
    kafka(a, "kafka-topics.sh", "--bootstrap-server", bootstrap("kafka_a"), "--command-config", admin,
          "--create", "--topic", topic, "--partitions", "2")
    producer = Producer(a, bootstrap("kafka_a"), topic, interval=0.02, producer_config=admin)
    try:
        wait_until("the first records of %s on B" % topic, lambda: seq_lines(
            host, "kafka_b", "A." + topic, 10, admin), timeout=240, interval=5)
    except BaseException:
        producer.stop()
        raise
    return topic, producer


def mirrored_on_b(host, admin, topic, records):
    """Wait until every one of ``records`` written to ``topic`` on A is in its mirror on B; the lines read there."""
    def mirrored():
        # room for MirrorMaker's duplicates (it delivers at least once)
        lines = seq_lines(host, "kafka_b", "A." + topic, 2 * len(records), admin)
        return records <= set(lines) and lines
    return wait_until("the %d records of %s on B" % (len(records), topic), mirrored, timeout=240, interval=5)


def on_a_and_b(host, admin, topic, records):
    """Assert every one of ``records`` is in ``topic`` on A and, once mirrored, on B; the lines read on each."""
    on_a = seq_lines(host, "kafka_a", topic, 2 * len(records), admin)
    assert records <= set(on_a), "lost on A: %d" % len(records - set(on_a))
    return on_a, mirrored_on_b(host, admin, topic, records)


def test_an_applications_scram_password_changed_in_the_inventory_is_rolled_out_under_a_producer(host, admin):
    """kafka_broker_scram_users_managed: lab-app's password changed where the inventory reads it (the
    lab's password file) is rolled out by playbooks/kafka.yml. The role logs in as lab-app with the
    new password, is refused and sets it, once per cluster, from the KDC host as the admin over
    SASL_SSL; nothing else changes and no broker restarts. A producer logged in as lab-app with the
    old password writes on A (acks=all) throughout, as Kafka does not authenticate an established
    connection again: every record is on A and mirrored to B; then the old password is refused and
    the new one accepted on both clusters."""
    a, b = broker(host, "kafka_a"), broker(host, "kafka_b")
    old = secret("app.password")
    topic = unique("lab.scram-rotation")
    kafka(a, "kafka-topics.sh", "--bootstrap-server", bootstrap("kafka_a"), "--command-config", admin,
          "--create", "--topic", topic, "--partitions", "2")
    kafka(a, "kafka-acls.sh", "--bootstrap-server", bootstrap("kafka_a"), "--command-config", admin, "--add",
          "--allow-principal", "User:" + APP, "--producer", "--topic", topic)
    groups = ("kafka_a", "kafka_b")
    started_before = {group: started_at(broker(host, group), "kafka") for group in groups}
    old_login = scram_login(a, "/root/app-old.properties", APP, old)
    producer = Producer(a, bootstrap("kafka_a"), topic, interval=0.02, producer_config=old_login)
    try:
        wait_until("the first records of %s on B" % topic, lambda: consume(
            b, bootstrap("kafka_b"), "A." + topic, 10, 10000, "--consumer.config", admin), timeout=240, interval=5)
        new = token_hex(12)
        write_secret(os.path.join(SECRETS, "app.password"), new.encode())
        result = ansible_playbook(REPO / "playbooks" / "kafka.yml")
        assert result.returncode == 0, played(result)
        # the password set again on each cluster, by its one broker, and nothing else
        changed = {name: count for name, count in recap.changed(result.stdout).items() if count}
        assert changed == {hosts_of(group)[0]: 1 for group in groups}, played(result)
        producer.writing("the rollout")
        time.sleep(5)
        producer.finish("the rollout")
    finally:
        producer.stop()
    assert {group: started_at(broker(host, group), "kafka") for group in groups} == started_before, \
        "a broker restarted"
    for group in groups:
        rc, out = logs_in(host, group, scram_login(broker(host, group), "/root/app-old.properties", APP, old))
        assert rc != 0 and "Authentication failed" in out, (group, out[-2000:])
        rc, out = logs_in(host, group, scram_login(broker(host, group), "/root/app-new.properties", APP, new))
        assert rc == 0, (group, out[-2000:])
    records = producer.records
    on_a, on_b = on_a_and_b(host, admin, topic, records)
    duplicates = (len(on_a) - len(set(on_a)), len(on_b) - len(set(on_b)))
    print("\nSCRAM password rotation under a producer: %d records written as %s, all on A (%d duplicates) and on B "
          "(%d duplicates), no broker restarted" % ((len(records), APP) + duplicates))


def served_serial(host, server):
    """The serial number of the certificate ``server`` (host:port) presents, asked from ``host``."""
    return host.check_output("openssl s_client -connect %s </dev/null 2>/dev/null | openssl x509 -noout -serial"
                             % server).strip()


def renewed_keystore(name):
    """A PEM key store for broker ``name`` as lab/tls.yml joins it, with its certificate renewed: the
    same key, subject and alternative names, a new serial and validity, signed by the lab CA. The
    new certificate's serial, as openssl prints it."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization

    tls = os.path.join(SECRETS, "tls")

    def read(file_name):
        with open(os.path.join(tls, file_name), "rb") as fh:
            return fh.read()
    key_pem, old = read("%s.key" % name), x509.load_pem_x509_certificate(read("%s.pem" % name))
    ca_pem = read("ca.pem")
    ca, ca_key = x509.load_pem_x509_certificate(ca_pem), serialization.load_pem_private_key(read("ca.key"), None)
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(old.subject).issuer_name(ca.subject)
               .public_key(old.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=60)))
    for extension in old.extensions:
        builder = builder.add_extension(extension.value, extension.critical)
    cert = builder.sign(ca_key, hashes.SHA256())
    keystore = os.path.join(tls, "%s.keystore.pem" % name)
    write_secret(keystore, key_pem.rstrip(b"\n") + b"\n" + cert.public_bytes(serialization.Encoding.PEM) + ca_pem)
    digits = "%X" % cert.serial_number
    return "serial=" + ("0" * (len(digits) % 2)) + digits  # openssl prints whole bytes


def test_a_renewed_broker_certificate_is_served_without_a_restart_under_a_producer(host, admin):
    """A TLS key store renewed at kafka_broker_tls.keystore_src (same key and names, a new
    certificate from the lab CA) is rolled out by playbooks/kafka.yml without a restart: the role
    copies it and has the running broker read its stores again. A producer writes over SASL_SSL
    (acks=all) throughout; broker A presents the new certificate, was not restarted, and every
    record is on A; broker B, whose store did not change, is left alone."""
    a, name = broker(host, "kafka_a"), hosts_of("kafka_a")[0]
    server = "%s:9094" % name
    tls = admin_over_tls(a, admin, "/root/admin-rotation-tls.properties")
    topic = unique("lab.tls-renewal")
    kafka(a, "kafka-topics.sh", "--bootstrap-server", server, "--command-config", tls, "--create", "--topic", topic,
          "--partitions", "2")
    before, a_started = served_serial(a, server), started_at(a, "kafka")
    b_started = started_at(broker(host, "kafka_b"), "kafka")
    producer = Producer(a, server, topic, interval=0.02, producer_config=tls)
    try:
        wait_until("the first records of %s" % topic, lambda: consume(
            a, server, topic, 10, 10000, "--consumer.config", tls), timeout=120, interval=5)
        renewed = renewed_keystore(name)
        assert renewed != before
        result = ansible_playbook(REPO / "playbooks" / "kafka.yml")
        assert result.returncode == 0, played(result)
        changed = recap.changed(result.stdout)
        assert changed[name] >= 2 and changed[hosts_of("kafka_b")[0]] == 0, played(result)  # the copy, the reload
        assert served_serial(a, server) == renewed
        producer.writing("the rollout")
        time.sleep(5)
        producer.finish("the rollout")
    finally:
        producer.stop()
    assert started_at(a, "kafka") == a_started, "broker A was restarted"
    assert started_at(broker(host, "kafka_b"), "kafka") == b_started, "broker B was restarted"
    records = producer.records
    lines = [line for line in consume(a, server, topic, 2 * len(records), 10000, "--consumer.config", tls)
             if line.startswith("seq-")]
    assert records <= set(lines), "lost: %d" % len(records - set(lines))
    print("\ncertificate renewal under a producer: %d records written over SASL_SSL, all on A, %s -> %s, no restart"
          % (len(records), before, renewed))


def kvnos(host, path):
    """The key version numbers in a keytab on ``host``, as klist -k lists them."""
    listed = host.check_output("klist -k %s" % shlex.quote(path))
    return sorted(set(int(line.split()[0]) for line in listed.splitlines() if re.match(r"^\s*\d+ ", line)))


def no_refused_login(host):
    """Assert nothing in MirrorMaker 2's logs and journal on ``host`` says a login was refused."""
    pattern = shlex.quote("LoginException|SaslAuthenticationException|Authentication failed")
    refused = host.run("{ cat /var/log/kafka-mirrormaker/*.log* 2>/dev/null; journalctl -u kafka-mirrormaker "
                       "--no-pager; } | grep -E %s" % pattern).stdout
    assert refused == "", refused[-3000:]


def new_key(host, name, principal):
    """Kerberos's way to rotate a key with two credentials: the KDC gives ``principal`` a new key
    (kadmin ktadd appends its version to the KDC host's keytab for ``name``, beside the old one) and
    that keytab replaces the one the inventory's ``*_keytab_src`` names on the controller. Returns
    the path, on the KDC host, of a copy of the keytab from before (the old key alone)."""
    on_kdc, old = kdc_keytab(name), "/root/%s-old.keytab" % name
    kdc(host).run_expect([0], "cp %s %s && kadmin.local -r %s -q %s"
                         % (on_kdc, old, REALM, shlex.quote("ktadd -k %s %s" % (on_kdc, principal))))
    write_secret(os.path.join(SECRETS, "%s.keytab" % name),
                 base64.b64decode(kdc(host).check_output("base64 -w0 %s" % on_kdc)))
    return old


def kdc_logins(host, principal):
    """How many tickets the KDC has issued ``principal`` on a login (AS_REQ) so far."""
    return len(re.findall(r"AS_REQ .*ISSUE: .*%s for krbtgt/" % re.escape(principal), kdc_log(host)))


def only_the_new_key_logs_in(host, name, principal, old):
    """Assert the keytab copy ``old`` no longer gets ``principal`` a ticket and the KDC host's
    keytab for ``name`` (both keys) does."""
    refused = kdc(host).run("kinit -k -t %s -c /tmp/%s-old.cc %s" % (old, name, principal))
    accepted = kdc(host).run("kinit -k -t %s -c /tmp/%s-new.cc %s" % (kdc_keytab(name), name, principal))
    assert refused.rc != 0 and accepted.rc == 0, (refused.stderr, accepted.stderr)


def test_a_brokers_keytab_rotated_under_a_producer_and_mirrormaker_loses_nothing(host, admin):
    """A broker's own keytab rotated the way Kerberos takes two credentials: the KDC gives
    kafka/<broker A> a new key, the keytab at kafka_broker_kerberos.keytab_src is replaced with the
    one holding both keys, and playbooks/kafka.yml rolls it out: it copies the keytab and restarts
    broker A (a broker reads its keytab at login only), waited for until it serves again; broker B
    is left alone. A producer writes on A (acks=all) and MirrorMaker copies to B throughout: every
    record is on A and on B, broker A logged in to the KDC again, its keytab holds the old key
    beside the new one (tickets clients already hold stay good), and the old key alone no longer
    gets a ticket. MirrorMaker is never refused a login: the tickets it holds for broker A were
    issued under the old key, which the new keytab still holds."""
    a, b = broker(host, "kafka_a"), broker(host, "kafka_b")
    name = hosts_of("kafka_a")[0]
    principal = "kafka/%s@%s" % (name, REALM)
    deployed = "/etc/kafka/kafka.keytab"
    before, a_started, b_started = kvnos(a, deployed), started_at(a, "kafka"), started_at(b, "kafka")
    topic, producer = mirrored_producer(host, admin, "lab.broker-keytab")
    try:
        logins_before = kdc_logins(host, principal)
        old = new_key(host, name, principal)
        result = ansible_playbook(REPO / "playbooks" / "kafka.yml")
        assert result.returncode == 0, played(result)
        changed = recap.changed(result.stdout)
        assert changed[name] >= 1 and changed[hosts_of("kafka_b")[0]] == 0, played(result)
        assert started_at(a, "kafka") != a_started, "broker A was not restarted: %s" % played(result)
        producer.writing("the rollout")
        # records written after the restart come through as well
        time.sleep(10)
        producer.finish("the rollout")
    finally:
        producer.stop()
    assert started_at(b, "kafka") == b_started, "broker B was restarted"
    after = kvnos(a, deployed)
    assert len(after) == len(before) + 1 and after[:-1] == before, (before, after)
    assert kdc_logins(host, principal) > logins_before, "broker A did not log in again"
    records = producer.records
    on_a, on_b = on_a_and_b(host, admin, topic, records)
    only_the_new_key_logs_in(host, name, principal, old)
    no_refused_login(host)
    print("\nbroker keytab rotation under a producer and MirrorMaker: %d records written, all on A (%d duplicates) "
          "and on B (%d duplicates), broker A restarted, key versions %s -> %s"
          % (len(records), len(on_a) - len(set(on_a)), len(on_b) - len(set(on_b)), before, after))


def test_mirrormakers_keytab_rotated_under_a_producer_loses_nothing(host, admin):
    """A keytab rotation the way Kerberos takes two credentials: the KDC gives mm2/<host> a new key
    (kadmin ktadd, a new key version appended to the keytab, the old one kept beside it), the
    keytab at mirrormaker_keytab_src is replaced with that file, and playbooks/mirrormaker.yml rolls
    it out (the role copies it and restarts MirrorMaker 2, one node at a time, each waited for until
    it does its job). A producer writes on A with acks=all throughout; every record it wrote is on B,
    MirrorMaker 2 logged in to the KDC again after the restart, and the old key alone no longer
    gets a ticket. Runs last: the lab's MirrorMaker keeps the new key."""
    name = hosts_of("mirrormakers")[0]
    principal = "mm2/%s@%s" % (name, REALM)
    deployed = "/etc/kafka-mirrormaker/mm2.keytab"
    before, started_before = kvnos(host, deployed), started_at(host, "kafka-mirrormaker")
    topic, producer = mirrored_producer(host, admin, "lab.rotation")
    try:
        logins_before = kdc_logins(host, principal)
        old = new_key(host, name, principal)
        result = ansible_playbook(REPO / "playbooks" / "mirrormaker.yml")
        assert result.returncode == 0, played(result)
        assert recap.changed(result.stdout)[name] >= 1, played(result)
        assert started_at(host, "kafka-mirrormaker") != started_before, \
            "MirrorMaker 2 was not restarted: %s" % played(result)
        producer.writing("the rollout")
        # records written after the restart come through as well
        time.sleep(10)
        producer.finish("the rollout")
    finally:
        producer.stop()
    records = producer.records
    after = kvnos(host, deployed)
    assert len(after) == len(before) + 1 and after[:-1] == before, (before, after)
    lines = mirrored_on_b(host, admin, topic, records)
    assert kdc_logins(host, principal) > logins_before, "MirrorMaker 2 did not log in again"
    no_refused_login(host)
    only_the_new_key_logs_in(host, name, principal, old)
    print("\nkeytab rotation under a producer: %d records written, all on B (%d duplicates), key versions %s -> %s"
          % (len(records), len(lines) - len(set(lines)), before, after))
