# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Settings a Kafka release no longer has.

``removed_faults``: settings Kafka 4.0 removed (its upgrade notes, KIP-724 and KIP-937), which a
4.x broker rejects or ignores: refused with what to use instead, before anything changes, so a
move to 4.x does not fail (or quietly change behaviour) on its first broker restart.

Pure: kafka_common's preflight hands it the release and the including role's settings.
"""

from __future__ import annotations

import re

_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?")

# Broker settings Kafka 4.0 removed, and what to use instead (Kafka's 4.0 upgrade notes).
REMOVED_IN_4 = {
    "log.message.format.version": "nothing: 4.0 writes the one message format (KIP-724)",
    "message.format.version": "nothing: 4.0 writes the one message format (KIP-724)",
    "log.message.timestamp.difference.max.ms": "log.message.timestamp.before.max.ms and "
                                               "log.message.timestamp.after.max.ms (KIP-937)",
    "offsets.commit.required.acks": "nothing: offsets are committed with acks=all",
    "delegation.token.master.key": "delegation.token.secret.key",
    "auto.include.jmx.reporter": "metric.reporters (org.apache.kafka.common.metrics.JmxReporter)",
    "metrics.jmx.blacklist": "metrics.jmx.exclude",
    "metrics.jmx.whitelist": "metrics.jmx.include",
}


def version(text):
    """(major, minor, patch) of ``3.9.1`` or of ``3.9-IV0``; None when it is not a version."""
    match = _VERSION.match(str(text or "").strip())
    if not match:
        return None
    return tuple(int(part or 0) for part in match.groups())


def removed_faults(target, properties_by_variable):
    """Messages for each setting of ``properties_by_variable`` ({variable: {key: value}}) that the
    release ``target`` no longer has, naming the variable, the key and what replaces it."""
    wanted = version(target)
    if wanted is None or wanted[0] < 4:
        return []
    faults = []
    for variable in sorted(properties_by_variable):
        for key in sorted(properties_by_variable[variable] or {}):
            if key in REMOVED_IN_4:
                faults.append("%s: %s was removed in Kafka 4.0 (kafka_common_version %s); use %s"
                              % (variable, key, target, REMOVED_IN_4[key]))
    return faults
