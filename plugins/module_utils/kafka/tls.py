# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The broker's TLS on its SSL and SASL_SSL listeners: ``kafka_broker_tls``, its properties and refusals.

``kafka_broker_tls`` is ``{keystore_src, truststore_src, key_password, client_auth}``: a PEM key
store (the private key, PKCS#8, then the certificate chain, in one file) and a PEM CA bundle on the
controller, which the role copies to the host. When it is set, server.properties gets the global
keys Kafka applies to every SSL and SASL_SSL listener, on the server side and when the broker dials
its peers and controllers::

    ssl.keystore.type=PEM
    ssl.keystore.location=<config dir>/tls/keystore.pem
    ssl.truststore.type=PEM
    ssl.truststore.location=<config dir>/tls/truststore.pem
    ssl.key.password=<key_password>          (only for an encrypted key)
    ssl.client.auth=<client_auth>

plus ``listener.name.<listener>.ssl.client.auth`` for each SASL_SSL listener the host serves:
Kafka applies ``ssl.client.auth`` to a SASL_SSL listener only when it is listener-prefixed
(``ChannelBuilders.create``), and would otherwise silently ask no certificate there.

The listeners in scope are those of ``kafka_kerberos.sasl_listeners``: the client listeners of a
host with the broker role, which it serves, and the controller listener of every host, which a
controller serves and every node dials.

What Kafka's PEM stores accept (``DefaultSslEngineFactory``): exactly one private key, PKCS#8
(``BEGIN PRIVATE KEY``, or ``BEGIN ENCRYPTED PRIVATE KEY`` with ``ssl.key.password``), at least one
certificate, no store password. The files are checked on the controller, where this runs, by
their ``-----BEGIN`` lines only: no message shows more than a path and a block's label, and the
key store's bytes never leave this module.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import settings as _settings, text as _text

VARIABLE = "kafka_broker_tls"
PROPERTIES_VARIABLE = "kafka_broker_properties"
KEYS = ("keystore_src", "truststore_src", "key_password", "client_auth")
CLIENT_AUTH = ("none", "requested", "required")
DEFAULT_CLIENT_AUTH = "none"
PROTOCOLS = ("SSL", "SASL_SSL")
PEM = "PEM"
# The only private key blocks Kafka's PemStore decodes (PKCS8EncodedKeySpec / EncryptedPrivateKeyInfo).
PLAIN_KEY = "PRIVATE KEY"
ENCRYPTED_KEY = "ENCRYPTED PRIVATE KEY"
CERTIFICATE = "CERTIFICATE"
# Kafka's own lookups of a key store and a trust store for a listener, prefixed or global: any of
# them in kafka_broker_properties is TLS written by hand.
KEYSTORE_KEYS = ("ssl.keystore.location", "ssl.keystore.key")
TRUSTSTORE_KEYS = ("ssl.truststore.location", "ssl.truststore.certificates")
DERIVED = ("ssl.keystore.type", "ssl.keystore.location", "ssl.truststore.type", "ssl.truststore.location",
           "ssl.key.password", "ssl.client.auth")
# Keys Kafka refuses to start with beside PEM store files (DefaultSslEngineFactory.createKeystore /
# createTruststore), each with what to do instead.
CONFLICTS = {
    "ssl.keystore.password": "Kafka takes no store password for a PEM key store (an encrypted key's password is "
                             "%s.key_password)" % VARIABLE,
    "ssl.truststore.password": "Kafka takes no store password for a PEM trust store",
    "ssl.keystore.key": "Kafka refuses an in-line private key beside a key store file",
    "ssl.keystore.certificate.chain": "Kafka refuses an in-line certificate chain beside a key store file",
    "ssl.truststore.certificates": "Kafka refuses in-line trusted certificates beside a trust store file",
}
_BEGIN = re.compile(rb"^[ \t]*-----BEGIN ([A-Z0-9 ]+)-----[ \t]*\r?$", re.M)


def client_auth(tls):
    return _text(_settings(tls).get("client_auth")) or DEFAULT_CLIENT_AUTH


def client_auth_key(listener):
    return "listener.name.%s.ssl.client.auth" % _text(listener).lower()


def tls_listeners(listeners, controller_listener, roles):
    """The SSL and SASL_SSL listeners of this host: ``[{name, protocol, controller, served}]``.

    ``served``: the host accepts connections there (a client listener of a broker, the controller
    listener of a controller); otherwise it only dials it (the controller listener of a broker-only host).
    """
    broker = "broker" in (roles or [])
    scope = [(item, False, True) for item in (listeners or []) if broker]
    scope.append((controller_listener, True, "controller" in (roles or [])))
    result = []
    for item, controller, served in scope:
        if not isinstance(item, Mapping) or _text(item.get("protocol")) not in PROTOCOLS:
            continue
        result.append({"name": _text(item.get("name")), "protocol": _text(item.get("protocol")),
                       "controller": controller, "served": served})
    return result


def tls_properties(tls, keystore, truststore, listeners):
    """server.properties keys of the broker's TLS ({} when ``tls`` is empty).

    ``keystore`` and ``truststore`` are the stores' paths on the host, ``listeners`` what
    ``tls_listeners`` returns.
    """
    settings = _settings(tls)
    if not settings:
        return {}
    auth = client_auth(settings)
    props = {"ssl.keystore.type": PEM, "ssl.keystore.location": keystore,
             "ssl.truststore.type": PEM, "ssl.truststore.location": truststore,
             "ssl.client.auth": auth}
    password = _text(settings.get("key_password"))
    if password:
        props["ssl.key.password"] = password
    for listener in listeners or []:
        if listener["served"] and listener["protocol"] == "SASL_SSL":
            props[client_auth_key(listener["name"])] = auth
    return props


def reload_configs(listeners, keystore, truststore):
    """The per-broker configs that make a running broker read its stores again, without a restart:
    ``["listener.name.<listener>.ssl.keystore.location=<keystore>", ...truststore...]`` for each TLS
    listener, to be set to the paths they already have; ``[]`` when a restart is needed instead.

    Kafka re-reads a listener's key and trust stores when a per-broker config of that broker is
    altered, even to the value it has (KRaft's controller writes the record anyway, KAFKA-14136;
    the broker then reloads the files of its listeners, ``DynamicConfigPublisher``), and the docs
    ask the store configs to be altered in their listener-prefixed form. That covers the listeners
    a broker serves to clients; the controller listener (served by a controller, dialled by every
    node) is not one of them, so a host that has one with TLS is restarted.
    """
    if not listeners or any(item["controller"] for item in listeners):
        return []
    configs = []
    for item in listeners:
        prefix = "listener.name.%s." % item["name"].lower()
        configs += [prefix + "ssl.keystore.location=" + keystore, prefix + "ssl.truststore.location=" + truststore]
    return configs


def pem_labels(path):
    """The labels of the ``-----BEGIN <label>-----`` lines of a file, in order; nothing else of it."""
    with open(path, "rb") as handle:
        data = handle.read()
    return [match.group(1).decode("ascii") for match in _BEGIN.finditer(data)]


def _source_faults(settings, key, what):
    """(PEM labels or None, faults) of ``keystore_src`` / ``truststore_src``: set, absolute, a readable file."""
    source = _text(settings.get(key))
    where = "%s.%s" % (VARIABLE, key)
    if not source:
        return None, ["%s: required when %s is set (%s; a file on the controller, copied to the host)"
                      % (where, VARIABLE, what)]
    path = os.path.expanduser(source)
    if not os.path.isabs(path):
        return None, ["%s: %r is not an absolute path on the controller" % (where, source)]
    if not os.path.isfile(path):
        return None, ["%s: %s is not a file on the controller" % (where, source)]
    try:
        return pem_labels(path), []
    except OSError as exc:
        return None, ["%s: %s cannot be read on the controller (%s)" % (where, source, exc.strerror or exc)]


def _keystore_faults(settings):
    labels, faults = _source_faults(settings, "keystore_src", "the PEM key store: the broker's private key, "
                                    "then its certificate chain")
    if labels is None:
        return faults
    where, source = "%s.keystore_src" % VARIABLE, _text(settings.get("keystore_src"))
    if not labels:
        return ["%s: %s is not PEM (no -----BEGIN line); Kafka's PEM key store is the private key (PKCS#8) followed by "
                "the certificate chain, in one file" % (where, source)]
    keys = [label for label in labels if label.endswith(PLAIN_KEY)]
    if not keys:
        faults.append("%s: %s holds no private key; put the broker's key (PKCS#8, BEGIN PRIVATE KEY) before its "
                      "certificate chain" % (where, source))
    elif len(keys) > 1:
        faults.append("%s: %s holds %d private keys; Kafka's PEM key store takes exactly one"
                      % (where, source, len(keys)))
    elif keys[0] not in (PLAIN_KEY, ENCRYPTED_KEY):
        faults.append("%s: %s holds a %s block, which Kafka cannot read: it takes PKCS#8 keys only (BEGIN PRIVATE KEY "
                      "or BEGIN ENCRYPTED PRIVATE KEY); convert it with openssl pkcs8 -topk8 (-nocrypt for an "
                      "unencrypted key)" % (where, source, keys[0]))
    if CERTIFICATE not in labels:
        faults.append("%s: %s holds no certificate (BEGIN CERTIFICATE); append the broker's certificate chain "
                      "after its key" % (where, source))
    password = _text(settings.get("key_password"))
    if keys == [ENCRYPTED_KEY] and not password:
        faults.append("%s.key_password: required, %s holds an encrypted private key (BEGIN ENCRYPTED PRIVATE KEY)"
                      % (VARIABLE, source))
    elif keys == [PLAIN_KEY] and password:
        faults.append("%s.key_password: set, but %s holds an unencrypted private key (BEGIN PRIVATE KEY), which Kafka "
                      "would then fail to decrypt; remove key_password or encrypt the key (openssl pkcs8 -topk8)"
                      % (VARIABLE, source))
    return faults


def _truststore_faults(settings):
    labels, faults = _source_faults(settings, "truststore_src", "the PEM CA certificates that brokers and "
                                    "clients are verified with")
    if labels is None:
        return faults
    where, source = "%s.truststore_src" % VARIABLE, _text(settings.get("truststore_src"))
    if any(label.endswith(PLAIN_KEY) for label in labels):
        # Checked first: the trust store is copied world-readable and its copy shows in --diff.
        faults.append("%s: %s holds a private key; the trust store is copied readable by all (0644) and shown in "
                      "--diff: give the CA certificates only" % (where, source))
    if CERTIFICATE not in labels:
        faults.append("%s: %s holds no certificate (no -----BEGIN CERTIFICATE----- line); give the PEM CA "
                      "certificates that signed the brokers' (and clients') certificates" % (where, source))
    return faults


def _names(listeners):
    return "listener%s %s" % ("" if len(listeners) == 1 else "s",
                              ", ".join("%s (%s)" % (item["name"], item["protocol"]) for item in listeners))


def _by_hand(props, listener, keys):
    prefix = "listener.name.%s." % listener["name"].lower()
    return any(props.get(key) or props.get(prefix + key) for key in keys)


def tls_faults(tls, listeners, properties=None, keystore="", truststore=""):
    """One message per fault of ``kafka_broker_tls`` and of the TLS listeners it serves.

    ``listeners`` is what ``tls_listeners`` returns, ``properties`` the merged
    kafka_broker_default_properties and kafka_broker_properties, ``keystore`` / ``truststore`` the
    stores' paths on the host. Unknown keys, wrong types and a ``client_auth`` other than none,
    requested or required are the argument spec's (``role_vars_check``).
    """
    settings = _settings(tls)
    props = {_text(k): v for k, v in (properties or {}).items()}
    listeners = list(listeners or [])
    if not settings:
        faults = []
        served = [item for item in listeners if item["served"] and not _by_hand(props, item, KEYSTORE_KEYS)]
        if served:
            faults.append("%s: empty, but %s serve%s TLS and %s gives no key store there (ssl.keystore.location, or "
                          "listener.name.<listener>.ssl.keystore.location); set %s {keystore_src, truststore_src}, or "
                          "give the ssl.* keys in %s" % (VARIABLE, _names(served), "s" if len(served) == 1 else "",
                                                         PROPERTIES_VARIABLE, VARIABLE, PROPERTIES_VARIABLE))
        dialled = [item for item in listeners if not item["served"]
                   and not _by_hand(props, item, KEYSTORE_KEYS + TRUSTSTORE_KEYS)]
        if dialled:
            faults.append("%s: empty, but this host dials %s as a client and %s gives no trust store for it "
                          "(ssl.truststore.location); set %s {keystore_src, truststore_src}, or give the ssl.* keys "
                          "in %s" % (VARIABLE, _names(dialled), PROPERTIES_VARIABLE, VARIABLE, PROPERTIES_VARIABLE))
        # The removal of the role's stores while the variable is empty must not take a hand-made one along.
        for key in sorted(props):
            if _text(props[key]) and _text(props[key]) in (keystore, truststore):
                faults.append("%s: %s names %s, the file the role keeps for %s and removes while it is empty; keep "
                              "hand-made stores elsewhere, or set %s" % (PROPERTIES_VARIABLE, key, props[key], VARIABLE,
                                                                         VARIABLE))
        return faults

    faults = _keystore_faults(settings) + _truststore_faults(settings)
    if not listeners:
        faults.append("%s: set, but none of this host's listeners is SSL or SASL_SSL (kafka_broker_listeners on a "
                      "host with the broker role, kafka_broker_controller_listener on every host); make one SSL or "
                      "SASL_SSL, or leave %s empty on this host" % (VARIABLE, VARIABLE))
    derived = set(DERIVED) | {client_auth_key(item["name"]) for item in listeners
                              if item["served"] and item["protocol"] == "SASL_SSL"}
    for key in sorted(derived & set(props)):
        faults.append("%s: %s is set by %s; remove it from %s (one home for the broker's TLS)"
                      % (PROPERTIES_VARIABLE, key, VARIABLE, PROPERTIES_VARIABLE))
    for key in sorted(set(CONFLICTS) & set(props)):
        faults.append("%s: %s cannot go with %s: %s; remove it" % (PROPERTIES_VARIABLE, key, VARIABLE, CONFLICTS[key]))
    return faults
