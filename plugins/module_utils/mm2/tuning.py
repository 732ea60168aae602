# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The MirrorMaker 2 settings the collection ships, the same in the dedicated and the Connect layout.

The mirrormaker and connect roles' defaults read them through the mm2_defaults lookup, so each
value is written here only."""

from __future__ import annotations

import re
from collections import OrderedDict

# Per flow, because MM2 ignores top-level producer.* and consumer.* keys. Chosen with
# bench/mm2_throughput (200k records of 1 KB, 4 partitions); what they reached against a client
# copy and against MM2's own defaults, over the recorded runs, is in docs/mirrormaker.md ("Defaults
# that perform") and bench/README.md. producer.override.* needs the worker's default
# connector.client.config.override.policy=All.
FLOW_TUNING = OrderedDict([
    ("tasks.max", 4),
    ("producer.override.batch.size", 1048576),
    ("producer.override.linger.ms", 20),
    ("producer.override.compression.type", "lz4"),
    ("consumer.fetch.max.bytes", 52428800),
    ("consumer.max.partition.fetch.bytes", 10485760),
    ("consumer.max.poll.records", 5000),
])

# A dead or departed worker's tasks move after 30 s instead of 300 s; after a crash at most 10 s
# of records are sent again (without exactly-once).
WORKER = OrderedDict([
    ("scheduled.rebalance.max.delay.ms", 30000),
    ("offset.flush.interval.ms", 10000),
])

SETS = {"flow_tuning": FLOW_TUNING, "worker": WORKER}


def defaults(name):
    """A fresh copy of the named set; KeyError names the sets there are."""
    if name not in SETS:
        raise KeyError("%r is not one of %s" % (name, ", ".join(sorted(SETS))))
    return dict(SETS[name])


_LOOKUP_RE = re.compile(r"""^\{\{\s*lookup\('kafkaops\.mirrormaker\.mm2_defaults',\s*'(\w+)'\)\s*\}\}$""")


def role_default(value):
    """A role default as Ansible would give it, for tools that read a defaults file without Ansible
    (the benches, the tests): the mm2_defaults lookup's set, any other value unchanged."""
    match = _LOOKUP_RE.match(value.strip()) if isinstance(value, str) else None
    return defaults(match.group(1)) if match else value
