# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Whether a running service read the files it reads at start in their current state.

A role writes a service's files, then its handler restarts the service. A run that fails before
its handlers run, or that skips the service's tasks, leaves a written file and a service still
running what it read before; the next run finds nothing to write, so only the files' times can
tell it that the restart is still owed. A file written after the service last started is newer
than what the service runs.

Standard library only: the module runs it on the managed host."""

from __future__ import annotations


def parse_show(text):
    """``systemctl show -p A -p B unit`` output as {A: value, B: value} (lines of KEY=VALUE)."""
    shown = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            shown[key.strip()] = value.strip()
    return shown


def started_epoch(shown, monotonic_now, epoch_now):
    """When the unit last became active, in seconds since the epoch, or None when it is not
    active. systemd keeps that moment on the monotonic clock (ActiveEnterTimestampMonotonic, in
    microseconds); ``monotonic_now`` and ``epoch_now`` read at the same moment place it on the
    wall clock that file times use. The monotonic value is used, not ActiveEnterTimestamp: that
    one is rounded to the second in its printed form, and a file written in the same second as
    the start would be undecidable."""
    if shown.get("ActiveState") not in ("active", "reloading"):
        return None
    try:
        entered = int(shown.get("ActiveEnterTimestampMonotonic", "0"))
    except ValueError:
        return None
    if entered <= 0:
        return None
    return epoch_now - (monotonic_now - entered / 1e6)


def written_since(mtimes, started):
    """The paths of ``mtimes`` ({path: mtime, or None for a missing file}) written after
    ``started``, sorted. A missing file is not a change: the role lists every file the service
    may read, and those of a feature that is off are not there."""
    if started is None:
        return []
    return sorted(path for path, mtime in mtimes.items() if mtime is not None and mtime > started)
