# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Which settings are secrets: the one rule (pure Python, standard library only).

no_log and masking are decided from what a file or a command line will *contain*, not from
which variable a value came through. A password reaches mm2.properties through
``mirrormaker_clusters[].properties``, ``sasl_jaas_config``, ``mirrormaker_properties`` or a
flow's ``properties``, and a broker's file through as many more; a rule keyed on variable names
is a list every new variable must join, and the one that is forgotten leaks. So every consumer
asks this module about the keys and values themselves:

* the ``kafka_properties`` module masks its diff and scrubs its invocation (``no_log_values``);
* the ``kafka_has_secrets`` / ``kafka_mask_secrets`` filters set a task's ``no_log`` and what a
  debug shows;
* ``kafka_option_secrets`` refuses secrets in variables that end up world-readable (systemd
  units, ``/proc/<pid>/cmdline``).

The rule errs toward "secret": a false positive (``sasl.oauthbearer.token.endpoint.url``) only
hides a value from a diff, a false negative leaks it. Empty values are never secret: there is
nothing to hide, and masking them would show changes that are not there.

This file imports only the standard library, so it can also be loaded by path.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping

MASK = "********"

_KEY_PARTS = ("password", "passwd", "secret", "credential", "token", "keytab",
              "sasl.jaas.config", "auth.user.info")
# Matched with '.', '_' and '-' removed, so api.key, api_key, apiKey and private-key all match.
_KEY_SQUASHED = ("apikey", "privatekey", "keystorekey")
# Such a name holds the path of the file that holds the secret (ssl.keystore.location,
# com.sun.management.jmxremote.password.file); that file is readable by its owner only, and
# refusing the path would forbid the standard JMX password-file setup.
_PATH_SUFFIXES = (".location", ".file", ".path", ".dir")

# A value that carries a secret whatever its key: JAAS options (password="..", keyTab=..,
# clientSecret=..) with something after the '=', PEM private keys, user:password@ in a URL.
_VALUE_RE = re.compile(
    r"(?P<word>passw(?:or)?d|secret|keytab)\s*=\s*[\"']?[^\s\"';]"
    r"|(?P<pem>-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----)"
    r"|(?P<url>://[^/\s:@]+:[^/\s@]+@)",
    re.IGNORECASE,
)
_OPTION_PREFIX = re.compile(r"^(?:-D|--?)")


# A Kafka config provider reference (${file:/etc/x.properties:pw}) names where a secret is, not
# the secret: Connect shows it in its REST API on purpose.
_REFERENCE = re.compile(r"^\$\{[A-Za-z0-9_.-]+:[^{}]*\}$")


def is_provider_reference(value):
    """True when the whole value is a config provider reference such as ``${file:/etc/x.properties:pw}``."""
    return isinstance(value, str) and _REFERENCE.match(value) is not None


def _blank(value):
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    return isinstance(value, (Mapping, list, tuple, set)) and not value


def is_secret_key(key):
    """True when a property/option name holds a secret (case-insensitive)."""
    name = str(key).lower()
    if name.endswith(_PATH_SUFFIXES):
        return False
    if name.endswith(".key") or any(part in name for part in _KEY_PARTS):
        return True
    squashed = re.sub(r"[._-]", "", name)
    return any(part in squashed for part in _KEY_SQUASHED)


def is_secret_value(value):
    """True when a string carries a secret by its content (JAAS password=, keyTab=, PEM key...)."""
    return isinstance(value, str) and _VALUE_RE.search(value) is not None


def _tokens(text):
    try:
        return shlex.split(text)
    except ValueError:  # unbalanced quotes: still look at every word
        return text.split()


def _assigned_secrets(text):
    """Names of key=value / -Dkey=value / --key=value tokens in text that carry a secret."""
    names = []
    if "=" not in text:
        return names
    for token in _tokens(text):
        name, sep, value = token.partition("=")
        name = _OPTION_PREFIX.sub("", name)
        if sep and name and not _blank(value) and (is_secret_key(name) or is_secret_value(value)):
            if name not in names:
                names.append(name)
    return names


def _secret_item(key, value):
    return not _blank(value) and (is_secret_key(key) or has_secrets(value))


def has_secrets(obj):
    """True when obj (mapping, list or string, nested) holds a secret key with a value, or a secret value."""
    if isinstance(obj, Mapping):
        return any(_secret_item(k, v) for k, v in obj.items())
    if isinstance(obj, (list, tuple, set)):
        return any(has_secrets(item) for item in obj)
    if isinstance(obj, str):
        return is_secret_value(obj) or bool(_assigned_secrets(obj))
    return False


def _leaves(obj, found):
    if isinstance(obj, Mapping):
        obj = list(obj.values())
    if isinstance(obj, (list, tuple, set)):
        for item in obj:
            _leaves(item, found)
    elif not _blank(obj):
        found.append(str(obj))


def _walk(obj, found):
    """Masked copy of obj; the raw secret scalars go to found."""
    if isinstance(obj, Mapping):
        result = {}
        for key, value in obj.items():
            if not _blank(value) and is_secret_key(key):
                _leaves(value, found)
                result[key] = MASK
            else:
                result[key] = _walk(value, found)
        return result
    if isinstance(obj, (list, tuple)):
        return [_walk(item, found) for item in obj]
    if isinstance(obj, str) and has_secrets(obj):
        found.append(obj)
        return MASK
    return obj


def secret_keys(mapping):
    """Sorted keys of mapping whose key or value is secret (names only, never values)."""
    return sorted((k for k, v in mapping.items() if _secret_item(k, v)), key=str)


def mask(mapping):
    """Same keys, every secret value replaced by MASK (nested mappings and lists masked inside).

    A list (e.g. mirrormaker_clusters) is masked item by item.
    """
    return _walk(mapping, [])


def secret_values(mapping):
    """The raw secret values of mapping as strings, for no_log_values (empty ones skipped)."""
    found = []
    _walk(mapping, found)
    return [value for i, value in enumerate(found) if value not in found[:i]]


def scrub(text, values):
    """``text`` with each of ``values`` (secret_values output) masked, the longest first."""
    for value in sorted(values, key=len, reverse=True):
        text = text.replace(value, MASK)
    return text


def option_secrets(text):
    """Names of the options in a free-text JVM/option string (or list of them) that carry a secret.

    ``-Xmx1g -Djavax.net.ssl.keyStorePassword=x`` -> ``['javax.net.ssl.keyStorePassword']``.
    Text that holds a secret outside a key=value token (``password = x``, a PEM key) yields what
    was found (``password=``, ``PRIVATE KEY``), so the result is empty only when nothing is secret.
    """
    if isinstance(text, (list, tuple)):
        names = []
        for item in text:
            names.extend(n for n in option_secrets(item) if n not in names)
        return names
    if not isinstance(text, str):
        return []
    names = _assigned_secrets(text)
    match = _VALUE_RE.search(text)
    if not names and match:
        if match.group("word"):
            names = [match.group("word") + "="]
        elif match.group("pem"):
            names = ["PRIVATE KEY"]
        else:
            names = ["user:password@ in a URL"]
    return names
