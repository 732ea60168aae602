# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The connect role's refusals (MirrorMaker 2 on a Connect cluster), run in preflight.

``faults(v)`` takes the role's variables (``connect_*``) and returns one message per fault, each
naming its variable. The flow, the connectors and the worker properties are the Connect plan's
(``mm2/connect.py``); what is here is the worker's own settings.
"""

from __future__ import annotations

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import rules
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import text

UNIT_SECRET_HOME = ("put client secrets in connect_clusters[].properties (connector secrets go to 0600 files read "
                    "by the FileConfigProvider, masked in output)")
UNIT_VALUES = ("connect_heap_opts", "connect_jvm_performance_opts", "connect_kafka_opts")


def faults(v, context=None):  # pylint: disable=unused-argument
    """Every refusal of the connect role's own settings, in a stable order."""
    found = []
    if not text(v["connect_source"]):
        found.append("connect_source: required on hosts of connect_workers (the source alias of the flow this "
                     "Connect cluster runs)")
    if not text(v["connect_target"]):
        found.append("connect_target: required on hosts of connect_workers (the target alias of the flow; the "
                     "workers keep their state on it)")
    found += rules.port("connect_rest_port", v["connect_rest_port"])
    found += rules.host("connect_advertised_host", v["connect_advertised_host"])
    found += rules.host("connect_rest_bind_host", v["connect_rest_bind_host"], optional=True)
    found += rules.name("connect_group_id", v["connect_group_id"], "a group id", optional=True)
    found += rules.name("connect_internal_topic_prefix", v["connect_internal_topic_prefix"], "a topic name prefix",
                        optional=True)
    found += rules.safe_path("connect_config_dir", v["connect_config_dir"])
    found += rules.safe_path("connect_log_dir", v["connect_log_dir"])
    found += rules.unit_name("connect_service_name", v["connect_service_name"])
    found += rules.unit_values({var: v[var] for var in UNIT_VALUES}, UNIT_SECRET_HOME)
    return found
