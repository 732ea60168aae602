# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Java properties files: how Kafka's ``java.util.Properties.load`` reads them, written and read back.

Standard library only."""

from __future__ import annotations

import re
from collections import OrderedDict

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import render_value


def _escape(text, is_key):
    out = []
    for idx, ch in enumerate(text):
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\f":
            out.append("\\f")
        elif ch == " ":
            out.append("\\ " if (is_key or idx == 0) else " ")
        elif is_key and ch in "=:":
            out.append("\\" + ch)
        elif idx == 0 and ch in "#!":
            out.append("\\" + ch)
        elif code < 0x20 or code > 0x7E:
            # Kafka loads the file with Properties.load(InputStream): ISO-8859-1.
            if code > 0xFFFF:
                code -= 0x10000
                out.append("\\u%04X\\u%04X" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)))
            else:
                out.append("\\u%04X" % code)
        else:
            out.append(ch)
    return "".join(out)


def escape_key(text):
    """Escape a key so java.util.Properties.load reads it back unchanged."""
    return _escape(render_value(text), True)


def escape_value(text):
    """Escape a value so java.util.Properties.load reads it back unchanged.

    Backslashes are doubled (a regex ``.*[\\-\\.]internal`` is written
    ``.*[\\\\-\\\\.]internal``), a leading blank and control/non-ASCII characters are
    escaped; ``:`` and ``=`` are left readable (only the first separator counts).
    """
    return _escape(render_value(text), False)


def format_properties(props):
    """Return ``key=value`` lines (no trailing newline) for an ordered mapping."""
    return "\n".join("%s=%s" % (escape_key(k), escape_value(v)) for k, v in props.items())


_WS = " \t\f"


def _unescape(text):
    out = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        i += 1
        if ch != "\\":
            out.append(ch)
            continue
        if i >= n:
            break
        ch = text[i]
        i += 1
        if ch == "u":
            digits = text[i:i + 4]
            if len(digits) != 4 or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise ValueError("Malformed \\uxxxx encoding.")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append({"t": "\t", "r": "\r", "n": "\n", "f": "\f"}.get(ch, ch))
    # Join UTF-16 surrogate pairs the way a Java String would present them.
    return "".join(out).encode("utf-16", "surrogatepass").decode("utf-16")


def _logical_lines(text):
    natural = re.split(r"\r\n|\r|\n", text)
    i = 0
    while i < len(natural):
        line = natural[i].lstrip(_WS)
        i += 1
        if not line or line[0] in "#!":
            continue
        while True:
            trailing = len(line) - len(line.rstrip("\\"))
            if trailing % 2 == 0:
                break
            line = line[:-1]
            if i >= len(natural):
                break
            line += natural[i].lstrip(_WS)
            i += 1
        yield line


def parse_properties(text):
    """Parse Java-properties text with java.util.Properties.load semantics.

    Returns an OrderedDict (later duplicates win, as in Java).  Tested against the JDK.
    """
    result = OrderedDict()
    for line in _logical_lines(text):
        key_len = 0
        value_start = len(line)
        has_sep = False
        preceding_bs = False
        while key_len < len(line):
            ch = line[key_len]
            if ch in "=:" and not preceding_bs:
                value_start = key_len + 1
                has_sep = True
                break
            if ch in _WS and not preceding_bs:
                value_start = key_len + 1
                break
            preceding_bs = (not preceding_bs) if ch == "\\" else False
            key_len += 1
        while value_start < len(line):
            ch = line[value_start]
            if ch not in _WS:
                if not has_sep and ch in "=:":
                    has_sep = True
                else:
                    break
            value_start += 1
        result[_unescape(line[:key_len])] = _unescape(line[value_start:])
    return result
