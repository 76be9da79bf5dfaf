# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Device discovery on fake compute nodes built by tools/fakehost.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

import fakehost
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node.discover import domains as discover_domains
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import PlacementError

GPU_A = '0000:84:00.0'
GPU_B = '0000:85:00.0'
PF = '0000:81:00.0'


def _discover(host, **kwargs):
    kwargs.setdefault('domain_xml_glob', host['domain_xml_glob'])
    kwargs.setdefault('hostname', host['hostname'])
    return discovery.discover(host['sysfs_root'], **kwargs)


@pytest.fixture
def gpu_host(tmp_path):
    return fakehost.build_host(str(tmp_path), fakehost.default_gpu_host('compute-01', spare_mdevs=1))


@pytest.fixture
def sriov_host(tmp_path):
    return fakehost.build_host(str(tmp_path), fakehost.default_sriov_host('compute-02'))


# ---------------------------------------------------------------------------
# GPUs and mdevs


def test_gpus_mdev_types_and_identity(gpu_host):
    report = _discover(gpu_host)
    assert report['hostname'] == 'compute-01'
    assert report['sysfs_root'] == gpu_host['sysfs_root']
    assert [g['address'] for g in report['gpus']] == [GPU_A, GPU_B]
    gpu_a, gpu_b = report['gpus']
    assert (gpu_a['vendor_id'], gpu_a['product_id'], gpu_a['class_id']) == ('10de', '1eb8', '030200')
    assert (gpu_a['numa_node'], gpu_b['numa_node']) == (0, 1)
    assert gpu_a['physfn'] is None
    # GPU A: 3 held + 1 spare mdev of 8; GPU B: 2 of 8.
    assert gpu_a['mdev_types'] == {'nvidia-222': {'name': 'GRID T4-2Q', 'available_instances': 4,
                                                  'device_api': 'vfio-pci',
                                                  'description': 'num_heads=4, frl_config=60'}}
    assert gpu_b['mdev_types']['nvidia-222']['available_instances'] == 6
    assert len(gpu_a['mdevs']) == 4 and len(gpu_b['mdevs']) == 2
    assert all(m['type'] == 'nvidia-222' for g in report['gpus'] for m in g['mdevs'])
    # every mdev sits under the GPU fakehost created it on
    for gpu in report['gpus']:
        for mdev in gpu['mdevs']:
            assert gpu_host['mdevs'][mdev['uuid']]['gpu'] == gpu['address']
    assert report['sriov_pfs'] == [] and report['pci_devices'] == []


def test_holders_and_ownership_one_instance_on_two_gpus(gpu_host):
    report = _discover(gpu_host)
    uuids = gpu_host['instances']
    i1, i2, i3 = uuids['instance-00000001'], uuids['instance-00000002'], uuids['instance-00000003']
    holders = {}
    for gpu in report['gpus']:
        for mdev in gpu['mdevs']:
            holders.setdefault(mdev['instance_uuid'], []).append(gpu['address'])
    assert sorted(holders[i1]) == [GPU_A, GPU_A]
    assert sorted(holders[i2]) == [GPU_A, GPU_B]
    assert holders[i3] == [GPU_B]
    assert holders[None] == [GPU_A]          # the spare mdev

    assert discovery.ownership(report) == {
        i1: {GPU_A: 2},
        i2: {GPU_A: 1, GPU_B: 1},
        i3: {GPU_B: 1},
    }
    assert set(report['instances']) == {i1, i2, i3}
    assert report['instances'][i2]['name'] == 'instance-00000002'
    assert len(report['instances'][i2]['mdevs']) == 2
    assert report['instances'][i2]['source'].endswith('instance-00000002.xml')


def test_unheld_mdev_and_missing_mdev_warnings(tmp_path):
    spec = fakehost.default_gpu_host('compute-01', spare_mdevs=1)
    ghost = '11111111-2222-3333-4444-555555555555'
    spec['instances'].append({'name': 'instance-00000009', 'extra_mdevs': [ghost]})
    host = fakehost.build_host(str(tmp_path), spec)
    report = _discover(host)
    spare = [m for m in report['gpus'][0]['mdevs'] if m['instance_uuid'] is None]
    assert len(spare) == 1
    joined = '\n'.join(report['warnings'])
    assert 'mdev %s on GPU %s (type nvidia-222) is not held by any instance' % (spare[0]['uuid'], GPU_A) in joined
    ghost_holder = host['instances']['instance-00000009']
    assert 'instance %s (instance-00000009) holds mdev %s which does not exist in sysfs' % (
        ghost_holder, ghost) in joined
    # the dangling reference owns nothing
    assert ghost_holder not in discovery.ownership(report)
    # ownership_warnings recomputes the same two problems from the report alone
    recomputed = discovery.ownership_warnings(report)
    assert len(recomputed) == 2
    assert any(spare[0]['uuid'] in w for w in recomputed) and any(ghost in w for w in recomputed)


