# -*- coding: utf-8 -*-
"""kafkaops.mirrormaker.kafka_scram_user: the real module's main() run in this process as Ansible
runs it (arguments in through AnsibleModule, the JSON result out), with kafka-python's
KafkaAdminClient replaced by scram_admin_double, a TEST DOUBLE of its two SCRAM calls, and the
reachability probe by a stand-in that says the servers answered.  The double shows what a real
broker cannot on demand: every call the run made (check mode writes nothing, a re-run writes
nothing) and which password a credential now has.  Against real brokers:
tests/live/test_kafka_scram_user.py.
"""

from __future__ import annotations

import json
import os
import sys

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import client as kafka_client
from ansible_collections.kafkaops.mirrormaker.plugins.modules import kafka_scram_user as module

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "module_utils"))
from scram_admin_double import ScramAdminDouble  # noqa: E402

SERVER = "127.0.0.1:9093"
SHOWN = "SCRAM credentials on the cluster at 127.0.0.1:9093: "
SCRAM = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512", "sasl.plain.username": "admin",
         "sasl.plain.password": "adm1n-s3cret"}
S512 = "SCRAM-SHA-512"
S256 = "SCRAM-SHA-256"


def user(name="mm2", password="mm2-s3cret-pw", **extra):
    return dict({"name": name, "password": password}, **extra)


def cred(name, mechanism=S512, iterations=4096, **extra):
    return dict({"name": name, "mechanism": mechanism, "iterations": iterations}, **extra)


@pytest.fixture
def run(monkeypatch, capsys):
    """run(admin, users, check=False, diff=False, **params) -> (exit code, result)."""
    monkeypatch.setattr(kafka_client, "unreachable_message", lambda *args, **kwargs: None)

    def do_run(admin, users, check=False, diff=False, **params):
        monkeypatch.setattr(module, "KafkaAdminClient", admin)
        args = dict(bootstrap_servers=SERVER, client_properties=SCRAM, users=users, _ansible_check_mode=check,
                    _ansible_diff=diff)
        args.update(params)
        with patch_module_args(args):
            with pytest.raises(SystemExit) as exited:
                module.main()
        return exited.value.code, json.loads(capsys.readouterr().out)
    return do_run


def test_create_then_a_re_run_changes_nothing(run):
    admin = ScramAdminDouble({("alice", S512): 4096})
    code, result = run(admin, [user(), user("bob", "b0b-pw", mechanism=S256, iterations=8192)])
    assert code == 0, result
    assert result["changed"] is True
    assert result["added"] == [cred("bob", S256, 8192), cred("mm2")]
    assert result["updated"] == [] and result["removed"] == []
    assert result["credentials"] == result["added"]  # alice is not a user concerned
    assert result["msg"] == SHOWN + "added 2"
    assert admin.password_is("mm2", S512, "mm2-s3cret-pw") and admin.password_is("bob", S256, "b0b-pw")
    assert admin.iterations() == {("alice", S512): 4096, ("mm2", S512): 4096, ("bob", S256): 8192}
    assert admin.closed and admin.connected_with["client_id"] == "kafkaops-scram-user"
    assert admin.connected_with["sasl_plain_username"] == "admin"

    again = ScramAdminDouble(admin.iterations())
    code, result = run(again, [user(), user("bob", "b0b-pw", mechanism=S256, iterations=8192)])
    assert code == 0 and result["changed"] is False
    assert result["msg"] == SHOWN + "as asked, nothing to change"
    assert again.calls == [("describe", [])]


def test_on_create_leaves_a_password_alone_but_sets_it_again_for_other_iterations(run):
    admin = ScramAdminDouble({("mm2", S512): 4096, ("mm2", S256): 4096})
    code, result = run(admin, [user(password="another-pw"),
                               user(password="another-pw", mechanism=S256, iterations=12000)])
    assert code == 0 and result["changed"] is True
    assert result["updated"] == [cred("mm2", S256, 12000, before_iterations=4096)] and result["added"] == []
    assert admin.password_is("mm2", S256, "another-pw") and not admin.password_is("mm2", S512, "another-pw")
    assert result["msg"] == SHOWN + "set again 1"


