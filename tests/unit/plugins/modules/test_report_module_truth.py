# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet_report module reports what happened: nodes reshaped by an aborted batch, Placement
down, one run per directory, the context, private files; the reshape module's run_id."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import socket
import stat

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery, reshaper, snapshot
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import factory
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import ServiceUnavailable
from ansible_collections.placement.upgrade.plugins.module_utils._placement.version import COLLECTION_VERSION
from ansible_collections.placement.upgrade.plugins.modules import fleet_report, reshape

import simfleet
from module_runner import run_module_main
from test_report_module import _record

TOKEN = 'sekret-admin-token-4711'


@pytest.fixture
def run(capsys):
    def run_module(args, check=False):
        return run_module_main(fleet_report.main, args, capsys, check=check)
    return run_module


def _closed_port():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def _rest_down():
    """REST options pointing at a port nothing listens on."""
    url = 'http://127.0.0.1:%d' % _closed_port()
    return url, {'auth_type': 'admin_token', 'auth': {'token': TOKEN, 'endpoint': url}, 'api_timeout': 5}


def _devices(node):
    return discovery.discover(node['sysfs_root'], domain_xml_glob=node['domain_xml_glob'],
                              hostname=node['provider'], nova_conf=node['nova_conf'],
                              domain_capabilities=node.get('domain_capabilities'))


def _reshape(fleet, name, snap, run_id):
    node = next(n for n in fleet['nodes'] if n['name'] == name)
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        return reshaper.reshape_node(backend, node['provider'], _devices(node), snapshot_dir=snap, run_id=run_id)


def _files(dest):
    out = []
    for folder, _dirs, names in os.walk(dest):
        out += [os.path.join(folder, n) for n in names]
    return out


# -- an aborted batch, whatever the batch size ---------------------------------------------

@pytest.mark.parametrize('serial', [1, 2, 3])
def test_nodes_reshaped_in_an_aborted_batch_show_as_touched(run, tmp_path, serial):
    fleet = simfleet.build(str(tmp_path / 'fleet'), nodes=8)
    hosts = [n['name'] for n in fleet['nodes']]
    snap = str(tmp_path / 'snaps')
    dest = str(tmp_path / 'reports' / 'run-b')
    args = {'embedded_db': fleet['embedded_db'], 'dest': dest, 'hosts': hosts, 'run_id': 'run-b',
            'snapshot_dir': snap}
    results = {}
    aborted = None
    batches = [hosts[i:i + serial] for i in range(0, len(hosts), serial)]
    for index, batch in enumerate(batches):
        for name in batch:
            results[name] = _reshape(fleet, name, snap, 'run-b')
        if index > 0 and any(results[n]['status'] == 'reshaped' for n in batch):
            aborted = batch       # the play died here: no record of this batch was written
            break
        rc, res = run(dict(args, records=[_record(n, results[n]) for n in batch]))
        assert rc == 0, res
    assert aborted, 'the fleet must have a node reshaped after the first batch'
    # a snapshot another run wrote of a node this run never reached is not this run's
    last = next(n for n in fleet['nodes'] if n['name'] == hosts[-1])
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        snapshot.write_snapshot(snap, {'uuid': last['uuid'], 'name': last['provider']},
                                provider_tree_state(backend, last['uuid']), run_id='older-run')
    # the report rendered after the abort (the rescue's call, or a later re-render)
    rc, res = run(dict(args, records=[]))
    assert rc == 0, res
    reshaped = [n for n in hosts if results.get(n, {}).get('status') == 'reshaped']
    assert res['touched_nodes'] == reshaped
    derived = [n for n in aborted if results[n]['status'] == 'reshaped']
    by_node = dict((n['node'], n) for n in res['summary']['nodes'])
    for name in derived:
        entry = by_node[name]
        assert entry['status'] == 'reshaped' and entry['touched'] and entry['derived'], entry
        assert entry['snapshot'] == results[name]['snapshot']
        assert 'record was not written by the roll' in entry['reason']
        assert entry['rollback'].endswith('-e rollback_nodes=%s' % name)
        with open(report.record_path(dest, name)) as handle:
            stored = json.load(handle)
        assert stored['derived'] is True and stored['run_id'] == 'run-b'
        assert any(line.startswith('%s: its record was not written by the roll' % name) for line in res['log'])
    # the nodes of the aborted batch that were not reshaped, and the ones after, were not touched
    for name in hosts:
        if name not in reshaped:
            assert not by_node[name]['touched'], name
    assert by_node[hosts[-1]]['status'] == 'unreached'
    assert res['next_steps'][-1].endswith('-e rollback_nodes=%s' % ','.join(reshaped))
    with open(res['paths']['markdown']) as handle:
        text = handle.read()
    for name in derived:
        assert 'Outcome: reshaped (derived from its snapshot and Placement' in text
    # a second re-render finds the derived records stored and derives nothing again
    rc, again = run(dict(args, records=[]))
    assert rc == 0 and again['touched_nodes'] == reshaped and again['stored'] == []


