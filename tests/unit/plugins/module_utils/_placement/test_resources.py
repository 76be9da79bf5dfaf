# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ops.py on BOTH backends: the embedded store and (marked ``real``) the real Placement.

Every test runs the same operations on each backend and checks the same things:
check mode predicts exactly what the real run returns (generations included),
a second run sends nothing, and bad requests fail before any write with
Placement's status and code.  Names are unique per test because the real
server's database is shared by the whole session.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import uuid

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement import resources as ops
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import (
    BadRequest,
    CannotDeleteParent,
    CapacityExceeded,
    ConcurrentUpdate,
    InventoryInUse,
    NoAnswer,
    NotFound,
    ProviderInUse,
    UnsupportedVersion,
)


@pytest.fixture(params=['embedded', pytest.param('real', marks=pytest.mark.real)])
def backend(request):
    if request.param == 'embedded':
        return request.getfixturevalue('embedded_backend')
    return request.getfixturevalue('rest_backend')


def _no_volatile(result):
    return dict((k, v) for k, v in result.items() if k not in ('retries',))


def _both(backend, func, *args, **kwargs):
    """Run ``func`` in check mode, then for real; return (predicted, real)."""
    predicted = func(backend, *args, check_mode=True, **kwargs)
    real = func(backend, *args, **kwargs)
    return predicted, real


def _tree(backend, unique_name):
    """cn (VCPU 8, MEMORY_MB 4096 step 512) with child gpu (VGPU 4); sharing disk (DISK_GB 100)."""
    cn = ops.ensure_provider(backend, name=unique_name('cn'), uuid=str(uuid.uuid4()))['provider']
    gpu = ops.ensure_provider(backend, name=unique_name('gpu'), uuid=str(uuid.uuid4()),
                              parent_provider=cn['uuid'])['provider']
    disk = ops.ensure_provider(backend, name=unique_name('disk'), uuid=str(uuid.uuid4()))['provider']
    ops.ensure_inventory(backend, cn['uuid'], {'VCPU': {'total': 8},
                                               'MEMORY_MB': {'total': 4096, 'step_size': 512}})
    ops.ensure_inventory(backend, gpu['uuid'], {'VGPU': {'total': 4, 'max_unit': 4}})
    ops.ensure_inventory(backend, disk['uuid'], {'DISK_GB': {'total': 100}})
    return cn['uuid'], gpu['uuid'], disk['uuid']


def _consumer(backend, rp_resources, project='proj', user='user', consumer=None):
    consumer = consumer or str(uuid.uuid4())
    ops.ensure_allocations(backend, [{
        'consumer_uuid': consumer, 'project_id': project, 'user_id': user,
        'allocations': [{'resource_provider': rp, 'resources': res} for rp, res in rp_resources.items()]}])
    return consumer


# -- providers ---------------------------------------------------------------------
def test_provider_create_predicted_then_idempotent(backend, unique_name):
    name, rp = unique_name('cn'), str(uuid.uuid4())
    trait = 'CUSTOM_' + uuid.uuid4().hex.upper()
    agg = str(uuid.uuid4())
    predicted, real = _both(backend, ops.ensure_provider, name=name, uuid=rp,
                            traits=[trait, 'COMPUTE_NODE'], aggregates=[agg])
    assert _no_volatile(predicted) == _no_volatile(real)
    assert real['changed'] and real['provider']['generation'] == 2
    assert real['created_traits'] == [trait]
    again = ops.ensure_provider(backend, name=name, uuid=rp, traits=[trait, 'COMPUTE_NODE'], aggregates=[agg])
    assert not again['changed'] and again['provider'] == real['provider']
    assert backend.get_provider(rp)['generation'] == 2


