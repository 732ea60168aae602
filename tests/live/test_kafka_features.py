"""kafka_features against a REAL broker of the lab's release formatted at 3.9's feature levels.

That broker is what a cluster upgraded from 3.9 is once every node runs the new release and before
its levels are finalized: the module reads them, validates the finalization in check mode without
applying it, finalizes them at the release the broker runs, then finds nothing to do, and never
lowers a finalized level. Through the release's own kafka-features.sh, as the kafka_broker role
runs it; tests/integration/kraft/test_upgrade.py finalizes a whole upgraded lab.

And a broker of the lab's 3.9.1 archive at metadata.version 3.6-IV2, below 3.7 as the 3.0-IV1 KAFKA-20839
leaves a new cluster at (3.9.1 formats nothing older than 3.3-IV0): its controller gives the health
probe the answer whose cause the kafka_broker role removes, and the module finalizes it with that
release's own tool, which has no --release-version.
"""

import glob
import os
import re
import subprocess
import time

import pytest
import yaml

import harness
from jobtools import run_ansible_module
from lab_process import REPO

FROM = "3.9"


@pytest.fixture(scope="module")
def old_levels(tmp_path_factory):
    """A broker of the lab's archive formatted with --release-version 3.9; (bootstrap, its tool, its release)."""
    lab = harness.Lab(workdir=str(tmp_path_factory.mktemp("features")))
    try:
        lab.start_brokers(("F",), release=FROM)
        release = re.search(r"kafka_2\.13-(\d+\.\d+)\.\d+\.tgz$", os.path.basename(lab.archive)).group(1)
        yield lab.bootstrap("F"), lab.bin("kafka-features.sh"), release
    finally:
        lab.stop()


def features(old_levels, *extra, **args):
    bootstrap, tool, _release = old_levels
    proc, result = run_ansible_module("kafkaops.mirrormaker.kafka_features",
                                      dict(tool=tool, bootstrap_servers=bootstrap, **args), *extra)
    return proc, result


def test_finalizes_at_the_release_once_and_never_lowers(old_levels):
    release = old_levels[2]
    _proc, read = features(old_levels)
    assert not read["changed"] and read["features"]["metadata.version"].startswith(FROM + "-"), read

    _proc, dry = features(old_levels, "--check", "--diff", release_version=release)
    assert dry["changed"], dry
    assert dry["updated"]["metadata.version"] > 0, dry
    assert dry["features"]["metadata.version"] == "level %d" % dry["updated"]["metadata.version"], dry
    _proc, still = features(old_levels)
    assert still["features"] == read["features"], "check mode changed the levels: %s" % still

    _proc, done = features(old_levels, "--diff", release_version=release)
    assert done["changed"] and done["before"] == read["features"], done
    assert done["features"]["metadata.version"].startswith(release + "-"), done
    assert set(done["updated"]) == set(dry["updated"]), (dry, done)
    assert "metadata.version=%s" % done["features"]["metadata.version"] in done["diff"]["after"], done

    _proc, again = features(old_levels, release_version=release)
    assert not again["changed"] and again["features"] == done["features"], again
    _proc, older = features(old_levels, release_version=FROM)
    assert not older["changed"] and older["features"] == done["features"], older


def test_a_release_not_given_as_major_minor_is_refused_naming_it(old_levels):
    proc, result = features(old_levels, release_version=old_levels[2] + ".1")
    assert proc.returncode != 0 and result["msg"].startswith("release_version: "), result


def _probe_stuck_text():
    """The answer whose cause the kafka_broker role knows and, in the run that formats a cluster, removes (its vars, the one home)."""
    with open(os.path.join(REPO, "roles", "kafka_broker", "vars", "main.yml")) as fh:
        return yaml.safe_load(fh)["__kafka_broker_service"]["probe_stuck"]["text"]


def test_a_3x_cluster_below_3_7_is_finalized_with_its_own_tool(tmp_path_factory):
    archives = sorted(glob.glob(os.path.join(REPO, ".cache", "kafka", "kafka_2.13-3.9.*.tgz")))
    assert archives, "no 3.9 lab archive in .cache/kafka (scripts/bootstrap.sh assembles it)"
    lab = harness.Lab(archive=archives[-1], workdir=str(tmp_path_factory.mktemp("features39")))
    try:
        lab.start_brokers(("L",), release="3.6-IV2")
        quorum = [lab.bin("kafka-metadata-quorum.sh"), "--bootstrap-controller", lab.brokers["L"]["controller"],
                  "describe", "--status"]
        before = subprocess.run(quorum, capture_output=True, text=True, timeout=180, check=False)
        assert before.returncode != 0 and _probe_stuck_text() in before.stderr, before

        proc, done = run_ansible_module("kafkaops.mirrormaker.kafka_features",
                                        dict(tool=lab.bin("kafka-features.sh"), bootstrap_servers=lab.bootstrap("L"),
                                             release_version="3.9"), "--diff")
        assert proc.returncode == 0, done
        assert done["changed"] and done["before"]["metadata.version"] == "3.6-IV2", done
        assert done["features"]["metadata.version"].startswith("3.9-"), done

        deadline, after = time.time() + 60, None
        while time.time() < deadline:
            after = subprocess.run(quorum, capture_output=True, text=True, timeout=180, check=False)
            if after.returncode == 0 and "LeaderId" in after.stdout:
                break
            time.sleep(2)
        assert after.returncode == 0 and "LeaderId" in after.stdout, after
    finally:
        lab.stop()
