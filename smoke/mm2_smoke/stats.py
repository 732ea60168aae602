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
    """Equal-width bins over [min, max]: {"edges": [...], "counts": [...]} (edges has bins+1 items).
    Starting at the smallest value keeps the bins where the latencies are, not below them."""
    if not values:
        return {"edges": [], "counts": []}
    low, top = min(values), max(values)
    width = max(1, int(math.ceil((top - low + 1) / float(bins))))
    counts = [0] * bins
    for val in values:
        counts[min(int((val - low) // width), bins - 1)] += 1
    return {"edges": [low + i * width for i in range(bins + 1)], "counts": counts}
