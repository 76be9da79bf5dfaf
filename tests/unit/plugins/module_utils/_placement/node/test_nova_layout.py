# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nova-34-exact layouts the core builds when a node's nova.conf is known.

Every test names the nova 34.0.0 function whose rule it pins
(nova/virt/libvirt/driver.py and nova/compute/pci_placement_translator.py).
The reports come from fake hosts (tools/fakehost.py) discovered with their
nova.conf (``report_for(..., nova=True)``); plans are made on the embedded store.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import layout
from ansible_collections.placement.upgrade.plugins.module_utils._placement.rules import allocations as allocation_rules
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import planner
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state

from test_reshaper_support import (
    PROJECT,
    USER,
    child_named,
    comparable,
    consumers_by_name,
    fakehost,
    flat_gpu_node,
    make_provider,
    put,
    put_untyped,
    report_for,
    Wrapper,
)

GPU_A, GPU_B, GPU_C = '0000:84:00.0', '0000:85:00.0', '0000:86:00.0'
NOVA_PCI_TRAITS = ['COMPUTE_MANAGED_PCI_DEVICE', 'OWNER_NOVA']
VF_CLASS = 'CUSTOM_PCI_8086_154C'
A2_CLASS = 'CUSTOM_PCI_10DE_25B6'


def _by_name(lay):
    return dict((c['name'], c) for c in lay['children'])


def _nova_gpu_inventory(total):
    """The record nova's _get_gpu_inventories gives a pGPU."""
    return {'total': total, 'min_unit': 1, 'max_unit': total, 'step_size': 1, 'reserved': 0,
            'allocation_ratio': 1.0}


def _rewrite_untyped(backend, root, consumer):
    """Re-create ``consumer`` as nova 34 writes it: without a consumer_type (1.37 form)."""
    allocs = allocation_rules.strip_allocations(backend.get_allocations(consumer)['allocations'])
    backend.delete_allocations(consumer)
    put_untyped(backend, root, consumer, allocs)


def _retype(backend, consumer, consumer_type):
    allocs = allocation_rules.strip_allocations(backend.get_allocations(consumer)['allocations'])
    put(backend, consumer, allocs, consumer_type=consumer_type)


# -- 1. one mdev type ------------------------------------------------------------------------------

def test_one_mdev_type_gives_one_vgpu_child_per_gpu_with_mdevs_plus_available(tmp_path):
    """driver.py _get_gpu_inventories: total = mdevs of the GPU's type (_count_mediated_devices,
    only enabled types) + available_instances of that type (_count_mdev_capable_devices);
    _ensure_pgpu_providers: child '<node>_pci_0000_84_00_0', class VGPU, trait OWNER_NOVA."""
    spec = fakehost.default_gpu_host(name='cn')
    for gpu in spec['gpus']:
        # available_instances written as is, so total != max_instances by accident
        gpu['mdev_types'] = {'nvidia-222': {'name': 'GRID T4-2Q', 'available_instances': 2},
                             'nvidia-223': {'name': 'GRID T4-4Q', 'available_instances': 1}}
    # an mdev of a type nova.conf does not enable is not counted
    spec['gpus'][0]['mdevs'].append({'type': 'nvidia-223', 'holder': None})
    report = report_for(tmp_path, spec, nova=True)
    assert report['nova_conf']['devices']['enabled_mdev_types'] == ['nvidia-222']

    lay = layout.build_layout('cn', report)
    kids = _by_name(lay)
    assert sorted(kids) == ['cn_pci_0000_84_00_0', 'cn_pci_0000_85_00_0']
    a, b = kids['cn_pci_0000_84_00_0'], kids['cn_pci_0000_85_00_0']
    assert a['inventories'] == {'VGPU': _nova_gpu_inventory(3 + 2)}      # 3 nvidia-222 mdevs + 2
    assert b['inventories'] == {'VGPU': _nova_gpu_inventory(2 + 2)}
    for child, address in ((a, GPU_A), (b, GPU_B)):
        assert child['traits'] == ['OWNER_NOVA']
        assert child['device'] == address and child['kind'] == 'gpu'
        assert child['mdev_type'] == 'nvidia-222'
    assert lay['classes'] == ['VGPU']
    assert lay['remove'] == []
    assert lay['nova']['files'] == report['nova_conf']['files']


# -- 2. several mdev types --------------------------------------------------------------------------

