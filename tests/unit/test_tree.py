# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tree.ProviderTree: the one view of a read tree that the planner and verification share."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors, planner, tree, verify

ROOT = 'a0000000-0000-4000-8000-000000000001'
CA = 'a0000000-0000-4000-8000-00000000000a'
CB = 'a0000000-0000-4000-8000-00000000000b'
GRAND = 'a0000000-0000-4000-8000-00000000000c'
OTHER = 'a0000000-0000-4000-8000-0000000000ff'
POOL = 'a0000000-0000-4000-8000-000000000002'
I1 = '11111111-1111-4111-8111-111111111111'
I2 = '22222222-2222-4222-8222-222222222222'


def _state():
    def prov(uuid, name, inventories, usages, parent=None, traits=(), aggregates=()):
        return {'uuid': uuid, 'name': name, 'generation': 3, 'parent_provider_uuid': parent,
                'inventories': inventories, 'usages': usages, 'traits': list(traits),
                'aggregates': list(aggregates)}
    return {
        'providers': {
            ROOT: prov(ROOT, 'cn', {'VCPU': {'total': 8, 'resource_provider_generation': 3}}, {'VCPU': 3},
                       traits=['HW_CPU_X86_AVX2', 'COMPUTE_NODE'], aggregates=['agg-2', 'agg-1']),
            # named so that by name cn_b sorts before cn_z although its uuid sorts after
            CA: prov(CA, 'cn_z', {'VGPU': {'total': 4, 'max_unit': 4}}, {'VGPU': 3}, parent=ROOT),
            CB: prov(CB, 'cn_b', {}, {}, parent=ROOT, traits=['CUSTOM_X']),
            GRAND: prov(GRAND, 'cn_b_0', {}, {}, parent=CB),
            OTHER: prov(OTHER, 'other', {}, {}),
        },
        'allocations': {
            I2: {'allocations': {ROOT: {'resources': {'VCPU': 1}}, CA: {'resources': {'VGPU': 1}},
                                 CB: {'resources': {}}},
                 'project_id': 'p', 'user_id': 'u', 'consumer_generation': 4},
            I1: {'allocations': {ROOT: {'resources': {'VCPU': 2}, 'generation': 3},
                                 CA: {'resources': {'VGPU': 2}}, POOL: {'resources': {'DISK_GB': 10}}}},
        },
    }


def test_lookups_by_uuid_and_name():
    t = tree.ProviderTree(_state())
    assert len(t) == 5 and CA in t and POOL not in t
    assert t.uuids() == sorted([ROOT, CA, CB, GRAND, OTHER])
    assert t.find('cn_z') == CA and t.find(CA) == CA and t.find('nope') is None
    assert t.uuid_of('cn_b') == CB and t.uuid_of(CB) is None
    assert t.by_name('cn') == (ROOT, t.get(ROOT)) and t.by_name('nope') is None
    assert t.get(POOL) is None and t.get(POOL, {}) == {}
    assert t.name(CA) == 'cn_z' and t.name(POOL) == POOL
    assert t.names()[GRAND] == 'cn_b_0'
    assert t.parent(CA) == ROOT and t.parent(ROOT) is None and t.generation(CA) == 3


def test_children_roots_and_depth_first_order_by_name():
    t = tree.ProviderTree(_state())
    assert t.children(ROOT) == [CB, CA]
    assert t.children(CA) == []
    assert t.roots == [ROOT, OTHER]
    assert t.depth_first() == [(ROOT, 0), (CB, 1), (GRAND, 2), (CA, 1), (OTHER, 0)]
    assert t.parents() == set([None, ROOT, CB])


def test_inventory_is_normalised_and_the_one_rule_of_planner_and_verification():
    t = tree.ProviderTree(_state())
    assert t.inventory(ROOT) == {'VCPU': {'total': 8, 'reserved': 0, 'min_unit': 1, 'max_unit': 2147483647,
                                          'step_size': 1, 'allocation_ratio': 1.0}}
    assert t.raw_inventory(ROOT) == {'VCPU': {'total': 8, 'resource_provider_generation': 3}}
    assert t.classes(CA) == ['VGPU'] and t.inventory(CB) == {} and t.inventory(POOL) == {}
    # a fresh dict each time: a caller changing it does not change the tree
    t.inventory(CA)['VGPU']['total'] = 99
    assert t.inventory(CA)['VGPU']['total'] == 4
    assert planner.norm_inventories is tree.norm_inventories
    with pytest.raises(errors.BadRequest):
        tree.ProviderTree({'providers': {ROOT: {'name': 'cn', 'inventories': {'VCPU': {'reserved': 1}}}}}).inventory(ROOT)


def test_usages_traits_aggregates():
    t = tree.ProviderTree(_state())
    assert t.usages(CA) == {'VGPU': 3} and t.usage(CA, 'VGPU') == 3 and t.usage(CA, 'VCPU') == 0
    assert t.usage(POOL, 'DISK_GB') == 0
    assert t.traits(ROOT) == ['COMPUTE_NODE', 'HW_CPU_X86_AVX2']
    assert t.has_traits(ROOT, ['COMPUTE_NODE']) and not t.has_traits(CB, ['COMPUTE_NODE'])
    assert t.aggregates(ROOT) == ['agg-1', 'agg-2'] and t.aggregates(CA) == []


def test_allocations_by_consumer():
    t = tree.ProviderTree(_state())
    assert t.consumers() == [I1, I2]
    assert t.has_consumer(I1) and not t.has_consumer(POOL)
    assert t.allocation_request(I2)['consumer_generation'] == 4
    # the PUT shape: generations and empty entries dropped, providers outside the tree kept
    assert t.allocations(I1) == {ROOT: {'resources': {'VCPU': 2}}, CA: {'resources': {'VGPU': 2}},
                                 POOL: {'resources': {'DISK_GB': 10}}}
    assert t.allocations(I2) == {ROOT: {'resources': {'VCPU': 1}}, CA: {'resources': {'VGPU': 1}}}
    assert t.allocations('gone') == {}
    assert list(t.all_allocations()) == [I1, I2]
    assert t.amount(I1, CA, 'VGPU') == 2 and t.amount(I1, CB, 'VGPU') == 0
    assert t.consumers_of(CA) == [I1, I2] and t.consumers_of(POOL, 'DISK_GB') == [I1]
    assert t.consumers_of(CB) == []
    assert t.allocated() == {ROOT: {'VCPU': 3}, CA: {'VGPU': 3}, POOL: {'DISK_GB': 10}}


def test_of_takes_a_tree_or_a_state_and_an_empty_state():
    state = _state()
    t = tree.ProviderTree.of(state)
    assert tree.ProviderTree.of(t) is t and t.state is state
    empty = tree.ProviderTree.of(None)
    assert len(empty) == 0 and empty.roots == [] and empty.consumers() == [] and empty.allocated() == {}


def test_planner_and_verification_accept_the_tree_or_the_state_alike():
    state = _state()
    t = tree.ProviderTree(copy.deepcopy(state))
    assert planner.find_root(t, ROOT) is t.get(ROOT)
    with pytest.raises(planner.PlanError):
        planner.find_root(t, CA)
    for check in (verify.usage_matches_allocations, verify.usage_within_capacity):
        assert check(t) == check(state)
    assert verify.consumer_totals_unchanged(t, state) == verify.consumer_totals_unchanged(state, state)
