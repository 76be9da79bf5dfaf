# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Memory encryption (nova 2025.2): MEM_ENCRYPTION_CONTEXT from the root to <node>_amd_sev.

The rules come from nova 34.0.0: nova/virt/libvirt/host.py (get_mem_encryption_inventories,
supports_amd_sev*, _kernel_supports_amd_sev) and nova/virt/libvirt/driver.py
(_update_provider_tree_for_memory_encryption, _ensure_memory_encryption_providers,
_reshape_memory_encryption_allocations).  tests/nova_oracle checks the result with nova itself.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

import fakehost
from test_reshaper_support import Wrapper, comparable, make_provider, put

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import layout
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import planner
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state

MEC = 'MEM_ENCRYPTION_CONTEXT'


def _sev_report(tmp_path, spec):
    built = fakehost.build_host(str(tmp_path / 'host'), spec, clean=True)
    return built, discovery.discover(built['sysfs_root'], domain_xml_glob=built['domain_xml_glob'],
                                     hostname=spec['hostname'], nova_conf=built['nova_conf'],
                                     domain_capabilities=built['domain_capabilities'])


def test_discovery_reads_kernel_parameters_and_domain_capabilities(tmp_path):
    built, report = _sev_report(tmp_path, fakehost.default_sev_host(name='cn'))
    assert report['mem_encryption']['source'] == built['domain_capabilities']
    assert report['mem_encryption']['models'] == {
        'amd_sev': {'total': 15, 'trait': 'HW_CPU_X86_AMD_SEV'},
        'amd_sev_es': {'total': 494, 'trait': 'HW_CPU_X86_AMD_SEV_ES'}}
    models = sorted(i['mem_encryption'] or '-' for i in report['instances'].values())
    assert models == ['-', 'amd-sev', 'amd-sev']


def test_sev_es_needs_its_kernel_parameter_and_is_hidden_by_snp(tmp_path):
    spec = fakehost.default_sev_host(name='cn', sev_es=False)
    assert list(_sev_report(tmp_path, spec)[1]['mem_encryption']['models']) == ['amd_sev']
    # host.py supports_amd_sev_es: SEV-ES is ignored when the kernel enables SEV-SNP;
    # supports_amd_sev_snp: SNP needs sev-snp among the launchSecurity sectypes
    spec = fakehost.default_sev_host(name='cn')
    spec['sev']['kernel']['sev_snp'] = True
    assert list(_sev_report(tmp_path, spec)[1]['mem_encryption']['models']) == ['amd_sev']
    spec['sev']['launch_security'] = ['sev', 'sev-es', 'sev-snp']
    models = _sev_report(tmp_path, spec)[1]['mem_encryption']['models']
    assert models == {'amd_sev': {'total': 15, 'trait': 'HW_CPU_X86_AMD_SEV'},
                      'amd_sev_snp': {'total': 494, 'trait': 'HW_CPU_X86_AMD_SEV_SNP'}}


def test_no_sev_without_the_kernel_parameter_or_libvirt_support(tmp_path):
    spec = fakehost.default_sev_host(name='cn')
    spec['sev']['kernel'] = {'sev': False}
    assert _sev_report(tmp_path, spec)[1]['mem_encryption']['models'] == {}
    spec = fakehost.default_sev_host(name='cn')
    spec['sev']['supported'] = False
    assert _sev_report(tmp_path, spec)[1]['mem_encryption']['models'] == {}


def test_kernel_sev_without_domain_capabilities_warns(tmp_path):
    built = fakehost.build_host(str(tmp_path / 'host'), fakehost.default_sev_host(name='cn'), clean=True)
    report = discovery.discover(built['sysfs_root'], domain_xml_glob=built['domain_xml_glob'], hostname='cn')
    assert report['mem_encryption'] is None
    assert any('AMD SEV' in w and 'domain capabilities' in w for w in report['warnings'])


def test_launch_security_policy_gives_the_model():
    xml = fakehost.domain_xml('g', '11111111-2222-3333-4444-555555555555', mem_encryption='amd-sev-es')
    assert discovery.parse_domain_xml(xml, 'g.xml')[1]['mem_encryption'] == 'amd-sev-es'
    bad = xml.replace('0x0037', 'zz')
    with pytest.raises(discovery.DiscoveryError) as info:
        discovery.parse_domain_xml(bad, 'g.xml')
    assert 'policy' in str(info.value) and 'g.xml' in str(info.value)


