# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The embedded store's Placement rules, one by one (exact expected values).

The differential suite (tests/integration) proves the same behaviours equal the
real service; these tests pin them without a server so a regression shows here
first, with a readable expectation.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import uuid

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors, names
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend


def U():
    return str(uuid.uuid4())


@pytest.fixture
def b(tmp_path):
    backend = EmbeddedBackend(str(tmp_path / 'placement.db'))
    yield backend
    backend.close()


def body(allocs, gen, project='p', user='u', ctype='INSTANCE'):
    return {'allocations': dict((rp, {'resources': dict(res)}) for rp, res in allocs.items()),
            'project_id': project, 'user_id': user, 'consumer_generation': gen, 'consumer_type': ctype}


def provider(b, name=None, parent=None, inventories=None):
    rp = b.create_provider(name or 'rp-%s' % uuid.uuid4().hex[:8], uuid=U(), parent_provider_uuid=parent)['uuid']
    if inventories:
        b.set_inventories(rp, 0, inventories)
    return rp


def gen(b, rp):
    return b.get_provider(rp)['generation']


def raises(kind, code, func, *args, **kwargs):
    with pytest.raises(kind) as info:
        func(*args, **kwargs)
    assert info.value.code == code, info.value
    return info.value


# -- session -----------------------------------------------------------------

def test_session_facts(b):
    assert b.kind == 'embedded'
    assert b.microversion == '1.39'


def test_standard_classes_and_traits_seeded(b):
    assert b.list_resource_classes()[:len(names.STANDARD_RESOURCE_CLASSES)] == list(names.STANDARD_RESOURCE_CLASSES)
    assert sorted(b.list_traits()) == sorted(names.STANDARD_TRAITS)
    assert 'VGPU' in names.STANDARD_RESOURCE_CLASSES and 'HW_CPU_X86_AVX2' in names.STANDARD_TRAITS


def test_closed_backend_refuses(tmp_path):
    backend = EmbeddedBackend(str(tmp_path / 'p.db'))
    backend.close()
    backend.close()     # idempotent
    with pytest.raises(errors.ConfigurationError):
        backend.list_providers()


# -- providers -------------------------------------------------------------------

def test_create_get_list_and_in_tree(b):
    root = provider(b, 'root')
    child = provider(b, 'child', parent=root)
    grand = provider(b, 'grand', parent=child)
    other = provider(b, 'other')
    got = b.get_provider(grand)
    assert got == {'uuid': grand, 'name': 'grand', 'generation': 0,
                   'parent_provider_uuid': child, 'root_provider_uuid': root}
    assert sorted(p['uuid'] for p in b.list_providers(in_tree=grand)) == sorted([root, child, grand])
    assert [p['uuid'] for p in b.list_providers(in_tree=other)] == [other]
    assert b.list_providers(in_tree=U()) == []
    assert [p['name'] for p in b.list_providers(name='child')] == ['child']
    with pytest.raises(errors.BadRequest):
        b.list_providers(in_tree='not-a-uuid')


def test_create_generates_and_normalizes_uuid(b):
    made = b.create_provider('auto')
    assert uuid.UUID(made['uuid']) and made['root_provider_uuid'] == made['uuid']
    raw = U()
    assert b.create_provider('upper', uuid=raw.upper())['uuid'] == raw


def test_create_refusals(b):
    taken = provider(b, 'taken')
    raises(errors.DuplicateName, errors.DUPLICATE_NAME, b.create_provider, 'taken', uuid=U())
    raises(errors.DuplicateName, errors.DUPLICATE_NAME, b.create_provider, 'fresh', uuid=taken)
    raises(errors.BadRequest, errors.DEFAULT, b.create_provider, 'orphan', uuid=U(), parent_provider_uuid=U())
    me = U()
    raises(errors.BadRequest, errors.DEFAULT, b.create_provider, 'selfish', uuid=me, parent_provider_uuid=me)
    raises(errors.BadRequest, errors.DEFAULT, b.create_provider, '', uuid=U())
    raises(errors.BadRequest, errors.DEFAULT, b.create_provider, 'x' * 201)
    raises(errors.BadRequest, errors.DEFAULT, b.create_provider, 'bad', uuid='nope')


