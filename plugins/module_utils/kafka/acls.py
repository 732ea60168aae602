# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Kafka ACL bindings for the ``kafka_acl`` module: checked input, what to create and delete, text.

A binding is a ``Binding`` (principal, host, operation, permission, resource type, name and
pattern type), every field a string in Kafka's upper-case names, so bindings compare and hash
as values and the module's set arithmetic is plain Python.

Pure functions, standard library only at import time.  The calls to the cluster take a kafka-python
(3.x) ``KafkaAdminClient`` and the module ``kafka.admin`` (its ACL types) as arguments, or anything
that answers the same, so the module can report a missing library with ``missing_required_lib``
and unit tests can pass fakes:

* ``admin.describe_acls(ACLFilter)`` -> ``([ACL], error)``; raises the broker's error
  (``SecurityDisabledError`` without an authorizer, ``ClusterAuthorizationFailedError``);
* ``admin.create_acls([ACL])`` -> ``{"succeeded": [ACL], "failed": [error class]}``;
* ``admin.delete_acls([ACLFilter])`` -> ``[(ACLFilter, [ACL matched], error class)]``.
"""

from __future__ import annotations

import collections
import ipaddress
import re

CLUSTER_NAME = "kafka-cluster"
WILDCARD_HOST = "*"
OPERATIONS = ("ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS",
              "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS")
PERMISSIONS = ("ALLOW", "DENY")
RESOURCE_TYPES = ("TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER")
PATTERN_TYPES = ("LITERAL", "PREFIXED")
# The operations each resource type has, besides ALL: Kafka's own table
# (org.apache.kafka.security.authorizer.AclEntry.supportedOperations, read from the bytecode of
# Kafka 4.3.1's kafka-server jar), which kafka-acls.sh checks before it adds a binding; the broker
# itself would store a binding that can never match a request.  Kafka 4's TWO_PHASE_COMMIT
# (TRANSACTIONAL_ID, KIP-939) is left out: kafka-python 3.0 has no name for it.
SUPPORTED_OPERATIONS = {
    "TOPIC": ("READ", "WRITE", "CREATE", "DESCRIBE", "DELETE", "ALTER", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"),
    "GROUP": ("READ", "DESCRIBE", "DELETE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"),
    "CLUSTER": ("CREATE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "ALTER",
                "DESCRIBE"),
    "TRANSACTIONAL_ID": ("DESCRIBE", "WRITE"),
    "DELEGATION_TOKEN": ("DESCRIBE",),
    "USER": ("CREATE_TOKENS", "DESCRIBE_TOKENS"),
}

KEYS = ("principal", "host", "operation", "permission", "resource_type", "resource_name", "pattern_type")
REQUIRED = ("principal", "operation", "resource_type", "resource_name")
DEFAULTS = {"host": WILDCARD_HOST, "permission": "ALLOW", "pattern_type": "LITERAL"}
# key -> the names it takes
_CHOICES = {"operation": OPERATIONS, "permission": PERMISSIONS, "resource_type": RESOURCE_TYPES,
            "pattern_type": PATTERN_TYPES}

Binding = collections.namedtuple("Binding", KEYS)


def _name(value):
    """Kafka's upper-case name for how a user may write it: read, Read, DescribeConfigs, describe-configs."""
    split = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", value.strip())
    return re.sub(r"[-\s]+", "_", split).upper()


def _one_of(names):
    return " or ".join(names) if len(names) == 2 else "one of " + ", ".join(names)


