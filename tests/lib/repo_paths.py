# -*- coding: utf-8 -*-
"""The repository's paths for the tests and the benches, and the one home of the link that makes the
repository importable as ansible_collections.kafkaops.mirrormaker.

``use_collection()`` creates <repo>/.collections/ansible_collections/kafkaops/mirrormaker -> <repo>
(a symlink, gitignored; scripts/bootstrap.sh makes a relative one) when missing and puts
<repo>/.collections first on sys.path. ``use_smoke_job()`` puts <repo>/smoke, the smoke job's
package ``mm2_smoke``, on sys.path. Importing this module changes nothing.

tests/unit/conftest.py, tests/unit/smoke_job/conftest.py and tests/live/lab_process.py (and through
it the live tests, bench/ and tests/golden/render.py) put tests/lib on sys.path and import it from
there, under this one name.
"""

from __future__ import annotations

import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTIONS = os.path.join(REPO, ".collections")
LINK = os.path.join(COLLECTIONS, "ansible_collections", "kafkaops", "mirrormaker")
SMOKE_DIR = os.path.join(REPO, "smoke")


def use_collection():
    """Make the repository importable as ansible_collections.kafkaops.mirrormaker."""
    if not os.path.lexists(LINK):
        os.makedirs(os.path.dirname(LINK), exist_ok=True)
        os.symlink(REPO, LINK)
    if COLLECTIONS not in sys.path:
        sys.path.insert(0, COLLECTIONS)


def use_smoke_job():
    """Make the smoke job importable as ``mm2_smoke`` (smoke/mm2_smoke)."""
    if SMOKE_DIR not in sys.path:
        sys.path.insert(0, SMOKE_DIR)