def test_always_sets_every_present_password_again_on_every_run(run):
    admin = ScramAdminDouble({("mm2", S512): 4096})
    for _run in range(2):
        code, result = run(admin, [user(password="rotated-pw"), user("gone", state="absent")],
                           update_password="always")
        assert code == 0 and result["changed"] is True
        assert result["updated"] == [cred("mm2", before_iterations=4096)]
        assert admin.password_is("mm2", S512, "rotated-pw")
    assert len(admin.writes()) == 2


@pytest.mark.parametrize("cluster_password, iterations, updated, logins", [
    ("mm2-s3cret-pw", 4096, [], [("mm2", S512)]),  # the login is accepted: nothing to do
    ("the-old-pw-1", 4096, [cred("mm2", before_iterations=4096)], [("mm2", S512)]),  # refused: set again
    ("the-old-pw-1", 8192, [cred("mm2", before_iterations=8192)], []),  # other iterations: set again, no login
])
def test_when_refused_sets_again_only_a_password_the_cluster_refuses(run, cluster_password, iterations, updated,
                                                                     logins):
    admin = ScramAdminDouble()
    admin.set_password("mm2", S512, cluster_password, iterations)
    code, result = run(admin, [user()], update_password="when_refused")
    assert code == 0, result
    assert result["changed"] is bool(updated) and result["updated"] == updated
    assert admin.logins == logins
    assert admin.password_is("mm2", S512, "mm2-s3cret-pw")
    # converged: a re-run logs in, is accepted and writes nothing
    writes = len(admin.writes())
    code, result = run(admin, [user()], update_password="when_refused")
    assert code == 0 and result["changed"] is False and len(admin.writes()) == writes


def test_when_refused_in_check_mode_logs_in_and_writes_nothing(run):
    admin = ScramAdminDouble()
    admin.set_password("mm2", S512, "the-old-pw-1")
    code, result = run(admin, [user(), user("new")], update_password="when_refused", check=True, diff=True)
    assert code == 0 and result["changed"] is True
    assert result["updated"] == [cred("mm2", before_iterations=4096)] and result["added"] == [cred("new")]
    assert "mm2 SCRAM-SHA-512 iterations=4096 (password set)" in result["diff"]["after"]
    assert admin.writes() == [] and admin.password_is("mm2", S512, "the-old-pw-1")
    assert "mm2-s3cret-pw" not in json.dumps(result)


def test_when_refused_fails_naming_the_item_whose_login_is_not_answered(run):
    admin = ScramAdminDouble(offered=(S512,))
    admin.set_password("mm2", S512, "mm2-s3cret-pw")
    admin.set_password("mm2", S256, "mm2-s3cret-pw")
    # timeout 1: the unanswered login is tried again for a second, not the default 30
    code, result = run(admin, [user(), user(mechanism=S256)], update_password="when_refused", timeout=1)
    assert code == 1 and result["changed"] is False and admin.writes() == []
    assert admin.logins.count(("mm2", S256)) > 1
    assert result["msg"] == (
        "users[1]: the login of 'mm2' with SCRAM-SHA-256, made to check its password (update_password=when_refused), "
        "was neither accepted nor refused by the cluster at 127.0.0.1:9093: KafkaConnectionError: socket disconnected "
        "(is SCRAM-SHA-256 offered by the listener, in the brokers' sasl.enabled.mechanisms?)")


@pytest.mark.parametrize("properties", [{}, {"security.protocol": "SSL", "ssl.cafile": __file__}])
def test_when_refused_needs_a_connection_that_can_log_in_with_scram(run, properties):
    admin = ScramAdminDouble()
    code, result = run(admin, [user()], update_password="when_refused", client_properties=properties)
    assert code == 1 and admin.calls == [] and admin.logins == []
    protocol = properties.get("security.protocol", "PLAINTEXT")
    assert result["msg"] == (
        "update_password: when_refused logs in as each user, which needs client_properties' security.protocol "
        "SASL_PLAINTEXT or SASL_SSL (a listener offering SCRAM), not %s" % protocol)


