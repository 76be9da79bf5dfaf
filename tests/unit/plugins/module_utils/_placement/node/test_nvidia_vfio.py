# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA vGPUs of the vendor-specific VFIO framework (R580+ on Linux 6.8+, no mdev).

A vGPU is an SR-IOV VF whose ``nvidia/current_vgpu_type`` is written, given to the guest as a
plain VFIO PCI device; nova 34 tracks it with its PCI tracker through ``[pci]device_spec``
(nova/compute/pci_placement_translator.py).  The host is tools/fakehost.py's
``nvidia_vfio_host``: two L4 GPUs, 3 VFs of L4-6Q on GPU A, 1 of L4-12Q on GPU B.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import layout
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import nvidia_vfio
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import planner
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import BadInput

from test_reshaper_support import child_named, fakehost, make_provider, put_untyped, report_for

GPU_A, GPU_B = '0000:41:00.0', '0000:42:00.0'
L4_6Q = {'id': fakehost.L4_6Q, 'name': 'NVIDIA L4-6Q'}
L4_12Q = {'id': fakehost.L4_12Q, 'name': 'NVIDIA L4-12Q'}
NOVA_TRAITS = ['COMPUTE_MANAGED_PCI_DEVICE', 'HW_PCI_LIVE_MIGRATABLE', 'OWNER_NOVA']


def _report(tmp_path, spec=None, nova=True):
    return report_for(tmp_path, spec or fakehost.nvidia_vfio_host(name='cn'), nova=nova)


def _uuids(tmp_path):
    return dict((name, fakehost.instance_uuid('cn', name))
                for name in ('instance-00000061', 'instance-00000062', 'instance-00000063'))


# -- discovery ----------------------------------------------------------------------------------------

def test_the_vfs_are_reported_as_vgpus_with_their_type_driver_and_pf(tmp_path):
    report = _report(tmp_path)
    uuids = _uuids(tmp_path)
    assert report['gpus'] == []          # no mdev parent: the mdev interface is gone
    pfs = dict((pf['address'], pf) for pf in report['sriov_pfs'])
    assert sorted(pfs) == [GPU_A, GPU_B]
    for address, pf in pfs.items():
        assert pf['vgpu_framework'] == 'nvidia-vfio'
        assert (pf['vendor_id'], pf['product_id'], pf['class_id']) == ('10de', '27b8', '030200')
        assert len(pf['vfs']) == 8 and all(vf['driver'] == 'nvidia' for vf in pf['vfs'])
    a_vfs = pfs[GPU_A]['vfs']
    assert [vf['address'] for vf in a_vfs[:4]] == ['0000:41:00.4', '0000:41:00.5', '0000:41:00.6', '0000:41:00.7']
    assert [vf['vgpu_type'] for vf in a_vfs] == [L4_6Q] * 3 + [None] * 5
    # a VF with a type lists no creatable type; the others the one their GPU can still create
    assert a_vfs[0]['creatable_vgpu_types'] == []
    assert a_vfs[3]['creatable_vgpu_types'] == [L4_6Q]
    assert [vf['vgpu_type'] for vf in pfs[GPU_B]['vfs']] == [L4_12Q] + [None] * 7
    # the guests hold their VF by its address in <hostdev type='pci' managed='no'>
    assert a_vfs[0]['instance_uuid'] == uuids['instance-00000061']
    assert pfs[GPU_B]['vfs'][0]['instance_uuid'] == uuids['instance-00000062']
    instances = report['instances']
    assert instances[uuids['instance-00000061']]['vgpus'] == [
        {'address': '0000:41:00.4', 'physfn': GPU_A, 'type_id': fakehost.L4_6Q, 'type': 'NVIDIA L4-6Q'}]
    assert instances[uuids['instance-00000062']]['vgpus'] == [
        {'address': '0000:42:00.4', 'physfn': GPU_B, 'type_id': fakehost.L4_12Q, 'type': 'NVIDIA L4-12Q'}]
    assert instances[uuids['instance-00000063']]['vgpus'] == []
    # a VF counts against its GPU (the PF), as every VF does
    assert discovery.ownership(report) == {uuids['instance-00000061']: {GPU_A: 1},
                                           uuids['instance-00000062']: {GPU_B: 1}}
    assert report['warnings'] == []
    # the report given back to the reshape passes its shape check
    discovery.check_report(report)


