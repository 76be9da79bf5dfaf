# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""inventory module on a tmp embedded_db."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import uuid

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import factory
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
from ansible_collections.placement.upgrade.plugins.modules import inventory as inv_module

CN = '11111111-1111-4111-8111-111111111111'
DEFAULTS = {'reserved': 0, 'min_unit': 1, 'max_unit': 2147483647, 'step_size': 1, 'allocation_ratio': 1.0}


def _record(**fields):
    rec = dict(DEFAULTS)
    rec.update(fields)
    return rec


@pytest.fixture
def cn(store):
    store.create_provider('cn1', uuid=CN)
    return CN


def _allocate(store, rp, resources):
    consumer = str(uuid.uuid4())
    store.put_allocations(consumer, {
        'allocations': {rp: {'resources': resources}}, 'project_id': 'p', 'user_id': 'u',
        'consumer_generation': None, 'consumer_type': 'INSTANCE'})
    return consumer


def test_set_one_class_then_rerun_is_unchanged(run_module, store, cn):
    args = {'resource_provider': 'cn1', 'resource_class': 'VCPU', 'total': 16, 'allocation_ratio': 4.0}
    rc, out = run_module(inv_module, args)
    assert rc == 0 and out['changed'] is True
    assert out['inventories'] == {'VCPU': _record(total=16, allocation_ratio=4.0)}
    assert out['resource_provider'] == {'uuid': CN, 'name': 'cn1'}
    assert out['resource_provider_generation'] == 1 and out['usages'] == {'VCPU': 0}
    assert out['retries'] == 0 and out['created_resource_classes'] == []
    rc, again = run_module(inv_module, args)
    assert rc == 0 and again['changed'] is False
    assert again['inventories'] == out['inventories']
    assert again['resource_provider_generation'] == 1
    assert store.get_provider(CN)['generation'] == 1      # no PUT was sent


def test_single_class_merges_into_the_set(run_module, store, cn):
    store.set_inventories(CN, 0, {'MEMORY_MB': {'total': 4096, 'reserved': 512}})
    rc, out = run_module(inv_module, {'resource_provider': CN, 'resource_class': 'VCPU', 'total': 8})
    assert sorted(out['inventories']) == ['MEMORY_MB', 'VCPU']
    assert out['inventories']['MEMORY_MB'] == _record(total=4096, reserved=512)


def test_check_mode_and_diff_predict_the_real_run(run_module, store, cn):
    store.set_inventories(CN, 0, {'MEMORY_MB': {'total': 4096}})
    args = {'resource_provider': 'cn1', 'exclusive': True, 'inventories': [
        {'resource_class': 'VCPU', 'total': 8, 'max_unit': 8},
        {'resource_class': 'CUSTOM_NVIDIA_222', 'total': 4, 'reserved': 1},
    ]}
    rc, predicted = run_module(inv_module, args, check=True, diff=True)
    assert rc == 0 and predicted['changed'] is True
    assert store.get_inventories(CN)['inventories'].keys() == {'MEMORY_MB'}
    assert 'CUSTOM_NVIDIA_222' not in store.list_resource_classes()
    rc, real = run_module(inv_module, args, diff=True)
    assert rc == 0 and real['changed'] is True
    for key in ('inventories', 'resource_provider_generation', 'usages', 'created_resource_classes',
                'resource_provider', 'diff'):
        assert predicted[key] == real[key], key
    assert real['created_resource_classes'] == ['CUSTOM_NVIDIA_222']
    assert real['diff']['before'] == {'resource_provider_generation': 1,
                                      'inventories': {'MEMORY_MB': _record(total=4096)}}
    assert real['diff']['after']['resource_provider_generation'] == 2
    assert sorted(real['diff']['after']['inventories']) == ['CUSTOM_NVIDIA_222', 'VCPU']
    rc, again = run_module(inv_module, args, check=True)
    assert again['changed'] is False and again['resource_provider_generation'] == 2


def test_absent_removes_a_class_and_is_idempotent(run_module, store, cn):
    store.set_inventories(CN, 0, {'VCPU': {'total': 8}, 'VGPU': {'total': 4}})
    args = {'resource_provider': 'cn1', 'resource_class': 'VGPU', 'state': 'absent'}
    rc, out = run_module(inv_module, args)
    assert rc == 0 and out['changed'] is True and list(out['inventories']) == ['VCPU']
    rc, out = run_module(inv_module, args)
    assert rc == 0 and out['changed'] is False
    rc, out = run_module(inv_module, {'resource_provider': 'cn1', 'state': 'absent',
                                      'inventories': [{'resource_class': 'VCPU'}, {'resource_class': 'PCPU'}]})
    assert out['changed'] is True and out['inventories'] == {}


def test_exclusive_empty_list_removes_everything(run_module, store, cn):
    store.set_inventories(CN, 0, {'VCPU': {'total': 8}})
    rc, out = run_module(inv_module, {'resource_provider': 'cn1', 'inventories': [], 'exclusive': True})
    assert rc == 0 and out['changed'] is True and out['inventories'] == {}
    assert store.get_inventories(CN)['inventories'] == {}


@pytest.mark.parametrize('state', ['absent', 'exclusive'])
def test_removing_an_in_use_class_fails_and_changes_nothing(run_module, store, cn, state):
    store.set_inventories(CN, 0, {'VCPU': {'total': 8}, 'VGPU': {'total': 4}})
    _allocate(store, CN, {'VGPU': 1})
    gen = store.get_provider(CN)['generation']
    if state == 'absent':
        args = {'resource_provider': 'cn1', 'resource_class': 'VGPU', 'state': 'absent'}
    else:
        args = {'resource_provider': 'cn1', 'resource_class': 'VCPU', 'total': 8, 'exclusive': True}
    for check in (True, False):
        rc, out = run_module(inv_module, args, check=check)
        assert rc == 1
        assert out['error']['code'] == 'placement.inventory.inuse'
        assert "Inventory for 'VGPU' on resource provider '%s' in use." % CN in out['msg']
    assert sorted(store.get_inventories(CN)['inventories']) == ['VCPU', 'VGPU']
    assert store.get_provider(CN)['generation'] == gen