# -- Placement down ------------------------------------------------------------------------

@pytest.fixture(scope='module')
def applied(tmp_path_factory):
    """compute-01 and compute-02 reshaped for real with run id run-d; compute-03's check-mode result."""
    base = tmp_path_factory.mktemp('applied')
    fleet = simfleet.build(str(base / 'fleet'), nodes=3)
    snap = str(base / 'snaps')
    results = {'compute-01': _reshape(fleet, 'compute-01', snap, 'run-d'),
               'compute-02': _reshape(fleet, 'compute-02', snap, 'run-d')}
    node = fleet['nodes'][2]
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        results['compute-03'] = reshaper.reshape_node(backend, node['provider'], _devices(node), check_mode=True)
    return fleet, snap, results


def test_placement_unreachable_still_writes_the_report(run, applied, tmp_path):
    fleet, snap, results = applied
    assert results['compute-01']['status'] == 'reshaped' and results['compute-02']['status'] == 'reshaped'
    url, rest = _rest_down()
    dest = str(tmp_path / 'reports' / 'run-d')
    hosts = ['compute-01', 'compute-02', 'compute-03', 'compute-04']
    records = [_record('compute-01', results['compute-01'], status='failed',
                       reason='nova-compute did not come back (task: Restart nova-compute)'),
               _record('compute-03', results['compute-03'])]
    args = dict(rest, dest=dest, hosts=hosts, run_id='run-d', snapshot_dir=snap, records=records,
                context={'playbook': 'placement.upgrade.rolling_reshape', 'check_mode': False,
                         'token': TOKEN})
    rc, res = run(args)
    assert rc == 0, res
    assert any(line.startswith('not reading provider trees: cannot use Placement: ') for line in res['log'])
    unread = dict((u['node'], u['reason']) for u in res['unread_nodes'])
    assert sorted(unread) == ['compute-01', 'compute-02', 'compute-03']
    assert all(reason.startswith('cannot use Placement: ') for reason in unread.values())
    # the failed node was reshaped before it failed: touched, before from its snapshot
    assert res['touched_nodes'] == ['compute-01', 'compute-02']
    assert res['failed_nodes'] == [{'node': 'compute-01', 'touched': True,
                                    'reason': 'nova-compute did not come back (task: Restart nova-compute)'}]
    by_node = dict((n['node'], n) for n in res['summary']['nodes'])
    assert by_node['compute-01']['outcome'].startswith('failed after its reshape was applied (rollback: ')
    assert by_node['compute-01']['moved']['allocations'] == results['compute-01']['moved']['allocations']
    assert by_node['compute-02']['derived'] is True
    assert by_node['compute-02']['moved']['allocations'] == results['compute-02']['moved']['allocations']
    assert by_node['compute-04']['status'] == 'unreached'
    assert sorted(os.listdir(os.path.join(dest, 'nodes'))) == ['compute-01.json', 'compute-02.json',
                                                               'compute-03.json']
    with open(res['paths']['summary']) as handle:
        summary = json.load(handle)
    # (the result Ansible returns masks the endpoint, a value inside the no_log auth option; the files do not)
    assert [u['node'] for u in summary['unread']] == [u['node'] for u in res['unread_nodes']]
    assert all(u['reason'].startswith('cannot use Placement: ') and url in u['reason'] for u in summary['unread'])
    assert summary['context']['backend'] == 'rest' and summary['context']['endpoint'] == url
    assert summary['context']['placement_microversion'] is None
    assert summary['context']['collection_version'] == COLLECTION_VERSION
    with open(res['paths']['markdown']) as handle:
        text = handle.read()
    assert '## Trees not read from Placement' in text
    assert '| Placement | REST API %s |' % url in text
    assert '| Placement microversion | not negotiated (Placement was not read) |' in text
    assert 'Provider tree before (from its snapshot):' in text
    assert 'Provider tree after: not read from Placement.' in text
    with open(res['paths']['html']) as handle:
        assert 'Trees not read from Placement' in handle.read()
    # no credential anywhere: not in the files, not in the result
    assert any("context keys not shown" in line and 'token' in line for line in res['log'])
    for path in _files(dest):
        with open(path) as handle:
            assert TOKEN not in handle.read(), path
    assert TOKEN not in json.dumps(dict((k, v) for k, v in res.items() if k != 'invocation'))


