# -*- coding: utf-8 -*-
"""tests/lib/recap.py: the counts per host of the last PLAY RECAP of a run's output."""

from __future__ import annotations

import pytest

import recap

RECAP = """
PLAY RECAP *********************************************************************
mol-ctl-1                  : ok=12   changed=3    unreachable=0    failed=0    skipped=4    rescued=0    ignored=0
smoke-controller           : ok=7    changed=0    unreachable=0    failed=1    skipped=0    rescued=1    ignored=0
"""


@pytest.mark.parametrize("output, expected", [
    (RECAP, {"mol-ctl-1": 3, "smoke-controller": 0}),
    # a task's output that looks like a recap line before the recap does not count
    ("TASK [x] ***\nok: [h]\nh : ok=9 changed=9\n" + RECAP, {"mol-ctl-1": 3, "smoke-controller": 0}),
    # two plays' output in one string: the last recap is the run's
    (RECAP + "\nPLAY RECAP ***\nmol-ctl-1 : ok=1 changed=1 unreachable=0 failed=0\n", {"mol-ctl-1": 1}),
    ("fatal: [h]: UNREACHABLE! => {}\n", {}),
], ids=["one-recap", "recap-like-line-before", "last-recap", "no-recap"])
def test_changed_per_host(output, expected):
    assert recap.changed(output) == expected


def test_every_count_of_a_host():
    assert recap.recap(RECAP)["smoke-controller"] == {"ok": 7, "changed": 0, "unreachable": 0, "failed": 1,
                                                      "skipped": 0, "rescued": 1, "ignored": 0}
