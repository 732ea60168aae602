# -*- coding: utf-8 -*-
"""The lag exporter (smoke/mm2_smoke/lag_exporter.py): its refusals before it listens, each naming
the key, and what a scrape shows for a reading that worked and one that failed, as Prometheus'
own parser (prometheus_client) reads the text. Against a real MirrorMaker 2 held back:
tests/live/test_mm2_lag.py; scraped by the lab's Prometheus: tests/integration/default/test_monitoring.py."""

from __future__ import annotations

import io

import pytest
from prometheus_client import generate_latest
from prometheus_client.core import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.client import Failed
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import model as mm2_model
from mm2_smoke import lag_exporter

MODEL = mm2_model.load([{"alias": "A", "bootstrap_servers": ["a:9092"]}, {"alias": "B", "bootstrap_servers": ["b:9092"]}],
                       [{"source": "A", "target": "B"}])
PLAN = {"properties": dict(MODEL.properties()), "flows": MODEL.effective_flows()}
ROWS = [{"flow": "A->B", "topic": "orders", "partition": 0, "records": 7, "seconds": 2.25, "end": 10, "next": 3},
        {"flow": "A->B", "topic": "orders", "partition": 1, "records": 0, "seconds": 0.0, "end": 5, "next": 5}]


def test_load_params_fills_the_defaults():
    params = lag_exporter.load_params({"layout": "dedicated", "plan": PLAN, "timeout": 8})
    assert (params["timeout"], params["client_properties"], params["flows"], params["url"]) == (
        8, {}, None, "http://localhost:8083")


@pytest.mark.parametrize("config, message", [
    ([], "the configuration is not a JSON object of mm2_lag_info's options"),
    ({"layout": "dedicated", "plan": PLAN, "port": 1}, "unknown key(s) port; the options are "),
    ({"layout": "dedicated"}, "missing key(s) plan"),
    ({"layout": "mixed", "plan": PLAN}, "layout: 'mixed' is not one of dedicated, connect"),
    ({"layout": "dedicated", "plan": PLAN, "timeout": 0}, "timeout: 0 must be at least 1 (seconds)"),
    ({"layout": "dedicated", "plan": PLAN, "flows": ["B->A"]}, "flows: B->A is not an enabled flow of the plan (A->B)"),
    ({"layout": "connect", "plan": PLAN}, "plan: not the connect role's plan"),
])
def test_load_params_refuses(config, message):
    with pytest.raises(lag_exporter.ConfigError) as raised:
        lag_exporter.load_params(config)
    assert str(raised.value).startswith(message)


def scrape(read):
    log = io.StringIO()
    registry = CollectorRegistry()
    registry.register(lag_exporter.LagCollector({"layout": "dedicated"}, read, log))
    samples = dict()
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples, log.getvalue()


def labels(partition):
    return (("flow", "A->B"), ("partition", partition), ("topic", "orders"))


def test_a_reading_that_worked():
    samples, log = scrape(lambda params: (ROWS, ["flow A->B: a warning"]))
    assert samples[("kafkaops_mm2_lag_records", labels("0"))] == 7
    assert samples[("kafkaops_mm2_lag_records", labels("1"))] == 0
    assert samples[("kafkaops_mm2_lag_seconds", labels("0"))] == 2.25
    assert samples[("kafkaops_mm2_lag_reading_ok", ())] == 1
    assert samples[("kafkaops_mm2_lag_reading_seconds", ())] >= 0
    assert len(samples) == 6
    assert log == "mm2_lag_exporter: flow A->B: a warning\n"


def test_a_failed_reading_shows_no_lag():
    def read(params):
        raise Failed("cluster B: unreachable")
    samples, log = scrape(read)
    assert samples[("kafkaops_mm2_lag_reading_ok", ())] == 0
    assert not [key for key in samples if key[0].startswith("kafkaops_mm2_lag_records")]
    assert log == "mm2_lag_exporter: the lag was not read: cluster B: unreachable\n"


@pytest.mark.parametrize("text, expected", [
    ("127.0.0.1:9405", ("127.0.0.1", 9405)),
    (":9405", ("0.0.0.0", 9405)),
    ("[::1]:9405", ("::1", 9405)),
])
def test_listen_address(text, expected):
    assert lag_exporter.listen_address(text) == expected


@pytest.mark.parametrize("text", ["9405", "host:", "host:0", "host:70000", "host:x"])
def test_listen_address_refuses(text):
    with pytest.raises(Exception, match="is not ADDR:PORT"):
        lag_exporter.listen_address(text)
