# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reshape planner on hand-built tree states (pure: no backend)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import layout
from ansible_collections.placement.upgrade.plugins.module_utils._placement.rules import allocations as allocation_rules
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import planner
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import rollback

ROOT = 'a0000000-0000-4000-8000-000000000001'
POOL = 'a0000000-0000-4000-8000-000000000002'
OTHER = 'a0000000-0000-4000-8000-000000000003'
I1 = '11111111-1111-4111-8111-111111111111'
I2 = '22222222-2222-4222-8222-222222222222'
I3 = '33333333-3333-4333-8333-333333333333'
I4 = '44444444-4444-4444-8444-444444444444'
GPU_A, GPU_B = '0000:84:00.0', '0000:85:00.0'
CHILD_A, CHILD_B = 'cn1_pci_0000_84_00_0', 'cn1_pci_0000_85_00_0'
FOREIGN = {POOL: {'name': 'pool', 'traits': ['MISC_SHARES_VIA_AGGREGATE'], 'root_provider_uuid': POOL},
           OTHER: {'name': 'cn2', 'traits': [], 'root_provider_uuid': OTHER}}


def _prov(uuid, name, inventories, parent=None, generation=5, traits=()):
    return {'uuid': uuid, 'name': name, 'generation': generation, 'parent_provider_uuid': parent,
            'root_provider_uuid': ROOT, 'inventories': inventories, 'usages': {},
            'traits': list(traits), 'aggregates': []}


def _alloc(allocs, generation=1):
    return {'allocations': dict((rp, {'generation': 5, 'resources': r}) for rp, r in allocs.items()),
            'consumer_generation': generation, 'project_id': 'p', 'user_id': 'u',
            'consumer_type': 'INSTANCE'}


def _state(vgpu_total=16, allocations=None, extra=None):
    providers = {ROOT: _prov(ROOT, 'cn1', {
        'VCPU': {'total': 64, 'allocation_ratio': 4.0},
        'MEMORY_MB': {'total': 131072, 'reserved': 512},
        'VGPU': {'total': vgpu_total, 'max_unit': vgpu_total}})}
    providers.update(extra or {})
    if allocations is None:
        allocations = {
            I1: _alloc({ROOT: {'VCPU': 2, 'VGPU': 2}, POOL: {'DISK_GB': 10}}),
            I2: _alloc({ROOT: {'VCPU': 2, 'VGPU': 2}, POOL: {'DISK_GB': 10}}),
            I3: _alloc({ROOT: {'VCPU': 1, 'VGPU': 1}}, generation=3),
        }
    state = {'providers': providers, 'allocations': allocations}
    _recount(state)
    return state


def _without_vgpu(state):
    """The state with no VGPU anywhere on the root (a node with no GPU): a plan without
    nova.conf that leaves root VGPU behind is refused (nova 34 moves or drops it)."""
    del state['providers'][ROOT]['inventories']['VGPU']
    for body in state['allocations'].values():
        body['allocations'].get(ROOT, {}).get('resources', {}).pop('VGPU', None)
    _recount(state)
    return state


def _recount(state):
    for prov in state['providers'].values():
        prov['usages'] = dict((rc, 0) for rc in prov['inventories'])
    for body in state['allocations'].values():
        for rp, entry in body['allocations'].items():
            if rp in state['providers']:
                for rc, n in entry['resources'].items():
                    usages = state['providers'][rp]['usages']
                    usages[rc] = usages.get(rc, 0) + n


def _report(a_avail=5, b_avail=6):
    def gpu(address, holders, avail):
        return {'address': address, 'vendor_id': '10de', 'product_id': '1eb8', 'numa_node': 0,
                'mdev_types': {'nvidia-222': {'available_instances': avail}},
                'mdevs': [{'uuid': '%s-%d' % (address, i), 'type': 'nvidia-222', 'instance_uuid': h}
                          for i, h in enumerate(holders)]}
    # every consumer of these tests is a guest domain on the host (I4 one without devices);
    # a consumer no domain is (a migration or an orphan) defers the node: test_inflight.py
    return {'gpus': [gpu(GPU_A, [I1, I1, I2], a_avail), gpu(GPU_B, [I2, I3], b_avail)],
            'sriov_pfs': [], 'pci_devices': [], 'numa_cells': [],
            'instances': dict((i, {'name': 'guest-%s' % i[0], 'mdevs': []}) for i in (I1, I2, I3, I4))}


