# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tools/fakehost.py: the fake tree looks like the kernel's and is reproducible."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

import fakehost

GPU_A = '0000:84:00.0'


def _tree(root):
    """Every path under root with its file content or link target."""
    result = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if os.path.islink(path):
                result[rel] = ('link', os.readlink(path))
            elif os.path.isfile(path):
                with open(path) as handle:
                    result[rel] = ('file', handle.read())
            else:
                result[rel] = ('dir', None)
    return result


def test_kernel_like_symlinks(tmp_path):
    host = fakehost.build_host(str(tmp_path), fakehost.default_gpu_host('cn1'))
    sysfs = host['sysfs_root']
    assert sysfs == str(tmp_path / 'sys')
    entry = os.path.join(sysfs, 'class', 'mdev_bus', GPU_A)
    pci = os.path.join(sysfs, 'bus', 'pci', 'devices', GPU_A)
    assert os.path.islink(entry) and os.path.islink(pci)
    assert not os.path.isabs(os.readlink(entry))          # relative, like the kernel's
    assert os.path.realpath(entry) == os.path.realpath(pci) == os.path.join(sysfs, 'devices', 'pci0000:00', GPU_A)
    for uuid, info in host['mdevs'].items():
        link = os.path.join(sysfs, 'bus', 'mdev', 'devices', uuid)
        assert os.path.islink(link)
        real = os.path.realpath(link)
        assert os.path.basename(os.path.dirname(real)) == info['gpu']
        assert os.path.basename(os.path.realpath(os.path.join(real, 'mdev_type'))) == info['type']
    with open(os.path.join(pci, 'vendor')) as handle:
        assert handle.read() == '0x10de\n'
    with open(os.path.join(pci, 'class')) as handle:
        assert handle.read() == '0x030200\n'


def test_sriov_links(tmp_path):
    host = fakehost.build_host(str(tmp_path), fakehost.default_sriov_host('cn2'))
    pf = os.path.join(host['sysfs_root'], 'bus', 'pci', 'devices', '0000:81:00.0')
    vfs = [os.path.basename(os.path.realpath(os.path.join(pf, 'virtfn%d' % i))) for i in range(4)]
    assert vfs == ['0000:81:02.0', '0000:81:02.1', '0000:81:02.2', '0000:81:02.3']
    assert not os.path.exists(os.path.join(pf, 'virtfn4'))
    for vf in vfs:
        vf_dir = os.path.join(host['sysfs_root'], 'bus', 'pci', 'devices', vf)
        assert os.path.realpath(os.path.join(vf_dir, 'physfn')) == os.path.realpath(pf)
    with open(os.path.join(pf, 'sriov_totalvfs')) as handle:
        assert handle.read().strip() == '8'


def test_default_vf_addresses_cross_slots():
    addresses = fakehost.default_vf_addresses('0000:81:00.0', 10)
    assert addresses[7] == '0000:81:02.7' and addresses[8] == '0000:81:03.0'


def test_domain_xml_is_libvirt_shaped(tmp_path):
    host = fakehost.build_host(str(tmp_path), fakehost.default_sriov_host('cn2'))
    path = os.path.join(os.path.dirname(host['domain_xml_glob']), 'instance-00000011.xml')
    root = ET.parse(path).getroot()
    assert root.tag == 'domain'
    assert root.findtext('uuid') == host['instances']['instance-00000011']
    assert root.findtext('name') == 'instance-00000011'
    iface = root.find("devices/interface[@type='hostdev']")
    address = iface.find('source/address')
    assert (address.get('type'), address.get('bus'), address.get('slot'), address.get('function')) == \
        ('pci', '0x81', '0x02', '0x0')
    gpu_holder = ET.parse(os.path.join(os.path.dirname(path), 'instance-00000013.xml')).getroot()
    assert gpu_holder.find("devices/hostdev[@type='pci']/source/address").get('bus') == '0x3b'


