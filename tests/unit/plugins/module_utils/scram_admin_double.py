# -*- coding: utf-8 -*-
"""A TEST DOUBLE of kafka-python's KafkaAdminClient SCRAM calls (describe_user_scram_credentials,
alter_user_scram_credentials), answering as kafka-python 3.x does with what a KRaft cluster
answers, from credentials it keeps.  Not Kafka: it stands in only for what a real broker cannot be
made to show on demand (every call a run made, so that check mode is seen to write nothing; which
salted hash a password set).  The real thing is tested in tests/live/test_kafka_scram_user.py.

A client made with the login client id (``update_password=when_refused``) is a login as that user:
accepted when the password is the one last set, else refused as kafka-python 3.0 reports it against
a real broker (seen on the secured live lab, 2026-12-05): it logs "Bootstrap connection to
bootstrap-0 failed: [Error 58] SaslAuthenticationFailedError: ..." and raises KafkaTimeoutError
once its bootstrap deadline passes; a mechanism the listener does not offer is logged as "socket
disconnected" instead.
"""

from __future__ import annotations

import hashlib
import logging

from kafka import admin as kafka_admin
from kafka import errors as kafka_errors

# ScramControlManager's answers, as kafka-python hands them over (the message only)
DUPLICATE = "A user credential cannot be altered twice in the same request"
NOT_FOUND = "Attempt to delete a user credential that does not exist"
# what a KRaft controller's ClusterAuthorizationException carries for a caller without ALTER (Kafka 4)
NOT_AUTHORIZED = ("Request Request(processor=2, connectionId=127.0.0.1:42777-127.0.0.1:53932-2-0, "
                  "session=org.apache.kafka.network.Session@cca0022, listenerName=ListenerName(CONTROLLER), "
                  "securityProtocol=PLAINTEXT, buffer=java.nio.HeapByteBuffer[pos=137 lim=137 cap=159], "
                  "envelope=None) needs ALTER permission.")


class ScramAdminDouble(object):
    """``credentials``: {(name, mechanism): iterations} the cluster has (their password unknown).
    ``may_describe`` / ``may_alter`` False: CLUSTER_AUTHORIZATION_FAILED on describe (raised, as
    kafka-python raises a top-level error) / on alter (each user's result, message only)."""

    LOGIN_CLIENT_ID = "kafkaops-scram-user-login"
    REFUSED = ("Bootstrap connection to bootstrap-0 failed: [Error 58] SaslAuthenticationFailedError: "
               "SaslAuthenticationFailedError: Authentication failed during authentication due to invalid credentials "
               "with SASL mechanism %s (backoff 0.06 secs)")
    NOT_OFFERED = "Bootstrap connection to bootstrap-0 failed: KafkaConnectionError: socket disconnected (backoff 0.05 secs)"

    def __init__(self, credentials=None, may_describe=True, may_alter=True, offered=("SCRAM-SHA-256", "SCRAM-SHA-512")):
        self.credentials = {}
        for key, iterations in (credentials or {}).items():
            self.credentials[key] = {"iterations": iterations, "salt": None, "salted": None}
        self.may_describe, self.may_alter, self.offered = may_describe, may_alter, offered
        self.calls = []
        self.connected_with = None
        self.logins = []
        self.closed = False

    def __call__(self, **kwargs):
        """Stands in for the KafkaAdminClient class: 'constructing' it returns the double, or for a
        login, logs in."""
        if kwargs.get("client_id") == self.LOGIN_CLIENT_ID:
            return self._login(kwargs)
        self.connected_with = kwargs
        return self

    def set_password(self, name, mechanism, password, iterations=4096):
        """The cluster has this credential with this password (as a bootstrap user or an earlier run left it)."""
        salt = b"double-salt"
        algorithm = kafka_admin.ScramMechanism[mechanism.replace("-", "_")].hash_name
        self.credentials[(name, mechanism)] = {
            "iterations": iterations, "salt": salt,
            "salted": hashlib.pbkdf2_hmac(algorithm, password.encode("utf-8"), salt, iterations)}

    def _login(self, kwargs):
        name, mechanism = kwargs["sasl_plain_username"], kwargs["sasl_mechanism"]
        self.logins.append((name, mechanism))
        if mechanism not in self.offered:
            reason = self.NOT_OFFERED
        elif (name, mechanism) in self.credentials and self.password_is(name, mechanism, kwargs["sasl_plain_password"]):
            return _LoggedIn()
        else:
            reason = self.REFUSED % mechanism
        logging.getLogger("kafka.net.manager").warning(reason)
        raise kafka_errors.KafkaTimeoutError("Unable to bootstrap from %s" % ",".join(kwargs["bootstrap_servers"]))

    def writes(self):
        return [call for call in self.calls if call[0] != "describe"]

    def iterations(self):
        return dict((key, value["iterations"]) for key, value in self.credentials.items())

    def password_is(self, name, mechanism, password):
        """Whether ``password`` is the one last set for the credential, as a broker's SCRAM login checks it."""
        stored = self.credentials[(name, mechanism)]
        if stored["salt"] is None:
            return False
        algorithm = kafka_admin.ScramMechanism[mechanism.replace("-", "_")].hash_name
        return hashlib.pbkdf2_hmac(algorithm, password.encode("utf-8"), stored["salt"],
                                   stored["iterations"]) == stored["salted"]

    def describe_user_scram_credentials(self, users=None):
        self.calls.append(("describe", users))
        if users is None and not self.may_describe:
            # a broker's error response walks the null list and fails: the caller hears nothing
            raise kafka_errors.RequestTimedOutError("Request timed out after 30000 ms")
        if not self.may_describe:
            raise kafka_errors.ClusterAuthorizationFailedError(
                "DescribeUserScramCredentialsRequest failed: Cluster authorization failed.")
        names = users or sorted(set(name for name, _mechanism in self.credentials))
        out = {}
        for name in names:
            infos = [{"mechanism": kafka_admin.ScramMechanism[mechanism.replace("-", "_")], "iterations": value["iterations"]}
                     for (user, mechanism), value in sorted(self.credentials.items()) if user == name]
            out[name] = {"error": None if infos else "Attempt to describe a user credential that does not exist: %s"
                         % name, "credential_infos": infos}
        return out

    def alter_user_scram_credentials(self, alterations):
        self.calls.append(("alter", [repr(a) for a in alterations]))
        per_user = {}
        for alteration in alterations:
            per_user.setdefault(alteration.user, []).append(alteration)
        results = {}
        for name, mine in per_user.items():
            if not self.may_alter:
                results[name] = NOT_AUTHORIZED
            elif len(mine) > 1:
                # Kafka applies none of them, whatever the mechanisms
                results[name] = DUPLICATE
            else:
                results[name] = self._apply(name, mine[0])
        return results

    def _apply(self, name, alteration):
        mechanism = alteration.mechanism.name.replace("_", "-")
        if isinstance(alteration, kafka_admin.UserScramCredentialDeletion):
            if (name, mechanism) not in self.credentials:
                return NOT_FOUND
            del self.credentials[(name, mechanism)]
            return None
        self.credentials[(name, mechanism)] = {"iterations": alteration.iterations, "salt": alteration.salt,
                                               "salted": alteration.salted_password}
        return None

    def close(self):
        self.closed = True


class _LoggedIn(object):
    def close(self):
        pass
