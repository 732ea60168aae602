# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Documentation of the mm2_status_report action (the files are written on the controller)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: mm2_status_report
short_description: Write the MirrorMaker 2 status report (JSON, PNG dashboard, HTML page) on the controller
description:
  - Writes what C(kafkaops.mirrormaker.mm2_status) returned as three files in C(dest) on the
    controller - C(NAME.json) (the document, with C(generated_at)), C(NAME.png) (the dashboard -
    the summary charts per flow and topic, the two charts over time as line charts, and the
    per-node tables, drawn with matplotlib) and C(NAME.html) (the same panels as HTML tables, and
    the PNG).
  - Every chart of Acceldata Pulse's MirrorMaker dashboard appears under the name Pulse's page gives
    it; the PNG's Description metadata lists its panels. A C(lag) list in the status
    (C({flow, topic, partition, records, seconds}) items) adds a C(Replication Lag) panel.
  - Needs the Python packages matplotlib and Jinja2 on the controller. Runs on the controller only.
    In check mode nothing is written.
version_added: 0.1.0
author:
  - kafkaops maintainers (!UNKNOWN)
options:
  status:
    description: The result of C(kafkaops.mirrormaker.mm2_status), optionally with C(lag).
    type: dict
    required: true
  dest:
    description: An existing directory on the controller.
    type: path
    required: true
  name:
    description: The files' name without extension.
    type: str
    default: mm2-status
extends_documentation_fragment:
  - kafkaops.mirrormaker.controller_action
  - ansible.builtin.action_common_attributes
"""

EXAMPLES = r"""
- name: Write the status report
  kafkaops.mirrormaker.mm2_status_report:
    status: "{{ mm2_status }}"
    dest: ./mm2-status
"""

RETURN = r"""
files:
  description: The paths written, by kind (C(json), C(png), C(html)).
  returned: always
  type: dict
panels:
  description: The PNG's panels, as listed in its Description.
  returned: when written
  type: list
  elements: str
"""
