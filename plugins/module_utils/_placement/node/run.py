# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reshape module's work: :func:`run`, one core run per state, as ``fleet/report.run`` is the
fleet_report module's (and kubernetes.core's ``runner.run_module`` its modules').

The module builds a :class:`Request` from its options (checked by Ansible) and calls :func:`run`,
which returns the result dict: ``failed`` (with ``msg``) when the task must fail (a verification
that did not pass, a deferred node with ``fail_on_deferred``), else what the task returns.

    state=reshaped     :func:`reshaped`      nova's migrations of the node, then reshaper.reshape_node
    state=verified     :func:`verified`      reshaper.verify_node
    state=rolled_back  :func:`rolled_back`   reshaper.rollback_node

The three calls of node/reshaper.py are here, each once.  The run's record store (fleet/records.py:
``check_run_id``, ``node_record``, ``discovery_warnings``, ``store``) is the request's ``records``,
given by the module: node/ does not import fleet/ (fleet/records.py imports node/snapshot.py).  A PlacementError (or anything
unexpected) is raised as it is: the module maps it (module_utils/common.py ``run_module``).

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ..errors import ConfigurationError
from ..nova import compute as nova
from ..resources import tree_order
from ..rules.inventory import normalize_inventory
from ..rules.providers import provider_view
from . import reshaper


class Request(object):
    """What a reshape task asks: ``params``, the reshape module's options (``root_provider``,
    ``state``, ``devices`` or ``moves``, ``snapshot_dir``, ``record``, ...: its argument spec);
    ``attempts``, the attempts of a write that lost a generation race (``conflict_retries`` + 1);
    ``check_mode`` and ``diff``, the task's; ``warn``, told each remark the task warns of;
    ``records``, the run's record store (fleet/records.py)."""

    def __init__(self, params, attempts, records, check_mode=False, diff=False, warn=None):
        self.params = params
        self.records = records
        self.attempts = attempts
        self.check_mode = bool(check_mode)
        self.diff = bool(diff)
        self.warn = warn or (lambda message: None)


class _Pass(object):
    """One task's pass: the messages it logged (the record's and a failure's ``log``), what it read."""

    def __init__(self, log):
        self.began = time.time()
        self.messages = []
        self._log = log
        self.devices = None
        self.observed = {}  # the tree as the reshape last read it (reshape_node fills it)
        self.found = {'source': nova.SOURCE_NONE, 'count': 0, 'records': []}

    def keep(self, message):
        self.messages.append(message)
        self._log(message)


def _devices(params):
    devices = params.get('devices')
    if devices is None:
        raise ConfigurationError('devices (the device_info result of the node) is required with '
                                 'state=%s' % params['state'])
    # the whole registered device_info result is accepted too
    if 'devices' in devices and isinstance(devices['devices'], dict) and 'gpus' not in devices:
        devices = devices['devices']
    return devices


def _moves(params):
    """``(devices, moves, consumers)``: the device report, or the explicit move records."""
    if params.get('moves') is not None:
        return None, params['moves'], params.get('consumers')
    if params.get('consumers') is not None:
        raise ConfigurationError('consumers is only used with moves (the split of a class over the '
                                 'targets of explicit move records)')
    return _devices(params), None, None


def tree(state):
    """RV(tree): the providers of a tree state read by the reshape (backends/base.py
    ``provider_tree_state``), as resource_provider_info gives them, root first."""
    out = []
    for prov in tree_order(list(state['providers'].values())):
        entry = provider_view(prov)
        entry['inventories'] = dict((rc, normalize_inventory(rec, rc))
                                    for rc, rec in (prov.get('inventories') or {}).items())
        out.append(entry)
    return out


def _orphan_lookup(backend, found, log):
    """When nova answered for the node's migrations, ask it which unexplained consumers are orphans."""
    if found['source'] != nova.SOURCE_NOVA:
        return None
    adapter = nova.compute_adapter(backend)

    def lookup(consumers):
        return nova.orphaned(adapter, consumers, found['records'], log=log)
    return lookup


def rolled_back(backend, request, task):
    """state=rolled_back: the snapshot restored (node/reshaper.py ``rollback_node``)."""
    params = request.params
    return reshaper.rollback_node(backend, params['root_provider'], reshaper.RollbackRequest(
        snapshot_dir=params['snapshot_dir'], snapshot_file=params['snapshot'],
        remove_children=params['remove_children'], check_mode=request.check_mode,
        attempts=request.attempts, log=task.keep))


