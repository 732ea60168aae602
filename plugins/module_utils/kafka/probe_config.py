# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The client settings of a broker's health probe, taken from the broker's own server.properties.

A broker is healthy when the cluster metadata lists it under its node id; the kafka_broker role
asks with ``kafka-broker-api-versions.sh`` (``kafka-metadata-quorum.sh`` on a controller-only
node) on the probe listener: the inter-broker listener, or the controller listener. On a secured
listener that tool needs a ``--command-config`` file, and the one login that surely works there
is the broker's own: the mechanism it logs in to its peers with and the login it does so with.
``probe_config`` builds that file's properties from the broker's merged server.properties (the
role's ``__kafka_broker_server_properties``, with kafka_broker_kerberos's and kafka_broker_tls's
keys), so the probe cannot drift from what the broker does. It is pure: it reads no file and
shows no secret.

Where each setting comes from (Kafka's lookups, ``JaasContext.loadServerContext``,
``ListenerName.configPrefix``, ``BrokerSecurityConfigs``):

* the mechanism: on the inter-broker listener ``sasl.mechanism.inter.broker.protocol``, on a
  controller listener ``sasl.mechanism.controller.protocol`` (both default GSSAPI); on another
  listener the first mechanism it offers that the broker has a login for;
* the login: ``listener.name.<listener>.<mechanism>.sasl.jaas.config`` (lower case). A login
  that only a JAAS file's ``KafkaServer`` section holds (kafka_broker_jaas_config) cannot serve:
  a client reads ``KafkaClient``, so such a probe is refused, naming what to set instead. For
  SCRAM and PLAIN the broker's login line carries ``username``/``password``, which the client
  login modules read the same way; for GSSAPI it is the Krb5LoginModule line with the broker's
  keytab and principal, plus ``sasl.kerberos.service.name`` (else the principal's primary, the
  service the broker accepts tickets for) and, in the probe's environment,
  ``-Djava.security.krb5.conf`` when the broker is given one;
* TLS (SSL, SASL_SSL): the trust store (``listener.name.<listener>.ssl.truststore.*``, else
  ``ssl.truststore.*``; PEM included), the host name check and protocol settings, and the key
  store only when the listener requires client certificates (``ssl.client.auth=required``).

