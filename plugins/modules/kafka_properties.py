#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kafka_properties
short_description: Write a Java .properties file from a dict, secrets masked in diffs and logs
version_added: 0.1.0
author:
  - kafkaops maintainers (!UNKNOWN)
description:
  - Writes O(properties) as C(key=value) lines escaped so that C(java.util.Properties.load) (how Kafka
    and MirrorMaker 2 read their configuration) reads back exactly the given strings.
  - Values are rendered as the collection's templates render them, booleans as C(true)/C(false), lists
    joined with commas, numbers as text, null as an empty value.
  - The file is replaced atomically (a temporary file in the same directory, renamed over O(path)) and
    only when its content differs. The temporary file gets the final owner, group and mode before the
    rename, so the new content is never readable by more users than requested.
  - Which values are secret is decided by the collection's one rule (C(plugins/module_utils/common/secrets.py),
    also behind the P(kafkaops.mirrormaker.kafka_has_secrets#filter) filter) from the keys and values of
    both the current file and O(properties), not from which variable they came through. Secret values
    are shown as C(********) in the diff and scrubbed from the whole result, including the module
    arguments shown with C(-vvv).
options:
  path:
    description:
      - The file to write. Its parent directory must exist.
      - In check mode a missing parent directory is reported as a change, since an earlier task that
        creates it does not run in check mode.
    type: path
    required: true
  properties:
    description:
      - Property names and values. Nested mappings are refused.
    type: dict
    required: true
  sort:
    description:
      - Write the properties sorted by name, so the file is stable whatever the order of the dict.
      - V(false) keeps the given order (for a file whose order carries meaning, such as the ordered
        result of P(kafkaops.mirrormaker.mm2_properties#filter)).
    type: bool
    default: true
  header:
    description:
      - Text written verbatim before the properties, a trailing newline added if missing; typically
        C({{ ansible_managed | comment }}) and a line saying which role wrote the file.
      - Every non-blank line must be a comment (start with C(#) or C(!)), otherwise
        C(java.util.Properties) would read it as a property.
    type: str
    default: ''
notes:
  - When O(mode) is not given, an existing file keeps its mode and a new file is created C(0600), since it
    may hold secrets.
  - Secret values are added to the module's C(no_log_values), so any output that contains one of them
    verbatim shows C(********) in its place, as for a C(no_log) option.
seealso:
  - plugin: kafkaops.mirrormaker.kafka_mask_secrets
    plugin_type: filter
extends_documentation_fragment:
  - kafkaops.mirrormaker.host_files
  - ansible.builtin.action_common_attributes
  - ansible.builtin.files
"""

EXAMPLES = r"""
- name: Write the MirrorMaker 2 client settings
  kafkaops.mirrormaker.kafka_properties:
    path: /etc/kafka/mm2-client.properties
    properties:
      security.protocol: SASL_SSL
      sasl.mechanism: SCRAM-SHA-512
      sasl.jaas.config: >-
        org.apache.kafka.common.security.scram.ScramLoginModule required
        username="mm2" password="{{ vault_mm2_password }}";
      ssl.truststore.location: /etc/kafka/truststore.p12
      ssl.truststore.password: "{{ vault_truststore_password }}"
      enable.auto.commit: false
    header: |
      {{ ansible_managed | comment }}
      # Written by kafkaops.mirrormaker.mirrormaker
    owner: root
    group: kafka
    mode: "0640"

- name: Write mm2.properties in the model's order
  kafkaops.mirrormaker.kafka_properties:
    path: /etc/kafka/mm2.properties
    properties: "{{ mirrormaker_clusters | kafkaops.mirrormaker.mm2_properties(mirrormaker_flows) }}"
    sort: false
    owner: root
    group: kafka
    mode: "0640"
"""

RETURN = r"""
path:
  description: The file written.
  returned: always
  type: str
  sample: /etc/kafka/mm2.properties
secret_keys:
  description: Names (never values) of the properties in O(properties) whose value is treated as secret.
  returned: always
  type: list
  elements: str
  sample: [A.sasl.jaas.config, ssl.truststore.password]
"""

import re

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import files
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import secrets
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.properties import escape_key, escape_value, parse_properties
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import render_value

# Properties.load splits lines on \n, \r and \r\n only (str.splitlines knows more).
_NATURAL_LINES = re.compile(r"\r\n|\r|\n")


def _render(module):
    items = []
    for key, value in module.params["properties"].items():
        try:
            items.append((render_value(key), render_value(value)))
        except TypeError as exc:
            module.fail_json(msg="properties[%r]: %s" % (key, to_native(exc)))
    if module.params["sort"]:
        items.sort()
    return items


def _check_header(module, header):
    for number, line in enumerate(_NATURAL_LINES.split(header), 1):
        body = line.lstrip(" \t\f")
        if body and body[0] not in "#!":
            module.fail_json(msg="header: line %d %r is not a comment; java.util.Properties would read it "
                                 "as a property (start it with '#')" % (number, line))


def _masked(text, keys, changed=()):
    """text with the value of every secret property, and every comment holding a secret, masked.

    Works line by line rather than re-rendering, so the diff still shows how the file is written
    (comments, order, escaping); a line whose key or value is secret becomes key=MASK, and
    key=MASK (changed) for the keys in ``changed``, so a new secret shows as a change without
    showing itself.
    """
    lines = _NATURAL_LINES.split(text)
    out = []
    i = 0
    while i < len(lines):
        group = [lines[i]]
        i += 1
        body = group[0].lstrip(" \t\f")
        if not body or body[0] in "#!":
            out.append(body[0] + " " + secrets.MASK if body and secrets.has_secrets(body[1:]) else group[0])
            continue
        # An odd number of trailing backslashes continues the value on the next line.
        while (len(group[-1]) - len(group[-1].rstrip("\\"))) % 2 and i < len(lines):
            group.append(lines[i])
            i += 1
        try:
            ((key, value),) = parse_properties("\n".join(group)).items()
        except ValueError:  # malformed \uXXXX in a file written by hand: show nothing of it
            out.append(secrets.MASK)
            continue
        if key in keys or secrets.secret_keys({key: value}):
            out.append("%s=%s%s" % (escape_key(key), secrets.MASK, " (changed)" if key in changed else ""))
        else:
            out.extend(group)
    return "\n".join(out)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", required=True),
            properties=dict(type="dict", required=True),
            sort=dict(type="bool", default=True),
            header=dict(type="str", default=""),
        ),
        add_file_common_args=True,
        supports_check_mode=True,
    )
    # First of all: scrub the secrets from every output, the invocation shown with -vvv included.
    module.no_log_values.update(secrets.secret_values(module.params["properties"]))
    items = _render(module)
    wanted = dict(items)
    module.no_log_values.update(secrets.secret_values(wanted))

    path = module.params["path"]
    header = module.params["header"]
    _check_header(module, header)
    if header and not header.endswith("\n"):
        header += "\n"
    content = header + "".join("%s=%s\n" % (escape_key(k), escape_value(v)) for k, v in items)
    data = content.encode("utf-8")

    existed, old = files.read_current(module, path)
    old_text = old.decode("utf-8", errors="replace")
    old_props = parse_properties(old_text) if existed else {}
    module.no_log_values.update(secrets.secret_values(old_props))

    changed = files.ensure(module, path, data, existed, old)

    result = dict(changed=changed, path=path, secret_keys=secrets.secret_keys(wanted))
    if module._diff:
        keys = set(secrets.secret_keys(old_props)) | set(result["secret_keys"])
        # Secrets whose value differs from the file's: shown as changed, never shown.
        renewed = set(k for k in keys if k in old_props and k in wanted and old_props[k] != wanted[k])
        result["diff"] = dict(before=_masked(old_text, keys) if existed else "",
                              after=_masked(content, keys, renewed),
                              before_header=path, after_header=path)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