def test_no_warnings_on_a_consistent_host(tmp_path):
    host = fakehost.build_host(str(tmp_path), fakehost.default_gpu_host('compute-01'))
    assert _discover(host)['warnings'] == []


def test_plain_directory_layout_is_accepted(tmp_path):
    spec = fakehost.default_gpu_host('compute-01')
    spec['layout'] = 'plain'
    host = fakehost.build_host(str(tmp_path), spec)
    assert not os.path.islink(os.path.join(host['sysfs_root'], 'class', 'mdev_bus', GPU_A))
    plain = _discover(host)
    linked = _discover(fakehost.build_host(str(tmp_path / 'linked'), fakehost.default_gpu_host('compute-01')))
    assert plain['gpus'] == linked['gpus']
    assert discovery.ownership(plain) == discovery.ownership(linked)


def test_mdev_with_unknown_parent_is_a_warning_not_a_crash(gpu_host):
    # an mdev whose parent is not listed under class/mdev_bus (stale link)
    sysfs = gpu_host['sysfs_root']
    orphan_parent = os.path.join(sysfs, 'devices', 'pci0000:00', '0000:99:00.0')
    uuid = 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee'
    os.makedirs(os.path.join(orphan_parent, uuid))
    os.symlink(os.path.relpath(os.path.join(orphan_parent, uuid), os.path.join(sysfs, 'bus', 'mdev', 'devices')),
               os.path.join(sysfs, 'bus', 'mdev', 'devices', uuid))
    report = _discover(gpu_host)
    assert any('mdev %s: parent 0000:99:00.0 is not an mdev parent' % uuid in w for w in report['warnings'])
    assert uuid not in [m['uuid'] for g in report['gpus'] for m in g['mdevs']]


def test_mdev_type_link_absent_gives_null_type(gpu_host):
    mdev = sorted(gpu_host['mdevs'])[0]
    os.unlink(os.path.join(gpu_host['sysfs_root'], 'bus', 'mdev', 'devices', mdev, 'mdev_type'))
    report = _discover(gpu_host)
    types = dict((m['uuid'], m['type']) for g in report['gpus'] for m in g['mdevs'])
    assert types[mdev] is None


def test_host_without_gpus_sriov_or_numa_gives_empty_lists(tmp_path):
    host = fakehost.build_host(str(tmp_path), {'hostname': 'bare'})
    report = _discover(host)
    assert (report['gpus'], report['sriov_pfs'], report['pci_devices'], report['numa_cells'],
            report['instances'], report['warnings']) == ([], [], [], [], {}, [])
    assert discovery.ownership(report) == {}


def test_sysfs_root_with_nothing_but_the_directory(tmp_path):
    report = discovery.discover(str(tmp_path), domain_xml_glob=None, hostname='h')
    assert report['gpus'] == [] and report['numa_cells'] == [] and report['instances'] == {}


def test_default_hostname_is_the_machines(tmp_path):
    import socket
    report = discovery.discover(str(tmp_path), domain_xml_glob=None)
    assert report['hostname'] == socket.gethostname()


# ---------------------------------------------------------------------------
# SR-IOV and filtered PCI devices