def _field_errors(where, key, value):
    """(normalised value, errors) of one key of one binding."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None, ["%s.%s: must be a string, not %s" % (where, key, type(value).__name__)]
    given = str(value)
    if key in _CHOICES:
        name = _name(given)
        if name not in _CHOICES[key]:
            return None, ["%s.%s: %r is not %s" % (where, key, value, _one_of(_CHOICES[key]))]
        return name, []
    if key == "principal":
        if not given.startswith("User:"):
            return None, ["%s.principal: %r does not start with User: (a principal is User:<name>, e.g. User:mm2, "
                          "or User:* for every user)" % (where, value)]
        if not given[len("User:"):].strip():
            return None, ["%s.principal: %r has no name after User:" % (where, value)]
        return given, []
    if key == "host":
        if given != WILDCARD_HOST:
            try:
                ipaddress.ip_address(given)
            except ValueError:
                return None, ["%s.host: %r is not * or an IP address (Kafka matches the client's address, not a "
                              "host name)" % (where, value)]
        return given, []
    # resource_name
    if not given.strip():
        return None, ["%s.resource_name: must not be blank" % where]
    return given, []


def _binding_errors(where, fields):
    """The faults between the keys of one binding whose keys are each valid."""
    errors = []
    resource_type, operation = fields["resource_type"], fields["operation"]
    if resource_type == "CLUSTER":
        if fields["resource_name"] != CLUSTER_NAME:
            errors.append("%s.resource_name: %r is not %s, the one name of a CLUSTER resource"
                          % (where, fields["resource_name"], CLUSTER_NAME))
        if fields["pattern_type"] != "LITERAL":
            errors.append("%s.pattern_type: %s does not apply to CLUSTER (its one resource is LITERAL %s)"
                          % (where, fields["pattern_type"], CLUSTER_NAME))
    supported = SUPPORTED_OPERATIONS[resource_type]
    if operation != "ALL" and operation not in supported:
        errors.append("%s.operation: %s does not apply to a %s resource (it takes %s)"
                      % (where, operation, resource_type, ", ".join(("ALL",) + supported)))
    return errors


def normalise(acls):
    """(bindings, errors) for the module's ``acls``: bindings in the order given, each once.

    Every error names ``acls[i].<key>`` and the value at fault.  A key whose value is null counts
    as not given.
    """
    if not isinstance(acls, list):
        return [], ["acls: must be a list of bindings, not %s" % type(acls).__name__]
    if not acls:
        return [], ["acls: must list at least one binding"]
    bindings, errors = [], []
    for i, item in enumerate(acls):
        where = "acls[%d]" % i
        if not isinstance(item, dict):
            errors.append("%s: must be a mapping with %s, not %s" % (where, ", ".join(REQUIRED), type(item).__name__))
            continue
        fields, faults = {}, []
        for key in item:
            if key not in KEYS:
                faults.append("%s.%s: not a key of a binding (it takes %s)" % (where, key, ", ".join(KEYS)))
        for key in KEYS:
            value = item.get(key)
            if value is None:
                if key in REQUIRED:
                    faults.append("%s.%s: required" % (where, key))
                else:
                    fields[key] = DEFAULTS[key]
                continue
            fields[key], field_faults = _field_errors(where, key, value)
            faults.extend(field_faults)
        if not faults:
            faults = _binding_errors(where, fields)
        if faults:
            errors.extend(faults)
            continue
        binding = Binding(**fields)
        if binding not in bindings:
            bindings.append(binding)
    return bindings, errors


def text(binding):
    """One line: ``User:mm2 ALLOW READ TOPIC:LITERAL:orders @*``."""
    return "%s %s %s %s:%s:%s @%s" % (binding.principal, binding.permission, binding.operation, binding.resource_type,
                                      binding.pattern_type, binding.resource_name, binding.host)


def ordered(bindings):
    """The bindings sorted by their text, so lists and diffs read the same from run to run."""
    return sorted(set(bindings), key=text)


def as_dicts(bindings):
    return [dict(binding._asdict()) for binding in ordered(bindings)]


def resource(binding):
    """(resource type, pattern type, name): what exclusive compares."""
    return binding.resource_type, binding.pattern_type, binding.resource_name


def principals(bindings):
    return sorted(set(binding.principal for binding in bindings))


def plan(wanted, existing, state, exclusive=False):
    """(to create, to delete), each sorted, for ``wanted`` against ``existing`` (the bindings the
    cluster has for the principals of ``wanted``).

    present: create what is missing. With ``exclusive``, also delete the bindings of a principal
    on a resource (type, pattern type, name) that ``wanted`` names for that same principal and
    that ``wanted`` does not list: never a binding of a principal on a resource ``wanted`` does
    not pair it with.  absent: delete what of ``wanted`` exists.
    """
    wanted, existing = set(wanted), set(existing)
    if state == "absent":
        return [], ordered(wanted & existing)
    remove = []
    if exclusive:
        pairs = set((binding.principal, resource(binding)) for binding in wanted)
        remove = [b for b in existing - wanted if (b.principal, resource(b)) in pairs]
    return ordered(wanted - existing), ordered(remove)


def after(existing, add, remove):
    """The bindings once ``add`` created and ``remove`` deleted, sorted."""
    return ordered((set(existing) - set(remove)) | set(add))


def diff(before, after_, concerned):
    """Ansible's diff: one line per binding, before and after, for the principals concerned."""
    header = "ACLs of %s" % ", ".join(concerned)
    return {"before": "".join(text(b) + "\n" for b in ordered(before)),
            "after": "".join(text(b) + "\n" for b in ordered(after_)),
            "before_header": header, "after_header": header}