def test_absent_removes_only_that_mechanism_and_only_if_it_exists(run):
    admin = ScramAdminDouble({("mm2", S512): 8192, ("mm2", S256): 4096})
    code, result = run(admin, [{"name": "mm2", "state": "absent"}, {"name": "nobody", "state": "absent"}])
    assert code == 0 and result["changed"] is True
    assert result["removed"] == [cred("mm2", S512, 8192)]
    assert result["credentials"] == [cred("mm2", S256)]
    assert admin.iterations() == {("mm2", S256): 4096}
    code, result = run(ScramAdminDouble(admin.iterations()), [{"name": "mm2", "state": "absent"}])
    assert code == 0 and result["changed"] is False and result["removed"] == []


def test_both_mechanisms_of_one_user_go_in_two_requests(run):
    # Kafka refuses a second alteration of one user in a request (DUPLICATE_RESOURCE), whatever its mechanism
    admin = ScramAdminDouble({("gone", S256): 4096})
    code, result = run(admin, [user(), user(mechanism=S256), user("gone", mechanism=S256, state="absent")])
    assert code == 0, result
    assert [len(call[1]) for call in admin.writes()] == [2, 1]
    assert admin.iterations() == {("mm2", S512): 4096, ("mm2", S256): 4096}


@pytest.mark.parametrize("params", [{}, {"update_password": "always"}, {"update_password": "when_refused"}])
def test_check_mode_reports_what_a_run_would_do_and_writes_nothing(run, params):
    existing = {("mm2", S512): 4096, ("old", S512): 4096, ("slow", S256): 4096}
    wanted = [user(), user("new"), user("old", state="absent"), user("slow", mechanism=S256, iterations=16384)]
    checked = ScramAdminDouble(existing)
    code, checked_result = run(checked, wanted, check=True, diff=True, **params)
    assert code == 0, checked_result
    assert checked.writes() == [] and checked.iterations() == existing

    real = ScramAdminDouble(existing)
    code, real_result = run(real, wanted, diff=True, **params)
    assert code == 0
    for key in ("changed", "added", "updated", "removed", "credentials", "diff"):
        assert checked_result[key] == real_result[key], key
    assert checked_result["msg"].replace("would add", "added").replace("would set again", "set again") \
        .replace("would remove", "removed") == real_result["msg"]


def test_diff_shows_users_mechanisms_and_iterations_never_a_password(run):
    admin = ScramAdminDouble({("mm2", S512): 4096, ("mm2", S256): 4096, ("old", S512): 4096})
    code, result = run(admin, [user(iterations=8192), user("new"), user("old", state="absent"),
                               user(mechanism=S256)], diff=True)
    assert code == 0
    assert result["diff"] == {
        "before": "mm2 SCRAM-SHA-256 iterations=4096\nmm2 SCRAM-SHA-512 iterations=4096\n"
                  "old SCRAM-SHA-512 iterations=4096\n",
        "after": "mm2 SCRAM-SHA-256 iterations=4096\nmm2 SCRAM-SHA-512 iterations=8192 (password set)\n"
                 "new SCRAM-SHA-512 iterations=4096 (password set)\n",
        "before_header": "SCRAM credentials of mm2, new, old", "after_header": "SCRAM credentials of mm2, new, old"}
    assert "mm2-s3cret-pw" not in json.dumps(result)


def test_no_password_anywhere_in_the_result(run):
    code, result = run(ScramAdminDouble(may_alter=False), [user(password="p4ss-w0rd-xyz")], diff=True)
    assert code == 1
    text = json.dumps(result)
    assert "p4ss-w0rd-xyz" not in text and "adm1n-s3cret" not in text
    assert result["invocation"]["module_args"]["users"][0]["password"] == "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"


def test_a_password_equal_to_a_plain_client_property_stays_masked(run):
    # mask_only_secrets unmasks client_properties' plain values; the user's password must not go with them
    code, result = run(ScramAdminDouble(may_alter=False), [user(password="SASL_PLAINTEXT")])
    assert code == 1
    assert "SASL_PLAINTEXT" not in json.dumps(result)


