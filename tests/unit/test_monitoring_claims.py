# -*- coding: utf-8 -*-
"""What README and docs/*.md say of the status report is what the report gives.

The report is built from the recorded exporter text (tests/unit/plugins/filter/fixtures) and from
Prometheus answers, as playbooks/status.yml builds it; the names it gives are those found in its
JSON and in its terminal text. Every chart of Pulse's page (its chart table, copied in
tests/unit/fixtures/pulse/dashboard_charts.txt) must be among them; a docs sentence about the
status report that counts charts, or says one is covered in part or not yet, must agree with the
report; the chart table of docs/monitoring.md must name exactly the charts the report gives.
"""

from __future__ import annotations

import glob
import json
import os
import re

import pytest
from ansible_collections.kafkaops.mirrormaker.plugins.filter.status import mm2_status, mm2_status_queries, mm2_status_table

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURE = os.path.join(REPO, "tests", "unit", "plugins", "filter", "fixtures", "exporter-mm2-4.3.1.txt")
PAGE_CHARTS = os.path.join(REPO, "tests", "unit", "fixtures", "pulse", "dashboard_charts.txt")
DOCS = [os.path.join(REPO, "README.md")] + sorted(glob.glob(os.path.join(REPO, "docs", "*.md")))
# What marks a sentence as being about the status report.
ABOUT_STATUS = re.compile(r"status\.yml|kafkaops\.mirrormaker\.status|mm2-status|status report|Pulse's (MM2 |MirrorMaker )?dashboard"
                          r"|dashboard's", re.IGNORECASE)
# A count of charts ("7 of 16", "7 of the dashboard's 16 charts") and the words of partial coverage.
COUNT = re.compile(r"\b(\d+) of (?:the dashboard's |Pulse's |its )?(\d+)\b")
PARTIAL = re.compile(r"\bin part\b|\bpartially\b|\bnot yet\b|\bnot printed\b|\bnot shown\b|\bexported, not\b", re.IGNORECASE)


def page_charts():
    with open(PAGE_CHARTS) as fh:
        names = [line.split("|")[0].strip() for line in fh if line.count("|") == 2]
    return [n for n in names if n not in ("Name", "---")]


def report():
    """(JSON document, terminal text) of a status with every source answering."""
    with open(FIXTURE) as fh:
        text = fh.read()
    queries = mm2_status_queries({"prometheus_url": "http://127.0.0.1:9090", "prometheus_via": "", "window": 600,
                                  "step": 60}, 10000)
    answers = [{"item": q, "json": {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"source": "A", "target": "B", "topic": "A.orders"}, "values": [[9400, "5"], [10000, "6"]]}]}}}
        for q in queries]
    status = mm2_status([{"host": "mm2-1", "content": text}], answers)
    return json.loads(json.dumps(status)), "\n".join(mm2_status_table(status))


def produced():
    document, text = report()
    return {name for name, chart in document["charts"].items()
            if name in text and (chart.get("rows") or chart.get("values") or chart.get("series"))}


def sentences(path):
    with open(path, encoding="utf-8") as fh:
        body = fh.read()
    # Code blocks hold output, not claims.
    body = re.sub(r"```.*?```", "", body, flags=re.DOTALL)
    for paragraph in re.split(r"\n\s*\n", body):
        flat = " ".join(paragraph.split())
        yield from re.split(r"(?<=[.;])\s+(?=[A-Z`(])", flat)


def test_every_chart_of_the_page_is_in_the_report_with_values():
    assert len(page_charts()) == 16
    missing = [name for name in page_charts() if name not in produced()]
    assert not missing, "charts of Pulse's page the report does not give: %s" % missing


CLAIMS = [(os.path.relpath(path, REPO), s) for path in DOCS for s in sentences(path) if ABOUT_STATUS.search(s)]


@pytest.mark.parametrize("where, sentence", CLAIMS, ids=["%s:%d" % (w, i) for i, (w, _s) in enumerate(CLAIMS)])
def test_docs_sentences_about_the_status_report_claim_what_it_gives(where, sentence):
    gives = produced()
    for part, whole in COUNT.findall(sentence):
        if int(whole) == len(page_charts()):
            assert int(part) == len(gives), "%s: %r counts %s of %s charts; the report gives %d" % (
                where, sentence, part, whole, len(gives))
    assert not PARTIAL.search(sentence), "%s: %r says a chart is covered only in part; the report gives %s" % (
        where, sentence, sorted(gives))
    # A chart of the page named here is one the report gives.
    for name in page_charts():
        if name in sentence:
            assert name in gives, "%s: %r names %s, which the report does not give" % (where, sentence, name)


def test_the_chart_table_of_docs_monitoring_names_exactly_the_report_s_charts():
    with open(os.path.join(REPO, "docs", "monitoring.md"), encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    start = lines.index("| Pulse chart | in the report | from |")
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1].strip())
    assert rows == page_charts()
    assert set(rows) <= produced()


def test_the_claims_are_found():
    # The scan above reads the sentences it should: README's and monitoring.md's about status.yml.
    assert any(w == "README.md" for w, _s in CLAIMS)
    assert sum(1 for w, _s in CLAIMS if w == os.path.join("docs", "monitoring.md")) >= 5
