# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Inventory values Placement 16.0.0 accepts although no allocation can use them, and ratios it
refuses with a message about something else (issue 12, item 8).

Checked against the real service (PUT /resource_providers/{u}/inventories at 1.39):
min_unit 8 / max_unit 2 -> 200; allocation_ratio 0 and -0.0001 (capacity 0) -> 200;
allocation_ratio -1.0 -> 400 placement.undefined_code "The reserved value is greater than total.";
NaN and -Infinity -> 500 "cannot convert float NaN/infinity to integer"; Infinity -> 400 (schema).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import uuid

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
from ansible_collections.placement.upgrade.plugins.modules import inventory as inv_module

CN = '22222222-2222-4222-8222-222222222222'


@pytest.fixture
def cn(store):
    store.create_provider('cn1', uuid=CN)
    return CN


def _warnings(out):
    return json.dumps(out.get('warnings', []))


def _dump(store):
    return (store.get_provider(CN), store.get_inventories(CN), store.get_usages(CN))


def test_core_keeps_placement_min_unit_above_max_unit(store, cn):
    store.set_inventories(cn, 0, {'VCPU': {'total': 16, 'min_unit': 8, 'max_unit': 2}})
    assert store.get_inventories(cn)['inventories']['VCPU']['min_unit'] == 8


def test_core_keeps_placement_total_below_usage(store, cn):
    store.set_inventories(cn, 0, {'VCPU': {'total': 16}})
    store.put_allocations(str(uuid.uuid4()), {
        'allocations': {cn: {'resources': {'VCPU': 10}}}, 'project_id': 'p', 'user_id': 'u',
        'consumer_generation': None, 'consumer_type': 'INSTANCE'})
    store.set_inventories(cn, 2, {'VCPU': {'total': 4}})
    assert store.get_inventories(cn)['inventories']['VCPU']['total'] == 4


def test_core_negative_ratio_is_placements_400_naming_allocation_ratio(store, cn):
    with pytest.raises(errors.BadRequest) as info:
        store.set_inventories(cn, 0, {'VCPU': {'total': 16, 'allocation_ratio': -1.0}})
    assert info.value.status == 400 and info.value.code == errors.DEFAULT
    assert 'allocation_ratio -1.0 of VCPU is negative' in info.value.detail
    assert 'reserved value is greater' not in info.value.detail
    store.set_inventories(cn, 0, {'VCPU': {'total': 16, 'allocation_ratio': -0.0001}})   # capacity 0: accepted
    with pytest.raises(errors.BadRequest) as info:
        store.set_inventories(cn, 1, {'VCPU': {'total': 4, 'reserved': 5}})
    assert 'The reserved value is greater than total.' in info.value.detail


@pytest.mark.parametrize('ratio', [float('nan'), float('-inf')])
def test_core_nan_ratio_is_placements_500_naming_allocation_ratio(store, cn, ratio):
    with pytest.raises(errors.PlacementError) as info:
        store.set_inventories(cn, 0, {'VCPU': {'total': 16, 'allocation_ratio': ratio}})
    assert info.value.status == 500 and info.value.code == errors.DEFAULT
    assert 'allocation_ratio' in info.value.detail
    assert store.get_inventories(cn)['inventories'] == {}


def test_core_infinite_ratio_is_the_schema_400(store, cn):
    with pytest.raises(errors.BadRequest) as info:
        store.set_inventories(cn, 0, {'VCPU': {'total': 16, 'allocation_ratio': float('inf')}})
    assert 'allocation_ratio' in info.value.detail


def test_module_warns_min_unit_above_max_unit_and_writes_it(run_module, store, cn):
    rc, out = run_module(inv_module, {'resource_provider': 'cn1', 'resource_class': 'VCPU', 'total': 16,
                                      'min_unit': 8, 'max_unit': 2})
    assert rc == 0 and out['changed'] is True
    assert out['inventories']['VCPU']['min_unit'] == 8
    assert 'inventory of VCPU on cn1: min_unit 8 is greater than max_unit 2' in _warnings(out)


