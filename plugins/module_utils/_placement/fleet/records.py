# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Storing one node's record for the report of a run (the node's own step writes it).

A rolling pass stores each node's record in the run's report folder (``dest/nodes/<node>.json``)
as soon as the node is done; the report is rendered once, from the stored records, at the end of
the roll or where it stops (:mod:`.report`).  Two callers store records: ``fleet_report`` with
``summarize: false`` (any records given to it), and ``reshape`` with its ``record`` option (the
record of the node it just reshaped, without a task of its own and through the backend it has
open).  Both go through :func:`store`, so a record is the same whoever stored it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from . import report
from ..errors import ServiceUnavailable

_PLAIN = (str, int, float, bool, type(None))


def as_given(record, exc):
    """What is kept of a record that could not be collected: its plain fields, and why."""
    kept = dict((k, v) for k, v in record.items() if isinstance(v, _PLAIN) and k not in ('before', 'after'))
    kept['unread'] = 'the record could not be collected (%s)' % report.shape_text(exc)
    return kept


#: how the warnings of the node's discovery are marked in its record
DISCOVERY_WARNING = 'device_info: %s'


def discovery_warnings(devices):
    """The device report's warnings as the node's record carries them (``device_info: ...``)."""
    warnings = (devices or {}).get('warnings') if isinstance(devices, dict) else None
    return [DISCOVERY_WARNING % w for w in warnings or [] if isinstance(w, str)]


def node_record(node, provider, result, run_id='', started=None, finished=None, instances=None, nova_compute=None,
                warnings=None):
    """The record the rolling role keeps for a node whose reshape task returned ``result``.

    ``result``: the reshape's result (``status``, ``deferred_reason``, ``moved``, ``plan``, ...).
    ``started`` / ``finished``: epoch seconds of the node's pass (``finished`` defaults to now).
    ``instances``: the device report's guests (named in the report).
    ``warnings``: the warnings of the node's pass before the reshape (:func:`discovery_warnings`);
    the reshape's own remarks are in ``result``.
    """
    return {
        'warnings': list(warnings or []),
        'node': node,
        'provider': provider,
        'status': result.get('status'),
        'run_id': run_id,
        'reason': result.get('deferred_reason') or '',
        'started': started,
        'finished': time.time() if finished is None else finished,
        'nova_compute': dict(nova_compute or {}),
        'reshape': result,
        'instances': dict(instances or {}),
    }


def store(backend, dest, record, mode='apply', snapshot_dir=None, run_id='', read_error=None, log=None, read=None):
    """Collect ``record`` with its trees (:func:`.report.collect_record`) and store it in ``dest``.

    The run id is checked against the records already in ``dest`` (:func:`.report.check_run`:
    a folder never mixes two runs).  A record that cannot be collected (Placement stopped
    answering, a badly shaped result) is stored with its plain fields, saying why, and ``log``
    is told: storing never fails on Placement.  ``read``: ``(state, foreign)`` of the node's tree as
    the reshape last read it (``reshape_node``'s ``observed``): the tree is then not read again.
    Returns ``(path, collected record)``.
    """
    node = record.get('node') or record.get('provider')
    run_id = report.check_run(report.load_some_records(dest, [node]), run_id, dest)
    try:
        try:
            rec, warnings = report.collect_record(backend, record, mode=mode, read_error=read_error,
                                                  snapshot_dir=snapshot_dir, run_id=run_id, read=read)
        except ServiceUnavailable as exc:
            rec, warnings = report.collect_record(None, record, mode=mode, snapshot_dir=snapshot_dir, run_id=run_id,
                                                  read_error='Placement stopped answering: %s' % exc)
    except Exception as exc:  # pylint: disable=broad-except
        rec, warnings = as_given(record, exc), ['%s: the record could not be collected (%s); stored with its '
                                                'plain fields' % (node, report.shape_text(exc))]
    for warning in warnings:
        if log is not None:
            log(warning)
    rec['run_id'] = run_id
    return report.save_record(dest, rec), rec
