# -*- coding: utf-8 -*-
"""ConnectDouble: a TEST DOUBLE of a Kafka Connect worker's REST API, not Kafka Connect.

An in-memory table of connectors behind a real HTTP server on 127.0.0.1, answering the requests
plugins/module_utils/connect/rest.py sends. The status codes, the 404 messages and the 400 for a
config naming another connector are those a Kafka 4.3.1 worker gave in the smoke lab; the 401 and
409 bodies only have Connect's shape ({"error_code", "message"}). It is used
only for what a real worker cannot be made to do on demand: answer 409 (a rebalance), 401, or
slowly; hold a FAILED task with a long trace; and record every request a run sent, so that check
mode can be shown to send no write. Everything else is tested against a real worker in
tests/live/test_connect_connector.py.

State changes are immediate here; a real worker applies them a moment later.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

WORKER = "127.0.0.1:8083"


class ConnectDouble(object):

    def __init__(self, credentials=None):
        # name -> {"config": {...}, "state": str, "tasks": [{"id", "state"[, "trace"]}][, "offsets": [...]]}
        self.connectors = {}
        self.requests = []  # (method, raw path with query, decoded JSON body or None)
        self.conflicts = 0  # answer 409 to this many requests, then as usual
        self.delay = 0.0  # seconds before each answer
        self.credentials = credentials  # "user:password" required as basic auth, or None
        self.headers = []
        double = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self, method):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                with double.lock:
                    double.requests.append((method, self.path, body))
                    double.headers.append(dict(self.headers))
                    code, answer = double.answer(method, self.path, body, self.headers.get("Authorization"))
                if double.delay:
                    time.sleep(double.delay)
                data = json.dumps(answer).encode() if answer is not None else b""
                self.send_response(code)
                if data:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._answer("GET")

            def do_PUT(self):
                self._answer("PUT")

            def do_POST(self):
                self._answer("POST")

            def do_DELETE(self):
                self._answer("DELETE")

            def do_PATCH(self):
                self._answer("PATCH")

        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    # ------------------------------------------------------------------ table
    def add(self, name, config, state="RUNNING", tasks=1):
        self.connectors[name] = {"config": dict(config, name=name), "state": state,
                                 "tasks": [{"id": i, "state": state} for i in range(tasks)]}

    def writes(self):
        return [(m, p) for m, p, _b in self.requests if m != "GET"]

    # ---------------------------------------------------------------- answers
    @staticmethod
    def _error(code, message):
        return code, {"error_code": code, "message": message}

    def _status(self, name):
        entry = self.connectors[name]
        connector = {"state": entry["state"], "worker_id": WORKER}
        if entry.get("trace"):
            connector["trace"] = entry["trace"]
        tasks = [dict(task, worker_id=WORKER) for task in entry["tasks"]]
        return {"name": name, "connector": connector, "tasks": tasks, "type": "source"}

    def answer(self, method, raw_path, body, authorization):
        if self.credentials is not None:
            expected = "Basic " + base64.b64encode(self.credentials.encode()).decode()
            if authorization != expected:
                return self._error(401, "Request requires authentication")
        if self.conflicts:
            self.conflicts -= 1
            return self._error(409, "Cannot complete request momentarily due to stale configuration "
                                    "(typically caused by a concurrent config change)")
        parts = urlsplit(raw_path)
        segments = [unquote(s) for s in parts.path.split("/")[1:]]
        query = parse_qs(parts.query)
        if segments == ["connectors"] and method == "GET":
            return 200, sorted(self.connectors)
        if segments == ["connectors"] and method == "POST":
            # KIP-980's initial_state: STOPPED or PAUSED
            self.add(body["name"], body["config"], state=body.get("initial_state", "RUNNING"), tasks=0)
            return 201, {"name": body["name"], "config": self.connectors[body["name"]]["config"], "tasks": [],
                         "type": "source"}
        if len(segments) < 2 or segments[0] != "connectors":
            return self._error(404, "HTTP 404 Not Found")
        name, rest = segments[1], segments[2:]
        entry = self.connectors.get(name)
        if rest == ["config"] and method == "PUT":
            if "name" in body and body["name"] != name:
                return self._error(400, "Connector name configuration (%s) doesn't match connector name in the URL (%s)"
                                   % (body["name"], name))
            if "connector.class" not in body:
                return self._error(400, "Connector config %s contains no connector type" % body)
            created = entry is None
            if created:
                self.add(name, body, tasks=0)
            else:
                entry["config"] = dict(body, name=name)
            return (201 if created else 200), {"name": name, "config": self.connectors[name]["config"], "tasks": [],
                                               "type": "source"}
        if entry is None:
            if rest == ["status"]:
                return self._error(404, "No status found for connector %s" % name)
            return self._error(404, "Connector %s not found" % name)
        if rest == ["config"] and method == "GET":
            return 200, entry["config"]
        if rest == ["status"] and method == "GET":
            return 200, self._status(name)
        if rest == ["tasks"] and method == "GET":
            # Connect's shape: each task's id as {connector, task} and its config
            return 200, [{"id": {"connector": name, "task": t["id"]}, "config": {"task.class": "x"}}
                         for t in entry["tasks"]]
        if rest in (["pause"], ["resume"]) and method == "PUT":
            state = "PAUSED" if rest == ["pause"] else "RUNNING"
            entry["state"] = state
            entry["tasks"] = [{"id": t["id"], "state": state} for t in entry["tasks"]]
            return 202, None
        if rest == ["stop"] and method == "PUT":
            entry["state"], entry["tasks"] = "STOPPED", []
            return 204, None
        if rest == ["restart"] and method == "POST":
            if query.get("includeTasks") != ["true"] or query.get("onlyFailed") != ["false"]:
                return self._error(400, "unexpected restart query %r" % parts.query)
            entry["tasks"] = [{"id": t["id"], "state": "RUNNING"} for t in entry["tasks"]]
            entry["state"] = "RUNNING"
            entry.pop("trace", None)
            return 202, self._status(name)
        if rest == ["offsets"] and method == "GET":
            return 200, {"offsets": entry.get("offsets", [])}
        if rest == ["offsets"] and method == "PATCH":
            if entry["state"] != "STOPPED":
                # DistributedHerder's refusal (Kafka 4.3.1)
                return self._error(400, "Connectors must be in the STOPPED state before their offsets can be modified. "
                                        "This can be done for the specified connector by issuing a 'PUT' request to the "
                                        "'/connectors/%s/stop' endpoint" % name)
            merged = dict((json.dumps(e["partition"], sort_keys=True), e) for e in entry.get("offsets", []))
            merged.update((json.dumps(e["partition"], sort_keys=True), e) for e in body["offsets"])
            entry["offsets"] = [e for e in merged.values() if e["offset"] is not None]
            return 200, {"message": "The offsets for this connector have been altered successfully"}
        if not rest and method == "DELETE":
            del self.connectors[name]
            return 204, None
        return self._error(404, "HTTP 404 Not Found")