def verified(backend, request, task):
    """state=verified: the tree checked against the layout (node/reshaper.py ``verify_node``)."""
    params = request.params
    task.devices, moves, consumers = _moves(params)
    return reshaper.verify_node(backend, params['root_provider'], task.devices, reshaper.VerifyRequest(
        layout_options=params['layout'], policy=params['ownership_policy'],
        ownership=params['ownership'], snapshot_dir=params['snapshot_dir'],
        snapshot_file=params['snapshot'], moves=moves, consumers=consumers))


def reshaped(backend, request, task):
    """state=reshaped: nova's migrations of the node, then the reshape (node/reshaper.py ``reshape_node``)."""
    params = request.params
    task.devices, moves, consumers = _moves(params)
    found = task.found = nova.node_migrations(backend, params['root_provider'], mode=params['nova_migrations'],
                                              host=params['compute_host'], given=params['migrations'], log=task.keep)
    return reshaper.reshape_node(backend, params['root_provider'], task.devices, reshaper.ReshapeRequest(
        layout_options=params['layout'], policy=params['ownership_policy'], ownership=params['ownership'],
        allow_foreign_allocations=params['allow_foreign_allocations'],
        migrations=None if found['source'] == nova.SOURCE_NONE else found['records'],
        snapshot_dir=params['snapshot_dir'], check_mode=request.check_mode,
        attempts=request.attempts, log=task.keep, run_id=params['run_id'],
        orphan_lookup=_orphan_lookup(backend, found, task.keep),
        moves=moves, consumers=consumers, observed=task.observed,
        service_disabled=params['compute_service_disabled']))


#: The core run of each state of the reshape module.
RUNS = {'reshaped': reshaped, 'verified': verified, 'rolled_back': rolled_back}


def _failed(result, task, request, **extra):
    """The failed task's result: ``result`` with the pass's messages as its ``log``."""
    failed = dict(result, failed=True, log=task.messages, **extra)
    if not request.diff:
        failed.pop('diff', None)
    return failed


def run(backend, request, log=None):
    """The reshape module's work for ``request`` (a :class:`Request`) on ``backend``: the result dict
    (``failed`` and ``msg`` when the task must fail).  ``log``: told every message of the pass."""
    params = request.params
    task = _Pass(log or (lambda message: None))
    request.records.check_run_id(params['run_id'])     # before anything is read or written: it names the record's folder
    state = params['state']
    result = dict(RUNS[state](backend, request, task))
    result['migrations'] = task.found
    result['remarks'] = list(result.pop('warnings', None) or [])
    for remark in result['remarks']:
        request.warn(remark)
    if result.get('verified') is False:
        return _failed(result, task, request)
    if params['fail_on_deferred'] and state == 'reshaped' and result.get('status') == 'deferred':
        deferred = dict(result)
        deferred.pop('msg', None)
        return _failed(deferred, task, request,
                       msg='%s is deferred and fail_on_deferred is set: %s'
                       % (params['root_provider'], result.get('deferred_reason') or 'a move in flight'))
    observed = task.observed
    if state == 'reshaped' and not request.check_mode and result.get('status') == 'reshaped' and 'state' in observed:
        # the verification's read, after the reshape: what later reads of the tree are compared with
        result['tree'] = tree(observed['state'])
    if params['record'] and state == 'reshaped':
        result['stored'] = _store_record(backend, request, task, result)
    return result


def _store_record(backend, request, task, result):
    """Store the node's record for the report of the run (the option record): the path."""
    params = request.params
    records = request.records
    wanted = params['record']
    outcome = dict(result)
    outcome.setdefault('changed', False)
    outcome['log'] = list(task.messages)
    record = records.node_record(
        wanted['node'], params['root_provider'], outcome, run_id=params['run_id'],
        started=task.began if wanted['started'] is None else wanted['started'],
        instances=(task.devices or {}).get('instances'), warnings=records.discovery_warnings(task.devices))
    observed = task.observed
    path, _rec = records.store(backend, wanted['dest'], record, mode='plan' if request.check_mode else 'apply',
                               snapshot_dir=params['snapshot_dir'], run_id=params['run_id'], log=task.keep,
                               # the tree as the reshape last read it: not read again for the record
                               read=(observed['state'], observed['foreign']) if 'state' in observed else None)
    return path