def test_sriov_pf_and_held_vfs(sriov_host):
    report = _discover(sriov_host, pci_filters=[{'vendor_id': '10de', 'product_id': '25b6'}])
    uuids = sriov_host['instances']
    assert len(report['sriov_pfs']) == 1
    pf = report['sriov_pfs'][0]
    assert (pf['address'], pf['vendor_id'], pf['product_id'], pf['class_id']) == (PF, '8086', '1572', '020000')
    assert (pf['total_vfs'], pf['num_vfs'], pf['numa_node'], pf['vf_product_id']) == (8, 4, 1, '154c')
    assert pf['instance_uuid'] is None
    assert pf['vfs'] == [
        {'address': '0000:81:02.0', 'instance_uuid': uuids['instance-00000011']},
        {'address': '0000:81:02.1', 'instance_uuid': uuids['instance-00000012']},
        {'address': '0000:81:02.2', 'instance_uuid': None},
        {'address': '0000:81:02.3', 'instance_uuid': None},
    ]
    # VFs are never reported as other PCI devices, even when a filter matches them
    assert [d['address'] for d in report['pci_devices']] == ['0000:3b:00.0']
    assert report['pci_devices'][0] == {'address': '0000:3b:00.0', 'vendor_id': '10de', 'product_id': '25b6',
                                        'class_id': '030200', 'numa_node': 0,
                                        'instance_uuid': uuids['instance-00000013']}
    assert discovery.ownership(report) == {
        uuids['instance-00000011']: {PF: 1},
        uuids['instance-00000012']: {PF: 1},
        uuids['instance-00000013']: {'0000:3b:00.0': 1},
    }
    assert report['warnings'] == []


def test_vf_held_through_hostdev_counts_like_interface(tmp_path):
    spec = fakehost.default_sriov_host('compute-02')
    spec['sriov_pfs'][0]['vf_holders'] = {0: 'instance-00000011', 3: 'instance-00000011'}
    spec['instances'][0]['vf_as'] = 'hostdev'
    host = fakehost.build_host(str(tmp_path), spec)
    report = _discover(host)
    owner = host['instances']['instance-00000011']
    assert discovery.ownership(report)[owner] == {PF: 2}
    assert report['instances'][owner]['pci_addresses'] == ['0000:81:02.0', '0000:81:02.3']


def test_pci_filters_select_other_devices(tmp_path):
    spec = {
        'hostname': 'compute-03',
        'pci_devices': [
            {'address': '0000:3b:00.0', 'vendor_id': '10de', 'product_id': '20b5', 'numa_node': 0},
            {'address': '0000:3c:00.0', 'vendor_id': '10de', 'product_id': '2236', 'numa_node': 0},
            {'address': '0000:5e:00.0', 'vendor_id': '15b3', 'product_id': '101b', 'class_id': '020000'},
        ],
    }
    host = fakehost.build_host(str(tmp_path), spec)
    assert _discover(host)['pci_devices'] == []          # no filter: nothing reported
    one = _discover(host, pci_filters=[{'vendor_id': '10DE', 'product_id': '0x20b5'}])
    assert [d['address'] for d in one['pci_devices']] == ['0000:3b:00.0']
    vendor = _discover(host, pci_filters=[{'vendor_id': '10de'}])
    assert [d['address'] for d in vendor['pci_devices']] == ['0000:3b:00.0', '0000:3c:00.0']
    both = _discover(host, pci_filters=[{'vendor_id': '10de', 'product_id': '2236'},
                                        {'vendor_id': '15b3', 'product_id': None}])
    assert [d['address'] for d in both['pci_devices']] == ['0000:3c:00.0', '0000:5e:00.0']
    assert both['pci_devices'][1]['numa_node'] == -1


def test_filters_never_report_mdev_parent_gpus(gpu_host):
    report = _discover(gpu_host, pci_filters=[{'vendor_id': '10de'}])
    assert report['pci_devices'] == []
    assert len(report['gpus']) == 2


@pytest.mark.parametrize('bad', [
    [{'vendor_id': 'nvidia'}],
    [{'product_id': '20b5'}],
    [{'vendor_id': '10de', 'product_id': '20b5x'}],
    ['10de:20b5'],
])
def test_bad_pci_filters(tmp_path, bad):
    with pytest.raises(discovery.DiscoveryError) as info:
        discovery.discover(str(tmp_path), domain_xml_glob=None, pci_filters=bad, hostname='h')
    assert 'pci_filters[0]' in str(info.value)


def test_held_pci_address_not_reported_is_a_warning(tmp_path):
    spec = fakehost.default_sriov_host('compute-02')
    spec['instances'].append({'name': 'instance-00000014', 'extra_pci': ['0000:af:00.0']})
    host = fakehost.build_host(str(tmp_path), spec)
    report = _discover(host)     # no filter: the A2 and 0000:af:00.0 are not reported devices
    owner = host['instances']['instance-00000013']
    assert owner not in discovery.ownership(report)
    assert any('holds PCI device 0000:3b:00.0 which is not a reported device' in w for w in report['warnings'])
    assert any('0000:af:00.0' in w for w in report['warnings'])


