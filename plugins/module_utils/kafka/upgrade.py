# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Rolling upgrades from the installed Kafka release to ``kafka_common_version`` (playbooks/upgrade.yml).

* ``steps``: the order nodes are upgraded in, one at a time: KRaft controllers (combined nodes
  included), then brokers, then Connect workers, then MirrorMaker nodes, as Kafka's upgrade notes
  ask (the controllers first, so that no broker runs a release its controllers do not know).
* ``parse_features`` and ``downgrade_faults``: a cluster's finalized ``metadata.version`` (as
  ``kafka-features.sh describe`` prints it) holds records older releases cannot read; a release
  older than it is refused, naming the variable.
* ``finalize_release``, ``finalize_needed`` and ``parse_update``: the ``--release-version`` to
  finalize once every node of a cluster runs the new release, whether a cluster is behind it, and
  what ``kafka-features.sh upgrade --release-version`` answered (the kafka_features module).
* ``removed_faults``: settings Kafka 4.0 removed (its upgrade notes, KIP-724 and KIP-937), which a
  4.x broker rejects or ignores: refused with what to use instead, before anything changes.

Pure: the playbook reads the hosts and the clusters and hands the readings here.
"""

from __future__ import annotations

import re

ORDER = ("controller", "broker", "connect", "mirrormaker")
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?")
_FEATURE = re.compile(r"Feature:\s*(\S+).*?FinalizedVersionLevel:\s*(\S+)")

# Settings Kafka 4.0 removed, and what to use instead (Kafka's 4.0 upgrade notes).
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
    # Not MirrorMaker's topics.blacklist, groups.blacklist and config.properties.blacklist, also
    # removed: the MirrorMaker model renders them under their current names (mm2/model.py,
    # DEPRECATED_KEYS), and the Pulse page MirrorMaker is registered from uses them.
    "use.incremental.alter.configs": "nothing: MirrorMaker 2 always uses incremental alter configs",
    "add.source.alias.to.metrics": "nothing: the metrics name the source alias",
}


def version(text):
    """(major, minor, patch) of ``3.9.1`` or of ``3.9-IV0``; None when it is not a version."""
    match = _VERSION.match(str(text or "").strip())
    if not match:
        return None
    return tuple(int(part or 0) for part in match.groups())


def steps(nodes, target):
    """The upgrade's order: ``nodes`` ([{host, kind, installed}], kind one of ORDER, installed the
    version the host runs or '' for none) sorted by kind, keeping their order within a kind, each
    with ``from``, ``to`` and ``action``: 'upgrade', 'downgrade', 'install' (nothing installed) or
    'none' (already at ``target``)."""
    out = []
    for node in sorted(nodes, key=lambda n: ORDER.index(n["kind"])):
        installed = node.get("installed") or ""
        if not installed:
            action = "install"
        elif version(installed) == version(target):
            action = "none"
        else:
            action = "upgrade" if version(installed) < version(target) else "downgrade"
        out.append({"host": node["host"], "kind": node["kind"], "from": installed, "to": target, "action": action})
    return out


def parse_features(text):
    """{feature: finalized level} from ``kafka-features.sh describe``; a feature not finalized
    (level 0 or '-') is left out."""
    found = {}
    for line in (text or "").splitlines():
        match = _FEATURE.search(line)
        if match and match.group(2) not in ("0", "-", "none", "UNKNOWN"):
            found[match.group(1)] = match.group(2)
    return found


# kafka-features.sh upgrade, one line per feature (FeatureCommand.update): "<feature> was upgraded to
# <level>." ("can be", with --dry-run), or "Could not upgrade <feature> to <level>. <why>" ("Can not").
_UPDATED = re.compile(r"^(\S+) (?:was|can be) upgraded to (\d+)\.$")
_REFUSED = re.compile(r"^(?:Could|Can) not upgrade \S+ to \d+\. ")


def parse_update(text):
    """({feature: level} updated, [the lines refusing one]) from ``kafka-features.sh upgrade``."""
    updated, refused = {}, []
    for line in (text or "").splitlines():
        line = line.strip()
        match = _UPDATED.match(line)
        if match:
            updated[match.group(1)] = int(match.group(2))
        elif _REFUSED.match(line):
            refused.append(line)
    return updated, refused


def downgrade_faults(target, finalized):
    """Messages for each cluster ({cluster: finalized metadata.version}) whose finalized level is
    newer than the release ``target`` (metadata versions name the release that brought them)."""
    faults = []
    wanted = version(target)
    for cluster in sorted(finalized):
        level = finalized[cluster]
        have = version(level)
        if wanted is None or have is None:
            continue
        if wanted[:2] < have[:2]:
            faults.append("kafka_common_version: %s is older than cluster %s's finalized metadata.version %s, whose "
                          "records %s cannot read; a finalized level is never lowered by this playbook"
                          % (target, cluster, level, target))
    return faults


# Kafka 4.x runs only clusters whose metadata.version is 3.3-IV3 or later (the 4.0 to 4.3 upgrade
# notes: "the software and metadata versions must be at least 3.3.x").
MINIMUM_FOR_4 = (3, 3)


def minimum_faults(target, finalized, installed):
    """Messages for each cluster ({cluster: finalized metadata.version}) too old for release ``target``
    to run at all: 4.x needs 3.3 or later. ``installed`` ({cluster: release its nodes run}) names the
    release to finalize at first. A cluster can sit at 3.0-IV1 without anyone asking for it: a
    controller that lost its leadership while writing the bootstrap records and won it back finds
    a log it takes for an old one (KAFKA-20839), which the lab's 3.9 quorum met on a slow machine."""
    wanted = version(target)
    if wanted is None or wanted[0] < 4:
        return []
    faults = []
    for cluster in sorted(finalized):
        have = version(finalized[cluster])
        if have is not None and have[:2] < MINIMUM_FOR_4:
            release = installed.get(cluster) or "its installed release"
            faults.append("kafka_common_version: %s runs only clusters at metadata.version 3.3 or later, and cluster "
                          "%s's is %s: finalize it at %s first (kafka-features.sh upgrade --release-version %s)"
                          % (target, cluster, finalized[cluster], release,
                             finalize_release(release) if version(release) else "<release>"))
    return faults


def plan(nodes, target, readings):
    """{steps, faults, release}: the upgrade of ``nodes`` (as ``steps`` takes them) to ``target``,
    refused (``faults``) when a cluster's reading ([{cluster, metadata_version, installed}], one
    per cluster, from one of its brokers) is newer than ``target`` or too old for it."""
    finalized = dict((r["cluster"], r["metadata_version"]) for r in readings if r.get("metadata_version"))
    installed = dict((r["cluster"], r.get("installed") or "") for r in readings)
    return {"steps": steps(nodes, target),
            "faults": downgrade_faults(target, finalized) + minimum_faults(target, finalized, installed),
            "release": finalize_release(target)}


def finalize_release(target):
    """The ``--release-version`` for ``target`` (``4.3`` for 4.3.1)."""
    major, minor, _patch = version(target)
    return "%d.%d" % (major, minor)


def finalize_needed(target, finalized_level):
    """Whether a cluster whose metadata.version is ``finalized_level`` is behind release ``target``."""
    have, wanted = version(finalized_level), version(target)
    return have is None or wanted is None or have[:2] < wanted[:2]


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