# ---------------------------------------------------------------------------- kafka-python's types

def from_acl(acl):
    """A Binding from kafka-python's ACL."""
    pattern = acl.resource_pattern
    return Binding(acl.principal, acl.host, acl.operation.name, acl.permission_type.name,
                   pattern.resource_type.name, pattern.resource_name, pattern.pattern_type.name)


def to_acl(binding, types):
    """kafka-python's ACL (``types`` is kafka.admin) for a Binding."""
    return types.ACL(principal=binding.principal, host=binding.host, operation=types.ACLOperation[binding.operation],
                     permission_type=types.ACLPermissionType[binding.permission],
                     resource_pattern=types.ResourcePattern(types.ResourceType[binding.resource_type],
                                                            binding.resource_name,
                                                            types.ACLResourcePatternType[binding.pattern_type]))


def to_filter(binding, types):
    """kafka-python's ACLFilter that matches ``binding`` and nothing else."""
    return types.ACLFilter(principal=binding.principal, host=binding.host,
                           operation=types.ACLOperation[binding.operation],
                           permission_type=types.ACLPermissionType[binding.permission],
                           resource_pattern=types.ResourcePatternFilter(
                               types.ResourceType[binding.resource_type], binding.resource_name,
                               types.ACLResourcePatternType[binding.pattern_type]))


def principal_filter(principal, types):
    """kafka-python's ACLFilter for every binding of ``principal``, on any resource and host."""
    return types.ACLFilter(principal=principal, host=None, operation=types.ACLOperation.ANY,
                           permission_type=types.ACLPermissionType.ANY,
                           resource_pattern=types.ResourcePatternFilter(types.ResourceType.ANY, None,
                                                                        types.ACLResourcePatternType.ANY))


# ---------------------------------------------------------------------------- calls to the cluster

class AclCallFailed(Exception):
    """The cluster refused a call, or kafka-python could not read its answer.  ``action``: describe,
    create or delete; ``error``: kafka-python's error (an instance when raised, a class when a
    create or delete result carries it); ``failed``: the bindings it concerns; ``done``: the
    bindings the same call did write."""

    def __init__(self, action, error, failed=(), done=(), unreadable=None):
        Exception.__init__(self, action, error)
        self.action, self.error, self.failed, self.done = action, error, list(failed), list(done)
        # the principal whose bindings kafka-python could not read
        self.unreadable = unreadable


def _errno(error):
    return getattr(error, "errno", None)


def _once(fn, *args, **kwargs):
    return fn(*args, **kwargs)


def read(admin, concerned, types, retry=_once):
    """The bindings the cluster has for the principals ``concerned``, one describe per principal."""
    found = set()
    for principal in concerned:
        try:
            acls, _no_error = retry(admin.describe_acls, principal_filter(principal, types))
        except ValueError as exc:
            # kafka-python turns each binding's codes into its enums: a code it has no name for
            # (Kafka 4's TWO_PHASE_COMMIT operation, 15) fails the whole answer
            raise AclCallFailed("describe", exc, [], [], principal)
        except Exception as exc:  # noqa: BLE001 - a kafka-python error is judged by its errno
            if _errno(exc) is None:
                raise
            raise AclCallFailed("describe", exc)
        found.update(from_acl(acl) for acl in acls if acl.principal == principal)
    return found