def test_provider_without_uuid_predicts_null_uuid(backend, unique_name):
    name = unique_name('cn')
    predicted = ops.ensure_provider(backend, name=name, check_mode=True)
    assert predicted['provider']['uuid'] is None and predicted['provider']['root_provider_uuid'] is None
    real = ops.ensure_provider(backend, name=name)
    assert real['provider']['uuid'] == real['provider']['root_provider_uuid']
    expected = dict(predicted['provider'], uuid=real['provider']['uuid'],
                    root_provider_uuid=real['provider']['uuid'])
    assert expected == real['provider']


def test_reparent_rename_unparent(backend, unique_name):
    cn1, gpu, _disk = _tree(backend, unique_name)
    cn2 = ops.ensure_provider(backend, name=unique_name('cn'))['provider']['uuid']
    new_name = unique_name('gpu-moved')
    predicted, real = _both(backend, ops.ensure_provider, uuid=gpu, name=new_name, parent_provider=cn2)
    assert _no_volatile(predicted) == _no_volatile(real)
    assert real['provider']['parent_provider_uuid'] == cn2 and real['provider']['root_provider_uuid'] == cn2
    assert real['provider']['name'] == new_name
    assert real['diff']['before']['parent_provider_uuid'] == cn1
    predicted, real = _both(backend, ops.ensure_provider, uuid=gpu, parent_provider='')
    assert _no_volatile(predicted) == _no_volatile(real)
    assert real['provider']['root_provider_uuid'] == gpu


class OldPlacement(object):
    """A backend proxy answering an older microversion."""

    def __init__(self, backend, version):
        self._backend = backend
        self.microversion = version

    def __getattr__(self, name):
        return getattr(self._backend, name)


def test_reparent_needs_1_37(backend, unique_name):
    cn1, gpu, _disk = _tree(backend, unique_name)
    cn2 = ops.ensure_provider(backend, name=unique_name('cn'))['provider']['uuid']
    old = OldPlacement(backend, '1.36')
    for check_mode in (True, False):
        with pytest.raises(UnsupportedVersion) as err:
            ops.ensure_provider(old, uuid=gpu, parent_provider=cn2, check_mode=check_mode)
        assert 'needs Placement microversion 1.37; this Placement supports 1.36' in str(err.value)
        with pytest.raises(UnsupportedVersion):
            ops.ensure_provider(old, uuid=gpu, parent_provider='', check_mode=check_mode)
    assert backend.get_provider(gpu)['parent_provider_uuid'] == cn1
    # giving a parent to a ROOT provider works before 1.37 (1.14)
    lonely = ops.ensure_provider(backend, name=unique_name('lonely'))['provider']['uuid']
    out = ops.ensure_provider(old, uuid=lonely, parent_provider=cn2)
    assert out['provider']['parent_provider_uuid'] == cn2


def test_provider_loop_and_missing_parent_refused(backend, unique_name):
    cn, gpu, _disk = _tree(backend, unique_name)
    with pytest.raises(BadRequest, match='creating loop in the provider tree'):
        ops.ensure_provider(backend, uuid=cn, parent_provider=gpu)
    missing = str(uuid.uuid4())
    name = unique_name('orphan')
    with pytest.raises(NotFound, match='Parent resource provider with uuid %s not found' % missing):
        ops.ensure_provider(backend, name=name, parent_provider=missing)
    assert backend.list_providers(name=name) == []


def test_provider_delete_refusals_match_placement(backend, unique_name):
    cn, gpu, _disk = _tree(backend, unique_name)
    _consumer(backend, {gpu: {'VGPU': 1}})
    with pytest.raises(CannotDeleteParent) as err:
        ops.remove_provider(backend, cn, check_mode=True)
    assert err.value.status == 409
    with pytest.raises(ProviderInUse) as err:
        ops.remove_provider(backend, gpu)
    assert err.value.code == 'placement.resource_provider.inuse'
    assert backend.get_provider(gpu)['uuid'] == gpu
    # and what the server itself says, for the same two cases
    with pytest.raises(CannotDeleteParent):
        backend.delete_provider(cn)
    with pytest.raises(ProviderInUse):
        backend.delete_provider(gpu)


