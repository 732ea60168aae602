"""kafka_scram_user against a REAL broker: the secured lab's cluster A (harness.Lab.start_secured_broker:
StandardAuthorizer, SASL_PLAINTEXT with SCRAM-SHA-512, super user ``admin``) and a user of this
file's own without any ACL (``alice`` of the lab may hold bindings other files granted).

The module runs as a user runs it, ``ansible localhost -m kafkaops.mirrormaker.kafka_scram_user``
(jobtools.run_ansible_module), with this venv's Python and kafka-python.  What the cluster holds is
read apart from the module, with kafka-python's describe_user_scram_credentials, and a password is
proven by logging in with it.  One test, in steps, so the file starts the broker once and stays
fast; the users are this file's own.
"""

import json
import time

from jobtools import run_ansible_module

MODULE = "kafkaops.mirrormaker.kafka_scram_user"
# no ACL at all, whatever other files granted the lab's alice
NOBODY = "scram-nobody"
# a refused login is only seen when kafka-python gives up; a short wait keeps the file fast
REFUSED_WITHIN_MS = 4000


def why(result):
    """The module's message in full (pytest cuts a dict it shows at a few hundred characters)."""
    return str(result.get("msg", result))


def run(lab, args, *extra, user=None):
    args = dict({"bootstrap_servers": lab.bootstrap("A"), "client_properties": lab.client_properties("A", user),
                 "timeout": 30}, **args)
    return run_ansible_module(MODULE, args, *extra)


def described(lab, name):
    """{mechanism: iterations} of ``name`` on cluster A, as kafka-python reads them."""
    from kafka.admin import KafkaAdminClient
    admin = KafkaAdminClient(bootstrap_servers=lab.bootstrap("A"), client_id="scram-user-test",
                             **lab.kafka_python_kwargs("A"))
    try:
        entry = admin.describe_user_scram_credentials().get(name) or {"credential_infos": []}
    finally:
        admin.close()
    return dict((info["mechanism"].name.replace("_", "-"), info["iterations"]) for info in entry["credential_infos"])


def logs_in(lab, name, password, timeout_ms=REFUSED_WITHIN_MS):
    from kafka.admin import KafkaAdminClient
    kwargs = dict(lab.kafka_python_kwargs("A"), sasl_plain_username=name, sasl_plain_password=password)
    try:
        admin = KafkaAdminClient(bootstrap_servers=lab.bootstrap("A"), client_id="scram-user-login",
                                 request_timeout_ms=timeout_ms, bootstrap_timeout_ms=timeout_ms, **kwargs)
    except Exception:  # noqa: BLE001 - kafka-python's error type depends on where it gave up
        return False
    try:
        return bool(admin.describe_cluster()["brokers"])
    finally:
        admin.close()


