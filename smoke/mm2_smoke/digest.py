"""Order-insensitive content digest of Kafka records (key, value, headers).

A record's hash is Spark SQL's ``xxhash64`` (XXH64, seed 42) over, in this order::

    key IS NULL, key, value IS NULL, value, number of headers,
    for each header, in order: (value IS NULL, utf8(key), value)

Spark chains the hash through its arguments (each one hashed with the previous result as seed),
skips a null, and hashes a boolean as the 4-byte little-endian int 1 or 0; the null flags keep a
null apart from an empty field and from a neighbour's bytes. A partition's digest is the sum of
its records' hashes modulo 2**64, with the count beside it: equal multisets of records give equal
digests whatever their order; a missing, extra, duplicated or changed record changes it (but for
a 2**-64 chance). Spark sums the hash's two 32-bit halves as BIGINTs, so nothing it adds can
overflow below 2**31 records per partition and side.

The hash runs inside Spark's generated code (``SPARK_RECORD_HASH``); the SHA-256 of a
concatenated encoding that it replaced cost more than the Kafka source's read itself
(bench/smoke_reconcile). ``record_hash`` is the same definition in Python, for the tests.
"""

import struct

MOD = 1 << 64
SEED = 42  # the seed of Spark SQL's xxhash64


def _xxh64(data, seed):
    import xxhash  # the tests' dependency (requirements/dev.txt); the job hashes in Spark
    return xxhash.xxh64_intdigest(bytes(data), seed)


def _flag(is_null, seed):
    return _xxh64(struct.pack("<i", 1 if is_null else 0), seed)


def _nullable(data, seed):
    seed = _flag(data is None, seed)
    return seed if data is None else _xxh64(data, seed)


def record_hash(key, value, headers):
    """Unsigned 64-bit hash of a record; headers: sequence of (str key, bytes value or None)."""
    headers = list(headers or ())
    seed = _nullable(value, _nullable(key, SEED))
    seed = _xxh64(struct.pack("<i", len(headers)), seed)
    for hkey, hval in headers:
        seed = _flag(hval is None, seed)
        seed = _xxh64(hkey.encode("utf-8") if isinstance(hkey, str) else hkey, seed)
        if hval is not None:
            seed = _xxh64(hval, seed)
    return seed


def hex64(value):
    """16 hex characters of a 64-bit hash or sum, signed (Spark's BIGINT) or not."""
    return "%016x" % (int(value) % MOD)


class Digest(object):
    """Running order-insensitive digest of a multiset of records."""

    def __init__(self):
        self.count = 0
        self.total = 0

    def add(self, key, value, headers):
        self.count += 1
        self.total = (self.total + record_hash(key, value, headers)) % MOD
        return self

    def hexdigest(self):
        return hex64(self.total)


def format_digest(low_sum, high_sum):
    """The digest from Spark's sums of the hashes' low and high 32-bit halves."""
    return hex64(int(low_sum or 0) + (int(high_sum or 0) << 32))


def digest_of(records):
    """Digest hex of an iterable of (key, value, headers)."""
    dig = Digest()
    for key, value, headers in records:
        dig.add(key, value, headers)
    return dig.hexdigest()


# Spark SQL over the Kafka source's columns
# (key BINARY, value BINARY, headers ARRAY<STRUCT<key STRING, value BINARY>>).
SPARK_RECORD_HASH = (
    "xxhash64(key IS NULL, key, value IS NULL, value, coalesce(size(headers), 0), "
    "transform(headers, h -> struct(h.value IS NULL, h.key, h.value)))")
SPARK_HASH_LOW = "record_hash & 4294967295"
SPARK_HASH_HIGH = "shiftrightunsigned(record_hash, 32)"
