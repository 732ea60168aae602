# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Kafka Connect layout filters: thin wrappers over plugins/module_utils/mm2/connect.py.

``connect_cluster_faults(workers)``
    Connect clusters that would share a group.id or internal topics on one Kafka cluster.
"""

from __future__ import annotations

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import connect as mm2_connect


def connect_cluster_faults(workers):
    """List of faults, each naming the variables."""
    return mm2_connect.check_clusters(workers)


class FilterModule(object):
    """Kafka Connect layout filters."""

    def filters(self):
        return {
            "connect_cluster_faults": connect_cluster_faults,
        }
