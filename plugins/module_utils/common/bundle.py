# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Shipping a directory to a host as one unit instead of file by file.

``copy`` with a directory stats and checksums every file on the host, one module round trip each:
on the smoke host that was nearly half of every run (docs/testing.md). Two ways out, both decided
on the controller:

- code is sent as one zip whose bytes depend only on its members' names and content, so a re-run
  compares one checksum (Python imports from the zip as it is);
- directories of versioned files (wheels, jars) carry a manifest of their names and sizes, written
  last: the directory is copied only when the manifest on the host differs.
"""

from __future__ import annotations

import hashlib
import io
import os
import zipfile

# Every member gets this date: equal content gives equal bytes.
ZIP_DATE = (2020, 1, 1, 0, 0, 0)
SKIPPED_DIRS = ("__pycache__",)
SKIPPED_SUFFIXES = (".pyc",)


def tree_members(root, prefix, walk=os.walk):
    """(arcname, path) of the files under ``root``, named under ``prefix``, sorted; no bytecode."""
    out = []
    for directory, dirs, files in walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in files:
            if name.endswith(SKIPPED_SUFFIXES):
                continue
            path = os.path.join(directory, name)
            out.append(("/".join([prefix] + os.path.relpath(path, root).split(os.sep)), path))
    return sorted(out)


def zip_bytes(members, read=None):
    """The zip of ``members`` ((arcname, path) pairs) as bytes: sorted by name, each member with the
    same date and mode, so the bytes change only when a name or a content does."""
    read = read or _read
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        for arcname, path in sorted(members):
            info = zipfile.ZipInfo(arcname, ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, read(path))
    return buf.getvalue()


def stat_key(members, stat=os.stat):
    """A short key of ``members`` as they are on disk now (names, sizes, modification times): within
    one run an equal key means an equal zip, found without reading or compressing any file."""
    digest = hashlib.sha256()
    for arcname, path in sorted(members):
        info = stat(path)
        digest.update(("%s\0%d\0%d\n" % (arcname, info.st_size, info.st_mtime_ns)).encode("utf-8"))
    return digest.hexdigest()[:16]


def manifest(directory, listdir=os.listdir, isfile=os.path.isfile, getsize=os.path.getsize):
    """One line per file of ``directory`` (not below it, not hidden): name and size, sorted.

    For directories whose files are named by their version (wheels, jars): a file replaced by
    another of the same name and size is not noticed, and neither is one removed on the host by
    hand (removing the manifest there has the directory copied again)."""
    lines = []
    for name in sorted(listdir(directory)):
        path = os.path.join(directory, name)
        if name.startswith(".") or not isfile(path):
            continue
        lines.append("%s %d\n" % (name, getsize(path)))
    return "".join(lines)


def _read(path):
    with open(path, "rb") as handle:
        return handle.read()