def test_multi_type_host_classes_and_max_instances(tmp_path):
    """driver.py _get_supported_vgpu_types (default type, mdev_class per device_address) and
    _get_gpu_inventories (max_instances: a GPU whose available mdevs would pass the limit gets
    total 0, which _ensure_pgpu_providers turns into no provider)."""
    report = report_for(tmp_path, fakehost.multi_type_gpu_host(name='cn'), nova=True)
    lay = layout.build_layout('cn', report)
    kids = _by_name(lay)
    assert sorted(kids) == ['cn_pci_0000_84_00_0', 'cn_pci_0000_85_00_0']
    a, b = kids['cn_pci_0000_84_00_0'], kids['cn_pci_0000_85_00_0']
    # GPU A: nvidia-222 is the default type (no device_addresses), class VGPU: 2 mdevs + 6
    assert a['inventories'] == {'VGPU': _nova_gpu_inventory(8)}
    assert a['mdev_type'] == 'nvidia-222'
    # GPU B: listed under [mdev_nvidia-223], mdev_class CUSTOM_T4_4Q: 1 mdev + 3 (4 <= 5)
    assert b['inventories'] == {'CUSTOM_T4_4Q': _nova_gpu_inventory(4)}
    assert b['mdev_type'] == 'nvidia-223' and b['traits'] == ['OWNER_NOVA']
    # GPU C: 4 more on top of B's 4 passes max_instances = 5: no child, and one to remove
    assert lay['remove'] == ['cn_pci_0000_86_00_0']
    assert any('0000:86:00.0' in w and 'max_instances' in w for w in lay['warnings'])
    assert lay['classes'] == ['CUSTOM_T4_4Q', 'VGPU']


def test_default_type_is_the_first_enabled_type_without_device_addresses(tmp_path):
    """driver.py _get_supported_vgpu_types: the FIRST enabled type without
    [mdev_<type>]device_addresses becomes pgpu_type_default (a later one is dropped from the
    supported types); _get_resource_class_for_device: mdev_class defaults to VGPU."""
    types = {'nvidia-222': {'name': 'GRID T4-2Q', 'available_instances': 5},
             'nvidia-223': {'name': 'GRID T4-4Q', 'available_instances': 3},
             'nvidia-224': {'name': 'GRID T4-8Q', 'available_instances': 2}}
    spec = {
        'hostname': 'cn',
        'gpus': [
            {'address': GPU_A, 'mdev_types': types, 'mdevs': [{'type': 'nvidia-222', 'holder': 'instance-1'}]},
            {'address': GPU_B, 'mdev_types': types, 'mdevs': [{'type': 'nvidia-223', 'holder': 'instance-2'}]},
            {'address': GPU_C, 'mdev_types': types, 'mdevs': [{'type': 'nvidia-224', 'holder': None}]},
        ],
        'nova_conf': {
            'devices': {'enabled_mdev_types': 'nvidia-223,nvidia-222,nvidia-224'},
            'mdev_nvidia-222': {'device_addresses': GPU_A},
            # no device_addresses either, but nvidia-223 came first: ignored, class never used
            'mdev_nvidia-224': {'mdev_class': 'CUSTOM_T4_8Q'},
        },
    }
    report = report_for(tmp_path, spec, nova=True)
    lay = layout.build_layout('cn', report)
    kids = _by_name(lay)
    assert sorted(kids) == ['cn_pci_0000_84_00_0', 'cn_pci_0000_85_00_0', 'cn_pci_0000_86_00_0']
    a, b, c = (kids['cn_pci_0000_84_00_0'], kids['cn_pci_0000_85_00_0'],
               kids['cn_pci_0000_86_00_0'])
    assert (a['mdev_type'], b['mdev_type'], c['mdev_type']) == ('nvidia-222', 'nvidia-223', 'nvidia-223')
    assert a['inventories'] == {'VGPU': _nova_gpu_inventory(1 + 5)}
    assert b['inventories'] == {'VGPU': _nova_gpu_inventory(1 + 3)}
    # C's nvidia-224 mdev is not of C's type (nvidia-223): only the 3 available count
    assert c['inventories'] == {'VGPU': _nova_gpu_inventory(3)}
    assert lay['classes'] == ['VGPU']          # CUSTOM_T4_8Q of the ignored type appears nowhere
    assert any('nvidia-224' in w for w in lay['warnings'])


