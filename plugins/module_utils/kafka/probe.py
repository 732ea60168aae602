# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Does a Kafka broker answer at host:port, within a bounded time?  (standard library only)

``probe`` opens a TCP connection (TLS for SSL/SASL_SSL), sends one ApiVersions request and
checks the answer; ``check_cluster`` probes a cluster's bootstrap servers in order until one
answers, as a client bootstraps.  Used by the ``kafka_reachable`` module.

Wire format (Apache Kafka protocol guide; ``clients/src/main/resources/common/message/``):

* every request and every response is preceded by its size, INT32; all integers big-endian;
* RequestHeader v1: request_api_key INT16, request_api_version INT16, correlation_id INT32,
  client_id NULLABLE_STRING (INT16 length, then the bytes).  Header v0 (no client_id) was
  removed in Kafka 4.0; v1 is read by every broker since 0.8;
* ApiVersionsRequest is api_key 18; versions 0-2 have an empty body, and v0 is still valid
  in Kafka 4.x (``validVersions: "0-4"``), since clients send it before they know what the
  broker speaks;
* an ApiVersions response always has ResponseHeader v0: correlation_id INT32;
* ApiVersionsResponse v0: error_code INT16, api_keys ARRAY (INT32 count) of
  {api_key INT16, min_version INT16, max_version INT16};
* a broker that does not support the requested version still answers, in the v0 format, with
  error_code 35 (UNSUPPORTED_VERSION) and, since Kafka 2.4 (KIP-511), its ApiVersions range;
* SASL listeners answer ApiVersions before authentication (KIP-35/KIP-43), so the probe needs
  no credentials on SASL_PLAINTEXT and SASL_SSL listeners either.
"""

from __future__ import annotations

import random
import socket
import ssl
import struct
import threading
import time

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.rules import HOSTPORT_RE

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
TLS_PROTOCOLS = ("SSL", "SASL_SSL")

API_VERSIONS_KEY = 18
API_VERSIONS_VERSION = 0
CLIENT_ID = "kafkaops-probe"
# error_code values with which a broker answers ApiVersions v0
KAFKA_ANSWERS = {0: "NONE", 35: "UNSUPPORTED_VERSION"}
# An ApiVersions v0 answer is under 1 KiB (about 90 APIs x 6 bytes); a size prefix beyond this
# is some other protocol's bytes read as a size (b"HTTP" reads as 1213486160).
MAX_RESPONSE_SIZE = 1 << 20


class ProbeFailed(Exception):
    """A probe's short reason for failing, e.g. "connection refused"."""


def seconds_text(value):
    """10 -> "10", 3.3333 -> "3.3" (for "timed out after N s")."""
    text = "%.1f" % float(value)
    return text[:-2] if text.endswith(".0") else text


def parse_server(server):
    """Split ``host:port`` or ``[ipv6]:port`` into (host, port); ValueError names the value."""
    text = server.strip() if isinstance(server, str) else server
    if not isinstance(text, str) or not HOSTPORT_RE.match(text):
        hint = ""
        if isinstance(text, str) and "://" in text:
            hint = " (no listener name or scheme: write host:port)"
        elif isinstance(text, str) and text.count(":") > 1 and not text.startswith("["):
            hint = " (write an IPv6 address in brackets, e.g. [::1]:9092)"
        raise ValueError("%r is not host:port%s" % (server, hint))
    host, _sep, port = text.rpartition(":")
    if host.startswith("["):
        host = host[1:-1]
    port = int(port)
    if not 0 < port < 65536:
        raise ValueError("%r is not host:port (port %d is outside 1-65535)" % (server, port))
    return host, port


def _remaining(deadline, timeout, stage):
    left = deadline - time.monotonic()
    if left <= 0:
        raise ProbeFailed("timed out after %s s %s" % (seconds_text(timeout), stage))
    return left