def _plan(state, report=None, **kwargs):
    kwargs.setdefault('foreign', FOREIGN)
    return planner.plan_from_devices(state, ROOT, report or _report(), **kwargs)


def apply(state, plan):
    """What Placement would hold after the plan (children created, reshape applied)."""
    new = copy.deepcopy(state)
    for child in plan['create_children']:
        new['providers'][child['uuid']] = _prov(child['uuid'], child['name'], {}, parent=ROOT, generation=0)
    for item in plan['set_traits']:
        new['providers'][item['uuid']]['traits'] = list(item['traits'])
    for uuid, prov in plan['providers'].items():
        if prov['inventory_changed']:
            new['providers'][uuid]['inventories'] = copy.deepcopy(prov['inventories'])
            new['providers'][uuid]['generation'] += 2
    for consumer, body in plan['allocations'].items():
        new['allocations'][consumer] = _alloc(dict((rp, e['resources']) for rp, e in body['allocations'].items()),
                                              generation=body['consumer_generation'] + 1)
    _recount(new)
    return new


def _uuid_of(plan, name):
    return next(c['uuid'] for c in plan['children'] if c['name'] == name)


def test_plan_moves_each_consumer_to_the_gpus_it_owns():
    state = _state()
    plan = _plan(state)
    json.loads(json.dumps(plan))                     # plain data
    assert plan['status'] == 'planned'
    assert plan['moved_classes'] == ['VGPU']
    a, b = _uuid_of(plan, CHILD_A), _uuid_of(plan, CHILD_B)
    assert a == layout.child_uuid(ROOT, CHILD_A)
    assert [c['name'] for c in plan['create_children']] == [CHILD_A, CHILD_B]
    assert plan['providers'][ROOT]['inventories'].keys() == {'VCPU', 'MEMORY_MB'}
    assert plan['providers'][a]['inventories']['VGPU']['total'] == 8
    assert sorted(plan['inventory_changes']) == sorted([ROOT, a, b])
    allocs = plan['allocations']
    assert allocs[I1]['allocations'] == {ROOT: {'resources': {'VCPU': 2}}, a: {'resources': {'VGPU': 2}},
                                         POOL: {'resources': {'DISK_GB': 10}}}
    assert allocs[I2]['allocations'][a] == {'resources': {'VGPU': 1}}
    assert allocs[I2]['allocations'][b] == {'resources': {'VGPU': 1}}
    assert allocs[I2]['allocations'][POOL] == {'resources': {'DISK_GB': 10}}
    assert allocs[I3]['consumer_generation'] == 3
    # the consumer keeps its type: no consumer_type in the request (sent at 1.37)
    assert 'consumer_type' not in allocs[I3] and allocs[I3]['project_id'] == 'p'
    assert plan['assignments'][I2]['VGPU'] == {'how': 'ownership', 'amount': 2, 'to': {CHILD_A: 1, CHILD_B: 1}}
    assert plan['moved'] == {'consumers': 3, 'allocations': 3, 'units': {'VGPU': 5}}
    # the diff speaks names
    diff = plan['diff']
    assert diff['before']['consumers'][I1] == {'cn1': {'VCPU': 2, 'VGPU': 2}, 'pool': {'DISK_GB': 10}}
    assert diff['after']['consumers'][I1] == {'cn1': {'VCPU': 2}, CHILD_A: {'VGPU': 2}, 'pool': {'DISK_GB': 10}}
    assert CHILD_A not in diff['before']['providers']
    assert diff['after']['providers'][CHILD_A]['inventories']['VGPU']['max_unit'] == 8
    body = planner.reshape_body(apply_children_only(state, plan))
    assert set(body['inventories']) == {ROOT, a, b}
    assert body['inventories'][ROOT]['resource_provider_generation'] == 5
    assert set(body['allocations']) == {I1, I2, I3}


