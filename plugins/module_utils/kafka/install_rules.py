# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The kafka_common role's refusals (the Kafka release and its archive), run in preflight.

``faults(v, context)`` takes the role's variables (``kafka_common_*``) and the settings of the role
that includes it, whose keys the release may have removed (``kafka/upgrade.py``). The archive and its checksum file
are read on the controller now, not when the copy fails later.
"""

from __future__ import annotations

import os
import re

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import rules
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import text
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import checksum, upgrade

VERSION_RE = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+$")
OLDEST = (3, 7, 0)
SCALA_VERSIONS = ("2.12", "2.13")
SHA512_RE = re.compile(r"^[0-9a-fA-F]{128}$")


def sha512_file(archive_src):
    """Where the release's checksum is looked for when kafka_common_archive_sha512 is not given."""
    return text(archive_src) + ".sha512"


def _archive_faults(src, sha512):
    if not src:
        return []
    if not os.path.isfile(src):
        return rules.controller_file("kafka_common_archive_src", src)
    if sha512:
        return []
    checksum_file = sha512_file(src)
    if not os.path.isfile(checksum_file):
        return ["kafka_common_archive_src: %s is missing on the controller; put the release's .sha512 beside the "
                "archive or set kafka_common_archive_sha512" % checksum_file]
    with open(checksum_file, encoding="utf-8", errors="replace") as handle:
        if checksum.sha512(handle.read()) is None:
            return ["kafka_common_archive_src: %s holds no sha512 (128 hex digits)" % checksum_file]
    return []


def faults(v, context=None):
    """Every refusal of the install settings, in a stable order. ``context``: ``properties``, the
    parent role's settings by variable ({variable: {key: value}}), for the keys the release removed."""
    found = []
    version = text(v["kafka_common_version"])
    if not VERSION_RE.match(version):
        found.append("kafka_common_version: %s is not X.Y.Z" % version)
    elif tuple(int(part) for part in version.split(".")) < OLDEST:
        found.append("kafka_common_version: %s is older than 3.7.0, the oldest release the roles support" % version)
    if text(v["kafka_common_scala_version"]) not in SCALA_VERSIONS:
        found.append("kafka_common_scala_version: %s is not 2.12 or 2.13" % text(v["kafka_common_scala_version"]))
    sha512 = text(v["kafka_common_archive_sha512"])
    if sha512 and not SHA512_RE.match(sha512):
        found.append("kafka_common_archive_sha512: is not 128 hex digits (got %d characters)" % len(sha512))
    found += rules.safe_path("kafka_common_install_root", v["kafka_common_install_root"])
    found += _archive_faults(text(v["kafka_common_archive_src"]), sha512)
    if VERSION_RE.match(version):
        found += upgrade.removed_faults(version, (context or {}).get("properties") or {})
    return found
