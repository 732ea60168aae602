"""ansible-playbook of the repository's collection on this machine's localhost: one home for the
environment and command line the role-rendering unit tests share."""

import os
import shutil
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def run(playbook, *args):
    """Run ``playbook`` against localhost (local connection, this interpreter) with ``args``; the result
    of subprocess.run, its output as text."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"), ANSIBLE_LOCALHOST_WARNING="false",
               ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
    cmd = shutil.which("ansible-playbook", path=os.path.dirname(sys.executable)) or "ansible-playbook"
    return subprocess.run([cmd, "-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                           *args, str(playbook)], env=env, capture_output=True, text=True, timeout=300,
                          cwd=REPO, check=False)
