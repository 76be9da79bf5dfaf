# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""allocation and allocation_info modules on a tmp embedded_db: the seed move rpA -> rpB."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.placement.upgrade.plugins.modules import allocation as alloc_module
from ansible_collections.placement.upgrade.plugins.modules import allocation_info as info_module

RP_A = 'aaaaaaaa-0000-4000-8000-000000000001'
RP_B = 'bbbbbbbb-0000-4000-8000-000000000002'
RP_C = 'cccccccc-0000-4000-8000-000000000003'
I1 = '11111111-aaaa-4aaa-8aaa-000000000001'
I2 = '22222222-aaaa-4aaa-8aaa-000000000002'
PROJECT = '3f9c1b2e5a7d4c8e9f0a1b2c3d4e5f60'
USER = '9a8b7c6d5e4f40312a1b2c3d4e5f6a7b'


@pytest.fixture
def seed(store):
    """rpA and rpB (compute, 8 VCPU / 8192 MB each), rpC (shared DISK_GB); i1 on rpA + rpC."""
    for name, rp in (('rpA', RP_A), ('rpB', RP_B), ('rpC', RP_C)):
        store.create_provider(name, uuid=rp)
    for rp in (RP_A, RP_B):
        store.set_inventories(rp, 0, {'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 8192, 'step_size': 512}})
    store.set_inventories(RP_C, 0, {'DISK_GB': {'total': 100}})
    store.put_allocations(I1, {
        'allocations': {RP_A: {'resources': {'VCPU': 2, 'MEMORY_MB': 2048}},
                        RP_C: {'resources': {'DISK_GB': 20}}},
        'project_id': PROJECT, 'user_id': USER, 'consumer_generation': None, 'consumer_type': 'INSTANCE'})
    return store


MOVE = {'consumer_uuid': I1, 'allocations': [
    {'resource_provider': 'rpB', 'resources': {'VCPU': 2, 'MEMORY_MB': 2048}},
    {'resource_provider': 'rpC', 'resources': {'DISK_GB': 20}},
]}


def _generations(store):
    return dict((rp, store.get_provider(rp)['generation']) for rp in (RP_A, RP_B, RP_C))


def test_seed_move_check_diff_real_and_rerun(run_module, seed):
    before_gens = _generations(seed)
    rc, predicted = run_module(alloc_module, MOVE, check=True, diff=True)
    assert rc == 0 and predicted['changed'] is True
    assert seed.get_allocations(I1)['allocations'][RP_A]['resources'] == {'VCPU': 2, 'MEMORY_MB': 2048}
    assert _generations(seed) == before_gens

    calls = []
    original = type(seed).put_allocations

    def spy(self, consumer, body):
        calls.append((consumer, body))
        return original(self, consumer, body)

    type(seed).put_allocations = spy
    try:
        rc, real = run_module(alloc_module, MOVE, diff=True)
    finally:
        type(seed).put_allocations = original
    assert rc == 0 and real['changed'] is True
    assert len(calls) == 1                            # one atomic PUT /allocations/i1
    assert calls[0][1]['consumer_generation'] == 1
    assert sorted(calls[0][1]['allocations']) == [RP_B, RP_C]

    for key in ('consumer_uuid', 'allocations', 'consumer_generation', 'project_id', 'user_id',
                'consumer_type', 'consumers', 'diff'):
        assert predicted[key] == real[key], key
    assert real['allocations'] == {
        RP_B: {'generation': before_gens[RP_B] + 1, 'resources': {'VCPU': 2, 'MEMORY_MB': 2048}},
        RP_C: {'generation': before_gens[RP_C] + 1, 'resources': {'DISK_GB': 20}},
    }
    assert real['consumer_generation'] == 2
    assert real['project_id'] == PROJECT and real['user_id'] == USER and real['consumer_type'] == 'INSTANCE'
    assert real['diff']['before']['allocations'][RP_A]['resources'] == {'VCPU': 2, 'MEMORY_MB': 2048}
    after_gens = _generations(seed)
    assert after_gens[RP_A] == before_gens[RP_A]      # the provider left behind is not bumped
    assert seed.get_usages(RP_A)['usages'] == {'VCPU': 0, 'MEMORY_MB': 0}

    rc, again = run_module(alloc_module, MOVE)
    assert rc == 0 and again['changed'] is False
    assert _generations(seed) == after_gens
    assert again['consumer_generation'] == 2


def test_new_consumer_needs_project_and_user(run_module, seed):
    args = {'consumer_uuid': I2, 'allocations': [{'resource_provider': RP_B, 'resources': {'VCPU': 1}}]}
    rc, out = run_module(alloc_module, args)
    assert rc == 1 and 'project_id and user_id required' in out['msg']
    assert seed.get_allocations(I2) == {'allocations': {}}
    rc, predicted = run_module(alloc_module, dict(args, project_id=PROJECT, user_id=USER), check=True)
    rc, out = run_module(alloc_module, dict(args, project_id=PROJECT, user_id=USER))
    assert rc == 0 and out['changed'] is True
    assert out['consumer_generation'] == 1 and out['consumer_type'] == 'INSTANCE'
    assert predicted['allocations'] == out['allocations']
    assert predicted['consumer_generation'] == out['consumer_generation']


def test_project_change_alone_is_a_change(run_module, seed):
    args = {'consumer_uuid': I1, 'project_id': 'other-project', 'allocations': [
        {'resource_provider': 'rpA', 'resources': {'VCPU': 2, 'MEMORY_MB': 2048}},
        {'resource_provider': 'rpC', 'resources': {'DISK_GB': 20}}]}
    rc, out = run_module(alloc_module, args)
    assert rc == 0 and out['changed'] is True and out['project_id'] == 'other-project'
    rc, out = run_module(alloc_module, args)
    assert out['changed'] is False


def test_absent_empties_the_consumer(run_module, seed):
    rc, predicted = run_module(alloc_module, {'consumer_uuid': I1, 'state': 'absent'}, check=True, diff=True)
    assert predicted['changed'] is True and predicted['allocations'] == {}
    rc, out = run_module(alloc_module, {'consumer_uuid': I1, 'state': 'absent'}, diff=True)
    assert rc == 0 and out['changed'] is True
    assert out['allocations'] == {} and out['consumer_generation'] is None
    assert out['diff'] == predicted['diff']
    assert seed.get_allocations(I1) == {'allocations': {}}
    rc, out = run_module(alloc_module, {'consumer_uuid': I1, 'state': 'absent'})
    assert rc == 0 and out['changed'] is False


def test_multi_consumer_write_is_one_transaction(run_module, seed):
    calls = []
    original = type(seed).post_allocations

    def spy(self, body):
        calls.append(body)
        return original(self, body)

    args = {'consumers': [
        dict(MOVE),
        {'consumer_uuid': I2, 'project_id': PROJECT, 'user_id': USER, 'consumer_type': 'MIGRATION',
         'allocations': [{'resource_provider': 'rpA', 'resources': {'VCPU': 4}}]},
    ]}
    rc, predicted = run_module(alloc_module, args, check=True, diff=True)
    type(seed).post_allocations = spy
    try:
        rc, out = run_module(alloc_module, args, diff=True)
    finally:
        type(seed).post_allocations = original
    assert rc == 0 and out['changed'] is True
    assert len(calls) == 1 and sorted(calls[0]) == sorted([I1, I2])
    assert calls[0][I2]['consumer_generation'] is None and calls[0][I1]['consumer_generation'] == 1
    assert predicted['consumers'] == out['consumers'] and predicted['diff'] == out['diff']
    assert out['consumers'][I2]['consumer_type'] == 'MIGRATION'
    assert 'consumer_uuid' not in out
    rc, out = run_module(alloc_module, args)
    assert out['changed'] is False

    # emptying one and keeping the other: only the changed consumer is sent
    args['consumers'][1] = {'consumer_uuid': I2, 'state': 'absent'}
    type(seed).post_allocations = spy
    try:
        rc, out = run_module(alloc_module, args)
    finally:
        type(seed).post_allocations = original
    assert rc == 0 and out['changed'] is True
    assert list(calls[-1]) == [I2] and calls[-1][I2]['allocations'] == {}
    assert out['consumers'][I2]['allocations'] == {}


def test_multi_consumer_failure_writes_nothing(run_module, seed):
    args = {'consumers': [
        dict(MOVE),
        {'consumer_uuid': I2, 'project_id': PROJECT, 'user_id': USER,
         'allocations': [{'resource_provider': 'rpB', 'resources': {'VCPU': 7}}]},   # 2 + 7 > 8
    ]}
    rc, out = run_module(alloc_module, args)
    assert rc == 1 and 'would exceed the capacity' in out['msg']
    assert sorted(seed.get_allocations(I1)['allocations']) == [RP_A, RP_C]
    assert seed.get_allocations(I2) == {'allocations': {}}


@pytest.mark.parametrize('args, expected', [
    ({'allocations': [{'resource_provider': 'rpB', 'resources': {'VCPU': 9}}]}, 'would exceed the capacity'),
    ({'allocations': [{'resource_provider': 'rpB', 'resources': {'MEMORY_MB': 1000}}]},
     'would violate inventory constraints'),
    ({'allocations': [{'resource_provider': 'rpC', 'resources': {'VCPU': 1}}]},
     "Inventory for 'VCPU' on resource provider '%s' invalid" % RP_C),
    ({'allocations': [{'resource_provider': 'rpZ', 'resources': {'VCPU': 1}}]},
     "Allocation for resource provider named 'rpZ' that does not exist."),
    ({'allocations': [{'resource_provider': 'rpB', 'resources': {'VCPU': 0}}]},
     'Amount of VCPU on rpB must be an integer between 1 and'),
    ({'allocations': [{'resource_provider': 'rpB', 'resources': {}}]}, 'must be a non-empty mapping'),
    ({'allocations': [{'resource_provider': 'rpB', 'resources': {'VCPU': 1}},
                      {'resource_provider': RP_B, 'resources': {'MEMORY_MB': 512}}]}, 'is listed more than once'),
    ({'allocations': []}, 'allocations must name at least one resource provider'),
    ({}, 'allocations must name at least one resource provider'),
    ({'consumer_uuid': 'i1'}, 'Malformed consumer_uuid: i1'),
    ({'state': 'absent', 'allocations': [{'resource_provider': 'rpB', 'resources': {'VCPU': 1}}]},
     'allocations cannot be given with state=absent'),
    ({'consumer_type': 'bad type', 'allocations': [{'resource_provider': 'rpB', 'resources': {'VCPU': 1}}]},
     "'bad type' is not a valid consumer_type"),
    ({'consumers': []}, 'mutually exclusive: consumer_uuid|consumers'),
    ({'allocations': [{'resources': {'VCPU': 1}}]}, 'missing required arguments: resource_provider'),
])
def test_bad_input_fails_and_changes_nothing(run_module, seed, args, expected):
    before = seed.get_allocations(I1)
    gens = _generations(seed)
    args = dict({'consumer_uuid': I1}, **args)
    for check in (True, False):
        rc, out = run_module(alloc_module, args, check=check)
        assert rc == 1 and expected in out['msg'], out['msg']
        assert 'exception' not in out
    assert seed.get_allocations(I1) == before
    assert _generations(seed) == gens


def test_argument_rules(run_module, seed):
    rc, out = run_module(alloc_module, {})
    assert rc == 1 and 'one of the following is required: consumer_uuid, consumers' in out['msg']
    rc, out = run_module(alloc_module, {'consumers': [{'consumer_uuid': I1, 'state': 'absent'}],
                                        'project_id': PROJECT})
    assert rc == 1 and 'mutually exclusive: project_id|consumers' in out['msg']
    rc, out = run_module(alloc_module, {'consumers': []})
    assert rc == 1 and 'consumers must list at least one consumer' in out['msg']
    rc, out = run_module(alloc_module, {'consumers': [{'consumer_uuid': I1, 'state': 'absent'},
                                                      {'consumer_uuid': I1.upper(), 'state': 'absent'}]})
    assert rc == 1 and 'is listed more than once' in out['msg']


def test_allocation_info_by_consumer_provider_and_tree(run_module, seed):
    seed.create_provider('rpA-child', parent_provider_uuid=RP_A)
    child = seed.list_providers(name='rpA-child')[0]['uuid']
    seed.set_inventories(child, 0, {'VGPU': {'total': 2}})
    seed.put_allocations(I2, {'allocations': {child: {'resources': {'VGPU': 1}}}, 'project_id': PROJECT,
                              'user_id': USER, 'consumer_generation': None, 'consumer_type': 'INSTANCE'})

    rc, out = run_module(info_module, {'consumer_uuid': I1})
    assert rc == 0 and out['changed'] is False and list(out['consumers']) == [I1]
    view = out['consumers'][I1]
    assert view['consumer_generation'] == 1 and view['project_id'] == PROJECT
    assert view['allocations'][RP_C]['resources'] == {'DISK_GB': 20}
    assert 'resource_providers' not in out

    rc, out = run_module(info_module, {'resource_provider': 'rpC'})
    assert list(out['resource_providers']) == [RP_C]
    assert out['resource_providers'][RP_C]['allocations'] == {I1: {'resources': {'DISK_GB': 20}}}
    assert sorted(out['consumers'][I1]['allocations']) == [RP_A, RP_C]   # the full set

    rc, out = run_module(info_module, {'in_tree': child})
    assert sorted(out['resource_providers']) == sorted([RP_A, child])
    assert sorted(out['consumers']) == sorted([I1, I2])
    assert out['resource_providers'][child]['name'] == 'rpA-child'

    rc, out = run_module(info_module, {'consumer_uuid': '99999999-0000-4000-8000-000000000009'})
    assert rc == 0 and out['consumers'] == {}
    rc, out = run_module(info_module, {'resource_provider': 'missing'})
    assert rc == 0 and out['consumers'] == {} and out['resource_providers'] == {}
    rc, out = run_module(info_module, {'consumer_uuid': 'bad'})
    assert rc == 1 and 'Malformed consumer_uuid: bad' in out['msg']
    rc, out = run_module(info_module, {})
    assert rc == 1 and 'one of the following is required' in out['msg']
