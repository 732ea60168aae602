# -*- coding: utf-8 -*-
"""mm2_lag_info: its refusals, each naming the option at fault, before any cluster is asked.

The figures are module_utils/mm2/lag.py's (test_mm2_lag.py); tests/live/test_mm2_lag.py runs the
module against a real MirrorMaker 2 held back, in both layouts.
"""

from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.connect import rest as connect_rest
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.client import Failed
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import model as mm2_model
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import lag_reader as module

CLUSTERS = [{"alias": "A", "bootstrap_servers": ["a:9092"]}, {"alias": "B", "bootstrap_servers": ["b:9092"]}]
FLOWS = [{"source": "A", "target": "B"}, {"source": "B", "target": "A", "enabled": False}]


def params(**given):
    out = dict((key, spec.get("default")) for key, spec in connect_rest.argument_spec().items())
    model = mm2_model.load(CLUSTERS, FLOWS)
    out.update(plan={"properties": dict(model.properties()), "flows": model.effective_flows()}, layout="dedicated",
               flows=None, client_properties={})
    out.update(given)
    return out


@pytest.mark.parametrize("given, expected", [
    ({}, []),
    ({"flows": []}, ["flows: an empty list reports nothing; leave it out to report every enabled flow"]),
    ({"timeout": 0}, ["timeout: 0 must be at least 1 (seconds)", "timeout: 0 is not from 1 to 300 seconds"]),
    ({"url": "localhost:8083"}, ["url: 'localhost:8083' is not an http:// or https:// URL of a Connect worker "
                                 "(e.g. http://localhost:8083)"]),
    ({"client_properties": {"A": "SSL"}}, ["client_properties.A: must be a mapping of client settings"]),
    ({"client_properties": {"B": {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN"}}},
     ["client_properties.B: security.protocol SASL_SSL needs sasl.plain.username and sasl.plain.password"]),
])
def test_input_errors(given, expected):
    assert module.input_errors(params(**given)) == expected


@pytest.mark.parametrize("given, names", [
    ({}, ["A->B"]),
    ({"flows": ["A->B"]}, ["A->B"]),
])
def test_flows_to_read(given, names):
    assert [f["name"] for f in module.flows_to_read(params(**given))] == names


@pytest.mark.parametrize("given, message", [
    ({"flows": ["B->A", "C->A"]}, "flows: B->A, C->A are not an enabled flow of the plan (A->B)"),
    ({"layout": "connect"}, "plan: not the connect role's plan (connect_plan's result with flow and connectors)"),
    ({"plan": {"properties": {}}}, "plan: not the mirrormaker role's plan (mm2_config's result with properties and flows)"),
])
def test_flows_to_read_refuses(given, message):
    with pytest.raises(Failed) as raised:
        module.flows_to_read(params(**given))
    assert str(raised.value) == message
