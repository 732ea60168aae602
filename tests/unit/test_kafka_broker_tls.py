# -*- coding: utf-8 -*-
"""kafka_broker_tls through the role itself, run by ansible-playbook on localhost.

A throw-away CA and a broker key pair are made with the openssl CLI, as tests/live/tls.py makes
the lab's. The preflight refuses each fault with its own message naming the variable; the configure
tasks (roles/kafka_broker/tasks/configure.yml) then copy the stores and write server.properties
and probe.properties into a temporary directory, so the test sees what the role writes (read back
by java.util.Properties, as Kafka reads it), the stores' owner, group and modes, that the private
key and its password never reach the output of a -vvv --diff run, that the stores at the rendered
paths serve TLS (Python's ssl module, the broker's key against the rendered trust store, both
ways when client certificates are required), and that emptying the variable removes them.
"""

from __future__ import annotations

import grp
import os
import ssl
import stat
import subprocess

import pytest
import yaml

import local_playbook
from test_preflight_rules import failures, run_playbook

HOST = "k1.example.com"
KEY_PASSWORD = "kp-7Hq2-s3cret"
SCRAM_LOGIN = ('org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" '
               'password="scram-s3cret";')
LISTENERS = [{"name": "CLIENT", "port": 9092, "protocol": "SSL"},
             {"name": "SECURE", "port": 9095, "protocol": "SASL_SSL"},
             {"name": "PLAIN", "port": 9094, "protocol": "PLAINTEXT"}]
CONTROLLER = {"name": "CONTROLLER", "port": 9093, "protocol": "SSL"}
BASE = {"kafka_broker_advertised_host": HOST, "kafka_broker_listeners": LISTENERS,
        "kafka_broker_inter_broker_listener": "CLIENT", "kafka_broker_controller_listener": CONTROLLER,
        "kafka_broker_properties": {"sasl.enabled.mechanisms": "SCRAM-SHA-512",
                                    "listener.name.secure.scram-sha-512.sasl.jaas.config": SCRAM_LOGIN}}
# Group of the stores in the role test: an existing group other than root's.
GROUP = "daemon"


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, capture_output=True, timeout=60)