def test_reparent_unparent_and_loops_keep_generation(b):
    a, other = provider(b, 'a'), provider(b, 'b')
    a1 = provider(b, 'a1', parent=a)
    a11 = provider(b, 'a11', parent=a1)
    moved = b.update_provider(a1, 'a1', other)
    assert moved['parent_provider_uuid'] == other and moved['root_provider_uuid'] == other
    assert b.get_provider(a11)['root_provider_uuid'] == other
    raises(errors.BadRequest, errors.DEFAULT, b.update_provider, other, 'b', a11)
    raises(errors.BadRequest, errors.DEFAULT, b.update_provider, a1, 'a1', a1)
    freed = b.update_provider(a1, 'a1-renamed', None)
    assert freed['parent_provider_uuid'] is None and freed['root_provider_uuid'] == a1
    assert b.get_provider(a11)['root_provider_uuid'] == a1
    assert [gen(b, p) for p in (a, other, a1, a11)] == [0, 0, 0, 0]
    raises(errors.DuplicateName, errors.DUPLICATE_NAME, b.update_provider, a1, 'a', None)
    raises(errors.NotFound, errors.DEFAULT, b.update_provider, U(), 'ghost', None)


def test_delete_checks_children_first_then_allocations_and_cascades(b):
    parent = provider(b)
    child = provider(b, parent=parent, inventories={'VCPU': {'total': 4}})
    c = U()
    b.put_allocations(c, body({child: {'VCPU': 1}}, None))
    raises(errors.CannotDeleteParent, errors.PROVIDER_CANNOT_DELETE_PARENT, b.delete_provider, parent)
    raises(errors.ProviderInUse, errors.PROVIDER_IN_USE, b.delete_provider, child)
    b.ensure_trait('CUSTOM_GONE')
    b.set_provider_traits(child, gen(b, child), ['CUSTOM_GONE'])
    b.set_aggregates(child, gen(b, child), [U()])
    b.delete_allocations(c)
    b.delete_provider(child)
    b.delete_provider(parent)
    raises(errors.NotFound, errors.DEFAULT, b.delete_provider, parent)
    again = b.create_provider('again', uuid=child)
    assert again['generation'] == 0
    assert b.get_inventories(child)['inventories'] == {}
    assert b.get_provider_traits(child)['traits'] == []
    assert b.get_aggregates(child)['aggregates'] == []


# -- inventories ---------------------------------------------------------------

def test_put_inventories_bumps_always_and_fills_defaults(b):
    rp = provider(b)
    inv = {'VCPU': {'total': 16, 'allocation_ratio': 4}}
    first = b.set_inventories(rp, 0, inv)
    assert first == {'resource_provider_generation': 1, 'inventories': {'VCPU': {
        'total': 16, 'reserved': 0, 'min_unit': 1, 'max_unit': 2147483647, 'step_size': 1,
        'allocation_ratio': 4.0}}}
    assert b.set_inventories(rp, 1, inv)['resource_provider_generation'] == 2
    raises(errors.ConcurrentUpdate, errors.CONCURRENT_UPDATE, b.set_inventories, rp, 1, inv)
    assert b.get_inventories(rp) == {'resource_provider_generation': 2, 'inventories': first['inventories']}
    assert b.get_usages(rp) == {'resource_provider_generation': 2, 'usages': {'VCPU': 0}}


