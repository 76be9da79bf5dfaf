# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Explicit move records (node/moves.py, issue 16) on the embedded store: the second front
door to the planner, ending in the discovery path's own reshape, verification and rollback."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import layout
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import moves
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import planner
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state

from test_reshaper_support import (
    child_named,
    comparable,
    consumers_by_name,
    make_provider,
    put,
    vgpu_on,
    Wrapper,
)

A = 'compute-01_pci_0000_84_00_0'
B = 'compute-01_pci_0000_85_00_0'


def two_gpu_moves(a=8, b=8, traits=None):
    out = []
    for name, units in ((A, a), (B, b)):
        rec = {'from_resource_provider': 'compute-01', 'to_resource_provider': name,
               'moved_resources': {'VGPU': units}}
        if traits is not None:
            rec['traits'] = list(traits)
        out.append(rec)
    return out


def split_of(node):
    """The split the device report says (instance 2 spans both GPUs)."""
    names = consumers_by_name(node['report'])
    return {names['instance-00000001']: {A: {'VGPU': 2}},
            names['instance-00000002']: {A: {'VGPU': 1}, B: {'VGPU': 1}},
            names['instance-00000003']: {B: {'VGPU': 1}}}


def test_split_over_two_new_children_reshaped_verified_rerun_noop(embedded_backend, node):
    backend = embedded_backend
    names = consumers_by_name(node['report'])
    result = reshaper.reshape_node(backend, 'compute-01', None, moves=two_gpu_moves(), consumers=split_of(node),
                                   snapshot_dir=node['snapdir'])
    assert result['status'] == 'reshaped' and result['changed'] is True
    assert result['verified'] is True, result['verification']
    assert result['msg'] == ('node compute-01: created 2 child(ren), changed the inventory of 3 provider(s), '
                             'moved 5 VGPU of 3 consumer(s); verification passed')
    a, b = child_named(backend, A), child_named(backend, B)
    assert a['uuid'] == layout.child_uuid(node['root'], A) and b['parent_provider_uuid'] == node['root']
    for child in (a, b):
        inv = backend.get_inventories(child['uuid'])['inventories']['VGPU']
        assert (inv['total'], inv['max_unit'], inv['reserved']) == (8, 8, 0)
    assert 'VGPU' not in backend.get_inventories(node['root'])['inventories']
    assert vgpu_on(backend, names['instance-00000001']) == {a['uuid']: 2}
    assert vgpu_on(backend, names['instance-00000002']) == {a['uuid']: 1, b['uuid']: 1}
    assert vgpu_on(backend, names['instance-00000003']) == {b['uuid']: 1}
    for consumer in node['consumers']:
        allocs = backend.get_allocations(consumer)['allocations']
        assert allocs[node['pool']]['resources'] == {'DISK_GB': 20}
        assert allocs[node['root']]['resources'] == {'VCPU': 2, 'MEMORY_MB': 2048}
    assert result['plan']['moves'][0] == {'from': 'compute-01', 'to': A, 'resources': {'VGPU': 8}, 'traits': []}
    assert os.path.exists(result['snapshot'])

    again = reshaper.reshape_node(backend, 'compute-01', None, moves=two_gpu_moves(), consumers=split_of(node),
                                  snapshot_dir=node['snapdir'])
    assert again['status'] == 'noop' and again['changed'] is False
    assert again['warnings'] == [] and again['plan']['allocations'] == {}

    checked = reshaper.verify_node(backend, 'compute-01', None, moves=two_gpu_moves(), consumers=split_of(node),
                                   snapshot_dir=node['snapdir'])
    assert checked['verified'] is True, checked['verification']