def test_module_warns_total_below_usage_and_writes_it(run_module, store, cn):
    store.set_inventories(cn, 0, {'VCPU': {'total': 16}})
    store.put_allocations(str(uuid.uuid4()), {
        'allocations': {cn: {'resources': {'VCPU': 10}}}, 'project_id': 'p', 'user_id': 'u',
        'consumer_generation': None, 'consumer_type': 'INSTANCE'})
    rc, out = run_module(inv_module, {'resource_provider': 'cn1', 'resource_class': 'VCPU', 'total': 4})
    assert rc == 0 and out['changed'] is True and out['inventories']['VCPU']['total'] == 4
    assert 'inventory of VCPU on cn1: capacity 4 ' in _warnings(out) and 'usage 10' in _warnings(out)


def test_module_warns_in_check_mode_too_and_not_for_sane_values(run_module, store, cn):
    rc, out = run_module(inv_module, {'resource_provider': 'cn1', 'resource_class': 'VCPU', 'total': 16,
                                      'allocation_ratio': 0.0}, check=True)
    assert rc == 0 and 'inventory of VCPU on cn1: allocation_ratio 0 gives a capacity of 0' in _warnings(out)
    rc, out = run_module(inv_module, {'resource_provider': 'cn1', 'resource_class': 'VCPU', 'total': 16})
    assert rc == 0 and _warnings(out) == '[]'


@pytest.mark.parametrize('ratio,words', [
    (-1.0, 'must be 0 or more, got -1.0'),
    (-0.0001, 'must be 0 or more'),
    ('nan', 'must be a finite number, got nan'),
    ('-inf', 'must be a finite number'),
    ('inf', 'must be a finite number'),
])
def test_module_refuses_bad_ratios_naming_allocation_ratio(run_module, store, cn, ratio, words):
    before = _dump(store)
    rc, out = run_module(inv_module, {'resource_provider': 'cn1', 'resource_class': 'VCPU', 'total': 16,
                                      'allocation_ratio': ratio})
    assert rc == 1 and out['failed'] is True
    assert 'allocation_ratio of VCPU on cn1' in out['msg'] and words in out['msg'], out['msg']
    assert 'Unexpected' not in out['msg'] and 'reserved (' not in out['msg']
    assert _dump(store) == before


def test_module_refuses_a_string_ratio_before_anything(run_module, store, cn):
    rc, out = run_module(inv_module, {'resource_provider': 'cn1', 'resource_class': 'VCPU', 'total': 16,
                                      'allocation_ratio': 'lots'})
    assert rc == 1 and 'allocation_ratio' in out['msg'] and 'Unexpected' not in out['msg']


@pytest.mark.parametrize('value', [float('inf'), 'inf', '-Infinity'])
def test_module_refuses_an_infinite_integer_without_a_traceback(run_module, store, cn, value):
    before = _dump(store)
    rc, out = run_module(inv_module, {'resource_provider': 'cn1', 'resource_class': 'VCPU', 'total': value})
    # ansible-core 2.19's check overflows and ours says so; 2.17 / 2.18 refuse it themselves
    assert rc == 1 and ('infinite number' in out['msg'] or 'unable to convert to int' in out['msg'])
    assert 'Traceback' not in json.dumps(out) and 'total' in out['msg']
    assert _dump(store) == before


@pytest.mark.parametrize('option', ['conflict_retries', 'api_timeout'])
def test_every_module_refuses_an_infinite_shared_integer_without_a_traceback(run_module, store, cn, option):
    from ansible_collections.placement.upgrade.plugins.modules import resource_provider_info
    rc, out = run_module(resource_provider_info, {'name': 'cn1', option: 'inf'})
    assert rc == 1 and ('infinite number' in out['msg'] or 'unable to convert to int' in out['msg']), out
    assert 'Traceback' not in json.dumps(out)