def test_max_instances_is_applied_in_gpu_address_order(tmp_path):
    """driver.py _get_gpu_inventories walks the mdev-capable devices in libvirt's listing
    (address) order and caps type_limit_mapping there: whatever order the report lists the
    GPUs in, B (0000:85) keeps its inventory and C (0000:86) is the one left with 0."""
    report = report_for(tmp_path, fakehost.multi_type_gpu_host(name='cn'), nova=True)
    nova = report['nova_conf']
    expected = {GPU_A: ('nvidia-222', 'VGPU', 8), GPU_B: ('nvidia-223', 'CUSTOM_T4_4Q', 4),
                GPU_C: ('nvidia-223', 'CUSTOM_T4_4Q', 0)}
    for gpus in (report['gpus'], list(reversed(report['gpus']))):
        got = layout.nova_gpu_inventories(gpus, nova, [])
        assert [g['address'] for g, _t, _rc, _n in got] == [GPU_A, GPU_B, GPU_C]
        assert dict((g['address'], (t, rc, n)) for g, t, rc, n in got) == expected
    shuffled = dict(report, gpus=[report['gpus'][2], report['gpus'][0], report['gpus'][1]])
    assert layout.build_layout('cn', shuffled)['children'] == layout.build_layout('cn', report)['children']


def test_multi_type_reshape_moves_root_vgpu_into_each_gpus_class(embedded_backend, tmp_path):
    """driver.py _update_provider_tree / _reshape_vgpu_allocations with per-device classes:
    a guest's mdev on a CUSTOM_T4_4Q GPU is allocated as CUSTOM_T4_4Q on that GPU's child."""
    backend = embedded_backend
    report = report_for(tmp_path / 'host', fakehost.multi_type_gpu_host(name='cn'), nova=True)
    node = flat_gpu_node(backend, 'cn', report)
    result = reshaper.reshape_node(backend, 'cn', report, snapshot_dir=str(tmp_path / 'snap'))
    assert result['status'] == 'reshaped'
    assert result['verified'] is True, result['verification']
    a = child_named(backend, 'cn_pci_0000_84_00_0')
    b = child_named(backend, 'cn_pci_0000_85_00_0')
    assert backend.list_providers(name='cn_pci_0000_86_00_0') == []
    assert backend.get_inventories(a['uuid'])['inventories']['VGPU']['total'] == 8
    assert backend.get_inventories(b['uuid'])['inventories']['CUSTOM_T4_4Q']['total'] == 4
    assert sorted(backend.get_provider_traits(b['uuid'])['traits']) == ['OWNER_NOVA']
    assert 'VGPU' not in backend.get_inventories(node['root'])['inventories']
    names = consumers_by_name(report)
    one = backend.get_allocations(names['instance-00000021'])['allocations']
    two = backend.get_allocations(names['instance-00000022'])['allocations']
    assert one[a['uuid']]['resources'] == {'VGPU': 1}
    assert two[a['uuid']]['resources'] == {'VGPU': 1}
    assert two[b['uuid']]['resources'] == {'CUSTOM_T4_4Q': 1}
    for allocs in (one, two):
        assert allocs[node['root']]['resources'] == {'VCPU': 2, 'MEMORY_MB': 2048}
    assert reshaper.reshape_node(backend, 'cn', report, snapshot_dir=str(tmp_path / 'snap'))['status'] == 'noop'


def test_existing_provider_of_a_gpu_left_with_no_inventory_stops_the_plan(embedded_backend, tmp_path):
    """driver.py _ensure_pgpu_providers: a pGPU whose total is 0 has its provider REMOVED by
    nova on its first start; the planner refuses rather than leave that to nova."""
    backend = embedded_backend
    report = report_for(tmp_path / 'host', fakehost.multi_type_gpu_host(name='cn'), nova=True)
    node = flat_gpu_node(backend, 'cn', report)
    make_provider(backend, 'cn_pci_0000_86_00_0', parent=node['root'])
    before = comparable(provider_tree_state(backend, node['root']))
    with pytest.raises(planner.PlanError) as info:
        reshaper.reshape_node(backend, 'cn', report, snapshot_dir=str(tmp_path / 'snap'))
    assert 'cn_pci_0000_86_00_0' in info.value.detail
    assert 'Nothing was changed' in info.value.detail
    assert comparable(provider_tree_state(backend, node['root'])) == before