def test_verification_checks_the_tree_against_the_records(embedded_backend, node):
    backend = embedded_backend
    names = consumers_by_name(node['report'])
    reshaper.reshape_node(backend, 'compute-01', None, moves=two_gpu_moves(), consumers=split_of(node),
                          snapshot_dir=node['snapdir'])
    a, b = child_named(backend, A), child_named(backend, B)
    one = names['instance-00000001']
    body = backend.get_allocations(one)
    allocs = copy.deepcopy(body['allocations'])
    allocs.pop(a['uuid'])
    allocs[b['uuid']] = {'resources': {'VGPU': 2}}
    put(backend, one, dict((rp, {'resources': e['resources']}) for rp, e in allocs.items()))
    checked = reshaper.verify_node(backend, 'compute-01', None, moves=two_gpu_moves(), consumers=split_of(node))
    assert checked['verified'] is False
    failed = [c for c in checked['verification'] if not c['passed']]
    assert [c['check'] for c in failed] == ['allocations_on_owned_devices']
    assert one in failed[0]['detail']
    # records that do not describe the tree as it is are refused, not verified
    with pytest.raises(moves.MovesError) as err:
        reshaper.verify_node(backend, 'compute-01', None, moves=two_gpu_moves(4, 12), consumers=split_of(node))
    assert 'has no VGPU inventory to move' in err.value.detail and 'holds 8' in err.value.detail


def test_undecidable_split_fails_naming_the_consumers_and_changes_nothing(embedded_backend, node):
    backend = embedded_backend
    before = comparable(provider_tree_state(backend, node['root']))
    with pytest.raises(planner.PlanError) as err:
        reshaper.reshape_node(backend, 'compute-01', None, moves=two_gpu_moves(), snapshot_dir=node['snapdir'])
    for consumer in node['consumers']:
        assert consumer in err.value.detail
    assert sorted(err.value.consumers) == sorted(node['consumers'])
    assert 'VGPU of compute-01 over %s, %s' % (A, B) in err.value.detail
    assert 'ownership_policy: pack' in err.value.detail and 'Nothing was changed' in err.value.detail
    assert comparable(provider_tree_state(backend, node['root'])) == before
    assert not backend.list_providers(name=A)
    # a partial split names only the consumers it leaves undecided
    split = split_of(node)
    left = sorted(split)[0]
    split.pop(left)
    with pytest.raises(planner.PlanError) as err:
        reshaper.reshape_node(backend, 'compute-01', None, moves=two_gpu_moves(), consumers=split,
                              snapshot_dir=node['snapdir'])
    assert err.value.consumers == [left]
    assert comparable(provider_tree_state(backend, node['root'])) == before


def test_pack_packs_with_the_planners_rule(embedded_backend, node):
    backend = embedded_backend
    result = reshaper.reshape_node(backend, 'compute-01', None, moves=two_gpu_moves(), policy='pack',
                                   snapshot_dir=node['snapdir'])
    assert result['verified'] is True, result['verification']
    a = child_named(backend, A)
    # first fit over the targets sorted by name: every consumer fits whole on A
    for consumer, vgpus in node['consumers'].items():
        assert vgpu_on(backend, consumer) == {a['uuid']: vgpus}
        assert result['plan']['assignments'][consumer]['VGPU']['how'] == 'pack'


def test_pack_keeps_a_given_split(embedded_backend, node):
    backend = embedded_backend
    names = consumers_by_name(node['report'])
    spans = names['instance-00000002']
    result = reshaper.reshape_node(backend, 'compute-01', None, moves=two_gpu_moves(), policy='pack',
                                   consumers={spans: {B: {'VGPU': 2}}}, snapshot_dir=node['snapdir'])
    assert result['verified'] is True, result['verification']
    b = child_named(backend, B)
    assert vgpu_on(backend, spans) == {b['uuid']: 2}
    assert result['plan']['assignments'][spans]['VGPU']['how'] == 'ownership'