def test_gpu_vfs_as_mdev_parents_hide_their_pf(tmp_path):
    # NVIDIA Ampere vGPU: the PF enables SR-IOV and every VF is an mdev parent.
    host = fakehost.build_host(str(tmp_path), {
        'hostname': 'ampere',
        'sriov_pfs': [{'address': '0000:ca:00.0', 'vendor_id': '10de', 'product_id': '20b5',
                       'vf_product_id': '20b5', 'class_id': '030200', 'total_vfs': 4, 'num_vfs': 2}],
    })
    sysfs = host['sysfs_root']
    vfs = fakehost.default_vf_addresses('0000:ca:00.0', 2)
    for vf in vfs:
        real = os.path.realpath(os.path.join(sysfs, 'bus', 'pci', 'devices', vf))
        os.makedirs(os.path.join(real, 'mdev_supported_types', 'nvidia-558'))
        for name, value in (('available_instances', '1'), ('device_api', 'vfio-pci'), ('name', 'NVIDIA A100-4C')):
            with open(os.path.join(real, 'mdev_supported_types', 'nvidia-558', name), 'w') as handle:
                handle.write(value + '\n')
        os.makedirs(os.path.join(sysfs, 'class', 'mdev_bus'), exist_ok=True)
        os.symlink(os.path.relpath(real, os.path.join(sysfs, 'class', 'mdev_bus')),
                   os.path.join(sysfs, 'class', 'mdev_bus', vf))
    report = _discover(host, pci_filters=[{'vendor_id': '10de'}])
    assert [g['address'] for g in report['gpus']] == vfs
    assert all(g['physfn'] == '0000:ca:00.0' for g in report['gpus'])
    assert report['sriov_pfs'] == [] and report['pci_devices'] == []


# ---------------------------------------------------------------------------
# NUMA


def test_numa_cells(tmp_path):
    host = fakehost.build_host(str(tmp_path), fakehost.default_plain_host('compute-04'))
    cells = _discover(host)['numa_cells']
    assert [c['id'] for c in cells] == [0, 1]
    assert cells[0]['cpus'] == list(range(0, 16)) + list(range(32, 48))
    assert cells[1]['cpus'] == list(range(16, 32)) + list(range(48, 64))
    # "Node 0 MemTotal:  65808832 kB" -> 64266 MiB
    assert cells[0]['memory_mb'] == 64266
    assert _discover(host, numa=False)['numa_cells'] == []


def test_numa_sparse_online_and_memory_only_node(tmp_path):
    node = tmp_path / 'devices' / 'system' / 'node'
    for n, cpus, kb in ((0, '0-3', 65808832), (2, '', 1048576)):
        (node / ('node%d' % n)).mkdir(parents=True)
        (node / ('node%d' % n) / 'cpulist').write_text(cpus + '\n')
        (node / ('node%d' % n) / 'meminfo').write_text(
            'Node %d MemTotal:       %d kB\nNode %d MemFree:  1 kB\n' % (n, kb, n))
    (node / 'online').write_text('0,2\n')
    cells = discovery.discover(str(tmp_path), domain_xml_glob=None, hostname='h')['numa_cells']
    assert cells == [{'id': 0, 'cpus': [0, 1, 2, 3], 'memory_mb': 64266},
                     {'id': 2, 'cpus': [], 'memory_mb': 1024}]


@pytest.mark.parametrize('text,expected', [
    ('0-15,32-47', list(range(16)) + list(range(32, 48))),
    ('0', [0]),
    ('0,2,4-5', [0, 2, 4, 5]),
    ('', []),
    ('3-3', [3]),
])
def test_parse_cpulist(text, expected):
    assert discovery.parse_cpulist(text) == expected


@pytest.mark.parametrize('text', ['0-', 'a', '5-2', '0,,1', '-1', '0-15:2/4'])
def test_parse_cpulist_rejects(text):
    with pytest.raises(discovery.DiscoveryError) as info:
        discovery.parse_cpulist(text, '/x/cpulist')
    assert '/x/cpulist' in str(info.value)


# ---------------------------------------------------------------------------
# libvirt XML


