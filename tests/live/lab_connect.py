"""Distributed Kafka Connect workers, and Connect's REST API."""

import json
import os
import time
import urllib.error
import urllib.request

from lab_process import free_ports, get_json, load_connect, log, start_process, stop_process


def connect_rest(method, url, body=None, timeout=30):
    """(status, decoded JSON or None) of one Kafka Connect REST call; urllib's HTTPError for 4xx/5xx."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json", "Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as resp:
        text = resp.read().decode()
        return resp.status, (json.loads(text) if text.strip() else None)


def put_connector(url, name, config, timeout=120):
    """PUT /connectors/<name>/config on the worker at ``url``, again while it answers 409 (a
    rebalance), 5xx or not at all; returns the status code."""
    deadline = time.time() + timeout
    while True:
        try:
            return connect_rest("PUT", "%s/connectors/%s/config" % (url, name), config)[0]
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")
            if exc.code not in (409, 500, 503) or time.time() > deadline:
                raise RuntimeError("PUT %s: %s %s" % (name, exc.code, detail[-2000:]))
            log("PUT %s: %s, again (%s)" % (name, exc.code, detail[:200]))
        except (urllib.error.URLError, OSError) as exc:
            if time.time() > deadline:
                raise RuntimeError("PUT %s: %s" % (name, exc))
        time.sleep(1)


def committed_values(bootstrap, topic, count, timeout, linger_s=0.0):
    """(values, end offset) of partition 0 of ``topic`` as a read_committed reader finds them from its
    beginning: once it has ``count`` values and ``linger_s`` more seconds passed (to see any record
    beyond them), or ``timeout`` passed. The end offset counts transaction markers too."""
    from kafka import KafkaConsumer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None,
                             isolation_level="read_committed")
    part = TopicPartition(topic, 0)
    try:
        deadline, values, assigned, enough_at = time.monotonic() + timeout, [], False, None
        while time.monotonic() < deadline:
            if len(values) >= count:
                enough_at = enough_at or time.monotonic()
                if time.monotonic() - enough_at >= linger_s:
                    break
            if not assigned:
                if not consumer.partitions_for_topic(topic):
                    time.sleep(0.5)
                    continue
                consumer.assign([part])
                consumer.seek_to_beginning(part)
                assigned = True
            for records in consumer.poll(timeout_ms=500).values():
                values.extend(record.value for record in records)
        return values, consumer.end_offsets([part])[part] if assigned else 0
    finally:
        consumer.close()


class ConnectMixin(object):
    """Lab's distributed Kafka Connect workers."""

    def start_connect(self, source="A", target="B", workers=1, exactly_once=False, extra=None, timeout=180):
        """Start ``workers`` distributed Connect workers for flow source->target with the worker
        properties the connect role renders (mm2_connect.worker_properties), next to ``target``.
        Returns their REST base URLs once each answers GET /connectors (it joined its group)."""
        _model, connect = load_connect()
        names = connect.names(source, target)
        launched = []
        for _i in range(workers):
            port = free_ports(1)[0]
            launched.append(self._launch_worker(connect.worker_properties(
                {"bootstrap_servers": self.bootstrap(target), "properties": {}}, names,
                {"port": port, "advertised_host": "127.0.0.1", "bind_host": "127.0.0.1"}, exactly_once,
                extra=extra)))
        for worker in launched:
            self._wait_worker(worker, timeout)
        return [worker["url"] for worker in launched]

    def start_worker(self, properties, timeout=180):
        """One distributed Connect worker with ``properties`` (a plan's worker_properties), returned
        as {url, proc, out, dir, properties} once it answers GET /connectors (it joined its group);
        stop_connect stops it with the others."""
        return self._wait_worker(self._launch_worker(properties), timeout)

    def _launch_worker(self, properties):
        self.connect_count += 1
        d = os.path.join(self.tmp, "connect-%d" % self.connect_count)
        os.makedirs(d)
        path = os.path.join(d, "connect-distributed.properties")
        with open(path, "w") as fh:
            fh.write("".join("%s=%s\n" % kv for kv in properties.items()))
        env = dict(os.environ, LOG_DIR=os.path.join(d, "logs"), KAFKA_HEAP_OPTS=self.heap)
        out = os.path.join(d, "stdout.log")
        proc = start_process([self.bin("connect-distributed.sh"), path], out, env=env)
        url = "http://%s:%s" % (properties["rest.advertised.host.name"], properties["rest.advertised.port"])
        worker = {"url": url, "proc": proc, "out": out, "dir": d, "properties": properties}
        self.workers.append(worker)
        return worker

    @staticmethod
    def _wait_worker(worker, timeout):
        deadline = time.time() + timeout
        while True:
            if worker["proc"].poll() is not None:
                raise RuntimeError("Connect worker exited (%s), see %s" % (worker["proc"].returncode, worker["out"]))
            try:
                get_json(worker["url"] + "/connectors")
                break
            except Exception:  # noqa: BLE001 - not joined yet
                if time.time() > deadline:
                    raise RuntimeError("Connect worker %s did not answer within %ss, see %s"
                                       % (worker["url"], timeout, worker["out"]))
                time.sleep(0.5)
        log("Connect worker up on %s" % worker["url"])
        return worker

    def stop_connect(self):
        for worker in self.workers:
            stop_process(worker["proc"], 30)
        self.workers = []
