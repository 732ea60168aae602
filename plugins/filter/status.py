# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Status filters for playbooks/status.yml: the JMX exporters' text, parsed with prometheus-client
on the controller, turned into Pulse's MM2 dashboard figures (plugins/module_utils/mm2/status.py).

``mm2_status(scrapes)``
    ``[{"host": ..., "content": <exporter text>}, ...]`` -> per-flow and per-topic figures.
``mm2_status_table(status)``
    Those figures as aligned text lines.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import status as model

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:  # pragma: no cover - reported when the filter is used
    text_string_to_metric_families = None


def _samples(text, host):
    try:
        return [(s.name, dict(s.labels), s.value)
                for family in text_string_to_metric_families(text) for s in family.samples]
    except ValueError as exc:
        raise AnsibleFilterError("mm2_status: %s did not serve the Prometheus text format: %s" % (host, exc))


def mm2_status(scrapes):
    """Figures per flow and topic from each node's exporter text."""
    if text_string_to_metric_families is None:
        raise AnsibleFilterError("mm2_status needs the Python package prometheus-client on the controller "
                                 "(pip install prometheus-client)")
    nodes = [{"host": s["host"], "samples": _samples(s["content"], s["host"])} for s in scrapes]
    return model.build(nodes)


def mm2_status_table(status):
    """Aligned text lines: a row per flow, an indented row per topic."""
    return model.table(status)


class FilterModule(object):
    """Status filters."""

    def filters(self):
        return {
            "mm2_status": mm2_status,
            "mm2_status_table": mm2_status_table,
        }