def create(admin, bindings, types, retry=_once):
    """Create ``bindings``; raises AclCallFailed naming those the cluster refused."""
    if not bindings:
        return
    acls = [to_acl(binding, types) for binding in bindings]
    try:
        result = retry(admin.create_acls, acls)
    except Exception as exc:  # noqa: BLE001
        if _errno(exc) is None:
            raise
        raise AclCallFailed("create", exc, bindings)
    succeeded = set(from_acl(acl) for acl in result.get("succeeded") or [])
    failed = [binding for binding in bindings if binding not in succeeded]
    if failed:
        errors = result.get("failed") or [None]
        raise AclCallFailed("create", errors[0], failed, [b for b in bindings if b in succeeded])


def delete(admin, bindings, types, retry=_once):
    """Delete ``bindings``, each by a filter that matches it alone; raises AclCallFailed naming
    those whose filter the cluster refused."""
    if not bindings:
        return
    try:
        results = retry(admin.delete_acls, [to_filter(binding, types) for binding in bindings])
    except Exception as exc:  # noqa: BLE001
        if _errno(exc) is None:
            raise
        raise AclCallFailed("delete", exc, bindings)
    failed, error = [], None
    for binding, (_filter, _matched, result_error) in zip(bindings, results):
        if _errno(result_error):
            failed.append(binding)
            error = error or result_error
    if failed:
        raise AclCallFailed("delete", error, failed, [b for b in bindings if b not in failed])


# ---------------------------------------------------------------------------- messages

def _error_name(error):
    return error.__name__ if isinstance(error, type) else type(error).__name__


def _error_text(error):
    if error is None:
        return "no reason given"
    if isinstance(error, type):
        return "[Error %s] %s" % (getattr(error, "errno", "?"), error.__name__)
    name, message = type(error).__name__, str(error)
    # kafka-python words a broker's error without a message "[Error 31] ClusterAuthorizationFailedError: None"
    message = re.sub(r": (None)?$", "", message)
    return message if message.startswith("[Error ") or message.startswith(name) else "%s: %s" % (name, message)


def failure_message(exc, shown, who):
    """The message for an AclCallFailed on the cluster at ``shown`` (bootstrap servers), the caller
    being ``who`` (a principal, or how the cluster will know it)."""
    name = _error_name(exc.error)
    if exc.unreadable:
        return ("the cluster at %s holds a binding of %s that this kafka-python cannot read, an operation, "
                "resource or pattern type it has no name for (such as Kafka 4's TWO_PHASE_COMMIT): %s"
                % (shown, exc.unreadable, _error_text(exc.error)))
    if name == "SecurityDisabledError":
        return ("the cluster at %s has no authorizer (authorizer.class.name), so it keeps no ACLs: set "
                "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer on its brokers and "
                "controllers (%s)" % (shown, _error_text(exc.error)))
    if name == "ClusterAuthorizationFailedError":
        if exc.action == "describe":
            msg = ("%s may not describe the ACLs of the cluster at %s: it needs DESCRIBE on CLUSTER %s to read them "
                   "and ALTER on CLUSTER %s to change them, or to be one of the brokers' super.users (%s)"
                   % (who, shown, CLUSTER_NAME, CLUSTER_NAME, _error_text(exc.error)))
        else:
            msg = ("%s may not %s ACLs on the cluster at %s: it needs ALTER on CLUSTER %s, or to be one of the "
                   "brokers' super.users (%s)" % (who, exc.action, shown, CLUSTER_NAME, _error_text(exc.error)))
    else:
        verb = {"describe": "describing", "create": "creating", "delete": "deleting"}[exc.action]
        msg = "%s ACLs on the cluster at %s failed" % (verb, shown)
        if exc.failed:
            msg += " for %s" % "; ".join(text(b) for b in ordered(exc.failed))
        msg += ": %s" % _error_text(exc.error)
    if exc.done:
        done = "created" if exc.action == "create" else "deleted"
        msg += "; %s before the failure: %s" % (done, "; ".join(text(b) for b in ordered(exc.done)))
    return msg
