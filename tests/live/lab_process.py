"""Processes, ports, logs, the lab archive and the collection's own code, for the live-broker tests."""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request


HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.path.join(os.path.dirname(HERE), "lib")
if LIB not in sys.path:
    sys.path.insert(0, LIB)
# REPO, SMOKE_DIR and the .collections link (use_collection) have their home in tests/lib/repo_paths.py.
from repo_paths import REPO, SMOKE_DIR, use_collection  # noqa: E402,F401 pylint: disable=wrong-import-position,unused-import
import bounded  # noqa: E402 pylint: disable=wrong-import-position


def log(msg):
    sys.stderr.write("[%s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def load_model():
    """The collection's MirrorMaker 2 flow model (module_utils/mm2/model.py)."""
    use_collection()
    from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import model
    return model


def load_tuning():
    """The MirrorMaker 2 settings the collection ships (module_utils/mm2/tuning.py)."""
    use_collection()
    from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import tuning
    return tuning


def format_properties(props):
    """``props`` as the lines of a Java properties file, written by the collection's own writer."""
    use_collection()
    from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import properties
    return properties.format_properties(props)


def load_connect():
    """(mm2_model, mm2_connect): the collection's flow model and Connect plan."""
    use_collection()
    from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import connect as mm2_connect
    return load_model(), mm2_connect


def find_archive():
    env = os.environ.get("KAFKA_ARCHIVE")
    if env and os.path.isfile(env):
        return env
    d = os.path.join(REPO, ".cache", "kafka")
    cands = sorted(f for f in os.listdir(d) if re.match(r"kafka_2\.13-.*\.tgz$", f)) if os.path.isdir(d) else []
    return os.path.join(d, cands[-1]) if cands else None


def free_ports(count):
    socks, ports = [], []
    for _i in range(count):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        socks.append(sock)
        ports.append(sock.getsockname()[1])
    for sock in socks:
        sock.close()
    return ports


def start_process(cmd, logfile, env=None):
    with open(logfile, "ab") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True)


def stop_process(proc, grace=30):
    if proc is None:
        return
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            log("pid %d did not stop in %ds, killing" % (proc.pid, grace))
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        pass


def wait_for_log(path, pattern, timeout, proc):
    deadline = time.time() + timeout
    rx = re.compile(pattern)
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("process exited (%s), see %s" % (proc.returncode, path))
        try:
            with open(path, errors="replace") as fh:
                if rx.search(fh.read()):
                    return
        except FileNotFoundError:
            pass
        time.sleep(0.3)
    raise RuntimeError("no /%s/ in %s after %ss" % (pattern, path, timeout))


def collections_path():
    """The built collection when test.sh made one (what users install), else the working tree."""
    installed = os.path.join(REPO, ".cache", "installed-collection")
    if os.path.isdir(os.path.join(installed, "ansible_collections", "kafkaops", "mirrormaker")):
        return installed
    return os.path.join(REPO, ".collections")


def ansible_playbook(inventory, playbook, *args, env=None, timeout=900):
    """ansible-playbook of that collection with the repository's ansible.cfg; ``env`` instead of
    os.environ underneath. The output's tail goes to stderr, which pytest -s shows. ``timeout``
    only catches a hang (bounded.run)."""
    env = dict(env or os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path(),
               ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_FORCE_COLOR="0",
               ANSIBLE_LOCALHOST_WARNING="false")
    binary = shutil.which("ansible-playbook", path=os.path.dirname(sys.executable)) or "ansible-playbook"
    proc = bounded.run([binary, "-i", str(inventory), str(playbook), *args], timeout, env=env)
    sys.stderr.write(proc.stdout[-6000:] + proc.stderr[-2000:])
    return proc


def get_json(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return json.loads(resp.read().decode("utf-8"))