def apply_children_only(state, plan):
    """Re-plan after the children were created (what the reshaper does)."""
    new = copy.deepcopy(state)
    for child in plan['create_children']:
        new['providers'][child['uuid']] = _prov(child['uuid'], child['name'], {}, parent=ROOT, generation=0)
    replanned = planner.plan_from_devices(new, ROOT, _report(), foreign=FOREIGN)
    assert replanned['create_children'] == []
    return replanned


def test_reshape_body_needs_existing_children_and_a_plan():
    plan = _plan(_state())
    with pytest.raises(planner.PlanError):
        planner.reshape_body(plan)                   # children not created yet
    done = apply(_state(), plan)
    noop = _plan(done)
    with pytest.raises(planner.PlanError):
        planner.reshape_body(noop)


def test_plan_of_a_reshaped_node_is_empty():
    state = _state()
    done = apply(state, _plan(state))
    again = _plan(done)
    assert again['status'] == 'noop'
    assert again['create_children'] == [] and again['set_traits'] == []
    assert again['inventory_changes'] == [] and again['allocations'] == {}
    assert again['assignments'] == {} and again['moved']['consumers'] == 0
    assert again['diff'] == {'before': {'providers': {}, 'consumers': {}},
                             'after': {'providers': {}, 'consumers': {}}}
    assert 'nothing to do' in planner.summary(again)


def test_existing_child_is_reused_by_name_whatever_its_uuid():
    other_uuid = 'b0000000-0000-4000-8000-0000000000aa'
    child = _prov(other_uuid, CHILD_A, {'VGPU': {'total': 8, 'max_unit': 8, 'reserved': 1,
                                                 'allocation_ratio': 1.0}}, parent=ROOT)
    plan = _plan(_state(extra={other_uuid: child}))
    assert _uuid_of(plan, CHILD_A) == other_uuid
    assert [c['name'] for c in plan['create_children']] == [CHILD_B]
    # reserved was left to Placement by the layout: the operator's value survives
    assert plan['providers'][other_uuid]['inventories']['VGPU']['reserved'] == 1
    assert plan['allocations'][I1]['allocations'][other_uuid] == {'resources': {'VGPU': 2}}


def test_partially_reshaped_consumer_gets_only_the_remainder():
    a = layout.child_uuid(ROOT, CHILD_A)
    b = layout.child_uuid(ROOT, CHILD_B)
    extra = {a: _prov(a, CHILD_A, {'VGPU': {'total': 8, 'max_unit': 8}}, parent=ROOT),
             b: _prov(b, CHILD_B, {'VGPU': {'total': 8, 'max_unit': 8}}, parent=ROOT)}
    allocations = {I2: _alloc({ROOT: {'VCPU': 2, 'VGPU': 1}, a: {'VGPU': 1}})}
    plan = _plan(_state(allocations=allocations, extra=extra))
    assert plan['allocations'][I2]['allocations'] == {ROOT: {'resources': {'VCPU': 2}},
                                                      a: {'resources': {'VGPU': 1}},
                                                      b: {'resources': {'VGPU': 1}}}


def test_unmapped_consumer_fails_strict_and_names_it():
    state = _state()
    state['allocations'][I4] = _alloc({ROOT: {'VGPU': 1}})
    _recount(state)
    with pytest.raises(planner.PlanError) as info:
        _plan(state)
    assert info.value.consumers == [I4]
    assert I4 in info.value.detail and 'no device ownership' in info.value.detail


def test_ownership_that_does_not_add_up_fails_strict():
    state = _state()
    state['allocations'][I3] = _alloc({ROOT: {'VGPU': 3}})      # owns 1 mdev, holds 3 VGPU
    _recount(state)
    with pytest.raises(planner.PlanError) as info:
        _plan(state)
    assert info.value.consumers == [I3]
    assert 'owns 1 unit(s) of VGPU' in info.value.detail and 'holds 3' in info.value.detail


