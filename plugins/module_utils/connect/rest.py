# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""A small Kafka Connect REST client on Ansible's own ``ansible.module_utils.urls``.

Only what the collection's Connect modules need: one connector's config and status, the list of
connectors, create/update, pause/resume/stop, restart and delete. No third-party library, so it
runs on any managed host that runs Ansible modules.

Two failures are told apart, because a play reacts to them differently:

* ``ConnectUnreachable``: no HTTP answer at all (connection refused, name not resolved, timeout,
  TLS handshake). The message names the URL and the reason.
* ``ConnectHTTPError``: the worker answered with an error status; it carries the status and the
  ``message`` of Connect's JSON error body.

A 404 on a connector's config or status means "no such connector" and is returned as None.

Connect answers 409 while its group rebalances or its config topic is being read to the end
(``Cannot complete request momentarily due to stale configuration``, ``... because of a
conflicting operation (e.g. worker rebalance)``); nothing was done, so those requests are sent
again a bounded number of times.
"""

from __future__ import annotations

import http.client
import json
import re
import time
from urllib.error import HTTPError, URLError
from urllib.parse import quote, urlencode

from ansible.module_utils.common.text.converters import to_native, to_text

DEFAULT_URL = "http://localhost:8083"
# The states a connector can be left in, for a connector's offsets to be set (KIP-875: while
# STOPPED) and for a task to ask for: running, or held paused or stopped.
CONNECTOR_STATES = ("running", "paused", "stopped")
# Names the collection in the worker's request log (Python's default would be Python-urllib/3.x).
USER_AGENT = "kafkaops.mirrormaker-connect_rest"
CONFLICT = 409
# A whole value of the form ${provider:[path:]key}: what a config provider (FileConfigProvider...)
# resolves on the worker. It names where the secret is, it is not one.
# Jetty (Connect's REST server) refuses a path with an encoded '/', '\' or '%' (HTTP 400, empty
# body, "ambiguous URI"), and control characters cannot be carried at all.
_NAME_BAD = re.compile(r"[/\\%\x00-\x1f\x7f]")


def argument_spec():
    """The connection options, as documented in the connect_rest doc fragment."""
    return dict(
        url=dict(type="str", default=DEFAULT_URL),
        url_username=dict(type="str"),
        url_password=dict(type="str", no_log=True),
        validate_certs=dict(type="bool", default=True),
        ca_path=dict(type="path"),
        client_cert=dict(type="path"),
        client_key=dict(type="path", no_log=False),
        timeout=dict(type="int", default=30),
    )


def check_connection_params(params):
    """Messages naming the connection option at fault; empty when all is well."""
    errors = []
    url = params["url"]
    if not re.match(r"^https?://[^/?#\s]+", url or ""):
        errors.append("url: %r is not an http:// or https:// URL of a Connect worker (e.g. %s)" % (url, DEFAULT_URL))
    if params["timeout"] < 1:
        errors.append("timeout: %d must be at least 1 (seconds)" % params["timeout"])
    if params.get("url_password") and not params.get("url_username"):
        errors.append("url_password: given without url_username")
    if params.get("client_key") and not params.get("client_cert"):
        errors.append("client_key: given without client_cert")
    return errors


def name_fault(name):
    """A refusal for a connector name the REST API cannot carry, or None."""
    if name is None or not name.strip():
        return "name: a connector name must not be empty"
    if _NAME_BAD.search(name):
        return ("name: %r cannot be a connector name on the REST API: Connect's server refuses '/', '\\' and '%%' "
                "in a path even when encoded, and control characters cannot be sent" % name)
    return None


def connector_path(name, *rest):
    """``/connectors/<name>[/rest...]`` with the name quoted as one path segment."""
    return "/".join(["/connectors", quote(name, safe="")] + list(rest))


class ConnectError(Exception):
    """Base of the client's errors; ``str()`` is a complete sentence."""


