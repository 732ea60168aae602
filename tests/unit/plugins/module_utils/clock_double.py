# -*- coding: utf-8 -*-
"""A TEST DOUBLE of time.monotonic and time.sleep for kafka_client.Retry: sleeping advances the
clock at once, so the tests of retries within a timeout take no time."""

from __future__ import annotations


class Clock(object):
    """Call it for the time; ``sleep`` advances it."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds
