# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""SCRAM credentials on a running cluster for the ``kafka_scram_user`` module: checked input, what
to set and delete, the diff, the calls.

The rules a credential must meet are ``kafka_scram.scram_user_faults``' (shared with the KRaft
bootstrap of the ``kafka_broker`` role), less those only a command line needs.

A broker tells a credential's mechanism and iteration count, never its password (it keeps only a
salted hash), so a credential that exists with the iterations asked for is taken as it should be
unless ``update_password`` is ``always``, or is ``when_refused`` and a login with the password
given is refused (``unproven``, ``refused``): the one way to see that the inventory's password is
not the cluster's, which is what a rotation changes.

Pure functions; no kafka-python at import time.  The calls take a kafka-python (3.x)
``KafkaAdminClient`` and the module ``kafka.admin`` (ScramMechanism and the alteration types) as
arguments, or anything that answers the same, so the module can report a missing library with
``missing_required_lib`` and unit tests can pass a double:

* ``admin.describe_user_scram_credentials([])`` -> ``{user: {"error": None or message,
  "credential_infos": [{"mechanism": ScramMechanism, "iterations": int}]}}``; raises the broker's
  error (``ClusterAuthorizationFailedError`` for a caller without DESCRIBE on the cluster);
* ``admin.alter_user_scram_credentials([alteration])`` -> ``{user: None or error message}``.
"""

from __future__ import annotations

import collections
import re

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import scram as kafka_scram
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.client import SASL_PROTOCOLS

KEYS = ("name", "password", "mechanism", "iterations", "state")
STATES = ("present", "absent")
UPDATE_PASSWORD = ("on_create", "always", "when_refused")
CLUSTER_NAME = "kafka-cluster"
# scram_user_faults asks every item for a password; deleting a credential needs none, so an absent
# item is checked with this in its place (it never reaches the cluster).
_NO_PASSWORD_NEEDED = "-"

# What the cluster holds: no password, which it never tells.
Credential = collections.namedtuple("Credential", "name mechanism iterations")


class Wanted(object):
    """One item of ``users``, checked.  The password is kept out of repr() so that no traceback or
    debug print can show it."""

    __slots__ = ("name", "mechanism", "iterations", "password", "state")

    def __init__(self, name, mechanism, iterations, password, state):
        self.name, self.mechanism, self.iterations = name, mechanism, iterations
        self.password, self.state = password, state

    @property
    def key(self):
        return self.name, self.mechanism

    def __repr__(self):
        return "Wanted(%r, %s, iterations=%d, state=%s)" % (self.name, self.mechanism, self.iterations, self.state)


# action: add (no credential of that user and mechanism yet), update (set again), remove
Change = collections.namedtuple("Change", "action name mechanism iterations before_iterations")


def normalise(users):
    """(wanted, errors) for the module's ``users``: a Wanted per item, in the order given.

    Every error names ``users[i].<key>``; a key whose value is null counts as not given.
    """
    if not isinstance(users, list):
        return [], ["users: must be a list of {name, password, mechanism, iterations, state}, not %s"
                    % type(users).__name__]
    if not users:
        return [], ["users: must list at least one user"]
    errors, checked = [], []
    for i, item in enumerate(users):
        where = "users[%d]" % i
        if not isinstance(item, dict):
            checked.append(item)
            continue
        item = dict((k, v) for k, v in item.items() if v is not None)
        for key in sorted(set(item) - set(KEYS)):
            errors.append("%s.%s: not a key of a user (it takes %s)" % (where, key, ", ".join(KEYS)))
        state = item.get("state", "present")
        if state not in STATES:
            errors.append("%s.state: %r is not present or absent" % (where, state))
        if state == "absent" and not item.get("password"):
            item["password"] = _NO_PASSWORD_NEEDED
        checked.append(item)
    faults = kafka_scram.scram_user_faults(checked, "users", command_line=False)
    wanted = []
    if not (errors or faults):
        for item in checked:
            wanted.append(Wanted(str(item["name"]), item.get("mechanism") or kafka_scram.DEFAULT_MECHANISM,
                                 int(item.get("iterations") or kafka_scram.MIN_ITERATIONS),
                                 str(item["password"]), item.get("state", "present")))
    return wanted, _by_item(errors + faults)


def _by_item(errors):
    """The errors in the order of the items (then of the rule), so each item's faults read together."""
    def item_index(message):
        match = re.match(r"users\[(\d+)\]", message)
        return int(match.group(1)) if match else -1
    return sorted(errors, key=item_index)


