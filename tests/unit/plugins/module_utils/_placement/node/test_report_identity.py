# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 40, section 2: one identity per device in a device report given back.

A PCI address named twice anywhere in the report (gpus, sriov_pfs, their vfs, pci_devices)
is refused naming both fields, and nothing is written, also when the report is replayed
from an edited recording; a device address not in the canonical ``dddd:bb:ss.f`` form is a
clean refusal naming the field, with or without nova.conf; ``devices.instances`` of the
wrong type is refused before the pass reads it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery, layout, recording
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.modules import device_info, reshape

from module_runner import run_module_main
from test_reshaper_support import comparable, flat_gpu_node, make_provider, put, report_for

import fakehost  # noqa: E402  (tools/ is on sys.path once test_reshaper_support is imported)

SRIOV_OPTIONS = {'sriov': {'enabled': True, 'class_style': 'sriov_net_vf'}, 'pci': {'enabled': True}}


def _sriov_report(tmp_path):
    return report_for(tmp_path / 'host', fakehost.default_sriov_host(name='compute-05'),
                      pci_filters=[{'vendor_id': '10de'}])


def _sriov_node(backend, report):
    """compute-05 as nova left it: SRIOV_NET_VF on the root, each VF holder allocating its VFs there."""
    root = make_provider(backend, 'compute-05', {'VCPU': {'total': 32}, 'MEMORY_MB': {'total': 65536},
                                                 'SRIOV_NET_VF': {'total': 4, 'max_unit': 4}})
    holders = {}
    for pf in report['sriov_pfs']:
        for vf in pf['vfs']:
            if vf['instance_uuid']:
                holders[vf['instance_uuid']] = holders.get(vf['instance_uuid'], 0) + 1
    for consumer, count in holders.items():
        put(backend, consumer, {root: {'resources': {'VCPU': 1, 'SRIOV_NET_VF': count}}})
    return root


def _held_vf(report):
    """(pf index, vf index) of the first VF a guest holds."""
    for p_index, pf in enumerate(report['sriov_pfs']):
        for v_index, vf in enumerate(pf['vfs']):
            if vf['instance_uuid']:
                return p_index, v_index
    raise AssertionError('the SR-IOV host has no held VF')


def _twice(report, how):
    """The report with one device named twice; returns (report, first field, second field)."""
    report = copy.deepcopy(report)
    if how == 'pf':
        report['sriov_pfs'].append(copy.deepcopy(report['sriov_pfs'][0]))
        last = len(report['sriov_pfs']) - 1
        return report, 'devices.sriov_pfs[0].address', 'devices.sriov_pfs[%d].address' % last
    p_index, v_index = _held_vf(report)
    vfs = report['sriov_pfs'][p_index]['vfs']
    if how == 'vf':
        vfs.append(copy.deepcopy(vfs[v_index]))
        return (report, 'devices.sriov_pfs[%d].vfs[%d].address' % (p_index, v_index),
                'devices.sriov_pfs[%d].vfs[%d].address' % (p_index, len(vfs) - 1))
    if how == 'vf-as-pci-device':
        report['pci_devices'].append({'address': vfs[v_index]['address'], 'vendor_id': '8086',
                                      'product_id': '154c', 'numa_node': 0, 'instance_uuid': None})
        return (report, 'devices.sriov_pfs[%d].vfs[%d].address' % (p_index, v_index),
                'devices.pci_devices[%d].address' % (len(report['pci_devices']) - 1))
    if how == 'pf-as-vf':
        vfs.append({'address': report['sriov_pfs'][0]['address'], 'instance_uuid': None})
        return (report, 'devices.sriov_pfs[0].address',
                'devices.sriov_pfs[%d].vfs[%d].address' % (p_index, len(vfs) - 1))
    raise AssertionError(how)


@pytest.mark.parametrize('how', ['pf', 'vf', 'vf-as-pci-device', 'pf-as-vf'])
def test_a_pci_address_named_twice_is_refused_naming_both_fields(tmp_path, how):
    report, first, second = _twice(_sriov_report(tmp_path), how)
    for call in (lambda: discovery.check_report(report), lambda: layout.build_layout('compute-05', report, SRIOV_OPTIONS),
                 lambda: layout.ownership_from_devices(report)):
        with pytest.raises(errors.BadInput) as info:
            call()
        assert first in info.value.detail and second in info.value.detail, info.value.detail
        assert info.value.field == second


def test_a_gpu_named_again_as_a_pci_device_is_refused(node):
    report = copy.deepcopy(node['report'])
    gpu = report['gpus'][1]
    report['pci_devices'].append({'address': gpu['address'], 'vendor_id': '10de', 'product_id': '1eb8',
                                  'numa_node': 0, 'instance_uuid': None})
    with pytest.raises(errors.BadInput) as info:
        discovery.check_report(report)
    assert info.value.detail.startswith('devices.gpus[1].address and devices.pci_devices[0].address both name the '
                                        'PCI device %s' % gpu['address']), info.value.detail


def test_a_report_made_by_discovery_names_each_device_once(tmp_path, node):
    # the check refuses nothing discovery makes: SR-IOV with PCI filters, GPUs with nova.conf
    discovery.check_report(_sriov_report(tmp_path))
    discovery.check_report(node['report'])
    discovery.check_report(report_for(tmp_path / 'nova', fakehost.default_gpu_host(name='compute-01'), nova=True))