def test_unknown_standard_trait_refused_before_create(backend, unique_name):
    name = unique_name('cn')
    with pytest.raises(BadRequest, match=r'No such trait\(s\): NOT_A_TRAIT_X'):
        ops.ensure_provider(backend, name=name, traits=['NOT_A_TRAIT_X'])
    assert backend.list_providers(name=name) == []


# -- inventory ---------------------------------------------------------------------
def test_inventory_predicted_idempotent_and_custom_class(backend, unique_name):
    cn, _gpu, _disk = _tree(backend, unique_name)
    rc = 'CUSTOM_' + uuid.uuid4().hex.upper()
    predicted, real = _both(backend, ops.ensure_inventory, cn,
                            {rc: {'total': 4, 'reserved': 4}, 'VCPU': {'total': 16, 'allocation_ratio': 2.5}})
    assert _no_volatile(predicted) == _no_volatile(real)
    assert real['created_resource_classes'] == [rc]
    assert real['inventories'][rc]['reserved'] == 4          # reserved == total is valid (1.26+)
    assert real['inventories']['VCPU']['allocation_ratio'] == 2.5
    gen = backend.get_provider(cn)['generation']
    assert real['resource_provider_generation'] == gen
    again = ops.ensure_inventory(backend, cn, {'VCPU': {'total': 16, 'allocation_ratio': 2.5}})
    assert not again['changed'] and backend.get_provider(cn)['generation'] == gen


def test_inventory_in_use_refused_like_placement(backend, unique_name):
    cn, _gpu, _disk = _tree(backend, unique_name)
    _consumer(backend, {cn: {'VCPU': 2}})
    gen = backend.get_provider(cn)['generation']
    with pytest.raises(InventoryInUse) as ours:
        ops.ensure_inventory(backend, cn, remove=['VCPU'])
    with pytest.raises(InventoryInUse) as theirs:
        backend.set_inventories(cn, gen, {'MEMORY_MB': {'total': 4096, 'step_size': 512}})
    assert ours.value.detail == theirs.value.detail
    assert backend.get_provider(cn)['generation'] == gen


@pytest.mark.parametrize('record', [
    {'total': 0}, {'total': -3}, {'total': 2, 'reserved': 3}, {'total': 2147483648}, {'total': 2, 'min_unit': 0},
])
def test_inventory_bad_values_refused_like_placement(backend, unique_name, record):
    cn, _gpu, _disk = _tree(backend, unique_name)
    gen = backend.get_provider(cn)['generation']
    with pytest.raises(BadRequest):
        ops.ensure_inventory(backend, cn, {'VCPU': record})
    body = dict(backend.get_inventories(cn)['inventories'])
    body['VCPU'] = record
    with pytest.raises(BadRequest):
        backend.set_inventories(cn, gen, body)
    assert backend.get_provider(cn)['generation'] == gen


def test_unknown_standard_class_refused(backend, unique_name):
    cn, _gpu, _disk = _tree(backend, unique_name)
    with pytest.raises(BadRequest, match='No such resource class NOT_A_CLASS'):
        ops.ensure_inventory(backend, cn, {'NOT_A_CLASS': {'total': 1}})