def test_placement_that_stops_answering_is_dropped_for_the_rest(run, applied, tmp_path, monkeypatch):
    fleet, _snap, results = applied
    calls = []

    class Dying(object):
        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def list_providers(self, **kwargs):
            calls.append(kwargs.get('name'))
            if kwargs.get('name') == 'compute-02':
                raise ServiceUnavailable('Placement at http://x did not answer')
            return self.inner.list_providers(**kwargs)

    real = factory.get_backend
    monkeypatch.setattr(factory, 'get_backend', lambda *a, **kw: Dying(real(*a, **kw)))
    records = [{'node': 'compute-01', 'status': 'noop'}, {'node': 'compute-02', 'status': 'noop'},
               {'node': 'compute-03', 'status': 'noop'}]
    rc, res = run({'embedded_db': fleet['embedded_db'], 'dest': str(tmp_path / 'r'), 'records': records})
    assert rc == 0, res
    assert [c for c in calls if c] == ['compute-01', 'compute-02'], 'no read after Placement went away'
    assert [u['node'] for u in res['unread_nodes']] == ['compute-02', 'compute-03']
    assert res['unread_nodes'][0]['reason'].startswith('Placement stopped answering: ')
    # the microversion is still known: the embedded store speaks 1.39 (and compute-01 was read at it)
    assert res['summary']['context']['placement_microversion'] == '1.39'


def test_a_badly_shaped_stored_record_is_skipped_with_its_name(run, tmp_path):
    dest = str(tmp_path / 'r')
    rc, res = run({'dest': dest, 'read_trees': False, 'records': [{'node': 'a', 'status': 'noop'}]})
    assert rc == 0, res
    with open(os.path.join(dest, 'nodes', 'b.json'), 'w') as handle:
        json.dump({'node': 'b', 'status': 'reshaped', 'before': {'providers': ['x']}}, handle)
    with open(os.path.join(dest, 'nodes', 'c.json'), 'w') as handle:
        handle.write('[]')
    rc, res = run({'dest': dest, 'read_trees': False, 'hosts': ['a', 'b'],
                   'records': [{'node': 'd', 'status': 'noop', 'reshape': 'not a result', 'instances': [1]}]})
    assert rc == 0, res
    assert any(line.startswith('unreadable node record skipped: ') and 'c.json' in line for line in res['log'])
    assert any(line.startswith('the record of b is badly shaped') for line in res['log'])
    assert [n['node'] for n in res['summary']['nodes']] == ['a', 'b', 'd']
    assert res['summary']['nodes'][1]['unread'].startswith('its node record is badly shaped')
    assert os.path.exists(res['paths']['html'])


# -- one run per directory; files private; context ------------------------------------------

