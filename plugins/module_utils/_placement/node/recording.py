# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 1 recorded: a node's discovery written to a file, and replayed instead of probing.

:func:`record` writes device_info's result (``{"devices": report, "ownership": ...}``) as
JSON; :func:`replay` reads one back -- that file, a registered device_info result saved as
JSON or YAML, or a device report alone -- and returns the device report, refusing a
recording of another host, and one whose report :func:`.discover.report_check.check_report`
refuses (an edited recording naming a device twice, say).  A rehearsal then runs the node's pass on the controller
without reaching the node.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from .. import files
from ..errors import BadInput, LocalFileError
from .discover.report_check import check_report

#: the keys every device report has (node/discovery.py)
REPORT_KEYS = ('hostname', 'gpus', 'sriov_pfs', 'pci_devices', 'instances')


def record(path, result):
    """Write ``result`` (device_info's ``devices`` and ``ownership``) to ``path`` as JSON (0600, atomic)."""
    path = os.path.abspath(os.path.expanduser(path))
    if not os.path.isdir(os.path.dirname(path)):
        raise LocalFileError('record_to: the directory %s does not exist' % os.path.dirname(path), path=path)
    doc = {'devices': result['devices'], 'ownership': result.get('ownership') or {}}
    try:
        files.atomic_write(path, json.dumps(doc, indent=1, sort_keys=True) + '\n')
    except (OSError, IOError) as exc:
        raise LocalFileError('record_to: cannot write %s: %s' % (path, exc), path=path)
    return path


def _parse(text, path):
    try:
        return json.loads(text)
    except ValueError as exc:
        json_error = exc
    try:
        import yaml  # a registered result saved with to_nice_yaml; PyYAML is optional on a node
    except ImportError:
        raise LocalFileError('replay_from: %s is not JSON (%s)' % (path, json_error), path=path)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise LocalFileError('replay_from: %s is neither JSON nor YAML (%s)' % (path, exc), path=path)


def replay(path, hostname=None):
    """The device report recorded in ``path``; ``hostname``, when given, must be the recorded one."""
    path = os.path.abspath(os.path.expanduser(path))
    try:
        with open(path) as handle:
            text = handle.read()
    except (OSError, IOError) as exc:
        raise LocalFileError('replay_from: cannot read %s: %s' % (path, exc), path=path)
    doc = _parse(text, path)
    report = doc.get('devices') if isinstance(doc, dict) and isinstance(doc.get('devices'), dict) else doc
    if not isinstance(report, dict) or any(key not in report for key in REPORT_KEYS):
        raise LocalFileError('replay_from: %s holds no device report (a mapping with %s, or a device_info '
                             'result with it under devices)' % (path, ', '.join(REPORT_KEYS)), path=path)
    if hostname and report.get('hostname') != hostname:
        raise LocalFileError('replay_from: %s is the recording of %s, not of %s' % (path, report.get('hostname'), hostname),
                             path=path)
    try:
        check_report(report)  # an edited recording: its shape, each device named once, canonically
    except BadInput as exc:
        raise BadInput('replay_from: %s: %s' % (path, exc.detail), field=exc.field)
    return report