# -- 3. PCI with report_in_placement False ----------------------------------------------------------

@pytest.mark.parametrize('setting', ['unset', False])
def test_pci_is_not_reported_in_placement_by_default(tmp_path, setting):
    """pci_placement_translator.py update_provider_tree_for_pci: with [pci]report_in_placement
    False (nova/conf/pci.py default) nova touches nothing: no PCI provider at all."""
    spec = fakehost.default_sriov_host(name='cn', report_in_placement=False)
    if setting == 'unset':
        del spec['nova_conf']['pci']['report_in_placement']
    report = report_for(tmp_path, spec, nova=True)
    assert report['nova_conf']['pci']['report_in_placement'] is False
    # the devices are in the report (device_spec matches them) ...
    assert [d['address'] for d in report['pci_devices']] == ['0000:3b:00.0']
    assert len(report['sriov_pfs'][0]['vfs']) == 4
    # ... yet nova 34 reports none of them
    lay = layout.build_layout('cn', report)
    assert lay['children'] == [] and lay['classes'] == [] and lay['remove'] == []
    assert lay['nova']['pci_in_placement'] is False


def test_plan_stops_when_pci_tracking_was_enabled_before(embedded_backend, tmp_path):
    """pci_placement_translator.py ensure_tracking_was_not_enabled_before: with
    report_in_placement False, any provider with COMPUTE_MANAGED_PCI_DEVICE makes nova 34
    refuse to start ("Nova does not support disabling it after it is enabled")."""
    backend = embedded_backend
    report = report_for(tmp_path / 'host', fakehost.default_sriov_host(name='cn', report_in_placement=False),
                        nova=True)
    backend.ensure_resource_class(VF_CLASS)
    root = make_provider(backend, 'cn', {'VCPU': {'total': 16}})
    make_provider(backend, 'cn_0000:81:00.0', {VF_CLASS: {'total': 4, 'max_unit': 4}},
                  traits=NOVA_PCI_TRAITS, parent=root)
    before = comparable(provider_tree_state(backend, root))
    with pytest.raises(planner.PlanError) as info:
        reshaper.reshape_node(backend, 'cn', report, snapshot_dir=str(tmp_path / 'snap'))
    detail = info.value.detail
    assert 'cn_0000:81:00.0' in detail and 'COMPUTE_MANAGED_PCI_DEVICE' in detail
    assert 'report_in_placement' in detail
    assert report['nova_conf']['files'][0] in detail
    assert 'Nothing was changed' in detail
    assert comparable(provider_tree_state(backend, root)) == before
    # the trait is what decides: the same child without it does not stop the plan
    root2 = make_provider(backend, 'cn2', {'VCPU': {'total': 16}})
    make_provider(backend, 'cn2_0000:81:00.0', {VF_CLASS: {'total': 4, 'max_unit': 4}},
                  traits=['OWNER_NOVA'], parent=root2)
    state, foreign = reshaper.read_node(backend, root2)
    assert planner.plan_from_devices(state, root2, report, foreign=foreign)['status'] == 'noop'
    # nova looks at every provider of the tree, the root included
    root3 = make_provider(backend, 'cn3', {'VCPU': {'total': 16}}, traits=['COMPUTE_MANAGED_PCI_DEVICE'])
    state, foreign = reshaper.read_node(backend, root3)
    with pytest.raises(planner.PlanError) as info:
        planner.plan_from_devices(state, root3, report, foreign=foreign)
    assert 'cn3' in info.value.detail and 'report_in_placement' in info.value.detail


# -- 4. PCI with report_in_placement True -----------------------------------------------------------

