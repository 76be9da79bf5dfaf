# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""resource_provider and resource_provider_info modules on a tmp embedded_db."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import uuid

import pytest

from ansible_collections.placement.upgrade.plugins.modules import resource_provider as rp_module
from ansible_collections.placement.upgrade.plugins.modules import resource_provider_info as info_module

CN = '11111111-1111-4111-8111-111111111111'
GPU = '22222222-2222-4222-8222-222222222222'
AGG = '33333333-3333-4333-8333-333333333333'


def _names(store):
    return sorted(p['name'] for p in store.list_providers())


def test_create_then_rerun_is_unchanged(run_module, store):
    args = {'name': 'cn1', 'uuid': CN, 'traits': ['COMPUTE_NODE', 'CUSTOM_UPGRADING'], 'aggregates': [AGG]}
    rc, first = run_module(rp_module, args)
    assert rc == 0 and first['changed'] is True
    prov = first['provider']
    assert prov['uuid'] == CN and prov['name'] == 'cn1'
    assert prov['root_provider_uuid'] == CN and prov['parent_provider_uuid'] is None
    assert prov['traits'] == ['COMPUTE_NODE', 'CUSTOM_UPGRADING']
    assert prov['aggregates'] == [AGG]
    assert prov['generation'] == 2          # traits +1, aggregates +1
    assert first['created_traits'] == ['CUSTOM_UPGRADING']
    assert first['log'] == ['created custom trait CUSTOM_UPGRADING'] and 'warnings' not in first
    assert store.get_provider(CN)['generation'] == 2

    rc, second = run_module(rp_module, args)
    assert rc == 0 and second['changed'] is False
    assert second['provider'] == prov
    assert second['created_traits'] == []
    assert store.get_provider(CN)['generation'] == 2


def test_check_mode_predicts_the_real_result_and_writes_nothing(run_module, store):
    run_module(rp_module, {'name': 'cn1', 'uuid': CN, 'traits': ['COMPUTE_NODE']})
    args = {'name': 'cn1-gpu0', 'uuid': GPU, 'parent_provider': 'cn1', 'traits': ['CUSTOM_GPU_T4'],
            'aggregates': [AGG]}
    rc, predicted = run_module(rp_module, args, check=True, diff=True)
    assert rc == 0 and predicted['changed'] is True
    assert _names(store) == ['cn1']
    assert store.list_traits(name='in:CUSTOM_GPU_T4') == []
    rc, real = run_module(rp_module, args, diff=True)
    assert rc == 0 and real['changed'] is True
    assert predicted['provider'] == real['provider']
    assert predicted['created_traits'] == real['created_traits'] == ['CUSTOM_GPU_T4']
    assert predicted['diff'] == real['diff']
    assert real['diff']['before'] is None
    assert real['provider']['root_provider_uuid'] == CN
    assert real['provider']['generation'] == 2
    # check mode on the unchanged provider predicts no change, same object
    rc, again = run_module(rp_module, args, check=True)
    assert again['changed'] is False and again['provider'] == real['provider']


def test_diff_of_an_update(run_module):
    run_module(rp_module, {'name': 'cn1', 'uuid': CN, 'traits': ['COMPUTE_NODE']})
    rc, out = run_module(rp_module, {'uuid': CN, 'name': 'cn1-renamed', 'traits': ['CUSTOM_X'],
                                     'traits_exclusive': True}, diff=True)
    assert rc == 0 and out['changed'] is True
    assert out['diff']['before']['name'] == 'cn1' and out['diff']['before']['traits'] == ['COMPUTE_NODE']
    assert out['diff']['after']['name'] == 'cn1-renamed' and out['diff']['after']['traits'] == ['CUSTOM_X']
    assert out['diff']['after']['generation'] == out['diff']['before']['generation'] + 1


def test_no_diff_without_diff_mode(run_module):
    rc, out = run_module(rp_module, {'name': 'cn1'})
    assert rc == 0 and 'diff' not in out


