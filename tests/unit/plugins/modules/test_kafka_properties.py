# -*- coding: utf-8 -*-
"""kafkaops.mirrormaker.kafka_properties, the real module run by ansible-playbook on localhost.

Each test writes into its own tmp dir: create, re-run, check mode, diff with secrets, and a
read-back through java.util.Properties (the call Kafka makes).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Write the properties
      kafkaops.mirrormaker.kafka_properties:
        path: "{{ dest }}"
        properties: "{{ props }}"
        sort: "{{ sort | default(true) }}"
        header: "{{ header | default('') }}"
        mode: "{{ file_mode | default(omit) }}"
      register: result
    - name: Save the result
      ansible.builtin.copy:
        content: "{{ result | to_json }}"
        dest: "{{ result_file }}"
        mode: "0600"
      check_mode: false
      diff: false
"""

BASE = {"bootstrap.servers": "a1:9092,a2:9092", "security.protocol": "SASL_SSL", "tasks.max": 4,
        "enable.auto.commit": False}
HEADER = "#\n# Ansible managed\n#\n# Written by the kafka_properties test"
EXPECTED_BASE = (HEADER + "\nbootstrap.servers=a1:9092,a2:9092\nenable.auto.commit=false\n"
                 "security.protocol=SASL_SSL\ntasks.max=4\n")


class Runner:
    def __init__(self, work):
        self.work = work
        self.dest = work / "conf" / "client.properties"
        self.dest.parent.mkdir()
        self.playbook = work / "play.yml"
        self.playbook.write_text(PLAYBOOK)
        self.result_file = work / "result.json"

    def run(self, props, *args, **variables):
        """Run the play; returns (completed process, the module's result or None on failure)."""
        variables.setdefault("dest", str(self.dest))
        variables.update(props=props, result_file=str(self.result_file))
        extra = self.work / "vars.json"
        extra.write_text(json.dumps(variables))
        if self.result_file.exists():
            self.result_file.unlink()
        env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
                   ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"),
                   ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
                   ANSIBLE_NOCOLOR="1")
        cmd = shutil.which("ansible-playbook", path=os.path.dirname(sys.executable)) or "ansible-playbook"
        proc = subprocess.run([cmd, "-i", "localhost,", "-c", "local",
                               "-e", "ansible_python_interpreter=" + sys.executable,
                               "-e", "@" + str(extra), str(self.playbook)] + list(args),
                              env=env, capture_output=True, text=True, timeout=300, cwd=REPO, check=False)
        result = json.loads(self.result_file.read_text()) if self.result_file.exists() else None
        return proc, result


@pytest.fixture
def runner(tmp_path):
    return Runner(tmp_path)


def test_create_then_unchanged(runner):
    proc, result = runner.run(BASE, header=HEADER, file_mode="0640")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert result["changed"] and result["secret_keys"] == []
    assert runner.dest.read_text() == EXPECTED_BASE
    assert stat.S_IMODE(runner.dest.stat().st_mode) == 0o640

    proc, result = runner.run(BASE, header=HEADER, file_mode="0640")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not result["changed"]


def test_mode_change_alone_is_a_change(runner):
    runner.run(BASE, file_mode="0640")
    proc, result = runner.run(BASE, file_mode="0600")
    assert proc.returncode == 0 and result["changed"]
    assert stat.S_IMODE(runner.dest.stat().st_mode) == 0o600


def test_new_file_without_mode_is_private(runner):
    proc, result = runner.run(BASE)
    assert proc.returncode == 0 and result["changed"]
    assert stat.S_IMODE(runner.dest.stat().st_mode) == 0o600


def test_check_mode_reports_and_writes_nothing(runner):
    runner.run(BASE, file_mode="0640")
    before = runner.dest.read_bytes(), runner.dest.stat().st_mtime_ns
    proc, result = runner.run(dict(BASE, **{"tasks.max": 8}), "--check", file_mode="0640")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert result["changed"]
    assert (runner.dest.read_bytes(), runner.dest.stat().st_mtime_ns) == before
    assert sorted(os.listdir(runner.dest.parent)) == ["client.properties"]


def test_check_mode_unchanged_is_unchanged(runner):
    runner.run(BASE, file_mode="0640")
    proc, result = runner.run(BASE, "--check", file_mode="0640")
    assert proc.returncode == 0 and not result["changed"]


