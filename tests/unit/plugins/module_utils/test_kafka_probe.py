"""kafka_probe against real sockets on the loopback interface: the ways a probe fails.

The small socket servers below are NOT stand-ins for Kafka: each one is a failure case (a port
nobody listens on, a listener that never answers, one that answers garbage or closes). That a
real broker answers is shown against real Kafka in tests/live/test_kafka_reachable.py.
"""

import socket
import ssl
import shutil
import struct
import subprocess
import threading
import time

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import probe as kafka_probe
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.probe import check_cluster, parse_server, probe

# What a Kafka 4.3.1 broker answered (recorded from the lab archive's broker) to an ApiVersions
# v5 request, one version above its v0-v4: correlation id 8, error_code 35 UNSUPPORTED_VERSION,
# and (KIP-511) one API key, ApiVersions 18 with v0-v4.
KAFKA_431_UNSUPPORTED_VERSION_ANSWER = bytes.fromhex("00000008002300000001001200000004")


def closed_port():
    """A 127.0.0.1 port nobody listens on (bound, then released)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


class Listener(object):
    """Failure case, not a Kafka stand-in: a 127.0.0.1 listener that runs ``handle(conn)`` for
    every connection it accepts (keeping the connection open until the test ends)."""

    def __init__(self, handle, family=socket.AF_INET, host="127.0.0.1"):
        self.sock = socket.socket(family)
        self.sock.bind((host, 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.handle = handle
        self.conns = []
        self.accepted = 0
        self.stopped = False
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while not self.stopped:
            try:
                conn, _addr = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            self.conns.append(conn)
            threading.Thread(target=self.run, args=(conn,), daemon=True).start()

    def run(self, conn):
        try:
            self.handle(conn)
        except (OSError, ssl.SSLError):
            pass

    def close(self):
        self.stopped = True
        self.sock.close()
        for conn in self.conns:
            conn.close()


@pytest.fixture
def listener():
    made = []

    def make(handle, **kwargs):
        made.append(Listener(handle, **kwargs))
        return made[-1]

    yield make
    for item in made:
        item.close()


def never_answers(conn):
    """Failure case: accepts, reads the request, never answers."""
    conn.recv(1024)
    time.sleep(60)


def answers_http(conn):
    """Failure case: some other protocol's answer."""
    conn.recv(1024)
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


def answers_wrong_correlation_id(conn):
    """Failure case: a well-formed size and error_code 0, but not our correlation id."""
    conn.recv(1024)
    conn.sendall(struct.pack(">iihi", 10, 424242, 0, 0))


def closes_at_once(conn):
    """Failure case: accepts the connection and closes it without a byte."""
    conn.close()


def answers_tls_alert(conn):
    """Failure case: a TLS record (alert, protocol_version) as a TLS listener sends it to bytes
    that are not a ClientHello; tells the probe the listener speaks TLS."""
    conn.recv(1024)
    conn.sendall(bytes.fromhex("15030300020246"))


# --------------------------------------------------------------------------- host:port


@pytest.mark.parametrize("text, expected", [
    ("kafka-a1:9092", ("kafka-a1", 9092)),
    (" 127.0.0.1:19092 ", ("127.0.0.1", 19092)),
    ("kafka-a1.example.org:1", ("kafka-a1.example.org", 1)),
    ("[::1]:9092", ("::1", 9092)),
    ("[2001:db8::7]:65535", ("2001:db8::7", 65535)),
    ("[::ffff:127.0.0.1]:9093", ("::ffff:127.0.0.1", 9093)),
])
def test_parse_host_port(text, expected):
    assert parse_server(text) == expected


