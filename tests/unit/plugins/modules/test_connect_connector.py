# -*- coding: utf-8 -*-
"""kafkaops.mirrormaker.connect_connector: the pure logic (normalisation, masking, diff, state
decisions, waiting, messages) directly, and the real module run as Ansible runs it (JSON arguments
in, JSON result out) against connect_double, a TEST DOUBLE of a Connect worker's REST API (not
Connect). The double is used for what a real worker cannot be made to show on demand: which
requests a run sent (check mode sends no write), 409s, 401, a task FAILED with a long trace.
Against a real Kafka Connect worker: tests/live/test_connect_connector.py.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.modules import connect_connector as cc
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.secrets import MASK

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
MODULE = os.path.join(REPO, "plugins", "modules", "connect_connector.py")
sys.path.insert(0, os.path.join(REPO, "tests", "unit", "plugins", "module_utils"))
from connect_double import WORKER, ConnectDouble  # noqa: E402

SECRET = "Tru5t-st0re!pw"
REFERENCE = "${file:/etc/kafka-connect/secrets/A-to-B.properties:source.cluster.ssl.truststore.password}"
SOURCE = "org.apache.kafka.connect.mirror.MirrorSourceConnector"


def base_config(**extra):
    config = {"connector.class": SOURCE, "source.cluster.alias": "A", "target.cluster.alias": "B",
              "source.cluster.bootstrap.servers": "a1:9092", "target.cluster.bootstrap.servers": "b1:9092",
              "tasks.max": "1", "topics": "orders,payments.*"}
    config.update(extra)
    return config


# ---------------------------------------------------------------------------- normalisation

@pytest.mark.parametrize("value, rendered", [
    (True, "true"),
    (False, "false"),
    (4, "4"),
    (0.5, "0.5"),
    (["orders", "payments.*"], "orders,payments.*"),
    ([1, True, "x"], "1,true,x"),
    (None, ""),
    ("as is", "as is"),
])
def test_values_render_as_connect_stores_them(value, rendered):
    assert cc.render_config({"k": value}) == ({"k": rendered}, [])


def test_a_nested_mapping_is_refused_naming_the_key():
    _rendered, errors = cc.render_config({"tasks.max": 1, "consumer": {"a": 1}})
    assert errors == ["config.consumer: nested mappings cannot be rendered as a property value "
                      "(Connect takes a string per key)"]


@pytest.mark.parametrize("desired, live, changed", [
    # Connect adds name: ignored unless given
    ({"a": "1"}, {"a": "1", "name": "x"}, []),
    ({"a": "1", "name": "x"}, {"a": "1", "name": "x"}, []),
    # a key only the live config has is removed by the PUT: a change
    ({"a": "1"}, {"a": "1", "b": "2", "name": "x"}, ["b"]),
    ({"a": "1", "b": "3"}, {"a": "1", "b": "2", "name": "x"}, ["b"]),
    ({"a": "1", "c": ""}, {"a": "1", "name": "x"}, ["c"]),
])
def test_changed_keys_ignore_the_added_name(desired, live, changed):
    assert cc.changed_keys(cc.comparable(live, desired), desired) == changed


def test_rendered_values_compare_equal_to_connects_strings():
    desired, _unused = cc.render_config({"tasks.max": 1, "sync.topic.acls.enabled": False, "topics": ["a", "b"]})
    live = {"tasks.max": "1", "sync.topic.acls.enabled": "false", "topics": "a,b", "name": "x"}
    assert cc.changed_keys(cc.comparable(live, desired), desired) == []


# --------------------------------------------------------------------------------- masking

def test_masked_hides_secret_keys_and_values_but_not_references():
    config = {"source.cluster.ssl.truststore.password": SECRET,
              "target.cluster.ssl.truststore.password": REFERENCE,
              "source.cluster.sasl.jaas.config": 'x.PlainLoginModule required username="u" password="%s";' % SECRET,
              "source.cluster.ssl.truststore.location": "/etc/pki/trust.jks",
              "tasks.max": "1"}
    shown, raw = cc.masked(config)
    assert shown == {"source.cluster.ssl.truststore.password": MASK,
                     "target.cluster.ssl.truststore.password": REFERENCE,
                     "source.cluster.sasl.jaas.config": MASK,
                     "source.cluster.ssl.truststore.location": "/etc/pki/trust.jks",
                     "tasks.max": "1"}
    assert SECRET in raw and REFERENCE not in raw and config["source.cluster.sasl.jaas.config"] in raw


def test_diff_marks_a_changed_secret_and_shows_nothing_of_it():
    before = base_config(**{"source.cluster.ssl.truststore.password": "old-" + SECRET, "tasks.max": "1"})
    after = base_config(**{"source.cluster.ssl.truststore.password": SECRET, "tasks.max": "2"})
    diff = cc.config_diff(before, after)
    assert diff["before"]["source.cluster.ssl.truststore.password"] == MASK
    assert diff["after"]["source.cluster.ssl.truststore.password"] == MASK + " (changed)"
    assert (diff["before"]["tasks.max"], diff["after"]["tasks.max"]) == ("1", "2")
    assert SECRET not in json.dumps(diff)


def test_diff_of_an_unchanged_secret_is_equal_on_both_sides():
    config = base_config(**{"source.cluster.ssl.truststore.password": SECRET})
    diff = cc.config_diff(config, dict(config))
    assert diff["before"] == diff["after"]


def test_diff_of_a_secret_becoming_a_reference_shows_the_reference():
    diff = cc.config_diff(base_config(**{"source.cluster.ssl.truststore.password": SECRET}),
                          base_config(**{"source.cluster.ssl.truststore.password": REFERENCE}))
    assert diff["before"]["source.cluster.ssl.truststore.password"] == MASK
    assert diff["after"]["source.cluster.ssl.truststore.password"] == REFERENCE


# ---------------------------------------------------------------------------------- states

@pytest.mark.parametrize("state, live_state, created, action", [
    ("paused", "RUNNING", False, "pause"),
    ("paused", "PAUSED", False, None),
    ("paused", "STOPPED", False, "pause"),
    ("paused", "FAILED", False, "pause"),
    ("stopped", "RUNNING", False, "stop"),
    ("stopped", "PAUSED", False, "stop"),
    ("stopped", "STOPPED", False, None),
    ("running", "PAUSED", False, "resume"),
    ("running", "STOPPED", False, "resume"),
    ("running", "RUNNING", False, None),
    ("running", "FAILED", False, None),  # a failure is reported by wait, restarted restarts
    ("running", None, True, None),
    ("present", "PAUSED", False, None),
    ("present", "STOPPED", False, None),
    ("present", None, True, None),
    ("restarted", "RUNNING", False, "restart"),
    ("restarted", "FAILED", False, "restart"),
    ("restarted", None, True, None),  # just created: it just started
])
def test_state_action(state, live_state, created, action):
    assert cc.state_action(state, live_state, created) == action


def status(connector, *tasks, trace=None):
    entry = {"state": connector, "worker_id": WORKER}
    if trace:
        entry["trace"] = trace
    return {"name": "x", "connector": entry, "type": "source",
            "tasks": [dict({"id": i, "state": t, "worker_id": "w%d:8083" % i}) for i, t in enumerate(tasks)]}


@pytest.mark.parametrize("state, current, target", [
    ("paused", "RUNNING", "PAUSED"),
    ("stopped", "RUNNING", "STOPPED"),
    ("running", "PAUSED", "RUNNING"),
    ("present", "RUNNING", "RUNNING"),
    ("present", "PAUSED", "PAUSED"),
    ("present", "STOPPED", "STOPPED"),
    ("present", "UNASSIGNED", "RUNNING"),
    ("restarted", "RESTARTING", "RUNNING"),
])
def test_target_state(state, current, target):
    assert cc.target_state(state, status(current)) == target


@pytest.mark.parametrize("the_status, target, verdict", [
    (None, "RUNNING", "waiting"),
    (status("RUNNING"), "RUNNING", "done"),  # no tasks: a MirrorSourceConnector without topics yet
    (status("RUNNING", "RUNNING", "RUNNING"), "RUNNING", "done"),
    (status("RUNNING", "RUNNING", "UNASSIGNED"), "RUNNING", "waiting"),
    (status("RESTARTING", "RESTARTING"), "RUNNING", "waiting"),
    (status("RUNNING", "RUNNING", "FAILED"), "RUNNING", "failed"),
    (status("FAILED"), "RUNNING", "failed"),
    (status("PAUSED", "PAUSED"), "PAUSED", "done"),
    (status("PAUSED", "RUNNING"), "PAUSED", "waiting"),
    (status("PAUSED", "FAILED"), "PAUSED", "failed"),
])
def test_assess(the_status, target, verdict):
    assert cc.assess(the_status, target) == verdict


@pytest.mark.parametrize("the_status, task_ids, drained, verdict", [
    (status("STOPPED"), [], False, "done"),
    (status("STOPPED"), None, False, "waiting"),  # task configs not read
    (status("STOPPED"), [0], False, "waiting"),  # task configs not emptied yet
    (status("STOPPED", "RUNNING"), [], False, "waiting"),  # a task being stopped
    (status("STOPPED", "RUNNING"), [], True, "stale"),  # listed past the drain: a late status write
    (status("STOPPED", "RUNNING"), [0], True, "waiting"),
    (status("STOPPED", "FAILED"), [], True, "failed"),
    (status("RUNNING", "RUNNING"), [], True, "waiting"),
])
def test_assess_stopped(the_status, task_ids, drained, verdict):
    assert cc.assess(the_status, "STOPPED", task_ids, drained) == verdict


def test_stale_message_names_the_tasks_and_the_drain():
    message = cc.stale_message("x", status("STOPPED", "RUNNING", "RUNNING"))
    assert message.startswith("connector 'x' is STOPPED and has no task configs, but Connect's status still "
                              "lists tasks 0, 1 after 10s")


def test_failure_message_names_task_worker_and_keeps_40_trace_lines():
    trace = "\n".join(["org.apache.kafka.common.config.ConfigException: Invalid value bogus"]
                      + ["\tat frame%d" % i for i in range(59)])
    the_status = status("RUNNING", "RUNNING", "FAILED")
    the_status["tasks"][1]["trace"] = trace
    message = cc.failure_message("A-to-B-MirrorSourceConnector", the_status)
    lines = message.splitlines()
    assert lines[0] == "connector 'A-to-B-MirrorSourceConnector': task 1 FAILED on worker w1:8083"
    assert lines[1] == "org.apache.kafka.common.config.ConfigException: Invalid value bogus"
    assert lines[1:41] == trace.splitlines()[:40]
    assert lines[41] == "... (20 more lines in the returned status)"
    assert len(lines) == 42


def test_failure_message_of_a_failed_connector():
    message = cc.failure_message("x", status("FAILED", trace="java.util.regex.PatternSyntaxException: Unclosed group"))
    assert message == ("connector 'x': connector FAILED on worker %s\n"
                       "java.util.regex.PatternSyntaxException: Unclosed group" % WORKER)


def test_summary():
    assert cc.summary(None) == "no status"
    assert cc.summary(status("RUNNING")) == "connector RUNNING, no tasks"
    assert cc.summary(status("RUNNING", "RUNNING", "UNASSIGNED")) == "connector RUNNING, task 0 RUNNING, task 1 UNASSIGNED"


# ---------------------------------------------------------------------------------- waiting

class Clock(object):
    """A fake clock: sleeping advances it."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


