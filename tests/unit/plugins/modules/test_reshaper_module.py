# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The placement.upgrade.reshape module's main() on an embedded_db (argument handling,
result keys, check mode, failure mapping)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os
import uuid as _uuid

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
from ansible_collections.placement.upgrade.plugins.modules import reshape

from module_runner import run_module_main
from test_reshaper_support import comparable, flat_gpu_node, gpu_report, put

RESULT_KEYS = {'changed', 'plan', 'retries', 'verification', 'verified', 'snapshot', 'status', 'moved',
               'deferred_reason', 'remarks', 'msg', 'log'}


@pytest.fixture
def env(tmp_path):
    db = str(tmp_path / 'placement.db')
    store = EmbeddedBackend(db)
    report = gpu_report(tmp_path / 'host', 'compute-01')
    node = flat_gpu_node(store, 'compute-01', report)
    node.update(store=store, db=db, report=report, snapdir=str(tmp_path / 'snaps'))
    try:
        yield node
    finally:
        store.close()


@pytest.fixture
def run(capsys, env):
    def call(args, check=False, diff=False):
        args = dict(args)
        args.setdefault('embedded_db', env['db'])
        return run_module_main(reshape.main, args, capsys, check=check, diff=diff)
    return call


def test_check_mode_then_apply_then_noop(run, env):
    before = comparable(provider_tree_state(env['store'], env['root']))
    args = {'root_provider': 'compute-01', 'devices': env['report'], 'snapshot_dir': env['snapdir']}
    rc, res = run(args, check=True, diff=True)
    assert rc == 0, res
    assert res['changed'] is True and res['status'] == 'reshaped'
    assert RESULT_KEYS <= set(res) and 'diff' in res
    assert set(res['diff']['after']['providers']) == {'compute-01', 'compute-01_pci_0000_84_00_0',
                                                      'compute-01_pci_0000_85_00_0'}
    assert comparable(provider_tree_state(env['store'], env['root'])) == before

    rc, res = run(args)
    assert rc == 0, res
    assert res['changed'] is True and res['status'] == 'reshaped' and res['verified'] is True
    assert 'diff' not in res                                 # not in diff mode
    assert all(c['passed'] for c in res['verification']) and len(res['verification']) == 7
    assert res['moved'] == {'consumers': 3, 'allocations': 3, 'units': {'VGPU': 5}}
    assert res['snapshot'].startswith(env['snapdir'])

    rc, res = run(args)
    assert rc == 0 and res['changed'] is False and res['status'] == 'noop'
    assert res['plan']['allocations'] == {}


def test_whole_device_info_result_is_accepted(run, env):
    registered = {'changed': False, 'devices': env['report'], 'ownership': {}}
    rc, res = run({'root_provider': env['root'], 'devices': registered}, check=True)
    assert rc == 0 and res['plan']['moved_classes'] == ['VGPU']


def test_unmapped_consumer_fails_with_its_name(run, env):
    stray = str(_uuid.uuid4())
    put(env['store'], stray, {env['root']: {'resources': {'VGPU': 1}}})
    report = copy.deepcopy(env['report'])
    # a guest of the host (its domain is there) whose devices explain none of its VGPU
    report['instances'][stray] = {'name': 'instance-stray', 'mdevs': [], 'pci_addresses': []}
    rc, res = run({'root_provider': 'compute-01', 'devices': report, 'snapshot_dir': env['snapdir']})
    assert rc == 1 and res['failed'] is True
    assert stray in res['msg'] and 'pack' in res['msg']
    assert res['error']['code'] == 'placement_upgrade.plan'
    rc, res = run({'root_provider': 'compute-01', 'devices': report, 'snapshot_dir': env['snapdir'],
                   'ownership': {stray: {'0000:85:00.0': 1}}})
    assert rc == 0 and res['verified'] is True


