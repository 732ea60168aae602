# -*- coding: utf-8 -*-
"""kafka_common's check of a controller-local archive (roles/kafka_common/tasks/archive.yml), run by
ansible-playbook on localhost: the digest it is held to may be written in either case, as the
preflight accepts it, and a wrong one still fails."""

from __future__ import annotations

import hashlib
import json

import pytest
import yaml

import local_playbook

CONTENT = b"not really a Kafka release\n"
DIGEST = hashlib.sha512(CONTENT).hexdigest()
WRONG = hashlib.sha512(b"another archive").hexdigest()


def gpg_layout(digest):
    """The digest as ``gpg --print-md SHA512`` prints it: upper case, in groups, wrapped."""
    groups = [digest[i:i + 8].upper() for i in range(0, 128, 8)]
    return "kafka_2.13-3.9.1.tgz: " + " ".join(groups[:6]) + "\n" + " ".join(groups[6:]) + "\n"


def verify(tmp_path, given="", checksum_file=None):
    archive = tmp_path / "kafka_2.13-3.9.1.tgz"
    archive.write_bytes(CONTENT)
    if checksum_file is not None:
        (tmp_path / "kafka_2.13-3.9.1.tgz.sha512").write_text(checksum_file)
    plays = [{"hosts": "localhost", "gather_facts": False,
              "vars": {"kafka_common_archive_src": str(archive), "kafka_common_archive_sha512": given},
              "tasks": [{"ansible.builtin.include_role": {"name": "kafkaops.mirrormaker.kafka_common",
                                                          "tasks_from": "archive"}},
                        {"ansible.builtin.debug": {"var": "__kafka_common_archive_sha512"}}]}]
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump(plays, sort_keys=False))
    result = local_playbook.run(playbook, env={"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json"})
    return result, json.loads(result.stdout)


def last_result(report):
    return report["plays"][0]["tasks"][-1]["hosts"]["localhost"]


@pytest.mark.parametrize("given, checksum_file", [
    (DIGEST, None),
    (DIGEST.upper(), None),
    (DIGEST[:64].upper() + DIGEST[64:], None),
    ("", DIGEST + "  kafka_2.13-3.9.1.tgz\n"),
    ("", gpg_layout(DIGEST)),
], ids=["given-lower", "given-upper", "given-mixed", "file-sha512sum", "file-gpg-upper"])
def test_a_matching_archive_passes_whatever_the_case(tmp_path, given, checksum_file):
    result, report = verify(tmp_path, given, checksum_file)
    assert result.returncode == 0, result.stdout[-3000:]
    # The install records this digest on the hosts and compares it on the next run: always lower case.
    assert last_result(report)["__kafka_common_archive_sha512"] == DIGEST


@pytest.mark.parametrize("given, checksum_file", [
    (WRONG.upper(), None),
    ("", gpg_layout(WRONG)),
], ids=["given-upper", "file-gpg-upper"])
def test_a_different_archive_fails(tmp_path, given, checksum_file):
    result, report = verify(tmp_path, given, checksum_file)
    assert result.returncode != 0
    failed = [res for task in report["plays"][0]["tasks"] for res in task["hosts"].values() if res.get("failed")]
    assert len(failed) == 1 and "expected " + WRONG in failed[0]["msg"], failed