def test_traits_additive_by_default_and_exclusive_on_request(run_module, store):
    run_module(rp_module, {'name': 'cn1', 'uuid': CN, 'traits': ['COMPUTE_NODE']})
    rc, out = run_module(rp_module, {'name': 'cn1', 'traits': ['HW_NUMA_ROOT']})
    assert out['changed'] is True and out['provider']['traits'] == ['COMPUTE_NODE', 'HW_NUMA_ROOT']
    rc, out = run_module(rp_module, {'name': 'cn1', 'traits': ['HW_NUMA_ROOT'], 'traits_exclusive': True})
    assert out['changed'] is True and out['provider']['traits'] == ['HW_NUMA_ROOT']
    rc, out = run_module(rp_module, {'name': 'cn1', 'traits': ['HW_NUMA_ROOT'], 'traits_exclusive': True})
    assert out['changed'] is False
    rc, out = run_module(rp_module, {'name': 'cn1', 'traits': [], 'traits_exclusive': True,
                                     'aggregates': [], 'aggregates_exclusive': True})
    assert out['changed'] is True and out['provider']['traits'] == []
    assert store.get_provider_traits(CN)['traits'] == []


def test_aggregates_additive_and_exclusive(run_module):
    other = str(uuid.uuid4())
    run_module(rp_module, {'name': 'cn1', 'aggregates': [AGG]})
    rc, out = run_module(rp_module, {'name': 'cn1', 'aggregates': [other]})
    assert out['provider']['aggregates'] == sorted([AGG, other])
    rc, out = run_module(rp_module, {'name': 'cn1', 'aggregates': [other], 'aggregates_exclusive': True})
    assert out['provider']['aggregates'] == [other]


def test_reparent_and_unparent(run_module, store):
    run_module(rp_module, {'name': 'cn1', 'uuid': CN})
    run_module(rp_module, {'name': 'cn2'})
    run_module(rp_module, {'name': 'gpu', 'uuid': GPU, 'parent_provider': 'cn1'})
    rc, predicted = run_module(rp_module, {'name': 'gpu', 'parent_provider': 'cn2'}, check=True)
    rc, out = run_module(rp_module, {'name': 'gpu', 'parent_provider': 'cn2'})
    assert rc == 0 and out['changed'] is True
    cn2 = store.list_providers(name='cn2')[0]['uuid']
    assert out['provider']['parent_provider_uuid'] == cn2 and out['provider']['root_provider_uuid'] == cn2
    assert predicted['provider'] == out['provider']
    assert out['provider']['generation'] == 0     # re-parenting does not bump the generation
    rc, out = run_module(rp_module, {'uuid': GPU, 'parent_provider': ''})
    assert out['changed'] is True
    assert out['provider']['parent_provider_uuid'] is None and out['provider']['root_provider_uuid'] == GPU


def test_reparent_under_own_descendant_fails_unchanged(run_module, store):
    run_module(rp_module, {'name': 'cn1', 'uuid': CN})
    run_module(rp_module, {'name': 'gpu', 'uuid': GPU, 'parent_provider': CN})
    rc, out = run_module(rp_module, {'name': 'cn1', 'parent_provider': 'gpu'})
    assert rc == 1 and 'loop' in out['msg']
    assert store.get_provider(CN)['parent_provider_uuid'] is None


@pytest.mark.parametrize('args, expected', [
    ({'name': 'cn1', 'uuid': 'not-a-uuid'}, "'not-a-uuid' is not a 'uuid'"),
    ({'name': 'cn1', 'parent_provider': 'nowhere'}, "Parent resource provider named 'nowhere' not found"),
    ({'name': 'cn1', 'parent_provider': GPU}, 'Parent resource provider with uuid %s not found' % GPU),
    ({'name': 'cn1', 'traits': ['NOT_A_REAL_TRAIT']}, 'No such trait(s): NOT_A_REAL_TRAIT.'),
    ({'name': 'cn1', 'traits': ['lower_case']}, 'is not a valid trait name'),
    ({'name': 'cn1', 'aggregates': ['x']}, "'x' is not a 'uuid'"),
    ({'name': 'x' * 201}, 'Resource provider name must be a string of 1 to 200 characters'),
    ({'uuid': CN}, 'does not exist and no name was given'),
])
def test_bad_input_fails_clearly_and_creates_nothing(run_module, store, args, expected):
    rc, out = run_module(rp_module, args)
    assert rc == 1 and out['failed'] is True
    assert expected in out['msg']
    assert 'exception' not in out
    assert store.list_providers() == []
    assert store.list_traits(name='in:NOT_A_REAL_TRAIT') == []


