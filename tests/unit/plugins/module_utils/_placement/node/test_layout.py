# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layout policy: device report -> desired children, names and ownership."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import json
import uuid as _uuid

import pytest
from hypothesis import given, strategies as st

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import layout
from ansible_collections.placement.upgrade.plugins.module_utils._placement.rules import providers as provider_rules
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import BadRequest

from test_reshaper_support import gpu_report, report_for

I1, I2, I3 = ('11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222',
              '33333333-3333-4333-8333-333333333333')


def _gpu(address, available=4, mdevs=(), types=None):
    return {'address': address, 'vendor_id': '10de', 'product_id': '1eb8', 'numa_node': 0,
            'mdev_types': types if types is not None else {
                'nvidia-222': {'name': 'GRID T4-2Q', 'available_instances': available}},
            'mdevs': [{'uuid': str(_uuid.uuid4()), 'type': 'nvidia-222', 'instance_uuid': holder}
                      for holder in mdevs]}


def _by_name(lay):
    return dict((c['name'], c) for c in lay['children'])


def test_gpu_children_use_novas_names_and_totals(tmp_path):
    report = gpu_report(tmp_path, 'compute-01', spare_mdevs=1)
    lay = layout.build_layout('compute-01', report)
    kids = _by_name(lay)
    assert sorted(kids) == ['compute-01_pci_0000_84_00_0', 'compute-01_pci_0000_85_00_0']
    a = kids['compute-01_pci_0000_84_00_0']
    # 3 held + 1 spare mdev + 4 still available (max 8): nova's existing mdevs + available
    assert a['inventories'] == {'VGPU': {'total': 8, 'max_unit': 8}}
    assert a['device'] == '0000:84:00.0' and a['kind'] == 'gpu' and a['traits'] == ['OWNER_NOVA']
    assert a['inherit'] == ['allocation_ratio', 'reserved']
    assert lay['classes'] == ['VGPU']
    json.dumps(lay)


def test_gpu_overrides():
    report = {'gpus': [_gpu('0000:84:00.0', available=6, mdevs=[I1])]}
    lay = layout.build_layout('cn', report, {'gpu': {
        'resource_class': 'CUSTOM_VGPU_T4_2Q', 'traits': ['CUSTOM_GPU_T4'], 'reserved': 1,
        'allocation_ratio': 1.0, 'name_template': '{root}-gpu-{address_underscored}'}})
    child = lay['children'][0]
    assert child['name'] == 'cn-gpu-0000_84_00_0'
    assert child['inventories'] == {'CUSTOM_VGPU_T4_2Q': {'total': 7, 'max_unit': 7, 'reserved': 1,
                                                          'allocation_ratio': 1.0}}
    assert child['traits'] == ['CUSTOM_GPU_T4'] and child['inherit'] == []


def test_gpu_mdev_type_selection():
    types = {'nvidia-222': {'available_instances': 8}, 'nvidia-223': {'available_instances': 4}}
    report = {'gpus': [_gpu('0000:84:00.0', types=types)]}
    with pytest.raises(layout.LayoutError) as info:
        layout.build_layout('cn', report)
    assert 'mdev_types' in info.value.detail
    lay = layout.build_layout('cn', report, {'gpu': {'mdev_types': ['nvidia-223']}})
    assert lay['children'][0]['inventories']['VGPU']['total'] == 4
    # the type of the existing mdevs wins without an option
    report = {'gpus': [_gpu('0000:84:00.0', mdevs=[I1], types=types)]}
    assert layout.build_layout('cn', report)['children'][0]['inventories']['VGPU']['total'] == 9


def test_gpu_without_capacity_gets_no_child():
    lay = layout.build_layout('cn', {'gpus': [_gpu('0000:84:00.0', available=0)]})
    assert lay['children'] == []
    assert 'no capacity' in lay['warnings'][0]


PCI_ON = {'pci': {'enabled': True}, 'sriov': {'enabled': True}}