class Statuses(object):
    """get_status answers from a list, the last one repeated."""

    def __init__(self, clock, *answers):
        self.clock, self.answers, self.reads = clock, list(answers), []

    def get_status(self, _name):
        self.reads.append(self.clock.now)
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]

    def task_ids(self, _name):
        return []  # a stopped connector's, as Connect empties them before it reads STOPPED


def test_wait_without_a_write_takes_the_first_status():
    clock = Clock()
    client = Statuses(clock, status("RUNNING", "FAILED"))
    verdict, _status, seen = cc.wait_for(client, "x", "present", 120, None, clock, clock.sleep)
    assert verdict == "failed" and seen == ["connector RUNNING, task 0 FAILED"] and len(client.reads) == 1


def test_after_a_write_stale_states_are_not_trusted_until_settled():
    """Right after a config fix the old FAILED still shows; and a RUNNING read at once may be the old one."""
    clock = Clock()
    client = Statuses(clock, status("RUNNING", "FAILED"), status("RUNNING", "RUNNING"))
    verdict, _status, seen = cc.wait_for(client, "x", "present", 120, clock.now, clock, clock.sleep)
    assert verdict == "done"
    assert seen == ["connector RUNNING, task 0 FAILED", "connector RUNNING, task 0 RUNNING"]
    assert client.reads[-1] >= 1000.0 + cc.SETTLE_SECONDS