def test_inventory_validation(b):
    rp = provider(b)
    raises(errors.BadRequest, errors.DEFAULT, b.set_inventories, rp, 0, {'VCPU': {'total': 0}})
    raises(errors.BadRequest, errors.DEFAULT, b.set_inventories, rp, 0, {'VCPU': {'reserved': 1}})
    raises(errors.BadRequest, errors.DEFAULT, b.set_inventories, rp, 0, {'VCPU': {'total': 1, 'colour': 1}})
    raises(errors.BadRequest, errors.DEFAULT, b.set_inventories, rp, 0, {'VCPU': {'total': True}})
    raises(errors.BadRequest, errors.DEFAULT, b.set_inventories, rp, 0, {'CUSTOM_NEVER_MADE': {'total': 1}})
    raises(errors.NotFound, errors.DEFAULT, b.set_inventories, U(), 0, {})
    assert gen(b, rp) == 0


def test_reserved_rules_follow_capacity(b):
    rp = provider(b)
    raises(errors.BadRequest, errors.DEFAULT, b.set_inventories, rp, 0, {'VCPU': {'total': 4, 'reserved': 5}})
    b.set_inventories(rp, 0, {'VCPU': {'total': 4, 'reserved': 4}})              # == total is fine
    b.set_inventories(rp, 1, {'VCPU': {'total': 4, 'reserved': 5, 'allocation_ratio': 0.5}})   # int(-0.5) == 0
    b.set_inventories(rp, 2, {'VCPU': {'total': 4, 'allocation_ratio': 0}})       # ratio 0 accepted
    raises(errors.BadRequest, errors.DEFAULT, b.set_inventories, rp, 3, {'VCPU': {'total': 4, 'allocation_ratio': -1}})
    raises(errors.CapacityExceeded, errors.DEFAULT, b.put_allocations, U(), body({rp: {'VCPU': 1}}, None))


def test_single_inventory_update_and_create(b):
    rp = provider(b, inventories={'VCPU': {'total': 8}})
    rec = b.set_inventory(rp, 'VCPU', 1, {'total': 16, 'reserved': 2})
    assert rec['resource_provider_generation'] == 2 and rec['total'] == 16 and rec['reserved'] == 2
    made = b.set_inventory(rp, 'DISK_GB', 2, {'total': 100})
    assert made['resource_provider_generation'] == 3
    assert sorted(b.get_inventories(rp)['inventories']) == ['DISK_GB', 'VCPU']
    raises(errors.ConcurrentUpdate, errors.CONCURRENT_UPDATE, b.set_inventory, rp, 'VCPU', 2, {'total': 1})
    raises(errors.NotFound, errors.DEFAULT, b.set_inventory, rp, 'CUSTOM_NOPE', 3, {'total': 1})
    raises(errors.BadRequest, errors.DEFAULT, b.set_inventory, rp, 'VCPU', 3, {'reserved': 1})


