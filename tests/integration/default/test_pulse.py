"""pulse_register against every variant of the TEST DOUBLE of Pulse's accelo, on the lab's Pulse host
through a real pty (tests/pulse/variants.yml runs the real module there over SSH).

Pulse itself is not available here: the double (tests/pulse/accelo_double.py) reproduces only the
documented prompts and the documented command words. These tests verify the module's handling of
the dialogue, not Pulse. The registration converge made through roles/pulse (site.yml with
kafkaops_pulse_enabled) is checked at the end.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import INVENTORY, REPO, hosts_of, node, targets

testinfra_hosts = targets("mirrormakers")[:1]

SECRET = "S3cret-pulse-db"


@pytest.fixture(scope="module")
def variants(tmp_path_factory):
    out = tmp_path_factory.mktemp("pulse") / "variants.json"
    cmd = ["ansible-playbook", "-i", INVENTORY, str(REPO / "tests/pulse/variants.yml"), "-e", "pulse_variants_out=%s" % out]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-4000:]
    assert SECRET not in output
    results = json.loads(out.read_text())
    for name, case in sorted(results.items()):
        r = case["result"]
        print("%-26s %5.1f s  failed=%-5s changed=%-5s %s"
              % (name, case["seconds"], r.get("failed", False), r.get("changed"), (r.get("msg") or "")[:150]))
    return results


def answers(case):
    """key -> answers the double received."""
    got = {}
    for line in case["log"].splitlines():
        event = json.loads(line)
        if event["event"] == "answer":
            got.setdefault(event["key"], []).append(event["text"])
    return got


def mm2_nodes():
    return hosts_of("mirrormakers")


@pytest.mark.parametrize("name", ["plain", "spacing_case", "crlf", "split_prompt", "slow_prompt", "extra_questions"])
def test_documented_dialogue_variants_register(variants, name):
    case = variants[name]
    result = case["result"]
    assert not result.get("failed"), result.get("msg")
    assert result["changed"] and result["registered"]
    got = answers(case)
    assert got["monitor"] == ["y"]
    assert got["nodes"] == [",".join(mm2_nodes())]
    assert got["confirm"] == ["y"]
    assert got["jmx_port"] == ["9998"]
    assert sorted(h.split(".")[0] for h in result["hostnames"]) == sorted(mm2_nodes())


def test_other_questions_are_answered_and_the_secret_never_shows(variants):
    case = variants["extra_questions"]
    got = answers(case)
    assert got["cluster_name"] == ["mol"] and got["alerts"] == ["n"]
    # The double received the secret (its log is a test double's); the module's result never has it.
    assert SECRET in case["log"]
    assert SECRET not in json.dumps(case["result"])


def test_slow_prompt_waits_within_the_timeout_and_fails_past_it(variants):
    # the double sleeps 15 s before the JMX port question (tests/pulse/variant.yml)
    assert variants["slow_prompt"]["seconds"] >= 15
    short = variants["slow_prompt_short_timeout"]["result"]
    assert short["failed"] and "for 5 s " in short["msg"] and "timeout" in short["msg"].lower()
    assert short["transcript"]
    assert variants["slow_prompt_short_timeout"]["seconds"] < 15


def test_hostname_mismatch_answers_n_and_fails_with_both_lists(variants):
    case = variants["hostname_mismatch"]
    result = case["result"]
    assert result["failed"] and not result.get("registered")
    assert answers(case)["confirm"] == ["n"]
    assert any(h.startswith("stale-") for h in result["hostnames"])
    for name in mm2_nodes():
        assert name in result["msg"]
    assert "stale-" in result["msg"]


def test_unknown_question_fails_at_once_naming_it(variants):
    case = variants["unknown_question"]
    result = case["result"]
    assert result["failed"] and "chroot" in result["msg"].lower()
    assert "zookeeper_chroot" not in answers(case)
    # The grace period (5 s), not the prompt timeout (60 s).
    assert case["seconds"] < 30


def test_error_exit_and_already_registered_fail_with_the_transcript(variants):
    error = variants["error_exit"]["result"]
    assert error["failed"] and "ERROR" in error["transcript"]
    done = variants["already_registered"]["result"]
    assert done["failed"] and done["transcript"] and not done.get("registered")


def test_the_same_registration_again_runs_nothing_and_a_changed_port_would_register(variants):
    again = variants["plain_again"]
    assert not again["result"].get("failed") and again["result"]["changed"] is False
    # The double was not started: its log, emptied before the run, stays empty.
    assert again["log"] == ""
    check = variants["check_changed_port"]
    assert not check["result"].get("failed") and check["result"]["changed"] is True
    assert check["log"] == ""
    diff = check["result"].get("diff") or {}
    assert "9997" in json.dumps(diff.get("after", "")) and "9998" in json.dumps(diff.get("before", ""))


def test_converge_registered_mm2_through_the_role(host):
    pulse = node(host, hosts_of("pulse")[0])
    state = pulse.file("/var/lib/kafkaops/pulse-mm2.json")
    assert state.exists and state.mode == 0o600 and state.user == "root"
    record = json.loads(state.content_string)
    assert json.dumps(record).count("9998") >= 1
    for name in mm2_nodes():
        assert name in json.dumps(record)