def make_ca(directory, name):
    key, cert = str(directory / (name + ".key")), str(directory / (name + ".pem"))
    openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key)
    openssl("req", "-x509", "-new", "-key", key, "-sha256", "-days", "2", "-subj", "/O=kafkaops unit/CN=%s" % name,
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            "-out", cert)
    return key, cert


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """A CA, a broker key (PKCS#8, plain and encrypted) and certificate for HOST, the PEM key stores
    Kafka reads (key, certificate, CA certificate in one file) and a CA that signed none of them."""
    d = tmp_path_factory.mktemp("controller")
    ca_key, ca = make_ca(d, "unit-ca")
    other_ca = make_ca(d, "other-ca")[1]
    key, csr, cert, ext = (str(d / name) for name in ("k1.key", "k1.csr", "k1.pem", "k1.ext"))
    openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key)
    with open(ext, "w") as handle:
        handle.write("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                     "extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:%s\n" % HOST)
    openssl("req", "-new", "-key", key, "-subj", "/O=kafkaops unit/CN=%s" % HOST, "-out", csr)
    openssl("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-set_serial", "1", "-sha256", "-days", "2",
            "-extfile", ext, "-out", cert)
    encrypted = str(d / "k1-encrypted.key")
    openssl("pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", key, "-passout", "pass:" + KEY_PASSWORD, "-out", encrypted)
    stores = {}
    for name, private in (("keystore", key), ("encrypted_keystore", encrypted)):
        stores[name] = str(d / (name + ".pem"))
        with open(stores[name], "w") as out:
            for part in (private, cert, ca):
                with open(part) as handle:
                    out.write(handle.read())
        os.chmod(stores[name], 0o600)
    # Every line of both keys' bodies: not one may show in the output.
    secret_lines = set()
    for private in (key, encrypted):
        with open(private) as handle:
            secret_lines.update(line.strip() for line in handle if line.strip() and not line.startswith("-----"))
    not_pem = d / "ca.der"
    not_pem.write_bytes(b"\x30\x82\x03\x0b not a PEM file")
    headers = []
    for private in (key, encrypted):
        with open(private) as handle:
            headers.append(handle.readline().strip())
    return dict(stores, ca=ca, other_ca=other_ca, secret_lines=sorted(secret_lines), not_pem=str(not_pem),
                headers=headers)


def play(variables, tasks_from=("preflight",)):
    return [{"hosts": "localhost", "gather_facts": False, "vars": variables,
             "tasks": [{"ansible.builtin.include_role": {"name": "kafkaops.mirrormaker.kafka_broker",
                                                         "tasks_from": t, "public": True}}
                       for t in tasks_from]}]


def test_the_test_keys_are_what_kafka_reads(pki):
    # Kafka's PemStore takes PKCS#8 only: plain without ssl.key.password, encrypted with it.
    assert pki["headers"] == ["-----BEGIN PRIVATE KEY-----", "-----BEGIN ENCRYPTED PRIVATE KEY-----"]


def test_preflight_passes_a_complete_setting(tmp_path, pki):
    tls = {"keystore_src": pki["encrypted_keystore"], "truststore_src": pki["ca"], "key_password": KEY_PASSWORD,
           "client_auth": "required"}
    result, report = run_playbook(tmp_path, play(dict(BASE, kafka_broker_tls=tls)))
    assert result.returncode == 0, failures(report)
    assert KEY_PASSWORD not in result.stdout + result.stderr


@pytest.mark.parametrize("tls, expected", [
    ({}, ["kafka_broker_tls: empty, but listeners CLIENT (SSL), SECURE (SASL_SSL), CONTROLLER (SSL) serve TLS and "
          "kafka_broker_properties gives no key store there (ssl.keystore.location, or "
          "listener.name.<listener>.ssl.keystore.location); set kafka_broker_tls {keystore_src, truststore_src}, or "
          "give the ssl.* keys in kafka_broker_properties"]),
    ({"keystore_src": "/nonexistent/k1.pem", "truststore_src": "<NOT_PEM>"},
     ["kafka_broker_tls.keystore_src: /nonexistent/k1.pem is not a file on the controller",
      "kafka_broker_tls.truststore_src: <NOT_PEM> holds no certificate (no -----BEGIN CERTIFICATE----- line); give the "
      "PEM CA certificates that signed the brokers' (and clients') certificates"]),
    ({"keystore_src": "<KEYSTORE>", "truststore_src": "<CA>", "key_password": KEY_PASSWORD},
     ["kafka_broker_tls.key_password: set, but <KEYSTORE> holds an unencrypted private key (BEGIN PRIVATE KEY), which "
      "Kafka would then fail to decrypt; remove key_password or encrypt the key (openssl pkcs8 -topk8)"]),
    ({"keystore_src": "<ENCRYPTED>", "truststore_src": "<KEYSTORE>"},
     ["kafka_broker_tls.key_password: required, <ENCRYPTED> holds an encrypted private key (BEGIN ENCRYPTED PRIVATE "
      "KEY)",
      "kafka_broker_tls.truststore_src: <KEYSTORE> holds a private key; the trust store is copied readable by all "
      "(0644) and shown in --diff: give the CA certificates only"]),
    ({"keystore_src": "<KEYSTORE>", "truststore_src": "<CA>", "client_auht": "required"},
     ["kafka_broker_tls.client_auht: unknown key; did you mean 'client_auth'?"]),
    ({"keystore_src": "<KEYSTORE>", "truststore_src": "<CA>", "client_auth": "want"},
     ["kafka_broker_tls.client_auth: 'want' is not one of none, requested, required"]),
], ids=["tls-listeners-without-tls", "keystore-missing-truststore-not-pem", "password-for-a-plain-key",
        "encrypted-key-without-password-key-in-truststore", "unknown-key", "client-auth-not-a-choice"])
def test_preflight_refuses_one_message_per_fault(tmp_path, pki, tls, expected):
    names = {"<KEYSTORE>": pki["keystore"], "<ENCRYPTED>": pki["encrypted_keystore"], "<CA>": pki["ca"],
             "<NOT_PEM>": pki["not_pem"]}
    tls = {k: names.get(v, v) for k, v in tls.items()}
    for name, path in names.items():
        expected = [message.replace(name, path) for message in expected]
    result, report = run_playbook(tmp_path, play(dict(BASE, kafka_broker_tls=tls)))
    assert result.returncode != 0
    assert failures(report) == expected
    output = result.stdout + result.stderr
    assert KEY_PASSWORD not in output and not any(line in output for line in pki["secret_lines"])


def test_preflight_refuses_tls_on_a_host_without_a_tls_listener(tmp_path, pki):
    plain = dict(BASE, kafka_broker_listeners=[LISTENERS[2]], kafka_broker_inter_broker_listener="PLAIN",
                 kafka_broker_controller_listener=dict(CONTROLLER, protocol="PLAINTEXT"), kafka_broker_properties={},
                 kafka_broker_tls={"keystore_src": pki["keystore"], "truststore_src": pki["ca"]})
    result, report = run_playbook(tmp_path, play(plain))
    assert result.returncode != 0
    assert failures(report) == [
        "kafka_broker_tls: set, but none of this host's listeners is SSL or SASL_SSL (kafka_broker_listeners on a host "
        "with the broker role, kafka_broker_controller_listener on every host); make one SSL or SASL_SSL, or leave "
        "kafka_broker_tls empty on this host"]


# ---------------------------------------------------------------------- what the role writes

def role_case(tmp_path, pki, tls, **overrides):
    """Preflight and configure into tmp_path; -vvv --diff, the default callback."""
    etc, data = tmp_path / "etc", tmp_path / "data"
    variables = dict(BASE, kafka_broker_tls=tls, kafka_broker_config_dir=str(etc),
                     kafka_broker_log_dirs=[str(data)], kafka_broker_restart_on_change=False,
                     kafka_common_user="root", kafka_common_group=GROUP, kafka_common_log_dir=str(tmp_path / "log"),
                     kafka_common_home=str(tmp_path / "home"), __kafka_common_current_dir=str(tmp_path / "kafka"),
                     __kafka_common_log4j2=True, **overrides)
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump(play(variables, ("preflight", "configure")), sort_keys=False))
    result = local_playbook.run(playbook, "-vvv", "--diff")
    assert result.returncode == 0, result.stdout[-4000:]
    output = result.stdout + result.stderr
    assert KEY_PASSWORD not in output
    assert "PRIVATE KEY-----" not in output
    assert not [line for line in pki["secret_lines"] if line in output]
    return etc, output