def test_inventory_conflict_retried_from_fresh_read(backend, unique_name):
    cn, _gpu, _disk = _tree(backend, unique_name)
    raced = []
    log = []
    real_set = backend.set_inventories

    class Racing(OldPlacement):
        def set_inventories(self, rp, generation, inventories):
            if not raced:
                raced.append(True)
                backend.set_aggregates(rp, backend.get_provider(rp)['generation'], [str(uuid.uuid4())])
            return real_set(rp, generation, inventories)

    out = ops.ensure_inventory(Racing(backend, backend.microversion), cn, {'VCPU': {'total': 12}}, log=log.append)
    assert out['retries'] == 1 and len(log) == 1 and 'generation conflict on attempt 1' in log[0]
    assert backend.get_inventories(cn)['inventories']['VCPU']['total'] == 12
    assert out['resource_provider_generation'] == backend.get_provider(cn)['generation']

    always = []

    class AlwaysRacing(OldPlacement):
        def set_inventories(self, rp, generation, inventories):
            always.append(generation)
            backend.set_aggregates(rp, backend.get_provider(rp)['generation'], [str(uuid.uuid4())])
            return real_set(rp, generation, inventories)

    with pytest.raises(ConcurrentUpdate, match='gave up after 2 attempts'):
        ops.ensure_inventory(AlwaysRacing(backend, backend.microversion), cn, {'VCPU': {'total': 14}}, attempts=2)
    assert len(always) == 2 and always[1] > always[0]          # the retry re-read the generation
    assert backend.get_inventories(cn)['inventories']['VCPU']['total'] == 12


# -- set_traits (a reshape's root marks) ---------------------------------------------
class Counting(OldPlacement):
    def __init__(self, backend):
        super(Counting, self).__init__(backend, backend.microversion)
        self.calls = []

    def __getattr__(self, name):
        attr = getattr(self._backend, name)
        if callable(attr):
            def call(*args, **kwargs):
                self.calls.append(name)
                return attr(*args, **kwargs)
            return call
        return attr


def test_set_traits_reads_the_traits_once_and_puts_only_a_change(backend, unique_name):
    cn, _gpu, _disk = _tree(backend, unique_name)
    counting = Counting(backend)
    out = ops.set_traits(counting, cn, ['COMPUTE_NODE', 'HW_CPU_X86_AVX2'])
    generation = backend.get_provider(cn)['generation']
    assert counting.calls == ['get_provider_traits', 'list_traits', 'set_provider_traits']
    assert out == {'changed': True, 'before': [], 'after': ['COMPUTE_NODE', 'HW_CPU_X86_AVX2'],
                   'generation': generation, 'retries': 0}
    assert sorted(backend.get_provider_traits(cn)['traits']) == ['COMPUTE_NODE', 'HW_CPU_X86_AVX2']
    counting.calls[:] = []
    again = ops.set_traits(counting, cn, ['HW_CPU_X86_AVX2', 'COMPUTE_NODE'])
    assert counting.calls == ['get_provider_traits']
    assert (again['changed'], again['generation']) == (False, generation)
    # exactly the set given: a trait not named goes
    out = ops.set_traits(backend, cn, ['COMPUTE_NODE'])
    assert (out['before'], out['after']) == (['COMPUTE_NODE', 'HW_CPU_X86_AVX2'], ['COMPUTE_NODE'])
    assert sorted(backend.get_provider_traits(cn)['traits']) == ['COMPUTE_NODE']


def test_set_traits_refuses_an_unknown_trait_and_a_missing_provider_writing_nothing(backend, unique_name):
    cn, _gpu, _disk = _tree(backend, unique_name)
    generation = backend.get_provider(cn)['generation']
    with pytest.raises(BadRequest, match='No such trait'):
        ops.set_traits(backend, cn, ['COMPUTE_NODE', 'HW_NO_SUCH_TRAIT_ANYWHERE'])
    assert backend.get_provider(cn)['generation'] == generation
    assert backend.get_provider_traits(cn)['traits'] == []
    with pytest.raises(NotFound):
        ops.set_traits(backend, str(uuid.uuid4()), ['COMPUTE_NODE'])