def test_sriov_and_pci_children(tmp_path):
    import fakehost
    report = report_for(tmp_path, fakehost.default_sriov_host(name='cn'), pci_filters=[{'vendor_id': '10de'}])
    # nova's [pci]report_in_placement defaults to False: no PCI children unless asked for
    assert layout.build_layout('cn', report)['children'] == []
    kids = _by_name(layout.build_layout('cn', report, PCI_ON))
    pf = kids['cn_0000:81:00.0']
    assert pf['inventories'] == {'CUSTOM_PCI_8086_154C': {'total': 4, 'max_unit': 4}}
    assert pf['traits'] == ['COMPUTE_MANAGED_PCI_DEVICE', 'OWNER_NOVA'] and pf['kind'] == 'sriov'
    gpu = kids['cn_0000:3B:00.0']          # nova upper-cases the address in the name
    assert gpu['device'] == '0000:3b:00.0'
    assert gpu['inventories'] == {'CUSTOM_PCI_10DE_25B6': {'total': 1, 'max_unit': 1}}
    vf = layout.build_layout('cn', report, {'sriov': {'enabled': True, 'class_style': 'sriov_net_vf'}})
    assert [c['inventories'] for c in vf['children']] == [{'SRIOV_NET_VF': {'total': 4, 'max_unit': 4}}]


def test_sriov_without_vf_product_falls_back_with_a_warning():
    report = {'sriov_pfs': [{'address': '0000:81:00.0', 'vendor_id': '8086', 'product_id': '1572',
                             'num_vfs': 2, 'vfs': []}]}
    lay = layout.build_layout('cn', report, PCI_ON)
    assert list(lay['children'][0]['inventories']) == ['CUSTOM_PCI_8086_1572']
    assert 'VF product id' in lay['warnings'][0]
    report['sriov_pfs'][0]['num_vfs'] = 0
    assert layout.build_layout('cn', report, PCI_ON)['children'] == []


def test_numa_is_opt_in_and_split_in_proportion():
    report = {'numa_cells': [{'id': 0, 'cpus': list(range(12)), 'memory_mb': 1000},
                             {'id': 1, 'cpus': list(range(12, 16)), 'memory_mb': 3000}]}
    source = {'VCPU': {'total': 10, 'allocation_ratio': 4.0, 'reserved': 3},
              'MEMORY_MB': {'total': 4096, 'reserved': 512}}
    assert layout.build_layout('cn', report, numa_source=source)['children'] == []
    lay = layout.build_layout('cn', report, {'numa': {'enabled': True}}, numa_source=source)
    kids = _by_name(lay)
    n0, n1 = kids['cn_NUMA0'], kids['cn_NUMA1']
    assert n0['traits'] == ['HW_NUMA_ROOT'] and n0['device'] == 'NUMA0'
    assert (n0['inventories']['VCPU']['total'], n1['inventories']['VCPU']['total']) == (8, 2)   # 12:4 cpus
    assert n0['inventories']['VCPU']['allocation_ratio'] == 4.0
    assert n0['inventories']['VCPU']['reserved'] + n1['inventories']['VCPU']['reserved'] == 3
    assert (n0['inventories']['MEMORY_MB']['total'], n1['inventories']['MEMORY_MB']['total']) == (1024, 3072)
    assert n1['inventories']['MEMORY_MB']['max_unit'] == 3072
    assert 'PCPU' not in n0['inventories']          # the root has none
    assert lay['classes'] == ['MEMORY_MB', 'VCPU']
    assert layout.numa_child_names('cn', report) == ['cn_NUMA0', 'cn_NUMA1']


@given(st.integers(min_value=0, max_value=10 ** 9),
       st.lists(st.integers(min_value=0, max_value=10 ** 6), min_size=1, max_size=8))
def test_split_proportional_adds_up(total, weights):
    parts = layout.split_proportional(total, weights)
    assert len(parts) == len(weights)
    if sum(weights) == 0:
        assert parts == [0] * len(weights)
        return
    assert sum(parts) == total
    for part, weight in zip(parts, weights):
        exact = total * weight / float(sum(weights))
        assert exact - 1 < part < exact + 1
    assert layout.split_proportional(total, weights) == parts      # deterministic


def test_child_uuid_is_deterministic():
    root = str(_uuid.uuid4())
    one = layout.child_uuid(root, 'cn_pci_0000_84_00_0')
    assert one == layout.child_uuid(root.upper(), 'cn_pci_0000_84_00_0')
    assert one != layout.child_uuid(root, 'cn_pci_0000_85_00_0')
    assert one != layout.child_uuid(str(_uuid.uuid4()), 'cn_pci_0000_84_00_0')
    assert provider_rules.is_uuid_like(one)


