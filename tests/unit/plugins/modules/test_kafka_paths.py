# -*- coding: utf-8 -*-
"""kafkaops.mirrormaker.kafka_paths, the real module run as Ansible runs it (JSON arguments in, JSON
result out), on a temporary directory: create, re-run, check mode, diff, links, removal, refusals."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

MODULE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "plugins", "modules", "kafka_paths.py")


def run(tmp_path, paths, check=False, diff=True):
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {
        "paths": paths, "_ansible_check_mode": check, "_ansible_diff": diff}}))
    proc = subprocess.run([sys.executable, MODULE, str(args)], capture_output=True, text=True, check=False)
    return json.loads(proc.stdout)


def mode_of(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_creates_directories_then_changes_nothing(tmp_path):
    conf, data = tmp_path / "etc" / "kafka", tmp_path / "data"
    entries = [{"path": str(conf), "mode": "0750"}, {"path": str(data), "mode": "0700"}]
    first = run(tmp_path, entries)
    assert first["changed"] and first["changed_paths"] == [str(conf), str(data)]
    assert mode_of(conf) == 0o750 and mode_of(data) == 0o700
    again = run(tmp_path, entries)
    assert not again["changed"] and again["changed_paths"] == []


def test_check_mode_reports_without_touching(tmp_path):
    target = tmp_path / "new"
    result = run(tmp_path, [{"path": str(target), "mode": "0750"}], check=True)
    assert result["changed"] and result["changed_paths"] == [str(target)]
    assert not target.exists()


def test_mode_fix_shows_in_diff(tmp_path):
    target = tmp_path / "d"
    target.mkdir(mode=0o755)
    os.chmod(target, 0o755)
    result = run(tmp_path, [{"path": str(target), "mode": "0750"}])
    assert result["changed"]
    (diff,) = result["diff"]
    assert diff["before"]["mode"] == "0755" and diff["after"]["mode"] == "0750"


def test_link_is_created_and_switched(tmp_path):
    v1, v2, current = tmp_path / "v1", tmp_path / "v2", tmp_path / "current"
    v1.mkdir()
    v2.mkdir()
    assert run(tmp_path, [{"path": str(current), "state": "link", "src": str(v1)}])["changed"]
    assert os.readlink(current) == str(v1)
    assert not run(tmp_path, [{"path": str(current), "state": "link", "src": str(v1)}])["changed"]
    switched = run(tmp_path, [{"path": str(current), "state": "link", "src": str(v2)}])
    assert switched["changed"] and os.readlink(current) == str(v2)
    assert switched["diff"][0]["before"]["src"] == str(v1)


def test_link_never_replaces_a_real_file(tmp_path):
    current = tmp_path / "current"
    current.write_text("data")
    result = run(tmp_path, [{"path": str(current), "state": "link", "src": str(tmp_path)}])
    assert result["failed"] and "is not a symlink" in result["msg"]
    assert current.read_text() == "data"


def test_absent_removes_files_and_only_named_ones(tmp_path):
    secret, keep = tmp_path / "jaas.conf", tmp_path / "keep.conf"
    secret.write_text("x")
    keep.write_text("y")
    result = run(tmp_path, [{"path": str(secret), "state": "absent"}, {"path": str(tmp_path / "never"), "state": "absent"}])
    assert result["changed_paths"] == [str(secret)]
    assert not secret.exists() and keep.exists()


def test_absent_directory_needs_recurse(tmp_path):
    old = tmp_path / "old"
    (old / "libs").mkdir(parents=True)
    refused = run(tmp_path, [{"path": str(old), "state": "absent"}])
    assert refused["failed"] and "recurse" in refused["msg"] and old.exists()
    assert run(tmp_path, [{"path": str(old), "state": "absent", "recurse": True}])["changed"]
    assert not old.exists()


@pytest.mark.parametrize("entry, fault", [
    ({"path": "/x", "colour": "red"}, "colour"),
    ({"path": "/x", "state": "file"}, "state"),
])
def test_unknown_keys_and_states_are_refused(tmp_path, entry, fault):
    result = run(tmp_path, [entry])
    assert result["failed"] and fault in result["msg"]
