"""Test double for ansible-test's pip bootstrap script (get-pip.py), which only its CI host serves.

ansible-test runs the script in an empty virtual environment with pip's command line. This stand-in
installs pip from the interpreter's bundled ensurepip wheel, then runs `pip install` with that command
line and the machine's own pip configuration. It verifies nothing about get-pip.py itself.
"""

import ensurepip
import os
import runpy
import sys

saved = dict(os.environ)
ensurepip.bootstrap(upgrade=False)
# ensurepip hides pip's configuration (PIP_CONFIG_FILE=/dev/null); the real install needs it.
os.environ.clear()
os.environ.update(saved)
# get-pip.py takes `pip install`'s arguments without the word install, plus two flags of its own.
sys.argv[1:] = ["install"] + [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
runpy.run_module("pip", run_name="__main__", alter_sys=True)
