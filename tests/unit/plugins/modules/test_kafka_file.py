# -*- coding: utf-8 -*-
"""kafkaops.mirrormaker.kafka_file, the real module run as Ansible runs it (JSON arguments in, JSON
result out): create, re-run without change, content and mode changes with diff, check mode."""

from __future__ import annotations

import os
import stat

from . import module_process


def run(tmp_path, check=False, **params):
    return module_process.run("kafka_file", tmp_path, check, **params)


def test_writes_then_changes_nothing(tmp_path):
    unit = tmp_path / "kafka.service"
    first = run(tmp_path, path=str(unit), content="[Unit]\nDescription=Kafka\n", mode="0644")
    assert first["changed"] and unit.read_text() == "[Unit]\nDescription=Kafka\n"
    assert stat.S_IMODE(os.stat(unit).st_mode) == 0o644
    assert not run(tmp_path, path=str(unit), content="[Unit]\nDescription=Kafka\n", mode="0644")["changed"]


def test_new_file_without_mode_is_private(tmp_path):
    target = tmp_path / "log4j2.yaml"
    run(tmp_path, path=str(target), content="Configuration: {}\n")
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600


def test_content_change_shows_in_diff(tmp_path):
    target = tmp_path / "log4j2.yaml"
    target.write_text("level: INFO\n")
    result = run(tmp_path, path=str(target), content="level: WARN\n")
    assert result["changed"] and result["diff"]["before"] == "level: INFO\n" and result["diff"]["after"] == "level: WARN\n"


def test_mode_only_change_is_a_change(tmp_path):
    target = tmp_path / "unit"
    target.write_text("x\n")
    os.chmod(target, 0o600)
    assert run(tmp_path, path=str(target), content="x\n", mode="0644")["changed"]
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o644


def test_check_mode_writes_nothing(tmp_path):
    target = tmp_path / "unit"
    target.write_text("old\n")
    result = run(tmp_path, check=True, path=str(target), content="new\n")
    assert result["changed"] and target.read_text() == "old\n"


def test_missing_parent_is_named(tmp_path):
    result = run(tmp_path, path=str(tmp_path / "no" / "unit"), content="x\n")
    assert result["failed"] and "parent directory" in result["msg"]
