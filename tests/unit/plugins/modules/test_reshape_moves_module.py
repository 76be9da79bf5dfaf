# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reshape module's moves / consumers options (explicit move records, issue 16) on an embedded_db."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
from ansible_collections.placement.upgrade.plugins.modules import reshape

from module_runner import run_module_main
from test_reshaper_support import comparable, consumers_by_name, flat_gpu_node, gpu_report, vgpu_on

A = 'compute-01_gpu0'
B = 'compute-01_gpu1'
MOVES = [{'from_resource_provider': 'compute-01', 'to_resource_provider': A, 'moved_resources': {'VGPU': 8}},
         {'from_resource_provider': 'compute-01', 'to_resource_provider': B, 'moved_resources': {'VGPU': 8},
          'traits': ['CUSTOM_SECOND']}]


@pytest.fixture
def env(tmp_path):
    db = str(tmp_path / 'placement.db')
    store = EmbeddedBackend(db)
    report = gpu_report(tmp_path / 'host', 'compute-01')
    node = flat_gpu_node(store, 'compute-01', report)
    names = consumers_by_name(report)
    node.update(store=store, db=db, report=report, snapdir=str(tmp_path / 'snaps'),
                split={names['instance-00000001']: {A: {'VGPU': 2}},
                       names['instance-00000002']: {A: {'VGPU': 1}, B: {'VGPU': 1}},
                       names['instance-00000003']: {B: {'VGPU': 1}}})
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


def test_moves_check_mode_apply_rerun_verify_rollback(run, env):
    store = env['store']
    before = comparable(provider_tree_state(store, env['root']))
    args = {'root_provider': 'compute-01', 'moves': MOVES, 'consumers': env['split'], 'snapshot_dir': env['snapdir']}
    rc, dry = run(args, check=True, diff=True)
    assert rc == 0, dry
    assert dry['changed'] is True and dry['status'] == 'reshaped'
    assert set(dry['diff']['after']['providers']) == {'compute-01', A, B}
    assert dry['plan']['moves'][1] == {'from': 'compute-01', 'to': B, 'resources': {'VGPU': 8},
                                       'traits': ['CUSTOM_SECOND']}
    assert comparable(provider_tree_state(store, env['root'])) == before

    rc, res = run(args, diff=True)
    assert rc == 0, res
    assert res['changed'] is True and res['verified'] is True, res['verification']
    assert res['plan']['allocations'] == dry['plan']['allocations']
    a, b = store.list_providers(name=A)[0], store.list_providers(name=B)[0]
    for consumer, split in env['split'].items():
        want = dict((a['uuid'] if t == A else b['uuid'], n['VGPU']) for t, n in split.items())
        assert vgpu_on(store, consumer) == want
    assert store.get_provider_traits(b['uuid'])['traits'] == ['CUSTOM_SECOND']

    rc, again = run(args)
    assert rc == 0 and again['changed'] is False and again['status'] == 'noop', again
    rc, checked = run({'root_provider': 'compute-01', 'moves': MOVES, 'consumers': env['split'],
                       'state': 'verified', 'snapshot_dir': env['snapdir']})
    assert rc == 0 and checked['verified'] is True, checked
    rc, back = run({'root_provider': 'compute-01', 'state': 'rolled_back', 'snapshot_dir': env['snapdir'],
                    'remove_children': True})
    assert rc == 0 and back['verified'] is True, back
    assert comparable(provider_tree_state(store, env['root'])) == before


def test_undecided_split_fails_naming_consumers(run, env):
    store = env['store']
    before = comparable(provider_tree_state(store, env['root']))
    rc, res = run({'root_provider': 'compute-01', 'moves': MOVES, 'snapshot_dir': env['snapdir']})
    assert rc == 1 and res['failed'] is True
    for consumer in env['split']:
        assert consumer in res['msg']
    assert 'Traceback' not in res['msg']
    assert comparable(provider_tree_state(store, env['root'])) == before
    rc, packed = run({'root_provider': 'compute-01', 'moves': MOVES, 'ownership_policy': 'pack',
                      'snapshot_dir': env['snapdir']})
    assert rc == 0 and packed['verified'] is True, packed


@pytest.mark.parametrize('args, message', [
    ({'moves': MOVES, 'devices': {'gpus': []}}, 'mutually exclusive'),
    ({}, 'devices, moves'),
    ({'moves': MOVES, 'state': 'verified', 'devices': {'gpus': []}}, 'mutually exclusive'),
    ({'devices': {'gpus': []}, 'consumers': {}}, 'consumers'),
    ({'moves': [{'from_resource_provider': 'compute-01', 'moved_resources': {'VGPU': 16}}]}, 'to_resource_provider'),
    ({'moves': [dict(MOVES[0], moved_resources={'VGPU': 20})]}, 'more than the source has'),
])
def test_option_rules(run, env, args, message):
    args = dict(args, root_provider='compute-01', snapshot_dir=env['snapdir'])
    rc, res = run(args)
    assert rc == 1 and res['failed'] is True
    assert message in res['msg'], res['msg']
