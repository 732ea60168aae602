# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations


class ModuleDocFragment(object):
    """The connection options of the modules that talk to a Kafka Connect worker's REST API
    (plugins/module_utils/connect/rest.py, argument_spec())."""

    DOCUMENTATION = r"""
options:
  url:
    description:
      - Base URL of the REST API of one worker of the Connect cluster, without a path; any worker will
        do, since workers forward writes to the group's leader.
      - With C(https://), the worker's certificate is verified unless O(validate_certs=false).
    type: str
    default: http://localhost:8083
  url_username:
    description:
      - User name for HTTP basic authentication (Connect's C(BasicAuthSecurityRestExtension)). The
        credentials are sent with every request, without waiting for a challenge.
      - Credentials are taken from O(url_username) and O(url_password) only, never from C(~/.netrc).
    type: str
  url_password:
    description:
      - Password for HTTP basic authentication, with O(url_username).
    type: str
  validate_certs:
    description:
      - Verify the worker's TLS certificate and host name (C(https://) URLs).
      - Set V(false) only for a lab; a certificate that cannot be verified is better fixed with O(ca_path).
    type: bool
    default: true
  ca_path:
    description:
      - A PEM file of the certificate authorities that signed the worker's certificate, instead of the
        system's trust store.
    type: path
  client_cert:
    description:
      - A PEM file with the client certificate for a worker that requires TLS client authentication
        (C(listeners.https.ssl.client.auth=required)). It may hold the private key as well.
    type: path
  client_key:
    description:
      - A PEM file with the private key of O(client_cert), when that file does not hold it.
    type: path
  timeout:
    description:
      - Seconds to wait for the worker's answer to one request.
      - Connect itself gives up on a request after 90 seconds (a busy leader); raise this when a
        worker is known to answer slowly.
    type: int
    default: 30
"""