def _resolve(host, port, deadline, timeout):
    """getaddrinfo bounded by the deadline (it has no timeout of its own: run it in a thread)."""
    box = {}

    def work():
        try:
            box["infos"] = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            box["error"] = exc

    worker = threading.Thread(target=work, name="kafka-probe-resolve", daemon=True)
    worker.start()
    worker.join(_remaining(deadline, timeout, "resolving the name"))
    if worker.is_alive():
        raise ProbeFailed("timed out after %s s resolving the name" % seconds_text(timeout))
    if "error" in box:
        exc = box["error"]
        if isinstance(exc, socket.gaierror) and exc.errno in (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", None)):
            raise ProbeFailed("name does not resolve")
        raise ProbeFailed("name does not resolve (%s)" % (getattr(exc, "strerror", None) or exc))
    return box["infos"]


def _os_reason(exc):
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return text[0].lower() + text[1:]


def _connect(infos, deadline, timeout):
    """Connect to the first address that accepts, in getaddrinfo's order."""
    reasons = []
    for family, socktype, proto, _canon, sockaddr in infos:
        sock = socket.socket(family, socktype, proto)
        try:
            sock.settimeout(_remaining(deadline, timeout, "connecting"))
            sock.connect(sockaddr)
            return sock
        except socket.timeout:
            sock.close()
            raise ProbeFailed("timed out after %s s connecting" % seconds_text(timeout))
        except OSError as exc:
            sock.close()
            reasons.append((sockaddr[0], _os_reason(exc)))
        except ProbeFailed:
            sock.close()
            raise
    distinct = sorted(set(reason for _addr, reason in reasons))
    if len(distinct) == 1:
        raise ProbeFailed(distinct[0])
    raise ProbeFailed(", ".join("%s: %s" % pair for pair in reasons))


def _is_ip(host):
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
            return True
        except (OSError, ValueError):
            pass
    return False


def _tls_reason(exc):
    reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or str(exc)
    # The probe sends no client certificate, so a server's alert about a certificate is about
    # the missing one (Kafka's JVM sends bad_certificate; TLS 1.3 has certificate_required).
    if "CERTIFICATE_REQUIRED" in str(reason).upper() or "BAD_CERTIFICATE" in str(reason).upper():
        return ("TLS handshake failed: the listener requires a client certificate "
                "(ssl.client.auth=required) and the probe sends none (%s)" % reason)
    return "TLS handshake failed: %s" % reason


def _wrap_tls(sock, host, deadline, timeout):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    # Certificate verification is off on purpose.  The probe sends no credentials and reads no
    # data: it only asks whether a Kafka broker answers on this listener.  The brokers' trust
    # material is a JVM truststore (JKS/PKCS12) that Python's ssl module cannot read; the Kafka
    # clients that do send data (MirrorMaker 2) verify the certificate with that truststore.
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    sock.settimeout(_remaining(deadline, timeout, "in the TLS handshake"))
    try:
        return context.wrap_socket(sock, server_hostname=None if _is_ip(host) else host)
    except socket.timeout:
        raise ProbeFailed("timed out after %s s in the TLS handshake" % seconds_text(timeout))
    except ssl.SSLEOFError as exc:
        # what a Kafka PLAINTEXT or SASL_PLAINTEXT listener does with a ClientHello
        raise ProbeFailed("TLS handshake failed: the server closed the connection (%s); is the listener "
                          "PLAINTEXT or SASL_PLAINTEXT?" % (exc.reason or exc))
    except (ssl.SSLError, OSError) as exc:
        raise ProbeFailed(_tls_reason(exc))


def api_versions_request(correlation_id, client_id=CLIENT_ID):
    """Size-prefixed ApiVersions v0 request with RequestHeader v1 (the body is empty)."""
    client = client_id.encode("utf-8")
    header = struct.pack(">hhih", API_VERSIONS_KEY, API_VERSIONS_VERSION, correlation_id, len(client)) + client
    return struct.pack(">i", len(header)) + header


def _looks_like_tls(data):
    # a TLS record: content type 20-23 (change_cipher_spec, alert, handshake, data), version 3.x
    return len(data) >= 2 and 20 <= data[0] <= 23 and data[1] == 3


def _not_kafka(why):
    return ProbeFailed("answered but is not Kafka (%s)" % why)


def _recv_exact(sock, count, deadline, timeout, received):
    data = b""
    while len(data) < count:
        sock.settimeout(_remaining(deadline, timeout, "waiting for an answer"))
        chunk = sock.recv(count - len(data))
        if not chunk:
            got = len(received) + len(data)
            if got == 0:
                raise ProbeFailed("closed the connection without answering")
            raise _not_kafka("closed the connection after %d bytes: %r" % (got, (received + data)[:16]))
        data += chunk
    return data


def parse_api_versions_response(body, correlation_id):
    """Check a response body (after the size) and describe it; ProbeFailed if it is not Kafka's."""
    if len(body) < 6:
        raise _not_kafka("a %d-byte answer: %r" % (len(body), body))
    got_id, error_code = struct.unpack(">ih", body[:6])
    if got_id != correlation_id:
        raise _not_kafka("correlation id %d, expected %d" % (got_id, correlation_id))
    if error_code not in KAFKA_ANSWERS:
        raise _not_kafka("ApiVersions error_code %d" % error_code)
    detail = "ApiVersions v%d answered: error_code %d (%s)" % (API_VERSIONS_VERSION, error_code, KAFKA_ANSWERS[error_code])
    if len(body) >= 10:
        (count,) = struct.unpack(">i", body[6:10])
        if 0 <= count and 10 + 6 * count <= len(body):
            ranges = dict((key, (low, high)) for key, low, high in struct.iter_unpack(">hhh", body[10:10 + 6 * count]))
            detail += ", %d API keys" % count
            if API_VERSIONS_KEY in ranges:
                detail += ", ApiVersions v%d-v%d" % ranges[API_VERSIONS_KEY]
    return detail


def _exchange(sock, deadline, timeout, tls):
    correlation_id = random.randint(1, 0x7FFFFFFF)
    sock.settimeout(_remaining(deadline, timeout, "sending the request"))
    sock.sendall(api_versions_request(correlation_id))
    head = _recv_exact(sock, 4, deadline, timeout, b"")
    (size,) = struct.unpack(">i", head)
    if not 6 <= size <= MAX_RESPONSE_SIZE:
        if not tls and _looks_like_tls(head):
            raise _not_kafka("it answered with TLS: is the listener SSL or SASL_SSL?")
        more = b""
        try:
            sock.settimeout(min(0.2, max(deadline - time.monotonic(), 0.01)))
            more = sock.recv(12)
        except OSError:
            pass
        raise _not_kafka("size prefix %d, first bytes %r" % (size, (head + more)[:16]))
    return parse_api_versions_response(_recv_exact(sock, size, deadline, timeout, head), correlation_id)


def probe(server, timeout, security_protocol="PLAINTEXT"):
    """Ask ``server`` (host:port) whether a Kafka broker answers within ``timeout`` seconds.

    Returns (ok, detail): on success a description of the answer, on failure a short reason:
    "connection refused", "timed out after N s ...", "name does not resolve",
    "TLS handshake failed: ...", "answered but is not Kafka (...)", ...
    """
    deadline = time.monotonic() + timeout
    if security_protocol not in SECURITY_PROTOCOLS:
        return False, "security_protocol %r is not one of %s" % (security_protocol, ", ".join(SECURITY_PROTOCOLS))
    try:
        host, port = parse_server(server)
    except ValueError as exc:
        return False, str(exc)
    tls = security_protocol in TLS_PROTOCOLS
    sock = None
    try:
        sock = _connect(_resolve(host, port, deadline, timeout), deadline, timeout)
        if tls:
            sock = _wrap_tls(sock, host, deadline, timeout)
        return True, _exchange(sock, deadline, timeout, tls)
    except ProbeFailed as exc:
        return False, str(exc)
    except socket.timeout:
        return False, "timed out after %s s waiting for an answer" % seconds_text(timeout)
    except ssl.SSLError as exc:
        return False, _tls_reason(exc)
    except OSError as exc:
        return False, _os_reason(exc)
    finally:
        if sock is not None:
            sock.close()


def check_cluster(servers, timeout, security_protocol="PLAINTEXT"):
    """Probe ``servers`` in order until one answers or ``timeout`` seconds are spent.

    A cluster answers when one bootstrap server answers, as clients bootstrap.  Each server gets
    an equal share of the time left, so a server that swallows packets cannot keep the ones
    after it from being asked.  Returns {reachable, answered (server or None), detail (the
    answer, or None), failures {server: reason}, seconds}.
    """
    if isinstance(servers, str):
        servers = [s.strip() for s in servers.split(",") if s.strip()]
    start = time.monotonic()
    deadline = start + timeout
    todo = list(dict.fromkeys(servers))
    answered = detail = None
    failures = {}
    for index, server in enumerate(todo):
        left = deadline - time.monotonic()
        if left <= 0:
            failures[server] = "not probed: the %s s were spent" % seconds_text(timeout)
            continue
        ok, text = probe(server, left / (len(todo) - index), security_protocol)
        if ok:
            answered, detail = server, text
            break
        failures[server] = text
    return {"reachable": answered is not None, "answered": answered, "detail": detail,
            "failures": failures, "seconds": round(time.monotonic() - start, 3)}
