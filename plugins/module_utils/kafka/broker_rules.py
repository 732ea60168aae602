# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The kafka_broker role's refusals of a node's own settings, run in preflight.

``faults(v, context)`` takes the role's variables (``kafka_broker_*``) and the paths where the
role puts the TLS stores on the host (``context``: ``keystore``, ``truststore``). The cluster
layout across hosts is the broker plan's. The SCRAM, Kerberos and TLS rules are in
``kafka/scram.py``, ``kafka/kerberos.py`` and ``kafka/tls.py``; they run from here, on the SASL
and TLS listeners worked out once.
"""

from __future__ import annotations

import json

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import rules
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import settings, text
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import kerberos, layout, scram, tls

UNIT_SECRET_HOME = ("put client or listener secrets in kafka_broker_properties (server.properties, 0640 root:kafka, "
                    "masked in output) and login secrets in kafka_broker_jaas_config (0640 root:kafka, never logged)")
UNIT_VALUES = ("kafka_broker_heap_opts", "kafka_broker_jvm_performance_opts", "kafka_broker_opts")


def _properties(v):
    properties = dict(settings(v["kafka_broker_default_properties"]))
    properties.update(settings(v["kafka_broker_properties"]))
    return properties


STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def authorizer_class(authorizer_enabled, default_properties=None, properties=None):
    """The ``authorizer.class.name`` a broker's server.properties gets, '' for none, from its
    inventory values: ``kafka_broker_authorizer_enabled`` adds StandardAuthorizer, and
    ``kafka_broker_default_properties`` then ``kafka_broker_properties`` are combined over it, in
    the order ``roles/kafka_broker/vars/main.yml`` combines them. For a broker whose preflight is
    not part of the run (``--limit``); the preflight records the rendered value itself."""
    combined = {"authorizer.class.name": STANDARD_AUTHORIZER if boolean(authorizer_enabled, strict=False) else ""}
    combined.update(settings(default_properties))
    combined.update(settings(properties))
    return text(combined.get("authorizer.class.name"))


def _sasl_login_faults(v, sasl):
    # GSSAPI listeners log in with kafka_broker_kerberos (kafka/kerberos.py checks those).
    others = sorted({m for listener in sasl for m in listener["mechanisms"]} - {"GSSAPI"})
    if not others or text(v["kafka_broker_jaas_config"]) or "sasl.jaas.config" in text(v["kafka_broker_properties"]):
        return []
    return ["kafka_broker_listeners: a SASL listener needs credentials, but neither kafka_broker_jaas_config nor a "
            "listener.name.*.sasl.jaas.config in kafka_broker_properties is set (for %s; kafka_broker_kerberos "
            "serves GSSAPI only)" % ", ".join(others)]


def _security_faults(v, context):
    """SCRAM users, the SASL logins, Kerberos and TLS, on the listeners this host configures."""
    properties = _properties(v)
    roles = v["kafka_broker_process_roles"]
    listeners, controller = v["kafka_broker_listeners"], v["kafka_broker_controller_listener"]
    inter_broker = v["kafka_broker_inter_broker_listener"]
    sasl = kerberos.sasl_listeners(listeners, controller, roles, properties)
    found = scram.scram_user_faults(v["kafka_broker_scram_users"])
    found += scram.inter_broker_mechanism_faults(listeners if "broker" in roles else [], inter_broker, properties)
    found += _sasl_login_faults(v, sasl)
    found += kerberos.kerberos_faults(v["kafka_broker_kerberos"], sasl, roles, inter_broker, properties,
                                      v["kafka_broker_jaas_config"])
    found += tls.tls_faults(v["kafka_broker_tls"], tls.tls_listeners(listeners, controller, roles), properties,
                            context.get("keystore", ""), context.get("truststore", ""))
    return found


def _inter_broker_protocol(v):
    listener = [item for item in v["kafka_broker_listeners"] or []
                if item.get("name") == v["kafka_broker_inter_broker_listener"]]
    return text(listener[0].get("protocol", "PLAINTEXT")) if listener else "PLAINTEXT"


def _admin_faults(v):
    """The drain (kafka_broker_state: absent) and the SCRAM users' upkeep
    (kafka_broker_scram_users_managed) are kafka-python clients on kafka_broker_admin_delegate_to,
    which read no JAAS line or key store: a secured inter-broker listener needs the admin's login."""
    protocol = _inter_broker_protocol(v)
    if protocol == "PLAINTEXT" or v["kafka_broker_admin_properties"]:
        return []
    needs = []
    if v["kafka_broker_state"] == "absent":
        needs.append("kafka_broker_state is absent (the drain reassigns partitions)")
    if boolean(v["kafka_broker_scram_users_managed"], strict=False) and v["kafka_broker_scram_users"]:
        needs.append("kafka_broker_scram_users_managed is true (the upkeep alters SCRAM credentials)")
    return ["kafka_broker_admin_properties: %s and the inter-broker listener %s is %s: give the client properties "
            "(kafka-python's, as kafka_acl takes them) of an admin that may do that, for the client on %s"
            % (need, v["kafka_broker_inter_broker_listener"], protocol, text(v["kafka_broker_admin_delegate_to"]))
            for need in needs]


def _move_faults(v):
    """The settings of moving replicas off a broker taken out (kafka_broker_state absent): checked
    on every broker, as a broker set absent later reads them then."""
    found = []
    if v["kafka_broker_move_throttle"] < 0:
        found.append("kafka_broker_move_throttle: must be bytes per second, 0 (no throttle) or more (is %d)"
                     % v["kafka_broker_move_throttle"])
    if v["kafka_broker_move_timeout"] < 1:
        found.append("kafka_broker_move_timeout: must be 1 second or more (is %d)" % v["kafka_broker_move_timeout"])
    return found


def faults(v, context=None):
    """Every refusal of the broker's own settings, in a stable order."""
    found = rules.name("kafka_broker_cluster_name", v["kafka_broker_cluster_name"], "a cluster name")
    found += layout.cluster_id_errors(text(v["kafka_broker_cluster_id"]))
    log_dirs = v["kafka_broker_log_dirs"] or []
    if not log_dirs:
        found.append("kafka_broker_log_dirs: must list at least one directory")
    unsafe = [d for d in log_dirs if not rules.SAFE_PATH_RE.match(text(d))]
    if unsafe:
        found.append("kafka_broker_log_dirs: %s are not absolute paths of letters, digits and . _ / @ + -"
                     % json.dumps(unsafe))
    found += rules.safe_path("kafka_broker_config_dir", v["kafka_broker_config_dir"])
    found += rules.unit_name("kafka_broker_service_name", v["kafka_broker_service_name"])
    found += rules.host("kafka_broker_advertised_host", v["kafka_broker_advertised_host"])
    found += rules.unit_values({var: v[var] for var in UNIT_VALUES}, UNIT_SECRET_HOME)
    found += _move_faults(v) + _admin_faults(v)
    return found + _security_faults(v, context or {})