def test_a_task_failing_after_the_write_is_caught():
    clock = Clock()
    client = Statuses(clock, None, status("RUNNING"), status("RUNNING", "FAILED"))
    verdict, the_status, _seen = cc.wait_for(client, "x", "present", 120, clock.now, clock, clock.sleep)
    assert verdict == "failed" and the_status["tasks"][0]["state"] == "FAILED"


def test_wait_times_out_with_the_states_seen():
    clock = Clock()
    client = Statuses(clock, None, status("RUNNING", "UNASSIGNED"))
    verdict, _status, seen = cc.wait_for(client, "x", "running", 10, clock.now, clock, clock.sleep)
    assert verdict == "timeout" and seen == ["no status", "connector RUNNING, task 0 UNASSIGNED"]
    assert 1010.0 <= clock.now <= 1010.0 + cc.POLL_SECONDS


def test_stopped_waits_out_a_task_being_stopped():
    clock = Clock()
    client = Statuses(clock, status("RUNNING", "RUNNING"), status("STOPPED", "RUNNING"), status("STOPPED", "RUNNING"),
                      status("STOPPED"))
    verdict, _status, seen = cc.wait_for(client, "x", "stopped", 120, clock.now, clock, clock.sleep)
    assert verdict == "done" and seen[-1] == "connector STOPPED, no tasks"


