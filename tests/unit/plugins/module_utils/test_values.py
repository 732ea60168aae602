# -*- coding: utf-8 -*-
"""module_utils/common/values.py: the coercions the roles' checks share."""

from __future__ import annotations

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import values


@pytest.mark.parametrize("value, expected", [
    (3, 3), ("3", 3), ("3.7", 3), (3.7, 3), ("many", 0), (None, 0), ("", 0), (-1, -1), (True, 1),
])
def test_as_int_is_jinjas_int_filter(value, expected):
    assert values.as_int(value) == expected


@pytest.mark.parametrize("value, expected", [(None, ""), (0, "0"), ("a", "a")])
def test_text(value, expected):
    assert values.text(value) == expected


@pytest.mark.parametrize("value, expected", [({"a": 1}, {"a": 1}), (None, {}), ([], {}), ("x", {})])
def test_settings(value, expected):
    assert values.settings(value) == expected
