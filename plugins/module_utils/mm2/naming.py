# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""MirrorMaker 2 naming: replication policies, remote topic names and internal topic names.

Facts from Apache Kafka's DefaultReplicationPolicy and IdentityReplicationPolicy (KIP-690)."""

from __future__ import annotations

from collections import OrderedDict

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import render_value

DEFAULT_POLICY = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
IDENTITY_POLICY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
POLICY_ALIASES = {"default": DEFAULT_POLICY, "identity": IDENTITY_POLICY}


def policy_class(policy):
    """Map 'default'/'identity' (any case) to the Kafka class; other names unchanged."""
    if policy is None:
        return None
    name = render_value(policy).strip()
    return POLICY_ALIASES.get(name.lower(), name)


def policy_alias(policy):
    cls = policy_class(policy)
    for alias, klass in POLICY_ALIASES.items():
        if cls == klass:
            return alias
    return None


def remote_topic(source_alias, topic, policy="default", separator="."):
    """Name of ``topic`` from cluster ``source_alias`` on the target cluster.

    DefaultReplicationPolicy -> ``<source><separator><topic>``;
    IdentityReplicationPolicy -> ``<topic>``.  Other classes cannot be predicted.
    """
    cls = policy_class(policy) or DEFAULT_POLICY
    if cls == DEFAULT_POLICY:
        return "%s%s%s" % (source_alias, "." if separator is None else separator, topic)
    if cls == IDENTITY_POLICY:
        return topic
    raise ValueError("cannot predict remote topic names for replication policy %r" % cls)


def remote_topic_prefix(source_alias, policy="default", separator="."):
    cls = policy_class(policy) or DEFAULT_POLICY
    if cls == DEFAULT_POLICY:
        return "%s%s" % (source_alias, "." if separator is None else separator)
    if cls == IDENTITY_POLICY:
        return ""
    return None


def internal_topics(source_alias, target_alias, separator=".", internal_separator_enabled=True, offset_syncs_location="source"):
    """Internal topic names of DefaultReplicationPolicy/IdentityReplicationPolicy (KIP-690).

    The offset syncs topic is named after the cluster it does not live on
    (``MirrorSourceConfig.offsetSyncsTopic``): the target's alias on the source (the default),
    the source's alias with ``offset-syncs.topic.location=target``.
    """
    sep = separator if (separator is not None and internal_separator_enabled) else "."
    other = source_alias if offset_syncs_location == "target" else target_alias
    return OrderedDict([
        ("heartbeats", "heartbeats"),
        ("checkpoints", "%s%scheckpoints%sinternal" % (source_alias, sep, sep)),
        ("offset_syncs", "mm2-offset-syncs%s%s%sinternal" % (sep, other, sep)),
    ])


def herder_names(source_alias):
    """The group and storage topics of a dedicated-mode herder for flows from ``source_alias``, where
    mm2.properties does not set them (MirrorMakerConfig.workerConfig: group.id ``<source>-mm2``,
    ``mm2-{offsets,configs,status}.<source>.internal`` on the target)."""
    return OrderedDict([
        ("group.id", "%s-mm2" % source_alias),
        ("offset.storage.topic", "mm2-offsets.%s.internal" % source_alias),
        ("config.storage.topic", "mm2-configs.%s.internal" % source_alias),
        ("status.storage.topic", "mm2-status.%s.internal" % source_alias),
    ])


# Top-level keys MirrorMakerConfig.workerConfig copies over the target cluster's own (``T.``) keys;
# every other worker setting is read from the target's keys only.
_TOP_LEVEL_WORKER_PREFIXES = ("offset.storage", "config.storage", "status.storage")


def herder_settings(props, source_alias, target_alias):
    """The group, storage topics and exactly-once setting of the dedicated-mode herder that runs
    flow ``source_alias->target_alias``, from mm2.properties as ``props`` (a mapping) holds it, the
    way MirrorMakerConfig.workerConfig builds the worker: the target's ``T.<key>`` first, a top-level
    ``offset.storage.*``, ``config.storage.*`` or ``status.storage.*`` key over it (a top-level
    ``group.id`` is not read), then the defaults of :func:`herder_names`."""
    out = OrderedDict()
    defaults = dict(herder_names(source_alias), **{"exactly.once.source.support": "disabled"})
    for key, default in defaults.items():
        value = props.get("%s.%s" % (target_alias, key), default)
        if key.startswith(_TOP_LEVEL_WORKER_PREFIXES):
            value = props.get(key, value)
        out[key] = value
    return out