def test_stopped_takes_a_task_listed_past_the_drain_as_stale():
    """Seen under load: the status went to no tasks, then a task's RUNNING came back and stayed."""
    clock = Clock()
    client = Statuses(clock, status("STOPPED", "RUNNING"), status("STOPPED"), status("STOPPED", "RUNNING"))
    verdict, _status, seen = cc.wait_for(client, "x", "stopped", 120, clock.now, clock, clock.sleep)
    assert verdict == "stale"
    assert seen == ["connector STOPPED, task 0 RUNNING", "connector STOPPED, no tasks", "connector STOPPED, task 0 RUNNING"]
    # the drain counts from the first read that showed STOPPED with no task configs
    assert cc.STOP_DRAIN_SECONDS <= clock.now - 1000.0 <= cc.STOP_DRAIN_SECONDS + cc.POLL_SECONDS


# -------------------------------------------------------------------------- parameter errors

def params(**kwargs):
    base = dict(url="http://localhost:8083", url_username=None, url_password=None, validate_certs=True,
                ca_path=None, client_cert=None, client_key=None, timeout=30, name="x", config=None,
                state="present", wait=True, wait_timeout=120, offsets=None)
    base.update(kwargs)
    return base


def test_check_params_names_each_fault():
    errors = cc.check_params(params(name="a/b", config={"name": "y", "nested": {"a": 1}}, wait_timeout=0))
    assert errors[0].startswith("name: 'a/b' cannot be a connector name")
    assert errors[1] == ("config.name: 'y' differs from name 'a/b'; Connect refuses a config that names another "
                         "connector (leave it out: Connect adds it)")
    assert errors[2].startswith("config.nested: nested mappings")
    assert errors[3] == "wait_timeout: 0 must be at least 1 (seconds)"
    assert cc.check_params(params(config={"name": "x"})) == []
    assert cc.check_params(params(state="absent", config={"name": "y"})) == []


P0 = {"cluster": "B", "topic": "orders", "partition": 0}
P1 = {"cluster": "B", "topic": "orders", "partition": 1}


