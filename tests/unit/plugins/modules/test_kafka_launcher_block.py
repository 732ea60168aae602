# -*- coding: utf-8 -*-
"""kafkaops.mirrormaker.kafka_launcher_block: the block before the exec line (module_utils/kafka/
launcher.py, parametrized), and the real module run as Ansible runs it (JSON in, JSON out)."""

from __future__ import annotations

import os
import stat

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import launcher

from . import module_process

MARKER = "# {mark} managed"
# The tail of Apache's bin/connect-mirror-maker.sh.
SCRIPT = ('#!/bin/bash\nbase_dir=$(dirname $0)\n'
          'exec $(dirname $0)/kafka-run-class.sh $EXTRA_ARGS org.apache.kafka.connect.mirror.MirrorMaker "$@"\n')
HEAD, EXEC = SCRIPT.split("exec ", 1)
BLOCK = "# BEGIN managed\nexport A=1\nexport B=2\n# END managed\n"


@pytest.mark.parametrize("text, lines, expected", [
    (SCRIPT, ["export A=1", "export B=2"], HEAD + BLOCK + "exec " + EXEC),
    # already as wanted: unchanged
    (HEAD + BLOCK + "exec " + EXEC, ["export A=1", "export B=2"], HEAD + BLOCK + "exec " + EXEC),
    # a changed line replaces the block in place
    (HEAD + BLOCK + "exec " + EXEC, ["export A=3"],
     HEAD + "# BEGIN managed\nexport A=3\n# END managed\nexec " + EXEC),
    # no lines: the block goes, nothing else changes
    (HEAD + BLOCK + "exec " + EXEC, [], SCRIPT),
    (SCRIPT, [], SCRIPT),
    # a block found after the exec line moves before it
    (SCRIPT + BLOCK, ["export A=1", "export B=2"], HEAD + BLOCK + "exec " + EXEC),
    # before the last exec line; a last line without a line break keeps its text
    ("exec a\nexec b", ["x"], "exec a\n# BEGIN managed\nx\n# END managed\nexec b"),
    # CRLF markers are found
    (HEAD + BLOCK.replace("\n", "\r\n") + "exec " + EXEC, ["export A=1"],
     HEAD + "# BEGIN managed\nexport A=1\n# END managed\nexec " + EXEC),
])
def test_apply(text, lines, expected):
    assert launcher.apply(text, MARKER, lines) == expected


@pytest.mark.parametrize("text, marker, lines, message", [
    ("#!/bin/sh\njava -cp x Main\n", MARKER, ["x"], "no line starts with 'exec '"),
    ("  exec x\n", MARKER, ["x"], "no line starts with 'exec '"),
    (SCRIPT + "# BEGIN managed\n", MARKER, ["x"], "1 BEGIN and 0 END lines"),
    (SCRIPT + "# END managed\n# BEGIN managed\n", MARKER, [], "mend it by hand"),
    (SCRIPT + BLOCK + BLOCK, MARKER, ["x"], "2 BEGIN and 2 END lines"),
    (SCRIPT, "# managed", ["x"], "has no {mark}"),
    (SCRIPT, MARKER, ["a\nexec rm -rf /"], "lines[1]: a line break inside a line"),
])
def test_apply_refuses(text, marker, lines, message):
    with pytest.raises(launcher.LauncherError) as info:
        launcher.apply(text, marker, lines)
    assert message in str(info.value)


def run(tmp_path, check=False, **params):
    return module_process.run("kafka_launcher_block", tmp_path, check, **params)


def test_module_writes_once_keeps_mode_and_shows_the_diff(tmp_path):
    script = tmp_path / "connect-mirror-maker.sh"
    script.write_text(SCRIPT)
    os.chmod(script, 0o755)
    lines = ["export A=1", "export B=2"]
    assert run(tmp_path, check=True, path=str(script), marker=MARKER, lines=lines)["changed"]
    assert script.read_text() == SCRIPT
    first = run(tmp_path, path=str(script), marker=MARKER, lines=lines)
    assert first["changed"] and first["diff"]["before"] == SCRIPT and first["diff"]["after"] == script.read_text()
    assert script.read_text() == HEAD + BLOCK + "exec " + EXEC
    assert stat.S_IMODE(os.stat(script).st_mode) == 0o755
    assert not run(tmp_path, path=str(script), marker=MARKER, lines=lines)["changed"]


def test_module_refusal_names_the_path(tmp_path):
    script = tmp_path / "connect-mirror-maker.sh"
    script.write_text("#!/bin/sh\njava Main\n")
    result = run(tmp_path, path=str(script), marker=MARKER, lines=["x"])
    assert result["failed"] and result["msg"].startswith("path: %s: no line starts with 'exec '" % script)


def test_module_missing_script(tmp_path):
    script = str(tmp_path / "absent.sh")
    assert run(tmp_path, check=True, path=script, marker=MARKER, lines=["x"])["changed"]
    assert not run(tmp_path, check=True, path=script, marker=MARKER, lines=[])["changed"]
    result = run(tmp_path, path=script, marker=MARKER, lines=["x"])
    assert result["failed"] and "does not exist" in result["msg"]
    # removing the block of a service taken out: a launcher that is not there has none
    removed = run(tmp_path, path=script, marker=MARKER, lines=[])
    assert not removed.get("failed") and not removed["changed"], removed
