"""MirrorMaker 2 internal record formats (connect-mirror-client, Kafka protocol Struct encoding).

Checkpoint (topic ``<source>.checkpoints.internal`` on the target; Checkpoint.java):
  key   = KEY_SCHEMA   (group STRING, topic STRING, partition INT32)
  value = HEADER_SCHEMA (version INT16) + VALUE_SCHEMA_V0 (upstreamOffset INT64,
          offset INT64 (downstream), metadata STRING)
Heartbeat (topic ``heartbeats``; Heartbeat.java):
  key   = (sourceClusterAlias STRING, targetClusterAlias STRING)
  value = (version INT16) + (timestamp INT64)
STRING is an INT16 byte length then UTF-8 bytes; integers are big-endian.
The checkpoint's topic is the *remote* (renamed) topic on the target cluster.
"""

import struct
from collections import namedtuple

Checkpoint = namedtuple("Checkpoint", "group topic partition upstream_offset downstream_offset metadata")
Heartbeat = namedtuple("Heartbeat", "source target timestamp")


class FormatError(ValueError):
    pass


def _read_string(buf, pos):
    if pos + 2 > len(buf):
        raise FormatError("truncated string length at byte %d" % pos)
    (length,) = struct.unpack_from(">h", buf, pos)
    pos += 2
    if length < 0:
        return None, pos
    if pos + length > len(buf):
        raise FormatError("truncated string at byte %d (length %d)" % (pos, length))
    return bytes(buf[pos:pos + length]).decode("utf-8"), pos + length


def _write_string(text):
    if text is None:
        return struct.pack(">h", -1)
    data = text.encode("utf-8")
    return struct.pack(">h", len(data)) + data


def _unpack(fmt, buf, pos, what):
    size = struct.calcsize(fmt)
    if pos + size > len(buf):
        raise FormatError("truncated %s at byte %d" % (what, pos))
    return struct.unpack_from(fmt, buf, pos), pos + size


def decode_checkpoint(key, value):
    """Checkpoint from a record of ``<source>.checkpoints.internal``; FormatError if malformed."""
    if key is None or value is None:
        raise FormatError("checkpoint record without key or value")
    group, pos = _read_string(key, 0)
    topic, pos = _read_string(key, pos)
    (partition,), pos = _unpack(">i", key, pos, "partition")
    (version,), vpos = _unpack(">h", value, 0, "version")
    if version != 0:
        raise FormatError("unknown checkpoint value version %d" % version)
    (upstream, downstream), vpos = _unpack(">qq", value, vpos, "offsets")
    metadata, vpos = _read_string(value, vpos)
    return Checkpoint(group, topic, partition, upstream, downstream, metadata)


def encode_checkpoint(cp):
    """(key, value) bytes of a Checkpoint, as MM2 writes them (used by tests)."""
    key = _write_string(cp.group) + _write_string(cp.topic) + struct.pack(">i", cp.partition)
    value = struct.pack(">hqq", 0, cp.upstream_offset, cp.downstream_offset) + _write_string(cp.metadata)
    return key, value


def decode_heartbeat(key, value):
    if key is None or value is None:
        raise FormatError("heartbeat record without key or value")
    source, pos = _read_string(key, 0)
    target, pos = _read_string(key, pos)
    (version,), vpos = _unpack(">h", value, 0, "version")
    if version != 0:
        raise FormatError("unknown heartbeat value version %d" % version)
    (timestamp,), vpos = _unpack(">q", value, vpos, "timestamp")
    return Heartbeat(source, target, timestamp)


def encode_heartbeat(hb):
    return _write_string(hb.source) + _write_string(hb.target), struct.pack(">hq", 0, hb.timestamp)