def mechanism_name(mechanism):
    """``SCRAM-SHA-512`` for kafka-python's ScramMechanism.SCRAM_SHA_512 (or its name)."""
    return str(getattr(mechanism, "name", mechanism)).replace("_", "-")


def concerned(wanted):
    return sorted(set(w.name for w in wanted))


def _iterations_by_key(existing):
    """{(name, mechanism): iterations} of the Credentials ``existing``."""
    return dict(((c.name, c.mechanism), c.iterations) for c in existing)


def unproven(wanted, existing):
    """The present items of ``wanted`` whose credential exists with the iterations asked for: what
    the cluster says of them cannot tell whether their password is the one given, a login can."""
    have = _iterations_by_key(existing)
    return [w for w in wanted if w.state == "present" and have.get(w.key) == w.iterations]


def plan(wanted, existing, update_password="on_create", refused=()):
    """The changes, sorted by user and mechanism, that make ``existing`` (the Credentials the
    cluster has for the users of ``wanted``) what ``wanted`` asks for.

    A present credential is added when the user has none of that mechanism, updated when its
    iteration count differs, when ``update_password`` is ``always`` (the password cannot be
    compared), or when its key is in ``refused`` (a login with the password given was refused),
    else left alone.  An absent one is removed only when it exists.
    """
    refused = set(refused)
    have = _iterations_by_key(existing)
    changes = []
    for w in wanted:
        before = have.get(w.key)
        if w.state == "absent":
            if before is not None:
                changes.append(Change("remove", w.name, w.mechanism, before, before))
        elif before is None:
            changes.append(Change("add", w.name, w.mechanism, w.iterations, None))
        elif update_password == "always" or before != w.iterations or w.key in refused:
            changes.append(Change("update", w.name, w.mechanism, w.iterations, before))
    return sorted(changes, key=lambda c: (c.name, c.mechanism))


def after(existing, changes):
    """The Credentials once ``changes`` are made, sorted."""
    have = _iterations_by_key(existing)
    for change in changes:
        if change.action == "remove":
            have.pop((change.name, change.mechanism), None)
        else:
            have[(change.name, change.mechanism)] = change.iterations
    return sorted(Credential(name, mechanism, iterations) for (name, mechanism), iterations in have.items())


def as_dicts(items):
    return [dict(name=c.name, mechanism=c.mechanism, iterations=c.iterations) for c in items]


def changed_dicts(changes, action):
    """RV(added), RV(updated) or RV(removed); an update also tells the iterations it had."""
    out = []
    for change in changes:
        if change.action == action:
            item = dict(name=change.name, mechanism=change.mechanism, iterations=change.iterations)
            if action == "update":
                item["before_iterations"] = change.before_iterations
            out.append(item)
    return out


def text(credential, password_set=False):
    """One line: ``alice SCRAM-SHA-512 iterations=4096``; ``(password set)`` marks a credential the
    run writes, so a password set again with the same iterations still shows in the diff."""
    line = "%s %s iterations=%d" % (credential.name, credential.mechanism, credential.iterations)
    return line + (" (password set)" if password_set else "")


def diff(existing, changes, users):
    """Ansible's diff: one line per credential of ``users``, before and after, never a password."""
    written = set((c.name, c.mechanism) for c in changes if c.action != "remove")
    header = "SCRAM credentials of %s" % ", ".join(users)
    return {"before": "".join(text(c) + "\n" for c in sorted(existing)),
            "after": "".join(text(c, (c.name, c.mechanism) in written) + "\n" for c in after(existing, changes)),
            "before_header": header, "after_header": header}


def summary(changes, check_mode, shown):
    parts = []
    for action, verb, done in (("add", "add", "added"), ("update", "set again", "set again"),
                               ("remove", "remove", "removed")):
        count = sum(1 for c in changes if c.action == action)
        if count:
            parts.append("%s %d" % ("would %s" % verb if check_mode else done, count))
    return "SCRAM credentials on the cluster at %s: %s" % (shown, ", ".join(parts) or "as asked, nothing to change")


# ---------------------------------------------------------------------------- calls to the cluster

def _once(fn, *args, **kwargs):
    return fn(*args, **kwargs)


