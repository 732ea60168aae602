# -*- coding: utf-8 -*-
"""The playbooks that act on running services (restart, status, pulse) leave out the hosts their
role's state variable takes out, through one shared task file; run by ansible-playbook on local
hosts."""

from __future__ import annotations

import json
import os

import pytest
import yaml

import local_playbook

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = "tasks/leave_out_taken_out.yml"


def test_a_host_taken_out_ends_its_play_and_the_others_go_on(tmp_path):
    inventory = {"all": {"vars": {"ansible_connection": "local"},
                         "hosts": {"mm1": {"mirrormaker_state": "absent"}, "mm2": {}, "mm3": {"mirrormaker_state": "present"},
                                   "w1": {"connect_state": "absent"}}}}
    plays = [{"hosts": "all", "gather_facts": False,
              "tasks": [{"name": "leave out", "ansible.builtin.include_tasks": os.path.join(REPO, "playbooks", SHARED),
                         "vars": {"__kafkaops_state_var": "mirrormaker_state"}},
                        {"name": "still here", "ansible.builtin.debug": {"msg": "ran"}}]}]
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "play.yml").write_text(yaml.safe_dump(plays, sort_keys=False))
    result = local_playbook.run(tmp_path / "play.yml", inventory=tmp_path / "hosts.yml",
                                env={"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json"})
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    ran = [t for t in report["plays"][0]["tasks"] if t["task"]["name"] == "still here"][0]["hosts"]
    # another role's state variable (w1's connect_state) does not take a MirrorMaker play's host out
    assert sorted(ran) == ["mm2", "mm3", "w1"]


STATE_VARS = {"mirrormakers": "mirrormaker_state", "connect_workers": "connect_state"}


@pytest.mark.parametrize("playbook, groups", [
    ("restart.yml", ["mirrormakers", "connect_workers"]),
    ("status.yml", ["mirrormakers"]),
    ("pulse.yml", ["mirrormakers"]),
])
def test_each_play_on_running_services_starts_by_leaving_out_hosts_taken_out(playbook, groups):
    with open(os.path.join(REPO, "playbooks", playbook), encoding="utf-8") as f:
        plays = [p for p in yaml.safe_load(f) if p.get("hosts") in STATE_VARS]
    assert [p["hosts"] for p in plays] == groups
    for play in plays:
        first = play["tasks"][0]
        assert first.get("ansible.builtin.include_tasks") == SHARED
        assert first["vars"]["__kafkaops_state_var"] == STATE_VARS[play["hosts"]]