def test_pci_in_placement_one_provider_per_device_and_per_pf(tmp_path):
    """pci_placement_translator.py PlacementView: a type-PCI device is one provider, the VFs
    of a PF share one provider named after the PF (_get_rp_name_for_child); names are
    '<node>_<ADDRESS upper-cased>' (_get_rp_name_for_address); class
    CUSTOM_PCI_<VENDOR>_<PRODUCT> (get_resource_class); total = max_unit = device count
    (_get_inventories); traits COMPUTE_MANAGED_PCI_DEVICE (_get_traits_for_dev) + OWNER_NOVA."""
    report = report_for(tmp_path, fakehost.default_sriov_host(name='cn'), nova=True)
    lay = layout.build_layout('cn', report)
    kids = _by_name(lay)
    assert sorted(kids) == ['cn_0000:3B:00.0', 'cn_0000:81:00.0']
    a2, pf = kids['cn_0000:3B:00.0'], kids['cn_0000:81:00.0']
    assert a2['inventories'] == {A2_CLASS: {'total': 1, 'max_unit': 1}}
    assert a2['kind'] == 'pci' and a2['device'] == '0000:3b:00.0'
    # the PF (8086:1572) is not in device_spec; its 4 enabled VFs (8086:154c) are
    assert pf['inventories'] == {VF_CLASS: {'total': 4, 'max_unit': 4}}
    assert pf['kind'] == 'sriov' and pf['device'] == '0000:81:00.0'
    for child in (a2, pf):
        assert child['traits'] == NOVA_PCI_TRAITS
        # nova leaves reserved / allocation_ratio / min_unit / step_size to Placement
        assert set(child['inherit']) == {'reserved', 'allocation_ratio', 'min_unit', 'step_size'}
    assert lay['classes'] == [A2_CLASS, VF_CLASS]
    assert lay['nova']['pci_in_placement'] is True


def test_pci_providers_follow_device_spec_tags_physnet_and_unmatched_devices(tmp_path):
    """pci_placement_translator.py: _get_rc_for_dev (resource_class tag, normalised to
    CUSTOM_*), _get_traits_for_dev (traits tag + COMPUTE_MANAGED_PCI_DEVICE, then OWNER_NOVA
    in update_provider_tree), _add_dev (physical_network tagged devices are left out),
    update_provider_tree_for_pci (devices without a device_spec match are not in the view)."""
    spec = fakehost.default_sriov_host(name='cn')
    spec['sriov_pfs'] += [
        # Neutron SR-IOV PF: its VFs (and the PF itself) are physnet-tagged
        {'address': '0000:82:00.0', 'vendor_id': '8086', 'product_id': '1572', 'vf_product_id': '154c',
         'total_vfs': 4, 'num_vfs': 2},
        # a PF with lower-case hex in its address and tagged VFs
        {'address': '0000:af:00.0', 'vendor_id': '8086', 'product_id': '1572', 'vf_product_id': '154c',
         'total_vfs': 4, 'num_vfs': 2},
    ]
    # a device the operator's pci_filters report but no device_spec names
    spec['pci_devices'].append({'address': '0000:5e:00.0', 'vendor_id': '15b3', 'product_id': '1017',
                                'class_id': '020000'})
    spec['nova_conf']['pci']['device_spec'] = [
        '{"address": "0000:82:*.*", "physical_network": "physnet1"}',
        '{"address": "0000:af:*.*", "vendor_id": "8086", "product_id": "154c", '
        '"resource_class": "nic_gold", "traits": "gold,CUSTOM_FAST"}',
    ] + spec['nova_conf']['pci']['device_spec']
    report = report_for(tmp_path, spec, pci_filters=[{'vendor_id': '15b3'}], nova=True)
    assert '0000:5e:00.0' in [d['address'] for d in report['pci_devices']]
    assert sorted(pf['address'] for pf in report['sriov_pfs']) == ['0000:81:00.0', '0000:82:00.0', '0000:af:00.0']

    lay = layout.build_layout('cn', report)
    kids = _by_name(lay)
    # no provider for the physnet PF 0000:82 nor for the unmatched 0000:5e:00.0
    assert sorted(kids) == ['cn_0000:3B:00.0', 'cn_0000:81:00.0', 'cn_0000:AF:00.0']
    gold = kids['cn_0000:AF:00.0']
    assert gold['inventories'] == {'CUSTOM_NIC_GOLD': {'total': 2, 'max_unit': 2}}
    assert gold['traits'] == ['COMPUTE_MANAGED_PCI_DEVICE', 'CUSTOM_FAST', 'CUSTOM_GOLD', 'OWNER_NOVA']
    assert gold['device'] == '0000:af:00.0'
    # untagged devices keep the vendor/product class and exactly nova's two traits
    assert kids['cn_0000:81:00.0']['inventories'] == {VF_CLASS: {'total': 4, 'max_unit': 4}}
    assert kids['cn_0000:81:00.0']['traits'] == NOVA_PCI_TRAITS
    assert kids['cn_0000:3B:00.0']['traits'] == NOVA_PCI_TRAITS
    assert any('0000:82' in w and 'physical_network' in w for w in lay['warnings'])
    assert lay['classes'] == sorted([A2_CLASS, 'CUSTOM_NIC_GOLD', VF_CLASS])