def handshake(server, client):
    """A TLS handshake in memory between two contexts; the server certificate the client verified."""
    to_server, to_client = ssl.MemoryBIO(), ssl.MemoryBIO()
    server_end = server.wrap_bio(to_server, to_client, server_side=True)
    client_end = client.wrap_bio(to_client, to_server, server_hostname=HOST)
    # Each wrap_bio reads one BIO and writes the other, so the two ends talk without a socket.
    done = set()
    for _round in range(10):
        for name, end in (("client", client_end), ("server", server_end)):
            if name in done:
                continue
            try:
                end.do_handshake()
                done.add(name)
            except ssl.SSLWantReadError:
                pass
        if len(done) == 2:
            break
    assert done == {"client", "server"}
    return dict(item[0] for item in client_end.getpeercert()["subject"])


def contexts(props, client_certificates):
    """The broker's server side and a peer's client side from server.properties' own paths, as Kafka reads them."""
    keystore, truststore = props["ssl.keystore.location"], props["ssl.truststore.location"]
    password = props.get("ssl.key.password")
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(keystore, password=password)
    client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    client.load_verify_locations(cafile=truststore)
    if client_certificates:
        server.verify_mode = ssl.CERT_REQUIRED
        server.load_verify_locations(cafile=truststore)
        client.load_cert_chain(keystore, password=password)
    return server, client


