# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""SCRAM users created with the KRaft bootstrap, and the SASL mechanism a broker speaks to its peers.

The one home of ``kafka-storage.sh format``'s command line (``format_command``) and of the
refusals of ``kafka_broker_scram_users`` and of the inter-broker SASL mechanism
(``scram_user_faults``, ``inter_broker_mechanism_faults``). The role's preflight and its format
task call these through the filters of ``plugins/filter/kafka.py``; tests/live/test_kafka_scram.py
formats a real storage with the command line built here.

What Kafka's ``StorageTool`` / ``ScramParser`` (``metadata/.../storage/ScramParser.java``) do with
``--add-scram 'SCRAM-SHA-512=[name=alice,password=alice-secret]'``:

* the mechanism is what precedes the first ``=``: ``SCRAM-SHA-256`` or ``SCRAM-SHA-512``;
* what follows must start with ``[`` and end with ``]``; the text between is split on *every*
  ``,`` (``String.split``), with no escape, so a ``,`` in a name or password cannot be passed;
* each part is split at its first ``=`` (so ``=`` in a value is kept), and a value that both
  starts and ends with ``"`` loses those two quotes, once. Every value is therefore written
  quoted here: ``password=""x""`` reads back as ``"x"``, a value with a quote at one end or a
  ``]`` inside reads back unchanged;
* ``iterations`` must lie between 4096 and 16384 (``ScramMechanism``), 4096 when absent.

Java decodes its arguments in the locale's character set (``sun.jnu.encoding``); under a C/POSIX
locale a non-ASCII password would be stored as ``?``s while clients send UTF-8, so the format runs
with ``LC_ALL=C.UTF-8`` (``FORMAT_ENVIRONMENT``).

A password passed this way is on the command line while the format runs: the format task is
``no_log`` whenever users are given, and ``scrub`` removes the passwords from its output before a
failure is shown.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import as_list
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import text as _text

MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
DEFAULT_MECHANISM = "SCRAM-SHA-512"
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384
FORMAT_ENVIRONMENT = {"LC_ALL": "C.UTF-8"}
MASK = "********"
USERS_VARIABLE = "kafka_broker_scram_users"
# Kafka's defaults (BrokerSecurityConfigs) when server.properties does not set them.
DEFAULT_ENABLED_MECHANISMS = "GSSAPI"
DEFAULT_INTER_BROKER_MECHANISM = "GSSAPI"
ADMIN_API_HINT = ("add such a user after the first start with the Admin API "
                  "(the kafka_scram_user module), which takes any string")


def _mechanism(user):
    return _text(user.get("mechanism")) or DEFAULT_MECHANISM