def test_pci_provider_traits_are_set_exactly(embedded_backend, tmp_path):
    """pci_placement_translator.py PciResourceProvider.update_provider_tree:
    provider_tree.update_traits(name, self.traits) REPLACES the trait set (then adds
    OWNER_NOVA): a trait set by hand on a nova PCI provider does not survive."""
    backend = embedded_backend
    report = report_for(tmp_path / 'host', fakehost.default_sriov_host(name='cn'), nova=True)
    backend.ensure_resource_class(A2_CLASS)
    backend.ensure_trait('CUSTOM_STALE')
    root = make_provider(backend, 'cn', {'VCPU': {'total': 16}})
    a2 = make_provider(backend, 'cn_0000:3B:00.0', {A2_CLASS: {'total': 1, 'max_unit': 1}},
                       traits=NOVA_PCI_TRAITS + ['CUSTOM_STALE'], parent=root)
    state, foreign = reshaper.read_node(backend, root)
    plan = planner.plan_from_devices(state, root, report, foreign=foreign)
    assert plan['status'] == 'planned'
    assert [c['name'] for c in plan['create_children']] == ['cn_0000:81:00.0']
    assert [t for t in plan['set_traits'] if t['uuid'] == a2] == [
        {'name': 'cn_0000:3B:00.0', 'uuid': a2, 'traits': NOVA_PCI_TRAITS}]
    assert plan['providers'][a2]['traits'] == NOVA_PCI_TRAITS


def test_pci_allocations_are_healed_in_the_same_reshape(embedded_backend, tmp_path):
    """pci_placement_translator.py PciResourceProvider.update_allocations (healing): every
    instance holding a device gets an allocation of the provider's class on that provider.
    The reshape does it with the tree change, so nova finds nothing left to heal."""
    backend = embedded_backend
    report = report_for(tmp_path / 'host', fakehost.default_sriov_host(name='cn'), nova=True)
    root = make_provider(backend, 'cn', {'VCPU': {'total': 16}, 'MEMORY_MB': {'total': 65536}})
    holders = {}
    for pf in report['sriov_pfs']:
        for vf in pf['vfs']:
            if vf['instance_uuid']:
                holders[vf['instance_uuid']] = ('cn_0000:81:00.0', VF_CLASS)
    for dev in report['pci_devices']:
        holders[dev['instance_uuid']] = ('cn_0000:3B:00.0', A2_CLASS)
    assert len(holders) == 3
    for consumer in sorted(holders):
        put(backend, consumer, {root: {'resources': {'VCPU': 2, 'MEMORY_MB': 2048}}})

    state, foreign = reshaper.read_node(backend, root)
    plan = planner.plan_from_devices(state, root, report, foreign=foreign)
    assert sorted(plan['allocations']) == sorted(holders)
    for consumer, (name, rc) in holders.items():
        assert plan['assignments'][consumer][rc]['how'] == 'pci-heal'
        assert plan['assignments'][consumer][rc]['to'] == {name: 1}

    result = reshaper.reshape_node(backend, 'cn', report, snapshot_dir=str(tmp_path / 'snap'))
    assert result['status'] == 'reshaped'
    assert result['verified'] is True, result['verification']
    children = dict((n, child_named(backend, n)['uuid']) for n in ('cn_0000:81:00.0', 'cn_0000:3B:00.0'))
    for consumer, (name, rc) in holders.items():
        allocs = backend.get_allocations(consumer)['allocations']
        assert allocs[children[name]]['resources'] == {rc: 1}
        assert allocs[root]['resources'] == {'VCPU': 2, 'MEMORY_MB': 2048}
    assert backend.get_usages(children['cn_0000:81:00.0'])['usages'] == {VF_CLASS: 2}
    assert backend.get_usages(children['cn_0000:3B:00.0'])['usages'] == {A2_CLASS: 1}
    # nothing left for nova: a second run has nothing to do
    again = reshaper.reshape_node(backend, 'cn', report, snapshot_dir=str(tmp_path / 'snap'))
    assert again['status'] == 'noop'


# -- 5. NUMA ----------------------------------------------------------------------------------------