def test_deferred_is_not_a_failure(run, env):
    other = str(_uuid.uuid4())
    env['store'].create_provider('compute-02', uuid=other)
    env['store'].set_inventories(other, 0, {'VCPU': {'total': 8}})
    consumer = sorted(env['consumers'])[0]
    allocs = dict((rp, {'resources': e['resources']})
                  for rp, e in env['store'].get_allocations(consumer)['allocations'].items())
    allocs[other] = {'resources': {'VCPU': 1}}
    put(env['store'], consumer, allocs)
    rc, res = run({'root_provider': 'compute-01', 'devices': env['report'], 'snapshot_dir': env['snapdir']})
    assert rc == 0 and res['changed'] is False and res['status'] == 'deferred'
    assert consumer in res['deferred_reason']

    # fail_on_deferred: the same verdict is a failure naming why; nothing changed, no record stored
    before = comparable(provider_tree_state(env['store'], env['root']))
    for check in (True, False):
        rc, res = run({'root_provider': 'compute-01', 'devices': env['report'], 'snapshot_dir': env['snapdir'],
                       'fail_on_deferred': True, 'record': {'dest': env['snapdir'] + '-report', 'node': 'n1'}},
                      check=check)
        assert rc == 1 and res['failed'] is True and res['status'] == 'deferred', res
        assert res['msg'].startswith('compute-01 is deferred and fail_on_deferred is set: ')
        assert consumer in res['msg'] and consumer in res['deferred_reason'] and 'stored' not in res
    assert comparable(provider_tree_state(env['store'], env['root'])) == before

    # The operator overrides: the node is reshaped, the foreign allocation is carried along and
    # said as a remark, which is also a task warning (never a result key 'warnings' of its own).
    rc, res = run({'root_provider': 'compute-01', 'devices': env['report'], 'snapshot_dir': env['snapdir'],
                   'allow_foreign_allocations': True}, check=True)
    assert rc == 0 and res['changed'] is True and res['status'] == 'reshaped', res
    assert len(res['remarks']) == 1 and res['remarks'][0].startswith('allow_foreign_allocations: ')
    assert consumer in res['remarks'][0]
    assert json.dumps(res['warnings']).count('allow_foreign_allocations: ') == 1, res['warnings']


def test_rollback_and_verify_states(run, env):
    args = {'root_provider': 'compute-01', 'devices': env['report'], 'snapshot_dir': env['snapdir']}
    assert run(args)[0] == 0
    rc, res = run({'root_provider': 'compute-01', 'state': 'verified', 'devices': env['report'],
                   'snapshot_dir': env['snapdir']})
    assert rc == 0 and res['status'] == 'verified' and res['changed'] is False and res['verified'] is True
    rc, res = run({'root_provider': 'compute-01', 'state': 'rolled_back', 'snapshot_dir': env['snapdir'],
                   'remove_children': True})
    assert rc == 0 and res['status'] == 'rolled_back' and res['changed'] is True, res
    assert res['verified'] is True
    # a node without the layout fails verification, listing the failed checks
    rc, res = run({'root_provider': 'compute-01', 'state': 'verified', 'devices': env['report']})
    assert rc == 1 and res['failed'] is True
    failed = [c['check'] for c in res['verification'] if not c['passed']]
    assert 'layout_applied' in failed and 'layout_applied' in res['msg']


def test_argument_errors(run, env):
    rc, res = run({'root_provider': 'compute-01'})
    assert rc == 1 and 'devices' in res['msg']
    rc, res = run({'root_provider': 'compute-01', 'devices': env['report']})
    assert rc == 1 and 'snapshot_dir' in res['msg']
    rc, res = run({'root_provider': 'compute-01', 'devices': env['report'], 'layout': {'fpga': {}}},
                  check=True)
    assert rc == 1 and 'fpga' in res['msg']
    rc, res = run({'root_provider': 'nope', 'devices': env['report']}, check=True)
    assert rc == 1 and res['error']['status'] == 404
    rc, res = run({'root_provider': 'compute-01', 'state': 'rolled_back', 'snapshot_dir': env['snapdir']})
    assert rc == 1 and 'no snapshot of compute-01' in res['msg']


def _stored(path):
    with open(path) as handle:
        return json.load(handle)


def _without_times(record):
    return dict((k, v) for k, v in record.items() if k not in ('finished',))


