# -*- coding: utf-8 -*-
"""One home for reading an ansible-playbook run's PLAY RECAP: the live tests, the Molecule
scenarios' tests and the unit tests' local playbooks all judge a play by its counts per host."""

from __future__ import annotations

import re

_HOST = re.compile(r"^(\S+)\s+:\s+((?:\w+=\d+\s*)+)$", re.M)
_COUNT = re.compile(r"(\w+)=(\d+)")


def recap(output):
    """host -> {"ok": n, "changed": n, "unreachable": n, "failed": n, ...} from the last PLAY RECAP
    in ``output`` (empty when there is none: the play did not get that far)."""
    _before, marker, section = output.rpartition("PLAY RECAP")
    if not marker:
        return {}
    return {m.group(1): {k: int(v) for k, v in _COUNT.findall(m.group(2))} for m in _HOST.finditer(section)}


def changed(output):
    """host -> its changed count, from the last PLAY RECAP in ``output``."""
    return {host: counts["changed"] for host, counts in recap(output).items()}