def test_a_plain_sriov_nic_is_not_a_vgpu(tmp_path):
    report = report_for(tmp_path, fakehost.default_sriov_host(name='cn'), nova=True)
    pf = report['sriov_pfs'][0]
    assert pf['vgpu_framework'] is None
    assert all(set(vf) == {'address', 'instance_uuid'} for vf in pf['vfs'])
    assert all(i['vgpus'] == [] for i in report['instances'].values())


def test_creatable_vgpu_types_parsing():
    text = 'ID    : vGPU Name\n1152  : NVIDIA L4-6Q\n\n1153 : NVIDIA L4-12Q\n'
    assert nvidia_vfio.parse_vgpu_types(text, 'f') == [L4_6Q, L4_12Q]
    assert nvidia_vfio.parse_vgpu_types('', 'f') == []
    assert nvidia_vfio.parse_vgpu_types('1152 : NVIDIA L4-6Q', 'f') == [L4_6Q]
    with pytest.raises(discovery.DiscoveryError) as info:
        nvidia_vfio.parse_vgpu_types('ID : vGPU Name\nL4-6Q\n', '/sys/x/nvidia/creatable_vgpu_types')
    assert '/sys/x/nvidia/creatable_vgpu_types' in str(info.value) and "'L4-6Q'" in str(info.value)


def test_malformed_current_vgpu_type_names_the_file(tmp_path):
    built = fakehost.build_host(str(tmp_path), fakehost.nvidia_vfio_host(name='cn'))
    path = os.path.join(built['sysfs_root'], 'bus', 'pci', 'devices', '0000:41:00.5', 'nvidia', 'current_vgpu_type')
    with open(path, 'w') as handle:
        handle.write('L4-6Q\n')
    with pytest.raises(discovery.DiscoveryError) as info:
        discovery.discover(built['sysfs_root'], domain_xml_glob=built['domain_xml_glob'], hostname='cn')
    assert path in str(info.value)


def test_a_type_no_creatable_list_names_keeps_its_id_with_a_warning(tmp_path):
    """A GPU whose VFs all have a type lists no creatable type anywhere: the id stays, named None."""
    spec = fakehost.nvidia_vfio_host(name='cn')
    for pf in spec['sriov_pfs']:
        pf['nvidia_vgpu']['creatable'] = []
    spec['sriov_pfs'][1]['nvidia_vgpu']['creatable'] = [fakehost.L4_12Q]
    report = _report(tmp_path, spec)
    vf = report['sriov_pfs'][0]['vfs'][0]
    assert vf['vgpu_type'] == {'id': fakehost.L4_6Q, 'name': None}
    assert report['sriov_pfs'][1]['vfs'][0]['vgpu_type'] == L4_12Q
    assert sum('vGPU type id %d' % fakehost.L4_6Q in w for w in report['warnings']) == 3
    assert any('VF 0000:41:00.4 of NVIDIA GPU 0000:41:00.0' in w and 'named by no creatable_vgpu_types' in w
               for w in report['warnings'])


def test_a_guest_holding_a_vf_without_a_type_is_warned(tmp_path):
    spec = fakehost.nvidia_vfio_host(name='cn')
    spec['sriov_pfs'][0]['vf_holders'] = {0: 'instance-00000061', 5: 'instance-00000063'}
    spec['instances'][2].update({'vf_as': 'hostdev', 'managed': 'no'})
    report = _report(tmp_path, spec)
    uuid = fakehost.instance_uuid('cn', 'instance-00000063')
    assert report['instances'][uuid]['vgpus'] == [
        {'address': '0000:41:01.1', 'physfn': GPU_A, 'type_id': None, 'type': None}]
    assert ('instance %s holds VF 0000:41:01.1 of NVIDIA GPU 0000:41:00.0, which has no vGPU type '
            '(nvidia/current_vgpu_type is 0)' % uuid) in report['warnings']


