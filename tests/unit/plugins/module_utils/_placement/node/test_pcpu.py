# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""VCPU to PCPU (nova Train): pinned guests' VCPU becomes PCPU on the root.

Rules from nova 34.0.0 nova/virt/libvirt/driver.py (_update_provider_tree_for_pcpu,
_get_pcpu_available, _get_vcpu_available) and nova/virt/hardware.py (parse_cpu_spec);
tests/nova_oracle checks the result with nova itself.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

import fakehost
from test_reshaper_support import Wrapper, comparable, make_provider, put, report_for

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import layout
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import novaconf
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state


def test_cpu_spec_syntax_is_novas():
    assert novaconf.parse_cpu_spec('1-4,^3,6') == {1, 2, 4, 6}
    assert novaconf.parse_cpu_spec('0-7,^2-3') == {0, 1, 4, 5, 6, 7}
    with pytest.raises(ValueError):
        novaconf.parse_cpu_spec('4-2')


def test_pinned_guests_are_those_pinned_one_cpu_per_vcpu_in_the_dedicated_set(tmp_path):
    report = report_for(tmp_path, fakehost.default_pinned_host(name='cn'), nova=True)
    assert report['cpus_online'] == list(range(8))
    cpu = layout.build_layout('cn', report)['cpu']
    names = dict((u, i['name']) for u, i in report['instances'].items())
    assert dict((names[u], v) for u, v in cpu['pinned'].items()) == {
        'instance-00000041': True, 'instance-00000042': True, 'instance-00000043': False}
    assert cpu['pcpu'] == {'total': 6, 'min_unit': 1, 'max_unit': 6, 'step_size': 1,
                           'allocation_ratio': 1.0, 'reserved': 0}
    assert cpu['vcpu_total'] == 2


def test_dedicated_set_outside_the_online_cpus_is_refused(tmp_path):
    spec = fakehost.default_pinned_host(name='cn')
    spec['nova_conf']['compute']['cpu_dedicated_set'] = '2-9'
    report = report_for(tmp_path, spec, nova=True)
    with pytest.raises(layout.LayoutError) as info:
        layout.build_layout('cn', report)
    assert '8,9' in str(info.value) and 'not online' in str(info.value)


def _legacy_node(backend, report, extra=()):
    root = make_provider(backend, 'cn', {'VCPU': {'total': 8, 'allocation_ratio': 4.0},
                                         'MEMORY_MB': {'total': 16384}})
    for uuid in sorted(report['instances']):
        put(backend, uuid, {root: {'resources': {'VCPU': 2, 'MEMORY_MB': 1024}}})
    for uuid in extra:
        put(backend, uuid, {root: {'resources': {'VCPU': 1, 'MEMORY_MB': 512}}})
    return root


def test_reshape_swaps_pinned_guests_and_reports_novas_cpu_inventory(embedded_backend, tmp_path):
    report = report_for(tmp_path / 'h', fakehost.default_pinned_host(name='cn'), nova=True)
    root = _legacy_node(embedded_backend, report)
    before = comparable(provider_tree_state(embedded_backend, root))
    snaps = str(tmp_path / 'snaps')
    result = reshaper.reshape_node(embedded_backend, 'cn', report, snapshot_dir=snaps)
    assert result['status'] == 'reshaped' and result['verified'], result['msg']
    inv = embedded_backend.get_inventories(root)['inventories']
    assert inv['PCPU']['total'] == 6 and inv['PCPU']['allocation_ratio'] == 1.0
    assert inv['VCPU']['total'] == 2 and inv['VCPU']['allocation_ratio'] == 4.0   # ratio kept
    names = dict((i['name'], u) for u, i in report['instances'].items())
    for name, want in (('instance-00000041', 'PCPU'), ('instance-00000042', 'PCPU'),
                       ('instance-00000043', 'VCPU')):
        res = embedded_backend.get_allocations(names[name])['allocations'][root]['resources']
        assert res == {want: 2, 'MEMORY_MB': 1024}, name
    assert sorted(result['plan']['cpu']['pinned']) == sorted([names['instance-00000041'],
                                                              names['instance-00000042']])
    assert reshaper.reshape_node(embedded_backend, 'cn', report, snapshot_dir=snaps)['status'] == 'noop'
    back = reshaper.rollback_node(embedded_backend, 'cn', snapshot_dir=snaps)
    assert back['verified'], back['msg']
    assert comparable(provider_tree_state(embedded_backend, root)) == before


def test_a_consumer_no_domain_explains_defers_the_node(embedded_backend, tmp_path):
    report = report_for(tmp_path / 'h', fakehost.default_pinned_host(name='cn'), nova=True)
    ghost = 'c0ffee00-0000-4000-8000-000000000001'
    root = _legacy_node(embedded_backend, report, extra=[ghost])
    result = reshaper.reshape_node(embedded_backend, 'cn', report, snapshot_dir=str(tmp_path / 's'))
    assert result['status'] == 'deferred' and not result['changed']
    assert ghost in result['deferred_reason'] and 'pcpu.pinned' in result['deferred_reason']
    assert 'PCPU' not in embedded_backend.get_inventories(root)['inventories']
    # the operator's word decides
    result = reshaper.reshape_node(embedded_backend, 'cn', report, snapshot_dir=str(tmp_path / 's'),
                                   layout_options={'pcpu': {'unpinned': [ghost]}})
    assert result['status'] == 'reshaped' and result['verified'], result['msg']
    assert embedded_backend.get_allocations(ghost)['allocations'][root]['resources']['VCPU'] == 1