@pytest.mark.parametrize("live, desired, differ", [
    ([], [{"partition": P0, "offset": {"offset": 4}}], True),
    ([{"partition": P0, "offset": {"offset": 4}}], [{"partition": P0, "offset": {"offset": 4}}], False),
    # partitions compare as mappings, whatever the key order; unlisted partitions are not compared
    ([{"partition": {"partition": 0, "topic": "orders", "cluster": "B"}, "offset": {"offset": 4}},
      {"partition": P1, "offset": {"offset": 9}}], [{"partition": P0, "offset": {"offset": 4}}], False),
    ([{"partition": P0, "offset": {"offset": 3}}], [{"partition": P0, "offset": {"offset": 4}}], True),
    # null: no offset, as a partition never committed
    ([], [{"partition": P0, "offset": None}], False),
    ([{"partition": P0, "offset": {"offset": 3}}], [{"partition": P0, "offset": None}], True),
])
def test_offsets_differ_only_on_the_listed_partitions(live, desired, differ):
    assert cc.offsets_differ(live, desired) is differ


@pytest.mark.parametrize("offsets, state, errors", [
    ([{"partition": P0, "offset": {"offset": 1}}], "running", []),
    ([{"partition": P0, "offset": None}], "stopped", []),
    ([{"partition": P0, "offset": None}], "present",
     ["offsets: needs state running, paused or stopped, the state the connector is left in once its offsets are set "
      "(state is present)"]),
    ([{"partition": P0}, {"partition": {}, "offset": 3}], "running",
     ["offsets[0]: needs exactly the keys partition and offset (has partition)",
      "offsets[1].partition: must be a non-empty mapping (the source partition)",
      "offsets[1].offset: must be a mapping (the source offset) or null (no offset)"]),
])
def test_offsets_input_is_refused_naming_the_entry(offsets, state, errors):
    assert cc.check_params(params(config={"a": 1}, offsets=offsets, state=state)) == errors


def http_error(method, path, status, message="m"):
    return cc.connect_rest.ConnectHTTPError("http://w:8083", method, path, status, message)


@pytest.mark.parametrize("error, message", [
    (http_error("GET", "/connectors/x/config", 401, "Credentials missing"),
     "url_username/url_password: Kafka Connect at http://w:8083 refused GET /connectors/x/config with HTTP 401: "
     "Credentials missing"),
    (http_error("PUT", "/connectors/x/config", 400, "Connector configuration is invalid"),
     "config: Kafka Connect at http://w:8083 refused the configuration of connector 'x' (HTTP 400): "
     "Connector configuration is invalid"),
    (http_error("PUT", "/connectors/x/stop", 404, "HTTP 404 Not Found"),
     "state: stopped needs Kafka Connect 3.5 or later (KIP-875, PUT /connectors/<name>/stop); Kafka Connect at "
     "http://w:8083 answered PUT /connectors/x/stop with HTTP 404: HTTP 404 Not Found"),
    (http_error("PUT", "/connectors/x/pause", 409, "rebalance"),
     "Kafka Connect at http://w:8083 answered PUT /connectors/x/pause with HTTP 409: rebalance (still 409, a "
     "rebalance, after every retry)"),
    (http_error("PUT", "/connectors/x/pause", 500, "Request timed out"),
     "Kafka Connect at http://w:8083 answered PUT /connectors/x/pause with HTTP 500: Request timed out"),
])
def test_http_error_messages_name_what_to_change(error, message):
    assert cc.http_error_message(error, params()) == message


def test_an_unverifiable_certificate_points_at_ca_path():
    error = cc.connect_rest.ConnectUnreachable(
        "https://w:8443", "GET", "/connectors/x/config",
        "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate (_ssl.c:1006)")
    assert cc.unreachable_message(error) == (
        "url: cannot reach Kafka Connect at https://w:8443 (GET /connectors/x/config): [SSL: CERTIFICATE_VERIFY_FAILED] "
        "certificate verify failed: self-signed certificate (_ssl.c:1006) (give ca_path the CA that signed the "
        "worker's certificate)")


# ---------------------------------------------------------------- the module against the double

@pytest.fixture
def double():
    the_double = ConnectDouble()
    yield the_double
    the_double.stop()


