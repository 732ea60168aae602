"""Order-insensitive content digest of Kafka records (key, value, headers).

Each record is encoded canonically::

    field(x) = 0x00                              if x is null
             = 0x01 + uint32_be(len(x)) + x      otherwise
    record   = field(key) + field(value) + uint32_be(len(headers))
               + for each header, in order: field(utf8(header key)) + field(header value)

and hashed with SHA-256.  A partition's digest is the pair (sum of the hash's first 8 bytes,
sum of its next 8 bytes), each read as an unsigned big-endian integer, modulo 2**64: equal
multisets of records give equal digests whatever their order; a missing, extra, duplicated or
changed record changes it.  ``SPARK_RECORD_HASH`` computes the same hash inside Spark SQL
(built-in functions only, so it runs in the JVM), and the sums are taken there as DECIMAL(38,0).
"""

import hashlib
import struct

MOD = 1 << 64


def _field(data):
    if data is None:
        return b"\x00"
    return b"\x01" + struct.pack(">I", len(data)) + bytes(data)


def encode_record(key, value, headers):
    """Canonical bytes of a record; headers: sequence of (str key, bytes value or None)."""
    headers = list(headers or ())
    parts = [_field(key), _field(value), struct.pack(">I", len(headers))]
    for hkey, hval in headers:
        parts.append(_field(hkey.encode("utf-8") if isinstance(hkey, str) else hkey))
        parts.append(_field(hval))
    return b"".join(parts)


def record_hash(key, value, headers):
    """SHA-256 hex digest of the canonical encoding (also the record's identity in samples)."""
    return hashlib.sha256(encode_record(key, value, headers)).hexdigest()


def hash_halves(hexdigest):
    return int(hexdigest[:16], 16), int(hexdigest[16:32], 16)


class Digest(object):
    """Running order-insensitive digest of a multiset of records."""

    def __init__(self):
        self.count = 0
        self.low = 0
        self.high = 0

    def add(self, key, value, headers):
        one, two = hash_halves(record_hash(key, value, headers))
        self.count += 1
        self.low = (self.low + one) % MOD
        self.high = (self.high + two) % MOD
        return self

    def hexdigest(self):
        return format_digest(self.low, self.high)


def format_digest(low, high):
    """32 hex characters from the two 64-bit sums (Spark's DECIMAL sums are reduced here)."""
    return "%016x%016x" % (int(low) % MOD, int(high) % MOD)


def digest_of(records):
    """Digest hex of an iterable of (key, value, headers)."""
    dig = Digest()
    for key, value, headers in records:
        dig.add(key, value, headers)
    return dig.hexdigest()


# Spark SQL: the same canonical encoding and hash over the Kafka source's columns
# (key BINARY, value BINARY, headers ARRAY<STRUCT<key STRING, value BINARY>>).
_U32 = "unhex(lpad(hex({0}), 8, '0'))"
_FIELD = "CASE WHEN {0} IS NULL THEN X'00' ELSE concat(X'01', " + _U32.format("length({0})") + ", {0}) END"
SPARK_RECORD_ENCODING = (
    "concat("
    + _FIELD.format("key") + ", "
    + _FIELD.format("value") + ", "
    + _U32.format("size(coalesce(headers, array()))") + ", "
    + "aggregate(coalesce(headers, array()), CAST(X'' AS BINARY), (acc, h) -> concat(acc, "
    + _FIELD.format("encode(h.key, 'UTF-8')") + ", "
    + _FIELD.format("h.value") + ")))"
)
SPARK_RECORD_HASH = "sha2(" + SPARK_RECORD_ENCODING + ", 256)"
SPARK_HASH_LOW = "CAST(conv(substr(record_hash, 1, 16), 16, 10) AS DECIMAL(20,0))"
SPARK_HASH_HIGH = "CAST(conv(substr(record_hash, 17, 16), 16, 10) AS DECIMAL(20,0))"
