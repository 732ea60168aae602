# -*- coding: utf-8 -*-
"""kafka_broker_scram_users through the role itself, run by ansible-playbook on localhost.

The preflight refuses each fault with its own message naming the variable, and never prints a
password; the format tasks (roles/kafka_broker/tasks/format.yml) run a stand-in kafka-storage.sh
that records its command line, so the test sees the argv the role passes, that a format with users
shows nothing of it even at -vvv, and that a failed format is reported with the passwords masked.
"""

from __future__ import annotations

import json
import sys

import pytest
import yaml

import local_playbook
from test_preflight_rules import failures, preflight_play, run_playbook

SECRET = "pw-s3cret"
SASL_LISTENERS = [{"name": "CLIENT", "port": 9092, "protocol": "SASL_PLAINTEXT"}]
SCRAM_PROPERTIES = {
    "sasl.enabled.mechanisms": "SCRAM-SHA-512",
    "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
    "listener.name.client.scram-sha-512.sasl.jaas.config":
        'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="%s";' % SECRET,
}
BASE = {"kafka_broker_advertised_host": "k1", "kafka_broker_listeners": SASL_LISTENERS,
        "kafka_broker_inter_broker_listener": "CLIENT", "kafka_broker_properties": SCRAM_PROPERTIES,
        "kafka_broker_scram_users": [{"name": "admin", "password": SECRET}]}


def test_preflight_passes_scram_users_and_a_scram_inter_broker_listener(tmp_path):
    result, report = run_playbook(tmp_path, preflight_play("kafka_broker", BASE))
    assert result.returncode == 0, failures(report)
    assert SECRET not in result.stdout + result.stderr


@pytest.mark.parametrize("variables, expected", [
    ({"kafka_broker_scram_users": [{"name": "", "password": SECRET}]}, ["kafka_broker_scram_users[0].name: empty"]),
    ({"kafka_broker_scram_users": [{"name": "admin", "password": SECRET}, {"name": "alice", "password": ""}]},
     ["kafka_broker_scram_users[1].password: empty (SCRAM password empty for user 'alice')"]),
    ({"kafka_broker_scram_users": [{"name": "admin", "password": SECRET, "mechanism": "SCRAM-SHA-1"}]},
     ["kafka_broker_scram_users[0].mechanism: 'SCRAM-SHA-1' is not one of SCRAM-SHA-256, SCRAM-SHA-512"]),
    ({"kafka_broker_scram_users": [{"name": "admin", "password": SECRET, "pasword": "x"}]},
     ["kafka_broker_scram_users[0].pasword: unknown key; did you mean 'password'?"]),
    ({"kafka_broker_scram_users": [{"name": "admin", "password": SECRET}, {"name": "admin", "password": "other"}]},
     ["kafka_broker_scram_users[1]: user 'admin' with SCRAM-SHA-512 is already kafka_broker_scram_users[0]"]),
    ({"kafka_broker_scram_users": [{"name": "admin", "password": SECRET + ",x"}]},
     ["kafka_broker_scram_users[0].password: holds a ',', which kafka-storage.sh format --add-scram cannot pass (it "
      "splits its argument on every ',' and has no escape); choose another password or add such a user after the "
      "first start with the Admin API (the kafka_scram_user module), which takes any string"]),
    ({"kafka_broker_scram_users": [{"name": "admin", "password": SECRET, "iterations": 100}]},
     ["kafka_broker_scram_users[0].iterations: 100 is not a whole number from 4096 to 16384 (Kafka's bounds for "
      "SCRAM-SHA-512)"]),
    ({"kafka_broker_properties": dict(SCRAM_PROPERTIES, **{"sasl.enabled.mechanisms": "PLAIN"})},
     ["kafka_broker_properties: sasl.mechanism.inter.broker.protocol is SCRAM-SHA-512, but the inter-broker listener "
      "CLIENT (SASL_PLAINTEXT) does not offer it: it offers PLAIN (sasl.enabled.mechanisms); add SCRAM-SHA-512 there "
      "or name a mechanism it offers"]),
    ({"kafka_broker_properties": dict(SCRAM_PROPERTIES, **{"listener.name.client.sasl.enabled.mechanisms": "PLAIN"})},
     ["kafka_broker_properties: sasl.mechanism.inter.broker.protocol is SCRAM-SHA-512, but the inter-broker listener "
      "CLIENT (SASL_PLAINTEXT) does not offer it: it offers PLAIN (listener.name.client.sasl.enabled.mechanisms); "
      "add SCRAM-SHA-512 there or name a mechanism it offers"]),
    ({"kafka_broker_properties": dict(SCRAM_PROPERTIES, **{"listener.name.CLIENT.sasl.enabled.mechanisms": "PLAIN"})},
     ["kafka_broker_properties: listener.name.CLIENT.sasl.enabled.mechanisms is never read: Kafka looks listener "
      "settings up under the lower-case listener name (listener.name.client.sasl.enabled.mechanisms)"]),
], ids=["name-empty", "password-empty", "mechanism-unknown", "key-typo", "duplicate", "password-comma",
        "iterations-low", "inter-broker-mechanism-not-offered", "listener-override-not-offering",
        "upper-case-listener-prefix"])
