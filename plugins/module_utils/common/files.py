# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Writing a configuration file the way the collection's modules do: atomically, only when its
content differs, never readable by more users than asked, in one round trip to the host."""

from __future__ import annotations

import os
import tempfile

from ansible.module_utils.common.text.converters import to_native


def read_current(module, path):
    """(existed, bytes) of path; fails the module naming path when it cannot be read."""
    if os.path.isdir(path):
        module.fail_json(msg="path: %r is a directory" % path)
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory) and not module.check_mode:
        module.fail_json(msg="path: parent directory %r of %r does not exist" % (directory, path))
    if not os.path.exists(path):
        return False, b""
    try:
        with open(path, "rb") as handle:
            return True, handle.read()
    except OSError as exc:
        module.fail_json(msg="path: cannot read %r: %s" % (path, to_native(exc)))


def write_atomic(module, path, data, existed):
    """Replace path with data atomically; the new content is never less protected than asked."""
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".%s." % os.path.basename(path))  # mode 0600
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if existed:
            # What the file had stays unless an option changes it.
            current = os.stat(path)
            os.chmod(tmp, current.st_mode & 0o7777)
            try:
                os.chown(tmp, current.st_uid, current.st_gid)
            except PermissionError:
                pass
        else:
            # atomic_move makes a file it creates 0666 & ~umask *after* the rename; with a
            # placeholder in place it only renames, so the content appears with tmp's mode.
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            except FileExistsError:
                pass
        # Owner, group and mode on the temporary file before it becomes path.
        module.set_owner_if_different(tmp, module.params["owner"], False)
        module.set_group_if_different(tmp, module.params["group"], False)
        module.set_mode_if_different(tmp, module.params["mode"], False)
        module.atomic_move(tmp, path, unsafe_writes=module.params["unsafe_writes"], keep_dest_attrs=False)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def ensure(module, path, data, existed, old):
    """Writes data when it differs from old, then sets the file attributes; returns changed."""
    changed = old != data or not existed
    if changed and not module.check_mode:
        try:
            write_atomic(module, path, data, existed)
        except OSError as exc:
            module.fail_json(msg="path: cannot write %r: %s" % (path, to_native(exc)))
    if os.path.exists(path):  # absent only in check mode, when a new file would be created
        file_args = module.load_file_common_arguments(module.params)
        changed = module.set_fs_attributes_if_different(file_args, changed)
    return changed