# What kafka-python logs when a broker refuses a SASL login ("Bootstrap connection to bootstrap-0
# failed: [Error 58] SaslAuthenticationFailedError: ... invalid credentials ..."); a mechanism the
# listener does not offer reads "socket disconnected" instead, and a timeout tells nothing.
_LOGIN_REFUSED = "SaslAuthenticationFailedError"


class LoginUnanswered(Exception):
    """A login made to check a password was neither accepted nor refused: ``index`` of the item
    in ``users``, ``wanted``, ``reason`` (what kafka-python logged last, or None).

    Retriable (kafka_client.Retry tries the login again): a broker that refuses a login closes
    the connection, and kafka-python reads its answer only in some attempts, in others it sees the
    connection close first; on a loaded machine a login's few attempts may all be of the second
    kind. A mechanism the listener does not offer is never answered, and fails once the retries'
    time is up."""

    retriable = True

    def __init__(self, index, wanted, reason):
        Exception.__init__(self, index, wanted, reason)
        self.index, self.wanted, self.reason = index, wanted, reason


def login_kwargs(kwargs, wanted):
    """The client's keywords (those of the module's connection: servers, TLS) with the SASL login
    of ``wanted`` instead of the caller's."""
    login = dict((k, v) for k, v in kwargs.items() if not k.startswith("sasl_"))
    login.update(sasl_mechanism=wanted.mechanism, sasl_plain_username=wanted.name,
                 sasl_plain_password=wanted.password)
    return login


def refused(wanted, candidates, try_login, retry=_once):
    """The keys of ``candidates`` (items of ``wanted``) whose password the cluster refuses.

    ``try_login(item)`` logs in as the item: None when accepted, else the reasons kafka-python
    logged.  A login neither accepted nor refused raises LoginUnanswered, through ``retry`` (which
    logs in again while it has time): a password is set again only on a refusal seen, never on a
    guess."""
    def verdict(item):
        reasons = try_login(item)
        if reasons is None:
            return False
        if any(_LOGIN_REFUSED in reason for reason in reasons):
            return True
        raise LoginUnanswered(wanted.index(item), item, reasons[-1] if reasons else None)
    return [item.key for item in candidates if retry(verdict, item)]


def unanswered_message(exc, shown):
    where = "users[%d]" % exc.index
    return ("%s: the login of %r with %s, made to check its password (update_password=when_refused), was neither "
            "accepted nor refused by the cluster at %s: %s (is %s offered by the listener, in the brokers' "
            "sasl.enabled.mechanisms?)" % (where, exc.wanted.name, exc.wanted.mechanism, shown,
                                           exc.reason or "no answer", exc.wanted.mechanism))


def when_refused_errors(update_password, protocol):
    """The fault of ``update_password=when_refused`` with a connection (``security.protocol``) that
    cannot log in with SCRAM."""
    protocol = protocol or "PLAINTEXT"
    if update_password != "when_refused" or protocol in SASL_PROTOCOLS:
        return []
    return ["update_password: when_refused logs in as each user, which needs client_properties' security.protocol "
            "SASL_PLAINTEXT or SASL_SSL (a listener offering SCRAM), not %s" % protocol]


class ScramCallFailed(Exception):
    """The cluster refused a call.  ``action``: describe or alter; ``error``: kafka-python's error
    (describe) or the broker's message (alter); ``failed``: the changes it refused; ``done``: the
    changes written before."""

    def __init__(self, action, error, failed=(), done=()):
        Exception.__init__(self, action, error)
        self.action, self.error, self.failed, self.done = action, error, list(failed), list(done)


def read(admin, users, retry=_once):
    """The Credentials the cluster has for ``users``.

    Every user's credentials are asked for at once, by an empty list: named one by one, a user
    without any would come back as an error that kafka-python hands over as text only (its code
    dropped), to be told from a real failure by its wording; and a null list (kafka-python's None)
    makes a broker that refuses the caller fail building its answer (getErrorResponse walks the
    null list), so the client waits out its timeout instead of hearing CLUSTER_AUTHORIZATION_FAILED.
    """
    try:
        described = retry(admin.describe_user_scram_credentials, [])
    except Exception as exc:  # noqa: BLE001 - a kafka-python error is judged by its errno
        if getattr(exc, "errno", None) is None:
            raise
        raise ScramCallFailed("describe", exc)
    found = []
    for user in users:
        entry = described.get(user) or {}
        if entry.get("error"):
            raise ScramCallFailed("describe", "user %r: %s" % (user, entry["error"]))
        for info in entry.get("credential_infos") or []:
            found.append(Credential(user, mechanism_name(info["mechanism"]), int(info["iterations"])))
    return sorted(found)


