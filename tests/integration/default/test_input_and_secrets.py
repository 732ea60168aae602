"""Bad input is refused before any host changes, and no secret reaches the output or a world-readable file.

Runs the collection's playbooks against the converged Molecule lab (real hosts, real brokers,
real MirrorMaker), once, from the first MirrorMaker host's test module.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml
from conftest import REPO, ansible_playbook, hosts_of, node, targets
import recap  # tests/lib, on the path once conftest is loaded

testinfra_hosts = targets("mirrormakers")[:1]

# A secret in every documented place, each a distinct string so that a leak names its place.
SECRETS = {
    "broker-property": "S3cret-broker-property",
    "broker-jaas": "S3cret-broker-jaas",
    "cluster-property": "S3cret-cluster-property",
    "cluster-jaas": "S3cret-cluster-jaas",
    "global-property": "S3cret-global-property",
    "flow-property": "S3cret-flow-property",
    "jmx-user": "S3cret-jmx-user",
    "jmx-keystore": "S3cret-jmx-keystore",
    "pulse-answer": "S3cret-pulse-answer",
}


@pytest.fixture(scope="module")
def secret_vars(tmp_path_factory):
    path = tmp_path_factory.mktemp("secrets") / "secrets.yml"
    lab = yaml.safe_load((REPO / "inventories/lab/group_vars/mirrormakers.yml").read_text())
    clusters = [dict(c) for c in lab["mirrormaker_clusters"]]
    # The lab's cluster properties are an expression (lab_cluster_properties): the secret joins it there.
    clusters[0]["properties"] = "{{ lab_cluster_properties | combine({'ssl.truststore.password': %s}) }}" % json.dumps(
        SECRETS["cluster-property"])
    clusters[1]["sasl_jaas_config"] = (
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="mm2" password="%s";'
        % SECRETS["cluster-jaas"])
    flows = [dict(f) for f in lab["mirrormaker_flows"]]
    flows[0]["properties"] = {"producer.override.ssl.key.password": SECRETS["flow-property"]}
    data = {
        "kafka_broker_properties": {"ssl.keystore.password": SECRETS["broker-property"]},
        "kafka_broker_jaas_config": 'KafkaServer { x required password="%s"; };' % SECRETS["broker-jaas"],
        "mirrormaker_clusters": clusters,
        "mirrormaker_flows": flows,
        "mirrormaker_properties": dict(lab["mirrormaker_properties"],
                                       **{"ssl.keystore.password": SECRETS["global-property"]}),
        "mirrormaker_jmx_authenticate": True,
        "mirrormaker_jmx_users": [{"name": "monitor", "password": SECRETS["jmx-user"]}],
        "mirrormaker_jmx_ssl": True,
        "mirrormaker_jmx_ssl_keystore": "/etc/kafka-mirrormaker/jmx.p12",
        "mirrormaker_jmx_ssl_keystore_password": SECRETS["jmx-keystore"],
        # The check run would register with Pulse again (a new answer): its diff shows the answers.
        "pulse_secret_answers": [{"prompt": "database password", "answer": SECRETS["pulse-answer"]}],
    }
    path.write_text(yaml.safe_dump(data))
    return path


def test_check_diff_vvv_never_prints_a_secret(secret_vars):
    result = ansible_playbook("kafkaops.mirrormaker.site", "--check", "--diff", "-vvv", "-e", "@%s" % secret_vars)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    # The run did render the secret-bearing keys (diffs show their names, masked).
    assert "ssl.keystore.password" in output and "********" in output
    leaked = [place for place, value in SECRETS.items() if value in output]
    assert leaked == [], "secrets printed by --check --diff -vvv: %s" % leaked
    assert "molecule-only-secret" not in output  # the scenario's own JAAS password


def test_files_holding_a_secret_are_not_world_readable(host):
    for name in hosts_of("kafka_brokers") + hosts_of("mirrormakers"):
        other = node(host, name)
        found = other.run("grep -rlI -e molecule-only-secret -e password /etc/kafka /etc/kafka-mirrormaker "
                          "/etc/systemd/system /opt/kafka/current/bin 2>/dev/null").stdout.split()
        for path in found:
            f = other.file(path)
            if "molecule-only-secret" in f.content_string or re.search(r"(?i)password\s*[=:]\s*\S", f.content_string):
                assert f.mode & 0o007 == 0, "%s:%s holds a secret and is mode %o" % (name, path, f.mode)
                assert f.user == "root" or f.mode & 0o077 == 0, "%s:%s" % (name, path)


def _unreachable_b():
    lab = yaml.safe_load((REPO / "inventories/lab/group_vars/mirrormakers.yml").read_text())
    clusters = [dict(c) for c in lab["mirrormaker_clusters"]]
    clusters[1]["bootstrap_servers"] = hosts_of("kafka_b")[0] + ":9999"
    return {"mirrormaker_clusters": clusters}


UNKNOWN_FLOW_KEY = ({"mirrormaker_flows": [{"source": "A", "target": "B", "topcs": ["orders"]}]},
                    "mirrormaker_flows[0].topcs: unknown key; did you mean 'topics'?")


# `args` limits the run: input is still checked when --tags leaves out the roles' own check tasks.
@pytest.mark.parametrize("bad, message, args", [
    UNKNOWN_FLOW_KEY + ([],),
    UNKNOWN_FLOW_KEY + (["--tags", "mirrormaker_run"],),
    ({"mirrormaker_kafka_opts": "-Djavax.net.ssl.keyStorePassword=x"},
     "mirrormaker_kafka_opts: carries a secret (javax.net.ssl.keyStorePassword)", []),
    (_unreachable_b, "mirrormaker_clusters[1] (alias B): no bootstrap server answered", []),
], ids=["unknown-flow-key", "unknown-flow-key-under-tags", "secret-in-jvm-options", "unreachable-cluster"])
def test_bad_input_changes_no_host(tmp_path, bad, message, args):
    extra = tmp_path / "bad.yml"
    extra.write_text(yaml.safe_dump(bad() if callable(bad) else bad))
    result = ansible_playbook("kafkaops.mirrormaker.site", *args, "-e", "@%s" % extra)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-3000:]
    changes = recap.changed(output)
    assert changes and all(changed == 0 for changed in changes.values()), changes
    assert message in output, output[-3000:]
