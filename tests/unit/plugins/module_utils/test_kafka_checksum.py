# -*- coding: utf-8 -*-
"""The one reader of .sha512 files (module_utils/kafka/checksum.py), in each layout it meets."""

from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import checksum

HEX = "0123456789abcdef" * 8


def groups(size, per_line, indent="                      "):
    """HEX as gpg --print-md prints it: upper case, in groups of ``size``, ``per_line`` groups a line."""
    words = [HEX.upper()[i:i + size] for i in range(0, 128, size)]
    lines = [" ".join(words[i:i + per_line]) for i in range(0, len(words), per_line)]
    return ("\n" + indent).join(lines) + "\n"


@pytest.mark.parametrize("text", [
    HEX + "  kafka_2.13-4.4.0.tgz\n",
    HEX + " *kafka_2.13-4.4.0.tgz\n",
    HEX.upper() + "\n",
    "kafka_2.13-4.4.0.tgz: " + groups(8, 8),
    "kafka_2.13-4.4.0.tgz: " + groups(8, 16),
    "kafka_2.13-4.4.0.tgz: " + groups(4, 16),
    "kafka_2.13-4.4.0.tgz:\n    " + groups(8, 4, indent="    "),
    "kafka-4.4.0-src.tar.gz: " + groups(8, 8),
    groups(8, 8, indent=""),
    "SHA512 (kafka_2.13-4.4.0.tgz) = " + HEX + "\n",
], ids=["sha512sum", "sha512sum-binary", "bare-upper", "gpg-two-lines", "gpg-one-line", "gpg-groups-of-4",
        "gpg-name-on-its-own-line", "gpg-other-name", "gpg-groups-without-name", "bsd-tag"])
def test_sha512_layouts(text):
    assert checksum.sha512(text) == HEX


@pytest.mark.parametrize("text", ["", "404 Not Found\n", HEX[:64] + "  kafka_2.13-4.4.0.tgz\n",
                                  "kafka_2.13-4.4.0.tgz: " + groups(8, 8)[:-10]],
                         ids=["empty", "not-found-page", "sha256", "cut-short"])
def test_sha512_none(text):
    assert checksum.sha512(text) is None
