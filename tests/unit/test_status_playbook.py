# -*- coding: utf-8 -*-
"""playbooks/status.yml refuses bad options before it reads anything, naming the variable.

Its reads and files are tested against the real lab (tests/integration/default/test_monitoring.py)."""

from __future__ import annotations

import os

import pytest

import local_playbook

PLAYBOOK = os.path.join(local_playbook.REPO, "playbooks", "status.yml")


@pytest.fixture()
def inventory(tmp_path):
    path = tmp_path / "hosts.yml"
    path.write_text("all:\n  children:\n    mirrormakers:\n      hosts:\n        mm2-x:\n"
                    "          ansible_connection: local\n          mirrormaker_jmx_exporter_enabled: true\n"
                    "          mirrormaker_jmx_exporter_port: 1\n")
    return path


@pytest.mark.parametrize("extra, message", [
    (["-e", "mm2_status_step=0"], "mm2_status_step: '0' is not a positive number of seconds"),
    (["-e", "mm2_status_prometheus_url=http://127.0.0.1:9090", "-e", "mm2_status_prometheus_via=monitor-9"],
     "mm2_status_prometheus_via: 'monitor-9' is not an inventory host"),
])
def test_bad_options_stop_the_run_before_any_read(inventory, tmp_path, extra, message):
    result = local_playbook.run(PLAYBOOK, "-e", "mm2_status_dir=%s" % (tmp_path / "out"), *extra, inventory=inventory)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert message in output, output[-3000:]
    # Nothing was read (the exporter's port 1 would have failed the read) and nothing written.
    assert "Read the JMX exporter" not in output
    assert not (tmp_path / "out").exists()