def run(tmp_path, url, check=False, diff=True, verbosity=0, **module_params):
    """Run the module as Ansible does; returns (result, raw stdout)."""
    module_params.setdefault("url", url)
    module_params.setdefault("wait", False)
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": dict(module_params, _ansible_check_mode=check,
                                                            _ansible_diff=diff, _ansible_verbosity=verbosity)}))
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, ".collections"))
    proc = subprocess.run([sys.executable, MODULE, str(args)], capture_output=True, text=True, check=False,
                          env=env, timeout=120)
    assert proc.stdout, proc.stderr
    return json.loads(proc.stdout), proc.stdout


def test_create_then_no_op(tmp_path, double):
    config = base_config(**{"tasks.max": 1, "sync.topic.acls.enabled": False})
    result, _unused = run(tmp_path, double.url, name="x", config=config)
    assert result["changed"] and result["actions"] == ["create"], result
    assert double.writes() == [("PUT", "/connectors/x/config")]
    assert double.requests[1][2] == cc.render_config(config)[0]  # strings, no name added
    assert "name" not in double.requests[1][2]
    assert result["connector"] == {"name": "x", "exists": True, "config": dict(cc.render_config(config)[0], name="x")}
    assert result["diff"]["before"] == {} and result["diff"]["after"]["tasks.max"] == "1"

    again, _unused = run(tmp_path, double.url, name="x", config=config)
    assert not again["changed"] and again["actions"] == [], again
    assert len(double.writes()) == 1


@pytest.mark.parametrize("state, live_state, actions", [
    ("present", "RUNNING", ["update config"]),
    ("paused", "RUNNING", ["update config", "pause"]),
    ("stopped", "PAUSED", ["update config", "stop"]),
    ("running", "STOPPED", ["update config", "resume"]),
    ("restarted", "RUNNING", ["update config", "restart"]),
    ("absent", "RUNNING", ["delete"]),
])
def test_check_mode_sends_no_write_and_reports_what_a_run_would(tmp_path, double, state, live_state, actions):
    double.add("x", base_config(), state=live_state)
    wanted = base_config(**{"tasks.max": 2})
    checked, _unused = run(tmp_path, double.url, check=True, name="x", config=wanted, state=state)
    assert double.writes() == [], double.requests
    assert checked["changed"] and checked["actions"] == actions, checked
    assert checked["connector"]["config"]["tasks.max"] == "1"  # as it is: nothing was written

    real, _unused = run(tmp_path, double.url, name="x", config=wanted, state=state)
    assert real["changed"] and real["actions"] == actions
    assert real["diff"] == checked["diff"]
    assert len(double.writes()) == len(actions)


def test_check_mode_without_a_change_is_unchanged(tmp_path, double):
    double.add("x", base_config(), state="PAUSED")
    result, _unused = run(tmp_path, double.url, check=True, name="x", config=base_config(), state="paused")
    assert not result["changed"] and result["diff"]["before"] == result["diff"]["after"]


def test_secrets_never_in_the_output_references_shown(tmp_path, double):
    double.add("x", base_config(**{"source.cluster.ssl.truststore.password": "live-" + SECRET}))
    config = base_config(**{"source.cluster.ssl.truststore.password": SECRET,
                            "target.cluster.ssl.truststore.password": REFERENCE})
    for check in (True, False):
        result, stdout = run(tmp_path, double.url, check=check, verbosity=3, name="x", config=config)
        assert SECRET not in stdout, stdout
        assert result["diff"]["before"]["source.cluster.ssl.truststore.password"] == MASK
        assert result["diff"]["after"]["source.cluster.ssl.truststore.password"] == MASK + " (changed)"
        assert result["diff"]["after"]["target.cluster.ssl.truststore.password"] == REFERENCE
        # the invocation (shown with -vvv) is scrubbed too, as Ansible scrubs a no_log value
        assert (result["invocation"]["module_args"]["config"]["source.cluster.ssl.truststore.password"]
                == "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER")
    assert result["connector"]["config"]["target.cluster.ssl.truststore.password"] == REFERENCE
    assert double.connectors["x"]["config"]["source.cluster.ssl.truststore.password"] == SECRET