def test_layout_children_as_nova_writes_them(tmp_path):
    _built, report = _sev_report(tmp_path, fakehost.default_sev_host(name='cn'))
    lay = layout.build_layout('cn', report)
    kids = dict((c['name'], c) for c in lay['children'])
    assert sorted(kids) == ['cn_amd_sev', 'cn_amd_sev_es']
    assert kids['cn_amd_sev']['inventories'] == {MEC: {'total': 15, 'min_unit': 1, 'max_unit': 1, 'step_size': 1,
                                                       'reserved': 0, 'allocation_ratio': 1.0}}
    assert kids['cn_amd_sev']['traits'] == ['HW_CPU_X86_AMD_SEV', 'OWNER_NOVA']
    assert kids['cn_amd_sev_es']['traits'] == ['HW_CPU_X86_AMD_SEV_ES', 'OWNER_NOVA']
    assert kids['cn_amd_sev']['takes_all'] == MEC and kids['cn_amd_sev_es']['takes_all'] is None
    assert lay['root_traits_remove'] == ['HW_CPU_X86_AMD_SEV']
    # a model with no slots gets no provider (nova removes it)
    report['mem_encryption']['models']['amd_sev_es']['total'] = 0
    lay = layout.build_layout('cn', report)
    assert [c['name'] for c in lay['children']] == ['cn_amd_sev'] and lay['remove'] == ['cn_amd_sev_es']


def _legacy_sev_node(backend, report, name='cn', with_gpu_vgpu=0):
    """nova < 2025.2: MEM_ENCRYPTION_CONTEXT and HW_CPU_X86_AMD_SEV on the root; every SEV
    guest holds MEM_ENCRYPTION_CONTEXT 1 there, other guests VCPU/MEMORY_MB only."""
    inventories = {'VCPU': {'total': 64, 'allocation_ratio': 4.0}, 'MEMORY_MB': {'total': 131072},
                   MEC: {'total': 15, 'max_unit': 1}}
    if with_gpu_vgpu:
        inventories['VGPU'] = {'total': with_gpu_vgpu, 'max_unit': with_gpu_vgpu}
    root = make_provider(backend, name, inventories, traits=['COMPUTE_NODE', 'HW_CPU_X86_AMD_SEV'])
    consumers = {}
    for uuid, info in sorted(report['instances'].items()):
        res = {'VCPU': 2, 'MEMORY_MB': 2048}
        if info.get('mem_encryption'):
            res[MEC] = 1
        held = sum(1 for g in report.get('gpus', []) for m in g['mdevs'] if m['instance_uuid'] == uuid)
        if held:
            res['VGPU'] = held
        put(backend, uuid, {root: {'resources': res}}, consumer_type='INSTANCE')
        consumers[uuid] = res
    return root, consumers


def test_reshape_moves_every_allocation_to_amd_sev_and_rolls_back(embedded_backend, tmp_path):
    _built, report = _sev_report(tmp_path, fakehost.default_sev_host(name='cn'))
    root, consumers = _legacy_sev_node(embedded_backend, report)
    before = comparable(provider_tree_state(embedded_backend, root))
    snaps = str(tmp_path / 'snaps')
    result = reshaper.reshape_node(embedded_backend, 'cn', report, snapshot_dir=snaps)
    assert result['status'] == 'reshaped' and result['verified'], result['msg']
    state = provider_tree_state(embedded_backend, root)
    by_name = dict((p['name'], u) for u, p in state['providers'].items())
    sev = by_name['cn_amd_sev']
    assert MEC not in state['providers'][root]['inventories']
    assert 'HW_CPU_X86_AMD_SEV' not in state['providers'][root]['traits']
    for uuid, res in consumers.items():
        allocs = embedded_backend.get_allocations(uuid)['allocations']
        if MEC in res:
            assert allocs[sev]['resources'] == {MEC: 1}
            assert MEC not in allocs[root]['resources']
        else:
            assert sev not in allocs
        assert allocs[root]['resources']['VCPU'] == 2
    assert result['plan']['assignments'][sorted(c for c in consumers if MEC in consumers[c])[0]][MEC]['how'] == \
        'nova-rule'
    # a rerun finds nothing to do
    assert reshaper.reshape_node(embedded_backend, 'cn', report, snapshot_dir=snaps)['status'] == 'noop'
    # the rollback restores the root's inventory, trait and every allocation
    back = reshaper.rollback_node(embedded_backend, 'cn', snapshot_dir=snaps, remove_children=True)
    assert back['verified'], back['msg']
    assert comparable(provider_tree_state(embedded_backend, root)) == before