def test_pack_places_unmapped_consumers_first_fit_by_name():
    state = _state()
    state['allocations'][I4] = _alloc({ROOT: {'VGPU': 3}})
    state['allocations'][I3] = _alloc({ROOT: {'VGPU': 3}})      # owns 1 on B: 1 there + 2 packed
    _recount(state)
    plan = _plan(state, policy='pack')
    a, b = _uuid_of(plan, CHILD_A), _uuid_of(plan, CHILD_B)
    # A holds 3 by ownership (I1, I2); packing goes by consumer uuid: I3's 2 packed units
    # land on A (first child by name with room: 5), then I4's 3 fill A up to its total 8
    assert plan['allocations'][I3]['allocations'][a] == {'resources': {'VGPU': 2}}
    assert plan['allocations'][I3]['allocations'][b] == {'resources': {'VGPU': 1}}
    assert plan['assignments'][I3]['VGPU']['how'] == 'ownership+pack'
    assert plan['allocations'][I4]['allocations'][a] == {'resources': {'VGPU': 3}}
    assert plan['assignments'][I4]['VGPU'] == {'how': 'pack', 'amount': 3, 'to': {CHILD_A: 3},
                                               'reason': 'no device ownership known for it'}
    # one more unit does not fit on A any more: it goes to B
    state['allocations'][I4] = _alloc({ROOT: {'VGPU': 4}})
    _recount(state)
    plan = _plan(state, policy='pack')
    assert plan['allocations'][I4]['allocations'][b] == {'resources': {'VGPU': 4}}


def test_pack_splits_when_no_single_child_has_room_and_respects_step_and_max_unit():
    state = _state(allocations={I4: _alloc({ROOT: {'VGPU': 10}})})
    report = _report(a_avail=5, b_avail=6)
    for gpu in report['gpus']:
        for mdev in gpu['mdevs']:
            mdev['instance_uuid'] = None
    plan = _plan(state, report=report, policy='pack')
    a, b = _uuid_of(plan, CHILD_A), _uuid_of(plan, CHILD_B)
    assert plan['allocations'][I4]['allocations'][a] == {'resources': {'VGPU': 8}}
    assert plan['allocations'][I4]['allocations'][b] == {'resources': {'VGPU': 2}}
    # more than the children hold: refused with the consumer named
    state = _state(vgpu_total=40, allocations={I4: _alloc({ROOT: {'VGPU': 17}})})
    with pytest.raises(planner.PlanError) as info:
        _plan(state, report=report, policy='pack')
    assert info.value.consumers == [I4] and 'only 16 fit' in info.value.detail
    # step_size 2 on the children: an odd amount cannot be placed
    state = _state(allocations={I4: _alloc({ROOT: {'VGPU': 3}})})
    lay = layout.build_layout('cn1', report)
    for child in lay['children']:
        child['inventories']['VGPU']['step_size'] = 2
    with pytest.raises(planner.PlanError):
        planner.plan_reshape(state, ROOT, lay, {}, policy='pack', foreign=FOREIGN)


def test_ownership_beyond_capacity_fails():
    # A has 3 mdevs and nothing more available: total 3, but reserved 1 leaves room for 2
    with pytest.raises(planner.PlanError) as info:
        _plan(_state(), report=_report(a_avail=0, b_avail=6), layout_options={'gpu': {'reserved': 1}})
    assert 'would have 3 VGPU allocated but its capacity is 2' in info.value.detail
    assert _plan(_state(), report=_report(a_avail=0, b_avail=6))['status'] == 'planned'


def test_sharing_pool_is_not_a_migration_but_another_node_is():
    assert _plan(_state())['status'] == 'planned'
    state = _state()
    state['allocations'][I3] = _alloc({ROOT: {'VCPU': 1, 'VGPU': 1}, OTHER: {'VCPU': 1}})
    plan = _plan(state)
    assert plan['status'] == 'deferred'
    assert I3 in plan['deferred_reason'] and 'cn2' in plan['deferred_reason']
    assert plan['allocations'] == {} and plan['create_children'] == [] and plan['inventory_changes'] == []
    assert plan['ensure'] == {'resource_classes': [], 'traits': []}
    forced = _plan(state, allow_foreign_allocations=True)
    assert forced['status'] == 'planned'
    assert forced['allocations'][I3]['allocations'][OTHER] == {'resources': {'VCPU': 1}}
    assert any('allow_foreign_allocations' in w for w in forced['warnings'])
    # a provider we know nothing about is treated as another node (conservative)
    plan = planner.plan_from_devices(state, ROOT, _report(), foreign={})
    assert plan['status'] == 'deferred'