def _iterations(value):
    """The iteration count as an int, or None when it is not one (bools are not counts)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = _text(value).strip()
    return int(text) if text.isdigit() else None


def _users(users):
    return [u for u in (users or []) if isinstance(u, Mapping)]


def scram_user_faults(users, variable=USERS_VARIABLE, command_line=True):
    """One message per fault of a list of {name, password, mechanism, iterations}, naming the item.

    Passwords are never shown: a fault in one names the item and the rule only.  With
    ``command_line=False`` (credentials sent through the Admin API, which takes any string) the
    refusals that only ``--add-scram`` and a command line need (a ``,``, a NUL) are left out.
    """
    faults = []
    if users is None:
        return faults
    if not isinstance(users, (list, tuple)):
        return ["%s: must be a list of {name, password, mechanism}, got %s" % (variable, type(users).__name__)]
    seen = {}
    for idx, user in enumerate(users):
        where = "%s[%d]" % (variable, idx)
        if not isinstance(user, Mapping):
            faults.append("%s: must be a mapping {name, password, mechanism}, got %s" % (where, type(user).__name__))
            continue
        name, password, mechanism = _text(user.get("name")), _text(user.get("password")), _mechanism(user)
        if not name.strip():
            faults.append("%s.name: empty" % where)
        elif command_line and "," in name:
            faults.append("%s.name: %r holds a ',', which kafka-storage.sh format --add-scram cannot pass (it splits "
                          "its argument on every ',' and has no escape); %s" % (where, name, ADMIN_API_HINT))
        elif command_line and "\0" in name:
            faults.append("%s.name: %r holds a NUL character, which no command line can carry" % (where, name))
        if not password:
            faults.append("%s.password: empty (SCRAM password empty for user %r)" % (where, name))
        elif command_line and "," in password:
            faults.append("%s.password: holds a ',', which kafka-storage.sh format --add-scram cannot pass (it splits "
                          "its argument on every ',' and has no escape); choose another password or %s"
                          % (where, ADMIN_API_HINT))
        elif command_line and "\0" in password:
            faults.append("%s.password: holds a NUL character, which no command line can carry" % where)
        if mechanism not in MECHANISMS:
            faults.append("%s.mechanism: %r is not one of %s" % (where, mechanism, ", ".join(MECHANISMS)))
        if user.get("iterations") is not None:
            count = _iterations(user.get("iterations"))
            if count is None or not MIN_ITERATIONS <= count <= MAX_ITERATIONS:
                faults.append("%s.iterations: %r is not a whole number from %d to %d (Kafka's bounds for %s)"
                              % (where, user.get("iterations"), MIN_ITERATIONS, MAX_ITERATIONS, mechanism))
        key = (name, mechanism)
        if name.strip() and key in seen:
            faults.append("%s: user %r with %s is already %s[%d]" % (where, name, mechanism, variable, seen[key]))
        seen.setdefault(key, idx)
    return faults


def _quoted(value):
    # ScramParser strips one pair of surrounding double quotes, whatever is inside.
    return '"%s"' % value


def add_scram_args(users):
    """``['--add-scram', 'SCRAM-SHA-512=[name="alice",password="..."]', ...]``, one pair per user.

    Raises ValueError naming the fault when the users would be refused by ``scram_user_faults``:
    the preflight shows those faults first, this is the last guard before a command line is built.
    """
    faults = scram_user_faults(users)
    if faults:
        raise ValueError("; ".join(faults))
    args = []
    for user in users or []:
        parts = ["name=" + _quoted(_text(user["name"])), "password=" + _quoted(_text(user["password"]))]
        if user.get("iterations") is not None:
            parts.append("iterations=%d" % _iterations(user["iterations"]))
        args.extend(["--add-scram", "%s=[%s]" % (_mechanism(user), ",".join(parts))])
    return args


def format_command(script, cluster_id, config, users=None, run_as=None):
    """{argv, environment} of the one-time ``kafka-storage.sh format`` of a KRaft node.

    ``script`` is the path of kafka-storage.sh, ``config`` that of server.properties; ``users`` the
    SCRAM users to create in the cluster's bootstrap metadata; ``run_as`` a user to run it as
    (through ``runuser``, so the formatted files belong to the service user).
    """
    argv = ["runuser", "-u", str(run_as), "--"] if run_as else []
    argv += [str(script), "format", "--cluster-id", str(cluster_id), "--config", str(config)]
    argv += add_scram_args(users)
    return {"argv": argv, "environment": dict(FORMAT_ENVIRONMENT)}


def scrub(text, users):
    """``text`` with every password of ``users`` replaced by ``MASK`` (for a failed format's output)."""
    text = _text(text)
    for password in sorted({_text(u.get("password")) for u in _users(users)} - {""}, key=len, reverse=True):
        text = text.replace(password, MASK)
    return text


def _protocol_map(listeners):
    return {_text(item.get("name")): _text(item.get("protocol")) for item in listeners or [] if isinstance(item, Mapping)}


def offered_mechanisms(properties, listener):
    """(mechanisms, where they come from) that the SASL listener named ``listener`` offers.

    ``listener.name.<listener>.sasl.enabled.mechanisms`` (lower-case listener name, the only
    spelling Kafka reads), else ``sasl.enabled.mechanisms``, else Kafka's default (GSSAPI).
    """
    props = {_text(k): v for k, v in (properties or {}).items()}
    listener_key = "listener.name.%s.sasl.enabled.mechanisms" % _text(listener).lower()
    if listener_key in props:
        return as_list(props[listener_key]), listener_key
    if "sasl.enabled.mechanisms" in props:
        return as_list(props["sasl.enabled.mechanisms"]), "sasl.enabled.mechanisms"
    return [DEFAULT_ENABLED_MECHANISMS], "sasl.enabled.mechanisms not set: Kafka's default"


def inter_broker_mechanism_faults(listeners, inter_broker_listener, properties, variable="kafka_broker_properties"):
    """Refuse an inter-broker SASL mechanism that the inter-broker listener does not offer.

    When the inter-broker listener is SASL_PLAINTEXT or SASL_SSL, a broker logs in to its peers with
    ``sasl.mechanism.inter.broker.protocol`` (default GSSAPI), and the listener accepts only the
    mechanisms of ``listener.name.<listener>.sasl.enabled.mechanisms``, else of
    ``sasl.enabled.mechanisms`` (default GSSAPI). Kafka reads the listener-prefixed key under the
    lower-case listener name only (``ListenerName.configPrefix``), so an upper-case prefix is
    refused too: it would be ignored.
    """
    props = {_text(k): v for k, v in (properties or {}).items()}
    name = _text(inter_broker_listener)
    protocol = _protocol_map(listeners).get(name, "")
    faults = []
    for key in sorted(props):
        head, sep, rest = key.partition(".sasl.enabled.mechanisms")
        if sep and not rest and head.startswith("listener.name.") and head != head.lower():
            faults.append("%s: %s is never read: Kafka looks listener settings up under the lower-case listener "
                          "name (%s.sasl.enabled.mechanisms)" % (variable, key, head.lower()))
    if not protocol.startswith("SASL_"):
        return faults
    mechanism = _text(props.get("sasl.mechanism.inter.broker.protocol")).strip()
    source = "sasl.mechanism.inter.broker.protocol is %s" % mechanism
    if not mechanism:
        mechanism = DEFAULT_INTER_BROKER_MECHANISM
        source = "sasl.mechanism.inter.broker.protocol is not set (Kafka's default %s)" % mechanism
    offered, where = offered_mechanisms(props, name)
    if mechanism not in offered:
        faults.append("%s: %s, but the inter-broker listener %s (%s) does not offer it: it offers %s (%s); add %s "
                      "there or name a mechanism it offers"
                      % (variable, source, name, protocol, ", ".join(offered) or "nothing", where, mechanism))
    return faults