class ConnectUnreachable(ConnectError):
    """No HTTP answer from the worker: connection refused, DNS, timeout, TLS."""

    def __init__(self, url, method, path, reason):
        self.url, self.method, self.path, self.reason = url, method, path, reason
        super().__init__("cannot reach Kafka Connect at %s (%s %s): %s" % (url, method, path, reason))


class ConnectHTTPError(ConnectError):
    """An HTTP error status; ``message`` is Connect's own (its JSON body's ``message``)."""

    def __init__(self, url, method, path, status, message):
        self.url, self.method, self.path, self.status, self.message = url, method, path, status, message
        super().__init__("Kafka Connect at %s answered %s %s with HTTP %d: %s" % (url, method, path, status, message))


def _error_message(exc):
    """Connect's ``message`` from an error body; the body, or the HTTP reason, otherwise."""
    try:
        raw = exc.read()
    except Exception:  # noqa: BLE001 - a body that cannot be read leaves the reason phrase
        raw = b""
    text = to_text(raw or b"", errors="surrogate_or_replace").strip()
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("message"):
        return to_text(body["message"])
    # Jetty's own refusals (an ambiguous URI...) come with an empty body.
    return text[:500] or to_text(exc.reason or "no message")


def _reason(exc):
    reason = getattr(exc, "reason", None)
    return to_native(reason if reason is not None else exc) or type(exc).__name__