# -- the layout: nova 34's PCI translator ---------------------------------------------------------------

def test_layout_is_novas_pci_layout_by_device_spec(tmp_path):
    """pci_placement_translator.py: one provider '<node>_<PF ADDRESS>' per GPU for the VFs a
    device_spec selects; class = the spec's resource_class; traits = the spec's +
    COMPUTE_MANAGED_PCI_DEVICE + HW_PCI_LIVE_MIGRATABLE (live_migratable) + OWNER_NOVA."""
    lay = layout.build_layout('cn', _report(tmp_path))
    kids = dict((c['name'], c) for c in lay['children'])
    assert sorted(kids) == ['cn_0000:41:00.0', 'cn_0000:42:00.0']
    assert kids['cn_0000:41:00.0']['inventories'] == {'CUSTOM_NVIDIA_L4_6Q': {'total': 3, 'max_unit': 3}}
    assert kids['cn_0000:42:00.0']['inventories'] == {'CUSTOM_NVIDIA_L4_12Q': {'total': 1, 'max_unit': 1}}
    assert all(c['traits'] == NOVA_TRAITS for c in kids.values())
    assert lay['warnings'] == []


def test_without_resource_class_the_class_is_novas_default(tmp_path):
    """get_resource_class: CUSTOM_PCI_<vendor>_<product> of the VF; traits only from the tags."""
    spec = fakehost.nvidia_vfio_host(name='cn')
    spec['nova_conf']['pci']['device_spec'] = ['{"address": "0000:42:00.4", "traits": "gpu_l4"}']
    lay = layout.build_layout('cn', _report(tmp_path, spec))
    assert [(c['name'], c['inventories'], c['traits']) for c in lay['children']] == [
        ('cn_0000:42:00.0', {'CUSTOM_PCI_10DE_27B8': {'total': 1, 'max_unit': 1}},
         ['COMPUTE_MANAGED_PCI_DEVICE', 'CUSTOM_GPU_L4', 'OWNER_NOVA'])]


def test_a_selected_vf_without_a_type_and_mixed_types_are_warned(tmp_path):
    """nova reads nothing of the vGPU type: VFs of two types (heterogeneous mode) under one
    resource_class make one provider, and a selected VF with no type is counted all the same."""
    spec = fakehost.nvidia_vfio_host(name='cn')
    spec['sriov_pfs'][0]['nvidia_vgpu']['vf_types'] = {0: fakehost.L4_6Q, 1: fakehost.L4_12Q}
    spec['nova_conf']['pci']['device_spec'] = [
        '{"address": {"domain": "0000", "bus": "41", "slot": "00", "function": "[4-6]"}, '
        '"resource_class": "CUSTOM_NVIDIA_L4"}']
    lay = layout.build_layout('cn', _report(tmp_path, spec))
    assert [(c['name'], c['inventories']) for c in lay['children']] == [
        ('cn_0000:41:00.0', {'CUSTOM_NVIDIA_L4': {'total': 3, 'max_unit': 3}})]
    assert lay['warnings'] == [
        'nova.conf [pci]device_spec selects VF 0000:41:00.6 of NVIDIA GPU 0000:41:00.0, which has no vGPU type '
        '(nvidia/current_vgpu_type is 0): nova 34 counts it in CUSTOM_NVIDIA_L4 on cn_0000:41:00.0 all the same; '
        'write a type to it or leave it out of the device_spec',
        'the VFs of NVIDIA GPU 0000:41:00.0 that nova.conf [pci]device_spec selects have 2 vGPU types '
        '(NVIDIA L4-12Q (id 1153): 0000:41:00.5; NVIDIA L4-6Q (id 1152): 0000:41:00.4) but nova 34 reports '
        'them on one provider, cn_0000:41:00.0, in one class, CUSTOM_NVIDIA_L4: a guest asking for '
        'CUSTOM_NVIDIA_L4 may get any of them']


