# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""MirrorMaker 2 ACL filters: thin wrappers over plugins/module_utils/mm2/acls.py.

``mm2_acls(properties, principals, allow_wildcard, plans, admin)``
    The ACLs MirrorMaker 2 needs on each cluster: dedicated mode from the mm2.properties dict(s) it
    runs with, MirrorMaker connectors from the Connect clusters' ``connect_plan`` results; ``admin``
    the aliases mm2_acls_admin gives logins for.
``mm2_acls_table(acls)``
    One line per principal and resource, for the play's summary.
"""

from __future__ import annotations

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import acls as derivation
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import plain


def mm2_acls(properties, principals, allow_wildcard=None, plans=None, admin=None):
    """{errors, acls, bootstrap_servers}: acls maps each cluster alias to its bindings."""
    return plain(derivation.derive_layouts(properties or [], plans or [], principals, allow_wildcard or (), admin or ()))


def mm2_acls_table(acls):
    """Lines: a header, then cluster, principal, resource, operations, classes."""
    return derivation.format_table(derivation.table(acls))


class FilterModule(object):
    """MirrorMaker 2 ACL filters."""

    def filters(self):
        return {
            "mm2_acls": mm2_acls,
            "mm2_acls_table": mm2_acls_table,
        }