@pytest.mark.parametrize("text, why", [
    ("kafka-a1", r"^'kafka-a1' is not host:port$"),
    ("kafka-a1:", r"is not host:port"),
    (":9092", r"is not host:port"),
    ("kafka-a1:90x2", r"is not host:port"),
    ("kafka-a1:9092,kafka-a2:9092", r"is not host:port"),
    ("kafka a1:9092", r"is not host:port"),
    ("::1:9092", r"in brackets, e\.g\. \[::1\]:9092"),
    ("PLAINTEXT://kafka-a1:9092", r"no listener name or scheme"),
    ("kafka-a1:0", r"port 0 is outside 1-65535"),
    ("kafka-a1:70000", r"port 70000 is outside 1-65535"),
    (9092, r"^9092 is not host:port$"),
])
def test_parse_refuses_what_is_not_host_port(text, why):
    with pytest.raises(ValueError, match=why):
        parse_server(text)


def test_bad_server_is_a_reason_not_an_exception():
    assert probe("kafka-a1", 1) == (False, "'kafka-a1' is not host:port")


# --------------------------------------------------------------------------- wire format


def test_request_bytes():
    # size 24; api_key 18, api_version 0, correlation id 7, client_id "kafkaops-probe" (INT16 length)
    assert kafka_probe.api_versions_request(7) == (
        bytes.fromhex("00000018 0012 0000 00000007 000e") + b"kafkaops-probe")


def test_recorded_unsupported_version_answer_means_kafka():
    detail = kafka_probe.parse_api_versions_response(KAFKA_431_UNSUPPORTED_VERSION_ANSWER, 8)
    assert detail == "ApiVersions v0 answered: error_code 35 (UNSUPPORTED_VERSION), 1 API keys, ApiVersions v0-v4"


@pytest.mark.parametrize("body, why", [
    (KAFKA_431_UNSUPPORTED_VERSION_ANSWER, r"correlation id 8, expected 9"),
    (struct.pack(">ih", 9, 42), r"ApiVersions error_code 42"),
    (b"\x00\x00\x00\x09", r"a 4-byte answer"),
])
def test_answers_that_are_not_kafka(body, why):
    with pytest.raises(kafka_probe.ProbeFailed, match=r"^answered but is not Kafka \(.*%s" % why):
        kafka_probe.parse_api_versions_response(body, 9)


# --------------------------------------------------------------------------- failures, real sockets


def test_closed_port_is_refused():
    ok, why = probe("127.0.0.1:%d" % closed_port(), 5)
    assert (ok, why) == (False, "connection refused")


def test_closed_port_over_ipv6_is_refused():
    try:
        sock = socket.socket(socket.AF_INET6)
        sock.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    port = sock.getsockname()[1]
    sock.close()
    assert probe("[::1]:%d" % port, 5) == (False, "connection refused")


def test_listener_that_never_answers_times_out_within_the_bound(listener):
    silent = listener(never_answers)
    start = time.monotonic()
    ok, why = probe("127.0.0.1:%d" % silent.port, 1.5)
    elapsed = time.monotonic() - start
    assert not ok
    assert why == "timed out after 1.5 s waiting for an answer"
    assert 1.4 < elapsed < 1.5 + 2
    assert silent.accepted == 1


def test_listener_that_answers_garbage_is_not_kafka(listener):
    http = listener(answers_http)
    ok, why = probe("127.0.0.1:%d" % http.port, 5)
    assert not ok
    assert why == "answered but is not Kafka (size prefix 1213486160, first bytes b'HTTP/1.1 400 Bad')"


def test_listener_with_a_wrong_correlation_id_is_not_kafka(listener):
    liar = listener(answers_wrong_correlation_id)
    ok, why = probe("127.0.0.1:%d" % liar.port, 5)
    assert not ok
    assert why.startswith("answered but is not Kafka (correlation id 424242, expected ")


def test_listener_that_closes_at_once(listener):
    closer = listener(closes_at_once)
    assert probe("127.0.0.1:%d" % closer.port, 5) in [
        (False, "closed the connection without answering"),
        (False, "connection reset by peer"),  # the close raced the request
    ]


def test_tls_listener_probed_as_plaintext_says_so(listener):
    tls = listener(answers_tls_alert)
    ok, why = probe("127.0.0.1:%d" % tls.port, 5)
    assert not ok
    assert why == "answered but is not Kafka (it answered with TLS: is the listener SSL or SASL_SSL?)"