def test_set_traits_conflict_and_lost_answer_retried_from_a_fresh_read(backend, unique_name):
    cn, _gpu, _disk = _tree(backend, unique_name)
    real_set = backend.set_provider_traits
    raced, log = [], []

    class Racing(OldPlacement):
        def set_provider_traits(self, rp, generation, traits):
            if not raced:
                raced.append(generation)
                backend.set_aggregates(rp, backend.get_provider(rp)['generation'], [str(uuid.uuid4())])
            return real_set(rp, generation, traits)

    out = ops.set_traits(Racing(backend, backend.microversion), cn, ['COMPUTE_NODE'], log=log.append)
    assert out['retries'] == 1 and 'generation conflict on attempt 1' in log[0]
    assert out['generation'] == backend.get_provider(cn)['generation'] == raced[0] + 2

    class Lost(OldPlacement):
        def set_provider_traits(self, rp, generation, traits):
            real_set(rp, generation, traits)
            error = NoAnswer('the connection was reset')
            error.method = 'PUT'
            raise error

    log[:] = []
    out = ops.set_traits(Lost(backend, backend.microversion), cn, ['COMPUTE_NODE', 'HW_CPU_X86_AVX2'], log=log.append)
    # the re-read shows the write in place: nothing is sent again, and it was a change
    assert out['changed'] is True and len(log) == 1 and 'was lost' in log[0]
    assert sorted(backend.get_provider_traits(cn)['traits']) == ['COMPUTE_NODE', 'HW_CPU_X86_AVX2']