def test_numa_layout_is_refused_when_nova_conf_is_known(embedded_backend, tmp_path):
    """driver.py update_provider_tree keeps VCPU / PCPU / MEMORY_MB on the root node
    provider: no nova release writes '<node>_NUMA<N>' children."""
    spec = fakehost.default_plain_host(name='cn')
    report = report_for(tmp_path / 'nova', spec, nova=True)
    numa = {'numa': {'enabled': True}}
    source = {'VCPU': {'total': 64}, 'MEMORY_MB': {'total': 131072}}
    with pytest.raises(layout.LayoutError) as info:
        layout.build_layout('cn', report, numa, numa_source=source)
    assert 'no nova release writes' in info.value.detail
    assert report['nova_conf']['files'][0] in info.value.detail
    # the planner refuses it too, before anything is written
    backend = embedded_backend
    root = make_provider(backend, 'cn', {'VCPU': {'total': 64}, 'MEMORY_MB': {'total': 131072}})
    state, foreign = reshaper.read_node(backend, root)
    with pytest.raises(layout.LayoutError):
        planner.plan_from_devices(state, root, report, numa, foreign=foreign)
    # under nova.conf the plain node's layout has no child at all
    assert layout.build_layout('cn', report)['children'] == []
    # without a nova.conf the same option still builds the (opt-in) NUMA layout
    bare = report_for(tmp_path / 'bare', spec, nova=False)
    assert bare['nova_conf'] is None
    assert sorted(_by_name(layout.build_layout('cn', bare, numa, numa_source=source))) == ['cn_NUMA0', 'cn_NUMA1']


# -- 6. consumer types --------------------------------------------------------------------------------

def test_reshape_under_nova_conf_keeps_every_consumer_type(embedded_backend, tmp_path):
    """driver.py _reshape_vgpu_allocations rewrites only the allocations; nova 34 writes
    consumers without a consumer_type (Placement says 'unknown'), so the reshape body names
    no consumer_type (planner.keep_type_request, microversion 1.37) and every moved consumer
    keeps the type it had."""
    backend = embedded_backend
    report = report_for(tmp_path / 'host', fakehost.default_gpu_host(name='cn'), nova=True)
    node = flat_gpu_node(backend, 'cn', report)
    names = consumers_by_name(report)
    untyped, custom, instance = (names['instance-00000001'], names['instance-00000002'],
                                 names['instance-00000003'])
    _rewrite_untyped(backend, node['root'], untyped)
    # (a MIGRATION-typed consumer would defer the node: test_inflight.py)
    _retype(backend, custom, 'CUSTOM_TENANT_TYPE')
    expected = {untyped: 'unknown', custom: 'CUSTOM_TENANT_TYPE', instance: 'INSTANCE'}
    for consumer, ctype in expected.items():
        assert backend.get_allocations(consumer)['consumer_type'] == ctype    # precondition

    # the plan's allocation requests carry no consumer_type
    state, foreign = reshaper.read_node(backend, node['root'])
    plan = planner.plan_from_devices(state, node['root'], report, foreign=foreign)
    assert plan['status'] == 'planned' and sorted(plan['allocations']) == sorted(expected)
    for consumer, request in plan['allocations'].items():
        assert 'consumer_type' not in request
        assert request['project_id'] == PROJECT and request['user_id'] == USER
        assert request['consumer_generation'] == state['allocations'][consumer]['consumer_generation']

    spy = Wrapper(backend)
    result = reshaper.reshape_node(spy, 'cn', report, snapshot_dir=str(tmp_path / 'snap'))
    assert result['status'] == 'reshaped'
    assert result['verified'] is True, result['verification']
    assert len(spy.reshape_calls) == 1
    sent = spy.reshape_calls[0]['allocations']
    assert sorted(sent) == sorted(expected)
    assert all('consumer_type' not in request for request in sent.values())

    a = child_named(backend, 'cn_pci_0000_84_00_0')['uuid']
    b = child_named(backend, 'cn_pci_0000_85_00_0')['uuid']
    moved = {untyped: {a: 2}, custom: {a: 1, b: 1}, instance: {b: 1}}
    for consumer, ctype in expected.items():
        got = backend.get_allocations(consumer)
        assert got['consumer_type'] == ctype
        assert dict((rp, e['resources']['VGPU']) for rp, e in got['allocations'].items()
                    if 'VGPU' in e['resources']) == moved[consumer]
        assert (got['project_id'], got['user_id']) == (PROJECT, USER)