def test_a_caller_that_may_not_describe_is_named_with_the_permissions(run):
    alice = dict(SCRAM, **{"sasl.plain.username": "alice"})
    admin = ScramAdminDouble(may_describe=False, may_alter=False)
    code, result = run(admin, [user()], client_properties=alice)
    assert code == 1 and result["changed"] is False
    assert result["msg"] == (
        "User:alice may not describe the SCRAM credentials of the cluster at 127.0.0.1:9093: it needs DESCRIBE on "
        "CLUSTER kafka-cluster to read them and ALTER on CLUSTER kafka-cluster to change them, or to be one of the "
        "brokers' super.users ([Error 31] ClusterAuthorizationFailedError: DescribeUserScramCredentialsRequest "
        "failed: Cluster authorization failed.)")
    assert admin.writes() == []


def test_a_caller_without_alter_is_named_and_check_mode_does_not_need_it(run):
    alice = dict(SCRAM, **{"sasl.plain.username": "alice"})
    code, result = run(ScramAdminDouble(may_alter=False), [user()], client_properties=alice)
    assert code == 1 and result["changed"] is False
    assert result["msg"] == (
        "User:alice may not alter the SCRAM credentials of the cluster at 127.0.0.1:9093: it needs ALTER on CLUSTER "
        "kafka-cluster, or to be one of the brokers' super.users (the cluster answered: the request needs ALTER "
        "permission.)")
    code, result = run(ScramAdminDouble(may_alter=False), [user()], client_properties=alice, check=True)
    assert code == 0 and result["changed"] is True


def test_a_refusal_after_a_first_request_says_what_was_done(run):
    class SecondRefused(ScramAdminDouble):
        def alter_user_scram_credentials(self, alterations):
            if self.writes():
                self.may_alter = False
            return ScramAdminDouble.alter_user_scram_credentials(self, alterations)

    code, result = run(SecondRefused(), [user(), user(mechanism=S256)])
    assert code == 1 and result["changed"] is True
    assert result["msg"].endswith("; done before the failure: add mm2 SCRAM-SHA-256")


def test_bad_input_is_refused_before_any_call_one_message_per_fault(run):
    admin = ScramAdminDouble()
    code, result = run(admin, [
        {"name": "", "password": ""},
        {"name": "bob", "password": "pw-one-long", "mechanism": "SCRAM-SHA-1", "iterations": 100},
        {"name": "carol", "password": "pw-one-long", "iterations": 20000, "state": "gone"},
        {"name": "dave", "password": "pw-one-long"},
        {"name": "dave", "password": "pw-two-long", "mechanism": S512},
        {"name": "erin, the second", "password": "pw,with,commas"},  # any string through the Admin API
        {"name": "frank", "state": "absent"},  # no password needed to delete
    ], timeout=0)
    assert code == 1
    assert result["msg"].split("; ") == [
        "users[0].name: empty",
        "users[0].password: empty (SCRAM password empty for user '')",
        "users[1].mechanism: 'SCRAM-SHA-1' is not one of SCRAM-SHA-256, SCRAM-SHA-512",
        "users[1].iterations: 100 is not a whole number from 4096 to 16384 (Kafka's bounds for SCRAM-SHA-1)",
        "users[2].state: 'gone' is not present or absent",
        "users[2].iterations: 20000 is not a whole number from 4096 to 16384 (Kafka's bounds for SCRAM-SHA-512)",
        "users[4]: user 'dave' with SCRAM-SHA-512 is already users[3]",
        "timeout: 0 is not from 1 to 300 seconds"]
    assert admin.calls == [] and admin.connected_with is None


def test_an_unreachable_cluster_is_named(capsys):
    closed = "127.0.0.1:%d" % _closed_port()
    with patch_module_args(dict(bootstrap_servers=closed, users=[user()], timeout=3)):
        with pytest.raises(SystemExit) as exited:
            module.main()
    result = json.loads(capsys.readouterr().out)
    assert exited.value.code == 1
    assert result["msg"].startswith("bootstrap_servers: no bootstrap server answered from ")
    assert result["msg"].endswith(" within 3 s (%s: connection refused)" % closed)


def _closed_port():
    import socket
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port