def test_domain_xml_strings_and_explicit_paths(gpu_host):
    i1 = gpu_host['instances']['instance-00000001']
    live = fakehost.domain_xml('instance-00000001', i1, mdevs=[])   # guest lost its mdevs live
    report = _discover(gpu_host, domain_xmls=[('virsh dumpxml %s' % i1, live)])
    assert report['instances'][i1]['source'] == 'virsh dumpxml %s' % i1
    assert i1 not in discovery.ownership(report)
    only_one = _discover(gpu_host, domain_xml_paths=[gpu_host['xml_paths'][0]])
    assert set(only_one['instances']) == {i1}
    none = _discover(gpu_host, domain_xml_glob=None)
    assert none['instances'] == {} and discovery.ownership(none) == {}


def test_parse_domain_xml_accepts_uppercase_uuid_and_decimal_address():
    uuid, info = discovery.parse_domain_xml(
        "<domain type='kvm'><name>g</name><uuid>ABCDEFAB-1234-5678-9ABC-DEF012345678</uuid><devices>"
        "<hostdev mode='subsystem' type='pci'><source><address domain='0' bus='129' slot='2' function='1'/>"
        "</source></hostdev>"
        "<hostdev mode='subsystem' type='mdev'><source><address uuid='AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE'/>"
        "</source></hostdev>"
        "<interface type='bridge'><source bridge='br0'/></interface>"
        "</devices></domain>", 'inline')
    assert uuid == 'abcdefab-1234-5678-9abc-def012345678'
    assert info == {'name': 'g', 'mdevs': ['aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee'],
                    'pci_addresses': ['0000:81:02.1'], 'mem_encryption': None, 'vcpus': 0,
                    'pinned_cpus': None}


def test_domain_defined_twice_is_a_warning(gpu_host, tmp_path):
    copy = tmp_path / 'copy.xml'
    with open(gpu_host['xml_paths'][0]) as handle:
        copy.write_text(handle.read())
    report = _discover(gpu_host, domain_xml_paths=gpu_host['xml_paths'] + [str(copy)])
    assert any('is defined twice' in w and str(copy) in w for w in report['warnings'])


# ---------------------------------------------------------------------------
# errors name the file


def _expect_error(host, path_fragment, **kwargs):
    with pytest.raises(discovery.DiscoveryError) as info:
        _discover(host, **kwargs)
    err = info.value
    assert isinstance(err, PlacementError)
    assert err.status == 0 and err.code == 'placement_upgrade.discovery'
    assert path_fragment in str(err)
    assert err.to_dict()['detail'] == str(err)
    return err


def test_missing_sysfs_root(tmp_path):
    missing = str(tmp_path / 'nope')
    with pytest.raises(discovery.DiscoveryError) as info:
        discovery.discover(missing, domain_xml_glob=None)
    assert missing in str(info.value)


def _gpu_file(host, *parts):
    return os.path.join(host['sysfs_root'], 'class', 'mdev_bus', GPU_A, *parts)


def test_non_integer_available_instances(gpu_host):
    path = _gpu_file(gpu_host, 'mdev_supported_types', 'nvidia-222', 'available_instances')
    with open(path, 'w') as handle:
        handle.write('many\n')
    err = _expect_error(gpu_host, path)
    assert 'expected an integer' in str(err)
    assert err.path == path


def test_missing_available_instances(gpu_host):
    path = _gpu_file(gpu_host, 'mdev_supported_types', 'nvidia-222', 'available_instances')
    os.unlink(path)
    _expect_error(gpu_host, path)


def test_unreadable_file(gpu_host):
    path = _gpu_file(gpu_host, 'mdev_supported_types', 'nvidia-222', 'name')
    os.unlink(path)
    os.mkdir(path)      # reading a directory fails for root too (unlike chmod 000)
    err = _expect_error(gpu_host, path)
    assert 'cannot read' in str(err)


@pytest.mark.parametrize('name,content', [('vendor', 'nvidia'), ('numa_node', 'zero'), ('class', '0xzz')])
def test_malformed_pci_identity(gpu_host, name, content):
    path = os.path.join(gpu_host['sysfs_root'], 'bus', 'pci', 'devices', GPU_B, name)
    with open(path, 'w') as handle:
        handle.write(content + '\n')
    _expect_error(gpu_host, path)


