# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Status filters for playbooks/status.yml: the JMX exporters' text, parsed with prometheus-client
on the controller, turned into Pulse's MM2 dashboard figures (plugins/module_utils/mm2/status.py).

``mm2_status(scrapes, ranges=None)``
    ``[{"host": ..., "content": <exporter text>}, ...]`` and the answers of the range queries ->
    the 16 charts of Pulse's dashboard (``charts``), per flow and topic (``flows``) and node (``nodes``).
``mm2_status_queries(options, end, hosts)``
    The Prometheus range queries of the charts over time; refuses bad options naming the variable.
``mm2_status_table(status)``
    The charts as aligned text lines.
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


def mm2_status(scrapes, ranges=None):
    """Every chart from each node's exporter text and the range queries' answers (uri results)."""
    if text_string_to_metric_families is None:
        raise AnsibleFilterError("mm2_status needs the Python package prometheus-client on the controller "
                                 "(pip install prometheus-client)")
    nodes = [{"host": s["host"], "samples": _samples(s["content"], s["host"])} for s in scrapes]
    return model.build(nodes, ranges)


def mm2_status_queries(options, end, hosts=()):
    """Range queries for ``options`` (``prometheus_url``, ``prometheus_via``, ``window``, ``step``)
    ending at ``end`` (epoch seconds); an error naming each variable at fault."""
    unknown = sorted(set(options) - {"prometheus_url", "prometheus_via", "window", "step"})
    if unknown:
        raise AnsibleFilterError("mm2_status_queries: unknown options %s" % ", ".join(unknown))
    queries, errors = model.range_queries(options.get("prometheus_url"), options.get("window"), options.get("step"),
                                          end, options.get("prometheus_via") or "", hosts)
    if errors:
        raise AnsibleFilterError("; ".join(errors))
    return queries


def mm2_status_table(status):
    """Aligned text lines: the summary charts per flow and topic, then every other chart by name."""
    return model.table(status)


class FilterModule(object):
    """Status filters."""

    def filters(self):
        return {
            "mm2_status": mm2_status,
            "mm2_status_queries": mm2_status_queries,
            "mm2_status_table": mm2_status_table,
        }