@pytest.mark.parametrize('how', ['pf', 'vf', 'vf-as-pci-device'])
def test_reshape_of_a_report_naming_a_device_twice_writes_nothing(capsys, embedded_backend, tmp_path, how):
    report = _sriov_report(tmp_path)
    root = _sriov_node(embedded_backend, report)
    doubled, first, second = _twice(report, how)
    before = comparable(provider_tree_state(embedded_backend, root))
    snapdir = str(tmp_path / 'snap')
    args = {'embedded_db': embedded_backend.path, 'root_provider': 'compute-05', 'devices': doubled,
            'layout': SRIOV_OPTIONS, 'snapshot_dir': snapdir, 'nova_migrations': 'never'}
    rc, out = run_module_main(reshape.main, args, capsys)
    assert rc == 1, out
    assert first in out['msg'] and second in out['msg'] and 'Unexpected' not in out['msg'], out['msg']
    assert comparable(provider_tree_state(embedded_backend, root)) == before
    assert not os.path.isdir(snapdir) or os.listdir(snapdir) == []
    # the same report with each device once reshapes (the refusal was the doubled device)
    args['devices'] = report
    rc, out = run_module_main(reshape.main, args, capsys)
    assert rc == 0 and out['verified'] is True, out


def test_replaying_an_edited_recording_naming_a_vf_twice_is_refused(capsys, tmp_path):
    report = _sriov_report(tmp_path)
    path = str(tmp_path / 'compute-05.json')
    recording.record(path, {'devices': report, 'ownership': discovery.ownership(report)})
    with open(path) as handle:
        doc = json.load(handle)
    doc['devices'], first, second = _twice(doc['devices'], 'vf')
    with open(path, 'w') as handle:
        json.dump(doc, handle)
    with pytest.raises(errors.BadInput) as info:
        recording.replay(path, hostname='compute-05')
    assert path in info.value.detail and first in info.value.detail and second in info.value.detail
    rc, out = run_module_main(device_info.main, {'replay_from': path, 'hostname': 'compute-05'}, capsys)
    assert rc == 1 and first in out['msg'] and second in out['msg'] and path in out['msg'], out
    assert 'devices' not in out


BAD_ADDRESSES = ['84:00.0', '0000:84:00.0/../x', ' 0000:84:00.0', '0000:84:00.0 ', '0000:84:00.0\n',
                 '0000:8A:00.0', '0000:84:00.8', '']


@pytest.mark.parametrize('with_nova_conf', [False, True], ids=['no-nova-conf', 'nova-conf'])
@pytest.mark.parametrize('address', BAD_ADDRESSES)
def test_a_device_address_not_in_canonical_form_is_refused_naming_the_field(capsys, embedded_backend, tmp_path,
                                                                            address, with_nova_conf):
    report = report_for(tmp_path / 'host', fakehost.default_gpu_host(name='compute-01'), nova=with_nova_conf)
    assert (report.get('nova_conf') is not None) is with_nova_conf
    built = flat_gpu_node(embedded_backend, 'compute-01', report)
    report['gpus'][0]['address'] = address
    before = comparable(provider_tree_state(embedded_backend, built['root']))
    snapdir = str(tmp_path / 'snap')
    args = {'embedded_db': embedded_backend.path, 'root_provider': 'compute-01', 'devices': report,
            'snapshot_dir': snapdir, 'nova_migrations': 'never'}
    rc, out = run_module_main(reshape.main, args, capsys)
    assert rc == 1, out
    assert out['msg'].startswith('devices.gpus[0].address must be a PCI address in the canonical form '
                                 'dddd:bb:ss.f'), out['msg']
    assert repr(address) in out['msg'] and 'Unexpected' not in out['msg'], out['msg']
    assert comparable(provider_tree_state(embedded_backend, built['root'])) == before
    assert not os.path.isdir(snapdir) or os.listdir(snapdir) == []


@pytest.mark.parametrize('field', ['sriov_pfs', 'vfs', 'pci_devices'])
def test_other_device_addresses_must_be_canonical_too(tmp_path, field):
    report = _sriov_report(tmp_path)
    if field == 'sriov_pfs':
        report['sriov_pfs'][0]['address'] = '81:00.0'
        where = 'devices.sriov_pfs[0].address'
    elif field == 'vfs':
        report['sriov_pfs'][0]['vfs'][0]['address'] = '0000:81:02.0/'
        where = 'devices.sriov_pfs[0].vfs[0].address'
    else:
        assert report['pci_devices'], 'the SR-IOV host with a 10de filter reports a PCI device'
        report['pci_devices'][0]['address'] = '0000:3B:00.0'
        where = 'devices.pci_devices[0].address'
    with pytest.raises(errors.BadInput) as info:
        discovery.check_report(report)
    assert info.value.detail.startswith(where + ' must be a PCI address in the canonical form'), info.value.detail
    assert info.value.field == where


@pytest.mark.parametrize('instances', [1.5, True, 3, 'x', ['u']])
def test_instances_of_the_wrong_type_is_refused_before_the_pass(capsys, node, embedded_backend, instances):
    report = copy.deepcopy(node['report'])
    report['instances'] = instances
    before = comparable(provider_tree_state(embedded_backend, node['root']))
    with pytest.raises(errors.BadInput) as info:
        reshaper.reshape_node(embedded_backend, 'compute-01', report, snapshot_dir=node['snapdir'])
    assert info.value.detail.startswith('devices.instances must be a mapping, got '), info.value.detail
    for check in (False, True):
        args = {'embedded_db': embedded_backend.path, 'root_provider': 'compute-01', 'devices': report,
                'snapshot_dir': node['snapdir'], 'nova_migrations': 'never'}
        rc, out = run_module_main(reshape.main, args, capsys, check=check)
        assert rc == 1 and out['msg'].startswith('devices.instances must be a mapping, got '), out['msg']
        assert 'Unexpected' not in out['msg'] and 'TypeError' not in out['msg'], out['msg']
    assert comparable(provider_tree_state(embedded_backend, node['root'])) == before
    assert not os.path.isdir(node['snapdir']) or os.listdir(node['snapdir']) == []