SECRETS_OLD = {
    "ssl.keystore.password": "Hunter2-s3cret",
    "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required '
                        'username="mm2" password="Jaas-s3cret";',
    "ssl.key.password": "back\\slash-s3cret",
    "custom.login": 'Module required password="Value-s3cret";',
}
SECRETS_NEW = {
    "ssl.keystore.password": "Hunter3-s3cret",
    "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required '
                        'username="mm2" password="Jaas2-s3cret";',
    "ssl.key.password": "back\\slash2-s3cret",
    "custom.login": 'Module required password="Value2-s3cret";',
}


def test_diff_and_vvv_show_no_secret(runner):
    proc = runner.run(dict(BASE, **SECRETS_OLD), file_mode="0640")[0]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    changed = dict(BASE, **SECRETS_NEW)
    changed["security.protocol"] = "SASL_PLAINTEXT"
    proc, result = runner.run(changed, "--diff", "-vvv", file_mode="0640")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert result["changed"]
    assert result["secret_keys"] == ["custom.login", "sasl.jaas.config", "ssl.key.password", "ssl.keystore.password"]
    for name in result["secret_keys"]:
        assert name + "=********" in output
        # A new secret shows as a change, never as itself.
        assert "+" + name + "=******** (changed)" in output
    assert "+security.protocol=SASL_PLAINTEXT" in output  # the diff itself is shown
    for word in ("s3cret", "Hunter", "Jaas", "slash"):
        assert word not in output
        assert word not in json.dumps(result)


def test_java_reads_back_the_dict(runner, java_load):
    props = {
        "topics.exclude": r".*[\-\.]internal,.*\.replica",
        "leading": "  two blanks",
        "unicode": "Zürich ✓ 𝄞",
        "key with=sep:s": "a=b:c",
        "#not.a.comment": "#x",
        "bool": True,
        "int": 3,
        "list": ["a", "b"],
        "empty": "",
        "none": None,
        "multi": "line1\nline2\\",
        "tab\tkey": "v\t",
    }
    proc = runner.run(props, header=HEADER)[0]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (loaded,) = java_load([str(runner.dest)])
    assert loaded == {
        "topics.exclude": r".*[\-\.]internal,.*\.replica",
        "leading": "  two blanks",
        "unicode": "Zürich ✓ 𝄞",
        "key with=sep:s": "a=b:c",
        "#not.a.comment": "#x",
        "bool": "true",
        "int": "3",
        "list": "a,b",
        "empty": "",
        "none": "",
        "multi": "line1\nline2\\",
        "tab\tkey": "v\t",
    }


@pytest.mark.parametrize("sort, order", [(True, ["a", "b", "c"]), (False, ["c", "a", "b"])])
def test_sort(runner, sort, order):
    proc = runner.run({"c": 1, "a": 2, "b": 3}, sort=sort)[0]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [line.split("=")[0] for line in runner.dest.read_text().splitlines()] == order


def test_missing_parent_fails_naming_path(runner):
    dest = str(runner.work / "missing" / "x.properties")
    proc, result = runner.run(BASE, dest=dest)
    assert proc.returncode != 0 and result is None
    assert "path: parent directory" in proc.stdout and dest in proc.stdout


def test_missing_parent_in_check_mode_is_a_change(runner):
    proc, result = runner.run(BASE, "--check", dest=str(runner.work / "missing" / "x.properties"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert result["changed"]
    assert not (runner.work / "missing").exists()


def test_header_must_be_comments(runner):
    proc, result = runner.run(BASE, header="# Ansible managed\nWritten by someone")
    assert proc.returncode != 0 and result is None
    assert "header: line 2 'Written by someone' is not a comment" in proc.stdout
    assert not runner.dest.exists()


def test_unchanged_secret_is_not_marked_changed(runner):
    runner.run(dict(BASE, **SECRETS_OLD), file_mode="0640")
    proc, _result = runner.run(dict(BASE, **SECRETS_OLD, **{"tasks.max": 9}), "--diff", file_mode="0640")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "(changed)" not in proc.stdout
    assert "ssl.keystore.password=********" in proc.stdout
