# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Explicit move records (issue 16) through the reshape module against the REAL Placement on
127.0.0.1, and the same records on the embedded store: the same result."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
from ansible_collections.placement.upgrade.plugins.modules import reshape

from module_runner import run_module_main
from test_reshaper_support import comparable, consumers_by_name, flat_gpu_node, gpu_report

pytestmark = pytest.mark.real


def _records(name):
    a, b = name + '_gpu0', name + '_gpu1'
    moves = [{'from_resource_provider': name, 'to_resource_provider': a, 'moved_resources': {'VGPU': 8},
              'traits': ['OWNER_NOVA']},
             {'from_resource_provider': name, 'to_resource_provider': b, 'moved_resources': {'VGPU': 8},
              'traits': ['OWNER_NOVA']}]
    return moves, a, b


def _split(report, a, b):
    names = consumers_by_name(report)
    return {names['instance-00000001']: {a: {'VGPU': 2}},
            names['instance-00000002']: {a: {'VGPU': 1}, b: {'VGPU': 1}},
            names['instance-00000003']: {b: {'VGPU': 1}}}


def _by_name(state, root_name, pool):
    """The tree with provider names for uuids (the root's name replaced by ROOT, the sharing pool
    outside the tree by POOL), without generations."""
    view = comparable(state)
    names = dict((u, p['name'].replace(root_name, 'ROOT', 1)) for u, p in view['providers'].items())
    names[pool] = 'POOL'
    providers = dict((names[u], dict(p, name=names[u], parent_provider_uuid=names.get(p['parent_provider_uuid']),
                                     aggregates=len(p['aggregates'])))
                     for u, p in view['providers'].items())
    allocations = dict((c, dict((names.get(rp, rp), e) for rp, e in body['allocations'].items()))
                       for c, body in view['allocations'].items())
    return {'providers': providers, 'allocations': allocations}


def _plan_by_name(plan, root_name):
    return {'assignments': plan['assignments'], 'moved': plan['moved'],
            'children': [(c['name'].replace(root_name, 'ROOT', 1), c['inventories'], c['traits'], c['exists'])
                         for c in plan['children']]}


@pytest.mark.slow
def test_split_through_the_module_on_the_real_placement_equals_the_embedded(placement_server, rest_backend,
                                                                            unique_name, tmp_path, capsys):
    name = unique_name('cn')
    report = gpu_report(tmp_path / 'host', name)
    real = flat_gpu_node(rest_backend, name, report)
    moves, a, b = _records(name)
    split = _split(report, a, b)
    original = comparable(provider_tree_state(rest_backend, real['root']))
    args = dict(placement_server.module_auth(), root_provider=name, moves=moves, consumers=split,
                snapshot_dir=str(tmp_path / 'snaps-real'), nova_migrations='never')

    rc, dry = run_module_main(reshape.main, args, capsys, check=True, diff=True)
    assert rc == 0, dry
    assert dry['status'] == 'reshaped' and dry['changed'] is True and dry['snapshot'] is None
    assert comparable(provider_tree_state(rest_backend, real['root'])) == original

    rc, done = run_module_main(reshape.main, args, capsys, diff=True)
    assert rc == 0, done
    assert done['status'] == 'reshaped' and done['verified'] is True, done['verification']
    assert done['plan']['allocations'] == dry['plan']['allocations']
    after_real = provider_tree_state(rest_backend, real['root'])
    child_a = rest_backend.list_providers(name=a)[0]
    names = consumers_by_name(report)
    assert after_real['allocations'][names['instance-00000002']]['allocations'][child_a['uuid']]['resources'] == {'VGPU': 1}

    rc, again = run_module_main(reshape.main, args, capsys)
    assert rc == 0 and again['status'] == 'noop' and again['changed'] is False, again
    rc, checked = run_module_main(reshape.main, dict(args, state='verified'), capsys)
    assert rc == 0 and checked['verified'] is True, checked

    # the same node and records on the embedded store: the same plan and the same tree
    store = EmbeddedBackend(str(tmp_path / 'placement.db'))
    try:
        local_node = flat_gpu_node(store, name, report)
        rc, local = run_module_main(reshape.main, {'embedded_db': str(tmp_path / 'placement.db'), 'root_provider': name,
                                                   'moves': moves, 'consumers': split,
                                                   'snapshot_dir': str(tmp_path / 'snaps-local')}, capsys)
        assert rc == 0 and local['verified'] is True, local
        assert _plan_by_name(local['plan'], name) == _plan_by_name(done['plan'], name)
        local_root = store.list_providers(name=name)[0]['uuid']
        assert _by_name(provider_tree_state(store, local_root), name, local_node['pool']) == \
            _by_name(after_real, name, real['pool'])
    finally:
        store.close()

    rc, back = run_module_main(reshape.main, dict(placement_server.module_auth(), root_provider=name,
                                                  state='rolled_back', snapshot_dir=str(tmp_path / 'snaps-real'),
                                                  remove_children=True), capsys)
    assert rc == 0 and back['verified'] is True, back
    assert comparable(provider_tree_state(rest_backend, real['root'])) == original


def test_undecided_split_on_the_real_placement_names_the_consumers(placement_server, rest_backend, unique_name,
                                                                   tmp_path, capsys):
    name = unique_name('cn')
    report = gpu_report(tmp_path / 'host', name)
    real = flat_gpu_node(rest_backend, name, report)
    moves, _a, _b = _records(name)
    original = comparable(provider_tree_state(rest_backend, real['root']))
    rc, res = run_module_main(reshape.main, dict(placement_server.module_auth(), root_provider=name, moves=moves,
                                                 snapshot_dir=str(tmp_path / 'snaps'), nova_migrations='never'), capsys)
    assert rc == 1 and res['failed'] is True
    for consumer in real['consumers']:
        assert consumer in res['msg']
    assert comparable(provider_tree_state(rest_backend, real['root'])) == original