# -- allocations -------------------------------------------------------------------
def test_seed_move_is_one_atomic_put(backend, unique_name):
    rp_a, _gpu, rp_c = _tree(backend, unique_name)
    rp_b = ops.ensure_provider(backend, name=unique_name('rpB'), uuid=str(uuid.uuid4()))['provider']['uuid']
    ops.ensure_inventory(backend, rp_b, {'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 4096}})
    i1 = _consumer(backend, {rp_a: {'VCPU': 2, 'MEMORY_MB': 1024}, rp_c: {'DISK_GB': 20}})
    gens = dict((rp, backend.get_provider(rp)['generation']) for rp in (rp_a, rp_b, rp_c))
    move = [{'consumer_uuid': i1, 'allocations': [
        {'resource_provider': rp_b, 'resources': {'VCPU': 2, 'MEMORY_MB': 1024}},
        {'resource_provider': rp_c, 'resources': {'DISK_GB': 20}}]}]
    predicted, real = _both(backend, ops.ensure_allocations, move)
    assert _no_volatile(predicted) == _no_volatile(real)
    view = real['consumers'][i1]
    assert view['consumer_generation'] == 2
    assert view['allocations'][rp_b]['generation'] == gens[rp_b] + 1
    assert view['allocations'][rp_c]['generation'] == gens[rp_c] + 1
    assert backend.get_provider(rp_a)['generation'] == gens[rp_a]
    assert not ops.ensure_allocations(backend, move)['changed']


def test_multi_consumer_shared_provider_bumped_once(backend, unique_name):
    cn, gpu, disk = _tree(backend, unique_name)
    c1 = _consumer(backend, {cn: {'VCPU': 1}, disk: {'DISK_GB': 10}})
    c2 = str(uuid.uuid4())
    c3 = _consumer(backend, {disk: {'DISK_GB': 5}})
    gen_disk = backend.get_provider(disk)['generation']
    reqs = [
        {'consumer_uuid': c1, 'allocations': [{'resource_provider': gpu, 'resources': {'VGPU': 1}},
                                              {'resource_provider': disk, 'resources': {'DISK_GB': 10}}]},
        {'consumer_uuid': c2, 'project_id': 'p', 'user_id': 'u',
         'allocations': [{'resource_provider': disk, 'resources': {'DISK_GB': 30}}]},
        {'consumer_uuid': c3, 'allocations': [{'resource_provider': disk, 'resources': {'DISK_GB': 5}}]},
    ]
    predicted, real = _both(backend, ops.ensure_allocations, reqs, multi=True)
    assert _no_volatile(predicted) == _no_volatile(real)
    assert real['consumers'][c2]['allocations'][disk]['generation'] == gen_disk + 1
    # c3 did not change but shares the bumped provider: its view shows the new generation
    assert real['consumers'][c3]['allocations'][disk]['generation'] == gen_disk + 1
    assert real['consumers'][c3]['consumer_generation'] == 1


def test_capacity_rule_allows_shrinking_an_overcommitted_provider(backend, unique_name):
    cn, _gpu, _disk = _tree(backend, unique_name)
    c1 = _consumer(backend, {cn: {'VCPU': 6}})
    ops.ensure_inventory(backend, cn, {'VCPU': {'total': 4}})        # now over capacity
    out = ops.ensure_allocations(backend, [{'consumer_uuid': c1, 'allocations': [
        {'resource_provider': cn, 'resources': {'VCPU': 5}}]}])       # better, still over: allowed
    assert out['changed'] and out['consumers'][c1]['allocations'][cn]['resources'] == {'VCPU': 5}
    with pytest.raises(CapacityExceeded, match='would exceed the capacity'):
        ops.ensure_allocations(backend, [{'consumer_uuid': str(uuid.uuid4()), 'project_id': 'p',
                                          'user_id': 'u', 'allocations': [
                                              {'resource_provider': cn, 'resources': {'VCPU': 1}}]}])


def test_allocation_refusals_match_the_backend(backend, unique_name):
    cn, gpu, _disk = _tree(backend, unique_name)
    consumer = str(uuid.uuid4())
    cases = [
        ({gpu: {'VGPU': 5}}, 'The requested amount would violate inventory constraints.'),   # > max_unit
        ({cn: {'MEMORY_MB': 100}}, 'The requested amount would violate inventory constraints.'),
        ({cn: {'VCPU': 9}}, 'The requested amount would exceed the capacity.'),
        ({gpu: {'VCPU': 1}}, "Inventory for 'VCPU' on resource provider '%s' invalid." % gpu),
    ]
    for allocations, text in cases:
        req = {'consumer_uuid': consumer, 'project_id': 'p', 'user_id': 'u',
               'allocations': [{'resource_provider': rp, 'resources': res} for rp, res in allocations.items()]}
        with pytest.raises(CapacityExceeded) as ours:
            ops.ensure_allocations(backend, [req], check_mode=True)
        assert text in ours.value.detail
        body = {'allocations': dict((rp, {'resources': res}) for rp, res in allocations.items()),
                'project_id': 'p', 'user_id': 'u', 'consumer_generation': None, 'consumer_type': 'INSTANCE'}
        with pytest.raises(CapacityExceeded) as theirs:
            backend.put_allocations(consumer, body)
        assert text in theirs.value.detail
    assert backend.get_allocations(consumer)['allocations'] == {}


def test_absent_and_info(backend, unique_name):
    cn, gpu, disk = _tree(backend, unique_name)
    c1 = _consumer(backend, {gpu: {'VGPU': 1}, disk: {'DISK_GB': 10}})
    info = ops.allocations_info(backend, in_tree=cn)
    assert sorted(info['resource_providers']) == sorted([cn, gpu])
    assert sorted(info['consumers'][c1]['allocations']) == sorted([gpu, disk])
    assert ops.allocations_info(backend, resource_provider=disk)['resource_providers'][disk]['allocations'] == {
        c1: {'resources': {'DISK_GB': 10}}}
    predicted, real = _both(backend, ops.ensure_allocations, [{'consumer_uuid': c1, 'state': 'absent'}])
    assert _no_volatile(predicted) == _no_volatile(real)
    assert real['consumers'][c1] == {'allocations': {}, 'consumer_generation': None, 'project_id': None,
                                     'user_id': None, 'consumer_type': None}
    assert ops.allocations_info(backend, consumer_uuid=c1) == {'consumers': {}}
    providers = ops.providers_info(backend, in_tree=gpu, with_allocations=True)
    assert [p['uuid'] for p in providers] == [cn, gpu]
    assert providers[1]['allocations'] == {} and providers[1]['usages'] == {'VGPU': 0}