def test_states_without_config_act_on_the_connector_as_it_is(tmp_path, double):
    double.add("x", base_config(), tasks=2)
    result, _unused = run(tmp_path, double.url, name="x", state="paused")
    assert result["actions"] == ["pause"] and double.connectors["x"]["state"] == "PAUSED"
    result, _unused = run(tmp_path, double.url, name="x", state="paused")
    assert result["actions"] == []
    result, _unused = run(tmp_path, double.url, name="x", state="running")
    assert result["actions"] == ["resume"] and result["status"]["connector"]["state"] == "RUNNING"
    assert double.connectors["x"]["config"] == dict(base_config(), name="x")


def test_absent_twice_and_other_connectors_untouched(tmp_path, double):
    double.add("x", base_config())
    double.add("other", base_config())
    first, _unused = run(tmp_path, double.url, name="x", state="absent", wait=True)
    second, _unused = run(tmp_path, double.url, name="x", state="absent")
    assert first["changed"] and first["actions"] == ["delete"] and not first["connector"]["exists"]
    assert not second["changed"] and second["actions"] == []
    assert double.writes() == [("DELETE", "/connectors/x")]
    assert "other" in double.connectors
    assert ("GET", "/connectors", None) not in double.requests  # never lists


def test_missing_connector_without_config_fails_naming_config(tmp_path, double):
    result, _unused = run(tmp_path, double.url, name="x", state="running")
    assert result["failed"]
    assert result["msg"] == "config: connector 'x' does not exist on %s; its config is needed to create it" % double.url


def test_failed_task_fails_at_once_with_its_trace(tmp_path, double):
    trace = "\n".join(["org.apache.kafka.common.config.ConfigException: Invalid value bogus for configuration "
                       "auto.offset.reset"] + ["\tat frame%d" % i for i in range(99)])
    double.add("x", base_config(), tasks=2)
    double.connectors["x"]["tasks"][1].update(state="FAILED", trace=trace)
    result, _unused = run(tmp_path, double.url, name="x", config=base_config(), wait=True, wait_timeout=60)
    assert result["failed"] and not result["changed"]
    lines = result["msg"].splitlines()
    assert lines[0] == "connector 'x': task 1 FAILED on worker %s" % WORKER
    assert lines[1].startswith("org.apache.kafka.common.config.ConfigException: Invalid value bogus")
    assert lines[-1] == "... (60 more lines in the returned status)"
    assert result["status"]["tasks"][1]["trace"] == trace


def test_a_secret_only_the_live_config_holds_is_scrubbed_from_a_trace(tmp_path, double):
    """Kafka's ConfigException quotes the value it refuses; the play gave no config to learn the secret from."""
    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="mm2" password="%s";' % SECRET
    double.add("x", base_config(**{"source.cluster.sasl.jaas.config": jaas}))
    double.connectors["x"]["tasks"][0].update(state="FAILED", trace="org.apache.kafka.common.config.ConfigException: "
                                              "Invalid value %s for configuration sasl.jaas.config" % jaas)
    result, stdout = run(tmp_path, double.url, name="x", state="running", wait=True)
    assert result["failed"] and "ConfigException: Invalid value" in result["msg"]
    assert SECRET not in stdout


def test_409_retried_and_reported(tmp_path, double):
    double.conflicts = 1
    result, _unused = run(tmp_path, double.url, name="x", config=base_config())
    assert result["changed"] and not result.get("failed"), result
    assert result["conflicts"] == ["GET /connectors/x/config: Cannot complete request momentarily due to stale "
                                   "configuration (typically caused by a concurrent config change)"]


def test_refused_credentials_name_the_credential_options(tmp_path):
    double = ConnectDouble(credentials="ops:right")
    try:
        result, stdout = run(tmp_path, double.url, name="x", url_username="ops", url_password="wrong-pass")
    finally:
        double.stop()
    assert result["failed"] and result["status_code"] == 401
    assert result["msg"].startswith("url_username/url_password: Kafka Connect at %s refused GET /connectors/x/config "
                                    "with HTTP 401" % double.url)
    assert "wrong-pass" not in stdout


