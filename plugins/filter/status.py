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


def _parser():
    """prometheus-client's text parser, imported on first use: Ansible imports every filter file of
    the collection in each task's worker process whenever a task names any of its filters, and
    prometheus-client's package import (its HTTP server, registry...) would weigh on all of them
    (bench/README.md, "Where the controller's time goes")."""
    try:
        from prometheus_client.parser import text_string_to_metric_families  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise AnsibleFilterError("mm2_status needs the Python package prometheus-client on the controller "
                                 "(pip install prometheus-client)")
    return text_string_to_metric_families


def _samples(parse, text, host):
    try:
        return [(s.name, dict(s.labels), s.value) for family in parse(text) for s in family.samples]
    except ValueError as exc:
        raise AnsibleFilterError("mm2_status: %s did not serve the Prometheus text format: %s" % (host, exc))


def mm2_status(scrapes, ranges=None):
    """Every chart from each node's exporter text and the range queries' answers (uri results)."""
    parse = _parser()
    nodes = [{"host": s["host"], "samples": _samples(parse, s["content"], s["host"])} for s in scrapes]
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
