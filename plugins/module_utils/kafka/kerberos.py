# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The broker's own Kerberos (GSSAPI) login: ``kafka_broker_kerberos``, its properties and refusals.

``kafka_broker_kerberos`` is ``{principal, keytab_src, realm, service_name, krb5_conf}``. When it
is set, every SASL listener of the host whose offered mechanisms include GSSAPI (the same lookup
as the inter-broker check of ``kafka_scram``: ``listener.name.<listener>.sasl.enabled.mechanisms``,
else ``sasl.enabled.mechanisms``, else Kafka's default GSSAPI) gets the listener-prefixed login
Kafka reads before any JAAS file (``JaasContext.loadServerContext``)::

    listener.name.<listener>.gssapi.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required \\
        useKeyTab=true storeKey=true keyTab="<config dir>/kafka.keytab" principal="<principal>";

and ``sasl.kerberos.service.name`` is set (the service a broker asks tickets for when it logs in
to its peers and controllers). The listeners in scope are the client listeners of a host with
the broker role and the controller listener of every host: controllers serve it, and brokers and
controllers alike log in to it as clients.

A broker logs in to the inter-broker listener (``sasl.mechanism.inter.broker.protocol``, default
GSSAPI) and to the controller listener (``sasl.mechanism.controller.protocol``, default GSSAPI)
as a client asking for ``<service name>/<peer host>``, while the peer accepts with the key of its
own principal (``SaslServerAuthenticator`` takes the service from the principal's primary): when
this host speaks GSSAPI there, the principal's primary must be the service name.

The keytab is a secret: this module never reads it, and no message shows more than its path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import rules
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.scram import offered_mechanisms
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import settings as _settings, text as _text

VARIABLE = "kafka_broker_kerberos"
KEYS = ("principal", "keytab_src", "realm", "service_name", "krb5_conf")
DEFAULT_SERVICE_NAME = "kafka"
LOGIN_MODULE = "com.sun.security.auth.module.Krb5LoginModule"
GSSAPI = "GSSAPI"
# Each part of primary[/instance]@REALM: what goes between the JAAS value's double quotes safely.
_PART = r"[A-Za-z0-9._-]+"
PRINCIPAL = re.compile(r"^(?P<primary>%s)(?:/(?P<instance>%s))?@(?P<realm>%s)$" % (_PART, _PART, _PART))
NAME = re.compile(r"^%s$" % _PART)
# The path of the unit's Environment line and of the role's other host paths (vars/main.yml).
SAFE_PATH = rules.SAFE_PATH_RE.pattern
# Kafka's default for both client-side mechanisms (BrokerSecurityConfigs, KRaftConfigs).
DEFAULT_CLIENT_MECHANISM = GSSAPI


def service_name(kerberos):
    return _text(_settings(kerberos).get("service_name")) or DEFAULT_SERVICE_NAME


def sasl_listeners(listeners, controller_listener, roles, properties):
    """The SASL listeners this host's server.properties configures, each with what it offers.

    ``[{name, protocol, mechanisms, source, controller}]``: ``source`` says where the mechanisms
    come from (for messages), ``controller`` marks the controller listener.
    """
    scope = [(item, False) for item in (listeners or []) if "broker" in (roles or [])]
    scope.append((controller_listener, True))
    result = []
    for item, controller in scope:
        if not isinstance(item, Mapping) or not _text(item.get("protocol")).startswith("SASL_"):
            continue
        name = _text(item.get("name"))
        mechanisms, source = offered_mechanisms(properties, name)
        result.append({"name": name, "protocol": _text(item.get("protocol")), "mechanisms": mechanisms,
                       "source": source, "controller": controller})
    return result


def jaas_key(listener):
    return "listener.name.%s.gssapi.sasl.jaas.config" % _text(listener).lower()


def jaas_value(principal, keytab):
    return '%s required useKeyTab=true storeKey=true keyTab="%s" principal="%s";' % (LOGIN_MODULE, keytab, principal)


def kerberos_properties(kerberos, keytab, sasl):
    """server.properties keys of the broker's Kerberos login ({} when ``kerberos`` is empty).

    ``keytab`` is the keytab's path on the host, ``sasl`` what ``sasl_listeners`` returns.
    """
    settings = _settings(kerberos)
    if not settings:
        return {}
    props = {"sasl.kerberos.service.name": service_name(settings)}
    for listener in sasl:
        if GSSAPI in listener["mechanisms"]:
            props[jaas_key(listener["name"])] = jaas_value(_text(settings.get("principal")), keytab)
    return props


def _client_logins(sasl, roles, inter_broker_listener, properties):
    """(listener, mechanism key) pairs where this host logs in with GSSAPI as a client."""
    props = {_text(k): v for k, v in (properties or {}).items()}
    logins = []
    for listener in sasl:
        if listener["controller"]:
            key = "sasl.mechanism.controller.protocol"
        elif "broker" in (roles or []) and listener["name"] == _text(inter_broker_listener):
            key = "sasl.mechanism.inter.broker.protocol"
        else:
            continue
        if (_text(props.get(key)).strip() or DEFAULT_CLIENT_MECHANISM) == GSSAPI:
            logins.append((listener["name"], key))
    return logins


def kerberos_faults(kerberos, sasl, roles=None, inter_broker_listener="", properties=None, jaas_config="",
                    safe_path=SAFE_PATH):
    """One message per fault of ``kafka_broker_kerberos`` and of the GSSAPI listeners it serves.

    Unknown keys and wrong types are the argument spec's (``role_vars_check``); a keytab is
    looked for on the controller, where this runs, and only its path is ever shown.
    """
    settings = _settings(kerberos)
    props = {_text(k): v for k, v in (properties or {}).items()}
    gssapi = [listener for listener in sasl if GSSAPI in listener["mechanisms"]]
    if not settings:
        # A login written by hand (a KafkaServer section, or the listener's own key) still counts.
        if LOGIN_MODULE.rsplit(".", 1)[1] in _text(jaas_config):
            return []
        missing = [listener for listener in gssapi if jaas_key(listener["name"]) not in props]
        if not missing:
            return []
        return ["%s: empty, but listener%s %s offer%s GSSAPI (%s); set %s {principal, keytab_src} for the broker's "
                "Kerberos login, or offer other mechanisms there"
                % (VARIABLE, "" if len(missing) == 1 else "s", ", ".join("%s (%s)" % (m["name"], m["protocol"]) for m in missing),
                   "s" if len(missing) == 1 else "", "; ".join(sorted({m["source"] for m in missing})), VARIABLE)]

    faults = []
    principal = _text(settings.get("principal"))
    match = PRINCIPAL.match(principal)
    if not principal:
        faults.append("%s.principal: required when %s is set (the broker's own principal, e.g. "
                      "kafka/broker1.example.com@EXAMPLE.COM)" % (VARIABLE, VARIABLE))
    elif not match:
        faults.append("%s.principal: %r is not a Kerberos principal primary[/instance]@REALM (letters, digits and "
                      ". _ - in each part, e.g. kafka/broker1.example.com@EXAMPLE.COM)" % (VARIABLE, principal))

    realm = _text(settings.get("realm"))
    if realm and not NAME.match(realm):
        faults.append("%s.realm: %r is not a Kerberos realm (letters, digits and . _ -)" % (VARIABLE, realm))
    elif realm and match and match.group("realm") != realm:
        faults.append("%s.realm: the principal %r is not in realm %r; give the principal as primary[/instance]@%s"
                      % (VARIABLE, principal, realm, realm))

    keytab = _text(settings.get("keytab_src"))
    if not keytab:
        faults.append("%s.keytab_src: required when %s is set (the keytab on the controller holding the key of "
                      "the principal; copied to the host)" % (VARIABLE, VARIABLE))
    elif not os.path.isabs(os.path.expanduser(keytab)):
        faults.append("%s.keytab_src: %r is not an absolute path on the controller" % (VARIABLE, keytab))
    elif not os.path.isfile(os.path.expanduser(keytab)):
        faults.append("%s.keytab_src: %s is not a file on the controller" % (VARIABLE, keytab))

    service = service_name(settings)
    if not NAME.match(service):
        faults.append("%s.service_name: %r is not a Kerberos service name (letters, digits and . _ -)"
                      % (VARIABLE, service))
    elif match and match.group("primary") != service:
        for listener, key in _client_logins(sasl, roles, inter_broker_listener, props):
            faults.append(
                "%s.service_name: %s, but the principal %r has the primary %r: this host logs in to listener %s "
                "with GSSAPI (%s) asking for %s/<host>, which the peers' keys of %s/<host> do not answer; name "
                "the principal %s/<host>@REALM or set service_name: %s"
                % (VARIABLE, service, principal, match.group("primary"), listener, key, service,
                   match.group("primary"), service, match.group("primary")))
            break

    krb5_conf = _text(settings.get("krb5_conf"))
    if krb5_conf and not re.match(safe_path, krb5_conf):
        faults.append("%s.krb5_conf: %r is not an absolute path of letters, digits and . _ / @ + -; it goes into "
                      "the unit's Environment line (KAFKA_OPTS=-Djava.security.krb5.conf=...)" % (VARIABLE, krb5_conf))

    derived = ["sasl.kerberos.service.name"] + [jaas_key(listener["name"]) for listener in gssapi]
    for key in sorted(set(derived) & set(props)):
        faults.append("kafka_broker_properties: %s is set by %s; remove it from kafka_broker_properties "
                      "(one home for the broker's Kerberos login)" % (key, VARIABLE))
    return faults