def test_removing_classes_in_use(b):
    rp = provider(b, inventories={'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 1024}, 'DISK_GB': {'total': 10}})
    c = U()
    b.put_allocations(c, body({rp: {'VCPU': 2}}, None))
    g = gen(b, rp)
    raises(errors.InventoryInUse, errors.INVENTORY_INUSE, b.set_inventories, rp, g, {'MEMORY_MB': {'total': 1}})
    raises(errors.InventoryInUse, errors.INVENTORY_INUSE, b.delete_inventories, rp)
    # Placement answers the single DELETE of an in-use class with concurrent_update.
    raises(errors.ConcurrentUpdate, errors.CONCURRENT_UPDATE, b.delete_inventory, rp, 'VCPU')
    assert gen(b, rp) == g
    b.delete_inventory(rp, 'DISK_GB')
    assert gen(b, rp) == g + 1
    raises(errors.NotFound, errors.DEFAULT, b.delete_inventory, rp, 'DISK_GB')
    raises(errors.NotFound, errors.DEFAULT, b.delete_inventory, rp, 'CUSTOM_NOPE')
    raises(errors.ConcurrentUpdate, errors.CONCURRENT_UPDATE, b.delete_inventory, rp, 'MEMORY_MB', g)
    # lowering the total below usage is allowed
    b.set_inventories(rp, g + 1, {'VCPU': {'total': 1}, 'MEMORY_MB': {'total': 1}})
    b.delete_allocations(c)
    raises(errors.ConcurrentUpdate, errors.CONCURRENT_UPDATE, b.delete_inventories, rp, 0)
    b.delete_inventories(rp)
    assert b.get_inventories(rp)['inventories'] == {} and gen(b, rp) == g + 3


# -- allocations -----------------------------------------------------------------

def test_consumer_generation_lifecycle(b):
    rp = provider(b, inventories={'VCPU': {'total': 8}})
    c = U()
    b.put_allocations(c, body({rp: {'VCPU': 1}}, None))
    got = b.get_allocations(c)
    assert got == {'allocations': {rp: {'generation': 2, 'resources': {'VCPU': 1}}}, 'project_id': 'p',
                   'user_id': 'u', 'consumer_generation': 1, 'consumer_type': 'INSTANCE'}
    err = raises(errors.ConcurrentUpdate, errors.CONCURRENT_UPDATE, b.put_allocations, c, body({rp: {'VCPU': 2}}, None))
    assert 'consumer generation conflict - expected 1 but got None' in err.detail
    raises(errors.ConcurrentUpdate, errors.CONCURRENT_UPDATE, b.put_allocations, c, body({rp: {'VCPU': 2}}, 0))
    err = raises(errors.ConcurrentUpdate, errors.CONCURRENT_UPDATE, b.put_allocations, U(), body({rp: {'VCPU': 1}}, 3))
    assert 'expected null but got 3' in err.detail
    b.put_allocations(c, body({rp: {'VCPU': 2}}, 1))
    assert b.get_allocations(c)['consumer_generation'] == 2
    b.put_allocations(c, body({}, 2))                       # emptied: the consumer is gone
    assert b.get_allocations(c) == {'allocations': {}}
    b.put_allocations(c, body({rp: {'VCPU': 1}}, None))     # so the next write sends null again
    b.delete_allocations(c)
    raises(errors.NotFound, errors.DEFAULT, b.delete_allocations, c)
    b.put_allocations(c, body({rp: {'VCPU': 1}}, None))


def test_empty_put_for_unknown_consumer_leaves_generation_zero(b):
    rp = provider(b, inventories={'VCPU': {'total': 8}})
    c = U()
    b.put_allocations(c, body({}, None))
    assert b.get_allocations(c) == {'allocations': {}}
    raises(errors.ConcurrentUpdate, errors.CONCURRENT_UPDATE, b.put_allocations, c, body({rp: {'VCPU': 1}}, None))
    b.put_allocations(c, body({rp: {'VCPU': 1}}, 0))
    assert b.get_allocations(c)['consumer_generation'] == 1


def test_unknown_provider_is_400_and_leaks_the_new_consumer(b):
    rp = provider(b, inventories={'VCPU': {'total': 8}})
    c = U()
    raises(errors.BadRequest, errors.DEFAULT, b.put_allocations, c, body({rp: {'VCPU': 1}, U(): {'VCPU': 1}}, None))
    assert b.get_usages(rp)['usages'] == {'VCPU': 0}
    raises(errors.ConcurrentUpdate, errors.CONCURRENT_UPDATE, b.put_allocations, c, body({rp: {'VCPU': 1}}, None))
    b.put_allocations(c, body({rp: {'VCPU': 1}}, 0))
    # other failures roll the new consumer back
    c2 = U()
    raises(errors.CapacityExceeded, errors.DEFAULT, b.put_allocations, c2, body({rp: {'VCPU': 100}}, None))
    b.put_allocations(c2, body({rp: {'VCPU': 1}}, None))


def test_generation_deltas_of_allocation_writes(b):
    rpa = provider(b, inventories={'VCPU': {'total': 8}})
    rpb = provider(b, inventories={'VCPU': {'total': 8}})
    rpc = provider(b, inventories={'DISK_GB': {'total': 100}})
    c = U()
    b.put_allocations(c, body({rpa: {'VCPU': 1}, rpc: {'DISK_GB': 10}}, None))
    assert [gen(b, p) for p in (rpa, rpb, rpc)] == [2, 1, 2]
    b.put_allocations(c, body({rpb: {'VCPU': 1}, rpc: {'DISK_GB': 10}}, 1))   # move A -> B keeping C
    assert [gen(b, p) for p in (rpa, rpb, rpc)] == [2, 2, 3]                   # A is NOT bumped
    b.put_allocations(c, body({}, 2))                                          # emptying bumps what it leaves
    assert [gen(b, p) for p in (rpa, rpb, rpc)] == [2, 3, 4]
    b.put_allocations(c, body({rpa: {'VCPU': 1}}, None))
    b.delete_allocations(c)                                                    # DELETE does not bump
    assert [gen(b, p) for p in (rpa, rpb, rpc)] == [3, 3, 4]


def test_unit_and_capacity_checks(b):
    rp = provider(b, inventories={'VCPU': {'total': 16, 'min_unit': 2, 'max_unit': 8, 'step_size': 2},
                                  'MEMORY_MB': {'total': 1024}})
    for amount in (1, 10, 3):
        raises(errors.CapacityExceeded, errors.DEFAULT, b.put_allocations, U(), body({rp: {'VCPU': amount}}, None))
    raises(errors.CapacityExceeded, errors.DEFAULT, b.put_allocations, U(), body({rp: {'MEMORY_MB': 1025}}, None))
    raises(errors.CapacityExceeded, errors.DEFAULT, b.put_allocations, U(), body({rp: {'DISK_GB': 1}}, None))
    raises(errors.BadRequest, errors.DEFAULT, b.put_allocations, U(), body({rp: {'CUSTOM_NEVER': 1}}, None))
    raises(errors.BadRequest, errors.DEFAULT, b.put_allocations, U(), body({rp: {'VCPU': 0}}, None))
    raises(errors.BadRequest, errors.DEFAULT, b.put_allocations, 'nope', body({rp: {'VCPU': 2}}, None))
    assert b.get_usages(rp)['usages'] == {'VCPU': 0, 'MEMORY_MB': 0}
    assert gen(b, rp) == 1


def test_allowed_when_usage_does_not_get_worse(b):
    rp = provider(b, inventories={'VCPU': {'total': 8}})
    c1, c2, c3 = U(), U(), U()
    b.put_allocations(c1, body({rp: {'VCPU': 4}}, None))
    b.put_allocations(c2, body({rp: {'VCPU': 3}}, None))
    b.set_inventories(rp, gen(b, rp), {'VCPU': {'total': 4}})                 # 7 used of 4
    b.put_allocations(c2, body({rp: {'VCPU': 3}}, 1))                        # same: allowed
    b.put_allocations(c2, body({rp: {'VCPU': 2}}, 2))                        # better: allowed
    raises(errors.CapacityExceeded, errors.DEFAULT, b.put_allocations, c2, body({rp: {'VCPU': 3}}, 3))  # worse
    raises(errors.CapacityExceeded, errors.DEFAULT, b.put_allocations, c3, body({rp: {'VCPU': 1}}, None))
    b.put_allocations(c1, body({rp: {'VCPU': 1}}, 1))
    b.put_allocations(c3, body({rp: {'VCPU': 1}}, None))                     # 4 of 4: fits
    assert b.get_usages(rp)['usages'] == {'VCPU': 4}


def test_post_allocations_is_one_transaction(b):
    rp = provider(b, inventories={'VCPU': {'total': 8}})
    c1, c2, c3 = U(), U(), U()
    b.post_allocations({c1: body({rp: {'VCPU': 2}}, None), c2: body({rp: {'VCPU': 3}}, None)})
    assert gen(b, rp) == 2
    b.post_allocations({c1: body({}, 1), c2: body({rp: {'VCPU': 6}}, 1)})   # empty c1, grow c2 into its space
    assert b.get_allocations(c1) == {'allocations': {}}
    assert b.get_usages(rp)['usages'] == {'VCPU': 6}
    raises(errors.CapacityExceeded, errors.DEFAULT, b.post_allocations,
           {c2: body({rp: {'VCPU': 4}}, 2), c3: body({rp: {'VCPU': 5}}, None)})
    raises(errors.ConcurrentUpdate, errors.CONCURRENT_UPDATE, b.post_allocations,
           {c3: body({rp: {'VCPU': 1}}, None), c2: body({rp: {'VCPU': 1}}, 9)})
    assert b.get_allocations(c3) == {'allocations': {}}
    b.post_allocations({c3: body({rp: {'VCPU': 1}}, None)})                 # c3 was not left behind
    raises(errors.BadRequest, errors.DEFAULT, b.post_allocations, {})


def test_provider_allocations_and_consumer_attributes(b):
    rp = provider(b, inventories={'VCPU': {'total': 8}})
    c = U()
    b.put_allocations(c, body({rp: {'VCPU': 2}}, None))
    b.put_allocations(c, body({rp: {'VCPU': 2}}, 1, project='p2', user='u2', ctype='MIGRATION'))
    got = b.get_allocations(c)
    assert (got['project_id'], got['user_id'], got['consumer_type'], got['consumer_generation']) == (
        'p2', 'u2', 'MIGRATION', 2)
    assert b.get_provider_allocations(rp) == {'resource_provider_generation': 3, 'allocations': {
        c: {'resources': {'VCPU': 2}, 'consumer_generation': 2}}}
    raises(errors.NotFound, errors.DEFAULT, b.get_provider_allocations, U())
    no_type = body({rp: {'VCPU': 1}}, 2)
    del no_type['consumer_type']
    raises(errors.BadRequest, errors.DEFAULT, b.put_allocations, c, no_type)


# -- traits, aggregates, resource classes ----------------------------------------

def test_traits(b):
    rp = provider(b)
    assert b.ensure_trait('CUSTOM_GOLD') is True
    assert b.ensure_trait('CUSTOM_GOLD') is False
    raises(errors.BadRequest, errors.DEFAULT, b.ensure_trait, 'GOLD')
    assert b.list_traits(name='in:CUSTOM_GOLD,NOPE') == ['CUSTOM_GOLD']
    assert b.list_traits(name='startswith:CUSTOM_') == ['CUSTOM_GOLD']
    raises(errors.BadRequest, errors.DEFAULT, b.list_traits, name='CUSTOM_GOLD')
    res = b.set_provider_traits(rp, 0, ['CUSTOM_GOLD', 'HW_CPU_X86_AVX2'])
    assert res == {'resource_provider_generation': 1, 'traits': ['CUSTOM_GOLD', 'HW_CPU_X86_AVX2']}
    assert b.set_provider_traits(rp, 1, ['HW_CPU_X86_AVX2', 'CUSTOM_GOLD'])['resource_provider_generation'] == 1
    raises(errors.ConcurrentUpdate, errors.CONCURRENT_UPDATE, b.set_provider_traits, rp, 0, [])
    raises(errors.BadRequest, errors.DEFAULT, b.set_provider_traits, rp, 1, ['CUSTOM_NEVER'])
    raises(errors.NotFound, errors.DEFAULT, b.set_provider_traits, U(), 0, [])
    assert b.set_provider_traits(rp, 1, [])['resource_provider_generation'] == 2
    assert b.get_provider_traits(rp) == {'resource_provider_generation': 2, 'traits': []}


def test_aggregates_always_bump(b):
    rp = provider(b)
    a1, a2 = U(), U()
    assert b.set_aggregates(rp, 0, [a1]) == {'resource_provider_generation': 1, 'aggregates': [a1]}
    assert b.set_aggregates(rp, 1, [a1])['resource_provider_generation'] == 2
    assert sorted(b.set_aggregates(rp, 2, [a2, a1])['aggregates']) == sorted([a1, a2])
    raises(errors.ConcurrentUpdate, errors.CONCURRENT_UPDATE, b.set_aggregates, rp, 0, [])
    raises(errors.BadRequest, errors.DEFAULT, b.set_aggregates, rp, 3, [a1, a1])
    raises(errors.BadRequest, errors.DEFAULT, b.set_aggregates, rp, 3, ['nope'])
    assert sorted(b.get_aggregates(rp)['aggregates']) == sorted([a1, a2])


def test_custom_resource_classes(b):
    assert b.ensure_resource_class('CUSTOM_PCI_10DE_1EB8') is True
    assert b.ensure_resource_class('CUSTOM_PCI_10DE_1EB8') is False
    raises(errors.BadRequest, errors.DEFAULT, b.ensure_resource_class, 'VGPU')
    raises(errors.BadRequest, errors.DEFAULT, b.ensure_resource_class, 'CUSTOM_lower')
    assert b.list_resource_classes()[-1] == 'CUSTOM_PCI_10DE_1EB8'
    rp = provider(b, inventories={'CUSTOM_PCI_10DE_1EB8': {'total': 2}})
    b.put_allocations(U(), body({rp: {'CUSTOM_PCI_10DE_1EB8': 2}}, None))


# -- reshaper ----------------------------------------------------------------------

def _vgpu_host(b):
    cn = provider(b, 'cn', inventories={'VCPU': {'total': 16}, 'VGPU': {'total': 8}})
    vm1, vm2 = U(), U()
    b.put_allocations(vm1, body({cn: {'VCPU': 2, 'VGPU': 2}}, None))
    b.put_allocations(vm2, body({cn: {'VCPU': 2, 'VGPU': 1}}, None))
    g1, g2 = provider(b, 'gpu1', parent=cn), provider(b, 'gpu2', parent=cn)
    return cn, g1, g2, vm1, vm2


def _state(b, *rps):
    return [(b.get_provider(rp), b.get_inventories(rp), b.get_provider_allocations(rp)) for rp in rps]


def test_reshape_flat_vgpu_to_children(b):
    cn, g1, g2, vm1, vm2 = _vgpu_host(b)
    assert [gen(b, p) for p in (cn, g1, g2)] == [3, 0, 0]
    b.reshape({
        'inventories': {
            cn: {'resource_provider_generation': 3, 'inventories': {'VCPU': {'total': 16}}},
            g1: {'resource_provider_generation': 0, 'inventories': {'VGPU': {'total': 4}}},
            g2: {'resource_provider_generation': 0, 'inventories': {'VGPU': {'total': 4}}},
        },
        'allocations': {
            vm1: body({cn: {'VCPU': 2}, g1: {'VGPU': 2}}, 1),
            vm2: body({cn: {'VCPU': 2}, g2: {'VGPU': 1}}, 1),
        }})
    # +1 interim union, +1 allocations, +1 final inventory
    assert [gen(b, p) for p in (cn, g1, g2)] == [6, 3, 3]
    assert b.get_usages(cn)['usages'] == {'VCPU': 4}
    assert b.get_usages(g1)['usages'] == {'VGPU': 2} and b.get_usages(g2)['usages'] == {'VGPU': 1}
    assert b.get_allocations(vm1)['consumer_generation'] == 2


def test_reshape_generation_deltas(b):
    cn, g1, g2, vm1, vm2 = _vgpu_host(b)
    b.reshape({'inventories': {g1: {'resource_provider_generation': 0, 'inventories': {}},
                               g2: {'resource_provider_generation': 0, 'inventories': {'VGPU': {'total': 1}}}},
               'allocations': {}})
    assert [gen(b, p) for p in (cn, g1, g2)] == [3, 1, 2]      # {}: +1, non-empty: +2
    b.reshape({'inventories': {g1: {'resource_provider_generation': 1, 'inventories': {}}},
               'allocations': {vm2: body({cn: {'VCPU': 2, 'VGPU': 1}}, 1)}})
    assert [gen(b, p) for p in (cn, g1, g2)] == [4, 2, 2]      # a provider in allocations: +1


def _assert_reshape_refused(b, kind, code, reshape_body, *rps):
    before = _state(b, *rps)
    raises(kind, code, b.reshape, reshape_body)
    assert _state(b, *rps) == before                           # all or nothing


def test_reshape_refusals_change_nothing(b):
    cn, g1, g2, vm1, vm2 = _vgpu_host(b)
    ok_cn = {'resource_provider_generation': 3, 'inventories': {'VCPU': {'total': 16}}}
    # vm2 forgotten: its VGPU stays on cn whose VGPU goes away
    _assert_reshape_refused(b, errors.InventoryInUse, errors.INVENTORY_INUSE, {
        'inventories': {cn: ok_cn, g1: {'resource_provider_generation': 0, 'inventories': {'VGPU': {'total': 4}}}},
        'allocations': {vm1: body({cn: {'VCPU': 2}, g1: {'VGPU': 2}}, 1)}}, cn, g1)
    _assert_reshape_refused(b, errors.CapacityExceeded, errors.DEFAULT, {
        'inventories': {cn: ok_cn, g1: {'resource_provider_generation': 0, 'inventories': {'VGPU': {'total': 2}}}},
        'allocations': {vm1: body({cn: {'VCPU': 2}, g1: {'VGPU': 2}}, 1),
                        vm2: body({cn: {'VCPU': 2}, g1: {'VGPU': 1}}, 1)}}, cn, g1)
    _assert_reshape_refused(b, errors.ConcurrentUpdate, errors.CONCURRENT_UPDATE, {
        'inventories': {cn: dict(ok_cn, resource_provider_generation=2)}, 'allocations': {}}, cn)
    _assert_reshape_refused(b, errors.ConcurrentUpdate, errors.CONCURRENT_UPDATE, {
        'inventories': {cn: ok_cn}, 'allocations': {vm1: body({cn: {'VCPU': 2}}, 5)}}, cn)
    _assert_reshape_refused(b, errors.BadRequest, errors.DEFAULT, {
        'inventories': {g1: {'resource_provider_generation': 0, 'inventories': {'CUSTOM_NEVER': {'total': 1}}}},
        'allocations': {}}, g1)
    err = raises(errors.BadRequest, errors.RESOURCE_PROVIDER_NOT_FOUND, b.reshape, {
        'inventories': {U(): {'resource_provider_generation': 0, 'inventories': {}}}, 'allocations': {}})
    assert 'not found' in err.detail
    ghost_consumer = U()
    _assert_reshape_refused(b, errors.BadRequest, errors.DEFAULT, {
        'inventories': {g1: {'resource_provider_generation': 0, 'inventories': {}}},
        'allocations': {ghost_consumer: body({U(): {'VGPU': 1}}, None)}}, g1)
    raises(errors.BadRequest, errors.DEFAULT, b.reshape, {'inventories': {}, 'allocations': {}})


def test_reshaper_accepts_reserved_over_total_and_total_below_usage(b):
    cn, g1, g2, vm1, vm2 = _vgpu_host(b)
    b.reshape({'inventories': {cn: {'resource_provider_generation': 3, 'inventories': {
        'VCPU': {'total': 16, 'reserved': 20}, 'VGPU': {'total': 1}}}}, 'allocations': {}})
    assert b.get_usages(cn)['usages'] == {'VCPU': 4, 'VGPU': 3}
    # a whole-set PUT now refuses the VCPU record; so does creating a class
    raises(errors.BadRequest, errors.DEFAULT, b.set_inventories, cn, 5, b.get_inventories(cn)['inventories'])
    raises(errors.BadRequest, errors.DEFAULT, b.set_inventory, cn, 'DISK_GB', 5, {'total': 1})
    b.set_inventory(cn, 'VGPU', 5, {'total': 8})          # updating another class checks only that record
