# -*- coding: utf-8 -*-
"""One home for running a command that may hang (a playbook, a tool against a lab): its limit only
catches a hang, and a run that reaches it fails the test with the end of what the command printed
so far, stdout and stderr, instead of a bare TimeoutExpired (kraft upgrade beside dr, 2026-11-29).

tests/integration/conftest.py, tests/live/lab_process.py and tests/unit/local_playbook.py use it.
"""

from __future__ import annotations

import subprocess


def _text(data):
    # run() hands over what it read as bytes, text=True or not
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")


def tail(stdout, stderr):
    """The end of a command's output for an assertion message, stdout then stderr: Ansible writes a
    failed task's message to stderr, so stdout alone shows a red recap without its reason."""
    return "%s\n--- stderr:\n%s" % (_text(stdout)[-3000:], _text(stderr)[-2000:])


def run(cmd, timeout, env=None, cwd=None):
    """subprocess.run(cmd) with its output captured as text; AssertionError after ``timeout`` s."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd, check=False)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError("%s still running after %d s; its last lines:\n%s"
                             % (" ".join(map(str, cmd)), timeout, tail(exc.stdout, exc.stderr))) from None