def test_lowering_total_below_usage_is_allowed(run_module, store, cn):
    store.set_inventories(CN, 0, {'VCPU': {'total': 8}})
    _allocate(store, CN, {'VCPU': 6})
    rc, out = run_module(inv_module, {'resource_provider': 'cn1', 'resource_class': 'VCPU', 'total': 4})
    assert rc == 0 and out['changed'] is True and out['usages'] == {'VCPU': 6}


@pytest.mark.parametrize('args, expected', [
    ({'resource_class': 'FOO_BAR', 'total': 1}, 'No such resource class FOO_BAR'),
    ({'resource_class': 'VCPU', 'total': -1}, 'total of VCPU must be between 1 and 2147483647'),
    ({'resource_class': 'VCPU', 'total': 0}, 'total of VCPU must be between 1 and 2147483647'),
    ({'resource_class': 'VCPU', 'total': 4, 'reserved': 5}, 'reserved (5) of VCPU is greater than total (4)'),
    ({'resource_class': 'VCPU', 'total': 4, 'step_size': 0}, 'step_size of VCPU must be between'),
    ({'resource_class': 'vcpu', 'total': 4}, "'vcpu' is not a valid resource class name"),
    ({'resource_class': 'VCPU'}, 'total is required to set inventory of VCPU'),
    ({'resource_class': 'VCPU', 'total': 'many'}, "argument 'total' is of type"),
    ({'inventories': [{'resource_class': 'VCPU', 'total': 2}, {'resource_class': 'VCPU', 'total': 3}]},
     'resource class VCPU is given more than once'),
    ({'inventories': [{'total': 2}]}, 'missing required arguments: resource_class'),
    ({'resource_class': 'VCPU', 'total': 2, 'inventories': []}, 'mutually exclusive: resource_class|inventories'),
    ({'total': 2}, 'one of the following is required: resource_class, inventories'),
    ({'resource_class': 'VCPU', 'state': 'absent', 'exclusive': True}, 'exclusive=true applies to state=present only'),
])
def test_bad_input_fails_and_changes_nothing(run_module, store, cn, args, expected):
    store.set_inventories(CN, 0, {'MEMORY_MB': {'total': 1024}})
    args = dict(args, resource_provider='cn1')
    rc, out = run_module(inv_module, args)
    assert rc == 1 and expected in out['msg'], out['msg']
    assert 'exception' not in out
    assert store.get_inventories(CN) == {'resource_provider_generation': 1,
                                         'inventories': {'MEMORY_MB': _record(total=1024)}}


def test_missing_provider_is_a_clear_failure(run_module, store):
    rc, out = run_module(inv_module, {'resource_provider': 'nowhere', 'resource_class': 'VCPU', 'total': 1})
    assert rc == 1 and "Resource provider named 'nowhere' not found" in out['msg']
    assert out['error']['status'] == 404
    rc, out = run_module(inv_module, {'resource_provider': CN, 'resource_class': 'VCPU', 'total': 1})
    assert rc == 1 and 'Resource provider with uuid %s not found' % CN in out['msg']


class RacingBackend(EmbeddedBackend):
    """Another writer bumps the provider between our read and our write, ``races`` times."""

    races = 1

    def set_inventories(self, uuid, generation, inventories):  # pylint: disable=redefined-outer-name
        if RacingBackend.races > 0:
            RacingBackend.races -= 1
            other = EmbeddedBackend(self.path)
            try:
                other.set_aggregates(uuid, other.get_provider(uuid)['generation'], [_new_uuid()])
            finally:
                other.close()
        return super(RacingBackend, self).set_inventories(uuid, generation, inventories)


def _new_uuid():
    return str(uuid.uuid4())


@pytest.fixture
def racing(monkeypatch):
    def get_backend(options, environ=None, create=True, **_kwargs):
        return RacingBackend(options['embedded_db'], create=create)
    monkeypatch.setattr(factory, 'get_backend', get_backend)
    return RacingBackend


def test_generation_conflict_is_retried_and_reported(run_module, store, cn, racing):
    racing.races = 1
    rc, out = run_module(inv_module, {'resource_provider': 'cn1', 'resource_class': 'VCPU', 'total': 8})
    assert rc == 0 and out['changed'] is True and out['retries'] == 1
    assert len(out['log']) == 1 and 'generation conflict on attempt 1 of 6' in out['log'][0]
    assert 're-reading and retrying' in out['log'][0]
    assert '1 generation conflict(s)' in json.dumps(out['warnings'])
    assert out['resource_provider_generation'] == 2   # aggregates by the other writer, then ours
    assert store.get_inventories(CN)['inventories']['VCPU']['total'] == 8
    assert len(store.get_aggregates(CN)['aggregates']) == 1


def test_generation_conflict_gives_up_after_the_bound(run_module, store, cn, racing):
    racing.races = 3
    rc, out = run_module(inv_module, {'resource_provider': 'cn1', 'resource_class': 'VCPU', 'total': 8,
                                      'conflict_retries': 2})
    assert rc == 1 and out['error']['code'] == 'placement.concurrent_update'
    assert 'gave up after 3 attempts' in out['msg']
    assert len(out['log']) == 3 and 'giving up' in out['log'][-1]
    assert store.get_inventories(CN)['inventories'] == {}
