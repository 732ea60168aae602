# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Secret filters: thin wrappers over plugins/module_utils/common/secrets.py, the one rule.

``kafka_has_secrets(obj)``
    True when a mapping/list/string holds a secret (use it for a task's ``no_log``).
``kafka_mask_secrets(obj)``
    The same data with every secret value shown as ``********``.
``kafka_option_secrets(text)``
    Names of the options in a JVM/option string that carry a secret (to refuse them).
"""

from __future__ import annotations

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import secrets


def kafka_has_secrets(obj):
    """True when obj holds a secret by key name or by content."""
    return secrets.has_secrets(obj)


def kafka_mask_secrets(obj):
    """obj with every secret value replaced by secrets.MASK."""
    return secrets.mask(obj)


def kafka_option_secrets(text):
    """Names of the options in text that carry a secret; empty when none does."""
    return secrets.option_secrets(text)


class FilterModule(object):
    """Secret filters."""

    def filters(self):
        return {
            "kafka_has_secrets": kafka_has_secrets,
            "kafka_mask_secrets": kafka_mask_secrets,
            "kafka_option_secrets": kafka_option_secrets,
        }