@pytest.mark.parametrize('check', [True, False])
def test_record_option_stores_what_fleet_report_would(run, env, tmp_path, capsys, check):
    """The reshape task's record (option record) is the record fleet_report summarize=false stores
    for the same outcome: same tree before and after, same counts; in check mode too (a plan's report)."""
    from ansible_collections.placement.upgrade.plugins.modules import fleet_report
    dest = str(tmp_path / 'reports' / 'run-1')
    args = {'root_provider': 'compute-01', 'devices': env['report'], 'snapshot_dir': env['snapdir'],
            'run_id': 'run-1', 'record': {'dest': dest, 'node': 'host-01', 'started': 1000.5}}
    rc, res = run(args, check=check)
    assert rc == 0, res
    assert res['status'] == 'reshaped' and res['stored'] == dest + '/nodes/host-01.json'
    by_reshape = _stored(res['stored'])
    assert by_reshape['status'] == ('planned' if check else 'reshaped')
    assert by_reshape['started'] == 1000.5 and by_reshape['finished'] >= by_reshape['started']
    assert by_reshape['run_id'] == 'run-1' and by_reshape['node'] == 'host-01'
    assert by_reshape['touched'] is (not check)
    assert by_reshape['moved']['consumers'] == 3
    assert by_reshape['before'] != by_reshape['after']       # the plan applied, or the snapshot and now
    assert by_reshape['consumer_names']                       # the device report's guests, by name

    # the same outcome given to fleet_report (what the role's store task sends) -> the same record
    outcome = dict(res)
    outcome.pop('stored')
    given = {'node': 'host-01', 'provider': 'compute-01', 'status': res['status'], 'run_id': 'run-1',
             'reason': '', 'started': 1000.5, 'finished': by_reshape['finished'], 'nova_compute': {},
             'reshape': outcome, 'instances': env['report']['instances']}
    other = str(tmp_path / 'reports' / 'other')
    rc, stored = run_module_main(fleet_report.main, {
        'embedded_db': env['db'], 'dest': other, 'run_id': 'run-1', 'summarize': False, 'records': [given],
        'snapshot_dir': env['snapdir'], 'mode': 'plan' if check else 'apply'}, capsys)
    assert rc == 0, stored
    assert _without_times(_stored(stored['stored'][0])) == _without_times(by_reshape)


def test_record_option_refuses_another_runs_folder_and_stores_nothing_on_failure(run, env, tmp_path):
    dest = str(tmp_path / 'reports' / 'shared')
    args = {'root_provider': 'compute-01', 'devices': env['report'], 'snapshot_dir': env['snapdir'],
            'run_id': 'run-1', 'record': {'dest': dest, 'node': 'host-01'}}
    rc, res = run(args, check=True)
    assert rc == 0 and _stored(res['stored'])['started'] <= _stored(res['stored'])['finished']
    rc, res = run(dict(args, run_id='run-2', record={'dest': dest, 'node': 'host-02'}), check=True)
    assert rc == 1 and 'another run' in res['msg'], res
    # an unmapped consumer fails the reshape: no record (the role's rescue records the failure)
    stray = str(_uuid.uuid4())
    put(env['store'], stray, {env['root']: {'resources': {'VGPU': 1}}})
    bad = copy.deepcopy(env['report'])
    bad['instances'][stray] = {'name': 'instance-stray', 'mdevs': [], 'pci_addresses': []}
    rc, res = run(dict(args, run_id='run-1', devices=bad, record={'dest': dest, 'node': 'host-03'}))
    assert rc == 1 and 'stored' not in res, res
    assert sorted(os.listdir(os.path.join(dest, 'nodes'))) == ['host-01.json']


def test_record_option_reads_the_tree_no_more_after_the_reshape(run, env, tmp_path, monkeypatch):
    """The record is built from the tree the reshape's verification read (check mode: from the read
    the plan came from): storing it sends no request of its own."""
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import collect as report_data
    reads = []
    real = report_data._read_tree  # pylint: disable=protected-access

    def counting(*args, **kwargs):
        reads.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(report_data, '_read_tree', counting)
    dest = str(tmp_path / 'reports' / 'run-1')
    args = {'root_provider': 'compute-01', 'devices': env['report'], 'snapshot_dir': env['snapdir'],
            'run_id': 'run-1', 'record': {'dest': dest, 'node': 'host-01'}}
    for check in (True, False, False):                       # plan, reshape, then noop
        rc, res = run(args, check=check)
        assert rc == 0 and res['stored'], res
        stored = _stored(res['stored'])
        assert 'unread' not in stored and stored['after']['providers'], stored
    assert res['status'] == 'noop' and reads == []
