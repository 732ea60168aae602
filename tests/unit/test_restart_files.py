# -*- coding: utf-8 -*-
"""Every file whose change restarts a service is among the files the next run compares with the
service's start (kafka_common service.yml, kafka_service_current): else a restart that a failed or
tag-limited run owed is never made. Read from the roles' own task and vars files, so a file added
to a role without its entry fails here. That the comparison restarts a broker: Molecule default,
tests/integration/default/test_tags.py."""

from __future__ import annotations

import os
import re

import pytest
import yaml

from repo_paths import REPO

ROLES = os.path.join(REPO, "roles")
TASK_KEYWORDS = {"name", "when", "notify", "register", "loop", "loop_control", "no_log", "tags", "vars",
                 "changed_when", "failed_when", "become", "delegate_to", "run_once", "check_mode", "diff",
                 "listen", "args", "environment", "ignore_errors", "until", "retries", "delay"}
# Removing a file of a feature turned off restarts the service too, but the feature's other files
# change with it (the JAAS options in the unit or the script, the login settings in the
# properties), and those are compared; a removed file has no time to compare.
REMOVALS = {"kafkaops.mirrormaker.kafka_paths"}


def tasks(role):
    """(file, task) of every task in the role's task files, blocks opened."""
    folder = os.path.join(ROLES, role, "tasks")
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name)) as fh:
            stack = list(yaml.safe_load(fh) or [])
        while stack:
            task = stack.pop(0)
            for part in ("block", "rescue", "always"):
                stack.extend(task.get(part) or [])
            yield name, task


def restarting(role, notify):
    """Whether ``notify`` (a handler name, a list of them, or the broker's TLS handler, which is a
    restart where no listener reloads the stores) restarts the role's service."""
    names = notify if isinstance(notify, list) else [notify]
    return any(n == "%s restart" % role or n == "{{ __kafka_broker_tls_handler }}" for n in names if n)


def written(task):
    """(module, [path expressions]) the task writes."""
    module = next(key for key in task if key not in TASK_KEYWORDS and key not in ("block", "rescue", "always"))
    args = task[module] or {}
    paths = [args[key] for key in ("path", "dest") if key in args]
    if paths == ["{{ item.dest }}"]:
        paths = [item["dest"] for item in task["loop"]]
    return module, paths


def variable(expression):
    """The variable a path expression names: every path a restart depends on has one, so the task
    and the service description name the same file."""
    found = re.fullmatch(r"\{\{ *(\w+) *\}\}", expression)
    assert found, "%r: give the path a variable of its own, used here and in restart_files" % expression
    return found.group(1)


def restart_files(role):
    with open(os.path.join(ROLES, role, "vars", "main.yml")) as fh:
        described = yaml.safe_load(fh)["__%s_service" % role]
    files = described["restart_files"]
    return " ".join(files) if isinstance(files, list) else files


CASES = [(role, name, task) for role in ("kafka_broker", "mirrormaker", "connect") for name, task in tasks(role)
         if restarting(role, task.get("notify"))]


@pytest.mark.parametrize("role, name, task", CASES, ids=["%s/%s: %s" % (r, n, t["name"]) for r, n, t in CASES])
def test_a_file_that_restarts_the_service_is_compared_with_its_start(role, name, task):
    module, paths = written(task)
    if module in REMOVALS:
        return
    assert paths, "%s/tasks/%s %r notifies a restart but writes no path" % (role, name, task["name"])
    listed = restart_files(role)
    for path in paths:
        assert re.search(r"\b%s\b" % variable(path), listed), \
            "%s/tasks/%s %r writes %s, which __%s_service.restart_files does not list" % (
                role, name, task["name"], path, role)


def test_every_role_notifies_through_a_file_it_compares():
    assert {case[0] for case in CASES} == {"kafka_broker", "mirrormaker", "connect"}


def test_the_unit_is_compared_with_its_start():
    common = [task for name, task in tasks("kafka_common")]
    unit = next(task for task in common if task["name"].startswith("Install the systemd unit"))
    compared = next(task for task in common if "kafkaops.mirrormaker.kafka_service_current" in task)
    assert variable(written(unit)[1][0]) in compared["kafkaops.mirrormaker.kafka_service_current"]["paths"]