def test_migration_consumer_without_ownership_is_deferred_not_refused():
    state = _state()
    state['allocations'][I4] = _alloc({ROOT: {'VGPU': 1}, OTHER: {'VCPU': 1}})
    _recount(state)
    assert _plan(state)['status'] == 'deferred'


def test_root_must_be_a_root_and_in_the_state():
    state = _state()
    with pytest.raises(planner.PlanError):
        planner.plan_from_devices(state, POOL, _report())
    child = layout.child_uuid(ROOT, CHILD_A)
    state['providers'][child] = _prov(child, CHILD_A, {}, parent=ROOT)
    with pytest.raises(planner.PlanError) as info:
        planner.plan_from_devices(state, child, _report())
    assert 'not a root provider' in info.value.detail
    with pytest.raises(planner.PlanError):
        _plan(_state(), policy='random')


def test_classes_not_on_the_root_only_create_inventory():
    report = {'pci_devices': [{'address': '0000:3b:00.0', 'vendor_id': '10de', 'product_id': '25b6',
                               'instance_uuid': None}]}
    plan = planner.plan_from_devices(_without_vgpu(_state()), ROOT, report, foreign=FOREIGN,
                                     layout_options={'pci': {'enabled': True}})
    assert plan['moved_classes'] == []
    assert plan['allocations'] == {}
    assert plan['ensure'] == {'resource_classes': ['CUSTOM_PCI_10DE_25B6'], 'traits': []}
    child = plan['children'][0]
    assert child['name'] == 'cn1_0000:3B:00.0'
    assert plan['providers'][ROOT]['inventory_changed'] is False


def test_traits_are_added_to_existing_children_not_replaced():
    uuid = 'b0000000-0000-4000-8000-0000000000bb'
    report = {'pci_devices': [{'address': '0000:3b:00.0', 'vendor_id': '10de', 'product_id': '25b6'}]}
    child = _prov(uuid, 'cn1_0000:3B:00.0', {'CUSTOM_PCI_10DE_25B6': {'total': 1, 'max_unit': 1}},
                  parent=ROOT, traits=['CUSTOM_FAST', 'OWNER_NOVA'])
    plan = planner.plan_from_devices(_without_vgpu(_state(extra={uuid: child})), ROOT, report, foreign=FOREIGN,
                                     layout_options={'pci': {'enabled': True}})
    # (the root gets nova 34's marks with them: this plan moves nothing, so no reshape carries them)
    assert plan['set_traits'] == [{'name': 'cn1_0000:3B:00.0', 'uuid': uuid,
                                   'traits': ['COMPUTE_MANAGED_PCI_DEVICE', 'CUSTOM_FAST', 'OWNER_NOVA']},
                                  {'name': 'cn1', 'uuid': ROOT, 'traits': ['COMPUTE_NODE', 'OWNER_NOVA']}]
    assert plan['status'] == 'planned' and plan['inventory_changes'] == [] and plan['root_traits'] is None
    assert plan['providers'][ROOT]['traits'] == ['COMPUTE_NODE', 'OWNER_NOVA']


def test_a_reshape_marks_the_root_as_nova_34_does_after_its_moves():
    """nova 34 marks every compute node COMPUTE_NODE + OWNER_NOVA: a plan that reshapes the node adds
    the marks its root lacks in the root's trait change after the reshape (kept: the root's own traits),
    a noop plan adds nothing, and a root that has them gets no trait change."""
    state = _state()
    plan = planner.plan_from_devices(state, ROOT, _report(), foreign=FOREIGN)
    assert plan['status'] == 'planned' and plan['allocations']
    assert plan['root_traits'] == {'uuid': ROOT, 'name': 'cn1', 'before': [],
                                   'after': ['COMPUTE_NODE', 'OWNER_NOVA']}
    assert ROOT not in [t['uuid'] for t in plan['set_traits']]
    assert plan['providers'][ROOT]['traits'] == ['COMPUTE_NODE', 'OWNER_NOVA']
    done = apply(state, plan)
    done['providers'][ROOT]['traits'] = plan['root_traits']['after']
    assert planner.plan_from_devices(done, ROOT, _report(), foreign=FOREIGN)['status'] == 'noop'
    marked = _state()
    marked['providers'][ROOT]['traits'] = ['COMPUTE_NODE', 'CUSTOM_RACK_7', 'OWNER_NOVA']
    again = planner.plan_from_devices(marked, ROOT, _report(), foreign=FOREIGN)
    assert again['status'] == 'planned' and again['root_traits'] is None
    # a node with nothing to write is not written for the marks alone
    bare = _without_vgpu(_state())
    assert planner.plan_from_devices(bare, ROOT, {}, foreign=FOREIGN)['status'] == 'noop'