def test_no_shared_set_with_unpinned_guests_stops(embedded_backend, tmp_path):
    spec = fakehost.default_pinned_host(name='cn')
    del spec['nova_conf']['compute']['cpu_shared_set']
    report = report_for(tmp_path / 'h', spec, nova=True)
    root = _legacy_node(embedded_backend, report)
    with pytest.raises(Exception) as info:
        reshaper.reshape_node(embedded_backend, 'cn', report, snapshot_dir=str(tmp_path / 's'))
    assert 'no VCPU' in str(info.value) and 'Nothing was changed' in str(info.value)
    assert 'PCPU' not in embedded_backend.get_inventories(root)['inventories']


def test_every_kind_in_one_reshape_and_one_rollback(embedded_backend, tmp_path):
    """vGPU children, PCI healing, SEV and PCPU at once: one POST /reshaper, and the
    rollback restores all of it (inventories, allocations, the root's SEV trait)."""
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery
    spec = fakehost.mixed_host(name='cn')
    built = fakehost.build_host(str(tmp_path / 'h'), spec, clean=True)
    report = discovery.discover(built['sysfs_root'], domain_xml_glob=built['domain_xml_glob'], hostname='cn',
                                nova_conf=built['nova_conf'], domain_capabilities=built['domain_capabilities'])
    root = make_provider(embedded_backend, 'cn', {
        'VCPU': {'total': 8, 'allocation_ratio': 4.0}, 'MEMORY_MB': {'total': 16384},
        'VGPU': {'total': 16, 'max_unit': 16}, 'MEM_ENCRYPTION_CONTEXT': {'total': 15, 'max_unit': 1}},
        traits=['COMPUTE_NODE', 'HW_CPU_X86_AMD_SEV'])
    held = {}
    for gpu in report['gpus']:
        for mdev in gpu['mdevs']:
            if mdev['instance_uuid']:
                held[mdev['instance_uuid']] = held.get(mdev['instance_uuid'], 0) + 1
    for uuid, info in sorted(report['instances'].items()):
        res = {'VCPU': 1, 'MEMORY_MB': 512}
        if held.get(uuid):
            res['VGPU'] = held[uuid]
        if info.get('mem_encryption'):
            res['MEM_ENCRYPTION_CONTEXT'] = 1
        put(embedded_backend, uuid, {root: {'resources': res}})
    before = comparable(provider_tree_state(embedded_backend, root))
    spy = Wrapper(embedded_backend)
    snaps = str(tmp_path / 'snaps')
    result = reshaper.reshape_node(spy, 'cn', report, snapshot_dir=snaps)
    assert result['status'] == 'reshaped' and result['verified'], result['msg']
    assert len(spy.reshape_calls) == 1
    inv = embedded_backend.get_inventories(root)['inventories']
    assert sorted(inv) == ['MEMORY_MB', 'PCPU', 'VCPU']
    names = dict((i['name'], u) for u, i in report['instances'].items())
    first = embedded_backend.get_allocations(names['instance-00000001'])['allocations']
    assert first[root]['resources'] == {'PCPU': 1, 'MEMORY_MB': 512}
    healed = [c for c in report['instances'] if any(
        rp != root and 'CUSTOM_PCI' in ''.join(a['resources'])
        for rp, a in embedded_backend.get_allocations(c)['allocations'].items())]
    assert len(healed) == 3
    back = reshaper.rollback_node(embedded_backend, 'cn', snapshot_dir=snaps, remove_children=True)
    assert back['verified'], back['msg']
    assert comparable(provider_tree_state(embedded_backend, root)) == before


def test_the_result_message_says_what_the_conversion_wrote(embedded_backend, tmp_path):
    """issue 26: the message said "moved nothing of 2 consumer(s)" after writing PCPU for two."""
    report = report_for(tmp_path / 'h', fakehost.default_pinned_host(name='cn'), nova=True)
    _legacy_node(embedded_backend, report)
    check = reshaper.reshape_node(embedded_backend, 'cn', report, check_mode=True)
    result = reshaper.reshape_node(embedded_backend, 'cn', report, snapshot_dir=str(tmp_path / 's'))
    assert result['status'] == 'reshaped' and result['verified'], result['msg']
    for msg in (check['msg'], result['msg']):
        assert 'nothing' not in msg, msg
        assert 'VCPU to PCPU' in msg and '2 pinned consumer(s)' in msg, msg
    assert 'converted 4 VCPU to PCPU of 2 pinned consumer(s)' in result['msg']
    assert 'PCPU inventory 6' in result['msg'] and 'VCPU inventory 8 -> 2' in result['msg']