def test_custom_resource_class_moved_to_one_target(embedded_backend, tmp_path):
    backend = embedded_backend
    backend.ensure_resource_class('CUSTOM_FOO')
    root = make_provider(backend, 'cn-foo', {'VCPU': {'total': 8}, 'CUSTOM_FOO': {'total': 10, 'max_unit': 4}})
    consumer = '6a1f3f52-3a4b-4fd0-9a0e-4f4a1d8b0c11'
    put(backend, consumer, {root: {'resources': {'VCPU': 1, 'CUSTOM_FOO': 3}}})
    records = [{'from_resource_provider': root, 'to_resource_provider': 'cn-foo_accel',
                'moved_resources': {'CUSTOM_FOO': 10}, 'traits': ['CUSTOM_ACCEL']}]
    result = reshaper.reshape_node(backend, 'cn-foo', None, moves=records, snapshot_dir=str(tmp_path / 'snaps'))
    assert result['verified'] is True, result['verification']
    child = child_named(backend, 'cn-foo_accel')
    inv = backend.get_inventories(child['uuid'])['inventories']
    assert list(inv) == ['CUSTOM_FOO'] and inv['CUSTOM_FOO']['total'] == 10 and inv['CUSTOM_FOO']['max_unit'] == 4
    assert backend.get_provider_traits(child['uuid'])['traits'] == ['CUSTOM_ACCEL']
    assert backend.get_allocations(consumer)['allocations'][child['uuid']]['resources'] == {'CUSTOM_FOO': 3}
    assert backend.get_allocations(consumer)['allocations'][root]['resources'] == {'VCPU': 1}
    assert result['plan']['ensure']['traits'] == ['CUSTOM_ACCEL']
    assert result['plan']['assignments'][consumer]['CUSTOM_FOO'] == {
        'how': 'ownership', 'amount': 3, 'to': {'cn-foo_accel': 3}}


def _bad(node, backend):
    """(records, consumers, message part) of records that must be refused."""
    other = make_provider(backend, 'compute-02', {'VGPU': {'total': 4}})
    extra = make_provider(backend, 'compute-01_extra', parent=node['root'])
    names = consumers_by_name(node['report'])
    one = names['instance-00000001']

    def rec(**kw):
        out = {'from_resource_provider': 'compute-01', 'to_resource_provider': A, 'moved_resources': {'VGPU': 16}}
        out.update(kw)
        return [out]
    split = split_of(node)
    return [
        ('unknown from', rec(from_resource_provider='nope'), None,
         'moves[0].from_resource_provider nope: unknown provider (no provider has that name)'),
        ('from outside', rec(from_resource_provider='compute-02'), None,
         'moves[0].from_resource_provider compute-02 is not in the tree of compute-01: it is provider compute-02 (%s), '
         'the root of another tree' % other),
        ('from a child', rec(from_resource_provider=extra), None,
         'moves[0].from_resource_provider %s is a child provider of compute-01' % extra),
        ('to another tree', rec(to_resource_provider='compute-02'), None,
         'moves[0].to_resource_provider compute-02 is not in the tree of compute-01'),
        ('to the root', rec(to_resource_provider=node['root']), None, 'is the root provider itself'),
        ('to a missing uuid', rec(to_resource_provider='11111111-2222-3333-4444-555555555555'), None,
         'no provider has that uuid'),
        ('more than the source', two_gpu_moves(9, 8), split, 'move 17 VGPU off compute-01 (9 to %s, 8 to %s): more '
         'than the source has (total 16)' % (A, B)),
        ('less than the source', two_gpu_moves(4, 4), split, 'a reshape moves a class off the root whole; say where '
         'the other 8 go'),
        ('zero', rec(moved_resources={'VGPU': 0}), None, 'moves[0].moved_resources.VGPU: units must be an integer > 0, got 0'),
        ('negative', rec(moved_resources={'VGPU': -2}), None, 'units must be an integer > 0, got -2'),
        ('not an integer', rec(moved_resources={'VGPU': '4'}), None, "units must be an integer > 0, got '4'"),
        ('unknown class', rec(moved_resources={'FOO': 16}), None,
         "moves[0].moved_resources: 'FOO' is not a resource class Placement knows"),
        ('lower case class', rec(moved_resources={'vgpu': 16}), None, "'vgpu' is not a resource class"),
        ('class not on the root', rec(moved_resources={'CUSTOM_BAR': 2}), None,
         'moves[0]: the root compute-01 has no CUSTOM_BAR inventory to move (2 to %s)' % A),
        ('unknown key', rec(moved_resource={'VGPU': 1}), None, "moves[0]: unknown key(s) moved_resource"),
        ('no target', rec(to_resource_provider=''), None, 'moves[0].to_resource_provider: a provider name or uuid is required'),
        ('bad trait', rec(traits=['owner']), None, "moves[0].traits: 'owner' is not a trait"),
        ('twice', two_gpu_moves() + [{'from_resource_provider': 'compute-01', 'to_resource_provider': A,
                                      'moved_resources': {'VGPU': 1}}], split,
         'moves[2]: VGPU to %s is already moved by moves[0]' % A),
        ('empty', [], None, 'moves must be a non-empty list'),
        ('split to a non-target', two_gpu_moves(), dict(split, **{one: {'compute-01_extra': {'VGPU': 2}}}),
         'consumers.%s.compute-01_extra: not a to_resource_provider of the move records' % one),
        ('split sums wrong', two_gpu_moves(), dict(split, **{one: {A: {'VGPU': 1}}}),
         'consumers.%s: the split gives 1 VGPU (1 to %s) but the consumer holds 2 on compute-01' % (one, A)),
        ('split over capacity', two_gpu_moves(1, 15), split,
         'consumers: the split puts 3 VGPU on %s but its capacity is 1' % A),
        ('split of a class not moved', two_gpu_moves(), dict(split, **{one: {A: {'VGPU': 2, 'VCPU': 2}}}),
         'consumers.%s.%s.VCPU: VCPU is not moved by the records' % (one, A)),
        ('split not a uuid', two_gpu_moves(), dict(split, **{'instance-1': {A: {'VGPU': 2}}}),
         "consumers: 'instance-1' is not a consumer uuid"),
    ]


