# -*- coding: utf-8 -*-
"""The rule that says whether a running service read its files in their current state
(module_utils/common/service_files.py), which kafka_service_current applies on the host."""

from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.service_files import (
    parse_show, started_epoch, written_since)


def test_parse_show_reads_the_properties_asked_for():
    assert parse_show("ActiveState=active\nActiveEnterTimestampMonotonic=12345678\n\n") == {
        "ActiveState": "active", "ActiveEnterTimestampMonotonic": "12345678"}


# The monotonic clock reads 1000 s while the wall clock reads 1_800_000_000 s.
@pytest.mark.parametrize("shown, started", [
    ({"ActiveState": "active", "ActiveEnterTimestampMonotonic": "400000000"}, 1_800_000_000 - 600),
    ({"ActiveState": "reloading", "ActiveEnterTimestampMonotonic": "999500000"}, 1_800_000_000 - 0.5),
    ({"ActiveState": "inactive", "ActiveEnterTimestampMonotonic": "400000000"}, None),
    ({"ActiveState": "failed", "ActiveEnterTimestampMonotonic": "400000000"}, None),
    ({"ActiveState": "activating", "ActiveEnterTimestampMonotonic": "0"}, None),
    ({"ActiveState": "active", "ActiveEnterTimestampMonotonic": "0"}, None),
    ({"ActiveState": "active", "ActiveEnterTimestampMonotonic": "n/a"}, None),
    ({}, None),
], ids=["active", "reloading", "inactive", "failed", "activating", "never-entered", "unreadable", "unknown-unit"])
def test_started_epoch_places_the_start_on_the_wall_clock(shown, started):
    assert started_epoch(shown, 1000.0, 1_800_000_000.0) == (pytest.approx(started) if started else None)


@pytest.mark.parametrize("mtimes, started, written", [
    ({"/etc/kafka/server.properties": 90.0, "/etc/kafka/log4j2.yaml": 50.0}, 100.0, []),
    ({"/etc/kafka/server.properties": 100.5, "/etc/kafka/log4j2.yaml": 50.0}, 100.0,
     ["/etc/kafka/server.properties"]),
    ({"/etc/kafka/b": 101.0, "/etc/kafka/a": 102.0}, 100.0, ["/etc/kafka/a", "/etc/kafka/b"]),
    # the time of the start itself is not later than the start
    ({"/etc/kafka/server.properties": 100.0}, 100.0, []),
    # a feature that is off has no file: nothing changed
    ({"/etc/kafka/jaas.conf": None}, 100.0, []),
    # a service that is not running has nothing to restart
    ({"/etc/kafka/server.properties": 200.0}, None, []),
], ids=["older", "one-newer", "sorted", "same-moment", "missing", "not-running"])
def test_written_since_names_the_files_newer_than_the_start(mtimes, started, written):
    assert written_since(mtimes, started) == written