def eventually(check, timeout=15):
    """check() once it is true (a broker applies what the controller committed a moment later), or
    its last answer after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.3)


def test_scram_users_through_the_admin_api(secured_lab):
    lab, shown = secured_lab, secured_lab.bootstrap("A")
    if NOBODY not in lab.brokers["A"]["users"]:
        lab.add_scram_user("A", NOBODY)
    password, rotated = "carol-first-Pw,1", "carol-rotated-Pw=2"
    carol = {"name": "carol", "password": password, "iterations": 8192}
    secrets = (password, rotated, lab.brokers["A"]["users"]["admin"], lab.brokers["A"]["users"][NOBODY])
    outputs = []

    # check mode on a new user: changed, and nothing on the broker
    proc, result = run(lab, {"users": [carol]}, "--check", "--diff")
    outputs.append(proc.stdout + proc.stderr)
    assert proc.returncode == 0, why(result)
    assert result["changed"] is True and result["added"] == [{"name": "carol", "mechanism": "SCRAM-SHA-512",
                                                              "iterations": 8192}]
    assert result["diff"]["after"] == "carol SCRAM-SHA-512 iterations=8192 (password set)\n"
    assert result["msg"] == "SCRAM credentials on the cluster at %s: would add 1" % shown
    time.sleep(1)
    assert described(lab, "carol") == {}

    # create (both mechanisms: two requests, one user each), then a re-run changes nothing
    both = [carol, dict(carol, mechanism="SCRAM-SHA-256", iterations=4096)]
    proc, result = run(lab, {"users": both})
    outputs.append(proc.stdout + proc.stderr)
    assert proc.returncode == 0, why(result)
    assert result["changed"] is True and len(result["added"]) == 2
    assert result["credentials"] == [{"name": "carol", "mechanism": "SCRAM-SHA-256", "iterations": 4096},
                                     {"name": "carol", "mechanism": "SCRAM-SHA-512", "iterations": 8192}]
    expected = {"SCRAM-SHA-512": 8192, "SCRAM-SHA-256": 4096}
    assert eventually(lambda: described(lab, "carol") == expected), described(lab, "carol")
    proc, result = run(lab, {"users": both})
    outputs.append(proc.stdout + proc.stderr)
    assert proc.returncode == 0, why(result)
    assert result["changed"] is False, result

    # carol logs in (the listener offers SCRAM-SHA-512 only); a wrong password is refused
    assert eventually(lambda: logs_in(lab, "carol", password, 10000))
    assert not logs_in(lab, "carol", "not-" + password)

    # update_password always sets it again: the old password is refused, the new one accepted
    proc, result = run(lab, {"users": [dict(carol, password=rotated)], "update_password": "always"}, "--diff")
    outputs.append(proc.stdout + proc.stderr)
    assert proc.returncode == 0, why(result)
    assert result["changed"] is True and result["updated"] == [{"name": "carol", "mechanism": "SCRAM-SHA-512",
                                                                "iterations": 8192, "before_iterations": 8192}]
    assert eventually(lambda: logs_in(lab, "carol", rotated, 10000))
    assert not logs_in(lab, "carol", password)

    # a user without ACLs may not even describe; given DESCRIBE on the cluster it may look, not change
    proc, result = run(lab, {"users": [{"name": "mallory", "password": "mallory-Pw-9"}]}, user=NOBODY)
    outputs.append(proc.stdout + proc.stderr)
    assert proc.returncode == 2, result
    assert result["msg"].startswith(
        "User:%s may not describe the SCRAM credentials of the cluster at %s: it needs DESCRIBE on CLUSTER "
        "kafka-cluster to read them and ALTER on CLUSTER kafka-cluster to change them, or to be one of the brokers' "
        "super.users ([Error 31] ClusterAuthorizationFailedError" % (NOBODY, shown)), result["msg"]
    grant = {"acls": [{"principal": "User:" + NOBODY, "operation": "DESCRIBE", "resource_type": "CLUSTER",
                       "resource_name": "kafka-cluster"}]}
    proc, granted = run_ansible_module("kafkaops.mirrormaker.kafka_acl", dict(
        grant, bootstrap_servers=shown, client_properties=lab.client_properties("A")))
    assert proc.returncode == 0, why(granted)
    try:
        def alter_refused():
            proc, result = run(lab, {"users": [{"name": "mallory", "password": "mallory-Pw-9"}]}, user=NOBODY)
            outputs.append(proc.stdout + proc.stderr)
            return result if "may not alter" in result.get("msg", "") else None
        result = eventually(alter_refused, 20)
        assert result, "%s was not refused ALTER" % NOBODY
        assert result["failed"] is True and result["changed"] is False
        assert result["msg"] == (
            "User:%s may not alter the SCRAM credentials of the cluster at %s: it needs ALTER on CLUSTER "
            "kafka-cluster, or to be one of the brokers' super.users (the cluster answered: the request needs ALTER "
            "permission.)" % (NOBODY, shown)), result["msg"]
        assert described(lab, "mallory") == {}
    finally:
        proc, revoked = run_ansible_module("kafkaops.mirrormaker.kafka_acl", dict(
            grant, state="absent", bootstrap_servers=shown, client_properties=lab.client_properties("A")))
        assert proc.returncode == 0, why(revoked)

    # absent deletes the one mechanism asked for: carol can no longer log in with SCRAM-SHA-512
    proc, result = run(lab, {"users": [{"name": "carol", "state": "absent"}]})
    outputs.append(proc.stdout + proc.stderr)
    assert proc.returncode == 0, why(result)
    assert result["removed"] == [{"name": "carol", "mechanism": "SCRAM-SHA-512", "iterations": 8192}]
    assert eventually(lambda: described(lab, "carol") == {"SCRAM-SHA-256": 4096})
    assert not logs_in(lab, "carol", rotated)
    proc, result = run(lab, {"users": [{"name": "carol", "state": "absent"}]})
    assert proc.returncode == 0 and result["changed"] is False, why(result)

    for text in outputs:
        for secret in secrets:
            assert secret not in text
            assert json.dumps(secret)[1:-1] not in text


ROTOR = "scram-rotor"
ROTATION_TOPIC = "scram-rotation"


class Writer(object):
    """A kafka-python producer (acks=all) logged in as ROTOR with ``password``, sending numbered
    records from a thread until stopped: what it had acknowledged (and when), and every error its
    callbacks or sends raised."""

    def __init__(self, lab, password, first):
        import threading
        from kafka import KafkaProducer
        kwargs = dict(lab.kafka_python_kwargs("A", ROTOR), sasl_plain_password=password)
        self.producer = KafkaProducer(bootstrap_servers=lab.bootstrap("A"), acks="all", client_id="scram-rotor",
                                      **kwargs)
        self.next, self.acked, self.errors = first, [], []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._send, daemon=True)
        self.thread.start()

    def _send(self):
        while not self.stopping.is_set():
            value = self.next
            self.next += 1
            try:
                future = self.producer.send(ROTATION_TOPIC, str(value).encode())
                future.add_callback(lambda _meta, value=value: self.acked.append((value, time.monotonic())))
                future.add_errback(lambda exc, value=value: self.errors.append((value, repr(exc))))
            except Exception as exc:  # noqa: BLE001 - any error is the test's finding
                self.errors.append((value, repr(exc)))
            time.sleep(0.005)

    def stop(self):
        self.stopping.set()
        self.thread.join(30)
        self.producer.flush(30)
        self.producer.close(30)
        return self.next

    def discard(self):
        """Whatever happened: no more sends, and the producer closed without waiting for
        acknowledgements (a failed test's writer would otherwise go on into the lab's teardown).
        Nothing after stop(), which closed it already."""
        self.stopping.set()
        self.thread.join(30)
        self.producer.close(1)


def test_a_password_rotated_under_a_running_producer_loses_nothing(secured_lab):
    """A rotation in the order the module serves: the cluster first, then the client rolled to the
    new password.  update_password=when_refused finds the inventory's new password refused and sets
    it; the producer already logged in goes on writing (Kafka does not authenticate an established
    connection again unless connections.max.reauth.ms is set, and the lab does not set it); the
    producer made again with the new password goes on from there.  Every acknowledged record is
    read back; no send failed; the old password is refused once the switch is made."""
    from kafka import KafkaConsumer
    from kafka.admin import KafkaAdminClient, NewTopic

    lab = secured_lab
    old = lab.add_scram_user("A", ROTOR)
    new = "rotor-rotated-Pw=%d" % int(time.time())
    admin = KafkaAdminClient(bootstrap_servers=lab.bootstrap("A"), client_id="scram-rotation",
                             **lab.kafka_python_kwargs("A"))
    try:
        admin.create_topics([NewTopic(ROTATION_TOPIC, num_partitions=1, replication_factor=1)])
    finally:
        admin.close()
    grant = {"acls": [{"principal": "User:" + ROTOR, "operation": op, "resource_type": "TOPIC",
                       "resource_name": ROTATION_TOPIC} for op in ("WRITE", "DESCRIBE")]}
    proc, granted = run_ansible_module("kafkaops.mirrormaker.kafka_acl", dict(
        grant, bootstrap_servers=lab.bootstrap("A"), client_properties=lab.client_properties("A")))
    assert proc.returncode == 0, why(granted)
    rotor = {"name": ROTOR, "password": new}

    first = Writer(lab, old, 0)
    writers = [first]
    try:
        assert eventually(lambda: len(first.acked) > 50, 60), first.errors
        proc, checked = run(lab, {"users": [rotor], "update_password": "when_refused"}, "--check")
        assert proc.returncode == 0 and checked["changed"] is True, why(checked)
        proc, result = run(lab, {"users": [rotor], "update_password": "when_refused"})
        assert proc.returncode == 0, why(result)
        assert result["updated"] == [{"name": ROTOR, "mechanism": "SCRAM-SHA-512", "iterations": 4096,
                                      "before_iterations": 4096}], result
        switched = time.monotonic()
        assert eventually(lambda: logs_in(lab, ROTOR, new, 10000))
        assert not logs_in(lab, ROTOR, old)
        # the established connection still writes after the cluster took the new password
        assert eventually(lambda: sum(1 for _v, at in first.acked if at > switched + 1) > 50, 30), first.errors
        # the roll: the producer is made again with the new password
        resume = first.stop()
        second = Writer(lab, new, resume)
        writers.append(second)
        assert eventually(lambda: len(second.acked) > 50, 60), second.errors
        end = second.stop()
    finally:
        for writer in writers:
            writer.discard()
    # converged: a re-run logs in with the new password and changes nothing
    proc, again = run(lab, {"users": [rotor], "update_password": "when_refused"})
    assert proc.returncode == 0 and again["changed"] is False, why(again)

    consumer = KafkaConsumer(ROTATION_TOPIC, bootstrap_servers=lab.bootstrap("A"), group_id=None,
                             auto_offset_reset="earliest", enable_auto_commit=False, consumer_timeout_ms=5000,
                             **lab.kafka_python_kwargs("A"))
    try:
        read = [int(record.value) for record in consumer]
    finally:
        consumer.close()
    acked = set(v for v, _at in first.acked + second.acked)
    lost = acked - set(read)
    print("\nscram rotation under a producer: %d sent, %d acknowledged (%d after the switch on the old login), "
          "%d read back, lost %d, duplicates %d, errors %d"
          % (end, len(acked), sum(1 for _v, at in first.acked if at > switched), len(read), len(lost),
             len(read) - len(set(read)), len(first.errors) + len(second.errors)))
    assert first.errors == [] and second.errors == []
    assert len(acked) == end and lost == set()
