"""What every mode of the job shares: check results, progress lines, listing, the Spark starter."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

MAX_LISTED = 5


def now_ms():
    return int(time.time() * 1000)


class Progress(object):
    """Throttled progress lines on stderr (one per key every ``every`` seconds)."""

    def __init__(self, stream=None, every=5.0, quiet=False):
        self.stream = stream
        self.every = every
        self.quiet = quiet
        self.last = {}
        self.lock = threading.Lock()

    def line(self, key, text, force=False):
        if self.quiet:
            return
        import sys
        stream = self.stream or sys.stderr
        with self.lock:
            t = time.time()
            if force or t - self.last.get(key, 0) >= self.every:
                self.last[key] = t
                stream.write("[mm2-smoke %s] %s\n" % (time.strftime("%H:%M:%S"), text))
                stream.flush()


def listed(items, fmt=str):
    items = list(items)
    text = ", ".join(fmt(i) for i in items[:MAX_LISTED])
    if len(items) > MAX_LISTED:
        text += " and %d more" % (len(items) - MAX_LISTED)
    return text


def first_diff(one, two):
    """Index of the first differing byte (or the shorter length), None when equal."""
    if one == two:
        return None
    one, two = one or b"", two or b""
    for i, (x, y) in enumerate(zip(one, two)):
        if x != y:
            return i
    return min(len(one), len(two))


def result(check, flow, topic=None):
    return {"check": check, "flow": flow["name"], "topic": topic, "status": "pass", "messages": [],
            "details": {}, "started": time.time()}


def finish(res, status=None):
    if status:
        res["status"] = status
    elif res["messages"] and res["status"] == "pass":
        res["status"] = "fail"
    res["duration_s"] = round(time.time() - res.pop("started"), 2)
    return res


class SparkStarter(object):
    """The Spark session, started in the background as the job starts: the JVM comes up while the
    markers are produced and replicate, and the first compare waits for it only if it is late."""

    def __init__(self, factory):
        self.pool = ThreadPoolExecutor(max_workers=1)
        self.future = self.pool.submit(factory)
        self.pool.shutdown(wait=False)

    def get(self):
        return self.future.result()

    def started(self):
        """The session if it came up, else None (its error is the caller's to report once)."""
        try:
            return self.future.result()
        except Exception:  # noqa: BLE001 - reported by the caller from error()
            return None

    def error(self):
        return self.future.exception() if self.future.done() else None
