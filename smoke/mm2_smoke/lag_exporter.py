"""The replication lag for Prometheus: ``python -m mm2_smoke.lag_exporter --config FILE --listen ADDR:PORT``.

Serves ``/metrics`` (prometheus_client). Every scrape reads the lag as ``mm2_lag_info`` does, with
the collection's own reader (``plugins/module_utils/mm2/lag_reader.py``, importable from the
directory the mm2_smoke role copies it to) and its figures (``lag.py``); nothing is derived here.
The configuration file holds the module's options as JSON (``layout``, ``plan``, and optionally
``url``, ``client_properties``, ``timeout`` and the other connection options); an unknown key or a
bad value stops the exporter before it listens, naming the key.

The series: ``kafkaops_mm2_lag_records`` and ``kafkaops_mm2_lag_seconds`` per flow, topic and
partition; ``kafkaops_mm2_lag_reading_ok`` 1 when the last reading worked, else 0 (and no lag
series: an unread lag is not a lag of 0), with why on stderr; ``kafkaops_mm2_lag_reading_seconds``,
how long it took. Readings do not overlap: a scrape that comes during one waits for it.
"""

import argparse
import json
import sys
import threading
import time

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import client as kafka_client
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import lag as mm2_lag
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import lag_reader
from prometheus_client import start_http_server
from prometheus_client.core import CollectorRegistry, GaugeMetricFamily


class ConfigError(ValueError):
    """A configuration the reader would refuse: the message names the key."""


def load_params(config):
    """The reader's options from the configuration mapping: its defaults, then the given keys."""
    if not isinstance(config, dict):
        raise ConfigError("the configuration is not a JSON object of mm2_lag_info's options")
    spec = lag_reader.argument_spec()
    unknown = sorted(set(config) - set(spec))
    if unknown:
        raise ConfigError("unknown key(s) %s; the options are %s" % (", ".join(unknown), ", ".join(sorted(spec))))
    missing = sorted(key for key, option in spec.items() if option.get("required") and key not in config)
    if missing:
        raise ConfigError("missing key(s) %s" % ", ".join(missing))
    params = dict((key, option.get("default")) for key, option in spec.items())
    params.update(config)
    if params["layout"] not in spec["layout"]["choices"]:
        raise ConfigError("layout: %r is not one of %s" % (params["layout"], ", ".join(spec["layout"]["choices"])))
    errors = lag_reader.input_errors(params)
    if errors:
        raise ConfigError("; ".join(errors))
    fault = lag_reader.library_fault(params)
    if fault:
        raise ConfigError(fault[0])
    try:
        lag_reader.flows_to_read(params)
    except kafka_client.Failed as exc:
        raise ConfigError(str(exc))
    return params


class LagCollector(object):
    """A prometheus_client collector that reads the lag at every scrape with ``read(params)``,
    which returns the rows and warnings or raises ``Failed``."""

    def __init__(self, params, read, log=sys.stderr):
        self.params, self.read, self.log = params, read, log
        self.lock = threading.Lock()

    def collect(self):
        with self.lock:
            started = time.monotonic()
            try:
                rows, warnings = self.read(self.params)
                ok = 1
            except kafka_client.Failed as exc:
                rows, warnings, ok = [], ["the lag was not read: %s" % exc], 0
            took = time.monotonic() - started
        for warning in warnings:
            self.log.write("mm2_lag_exporter: %s\n" % warning)
        self.log.flush()
        for name, text, samples in mm2_lag.metric_samples(rows):
            family = GaugeMetricFamily(name, text, labels=mm2_lag.METRIC_LABELS)
            for labels, value in samples:
                family.add_metric(labels, value)
            yield family
        yield GaugeMetricFamily("kafkaops_mm2_lag_reading_ok", "1 when the last reading of the lag worked, else 0",
                                value=ok)
        yield GaugeMetricFamily("kafkaops_mm2_lag_reading_seconds", "How long the last reading of the lag took",
                                value=round(took, 3))


def reader():
    """read(params) for LagCollector: the module's reading, kafka-python's log captured once."""
    errors = kafka_client.capture_kafka_log()

    def read(params):
        del errors.reasons[:]
        rows, _sources, warnings = lag_reader.measure(params, errors)
        return rows, warnings
    return read


def listen_address(text):
    """(address, port) of ADDR:PORT (an IPv6 address in brackets)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError("%r is not ADDR:PORT" % text)
    return host.strip("[]") or "0.0.0.0", int(port)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="mm2_lag_exporter", description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="JSON file of mm2_lag_info's options")
    parser.add_argument("--listen", required=True, type=listen_address, help="ADDR:PORT to serve /metrics on")
    args = parser.parse_args(argv)
    try:
        with open(args.config) as handle:
            params = load_params(json.load(handle))
    except (OSError, ValueError) as exc:
        parser.exit(2, "mm2_lag_exporter: %s: %s\n" % (args.config, exc))
    registry = CollectorRegistry()
    registry.register(LagCollector(params, reader()))
    start_http_server(args.listen[1], addr=args.listen[0], registry=registry)
    sys.stderr.write("mm2_lag_exporter: serving /metrics on %s:%d\n" % args.listen)
    sys.stderr.flush()
    threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
