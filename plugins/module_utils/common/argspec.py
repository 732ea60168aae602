# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Check role variables against the role's own meta/argument_specs.yml.

Ansible validates a role's arguments when the role starts, but its message for an unknown
sub-key lumps every fault of every list into one sentence and suggests nothing. The preflight
play runs this first, with the same spec, so that each fault gets one message of the form
``<variable path>: <value> <rule>`` and a misspelt key names the key it was probably meant to be.
Secret values (``no_log`` in the spec, or secret by the collection's rule) are masked.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible.module_utils.common.validation import (
    check_type_bool, check_type_dict, check_type_float, check_type_int, check_type_list, check_type_path,
    check_type_raw, check_type_str,
)
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import secrets
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import unknown_key_message

_CHECKS = {
    "str": lambda v: check_type_str(v, allow_conversion=False),
    "int": check_type_int,
    "float": check_type_float,
    "bool": check_type_bool,
    "list": check_type_list,
    "dict": check_type_dict,
    "path": check_type_path,
    "raw": check_type_raw,
}


def _show(value, secret):
    if secret:
        return secrets.MASK
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _check_value(path, value, spec, errors, secret=False):
    secret = secret or spec.get("no_log", False)
    kind = spec.get("type", "str")
    if value is None:
        return
    try:
        converted = _CHECKS[kind](value)
    except (TypeError, ValueError):
        errors.append("%s: %s is not a %s" % (path, _show(value, secret), kind))
        return
    if "choices" in spec and converted not in spec["choices"]:
        errors.append("%s: %s is not one of %s" % (path, _show(value, secret), ", ".join(map(str, spec["choices"]))))
        return
    if kind == "list" and "elements" in spec:
        element = {"type": spec["elements"], "options": spec.get("options")}
        for idx, item in enumerate(converted):
            _check_value("%s[%d]" % (path, idx), item, element, errors, secret)
    elif kind in ("dict",) and spec.get("options") is not None and isinstance(converted, Mapping):
        _check_options(path, converted, spec["options"], errors, secret)


def _check_options(path, mapping, options, errors, secret=False):
    for key in sorted(set(mapping) - set(options), key=str):
        errors.append(unknown_key_message(path, key, options))
    for key, sub in sorted(options.items()):
        sub_path = "%s.%s" % (path, key)
        if mapping.get(key) is None:
            if sub.get("required") and mapping:
                errors.append("%s: required" % sub_path)
            continue
        _check_value(sub_path, mapping[key], sub, errors,
                     secret or sub.get("no_log", False) or secrets.is_secret_key(key))


def validate(options, values, prefix=None):
    """Return one message per fault of ``values`` (variable name -> value) against ``options``.

    Variables missing from ``values`` are not checked: roles give every option a default.
    With ``prefix``, a variable carrying the role's prefix that the spec does not know is a
    fault too: a misspelt ``mirrormaker_flow`` would otherwise leave the default in force.
    """
    errors = []
    if prefix:
        for name in sorted(set(values) - set(options)):
            if name.startswith(prefix):
                errors.append(unknown_key_message("", name, options).lstrip(".").replace(
                    ": unknown key;", ": unknown variable of this role;", 1))
    for name in sorted(options):
        if name in values:
            spec = options[name]
            _check_value(name, values[name], spec, errors, spec.get("no_log", False) or secrets.is_secret_key(name))
    return errors