def test_mixed_classes_on_one_gpu_are_refused_as_nova_refuses(tmp_path):
    """PciResourceProvider.add_child: PlacementPciMixedResourceClassException."""
    spec = fakehost.nvidia_vfio_host(name='cn')
    spec['nova_conf']['pci']['device_spec'][1] = spec['nova_conf']['pci']['device_spec'][1].replace(
        'CUSTOM_NVIDIA_L4_6Q', 'CUSTOM_NVIDIA_L4_4Q')
    with pytest.raises(layout.LayoutError) as info:
        layout.build_layout('cn', _report(tmp_path, spec))
    assert 'PlacementPciMixedResourceClassException' in str(info.value)
    assert GPU_A in str(info.value)


# -- the reshape on the embedded store ---------------------------------------------------------------

def test_reshape_creates_the_gpu_providers_and_heals_the_guests(embedded_backend, tmp_path):
    """The old nova (no [pci]report_in_placement) left the guests on the root only; the reshape
    lays out nova 34's providers and gives each guest its vGPU class on its GPU's provider."""
    backend = embedded_backend
    report = _report(tmp_path / 'host')
    uuids = _uuids(tmp_path)
    root = make_provider(backend, 'cn', {'VCPU': {'total': 64}, 'MEMORY_MB': {'total': 131072}})
    for name in sorted(uuids):
        put_untyped(backend, root, uuids[name], {root: {'resources': {'VCPU': 2, 'MEMORY_MB': 4096}}})
    result = reshaper.reshape_node(backend, 'cn', report, snapshot_dir=str(tmp_path / 'snap'))
    assert result['status'] == 'reshaped', result
    assert result['verified'] is True, result['verification']
    gpu_a, gpu_b = child_named(backend, 'cn_0000:41:00.0'), child_named(backend, 'cn_0000:42:00.0')
    assert backend.get_inventories(gpu_a['uuid'])['inventories']['CUSTOM_NVIDIA_L4_6Q']['total'] == 3
    assert backend.get_inventories(gpu_b['uuid'])['inventories']['CUSTOM_NVIDIA_L4_12Q']['total'] == 1
    assert sorted(backend.get_provider_traits(gpu_a['uuid'])['traits']) == NOVA_TRAITS
    held_a = backend.get_allocations(uuids['instance-00000061'])['allocations']
    assert held_a[gpu_a['uuid']]['resources'] == {'CUSTOM_NVIDIA_L4_6Q': 1}
    assert held_a[root]['resources'] == {'VCPU': 2, 'MEMORY_MB': 4096}
    held_b = backend.get_allocations(uuids['instance-00000062'])['allocations']
    assert held_b[gpu_b['uuid']]['resources'] == {'CUSTOM_NVIDIA_L4_12Q': 1}
    assert list(backend.get_allocations(uuids['instance-00000063'])['allocations']) == [root]
    # nothing left for nova: a second pass has nothing to do
    again = reshaper.reshape_node(backend, 'cn', report, snapshot_dir=str(tmp_path / 'snap'))
    assert again['status'] == 'noop'


def test_a_bad_vgpu_type_in_a_given_back_report_is_refused(tmp_path):
    report = _report(tmp_path)
    report['sriov_pfs'][0]['vfs'][0]['vgpu_type'] = 'NVIDIA L4-6Q'
    with pytest.raises(BadInput) as info:
        discovery.check_report(report)
    assert 'devices.sriov_pfs[0].vfs[0].vgpu_type' in str(info.value)


def test_planner_plans_the_same_from_the_report(embedded_backend, tmp_path):
    backend = embedded_backend
    report = _report(tmp_path / 'host')
    root = make_provider(backend, 'cn', {'VCPU': {'total': 64}})
    state, foreign = reshaper.read_node(backend, root)
    plan = planner.plan_from_devices(state, root, report, foreign=foreign)
    assert sorted(c['name'] for c in plan['create_children']) == ['cn_0000:41:00.0', 'cn_0000:42:00.0']