def test_bad_options_are_refused():
    with pytest.raises(layout.LayoutError):
        layout.build_layout('cn', {}, {'fpga': {}})
    with pytest.raises(layout.LayoutError):
        layout.build_layout('cn', {}, {'gpu': {'colour': 'green'}})
    with pytest.raises(layout.LayoutError):
        layout.build_layout('cn', {}, {'sriov': {'class_style': 'vdpa'}})
    with pytest.raises(layout.LayoutError):
        layout.build_layout('cn', {}, {'gpu': {'allocation_ratio': 0}})
    with pytest.raises(BadRequest):
        layout.build_layout('cn', {}, {'gpu': {'resource_class': 'vgpu'}})
    with pytest.raises(layout.LayoutError) as info:
        layout.build_layout('cn', {'gpus': [_gpu('0000:84:00.0')]}, {'gpu': {'name_template': '{root}_{nope}'}})
    assert 'nope' in info.value.detail


def test_two_devices_on_one_name_are_refused():
    report = {'gpus': [_gpu('0000:84:00.0'), _gpu('0000:85:00.0')]}
    with pytest.raises(layout.LayoutError) as info:
        layout.build_layout('cn', report, {'gpu': {'name_template': '{root}_gpu'}})
    assert 'same child provider name' in info.value.detail


def test_ownership_from_the_report(tmp_path):
    report = gpu_report(tmp_path, 'compute-01', spare_mdevs=2)
    owners = layout.ownership_from_devices(report)
    names = dict((info['name'], uuid) for uuid, info in report['instances'].items())
    assert owners == {
        names['instance-00000001']: {'0000:84:00.0': 2},
        names['instance-00000002']: {'0000:84:00.0': 1, '0000:85:00.0': 1},
        names['instance-00000003']: {'0000:85:00.0': 1},
    }


def test_ownership_overrides():
    derived = {I1: {'0000:84:00.0': 2}}
    merged = layout.merge_ownership(derived, {I1.upper(): {'0000:85:00.0': 1},
                                              I2: {'numa0': {'VCPU': 4, 'MEMORY_MB': 2048}}})
    assert merged == {I1: {'0000:84:00.0': 2, '0000:85:00.0': 1},
                      I2: {'NUMA0': {'VCPU': 4, 'MEMORY_MB': 2048}}}
    assert derived == {I1: {'0000:84:00.0': 2}}
    assert layout.owned_units(merged[I2]['NUMA0'], 'VCPU') == 4
    assert layout.owned_units(2, 'VGPU') == 2
    with pytest.raises(layout.LayoutError):
        layout.merge_ownership({}, {'not-a-uuid': {'0000:84:00.0': 1}})
    with pytest.raises(layout.LayoutError):
        layout.merge_ownership({}, {I3: {'0000:84:00.0': -1}})


def test_one_file_per_reshape_kind_and_layout_exposes_the_layout_api():
    base = 'ansible_collections.placement.upgrade.plugins.module_utils._placement.node.kinds.'
    kinds = dict((name, importlib.import_module(base + name))
                 for name in ('common', 'vgpu', 'pci', 'pcpu', 'mem_encryption', 'numa', 'ownership'))
    assert layout.nova_gpu_inventories is kinds['vgpu'].nova_gpu_inventories
    assert layout.nova_pci_providers is kinds['pci'].nova_pci_providers
    assert layout.nova_cpu is kinds['pcpu'].nova_cpu
    assert layout.taker is kinds['mem_encryption'].taker
    assert layout.split_proportional is kinds['numa'].split_proportional
    assert layout.merge_ownership is kinds['ownership'].merge_ownership
    assert layout.LayoutError is kinds['common'].LayoutError
    assert sorted(name for name in layout.__all__ if not hasattr(layout, name)) == []
    # the pGPU children (vgpu.py) come before the PCI ones (pci.py), as before the split
    nova = {'devices': {'enabled_mdev_types': ['nvidia-222']}, 'pci': {'report_in_placement': False}}
    report = {'gpus': [_gpu('0000:84:00.0')]}
    children = layout.nova_children('cn', report, nova, [])
    assert [c['name'] for c in children] == ['cn_pci_0000_84_00_0']
    assert children == kinds['vgpu'].nova_children('cn', report, nova, [])
