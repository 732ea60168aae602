"""A run limited with --tags: the plans the roles read are still built, so each role's tags work
alone, and a change made under a configure tag restarts what it changed; a change made while the
service's tags were skipped is restarted by the next run that runs them. (Bad input under a tag:
test_input_and_secrets.py.)

Runs site.yml against the converged Molecule lab (real hosts, brokers and MirrorMaker), once, from
the first MirrorMaker host's test module.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest
import yaml
from conftest import ansible_playbook, hosts_of, node, played, started_at, targets
import recap  # tests/lib, on the path once conftest is loaded

testinfra_hosts = targets("mirrormakers")[:1]

SITE = "kafkaops.mirrormaker.site"
# Shown by the preflight play of every run: what the roles' own tasks read.
PREFLIGHT = "Check the broker input and derive each cluster's layout"


def server_properties(host, name):
    return node(host, name).file("/etc/kafka/server.properties").content_string


# Tasks of each phase's tags, for both roles of the deployment, that the run must have run.
@pytest.mark.parametrize("tags, ran", [
    ("kafka_broker_install,mirrormaker_install", ["Install the Java runtime packages",
                                                  "Install the Prometheus JMX exporter agent"]),
    ("kafka_broker_configure,mirrormaker_configure", ["Render server.properties", "Render mm2.properties"]),
    ("kafka_broker_run,mirrormaker_run", ["Start and enable kafka", "Start and enable kafka-mirrormaker"]),
], ids=["install", "configure", "run"])
def test_a_run_limited_by_tags_runs_its_tasks_and_changes_nothing(tags, ran):
    result = ansible_playbook(SITE, "--tags", tags)
    output = result.stdout + result.stderr
    assert result.returncode == 0, played(result)
    changes = recap.changed(output)
    assert set(changes) >= set(hosts_of("kafka_brokers") + hosts_of("mirrormakers")), changes
    assert all(changed == 0 for changed in changes.values()), changes
    for task in [PREFLIGHT] + ran:
        assert task in output, "%s not run: %s" % (task, played(result))


@contextmanager
def retention_hours(host, tmp_path, hours):
    """Yields (extra vars file setting log.retention.hours to ``hours``, the brokers, their start
    times); afterwards a configure-tag run puts the scenario's server.properties back, byte for
    byte, restarted the same way."""
    brokers = hosts_of("kafka_brokers")
    extra = tmp_path / "retention.yml"
    extra.write_text(yaml.safe_dump({"kafka_broker_properties": {"log.retention.hours": hours}}))
    original = {name: server_properties(host, name) for name in brokers}
    try:
        yield extra, brokers, {name: started_at(node(host, name), "kafka") for name in brokers}
    finally:
        back = ansible_playbook(SITE, "--tags", "kafka_broker_configure")
    assert back.returncode == 0, played(back)
    assert {name: server_properties(host, name) for name in brokers} == original


def test_a_change_under_the_configure_tag_restarts_the_brokers_it_changed(host, tmp_path):
    """The restart handler reads the service description the run tag's tasks record: a run limited
    to the configure tag must still restart (before, it wrote server.properties and then failed,
    leaving the brokers on their old configuration)."""
    with retention_hours(host, tmp_path, 170) as (extra, brokers, before):
        result = ansible_playbook(SITE, "--tags", "kafka_broker_configure", "-e", "@%s" % extra)
        assert result.returncode == 0, played(result)
        for name in brokers:
            assert "log.retention.hours=170" in server_properties(host, name).splitlines()
            assert started_at(node(host, name), "kafka") > before[name], "%s was not restarted" % name


def test_a_restart_a_run_skipped_is_made_by_the_next_run(host, tmp_path):
    """A run that skips the brokers' service tasks writes server.properties and cannot restart
    them (the handler has no service description); the next run that runs those tasks writes
    nothing, and still restarts them: server.properties is newer than their start. Before, the
    handler failed the first run, and no later run ever restarted the brokers."""
    with retention_hours(host, tmp_path, 171) as (extra, brokers, before):
        skipped = ansible_playbook(SITE, "--skip-tags", "kafka_broker_run", "-e", "@%s" % extra)
        assert skipped.returncode == 0, played(skipped)
        assert "kafka_broker: the service's tasks were skipped, so it is not restarted in this run" \
            in skipped.stdout, played(skipped)
        for name in brokers:
            assert "log.retention.hours=171" in server_properties(host, name).splitlines()
            assert started_at(node(host, name), "kafka") == before[name], "%s was restarted" % name
        made = ansible_playbook(SITE, "--tags", "kafka_broker_run", "-e", "@%s" % extra)
        assert made.returncode == 0, played(made)
        assert "Restart a running service that started before its files last changed" in made.stdout, played(made)
        for name in brokers:
            assert started_at(node(host, name), "kafka") > before[name], "%s was not restarted" % name


def test_the_smoke_job_again_without_its_install():
    """mm2_smoke_run alone: the job runs again on what the converge installed, its input checked."""
    result = ansible_playbook("kafkaops.mirrormaker.smoke", "--tags", "mm2_smoke_run")
    output = result.stdout + result.stderr
    assert result.returncode == 0, played(result)
    for task in ["Refuse smoke settings that break a rule and build the job's plan", "Run the job in mode smoke",
                 "Fail when replication is not proven"]:
        assert task in output, "%s not run: %s" % (task, played(result))
    assert "Create the job's Python environment" not in output, played(result)