def test_a_plan_told_the_service_is_disabled_marks_the_root_as_nova_reports_it():
    """nova reports COMPUTE_STATUS_DISABLED on the root of a disabled service (resource tracker
    _sync_compute_service_disabled_trait): a plan told so (the roll disabled it) adds the trait with
    the other marks when it writes, keeps it when the root has it, and still writes nothing for it alone."""
    state = _state()
    plan = planner.plan_from_devices(state, ROOT, _report(), foreign=FOREIGN, service_disabled=True)
    assert plan['status'] == 'planned' and plan['allocations']
    assert plan['root_traits'] == {'uuid': ROOT, 'name': 'cn1', 'before': [],
                                   'after': ['COMPUTE_NODE', 'COMPUTE_STATUS_DISABLED', 'OWNER_NOVA']}
    # told nothing, the plan adds only nova 34's marks (the trait is nova's to set)
    assert planner.plan_from_devices(state, ROOT, _report(), foreign=FOREIGN)['root_traits']['after'] == [
        'COMPUTE_NODE', 'OWNER_NOVA']
    done = apply(state, plan)
    done['providers'][ROOT]['traits'] = plan['root_traits']['after']
    assert planner.plan_from_devices(done, ROOT, _report(), foreign=FOREIGN, service_disabled=True)['status'] == 'noop'
    # a root that has them all gets no trait change; a node with nothing to write is not written for it
    marked = _state()
    marked['providers'][ROOT]['traits'] = ['COMPUTE_NODE', 'COMPUTE_STATUS_DISABLED', 'OWNER_NOVA']
    assert planner.plan_from_devices(marked, ROOT, _report(), foreign=FOREIGN,
                                     service_disabled=True)['root_traits'] is None
    bare = _without_vgpu(_state())
    assert planner.plan_from_devices(bare, ROOT, {}, foreign=FOREIGN, service_disabled=True)['status'] == 'noop'


def test_numa_source_is_stable_across_the_reshape():
    report = _report()
    report['numa_cells'] = [{'id': 0, 'cpus': list(range(8)), 'memory_mb': 65000},
                            {'id': 1, 'cpus': list(range(8, 16)), 'memory_mb': 65000}]
    options = {'numa': {'enabled': True}}
    state = _state()
    plan = planner.plan_from_devices(state, ROOT, report, options, policy='pack', foreign=FOREIGN)
    n0 = _uuid_of(plan, 'cn1_NUMA0')
    assert plan['providers'][n0]['inventories']['VCPU']['total'] == 32
    assert plan['providers'][n0]['inventories']['MEMORY_MB']['reserved'] == 256
    assert plan['providers'][ROOT]['inventories'] == {}
    done = apply(state, plan)
    source = planner.numa_source(done, ROOT, report, options)
    assert source['VCPU']['total'] == 64 and source['MEMORY_MB']['reserved'] == 512
    again = planner.plan_from_devices(done, ROOT, report, options, policy='pack', foreign=FOREIGN)
    assert again['status'] == 'noop'