def test_duplicate_name_fails_before_writing(run_module, store):
    run_module(rp_module, {'name': 'cn1', 'uuid': CN})
    rc, out = run_module(rp_module, {'name': 'cn1', 'uuid': GPU})
    assert rc == 1 and out['error']['code'] == 'placement.duplicate_name'
    assert 'placement.duplicate_name' in out['msg']
    assert [p['uuid'] for p in store.list_providers()] == [CN]


def test_delete_refuses_parent_and_provider_in_use(run_module, store):
    run_module(rp_module, {'name': 'cn1', 'uuid': CN})
    run_module(rp_module, {'name': 'gpu', 'uuid': GPU, 'parent_provider': CN})
    for check in (True, False):
        rc, out = run_module(rp_module, {'name': 'cn1', 'state': 'absent'}, check=check)
        assert rc == 1
        assert out['error']['code'] == 'placement.resource_provider.cannot_delete_parent'
        assert 'It has child resource providers' in out['msg']
    store.set_inventories(GPU, 0, {'VGPU': {'total': 4}})
    store.put_allocations(str(uuid.uuid4()), {
        'allocations': {GPU: {'resources': {'VGPU': 1}}}, 'project_id': 'p', 'user_id': 'u',
        'consumer_generation': None, 'consumer_type': 'INSTANCE'})
    rc, out = run_module(rp_module, {'uuid': GPU, 'state': 'absent'})
    assert rc == 1 and out['error']['code'] == 'placement.resource_provider.inuse'
    assert 'Resource provider has allocations' in out['msg']
    assert sorted(p['uuid'] for p in store.list_providers()) == sorted([CN, GPU])


def test_delete_check_mode_then_real_then_idempotent(run_module, store):
    run_module(rp_module, {'name': 'cn1', 'uuid': CN, 'traits': ['COMPUTE_NODE']})
    rc, predicted = run_module(rp_module, {'name': 'cn1', 'state': 'absent'}, check=True, diff=True)
    assert predicted['changed'] is True and predicted['provider'] is None
    assert predicted['diff']['before']['uuid'] == CN and predicted['diff']['after'] is None
    assert store.get_provider(CN)['uuid'] == CN
    rc, out = run_module(rp_module, {'name': 'cn1', 'state': 'absent'}, diff=True)
    assert out['changed'] is True and out['diff'] == predicted['diff']
    assert store.list_providers() == []
    rc, out = run_module(rp_module, {'name': 'cn1', 'state': 'absent'})
    assert rc == 0 and out['changed'] is False


@pytest.mark.parametrize('args, expected', [
    ({}, 'one of the following is required: name, uuid'),
    ({'name': 'cn1', 'state': 'gone'}, 'value of state must be one of: present, absent'),
    ({'name': 'cn1', 'embedded_db': '/tmp/x.db', 'cloud': 'overcloud'},
     'parameters are mutually exclusive: embedded_db|cloud'),
    ({'name': 'cn1', 'traits_exclusive': 'maybe'}, 'traits_exclusive'),
    ({'name': 'cn1', 'conflict_retries': -1}, 'conflict_retries must be 0 or more'),
])
def test_argument_errors(run_module, args, expected):
    rc, out = run_module(rp_module, args)
    assert rc == 1 and expected in out['msg']


def test_no_backend_configured_is_a_clear_failure(run_module, monkeypatch):
    for var in ('OS_CLOUD', 'OS_AUTH_URL'):
        monkeypatch.delenv(var, raising=False)
    rc, out = run_module(rp_module, {'name': 'cn1', 'cloud': None})
    assert rc == 1 and out['msg'].startswith('No placement to talk to')