def test_preflight_refuses_one_message_per_fault(tmp_path, variables, expected):
    result, report = run_playbook(tmp_path, preflight_play("kafka_broker", dict(BASE, **variables)))
    assert result.returncode != 0
    assert failures(report) == expected
    assert SECRET not in result.stdout + result.stderr


# ---------------------------------------------------------------------- the format tasks

STAND_IN = """#!/bin/sh
# A stand-in for kafka-storage.sh: records its arguments and locale, then succeeds (writing
# meta.properties as the real one does) or fails printing what it was given, as Kafka's
# ScramParser does in its error messages.
"%(python)s" -c 'import json, os, sys; json.dump({"argv": sys.argv[1:], "lc_all": os.environ.get("LC_ALL")}, open("%(record)s", "w"))' "$@"
if [ -n "$STAND_IN_FAIL" ]; then
    echo "Error: Unknown SCRAM configurations in '$*'" >&2
    exit 1
fi
echo "cluster.id=x" > "%(meta)s"
echo "Formatting metadata directory %(data)s with metadata.version 4.3-IV0."
"""


def format_case(tmp_path, users, fail=False, verbose=()):
    current = tmp_path / "kafka"
    (current / "bin").mkdir(parents=True)
    data = tmp_path / "data"
    data.mkdir()
    record = tmp_path / "argv.json"
    script = current / "bin" / "kafka-storage.sh"
    script.write_text(STAND_IN % {"python": sys.executable, "record": record, "meta": data / "meta.properties", "data": data})
    script.chmod(0o755)
    variables = {"__kafka_common_current_dir": str(current), "kafka_common_user": "root",
                 "kafka_broker_config_dir": str(tmp_path / "etc"), "kafka_broker_log_dirs": [str(data)],
                 "__kafka_broker_cluster_ids": {"kafka": "AAAAAAAAAAAAAAAAAAAAAA"}, "__kafka_broker_meta": {},
                 "kafka_broker_scram_users": users}
    plays = [{"hosts": "localhost", "gather_facts": False, "vars": variables,
              "environment": {"STAND_IN_FAIL": "1" if fail else ""},
              "tasks": [{"ansible.builtin.include_role": {"name": "kafkaops.mirrormaker.kafka_broker",
                                                          "tasks_from": "format"}}]}]
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump(plays, sort_keys=False))
    result = local_playbook.run(playbook, *verbose)
    return result, (json.loads(record.read_text()) if record.exists() else None)


def test_format_passes_the_users_and_shows_nothing_of_them_even_at_vvv(tmp_path):
    users = [{"name": "admin", "password": SECRET},
             {"name": "alice", "password": 'a"b=c]', "mechanism": "SCRAM-SHA-256", "iterations": 8192}]
    result, seen = format_case(tmp_path, users, verbose=["-vvv", "--diff"])
    assert result.returncode == 0, result.stdout[-3000:]
    assert seen["argv"] == ["format", "--cluster-id", "AAAAAAAAAAAAAAAAAAAAAA", "--config",
                            str(tmp_path / "etc" / "server.properties"),
                            "--add-scram", 'SCRAM-SHA-512=[name="admin",password="%s"]' % SECRET,
                            "--add-scram", 'SCRAM-SHA-256=[name="alice",password="a"b=c]",iterations=8192]']
    assert seen["lc_all"] == "C.UTF-8"
    output = result.stdout + result.stderr
    assert SECRET not in output and 'a"b=c]' not in output
    assert "the output has been hidden" in output


def test_format_without_users_shows_its_output(tmp_path):
    result, seen = format_case(tmp_path, [], verbose=["-v"])
    assert result.returncode == 0, result.stdout[-3000:]
    assert "--add-scram" not in seen["argv"]
    assert "Formatting metadata directory" in result.stdout


def test_a_failed_format_is_reported_with_the_passwords_masked(tmp_path):
    result, seen = format_case(tmp_path, [{"name": "admin", "password": SECRET}], fail=True, verbose=["-vvv"])
    assert seen is not None and result.returncode != 0
    assert SECRET not in result.stdout + result.stderr
    assert ("Task failed: Action failed: kafka-storage.sh format failed (rc 1): non-zero return code; Error: Unknown "
            "SCRAM configurations in 'format --cluster-id AAAAAAAAAAAAAAAAAAAAAA --config %s --add-scram "
            "SCRAM-SHA-512=[name=\"admin\",password=\"********\"]'" % (tmp_path / "etc" / "server.properties")
            ) in result.stdout


def test_check_mode_runs_nothing_and_does_not_fail(tmp_path):
    result, seen = format_case(tmp_path, [{"name": "admin", "password": SECRET}], verbose=["--check"])
    assert result.returncode == 0, result.stdout[-3000:]
    assert seen is None
    assert SECRET not in result.stdout + result.stderr