def test_bad_records_give_clear_messages_and_change_nothing(embedded_backend, node):
    backend = embedded_backend
    cases = _bad(node, backend)
    before = comparable(provider_tree_state(backend, node['root']))
    seen = []
    for what, records, consumers, message in cases:
        with pytest.raises(moves.MovesError) as err:
            reshaper.reshape_node(backend, 'compute-01', None, moves=records, consumers=consumers,
                                  snapshot_dir=node['snapdir'])
        assert message in err.value.detail, (what, err.value.detail)
        assert 'Nothing was changed.' in err.value.detail, what
        assert err.value.code == 'placement_upgrade.moves'
        seen.append(what)
        with pytest.raises(moves.MovesError):
            reshaper.reshape_node(backend, 'compute-01', None, moves=records, consumers=consumers, check_mode=True)
    assert len(seen) == len(cases)
    assert comparable(provider_tree_state(backend, node['root'])) == before
    assert not os.path.exists(node['snapdir']) or not os.listdir(node['snapdir'])


def test_check_mode_predicts_the_reshape(embedded_backend, node):
    backend = embedded_backend
    before = comparable(provider_tree_state(backend, node['root']))
    dry = reshaper.reshape_node(backend, 'compute-01', None, moves=two_gpu_moves(), consumers=split_of(node),
                                check_mode=True)
    assert dry['status'] == 'reshaped' and dry['changed'] is True and dry['snapshot'] is None
    assert dry['msg'] == ('check mode: node compute-01: 2 child(ren) to create, inventory of 3 provider(s) to '
                          'change, 5 VGPU of 3 consumer(s) to move')
    assert set(dry['diff']['after']['providers']) == {'compute-01', A, B}
    assert comparable(provider_tree_state(backend, node['root'])) == before
    applied = reshaper.reshape_node(backend, 'compute-01', None, moves=two_gpu_moves(), consumers=split_of(node),
                                    snapshot_dir=node['snapdir'])
    predicted = dict((c['name'], c['uuid']) for c in dry['plan']['create_children'])
    assert predicted == {A: child_named(backend, A)['uuid'], B: child_named(backend, B)['uuid']}
    assert applied['plan']['allocations'] == dry['plan']['allocations']
    assert applied['plan']['assignments'] == dry['plan']['assignments']
    assert applied['diff']['after']['consumers'] == dry['diff']['after']['consumers']


