# -*- coding: utf-8 -*-
"""plugins/module_utils/connect/rest.py: the REST client against connect_double (a TEST DOUBLE of
a Connect worker's REST API, for what a real one cannot be made to do on demand: 409s, 401, a
silent server) and the pure helpers. The client against a real worker: tests/live/test_connect_connector.py.
"""

from __future__ import annotations

import base64
import socket
import threading

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.connect import rest
from connect_double import ConnectDouble

CONFIG = {"connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector", "tasks.max": "1"}


@pytest.fixture
def double():
    the_double = ConnectDouble()
    yield the_double
    the_double.stop()


def client(url, **kwargs):
    kwargs.setdefault("sleep", lambda _seconds: None)
    return rest.ConnectClient(url, timeout=5, **kwargs)


@pytest.mark.parametrize("name, path", [
    ("A-to-B-MirrorSourceConnector", "/connectors/A-to-B-MirrorSourceConnector/config"),
    ("a b", "/connectors/a%20b/config"),
    ("a?b#c", "/connectors/a%3Fb%23c/config"),
    ("a+b:c;d", "/connectors/a%2Bb%3Ac%3Bd/config"),
    ("bé", "/connectors/b%C3%A9/config"),
])
def test_names_are_one_quoted_path_segment(name, path):
    assert rest.connector_path(name, "config") == path


@pytest.mark.parametrize("name, fault", [
    ("A-to-B-MirrorSourceConnector", None),
    ("a b?c#d", None),
    ("", "must not be empty"),
    ("  ", "must not be empty"),
    ("a/b", "refuses '/'"),
    ("a%b", "refuses '/'"),
    ("a\\b", "refuses '/'"),
    ("a\nb", "control characters"),
])
def test_name_fault(name, fault):
    found = rest.name_fault(name)
    if fault is None:
        assert found is None
    else:
        assert found.startswith("name: ") and fault in found


def test_connection_params_named_at_fault():
    params = dict(url="localhost:8083", timeout=0, url_username=None, url_password="x", client_cert=None,
                  client_key="/k.pem")
    errors = rest.check_connection_params(params)
    assert errors == [
        "url: 'localhost:8083' is not an http:// or https:// URL of a Connect worker (e.g. http://localhost:8083)",
        "timeout: 0 must be at least 1 (seconds)",
        "url_password: given without url_username",
        "client_key: given without client_cert",
    ]


def test_absent_is_none_and_create_then_update(double):
    c = client(double.url)
    assert c.get_config("x") is None and c.get_status("x") is None
    assert c.put_config("x", CONFIG) is True
    assert c.put_config("x", dict(CONFIG, **{"tasks.max": "2"})) is False
    assert c.get_config("x")["tasks.max"] == "2" and c.get_config("x")["name"] == "x"
    assert c.list_connectors() == ["x"]
    assert double.requests[2] == ("PUT", "/connectors/x/config", CONFIG)
    assert double.headers[2]["Content-Type"] == "application/json"
    # the collection's requests are told apart in the worker's request log
    assert double.headers[2]["User-Agent"] == rest.USER_AGENT


def test_task_ids_are_the_ids_of_the_task_configs_only(double):
    double.add("x", CONFIG, tasks=2)
    c = client(double.url)
    assert c.task_ids("x") == [0, 1] and c.task_ids("absent") is None
    c.stop("x")
    assert c.task_ids("x") == []


def test_state_requests_and_restart_query(double):
    double.add("x", CONFIG)
    c = client(double.url)
    c.pause("x")
    c.resume("x")
    c.stop("x")
    answered = c.restart("x")
    assert answered["connector"]["state"] == "RUNNING"
    assert c.delete("x") is True and c.delete("x") is False
    assert double.writes() == [("PUT", "/connectors/x/pause"), ("PUT", "/connectors/x/resume"),
                               ("PUT", "/connectors/x/stop"),
                               ("POST", "/connectors/x/restart?includeTasks=true&onlyFailed=false"),
                               ("DELETE", "/connectors/x"), ("DELETE", "/connectors/x")]


def test_http_error_carries_status_and_connects_message(double):
    with pytest.raises(rest.ConnectHTTPError) as caught:
        client(double.url).put_config("x", dict(CONFIG, name="y"))
    exc = caught.value
    assert exc.status == 400 and exc.method == "PUT" and exc.path == "/connectors/x/config"
    assert exc.message == "Connector name configuration (y) doesn't match connector name in the URL (x)"
    assert str(exc) == ("Kafka Connect at %s answered PUT /connectors/x/config with HTTP 400: Connector name "
                        "configuration (y) doesn't match connector name in the URL (x)" % double.url)


def test_409_is_retried_then_succeeds(double):
    double.conflicts = 2
    slept = []
    c = client(double.url, sleep=slept.append, conflict_delay=0.25)
    assert c.put_config("x", CONFIG) is True
    assert slept == [0.25, 0.25]
    assert [m for m, _p, _b in double.requests] == ["PUT", "PUT", "PUT"]
    assert c.conflicts == [("PUT", "/connectors/x/config", "Cannot complete request momentarily due to stale "
                            "configuration (typically caused by a concurrent config change)")] * 2


def test_409_retries_are_bounded(double):
    double.conflicts = 100
    c = client(double.url, conflict_retries=3)
    with pytest.raises(rest.ConnectHTTPError) as caught:
        c.get_config("x")
    assert caught.value.status == 409 and "stale configuration" in caught.value.message
    assert len(double.requests) == 4 and len(c.conflicts) == 3


def test_basic_auth_goes_with_the_first_request():
    double = ConnectDouble(credentials="ops:pa55")
    try:
        assert rest.ConnectClient(double.url, url_username="ops", url_password="pa55").get_config("x") is None
        assert len(double.requests) == 1
        assert double.headers[0]["Authorization"] == "Basic " + base64.b64encode(b"ops:pa55").decode()
        with pytest.raises(rest.ConnectHTTPError) as caught:
            rest.ConnectClient(double.url, url_username="ops", url_password="wrong").get_config("x")
        assert caught.value.status == 401
    finally:
        double.stop()


def free_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def test_refused_connection_is_unreachable_with_the_url():
    url = "http://127.0.0.1:%d" % free_port()
    with pytest.raises(rest.ConnectUnreachable) as caught:
        client(url).get_status("x")
    assert str(caught.value).startswith("cannot reach Kafka Connect at %s (GET /connectors/x/status): " % url)
    assert "refused" in caught.value.reason.lower()


def test_unknown_host_is_unreachable():
    with pytest.raises(rest.ConnectUnreachable) as caught:
        client("http://no-such-host.invalid:8083").list_connectors()
    assert "no-such-host.invalid" in str(caught.value)


def test_silent_server_times_out_as_unreachable():
    """A port that accepts the connection and never answers (a hung worker)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    accepted = []
    thread = threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True)
    thread.start()
    url = "http://127.0.0.1:%d" % server.getsockname()[1]
    try:
        with pytest.raises(rest.ConnectUnreachable) as caught:
            rest.ConnectClient(url, timeout=1).get_config("x")
        assert "timed out" in caught.value.reason
    finally:
        for conn, _addr in accepted:
            conn.close()
        server.close()


def test_https_to_a_plain_http_worker_is_unreachable(double):
    """TLS verification is on by default; a TLS failure is no HTTP answer."""
    with pytest.raises(rest.ConnectUnreachable) as caught:
        client(double.url.replace("http://", "https://")).get_config("x")
    assert "SSL" in caught.value.reason or "ssl" in caught.value.reason