def test_role_writes_the_stores_and_the_properties_that_serve_tls(tmp_path, pki, java_load):
    tls = {"keystore_src": pki["encrypted_keystore"], "truststore_src": pki["ca"], "key_password": KEY_PASSWORD,
           "client_auth": "required"}
    etc, output = role_case(tmp_path, pki, tls)
    keystore, truststore = etc / "tls" / "keystore.pem", etc / "tls" / "truststore.pem"
    props, probe = java_load([str(etc / "server.properties"), str(etc / "probe.properties")])
    assert {k: v for k, v in props.items() if ".ssl." in k or k.startswith("ssl.")} == {
        "ssl.keystore.type": "PEM", "ssl.keystore.location": str(keystore),
        "ssl.truststore.type": "PEM", "ssl.truststore.location": str(truststore),
        "ssl.key.password": KEY_PASSWORD, "ssl.client.auth": "required",
        "listener.name.secure.ssl.client.auth": "required"}
    assert props["listener.security.protocol.map"] == "CLIENT:SSL,SECURE:SASL_SSL,PLAIN:PLAINTEXT,CONTROLLER:SSL"
    # The probe asks the inter-broker listener, which requires a certificate: it presents the broker's.
    assert probe == {"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": str(truststore),
                     "ssl.keystore.type": "PEM", "ssl.keystore.location": str(keystore),
                     "ssl.key.password": KEY_PASSWORD}

    group = grp.getgrnam(GROUP).gr_gid
    for path, source, mode in ((keystore, pki["encrypted_keystore"], 0o640), (truststore, pki["ca"], 0o644),
                               (etc / "tls", None, 0o750)):
        info = path.stat()
        assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (0, group, mode), path
        if source:
            with open(source, "rb") as handle:
                assert path.read_bytes() == handle.read()
    copy_task = output.split("Copy the broker's TLS key store]", 1)[1].split("TASK [", 1)[0]
    assert "the output has been hidden" in copy_task and "changed: [localhost]" in copy_task

    # The files at the rendered paths: the broker's key opens with the rendered password and matches its
    # certificate, which the rendered trust store verifies for the broker's host name; with client_auth
    # required the broker, dialling a peer, is verified the same way.
    server, client = contexts(props, client_certificates=True)
    assert handshake(server, client)["commonName"] == HOST
    foreign = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    foreign.load_verify_locations(cafile=pki["other_ca"])
    with pytest.raises(ssl.SSLCertVerificationError):
        handshake(contexts(props, client_certificates=False)[0], foreign)
    with pytest.raises(ssl.SSLError):
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(str(keystore), password="not-" + KEY_PASSWORD)

    # Emptying the variable takes the keys out of server.properties and the stores off the host.
    plain = [dict(item, protocol="PLAINTEXT") for item in LISTENERS]
    etc, output = role_case(tmp_path, pki, {}, kafka_broker_listeners=plain, kafka_broker_properties={},
                            kafka_broker_controller_listener=dict(CONTROLLER, protocol="PLAINTEXT"))
    assert not keystore.exists() and not truststore.exists()
    assert "ssl." not in (etc / "server.properties").read_text()
    assert not (etc / "probe.properties").exists()


def test_an_unencrypted_key_without_client_certificates(tmp_path, pki, java_load):
    etc = role_case(tmp_path, pki, {"keystore_src": pki["keystore"], "truststore_src": pki["ca"]})[0]
    props, probe = java_load([str(etc / "server.properties"), str(etc / "probe.properties")])
    tls_dir = etc / "tls"
    assert {k: v for k, v in props.items() if ".ssl." in k or k.startswith("ssl.")} == {
        "ssl.keystore.type": "PEM", "ssl.keystore.location": str(tls_dir / "keystore.pem"),
        "ssl.truststore.type": "PEM", "ssl.truststore.location": str(tls_dir / "truststore.pem"),
        "ssl.client.auth": "none", "listener.name.secure.ssl.client.auth": "none"}
    # No certificate asked: the probe trusts the broker and presents nothing.
    assert probe == {"security.protocol": "SSL", "ssl.truststore.type": "PEM",
                     "ssl.truststore.location": str(tls_dir / "truststore.pem")}
    server, client = contexts(props, client_certificates=False)
    assert handshake(server, client)["commonName"] == HOST