def test_gpu_and_sev_in_one_reshape(embedded_backend, tmp_path):
    """A node needing two kinds at once: one POST /reshaper, one rollback for both."""
    spec = fakehost.default_gpu_host(name='cn')
    sev = fakehost.default_sev_host(name='cn')
    spec['sev'] = sev['sev']
    spec['instances'][0]['mem_encryption'] = 'amd-sev'
    _built, report = _sev_report(tmp_path, spec)
    vgpus = sum(8 for _g in report['gpus'])
    root, consumers = _legacy_sev_node(embedded_backend, report, with_gpu_vgpu=vgpus)
    before = comparable(provider_tree_state(embedded_backend, root))
    spy = Wrapper(embedded_backend)
    snaps = str(tmp_path / 'snaps')
    result = reshaper.reshape_node(spy, 'cn', report, snapshot_dir=snaps)
    assert result['status'] == 'reshaped' and result['verified'], result['msg']
    assert len(spy.reshape_calls) == 1
    assert set(result['plan']['moved_classes']) == {'VGPU', MEC}
    names = sorted(c['name'] for c in result['plan']['children'])
    assert names == ['cn_amd_sev', 'cn_amd_sev_es', 'cn_pci_0000_84_00_0', 'cn_pci_0000_85_00_0']
    back = reshaper.rollback_node(embedded_backend, 'cn', snapshot_dir=snaps, remove_children=True)
    assert back['verified'], back['msg']
    assert comparable(provider_tree_state(embedded_backend, root)) == before


def test_sev_allocations_on_a_host_without_sev_stop_the_node(embedded_backend, tmp_path):
    spec = fakehost.default_sev_host(name='cn')
    _built, report = _sev_report(tmp_path, spec)
    root, _consumers = _legacy_sev_node(embedded_backend, report)
    report['mem_encryption'] = None            # no domain capabilities given to discovery
    with pytest.raises(planner.PlanError) as info:
        reshaper.reshape_node(embedded_backend, 'cn', report, snapshot_dir=str(tmp_path / 's'))
    assert 'MEM_ENCRYPTION_CONTEXT' in str(info.value) and 'Nothing was changed' in str(info.value)
    assert MEC in embedded_backend.get_inventories(root)['inventories']


def test_a_sev_es_guest_on_the_root_goes_to_amd_sev_with_a_warning(embedded_backend, tmp_path):
    """nova's _reshape_memory_encryption_allocations has one target, the HW_CPU_X86_AMD_SEV child."""
    spec = fakehost.default_sev_host(name='cn')
    spec['instances'][1]['mem_encryption'] = 'amd-sev-es'
    _built, report = _sev_report(tmp_path, spec)
    _legacy_sev_node(embedded_backend, report)
    result = reshaper.reshape_node(embedded_backend, 'cn', report, snapshot_dir=str(tmp_path / 's'))
    assert result['status'] == 'reshaped' and result['verified'], result['msg']
    es = [u for u, i in report['instances'].items() if i['mem_encryption'] == 'amd-sev-es'][0]
    assert any(es in w and 'amd-sev-es' in w and 'cn_amd_sev' in w for w in result['warnings'])
    assert result['plan']['assignments'][es][MEC]['to'] == {'cn_amd_sev': 1}


def test_sev_stop_names_the_consumers(embedded_backend, tmp_path):
    _built, report = _sev_report(tmp_path, fakehost.default_sev_host(name='cn'))
    _legacy_sev_node(embedded_backend, report)
    report['mem_encryption'] = None
    with pytest.raises(planner.PlanError) as info:
        reshaper.reshape_node(embedded_backend, 'cn', report, snapshot_dir=str(tmp_path / 's'))
    holders = sorted(u for u, i in report['instances'].items() if i['mem_encryption'])
    assert info.value.consumers == holders
    assert all(h in str(info.value) for h in holders)


def test_intel_tdx_needs_host_passthrough_and_takes_the_capacity(tmp_path):
    """host.py supports_intel_tdx / _get_tdx_capacity: cpu_mode host-passthrough, <tdx
    supported='yes'>, capacity from [libvirt]num_intel_tdx_guests when set, else the misc cgroup."""
    spec = fakehost.default_tdx_host(name='cn')
    models = _sev_report(tmp_path, spec)[1]['mem_encryption']['models']
    assert models == {'intel_tdx': {'total': 63, 'trait': 'HW_CPU_X86_INTEL_TDX'}}
    spec['nova_conf']['libvirt']['num_intel_tdx_guests'] = 16
    assert _sev_report(tmp_path, spec)[1]['mem_encryption']['models']['intel_tdx']['total'] == 16
    del spec['nova_conf']['libvirt']['cpu_mode']
    assert _sev_report(tmp_path, spec)[1]['mem_encryption']['models'] == {}


