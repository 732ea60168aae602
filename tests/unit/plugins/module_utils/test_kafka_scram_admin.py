# -*- coding: utf-8 -*-
"""Unit tests for plugins/module_utils/kafka/scram_admin.py: the plan, the requests it takes, the
messages; and the Admin API's relaxation of kafka_scram's rules.  The calls run against
scram_admin_double, a TEST DOUBLE of kafka-python's two SCRAM calls."""

from __future__ import annotations

import pytest
from kafka import admin as kafka_admin

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import scram as kafka_scram
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import scram_admin as ksa

from scram_admin_double import ScramAdminDouble

S512 = "SCRAM-SHA-512"
S256 = "SCRAM-SHA-256"
C = ksa.Credential


def wanted(*items):
    found, errors = ksa.normalise(list(items))
    assert errors == []
    return found


def test_a_comma_or_nul_is_refused_on_the_command_line_only():
    users = [{"name": "a,b", "password": "c,d"}, {"name": "e\0", "password": "f\0"}]
    assert len(kafka_scram.scram_user_faults(users)) == 4
    assert kafka_scram.scram_user_faults(users, "users", command_line=False) == []


def test_normalise_takes_defaults_and_needs_no_password_to_delete():
    found = wanted({"name": "mm2", "password": "pw-long-1"}, {"name": "old", "state": "absent"})
    assert [(w.name, w.mechanism, w.iterations, w.state) for w in found] == [
        ("mm2", S512, 4096, "present"), ("old", S512, 4096, "absent")]


@pytest.mark.parametrize("users, errors", [
    ("mm2", ["users: must be a list of {name, password, mechanism, iterations, state}, not str"]),
    ([], ["users: must list at least one user"]),
    (["mm2"], ["users[0]: must be a mapping {name, password, mechanism}, got str"]),
    ([{"name": "mm2", "password": "pw-long-1", "passwd": "x"}],
     ["users[0].passwd: not a key of a user (it takes name, password, mechanism, iterations, state)"]),
    ([{"name": "mm2", "state": "present"}], ["users[0].password: empty (SCRAM password empty for user 'mm2')"]),
])
def test_normalise_names_each_fault(users, errors):
    assert ksa.normalise(users) == ([], errors)


def test_the_password_is_not_in_repr():
    assert "pw-long-1" not in repr(wanted({"name": "mm2", "password": "pw-long-1"}))


def test_plan_adds_updates_and_removes_only_what_is_needed():
    existing = [C("same", S512, 4096), C("slow", S512, 4096), C("gone", S256, 4096), C("keep", S512, 4096)]
    asked = wanted({"name": "same", "password": "pw-long-1"},
                   {"name": "slow", "password": "pw-long-1", "iterations": 8192},
                   {"name": "new", "password": "pw-long-1"}, {"name": "gone", "mechanism": S256, "state": "absent"},
                   {"name": "never", "state": "absent"}, {"name": "keep", "mechanism": S256, "state": "absent"})
    assert ksa.plan(asked, existing) == [
        ksa.Change("remove", "gone", S256, 4096, 4096), ksa.Change("add", "new", S512, 4096, None),
        ksa.Change("update", "slow", S512, 8192, 4096)]
    assert [c.name for c in ksa.plan(asked, existing, "always")] == ["gone", "new", "same", "slow"]


def test_only_a_present_credential_with_the_iterations_asked_for_needs_a_login():
    existing = [C("same", S512, 4096), C("slow", S512, 4096), C("gone", S512, 4096)]
    asked = wanted({"name": "same", "password": "pw-long-1"}, {"name": "slow", "password": "pw-long-1", "iterations": 8192},
                   {"name": "new", "password": "pw-long-1"}, {"name": "gone", "state": "absent"})
    assert [w.name for w in ksa.unproven(asked, existing)] == ["same"]
    assert ksa.plan(asked, existing, "when_refused") == ksa.plan(asked, existing)
    assert ksa.Change("update", "same", S512, 4096, 4096) in ksa.plan(asked, existing, "when_refused",
                                                                      [("same", S512)])


REFUSED = ("Bootstrap connection to bootstrap-0 failed: [Error 58] SaslAuthenticationFailedError: "
           "SaslAuthenticationFailedError: Authentication failed during authentication due to invalid credentials")
DISCONNECTED = "KafkaConnectionError: socket disconnected"


@pytest.mark.parametrize("answers, found, unanswered", [
    ({"a": None, "b": None}, [], None),
    ({"a": [REFUSED], "b": None}, [("a", S512)], None),
    ({"a": [DISCONNECTED, REFUSED], "b": [REFUSED]}, [("a", S512), ("b", S512)], None),
    ({"a": None, "b": [DISCONNECTED]}, None, (1, DISCONNECTED)),
    ({"a": [], "b": None}, None, (0, None)),
])
def test_a_password_is_set_again_only_on_a_refusal_seen(answers, found, unanswered):
    asked = wanted({"name": "a", "password": "pw-long-1"}, {"name": "b", "password": "pw-long-2"})
    if unanswered is None:
        assert ksa.refused(asked, asked, lambda w: answers[w.name]) == found
        return
    with pytest.raises(ksa.LoginUnanswered) as raised:
        ksa.refused(asked, asked, lambda w: answers[w.name])
    assert (raised.value.index, raised.value.reason) == unanswered