The result holds secrets (passwords, key store passwords, the keytab's path): the role writes it
root-only and never logs it. Refusals name the variable and the keys, never a value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.scram import offered_mechanisms
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import text as _text

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
GSSAPI = "GSSAPI"
# Mechanisms whose broker login line is also a working client login line.
MECHANISMS = (GSSAPI, "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
# Kafka's default for the client-side mechanisms of a broker (BrokerSecurityConfigs, KRaftConfigs).
DEFAULT_CLIENT_MECHANISM = GSSAPI
PROPERTIES_VARIABLE = "kafka_broker_properties"
LISTENERS_VARIABLE = "kafka_broker_listeners"
KERBEROS_VARIABLE = "kafka_broker_kerberos"
# The broker's inter-broker client reads these from its own configuration; the probe must too, or
# it would check a certificate (or a TLS version) the broker itself does not.
TLS_KEYS = ("ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
            "ssl.truststore.certificates", "ssl.protocol", "ssl.enabled.protocols", "ssl.cipher.suites",
            "ssl.provider")
KEYSTORE_KEYS = ("ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password",
                 "ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.key.password")
_PRINCIPAL = re.compile(r'\bprincipal\s*=\s*"?(?P<primary>[^/@"\s;]+)')


def _props(properties):
    return {_text(k): _text(v) for k, v in (properties or {}).items()} if isinstance(properties, Mapping) else {}


def _listener_value(props, listener, key):
    """Kafka's lookup of a listener setting: the lower-case ``listener.name.<l>.`` prefix first."""
    prefixed = "listener.name.%s.%s" % (listener.lower(), key)
    if prefixed in props:
        return props[prefixed]
    return props.get(key)


def jaas_key(listener, mechanism):
    return "listener.name.%s.%s.sasl.jaas.config" % (listener.lower(), mechanism.lower())


def _controller_listeners(props):
    return [name.strip() for name in props.get("controller.listener.names", "").split(",") if name.strip()]


def _mechanism(props, listener, offered):
    """(mechanism, why) the broker logs in with on ``listener``: None when it has no login there."""
    for key, applies in (("sasl.mechanism.controller.protocol", listener in _controller_listeners(props)),
                         ("sasl.mechanism.inter.broker.protocol", listener == props.get("inter.broker.listener.name"))):
        if applies:
            chosen = props.get(key, "").strip()
            if chosen:
                return chosen, "%s is %s" % (key, chosen)
            return DEFAULT_CLIENT_MECHANISM, "%s is not set (Kafka's default %s)" % (key, DEFAULT_CLIENT_MECHANISM)
    for mechanism in offered:
        if jaas_key(listener, mechanism) in props:
            return mechanism, "the first mechanism listener %s offers with a login of the broker" % listener
    return None, ""


def _sasl(props, listener, protocol, krb5_conf):
    """(client properties, environment, refusal) of the broker's own SASL login on ``listener``."""
    offered, where = offered_mechanisms(props, listener)
    mechanism, why = _mechanism(props, listener, offered)
    place = "listener %s (%s)" % (listener, protocol)
    if mechanism is None:
        return None, None, (
            "%s: the health probe logs in to %s as the broker does, but the broker has a login for none of the "
            "mechanisms it offers (%s: %s): no %s; set one in %s (%s for GSSAPI)"
            % (PROPERTIES_VARIABLE, place, where, ", ".join(offered) or "none",
               " or ".join(jaas_key(listener, m) for m in offered) or jaas_key(listener, "<mechanism>"),
               PROPERTIES_VARIABLE, KERBEROS_VARIABLE))
    if mechanism not in offered:
        return None, None, (
            "%s: the health probe logs in to %s with %s (%s), which the listener does not offer (%s: %s); "
            "offer it there or name one it offers" % (PROPERTIES_VARIABLE, place, mechanism, why, where,
                                                      ", ".join(offered) or "none"))
    if mechanism not in MECHANISMS:
        return None, None, (
            "%s: the health probe logs in to %s with %s (%s), but it can log in only with %s, whose broker login "
            "line is also a client's; make the probe listener's broker login one of those"
            % (LISTENERS_VARIABLE, place, mechanism, why, ", ".join(MECHANISMS)))
    key = jaas_key(listener, mechanism)
    login = props.get(key, "").strip()
    if not login:
        hint = ("set %s {principal, keytab_src}" % KERBEROS_VARIABLE if mechanism == GSSAPI
                else "set %s in %s" % (key, PROPERTIES_VARIABLE))
        return None, None, (
            "%s: the health probe logs in to %s as the broker does, with %s (%s), but server.properties has no %s "
            "(a login only in kafka_broker_jaas_config's KafkaServer section serves the broker, not a client); %s"
            % (PROPERTIES_VARIABLE if mechanism != GSSAPI else KERBEROS_VARIABLE, place, mechanism, why, key, hint))
    client = {"sasl.mechanism": mechanism, "sasl.jaas.config": login}
    environment = {}
    if mechanism == GSSAPI:
        service = (_listener_value(props, listener, "gssapi.sasl.kerberos.service.name")
                   or props.get("sasl.kerberos.service.name", "")).strip()
        if not service:
            match = _PRINCIPAL.search(login)
            service = match.group("primary") if match else ""
        if not service:
            return None, None, (
                "%s: the health probe logs in to %s with GSSAPI, but neither sasl.kerberos.service.name nor a "
                "principal in %s names the service to ask tickets for; set service_name in %s"
                % (KERBEROS_VARIABLE, place, key, KERBEROS_VARIABLE))
        client["sasl.kerberos.service.name"] = service
        if _text(krb5_conf):
            environment["KAFKA_OPTS"] = "-Djava.security.krb5.conf=%s" % _text(krb5_conf)
    return client, environment, ""


def _tls(props, listener, protocol):
    """(client properties, refusal) of TLS on ``listener`` as the broker's own client sees it."""
    client = {}
    for key in TLS_KEYS:
        value = _listener_value(props, listener, key)
        if value:
            client[key] = value
    # An empty algorithm is meaningful: the broker turned host name checks off, and so must the probe.
    algorithm = _listener_value(props, listener, "ssl.endpoint.identification.algorithm")
    if algorithm is not None:
        client["ssl.endpoint.identification.algorithm"] = algorithm
    if (_listener_value(props, listener, "ssl.client.auth") or "").strip().lower() == "required":
        keystore = {}
        for key in KEYSTORE_KEYS:
            value = _listener_value(props, listener, key)
            if value:
                keystore[key] = value
        if "ssl.keystore.location" not in keystore and "ssl.keystore.key" not in keystore:
            return None, (
                "%s: listener %s (%s) requires client certificates (ssl.client.auth=required), but server.properties "
                "has no key store the health probe could present (listener.name.%s.ssl.keystore.location or "
                "ssl.keystore.location)" % (PROPERTIES_VARIABLE, listener, protocol, listener.lower()))
        client.update(keystore)
    return client, ""


def probe_config(properties, listener, krb5_conf=""):
    """What the health probe needs to ask ``listener`` as the broker itself would.

    ``properties``: the broker's merged server.properties (a dict); ``listener``: ``{name,
    protocol}`` of the probe listener; ``krb5_conf``: the krb5.conf the broker is started with
    (kafka_broker_kerberos.krb5_conf, may be empty). Returns ``{properties, environment, refusal}``:
    the client properties (``{}`` on a PLAINTEXT listener, which needs none), the environment of
    the probe command, and the reason the probe cannot be built (``properties`` is then None).
    """
    props = _props(properties)
    item = listener if isinstance(listener, Mapping) else {}
    name, protocol = _text(item.get("name")), _text(item.get("protocol"))
    if protocol not in PROTOCOLS:
        return {"properties": None, "environment": {}, "refusal": (
            "%s: the health probe's listener %s has protocol %r, not one of %s"
            % (LISTENERS_VARIABLE, name, protocol, ", ".join(PROTOCOLS)))}
    if protocol == "PLAINTEXT":
        return {"properties": {}, "environment": {}, "refusal": ""}
    client = {"security.protocol": protocol}
    environment = {}
    if protocol.startswith("SASL_"):
        sasl, environment, refusal = _sasl(props, name, protocol, krb5_conf)
        if refusal:
            return {"properties": None, "environment": {}, "refusal": refusal}
        client.update(sasl)
    if protocol.endswith("SSL"):
        tls, refusal = _tls(props, name, protocol)
        if refusal:
            return {"properties": None, "environment": {}, "refusal": refusal}
        client.update(tls)
    return {"properties": client, "environment": environment, "refusal": ""}


def probe_properties(properties, listener, krb5_conf=""):
    """The probe's client properties, or None when it cannot be built (``probe_config``'s refusal)."""
    return probe_config(properties, listener, krb5_conf)["properties"]