def _legacy_tdx_node(backend, report, name='cn'):
    """A TDX host whose root still holds MEM_ENCRYPTION_CONTEXT inventory and one allocation of it."""
    root = make_provider(backend, name, {'VCPU': {'total': 64}, 'MEMORY_MB': {'total': 131072},
                                         MEC: {'total': 15, 'max_unit': 1}}, traits=['COMPUTE_NODE'])
    guest = sorted(report['instances'])[0]
    put(backend, guest, {root: {'resources': {'VCPU': 2, 'MEMORY_MB': 2048, MEC: 1}}}, consumer_type='INSTANCE')
    return root, guest


def _tdx_report(tmp_path, nova_conf=True, domain_capabilities=True):
    built = fakehost.build_host(str(tmp_path / 'host'), fakehost.default_tdx_host(name='cn'), clean=True)
    return discovery.discover(built['sysfs_root'], domain_xml_glob=built['domain_xml_glob'], hostname='cn',
                              nova_conf=built['nova_conf'] if nova_conf else None,
                              domain_capabilities=built['domain_capabilities'] if domain_capabilities else None)


@pytest.mark.parametrize('domain_capabilities', [False, True])
def test_root_mem_encryption_without_nova_conf_is_never_noop(embedded_backend, tmp_path, domain_capabilities):
    """issue 26: without nova.conf a TDX root holding MEM_ENCRYPTION_CONTEXT (inventory and an
    allocation) was "noop"; nova 34 then fails its start-up reshape (ReshapeFailed)."""
    report = _tdx_report(tmp_path, nova_conf=False, domain_capabilities=domain_capabilities)
    assert report['nova_conf'] is None
    root, guest = _legacy_tdx_node(embedded_backend, report)
    for check_mode in (True, False):
        with pytest.raises(planner.PlanError) as info:
            reshaper.reshape_node(embedded_backend, 'cn', report, snapshot_dir=str(tmp_path / 's'),
                                  check_mode=check_mode)
        text = str(info.value)
        assert info.value.consumers == [guest]
        assert 'At start-up nova 34 moves every MEM_ENCRYPTION_CONTEXT allocation of the root to the AMD SEV ' \
               'child cn_amd_sev' in text and 'ReshapeFailed' in text, text
        if domain_capabilities:
            # what is missing does not change nova's verdict: no AMD SEV, no reshape
            assert 'no AMD SEV support' in text and 'No reshape leads' in text, text
        else:
            assert 'Missing input: libvirt\'s domain capabilities' in text, text
            assert 'the node\'s nova.conf (device_info nova_conf; none was read)' in text, text
    assert MEC in embedded_backend.get_inventories(root)['inventories']


def test_tdx_root_mem_encryption_says_no_reshape_exists(embedded_backend, tmp_path):
    """issue 26: with nova.conf and domain capabilities given, the refusal asked for the domain
    capabilities; the real reason is that nova 34 moves root MEM_ENCRYPTION_CONTEXT only to the
    AMD SEV child (_reshape_memory_encryption_allocations), which a TDX host does not get."""
    report = _tdx_report(tmp_path)
    assert report['mem_encryption']['models'] == {'intel_tdx': {'total': 63, 'trait': 'HW_CPU_X86_INTEL_TDX'}}
    root, guest = _legacy_tdx_node(embedded_backend, report)
    with pytest.raises(planner.PlanError) as info:
        reshaper.reshape_node(embedded_backend, 'cn', report, snapshot_dir=str(tmp_path / 's'))
    text = str(info.value)
    assert 'Give device_info the domain capabilities' not in text and 'Missing input' not in text, text
    assert '_reshape_memory_encryption_allocations' in text and 'no AMD SEV support' in text, text
    assert 'the models it does report (intel_tdx)' in text and 'No reshape leads' in text, text
    assert ('openstack --os-placement-api-version 1.28 resource provider allocation unset --provider %s '
            '--resource-class MEM_ENCRYPTION_CONTEXT <consumer>' % root) in text, text
    assert ('openstack resource provider inventory delete %s --resource-class MEM_ENCRYPTION_CONTEXT' % root) in text
    assert info.value.consumers == [guest] and guest in text
    assert MEC in embedded_backend.get_inventories(root)['inventories']