def test_numa_with_explicit_ownership_is_strict():
    report = _report()
    report['numa_cells'] = [{'id': 0, 'cpus': [0, 1], 'memory_mb': 1000}, {'id': 1, 'cpus': [2, 3], 'memory_mb': 1000}]
    options = {'numa': {'enabled': True, 'resource_classes': ['VCPU']}}
    own = {I1: {'NUMA1': {'VCPU': 2}}, I2: {'NUMA0': {'VCPU': 2}}, I3: {'NUMA0': {'VCPU': 1}}}
    plan = planner.plan_from_devices(_state(), ROOT, report, options, ownership_overrides=own, foreign=FOREIGN)
    assert plan['assignments'][I1]['VCPU']['to'] == {'cn1_NUMA1': 2}
    assert plan['assignments'][I3]['VCPU']['to'] == {'cn1_NUMA0': 1}
    assert 'MEMORY_MB' in plan['providers'][ROOT]['inventories']


# -- rollback planning ----------------------------------------------------------------

def _snap(state):
    return {'root': {'uuid': ROOT, 'name': 'cn1'}, 'state': copy.deepcopy(state),
            'layout_children': [CHILD_A, CHILD_B]}


def test_rollback_plan_reverses_the_reshape():
    state = _state()
    first = _plan(state)
    with_children = copy.deepcopy(state)
    for child in first['create_children']:
        with_children['providers'][child['uuid']] = _prov(child['uuid'], child['name'], {}, parent=ROOT,
                                                          generation=0)
    snap = _snap(with_children)
    done = apply(state, first)
    rplan = rollback.plan_rollback(done, snap)
    assert rplan['status'] == 'planned'
    a = layout.child_uuid(ROOT, CHILD_A)
    assert rplan['inventories'][a]['inventories'] == {}
    assert 'VGPU' in rplan['inventories'][ROOT]['inventories']
    assert rplan['allocations'][I1]['allocations'] == allocation_rules.strip_allocations(state['allocations'][I1]['allocations'])
    assert sorted(rplan['restored']) == [I1, I2, I3] and rplan['remove_children'] == []
    assert rplan['diff']['after']['consumers'][I1]['cn1'] == {'VCPU': 2, 'VGPU': 2}
    body = rollback.rollback_body(rplan)
    assert set(body['allocations']) == {I1, I2, I3}
    removing = rollback.plan_rollback(done, snap, remove_children=True)
    assert sorted(c['name'] for c in removing['remove_children']) == [CHILD_A, CHILD_B]
    # already rolled back: nothing to do, unless removal was asked
    assert rollback.plan_rollback(with_children, snap)['status'] == 'noop'
    assert rollback.plan_rollback(with_children, snap, remove_children=True)['status'] == 'planned'
    assert rollback.rollback_body(rollback.plan_rollback(with_children, snap, remove_children=True)) is None


def _with_children(state, plan):
    new = copy.deepcopy(state)
    for child in plan['create_children']:
        new['providers'][child['uuid']] = _prov(child['uuid'], child['name'], {}, parent=ROOT, generation=0)
    return new


def test_rollback_plan_refuses_changed_and_new_consumers():
    state = _state()
    plan = _plan(state)
    done = apply(state, plan)
    snap = _snap(_with_children(state, plan))
    a = layout.child_uuid(ROOT, CHILD_A)
    changed = copy.deepcopy(done)
    changed['allocations'][I3]['allocations'][ROOT]['resources']['VCPU'] = 4      # resized
    with pytest.raises(planner.PlanError) as info:
        rollback.plan_rollback(changed, snap)
    assert info.value.consumers == [I3] and 'changed since the snapshot' in info.value.detail
    newer = copy.deepcopy(done)
    newer['allocations'][I4] = _alloc({a: {'VGPU': 1}})
    with pytest.raises(planner.PlanError) as info:
        rollback.plan_rollback(newer, snap)
    assert info.value.consumers == [I4] and 'created after the snapshot' in info.value.detail
    # with a snapshot that predates the children, they are not part of the rollback:
    # their inventory stays and so does the newer consumer
    older = rollback.plan_rollback(newer, _snap(state))
    assert a not in older['inventories'] and I4 not in older['allocations']
    # a new consumer that only uses what the snapshot also has is left alone
    fine = copy.deepcopy(done)
    fine['allocations'][I4] = _alloc({ROOT: {'VCPU': 1}})
    rplan = rollback.plan_rollback(fine, snap)
    assert I4 not in rplan['allocations'] and rplan['status'] == 'planned'