class ConnectClient:
    """One Connect worker's REST API (any worker: it forwards writes to the group's leader)."""

    def __init__(self, url=DEFAULT_URL, url_username=None, url_password=None, validate_certs=True, ca_path=None,
                 client_cert=None, client_key=None, timeout=30, conflict_retries=6, conflict_delay=2.0,
                 sleep=time.sleep):
        self.url = url.rstrip("/")
        self.conflict_retries = conflict_retries
        self.conflict_delay = conflict_delay
        self.sleep = sleep
        # Every 409 retried, as (method, path, message): the caller may report them.
        self.conflicts = []
        # ansible.module_utils.urls is imported here, not with the file: the collection's filters
        # import this file (through module_utils/mm2/connect.py) in every task's worker process,
        # and urls brings cryptography, gssapi and email with it (bench/README.md).
        from ansible.module_utils.urls import ConnectionError as UrlsConnectionError  # pylint: disable=import-outside-toplevel
        from ansible.module_utils.urls import Request  # pylint: disable=import-outside-toplevel
        # URLError wraps refused connections, DNS failures and certificate errors; a timeout while
        # reading comes bare (TimeoutError is an OSError).
        self._unreachable = (URLError, UrlsConnectionError, http.client.HTTPException, OSError)
        self._request = Request(
            headers={"Accept": "application/json"}, http_agent=USER_AGENT, timeout=timeout,
            validate_certs=validate_certs,
            url_username=url_username, url_password=url_password,
            # Connect's basic-auth extension answers 401 without a challenge to react to, so the
            # credentials go with the first request; and only the given ones, never ~/.netrc's.
            force_basic_auth=bool(url_username), use_netrc=False,
            ca_path=ca_path, client_cert=client_cert, client_key=client_key)

    @classmethod
    def from_params(cls, params, **kwargs):
        return cls(url=params["url"], url_username=params.get("url_username"), url_password=params.get("url_password"),
                   validate_certs=params.get("validate_certs", True), ca_path=params.get("ca_path"),
                   client_cert=params.get("client_cert"), client_key=params.get("client_key"),
                   timeout=params.get("timeout", 30), **kwargs)

    def call(self, method, path, body=None, query=None):
        """(status, decoded JSON body or None); raises ConnectUnreachable or ConnectHTTPError."""
        url = self.url + path + ("?" + urlencode(query) if query else "")
        shown = path + ("?" + urlencode(query) if query else "")
        data = None
        headers = {}
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        attempt = 0
        while True:
            try:
                response = self._request.open(method, url, data=data, headers=headers)
                status = response.getcode()
                raw = response.read()
            except HTTPError as exc:
                message = _error_message(exc)
                if exc.code == CONFLICT and attempt < self.conflict_retries:
                    attempt += 1
                    self.conflicts.append((method, shown, message))
                    self.sleep(self.conflict_delay)
                    continue
                raise ConnectHTTPError(self.url, method, shown, exc.code, message)
            except self._unreachable as exc:
                raise ConnectUnreachable(self.url, method, shown, _reason(exc))
            text = to_text(raw or b"", errors="surrogate_or_replace").strip()
            try:
                return status, json.loads(text) if text else None
            except ValueError:
                raise ConnectHTTPError(self.url, method, shown, status, "the answer is not JSON: %r" % text[:200])

    def _absent_as_none(self, method, path):
        try:
            return self.call(method, path)[1]
        except ConnectHTTPError as exc:
            if exc.status == 404:
                return None
            raise

    # --------------------------------------------------------------------------- reads

    def list_connectors(self):
        """The names of the connectors of the worker's Connect cluster."""
        return self.call("GET", "/connectors")[1] or []

    def get_config(self, name):
        """The connector's config as stored (provider references unresolved), or None when absent."""
        return self._absent_as_none("GET", connector_path(name, "config"))

    def get_status(self, name):
        """``{name, connector: {state, worker_id[, trace]}, tasks: [{id, state, worker_id[, trace]}], type}``,
        or None when Connect has no status (absent, or created a moment ago)."""
        return self._absent_as_none("GET", connector_path(name, "status"))

    def task_ids(self, name):
        """The ids of the connector's task configs (``GET /connectors/<name>/tasks``), or None when absent.

        Only the ids: a task config holds the connector's settings, secrets resolved or not."""
        tasks = self._absent_as_none("GET", connector_path(name, "tasks"))
        return None if tasks is None else [((t or {}).get("id") or {}).get("task") for t in tasks]

    def get_offsets(self, name):
        """The connector's committed offsets, ``[{partition: {...}, offset: {...}}]`` (KIP-875, Kafka
        3.5+), or None when the connector is absent."""
        body = self._absent_as_none("GET", connector_path(name, "offsets"))
        return None if body is None else list(body.get("offsets") or [])

    # -------------------------------------------------------------------------- writes

    def create_in(self, name, config, initial_state):
        """Create the connector in ``initial_state``, STOPPED or PAUSED (``POST /connectors`` with
        ``initial_state``, KIP-980, Kafka 3.7+): it runs no task until resumed."""
        self.call("POST", "/connectors", body={"name": name, "config": config, "initial_state": initial_state})

    def alter_offsets(self, name, offsets):
        """``PATCH /connectors/<name>/offsets`` (KIP-875, Kafka 3.6+); the connector must be stopped."""
        self.call("PATCH", connector_path(name, "offsets"), body={"offsets": offsets})

    def put_config(self, name, config):
        """Create or replace the whole config; returns True when the connector was created (HTTP 201)."""
        status, _body = self.call("PUT", connector_path(name, "config"), body=config)
        return status == 201

    def pause(self, name):
        self.call("PUT", connector_path(name, "pause"))

    def resume(self, name):
        self.call("PUT", connector_path(name, "resume"))

    def stop(self, name):
        """KIP-875 (Kafka 3.5+): the connector and its tasks are shut down and its task configs emptied."""
        self.call("PUT", connector_path(name, "stop"))

    def restart(self, name, include_tasks=True, only_failed=False):
        """Restart the connector (and its tasks); returns the status Connect answers (states RESTARTING)."""
        query = [("includeTasks", "true" if include_tasks else "false"), ("onlyFailed", "true" if only_failed else "false")]
        return self.call("POST", connector_path(name, "restart"), query=query)[1]

    def delete(self, name):
        """Delete the connector; returns False when there was none (404)."""
        try:
            self.call("DELETE", connector_path(name))
        except ConnectHTTPError as exc:
            if exc.status == 404:
                return False
            raise
        return True
