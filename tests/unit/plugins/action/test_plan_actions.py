# -*- coding: utf-8 -*-
"""The controller actions' arguments: Ansible checks them against each action's ARGUMENT_SPEC, which says
what the action's documentation stub (plugins/modules/<action>.py) says, option for option."""

from __future__ import annotations

import importlib
import json

import pytest
import yaml

import local_playbook

COLLECTION = "ansible_collections.kafkaops.mirrormaker.plugins"
SMOKE_ARGS = {
    "mode": "smoke", "checks": ["markers"], "topics": ["mm2-smoke"], "records": 10, "payload_bytes": 16,
    "partitions": 1, "timeouts": {}, "reconcile_topics": [], "extra_checks": {}, "jars_src": "", "wheels_src": "",
    "spark_master": "local[1]", "spark_master_timeout": 10, "user": "", "jaas": {}, "krb5_conf": "", "model": {},
}
# Each action with arguments that pass Ansible's checks, and one of its required options.
ACTIONS = {
    "connect_plan": ({"clusters": [], "flows": [], "properties": {}, "options": {}, "source": "A", "target": "B",
                      "settings": {}}, "settings"),
    "kafka_broker_plan": ({"members": [], "host": "k-1"}, "host"),
    "mm2_config": ({"clusters": [], "flows": []}, "flows"),
    "role_vars_check": ({"role_path": "/nowhere", "values": {}}, "values"),
    "mm2_smoke_plan": (SMOKE_ARGS, "model"),
}


def _unknown(action):
    supported = ", ".join(sorted(importlib.import_module("%s.action.%s" % (COLLECTION, action)).ARGUMENT_SPEC))
    return ("Unsupported parameters for (%s.action.%s) module: colour. Supported parameters include: %s."
            % (COLLECTION, action, supported))


CASES = [(action, case) for action in ACTIONS for case in ("missing", "unknown")]
EXPECTED = {
    "missing": lambda action: "missing required arguments: %s" % ACTIONS[action][1],
    "unknown": _unknown,
}


@pytest.fixture(scope="module")
def refusals(tmp_path_factory):
    """What each action answers in CASES, from one ansible-playbook run: (action, case) -> msg."""
    tasks = []
    for action, case in CASES:
        args, required = ACTIONS[action]
        args = {k: v for k, v in args.items() if k != required} if case == "missing" else dict(args, colour="red")
        tasks.append({"name": "%s %s" % (action, case), "kafkaops.mirrormaker." + action: args, "ignore_errors": True})
    playbook = tmp_path_factory.mktemp("actions") / "play.yml"
    playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}], sort_keys=False))
    result = local_playbook.run(playbook, env={"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json"})
    report = json.loads(result.stdout)
    return {tuple(task["task"]["name"].split()): res for task in report["plays"][0]["tasks"]
            for res in task["hosts"].values()}


@pytest.mark.parametrize("action, case", CASES, ids=["%s-%s" % c for c in CASES])
def test_arguments_are_refused_with_ansibles_message(refusals, action, case):
    res = refusals[(action, case)]
    assert res.get("failed"), res
    assert res["msg"] == EXPECTED[case](action)


def test_a_host_that_is_not_a_member_is_refused(tmp_path):
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": [
        {"kafkaops.mirrormaker.kafka_broker_plan": {"members": [{"host": "k-1"}], "host": "k-2"}}]}]))
    result = local_playbook.run(playbook, env={"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json"})
    res = list(json.loads(result.stdout)["plays"][0]["tasks"][0]["hosts"].values())[0]
    assert res["msg"] == "kafka_broker_plan: host: 'k-2' is not one of the members"


def _as_spec(option):
    return {"type": option.get("type", "str"), "elements": option.get("elements"),
            "required": option.get("required", False), "default": option.get("default"),
            "no_log": option.get("no_log", False)}


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_argument_spec_is_the_documented_one(action):
    documented = yaml.safe_load(importlib.import_module("%s.modules.%s" % (COLLECTION, action)).DOCUMENTATION)["options"]
    spec = importlib.import_module("%s.action.%s" % (COLLECTION, action)).ARGUMENT_SPEC
    assert {name: _as_spec(option) for name, option in spec.items()} == \
        {name: _as_spec(option) for name, option in documented.items()}