def test_refused_config_names_config(tmp_path, double):
    result, _unused = run(tmp_path, double.url, name="x", config={"tasks.max": 1})
    assert result["failed"]
    assert result["msg"].startswith("config: Kafka Connect at %s refused the configuration of connector 'x' (HTTP 400): "
                                    % double.url)


def test_unreachable_worker_names_url(tmp_path):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = "http://127.0.0.1:%d" % sock.getsockname()[1]
    sock.close()
    result, _unused = run(tmp_path, url, name="x", config=base_config())
    assert result["failed"]
    assert result["msg"].startswith("url: cannot reach Kafka Connect at %s (GET /connectors/x/config): " % url)
    assert "Connection refused" in result["msg"]


def test_bad_parameters_fail_before_any_request_secrets_scrubbed(tmp_path, double):
    config = base_config(name="y", **{"source.cluster.ssl.truststore.password": SECRET})
    result, stdout = run(tmp_path, double.url, name="x", config=config, verbosity=3)
    assert result["failed"] and result["msg"].startswith("config.name: 'y' differs from name 'x'")
    assert double.requests == []
    assert SECRET not in stdout


def test_names_are_quoted_in_every_request(tmp_path, double):
    run(tmp_path, double.url, name="a b?c#d", config=base_config(), state="paused")
    run(tmp_path, double.url, name="a b?c#d", config=base_config(), state="running")
    assert {p for _m, p, _b in double.requests} == {"/connectors"} | {
        "/connectors/a%20b%3Fc%23d/" + end for end in ("config", "resume", "status")}
    # created paused (KIP-980): the name travels in the body
    assert [b["name"] for m, _p, b in double.requests if m == "POST"] == ["a b?c#d"]
    assert "a b?c#d" in double.connectors


@pytest.mark.parametrize("state, initial", [("paused", "PAUSED"), ("stopped", "STOPPED")])
def test_a_connector_asked_paused_or_stopped_is_created_so_and_never_runs(tmp_path, double, state, initial):
    result, _unused = run(tmp_path, double.url, name="x", config=base_config(), state=state)
    assert result["actions"] == ["create"], result
    assert double.writes() == [("POST", "/connectors")]
    assert double.connectors["x"]["state"] == initial


def test_offsets_create_the_connector_stopped_then_set_and_run(tmp_path, double):
    offsets = [{"partition": P0, "offset": {"offset": 4}}]
    result, _unused = run(tmp_path, double.url, name="x", config=base_config(), offsets=offsets, state="running",
                          check=True)
    assert result["changed"] and result["actions"] == ["create", "alter offsets", "resume"], result
    assert double.writes() == []  # check mode: reads only
    result, _unused = run(tmp_path, double.url, name="x", config=base_config(), offsets=offsets, state="running")
    assert result["actions"] == ["create", "alter offsets", "resume"], result
    assert double.writes() == [("POST", "/connectors"), ("PATCH", "/connectors/x/offsets"), ("PUT", "/connectors/x/resume")]
    (created,) = [body for method, _path, body in double.requests if method == "POST"]
    assert created["initial_state"] == "STOPPED" and created["name"] == "x"
    assert result["offsets"] == offsets
    assert result["diff"][1]["before"] == "[]\n"
    again, _unused = run(tmp_path, double.url, name="x", config=base_config(), offsets=offsets, state="running")
    assert not again["changed"], again


def test_offsets_are_set_on_a_stopped_connector_and_never_on_a_running_one(tmp_path, double):
    double.add("x", base_config())
    double.connectors["x"]["offsets"] = [{"partition": P0, "offset": {"offset": 9}}]
    offsets = [{"partition": P0, "offset": {"offset": 7}}]
    # running: its offsets move as it copies, a re-run must not rewind it
    result, _unused = run(tmp_path, double.url, name="x", config=base_config(), offsets=offsets, state="running")
    assert not result["changed"] and double.writes() == [], result
    double.connectors["x"].update(state="STOPPED", tasks=[])
    result, _unused = run(tmp_path, double.url, name="x", config=base_config(), offsets=offsets, state="running")
    assert result["actions"] == ["alter offsets", "resume"], result
    assert double.connectors["x"]["offsets"] == offsets
