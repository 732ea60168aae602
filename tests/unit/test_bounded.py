# -*- coding: utf-8 -*-
"""tests/lib/bounded.py: a command that reaches its limit fails the test with the end of what it
printed, stdout and stderr; a finished one comes back as it is."""

from __future__ import annotations

import sys

import pytest

import bounded


@pytest.mark.parametrize("stdout, stderr, expected", [
    ("ok: [h]\n", "fatal: the reason\n", "ok: [h]\n\n--- stderr:\nfatal: the reason\n"),
    (b"bytes out", b"bytes err", "bytes out\n--- stderr:\nbytes err"),
    (None, None, "\n--- stderr:\n"),
    ("x" * 5000, "y" * 3000, "x" * 3000 + "\n--- stderr:\n" + "y" * 2000),
])
def test_the_tail_is_stdouts_end_then_stderrs(stdout, stderr, expected):
    assert bounded.tail(stdout, stderr) == expected


def test_a_run_past_its_limit_fails_with_what_it_printed():
    code = ("import sys, time\n"
            "print('the last line out', flush=True)\n"
            "print('the reason', file=sys.stderr, flush=True)\n"
            "time.sleep(30)\n")
    with pytest.raises(AssertionError) as failed:
        bounded.run([sys.executable, "-c", code], timeout=3)
    message = str(failed.value)
    assert "still running after 3 s" in message
    assert "the last line out" in message and message.endswith("--- stderr:\nthe reason\n")


def test_a_finished_run_is_returned_as_it_is():
    result = bounded.run([sys.executable, "-c", "import sys; print('out'); sys.exit(3)"], timeout=60)
    assert (result.returncode, result.stdout) == (3, "out\n")