def test_dest_of_another_run_is_refused(run, tmp_path):
    dest = str(tmp_path / 'r')
    rc, res = run({'dest': dest, 'run_id': 'run-1', 'read_trees': False, 'records': [{'node': 'a', 'status': 'noop'}]})
    assert rc == 0, res
    with open(report.record_path(dest, 'a')) as handle:
        assert json.load(handle)['run_id'] == 'run-1'
    rc, res = run({'dest': dest, 'run_id': 'run-2', 'read_trees': False,
                   'records': [{'node': 'b', 'status': 'noop'}]})
    assert rc == 1 and res['failed'] is True
    assert res['msg'].startswith('%s already holds node records of another run (run run-1: a), not of run run-2'
                                 % dest)
    assert 'Traceback' not in res['msg'] and 'exception' not in res
    assert not os.path.exists(report.record_path(dest, 'b')), 'nothing of the other run was stored'
    # a re-render without a run id is the stored run's report
    rc, res = run({'dest': dest, 'read_trees': False})
    assert rc == 0 and res['summary']['run_id'] == 'run-1'


def test_files_are_private_and_context_is_shown(run, applied, tmp_path):
    fleet, _snap, results = applied
    dest = str(tmp_path / 'reports' / 'run-p')
    rc, res = run({'embedded_db': fleet['embedded_db'], 'dest': dest, 'run_id': 'run-p',
                   'records': [_record('compute-03', results['compute-03'])],
                   'context': {'awx_job_id': 17, 'awx_job_template': 'Reshape', 'playbook': 'roll.yml',
                               'check_mode': False, 'inventory': 'prod.yml'}})
    assert rc == 0, res
    assert res['log'] == []
    for path in _files(dest):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path
    for folder in (dest, os.path.join(dest, 'nodes')):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700, folder
    context = res['summary']['context']
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        microversion = backend.microversion
    assert context == {'awx_job_id': 17, 'awx_job_template': 'Reshape', 'playbook': 'roll.yml',
                       'check_mode': False, 'inventory': 'prod.yml', 'backend': 'embedded',
                       'embedded_db': os.path.abspath(fleet['embedded_db']), 'cloud': None, 'endpoint': None,
                       'placement_microversion': microversion, 'collection_version': COLLECTION_VERSION}
    with open(res['paths']['markdown']) as handle:
        text = handle.read()
    assert '| AWX job | 17 (template Reshape) |' in text
    assert '| Placement microversion | %s |' % microversion in text
    assert '| collection | placement.upgrade %s |' % COLLECTION_VERSION in text


def test_plan_run_returns_the_nodes_that_would_stop(run, applied, tmp_path):
    fleet, _snap, results = applied
    records = [_record('compute-03', results['compute-03']),
               {'node': 'compute-02', 'status': 'failed', 'reason': 'strict ownership: consumer c9'}]
    rc, res = run({'embedded_db': fleet['embedded_db'], 'dest': str(tmp_path / 'plan'), 'mode': 'plan',
                   'hosts': ['compute-01', 'compute-02', 'compute-03'], 'records': records})
    assert rc == 0, res
    assert res['would_stop'] == [{'node': 'compute-02', 'reason': 'strict ownership: consumer c9'}]
    assert [n['node'] for n in res['summary']['nodes']] == ['compute-02', 'compute-01', 'compute-03']
    assert res['summary_line'].startswith('3 nodes (plan): ')
    assert '1 would stop the roll' in res['summary_line']
    assert res['touched_nodes'] == []
    rc, res = run({'dest': str(tmp_path / 'apply'), 'read_trees': False, 'records': records})
    assert rc == 0 and res['would_stop'] == []


def test_reshape_module_stores_its_run_id(capsys, applied, tmp_path):
    fleet, _snap, _results = applied
    # compute-03 is already in the layout in this fleet; a fresh fleet gives a node to reshape
    fresh = simfleet.build(str(tmp_path / 'fleet'), nodes=1)
    node = fresh['nodes'][0]
    snap = str(tmp_path / 'snaps')
    rc, res = run_module_main(reshape.main, {'embedded_db': fresh['embedded_db'], 'root_provider': node['provider'],
                                             'devices': _devices(node), 'snapshot_dir': snap,
                                             'run_id': '20260101T120000Z'}, capsys)
    assert rc == 0, res
    assert res['status'] == 'reshaped'
    assert snapshot.load_snapshot(res['snapshot'])['run_id'] == '20260101T120000Z'
    assert [p for p, _d in snapshot.run_snapshots(snap, node['provider'], '20260101T120000Z')] == [res['snapshot']]
