# -*- coding: utf-8 -*-
"""module_utils/common/bundle.py: a directory shipped as one zip whose bytes depend only on names and
content, and the manifest that has a directory of versioned files copied only when it changed.
The smoke job's zip on a Python that has nothing else of the repository: tests/unit/test_lag_exporter_files.py;
through the role on hosts: tests/live/test_role.py and the Molecule scenarios."""

from __future__ import annotations

import os
import zipfile

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import bundle


def tree(tmp_path, files):
    for name, data in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return str(tmp_path)


@pytest.mark.parametrize("files, names", [
    ({"a.py": b"1", "sub/b.py": b"2"}, ["pkg/a.py", "pkg/sub/b.py"]),
    ({"a.py": b"1", "a.pyc": b"x", "__pycache__/a.cpython-311.pyc": b"x"}, ["pkg/a.py"]),
    ({"templates/r.html.j2": b"t", "z.py": b"", "b.py": b""}, ["pkg/b.py", "pkg/templates/r.html.j2", "pkg/z.py"]),
])
def test_tree_members_names_every_file_under_the_prefix_without_bytecode(tmp_path, files, names):
    root = tree(tmp_path, files)
    members = bundle.tree_members(root, "pkg")
    assert [arcname for arcname, _path in members] == names
    assert all(os.path.isfile(path) for _arcname, path in members)


def test_the_zip_depends_only_on_names_and_content(tmp_path):
    root = tree(tmp_path, {"a.py": b"A = 1\n", "sub/b.py": b"B = 2\n"})
    members = bundle.tree_members(root, "pkg")
    first = bundle.zip_bytes(members)
    os.utime(os.path.join(root, "a.py"), (0, 0))
    assert bundle.zip_bytes(list(reversed(members))) == first  # order and dates do not count
    (tmp_path / "out.zip").write_bytes(first)
    with zipfile.ZipFile(tmp_path / "out.zip") as archive:
        assert archive.namelist() == ["pkg/a.py", "pkg/sub/b.py"]
        assert archive.read("pkg/sub/b.py") == b"B = 2\n"
        assert {info.date_time for info in archive.infolist()} == {bundle.ZIP_DATE}
    (tmp_path / "a.py").write_bytes(b"A = 3\n")
    assert bundle.zip_bytes(members) != first
    assert bundle.zip_bytes(members + [("pkg/c.py", os.devnull)]) != bundle.zip_bytes(members)


@pytest.mark.parametrize("files, expected", [
    ({}, ""),
    ({"b-1.0.whl": b"xx", "a-2.0.whl": b"x"}, "a-2.0.whl 1\nb-1.0.whl 2\n"),
    # the manifest itself and other hidden files, and what is below, are not the directory's files
    ({".kafkaops-manifest": b"old", "a.jar": b"", "sub/c.jar": b"c"}, "a.jar 0\n"),
])
def test_the_manifest_names_each_file_and_its_size(tmp_path, files, expected):
    assert bundle.manifest(tree(tmp_path, files)) == expected


def test_the_manifest_changes_with_a_new_version_or_a_size(tmp_path):
    root = tree(tmp_path, {"kafka-clients-3.9.1.jar": b"abc"})
    before = bundle.manifest(root)
    (tmp_path / "kafka-clients-3.9.1.jar").write_bytes(b"abcd")
    assert bundle.manifest(root) != before
    os.rename(tmp_path / "kafka-clients-3.9.1.jar", tmp_path / "kafka-clients-4.3.1.jar")
    assert bundle.manifest(root) == "kafka-clients-4.3.1.jar 4\n"


@pytest.mark.parametrize("change, same", [
    (lambda path: None, True),
    (lambda path: os.utime(path, ns=(1, 1)), False),                  # an edited file keeps its size
    (lambda path: path.write_bytes(b"longer content"), False),
], ids=["untouched", "new-date", "new-size"])
def test_the_stat_key_follows_what_is_on_disk(tmp_path, change, same):
    path = tmp_path / "job.py"
    path.write_bytes(b"content")
    members = [("pkg/job.py", str(path))]
    before = bundle.stat_key(members)
    change(path)
    assert (bundle.stat_key(members) == before) is same
    assert bundle.stat_key([("other/job.py", str(path))]) != bundle.stat_key(members)
