# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Coercions shared by every domain: inventory values arrive as any YAML type, or unset.

Standard library only (the live-broker tests, tests/live, load the MirrorMaker model outside Ansible)."""

from __future__ import annotations

import difflib
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


def is_list(value):
    return isinstance(value, (list, tuple))


def plain(value):
    """value with every OrderedDict and tuple, nested too, made a plain dict or list: what Ansible
    hands on to templates and shows in results."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def render_value(value):
    """Render a YAML value as an MM2 property string.

    bool -> true/false, list -> comma-joined items, numbers -> str, None -> ''.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if is_list(value):
        return ",".join(render_value(v) for v in value)
    if isinstance(value, Mapping):
        raise TypeError("nested mappings cannot be rendered as a property value")
    return str(value)


def as_list(value):
    """Normalise a list or comma string into a list of stripped, non-empty strings."""
    if value is None:
        return []
    if is_list(value):
        items = []
        for item in value:
            items.extend(as_list(item) if is_list(item) else [render_value(item).strip()])
        return [i for i in items if i != ""]
    return [i.strip() for i in render_value(value).split(",") if i.strip() != ""]


def typename(value):
    return type(value).__name__


def fmt(value):
    return repr(value) if isinstance(value, str) else str(value)


def unknown_key_message(path, key, known):
    """One refusal for a key the structure does not have, with the closest known key.

    An ignored typo would widen what MM2 does (a misspelt topic filter mirrors every topic),
    so unknown keys are errors, never warnings.
    """
    close = difflib.get_close_matches(str(key), sorted(known), n=1, cutoff=0.6)
    hint = ("did you mean %r?" % close[0]) if close else "known keys: %s" % ", ".join(sorted(known))
    return "%s.%s: unknown key; %s" % (path, key, hint)
