# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The kafka_broker role's refusals of a node's own settings, run in preflight.

``faults(v)`` takes the role's variables (``kafka_broker_*``). The cluster layout across
hosts is the broker plan's; SCRAM, Kerberos and TLS have their own rules in ``kafka/scram.py``,
``kafka/kerberos.py`` and ``kafka/tls.py``.
"""

from __future__ import annotations

import json

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import rules
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import settings, text
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import kerberos

UNIT_SECRET_HOME = ("put client or listener secrets in kafka_broker_properties (server.properties, 0640 root:kafka, "
                    "masked in output) and login secrets in kafka_broker_jaas_config (0640 root:kafka, never logged)")
UNIT_VALUES = ("kafka_broker_heap_opts", "kafka_broker_jvm_performance_opts", "kafka_broker_opts")


def _sasl_login_faults(v):
    # GSSAPI listeners log in with kafka_broker_kerberos (kafka/kerberos.py checks those).
    properties = dict(settings(v["kafka_broker_default_properties"]))
    properties.update(settings(v["kafka_broker_properties"]))
    listeners = kerberos.sasl_listeners(v["kafka_broker_listeners"], v["kafka_broker_controller_listener"],
                                        v["kafka_broker_process_roles"], properties)
    others = sorted({m for listener in listeners for m in listener["mechanisms"]} - {"GSSAPI"})
    if not others or text(v["kafka_broker_jaas_config"]) or "sasl.jaas.config" in text(v["kafka_broker_properties"]):
        return []
    return ["kafka_broker_listeners: a SASL listener needs credentials, but neither kafka_broker_jaas_config nor a "
            "listener.name.*.sasl.jaas.config in kafka_broker_properties is set (for %s; kafka_broker_kerberos "
            "serves GSSAPI only)" % ", ".join(others)]


def faults(v):
    """Every refusal of the broker's own settings, in a stable order."""
    found = rules.name("kafka_broker_cluster_name", v["kafka_broker_cluster_name"], "a cluster name")
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
    found += _sasl_login_faults(v)
    found += rules.unit_values({var: v[var] for var in UNIT_VALUES}, UNIT_SECRET_HOME)
    return found
