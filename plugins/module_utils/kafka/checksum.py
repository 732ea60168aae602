# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The sha512 a release's ``.sha512`` file holds: one reader for the kafka_common preflight
(``install_rules``) and the install (the ``kafka_sha512`` filter). Standard library only.

Apache publishes two layouts, and both are read:

- GNU ``sha512sum``: ``<hex>  kafka_2.13-X.Y.Z.tgz`` (lower case, one line; ``*`` before the name
  in binary mode);
- ``gpg --print-md SHA512``: ``kafka_2.13-X.Y.Z.tgz: 1F8A BBE3 ...``, the digest upper case, in
  groups, wrapped over lines.
"""

from __future__ import annotations

import re

HEX128 = re.compile(r"[0-9a-fA-F]{128}")
# gpg's layout starts with the archive's name and a colon.
_GPG_NAME = re.compile(r"^\s*[^\s:]+\.tgz\s*:")
_BLANKS = re.compile(r"\s+")


def sha512(text):
    """The sha512 in ``text`` (a .sha512 file), lower case, or None when it holds none.

    In order: the digest the file starts with, blanks removed (sha512sum's line; gpg's groups after
    the archive's name); 128 hex digits anywhere in the text (other layouts, such as ``shasum
    --tag``); 128 hex digits anywhere once blanks are removed (gpg's groups after another name).
    """
    body = text.split(":", 1)[1] if _GPG_NAME.match(text) else text
    compact = _BLANKS.sub("", body)
    match = HEX128.match(compact) or HEX128.search(text) or HEX128.search(compact)
    return match.group(0).lower() if match else None
