# -*- coding: utf-8 -*-
"""kafka_features's run: which kafka-features.sh commands it runs, and the input each failure names.

The tool is a test double answering with lines of the real tool's format (FeatureCommand): only
for what a real broker does not readily show (a describe that fails, a refused upgrade).
tests/live/test_kafka_features.py runs the real tool against a real broker formatted at 3.9.
"""

from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.modules import kafka_features as module

DESCRIBE_39 = ("Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: 4.3-IV0\t"
               "FinalizedVersionLevel: 3.9-IV0\tEpoch: 5\n")
DESCRIBE_43 = DESCRIBE_39.replace("FinalizedVersionLevel: 3.9-IV0", "FinalizedVersionLevel: 4.3-IV0")


class FakeModule(object):
    """Answers the commands with ``answers`` ((rc, stdout, stderr)), in order; records each command."""

    def __init__(self, answers, check_mode=False, **params):
        self.answers, self.commands, self.check_mode, self._diff = list(answers), [], check_mode, True
        self.params = dict(tool="/k/bin/kafka-features.sh", bootstrap_servers="b1:9092", command_config=None,
                           release_version="4.3")
        self.params.update(params)

    def run_command(self, argv):
        self.commands.append(argv[3:])
        return self.answers.pop(0)


def test_a_cluster_behind_is_finalized_then_read_again():
    fake = FakeModule([(0, DESCRIBE_39, ""), (0, "metadata.version was upgraded to 27.\n", ""), (0, DESCRIBE_43, "")],
                      command_config="/etc/kafka/probe.properties")
    result = module.run(fake)
    assert fake.commands == [["--command-config", "/etc/kafka/probe.properties", "describe"],
                             ["--command-config", "/etc/kafka/probe.properties", "upgrade", "--release-version", "4.3"],
                             ["--command-config", "/etc/kafka/probe.properties", "describe"]]
    assert result["changed"] and result["features"] == {"metadata.version": "4.3-IV0"}
    assert result["diff"] == {"before": "metadata.version=3.9-IV0\n", "after": "metadata.version=4.3-IV0\n"}


def test_check_mode_asks_for_a_dry_run_and_shows_the_levels_it_would_finalize():
    fake = FakeModule([(0, DESCRIBE_39, ""), (0, "metadata.version can be upgraded to 27.\n", "")], check_mode=True)
    result = module.run(fake)
    assert fake.commands[1] == ["upgrade", "--release-version", "4.3", "--dry-run"] and len(fake.commands) == 2
    assert result["changed"] and result["features"] == {"metadata.version": "level 27"}


def test_a_3x_tool_finalizes_metadata_version_alone():
    usage = "usage: kafka-features ...\nkafka-features: error: unrecognized arguments: '--release-version'\n"
    fake = FakeModule([(0, DESCRIBE_39.replace("3.9-IV0", "3.0-IV1"), ""), (1, "", usage),
                       (0, "metadata.version was upgraded to 21.\n", ""), (0, DESCRIBE_39, "")], release_version="3.9")
    result = module.run(fake)
    assert fake.commands[1:3] == [["upgrade", "--release-version", "3.9"], ["upgrade", "--metadata", "3.9"]]
    assert result["changed"] and result["features"] == {"metadata.version": "3.9-IV0"}


@pytest.mark.parametrize("describe, release", [(DESCRIBE_43, "4.3"), (DESCRIBE_43, "3.9"), (DESCRIBE_39, None)])
def test_a_cluster_at_or_past_the_release_or_no_release_is_only_read(describe, release):
    fake = FakeModule([(0, describe, "")], release_version=release)
    result = module.run(fake)
    assert fake.commands == [["describe"]] and not result["changed"]


@pytest.mark.parametrize("answers, message", [
    ([(1, "", "Timed out waiting for a node assignment.")],
     "bootstrap_servers: kafka-features.sh describe through b1:9092 failed (rc 1): Timed out waiting"),
    ([(0, DESCRIBE_39, ""), (1, "Could not upgrade metadata.version to 27. Invalid update version.\n", "1 out of 1")],
     "release_version: the cluster at b1:9092 refused to finalize its feature levels at 4.3: Could not upgrade "
     "metadata.version to 27. Invalid update version."),
    ([(0, DESCRIBE_39, ""), (1, "", "Unknown release version '4.3'.")],
     "release_version: the cluster at b1:9092 refused to finalize its feature levels at 4.3: Unknown release"),
])
def test_failures_name_the_input_at_fault(answers, message):
    with pytest.raises(module.Failed) as failed:
        module.run(FakeModule(answers))
    assert str(failed.value).startswith(message)
