# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tree.ProviderTree: the one view of a read tree that the planner and verification share."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors, tree
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import planner, verify
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report

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


def test_lenient_inventory_shows_what_it_can_of_a_malformed_record():
    bad = {'VCPU': {'reserved': 1, 'allocation_ratio': None, 'junk': 'x'},     # no total: refused when strict
           'VGPU': {'total': 'four', 'max_unit': 2},                           # not an integer: refused when strict
           'DISK_GB': 'not a record'}
    t = tree.ProviderTree({'providers': {ROOT: {'name': 'cn', 'inventories': bad}}})
    with pytest.raises(errors.BadRequest):
        t.inventory(ROOT)
    lenient = t.inventory(ROOT, strict=False)
    assert lenient == {
        'VCPU': {'total': 0, 'reserved': 1, 'min_unit': 1, 'max_unit': 2147483647, 'step_size': 1, 'allocation_ratio': 1.0},
        'VGPU': {'total': 'four', 'reserved': 0, 'min_unit': 1, 'max_unit': 2, 'step_size': 1, 'allocation_ratio': 1.0},
        'DISK_GB': {'total': 0, 'reserved': 0, 'min_unit': 1, 'max_unit': 2147483647, 'step_size': 1,
                    'allocation_ratio': 1.0}}
    assert tree.lenient_inventories(bad) == lenient and tree.lenient_inventories(None) == {}
    # a good record reads the same both ways; the lenient reading converts nothing (a whole ratio stays an int)
    good = tree.ProviderTree(_state())
    assert good.inventory(CA, strict=False) == good.inventory(CA)
    assert tree.lenient_inventories({'X': {'total': 2, 'allocation_ratio': 2}})['X']['allocation_ratio'] == 2


def test_lenient_allocations_read_the_body_or_its_bare_map_and_skip_what_is_not_a_mapping():
    state = {'providers': {}, 'allocations': {
        I1: {'allocations': {ROOT: {'resources': {'VCPU': 2}, 'generation': 1}, CA: 'junk', CB: {'generation': 2},
                             POOL: {'resources': {}}}},
        I2: {ROOT: {'resources': {'VCPU': 1}}},          # the bare allocations map
        'none': {'allocations': None}, 'junk': 'junk'}}
    t = tree.ProviderTree(state)
    assert t.allocations(I1, strict=False) == {ROOT: {'resources': {'VCPU': 2}}}
    assert t.allocations(I2, strict=False) == {ROOT: {'resources': {'VCPU': 1}}}
    assert t.allocations(I2) == {}                       # strict: the GET body's 'allocations' only
    assert t.allocations('none', strict=False) == {} and t.allocations('junk', strict=False) == {}
    assert t.allocations('gone', strict=False) == {}
    assert tree.lenient_allocations(state['allocations'][I1]) == t.allocations(I1, strict=False)


def test_used_is_the_usage_read_else_the_allocations_summed():
    t = tree.ProviderTree(_state())
    assert t.used(CA, 'VGPU') == 3                       # the usage Placement reported
    assert t.used(ROOT, 'VCPU') == 3
    state = _state()
    for prov in state['providers'].values():
        prov.pop('usages')
    bare = tree.ProviderTree(state)                      # a tree kept without its usages
    assert bare.used(CA, 'VGPU') == 3 and bare.used(ROOT, 'VCPU') == 3
    assert bare.used(POOL, 'DISK_GB') == 10 and bare.used(CB, 'VGPU') == 0


def test_the_report_walks_its_normalized_trees_through_the_provider_tree():
    state = _state()
    state['providers'][CA]['usages'] = {}            # VGPU used: read from the allocations
    normalized = report.normalize_tree(state)
    view = report.provider_tree(normalized)
    assert report.provider_tree(view) is view
    t = tree.ProviderTree(state)
    assert view.depth_first() == t.depth_first() and view.roots == t.roots
    assert view.children(ROOT) == t.children(ROOT) == [CB, CA]
    assert view.used(CA, 'VGPU') == 3 and view.used(ROOT, 'VCPU') == 3 and view.used(POOL, 'DISK_GB') == 10
    assert normalized['providers'][ROOT]['inventories'] == t.inventory(ROOT, strict=False)
    assert normalized['allocations'][I2] == {ROOT: {'VCPU': 1}, CA: {'VGPU': 1}}
    assert report.normalize_tree(None) == {'providers': {}, 'allocations': {}}