def test_malformed_sriov_numvfs(sriov_host):
    path = os.path.join(sriov_host['sysfs_root'], 'bus', 'pci', 'devices', PF, 'sriov_numvfs')
    with open(path, 'w') as handle:
        handle.write('4 vfs\n')
    _expect_error(sriov_host, path)


def test_bad_cpulist_names_the_file(tmp_path):
    host = fakehost.build_host(str(tmp_path), fakehost.default_plain_host())
    path = os.path.join(host['sysfs_root'], 'devices', 'system', 'node', 'node1', 'cpulist')
    with open(path, 'w') as handle:
        handle.write('16-31,48-\n')
    _expect_error(host, path)
    # numa=False does not read it
    assert _discover(host, numa=False)['numa_cells'] == []


@pytest.mark.parametrize('content', ['Node 0 MemFree: 12 kB\n', 'Node 0 MemTotal: lots kB\n',
                                     'Node 1 MemTotal: 1024 kB\n'])
def test_bad_meminfo_names_the_file(tmp_path, content):
    host = fakehost.build_host(str(tmp_path), fakehost.default_plain_host())
    path = os.path.join(host['sysfs_root'], 'devices', 'system', 'node', 'node0', 'meminfo')
    with open(path, 'w') as handle:
        handle.write(content)
    _expect_error(host, path)


def test_missing_meminfo_of_online_node(tmp_path):
    host = fakehost.build_host(str(tmp_path), fakehost.default_plain_host())
    path = os.path.join(host['sysfs_root'], 'devices', 'system', 'node', 'node1', 'meminfo')
    os.unlink(path)
    _expect_error(host, path)


def test_bad_online_list(tmp_path):
    host = fakehost.build_host(str(tmp_path), fakehost.default_plain_host())
    path = os.path.join(host['sysfs_root'], 'devices', 'system', 'node', 'online')
    with open(path, 'w') as handle:
        handle.write('0-x\n')
    _expect_error(host, path)


@pytest.mark.parametrize('content,reason', [
    ('<domain><name>x</name>', 'not valid XML'),
    ('<network><name>x</name></network>', 'expected <domain>'),
    ('<domain><name>x</name></domain>', '<uuid>'),
    ("<domain><uuid>%s</uuid><devices><hostdev mode='subsystem' type='mdev'><source/></hostdev></devices>"
     "</domain>", 'mdev <hostdev>'),
    ("<domain><uuid>%s</uuid><devices><hostdev mode='subsystem' type='pci'><source><address bus='zz' "
     "slot='0' function='0'/></source></hostdev></devices></domain>", 'bad PCI <address>'),
    ("<domain><uuid>%s</uuid><devices><hostdev mode='subsystem' type='pci'><source><address bus='0x100' "
     "slot='0' function='0'/></source></hostdev></devices></domain>", 'out of range'),
    ("<domain><uuid>%s</uuid><devices><interface type='hostdev'><source/></interface></devices></domain>",
     'hostdev <interface>'),
])
def test_bad_domain_xml_names_the_file(gpu_host, content, reason):
    path = os.path.join(os.path.dirname(gpu_host['domain_xml_glob']), 'instance-00000002.xml')
    if '%s' in content:
        content = content % gpu_host['instances']['instance-00000002']
    with open(path, 'w') as handle:
        handle.write(content)
    err = _expect_error(gpu_host, path)
    assert reason in str(err)


def test_bad_domain_xml_string_names_its_label(gpu_host):
    err = _expect_error(gpu_host, 'virsh dumpxml guest-1', domain_xmls=[('virsh dumpxml guest-1', '<domain')])
    assert 'not valid XML' in str(err)


def test_errors_are_not_tracebacks_in_str(gpu_host):
    path = _gpu_file(gpu_host, 'mdev_supported_types', 'nvidia-222', 'available_instances')
    with open(path, 'w') as handle:
        handle.write('-1\n')
    err = _expect_error(gpu_host, path)
    assert 'Traceback' not in str(err) and 'negative' in str(err)


def test_unlistable_domain_xml_directory_is_an_error_not_an_empty_list(gpu_host, monkeypatch):
    folder = os.path.dirname(gpu_host['domain_xml_glob'])
    # the tests run as root, where chmod 000 changes nothing: simulate the non-root view
    monkeypatch.setattr(discover_domains, '_can_list', lambda path: path != folder)
    err = _expect_error(gpu_host, folder)
    assert 'become' in str(err)
