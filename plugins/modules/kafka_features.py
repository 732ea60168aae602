#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kafka_features
short_description: Read a KRaft cluster's finalized feature levels, and finalize them at a release
version_added: 0.1.0
author:
  - kafkaops maintainers (!UNKNOWN)
description:
  - Runs the installed release's C(kafka-features.sh) on the host, so that the levels a release
    finalizes are the ones that release's own tool knows (C(--release-version) maps a release to a
    level for every feature it has; a table kept here would drift with each Kafka release).
  - Reads the finalized levels (C(describe)). With O(release_version), and the cluster's
    C(metadata.version) behind that release, finalizes every feature at it
    (C(upgrade --release-version)); a cluster already at or past it is left as it is. A finalized
    level is never lowered here. A 3.x tool, which has no C(--release-version), finalizes
    C(metadata.version) alone at the release (C(upgrade --metadata)).
  - In check mode the controllers validate the upgrade without applying it (C(--dry-run)), and
    the levels they would finalize are shown.
options:
  tool:
    description: The release's C(kafka-features.sh), for example C(/opt/kafka/current/bin/kafka-features.sh).
    type: path
    required: true
  bootstrap_servers:
    description: The cluster's brokers, C(host:port,...).
    type: str
    required: true
  command_config:
    description: A client properties file for a secured listener (C(--command-config)).
    type: path
  release_version:
    description: The release to finalize the feature levels at, C(major.minor) (for example C(4.3)).
    type: str
attributes:
  check_mode:
    support: full
    details: The controllers validate the finalization (C(--dry-run)) and nothing is applied.
  diff_mode:
    support: full
    details: The finalized level of each feature, before and after.
  platform:
    platforms: posix
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
"""

EXAMPLES = r"""
- name: Finalize the cluster's feature levels at 4.3 once every node runs it
  kafkaops.mirrormaker.kafka_features:
    tool: /opt/kafka/current/bin/kafka-features.sh
    bootstrap_servers: broker1:9092,broker2:9092
    release_version: "4.3"
"""

RETURN = r"""
features:
  description: >-
    The finalized level of each feature afterwards (in check mode, C(level N) for those the
    controllers would finalize).
  returned: always
  type: dict
  sample: {"metadata.version": "4.3-IV0", "group.version": "1"}
before:
  description: The finalized level of each feature before.
  returned: always
  type: dict
  sample: {"metadata.version": "3.9-IV0"}
updated:
  description: The level the tool finalized (or would) for each feature.
  returned: when changed
  type: dict
  sample: {"metadata.version": 27, "transaction.version": 2}
"""

import os
import re

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import upgrade

_RELEASE = re.compile(r"^\d+\.\d+$")
# what a kafka-features.sh older than 4.0 answers to --release-version (3.9.1)
_NO_RELEASE_VERSION = "unrecognized arguments: '--release-version'"


class Failed(Exception):
    pass


def text(levels):
    return "".join("%s=%s\n" % (name, levels[name]) for name in sorted(levels))


def run(module):
    params = module.params
    base = [params["tool"], "--bootstrap-server", params["bootstrap_servers"]]
    if params["command_config"]:
        base += ["--command-config", params["command_config"]]

    def tool(*args):
        rc, out, err = module.run_command(base + list(args))
        return rc, out, (err or out).strip()[-2000:]

    rc, out, err = tool("describe")
    if rc != 0:
        raise Failed("bootstrap_servers: kafka-features.sh describe through %s failed (rc %d): %s"
                     % (params["bootstrap_servers"], rc, err))
    before = upgrade.parse_features(out)
    result = dict(changed=False, before=before, features=before)
    release = params["release_version"]
    if not release or not upgrade.finalize_needed(release, before.get("metadata.version")):
        return result
    dry_run = ["--dry-run"] if module.check_mode else []
    rc, out, err = tool("upgrade", "--release-version", release, *dry_run)
    if rc != 0 and _NO_RELEASE_VERSION in err:
        # a 3.x tool: it finalizes metadata.version alone, the one level those releases finalize
        rc, out, err = tool("upgrade", "--metadata", release, *dry_run)
    updated, refused = upgrade.parse_update(out)
    if rc != 0 or refused:
        raise Failed("release_version: the cluster at %s refused to finalize its feature levels at %s: %s"
                     % (params["bootstrap_servers"], release, "; ".join(refused) or err))
    if module.check_mode:
        after = dict(before, **dict((name, "level %d" % level) for name, level in updated.items()))
    else:
        rc, out, err = tool("describe")
        if rc != 0:
            raise Failed("bootstrap_servers: kafka-features.sh describe through %s failed after the upgrade "
                         "(rc %d): %s" % (params["bootstrap_servers"], rc, err))
        after = upgrade.parse_features(out)
    result.update(changed=True, features=after, updated=updated)
    if module._diff:
        result["diff"] = dict(before=text(before), after=text(after))
    return result


def main():
    module = AnsibleModule(
        argument_spec=dict(
            tool=dict(type="path", required=True),
            bootstrap_servers=dict(type="str", required=True),
            command_config=dict(type="path"),
            release_version=dict(type="str"),
        ),
        supports_check_mode=True,
    )
    if not os.access(module.params["tool"], os.X_OK):
        module.fail_json(msg="tool: %s is not an executable kafka-features.sh" % module.params["tool"])
    release = module.params["release_version"]
    if release is not None and not _RELEASE.match(release):
        module.fail_json(msg="release_version: %r is not a release as kafka-features.sh takes it, major.minor "
                             "(for example 4.3)" % release)
    try:
        module.exit_json(**run(module))
    except Failed as exc:
        module.fail_json(msg=str(exc))


if __name__ == "__main__":
    main()
