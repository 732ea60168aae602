# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""A managed block of exports in a Kafka launcher script (bin/*.sh), just before its exec line.

Monitoring products read the JMX settings from the launcher itself (the Acceldata Pulse page tells
operators to export KAFKA_JMX_OPTS in connect-mirror-maker.sh, before it execs the JVM)."""

from __future__ import annotations

import re

EXEC_RE = re.compile(r"^exec ")


class LauncherError(ValueError):
    """The script cannot carry the block as asked; the message says why."""


def _marker(marker, mark):
    if "{mark}" not in marker:
        raise LauncherError("marker: %r has no {mark} for BEGIN and END" % marker)
    return marker.replace("{mark}", mark)


def apply(text, marker, lines):
    """``text`` with the block ``lines`` between the markers right before the last exec line, or
    with no block when ``lines`` is empty. A block found elsewhere moves before the exec line."""
    begin, end = _marker(marker, "BEGIN"), _marker(marker, "END")
    for number, line in enumerate(lines, 1):
        if "\n" in line or "\r" in line:
            raise LauncherError("lines[%d]: a line break inside a line: %r" % (number, line))
    rows = text.splitlines(keepends=True)
    stripped = [row.rstrip("\r\n") for row in rows]
    starts = [i for i, row in enumerate(stripped) if row == begin]
    stops = [i for i, row in enumerate(stripped) if row == end]
    if len(starts) > 1 or len(stops) > 1 or len(starts) != len(stops) or (starts and stops[0] < starts[0]):
        raise LauncherError("the script has %d BEGIN and %d END lines of %r: mend it by hand"
                            % (len(starts), len(stops), marker))
    if starts:
        del rows[starts[0]:stops[0] + 1]
    if not lines:
        return "".join(rows)
    execs = [i for i, row in enumerate(rows) if EXEC_RE.match(row)]
    if not execs:
        raise LauncherError("no line starts with 'exec ': the block goes right before it. "
                            "Is it the launcher of a Kafka distribution?")
    at = execs[-1]
    if at > 0 and not rows[at - 1].endswith("\n"):
        rows[at - 1] += "\n"
    rows[at:at] = [row + "\n" for row in [begin] + list(lines) + [end]]
    return "".join(rows)
