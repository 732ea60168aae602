"""Latency statistics (pure functions)."""

import math


def percentile(values, pct):
    """Nearest-rank percentile (pct in 0..100) of a sequence; None when empty."""
    if not values:
        return None
    data = sorted(values)
    if pct <= 0:
        return data[0]
    rank = int(math.ceil(pct / 100.0 * len(data)))
    return data[min(max(rank, 1), len(data)) - 1]


def summary(values):
    """{count, p50, p95, max, min, mean} of latencies (ms)."""
    if not values:
        return {"count": 0, "p50": None, "p95": None, "max": None, "min": None, "mean": None}
    return {"count": len(values), "p50": percentile(values, 50), "p95": percentile(values, 95),
            "max": max(values), "min": min(values), "mean": round(sum(values) / float(len(values)), 1)}


def histogram(values, bins=20):
    """Equal-width bins over [0, max]: {"edges": [...], "counts": [...]} (edges has bins+1 items)."""
    if not values:
        return {"edges": [], "counts": []}
    top = max(values)
    width = max(1, int(math.ceil((top + 1) / float(bins))))
    counts = [0] * bins
    for val in values:
        counts[min(int(max(val, 0) // width), bins - 1)] += 1
    return {"edges": [i * width for i in range(bins + 1)], "counts": counts}