def test_a_login_whose_answer_was_not_read_is_tried_again_until_the_retries_end():
    from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.client import Retry
    asked = wanted({"name": "a", "password": "pw-long-1"})
    now = [0.0]
    retry = Retry(5, pause=1, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    answers = iter([[DISCONNECTED], [DISCONNECTED], [REFUSED]])
    assert ksa.refused(asked, asked, lambda w: next(answers), retry) == [("a", S512)]
    start = now[0]
    with pytest.raises(ksa.LoginUnanswered) as raised:
        ksa.refused(asked, asked, lambda w: [DISCONNECTED], retry)
    # tried again every second until the next pause would pass the 5 s
    assert raised.value.reason == DISCONNECTED and now[0] - start == 4


def test_a_login_keeps_the_transport_and_replaces_the_callers_sasl():
    kwargs = {"security_protocol": "SASL_SSL", "ssl_cafile": "/ca.pem", "sasl_mechanism": "GSSAPI",
              "sasl_kerberos_service_name": "kafka"}
    item = wanted({"name": "mm2", "password": "pw-long-1", "mechanism": S256})[0]
    assert ksa.login_kwargs(kwargs, item) == {
        "security_protocol": "SASL_SSL", "ssl_cafile": "/ca.pem", "sasl_mechanism": S256,
        "sasl_plain_username": "mm2", "sasl_plain_password": "pw-long-1"}


@pytest.mark.parametrize("update_password, protocol, faulty", [
    ("when_refused", "SASL_PLAINTEXT", False), ("when_refused", "SASL_SSL", False),
    ("when_refused", None, True), ("when_refused", "SSL", True), ("always", "SSL", False), ("on_create", None, False),
])
def test_when_refused_needs_a_sasl_connection(update_password, protocol, faulty):
    assert bool(ksa.when_refused_errors(update_password, protocol)) is faulty


def test_rounds_alter_each_user_once_per_request():
    changes = [ksa.Change("add", "a", S256, 4096, None), ksa.Change("add", "a", S512, 4096, None),
               ksa.Change("remove", "b", S512, 4096, 4096)]
    assert ksa.rounds(changes) == [[changes[0], changes[2]], [changes[1]]]
    assert ksa.rounds([]) == []


def test_write_sets_the_passwords_and_stops_at_a_refusal():
    admin = ScramAdminDouble({("b", S512): 4096})
    asked = wanted({"name": "a", "password": "pw-a-256", "mechanism": S256},
                   {"name": "a", "password": "pw-a-512", "iterations": 8192}, {"name": "b", "state": "absent"})
    changes = ksa.plan(asked, ksa.read(admin, ["a", "b"]))
    assert sorted(ksa.write(admin, changes, asked, kafka_admin)) == sorted(changes)
    assert admin.password_is("a", S256, "pw-a-256") and admin.password_is("a", S512, "pw-a-512")
    assert ksa.read(admin, ["a", "b"]) == [C("a", S256, 4096), C("a", S512, 8192)]

    refused = ScramAdminDouble({("a", S512): 4096})
    asked = wanted({"name": "a", "password": "pw-long-1", "state": "absent"}, {"name": "b", "password": "pw-long-1"})
    changes = ksa.plan(asked, ksa.read(refused, ["a", "b"]))
    del refused.credentials[("a", S512)]  # gone between the describe and the alter
    with pytest.raises(ksa.ScramCallFailed) as failed:
        ksa.write(refused, changes, asked, kafka_admin)
    assert ksa.failure_message(failed.value, "k:9092", "User:admin") == (
        "altering the SCRAM credentials of the cluster at k:9092 failed for remove a SCRAM-SHA-512: Attempt to "
        "delete a user credential that does not exist; done before the failure: add b SCRAM-SHA-512")


@pytest.mark.parametrize("answer", ["Request Request(processor=1, envelope=None) is not authorized.",
                                    "Cluster authorization failed."])
def test_each_wording_of_a_refused_alter_is_taken_for_one(answer):
    exc = ksa.ScramCallFailed("alter", answer, [ksa.Change("add", "a", S512, 4096, None)])
    assert ksa.failure_message(exc, "k:9092", "User:alice").startswith("User:alice may not alter the SCRAM ")


def test_a_describe_error_for_a_user_is_named():
    class OneError(ScramAdminDouble):
        def describe_user_scram_credentials(self, users=None):
            return {"a": {"error": "something broke", "credential_infos": []}}
    with pytest.raises(ksa.ScramCallFailed) as failed:
        ksa.read(OneError(), ["a"])
    assert ksa.failure_message(failed.value, "k:9092", "User:admin") == (
        "describing the SCRAM credentials of the cluster at k:9092 failed: user 'a': something broke")