def test_rollback_restores_the_tree(embedded_backend, node):
    backend = embedded_backend
    original = comparable(provider_tree_state(backend, node['root']))
    reshaper.reshape_node(backend, 'compute-01', None, moves=two_gpu_moves(), consumers=split_of(node),
                          snapshot_dir=node['snapdir'])
    back = reshaper.rollback_node(backend, 'compute-01', snapshot_dir=node['snapdir'], remove_children=True)
    assert back['status'] == 'rolled_back' and back['verified'] is True, back['verification']
    assert comparable(provider_tree_state(backend, node['root'])) == original
    assert not backend.list_providers(name=A) and not backend.list_providers(name=B)


def _without_generations(body):
    body = copy.deepcopy(body)
    for entry in body['inventories'].values():
        entry.pop('resource_provider_generation')
    for entry in body['allocations'].values():
        entry.pop('consumer_generation')
    return body


def test_moves_equal_to_discovery_give_the_discovery_plan_and_reshape_body(embedded_backend, node):
    """Records saying what discovery finds on the node plan exactly what discovery plans, and send
    the same POST /reshaper body (generations aside: the second run follows a rollback)."""
    records = two_gpu_moves(traits=['OWNER_NOVA'])
    state = provider_tree_state(embedded_backend, node['root'])
    by_devices = planner.plan_from_devices(state, node['root'], node['report'])
    by_moves = moves.plan_from_moves(state, node['root'], records, consumers=split_of(node))
    for key in ('status', 'root', 'layout_classes', 'moved_classes', 'create_children', 'set_traits', 'ensure',
                'providers', 'inventory_changes', 'allocations', 'assignments', 'moved', 'diff'):
        assert by_moves[key] == by_devices[key], key
    assert [dict(c, kind=None, device=None) for c in by_moves['children']] == \
        [dict(c, kind=None, device=None) for c in by_devices['children']]

    spy = Wrapper(embedded_backend)
    first = reshaper.reshape_node(spy, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert first['verified'] is True
    reshaper.rollback_node(embedded_backend, 'compute-01', snapshot_dir=node['snapdir'], remove_children=True)
    second = reshaper.reshape_node(spy, 'compute-01', None, moves=records, consumers=split_of(node),
                                   snapshot_dir=node['snapdir'])
    assert second['verified'] is True
    assert len(spy.reshape_calls) == 2
    assert _without_generations(spy.reshape_calls[0]) == _without_generations(spy.reshape_calls[1])
    assert set(spy.reshape_calls[1]['inventories']) == {node['root'], layout.child_uuid(node['root'], A),
                                                        layout.child_uuid(node['root'], B)}


def test_an_existing_child_is_a_target_and_keeps_its_other_inventory(embedded_backend, node):
    backend = embedded_backend
    backend.ensure_resource_class('CUSTOM_NIC')
    backend.ensure_trait('CUSTOM_CARD')
    existing = make_provider(backend, 'compute-01_card', {'CUSTOM_NIC': {'total': 2}}, traits=['CUSTOM_CARD'],
                             parent=node['root'])
    records = [{'from_resource_provider': node['root'], 'to_resource_provider': existing,
                'moved_resources': {'VGPU': 16}, 'traits': ['OWNER_NOVA']}]
    result = reshaper.reshape_node(backend, 'compute-01', None, moves=records, snapshot_dir=node['snapdir'])
    assert result['verified'] is True, result['verification']
    assert result['plan']['create_children'] == []
    inv = backend.get_inventories(existing)['inventories']
    assert sorted(inv) == ['CUSTOM_NIC', 'VGPU'] and inv['CUSTOM_NIC']['total'] == 2 and inv['VGPU']['total'] == 16
    assert backend.get_provider_traits(existing)['traits'] == ['CUSTOM_CARD', 'OWNER_NOVA']
    for consumer, vgpus in node['consumers'].items():
        assert vgpu_on(backend, consumer) == {existing: vgpus}
    # the records now describe the node: a rerun is a no-op, verification passes
    again = reshaper.reshape_node(backend, 'compute-01', None, moves=records, snapshot_dir=node['snapdir'])
    assert again['status'] == 'noop'
    assert reshaper.verify_node(backend, 'compute-01', None, moves=records)['verified'] is True