@pytest.mark.parametrize("protocol", ["SSL", "SASL_SSL"])
def test_plaintext_listener_probed_with_tls_fails_the_handshake(listener, protocol):
    http = listener(answers_http)
    ok, why = probe("127.0.0.1:%d" % http.port, 5, protocol)
    assert not ok
    assert why.startswith("TLS handshake failed: ")


def test_name_that_does_not_resolve():
    start = time.monotonic()
    ok, why = probe("kafka-probe-test.invalid:9092", 5)
    assert not ok
    assert why.startswith("name does not resolve")
    assert time.monotonic() - start < 5 + 2


def test_unknown_security_protocol_is_a_reason():
    assert probe("127.0.0.1:9", 1, "TLS") == (
        False, "security_protocol 'TLS' is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL")


# --------------------------------------------------------------------------- TLS, verification off


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory):
    """A throw-away self-signed certificate (openssl CLI) for the TLS failure cases."""
    openssl = shutil.which("openssl")
    if not openssl:
        pytest.skip("openssl not installed")
    d = tmp_path_factory.mktemp("tls")
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=probe-test",
                    "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem")],
                   check=True, capture_output=True, timeout=60)
    return str(d / "cert.pem"), str(d / "key.pem")


def tls_server(cert, key, inner, client_cert=False):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    if client_cert:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(cert)

    def handle(conn):
        inner(context.wrap_socket(conn, server_side=True))

    return handle


def test_tls_is_not_verified_and_garbage_inside_tls_is_not_kafka(listener, self_signed):
    """Failure case: a TLS listener with an untrusted self-signed certificate that answers
    garbage; the handshake passes (verification off), the answer is judged."""
    tls = listener(tls_server(*self_signed, inner=answers_http))
    ok, why = probe("127.0.0.1:%d" % tls.port, 5, "SSL")
    assert not ok
    assert why.startswith("answered but is not Kafka (size prefix 1213486160")


def test_tls_listener_that_wants_a_client_certificate(listener, self_signed):
    mtls = listener(tls_server(*self_signed, inner=never_answers, client_cert=True))
    ok, why = probe("127.0.0.1:%d" % mtls.port, 5, "SASL_SSL")
    assert not ok
    # With TLS 1.3 the client's side of the handshake ends before the server checks for a
    # certificate: the server's alert names the missing certificate when it arrives before the
    # server closes; when the close wins the race, the probe reads an EOF or a reset.
    assert why in (
        "TLS handshake failed: the listener requires a client certificate (ssl.client.auth=required) "
        "and the probe sends none (TLSV13_ALERT_CERTIFICATE_REQUIRED)",
        "connection reset by peer",
    ) or why.startswith("TLS handshake failed: EOF occurred in violation of protocol")


# --------------------------------------------------------------------------- check_cluster


def test_cluster_with_no_answering_server_lists_every_reason(listener):
    http = listener(answers_http)
    first, last = "127.0.0.1:%d" % closed_port(), "127.0.0.1:%d" % http.port
    result = check_cluster([first, last], 5)
    assert result["reachable"] is False and result["answered"] is None and result["detail"] is None
    assert list(result["failures"]) == [first, last]
    assert result["failures"][first] == "connection refused"
    assert result["failures"][last].startswith("answered but is not Kafka")


def test_a_silent_first_server_cannot_keep_the_next_from_being_asked(listener):
    silent, http = listener(never_answers), listener(answers_http)
    servers = "127.0.0.1:%d, 127.0.0.1:%d" % (silent.port, http.port)
    start = time.monotonic()
    result = check_cluster(servers, 2)
    assert time.monotonic() - start < 2 + 2
    assert result["failures"] == {
        "127.0.0.1:%d" % silent.port: "timed out after 1 s waiting for an answer",
        "127.0.0.1:%d" % http.port: "answered but is not Kafka (size prefix 1213486160, first bytes b'HTTP/1.1 400 Bad')",
    }
    assert http.accepted == 1