def test_rollback_body_names_a_provider_even_when_only_consumers_move():
    state = _state()
    reshaped = apply(state, _plan(state))
    snap = _snap(reshaped)
    a, b = layout.child_uuid(ROOT, CHILD_A), layout.child_uuid(ROOT, CHILD_B)
    moved = copy.deepcopy(reshaped)                   # I2's unit on A moved to B by hand
    i2 = moved['allocations'][I2]['allocations']
    i2.pop(a)
    i2[b]['resources']['VGPU'] = 2
    _recount(moved)
    rplan = rollback.plan_rollback(moved, snap)
    assert rplan['status'] == 'planned' and list(rplan['allocations']) == [I2]
    body = rollback.rollback_body(rplan)
    # Placement's reshaper schema needs at least one provider: the root, unchanged
    assert list(body['inventories']) == [ROOT]
    assert body['inventories'][ROOT]['inventories'] == planner.norm_inventories(reshaped['providers'][ROOT]['inventories'])
    assert body['allocations'][I2]['allocations'][a] == {'resources': {'VGPU': 1}}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=3), st.integers(min_value=0, max_value=3)),
                min_size=1, max_size=6))
def test_any_owned_node_plans_then_is_a_noop(holdings):
    """Property: whatever mdevs the guests hold, the plan conserves every consumer's
    totals, puts each consumer on the GPUs it owns, and the rerun is a no-op."""
    consumers = ['%08d-0000-4000-8000-000000000000' % (i + 1) for i in range(len(holdings))]
    report = _report(a_avail=2, b_avail=2)
    for gpu in report['gpus']:
        gpu['mdevs'] = []
    allocations = {}
    for consumer, (on_a, on_b) in zip(consumers, holdings):
        for gpu, count in ((report['gpus'][0], on_a), (report['gpus'][1], on_b)):
            for i in range(count):
                gpu['mdevs'].append({'uuid': '%s-%s-%d' % (consumer, gpu['address'], i),
                                     'type': 'nvidia-222', 'instance_uuid': consumer})
        allocs = {ROOT: {'VCPU': 1}}
        if on_a + on_b:
            allocs[ROOT]['VGPU'] = on_a + on_b
        allocations[consumer] = _alloc(allocs)
    total = sum(a + b for a, b in holdings) + 4
    state = _state(vgpu_total=total, allocations=allocations)
    plan = _plan(state, report=report)
    done = apply(state, plan)
    for consumer, (on_a, on_b) in zip(consumers, holdings):
        before = allocation_rules.consumer_totals(allocation_rules.strip_allocations(state['allocations'][consumer]['allocations']))
        after = allocation_rules.consumer_totals(allocation_rules.strip_allocations(done['allocations'][consumer]['allocations']))
        assert before == after
        allocs = done['allocations'][consumer]['allocations']
        a, b = layout.child_uuid(ROOT, CHILD_A), layout.child_uuid(ROOT, CHILD_B)
        assert allocs.get(a, {}).get('resources', {}).get('VGPU', 0) == on_a
        assert allocs.get(b, {}).get('resources', {}).get('VGPU', 0) == on_b
    assert _plan(done, report=report)['status'] == 'noop'


def test_root_vgpu_that_the_layout_moves_nowhere_is_refused_without_nova_conf():
    """issue 26: a plan without nova.conf left the root's VGPU behind (noop, or planned for other
    kinds); nova 34 moves it to pGPU children or drops it (InventoryInUse while held)."""
    report = {'pci_devices': [{'address': '0000:3b:00.0', 'vendor_id': '10de', 'product_id': '25b6',
                               'instance_uuid': None}]}
    for options in ({'pci': {'enabled': True}}, None):
        with pytest.raises(planner.PlanError) as info:
            planner.plan_from_devices(_state(), ROOT, report if options else {}, foreign=FOREIGN,
                                      layout_options=options)
        text = str(info.value)
        assert 'VGPU' in text and 'no nova.conf was read' in text and 'enabled_mdev_types' in text, text
        assert 'Missing input' in text and 'Nothing was changed' in text, text
        assert info.value.consumers == sorted([I1, I2, I3])
