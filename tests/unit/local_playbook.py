"""ansible-playbook of the repository's collection on this machine: one home for the environment and
command line the unit tests that run a playbook share."""

import os
import shutil
import sys

import bounded  # tests/lib, on sys.path by tests/unit/conftest.py

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def run(playbook, *args, inventory=None, env=None):
    """Run ``playbook`` with ``args`` against localhost (local connection), or the hosts of the
    ``inventory`` file when given, with this interpreter; ``env`` adds to the environment. The result
    of subprocess.run, its output as text."""
    full_env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
                    ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"), ANSIBLE_LOCALHOST_WARNING="false",
                    ANSIBLE_INVENTORY_UNPARSED_WARNING="false", **(env or {}))
    hosts = ["-i", "localhost,", "-c", "local"] if inventory is None else ["-i", str(inventory)]
    cmd = shutil.which("ansible-playbook", path=os.path.dirname(sys.executable)) or "ansible-playbook"
    return bounded.run([cmd, *hosts, "-e", "ansible_python_interpreter=" + sys.executable, *args, str(playbook)],
                       300, env=full_env, cwd=REPO)
