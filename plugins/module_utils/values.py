# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Coercions the roles' checks share: inventory values arrive as any YAML type, or unset."""

from __future__ import annotations

from collections.abc import Mapping


def text(value):
    """``value`` as a string; None (unset) as the empty string."""
    return "" if value is None else str(value)


def settings(value):
    """The mapping given, or {} for an empty / unset one (a non-mapping is the argument spec's fault)."""
    return value if isinstance(value, Mapping) else {}


def as_int(value):
    """Jinja's ``int`` filter: the integer, or 0 for what is not one."""
    try:
        return int(value)
    except (TypeError, ValueError):
        try:
            return int(float(value))
        except (TypeError, ValueError):
            return 0