def test_reproducible_and_uuid_helpers(tmp_path):
    one = fakehost.build_host(str(tmp_path / 'a'), fakehost.default_gpu_host('cn1', spare_mdevs=2))
    two = fakehost.build_host(str(tmp_path / 'b'), fakehost.default_gpu_host('cn1', spare_mdevs=2))
    assert _tree(one['root']) == _tree(two['root'])
    assert one['instances'] == two['instances']
    assert one['instances']['instance-00000001'] == fakehost.instance_uuid('cn1', 'instance-00000001')
    assert fakehost.mdev_uuid('cn1', GPU_A, 0) in one['mdevs']
    other = fakehost.build_host(str(tmp_path / 'c'), fakehost.default_gpu_host('cn2'))
    # another host: other uuids, so a fleet has no collisions
    assert not set(other['instances'].values()) & set(one['instances'].values())
    assert not set(other['mdevs']) & set(one['mdevs'])


def test_existing_tree_needs_clean(tmp_path):
    fakehost.build_host(str(tmp_path), fakehost.default_gpu_host('cn1', spare_mdevs=1))
    with pytest.raises(ValueError) as info:
        fakehost.build_host(str(tmp_path), fakehost.default_plain_host('cn1'))
    assert 'already exists' in str(info.value)
    host = fakehost.build_host(str(tmp_path), fakehost.default_plain_host('cn1'), clean=True)
    assert not os.path.exists(os.path.join(host['sysfs_root'], 'class', 'mdev_bus'))
    assert host['xml_paths'] == []


def test_duplicate_address_is_refused(tmp_path):
    spec = {'pci_devices': [{'address': '0000:3b:00.0', 'vendor_id': '10de', 'product_id': '20b5'},
                            {'address': '0000:3b:00.0', 'vendor_id': '10de', 'product_id': '20b5'}]}
    with pytest.raises(ValueError):
        fakehost.build_host(str(tmp_path), spec)


def test_explicit_available_instances_and_unnamed_type(tmp_path):
    spec = {'gpus': [{'address': GPU_A, 'mdev_types': {'nvidia-63': {'available_instances': 3, 'name': None}},
                      'mdevs': [{'type': 'nvidia-63'}]}]}
    host = fakehost.build_host(str(tmp_path), spec)
    type_dir = os.path.join(host['sysfs_root'], 'class', 'mdev_bus', GPU_A, 'mdev_supported_types', 'nvidia-63')
    with open(os.path.join(type_dir, 'available_instances')) as handle:
        assert handle.read() == '3\n'
    assert not os.path.exists(os.path.join(type_dir, 'name'))
    assert host['instances'] == {}


@pytest.mark.parametrize('preset', ['gpu', 'sriov', 'plain'])
def test_cli(tmp_path, preset):
    script = os.path.join(os.path.dirname(fakehost.__file__), 'fakehost.py')
    out = subprocess.check_output([sys.executable, script, str(tmp_path), '--preset', preset,
                                   '--hostname', 'cli-host'])
    result = json.loads(out.decode('utf-8'))
    assert result['hostname'] == 'cli-host'
    assert os.path.isdir(result['sysfs_root'])
    assert os.path.isdir(os.path.join(result['sysfs_root'], 'devices', 'system', 'node', 'node1'))
    assert len(result['xml_paths']) == {'gpu': 3, 'sriov': 3, 'plain': 0}[preset]
    again = subprocess.run([sys.executable, script, str(tmp_path), '--preset', preset],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    assert again.returncode == 2 and b'already exists' in again.stderr


def test_numa_cells_from_cpu_lists(tmp_path):
    host = fakehost.build_host(str(tmp_path), {'numa_cells': [
        {'id': 0, 'cpus': [0, 1, 2, 3, 8, 10, 11], 'memory_mb': 1024},
        {'id': 1, 'cpus': [], 'memory_mb': 512}]})
    node = os.path.join(host['sysfs_root'], 'devices', 'system', 'node')
    with open(os.path.join(node, 'online')) as handle:
        assert handle.read() == '0-1\n'
    with open(os.path.join(node, 'node0', 'cpulist')) as handle:
        assert handle.read() == '0-3,8,10-11\n'
    with open(os.path.join(node, 'node1', 'meminfo')) as handle:
        assert handle.readline() == 'Node 1 MemTotal:       524288 kB\n'