def test_unexpected_exception_is_a_clean_failure(run_module, monkeypatch):
    from ansible_collections.placement.upgrade.plugins.module_utils._placement import resources as ops

    def boom(*args, **kwargs):
        raise KeyError('generation')

    monkeypatch.setattr(ops, 'ensure_provider', boom)
    rc, out = run_module(rp_module, {'name': 'cn1'})
    assert rc == 1 and out['msg'].startswith("Unexpected error (KeyError): 'generation' (raised at "
                                             "test_resource_provider.py:")
    assert 'in boom)' in out['msg'] and 'exception' not in out          # where, but no traceback


def test_info_by_name_uuid_tree_and_all(run_module, store):
    run_module(rp_module, {'name': 'cn1', 'uuid': CN})
    run_module(rp_module, {'name': 'b-child', 'uuid': GPU, 'parent_provider': 'cn1'})
    run_module(rp_module, {'name': 'a-child', 'parent_provider': 'cn1'})
    run_module(rp_module, {'name': 'other'})
    store.set_inventories(GPU, 0, {'VGPU': {'total': 4}})
    consumer = str(uuid.uuid4())
    store.put_allocations(consumer, {
        'allocations': {GPU: {'resources': {'VGPU': 2}}}, 'project_id': 'p', 'user_id': 'u',
        'consumer_generation': None, 'consumer_type': 'INSTANCE'})

    rc, out = run_module(info_module, {'in_tree': 'b-child', 'with_allocations': True})
    assert rc == 0 and out['changed'] is False
    assert [p['name'] for p in out['providers']] == ['cn1', 'a-child', 'b-child']
    gpu = out['providers'][2]
    assert gpu['inventories']['VGPU']['total'] == 4 and gpu['usages'] == {'VGPU': 2}
    assert gpu['allocations'] == {consumer: {'resources': {'VGPU': 2}}}
    assert gpu['root_provider_uuid'] == CN and gpu['parent_provider_uuid'] == CN

    rc, out = run_module(info_module, {'uuid': GPU})
    assert [p['name'] for p in out['providers']] == ['b-child'] and 'allocations' not in out['providers'][0]
    rc, out = run_module(info_module, {'name': 'other'})
    assert [p['name'] for p in out['providers']] == ['other']
    rc, out = run_module(info_module, {})
    assert sorted(p['name'] for p in out['providers']) == ['a-child', 'b-child', 'cn1', 'other']
    rc, out = run_module(info_module, {'name': 'missing'})
    assert rc == 0 and out['providers'] == []
    rc, out = run_module(info_module, {'in_tree': str(uuid.uuid4())})
    assert rc == 0 and out['providers'] == []
    rc, out = run_module(info_module, {'name': 'cn1', 'uuid': CN})
    assert rc == 1 and 'mutually exclusive' in out['msg']
    rc, out = run_module(info_module, {'uuid': 'nope'})
    assert rc == 1 and "'nope' is not a 'uuid'" in out['msg']


def test_info_without_details_lists_the_tree_with_generations_only(run_module, store):
    run_module(rp_module, {'name': 'cn1', 'uuid': CN})
    run_module(rp_module, {'name': 'b-child', 'uuid': GPU, 'parent_provider': 'cn1'})
    rc, full = run_module(info_module, {'in_tree': 'cn1'})
    rc, bare = run_module(info_module, {'in_tree': 'cn1', 'details': False})
    assert rc == 0 and bare['changed'] is False
    fields = ('uuid', 'name', 'generation', 'parent_provider_uuid', 'root_provider_uuid')
    assert bare['providers'] == [dict((key, p[key]) for key in fields) for p in full['providers']]
    # a write to the child moves its generation; a new provider shows in the list
    store.set_inventories(GPU, 0, {'VGPU': {'total': 4}})
    run_module(rp_module, {'name': 'a-child', 'parent_provider': 'cn1'})
    rc, after = run_module(info_module, {'in_tree': 'cn1', 'details': False})
    assert [(p['name'], p['generation']) for p in after['providers']] == [('cn1', 0), ('a-child', 0), ('b-child', 1)]
    rc, out = run_module(info_module, {'in_tree': 'cn1', 'details': False, 'with_allocations': True})
    assert rc == 1 and out['msg'] == 'with_allocations=true needs details=true (the allocations are a detail of each provider)'