def rounds(changes):
    """The changes in requests a broker takes: at most one alteration per user in a request
    (Kafka answers DUPLICATE_RESOURCE for a second one, even of another mechanism)."""
    batches = []
    seen = collections.Counter()
    for change in changes:
        index = seen[change.name]
        seen[change.name] += 1
        if index == len(batches):
            batches.append([])
        batches[index].append(change)
    return batches


def alteration(change, passwords, types):
    """kafka-python's alteration for a Change; ``passwords``: {(name, mechanism): password}.

    kafka-python salts and hashes the password (PBKDF2 with the iterations) here: only the
    salted hash is sent."""
    if change.action == "remove":
        return types.UserScramCredentialDeletion(change.name, change.mechanism)
    return types.UserScramCredentialUpsertion(change.name, change.mechanism, passwords[(change.name, change.mechanism)],
                                              iterations=change.iterations)


def write(admin, changes, wanted, types, retry=_once):
    """Make ``changes``; raises ScramCallFailed naming the refused ones and those already made."""
    passwords = dict((w.key, w.password) for w in wanted if w.state == "present")
    done = []
    for batch in rounds(changes):
        try:
            results = retry(admin.alter_user_scram_credentials, [alteration(c, passwords, types) for c in batch])
        except Exception as exc:  # noqa: BLE001
            if getattr(exc, "errno", None) is None:
                raise
            raise ScramCallFailed("alter", exc, batch, done)
        refused = [c for c in batch if (results or {}).get(c.name)]
        done.extend(c for c in batch if c not in refused)
        if refused:
            raise ScramCallFailed("alter", results[refused[0].name], refused, done)
    return done


# ---------------------------------------------------------------------------- messages

# The controller's ClusterAuthorizationException, the one thing left of a refused alter (kafka-python
# drops the per-user code): "Request Request(processor=..., session=..., buffer=...) needs ALTER
# permission." (Kafka 4), "... is not authorized." (3.x), "Cluster authorization failed." (the default).
_REFUSED = re.compile(r"needs \w+ permission|not authorized|authorization failed", re.IGNORECASE)
# that message names the whole request, sessions and buffers included: its verdict is enough
_REQUEST_DUMP = re.compile(r"^Request Request\(.*\)\s+(?=needs |is not )", re.DOTALL)


def _is_authorization(error):
    """Whether the broker refused the caller: ClusterAuthorizationFailedError (errno 31) from
    describe, the controller's message from alter."""
    if getattr(error, "errno", None) == 31:
        return True
    return not isinstance(error, Exception) and bool(_REFUSED.search(str(error)))


def _error_text(error):
    if isinstance(error, Exception):
        name, message = type(error).__name__, re.sub(r": (None)?$", "", str(error))
        return message if message.startswith("[Error ") or message.startswith(name) else "%s: %s" % (name, message)
    return _REQUEST_DUMP.sub("the request ", str(error))


def change_text(change):
    verb = {"add": "add", "update": "set again", "remove": "remove"}[change.action]
    return "%s %s %s" % (verb, change.name, change.mechanism)


def failure_message(exc, shown, who):
    """The message for a ScramCallFailed on the cluster at ``shown``, the caller being ``who``."""
    if _is_authorization(exc.error):
        if exc.action == "describe":
            msg = ("%s may not describe the SCRAM credentials of the cluster at %s: it needs DESCRIBE on CLUSTER %s "
                   "to read them and ALTER on CLUSTER %s to change them, or to be one of the brokers' super.users (%s)"
                   % (who, shown, CLUSTER_NAME, CLUSTER_NAME, _error_text(exc.error)))
        else:
            msg = ("%s may not alter the SCRAM credentials of the cluster at %s: it needs ALTER on CLUSTER %s, or to be "
                   "one of the brokers' super.users (the cluster answered: %s)"
                   % (who, shown, CLUSTER_NAME, _error_text(exc.error)))
    elif exc.action == "describe":
        msg = "describing the SCRAM credentials of the cluster at %s failed: %s" % (shown, _error_text(exc.error))
    else:
        msg = "altering the SCRAM credentials of the cluster at %s failed for %s: %s" % (
            shown, "; ".join(change_text(c) for c in exc.failed), _error_text(exc.error))
    if exc.done:
        msg += "; done before the failure: %s" % "; ".join(change_text(c) for c in exc.done)
    return msg
