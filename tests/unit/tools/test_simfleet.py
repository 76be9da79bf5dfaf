# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tools/simfleet.py: the simulated fleet is seeded in the legacy layout and plans as expected."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery, planner, reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend

import simfleet

TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), 'tools')


@pytest.fixture(scope='module')
def fleet(tmp_path_factory):
    return simfleet.build(str(tmp_path_factory.mktemp('fleet')), nodes=12)


def _devices(node):
    return discovery.discover(node['sysfs_root'], domain_xml_glob=node['domain_xml_glob'],
                              hostname=node['provider'], nova_conf=node['nova_conf'],
                              domain_capabilities=node.get('domain_capabilities'))


def test_fleet_plan_roles():
    specs = simfleet.fleet_plan(12)
    assert [s['kind'] for s in specs] == ['gpu'] * 6 + ['resizing', 'evacuating', 'sriov', 'reshaped',
                                                        'migrating', 'plain']
    assert specs[10]['migrates_to'] == 'compute-12' and specs[7]['evacuated_from'] == 'compute-12'
    assert [s['kind'] for s in simfleet.fleet_plan(6)][-4:] == ['sriov', 'reshaped', 'migrating', 'plain']
    assert [s['kind'] for s in simfleet.fleet_plan(4)] == ['gpu', 'gpu', 'gpu', 'reshaped']
    assert [s['name'] for s in simfleet.fleet_plan(2, prefix='x-')] == ['x-compute-01', 'x-compute-02']
    with pytest.raises(ValueError, match='not in the fleet'):
        simfleet.fleet_plan(4, unmapped=['compute-09'])
    with pytest.raises(ValueError, match='must be a GPU node'):
        simfleet.fleet_plan(12, unmapped=['compute-09'])
    with pytest.raises(ValueError):
        simfleet.fleet_plan(0)


def test_files_and_inventory(fleet):
    out = fleet['out_dir']
    assert os.path.isfile(os.path.join(out, 'placement.db'))
    with open(fleet['inventory']) as handle:
        inv = yaml.safe_load(handle)
    group = inv['all']['children']['compute']
    assert sorted(group['hosts']) == ['compute-%02d' % i for i in range(1, 13)]
    assert group['vars']['ansible_connection'] == 'local'
    assert group['vars']['ansible_python_interpreter'] == '{{ ansible_playbook_python }}'
    assert group['vars']['placement_backend'] == {'embedded_db': fleet['embedded_db']}
    for name, host in group['hosts'].items():
        assert os.path.isdir(host['rolling_reshape_sysfs_root'])
        assert host['rolling_reshape_sysfs_root'].startswith(os.path.join(out, 'hosts', name))
    for name in group['hosts']:
        conf = group['hosts'][name]['rolling_reshape_nova_conf']
        assert conf == os.path.join(out, 'hosts', name, 'etc', 'nova', 'nova.conf')
        assert os.path.isfile(conf)
    with open(group['hosts']['compute-09']['rolling_reshape_nova_conf']) as handle:
        assert 'report_in_placement = true' in handle.read()
    with open(os.path.join(out, 'fleet.json')) as handle:
        described = json.load(handle)
    assert described['expected'] == fleet['expected']


def test_legacy_layout_is_seeded(fleet):
    pool = fleet['pool']['uuid']
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        assert backend.get_provider_traits(pool)['traits'] == ['MISC_SHARES_VIA_AGGREGATE']
        for node in fleet['nodes']:
            tree = backend.list_providers(in_tree=node['uuid'])
            assert backend.get_aggregates(node['uuid'])['aggregates'] == [fleet['pool']['aggregate']]
            inv = backend.get_inventories(node['uuid'])['inventories']
            if node['kind'] == 'gpu':
                assert len(tree) == 1, 'a legacy node has no children'
                gpus = node['spec']['gpus']
                assert inv['VGPU']['total'] == sum(
                    t['max_instances'] for g in gpus for t in g['mdev_types'].values())
                assert backend.get_usages(node['uuid'])['usages']['VGPU'] == node['vgpu_held']
            for consumer in node['consumers']:
                allocs = backend.get_allocations(consumer)['allocations']
                assert pool in allocs and 'DISK_GB' in allocs[pool]['resources']
                assert node['uuid'] in allocs
        reshaped = [n for n in fleet['nodes'] if n['kind'] == 'reshaped'][0]
        assert 'VGPU' not in backend.get_inventories(reshaped['uuid'])['inventories']
        assert len(backend.list_providers(in_tree=reshaped['uuid'])) == 1 + reshaped['gpus']


def test_every_node_plans_as_expected(fleet):
    reasons, remarks = {}, ''
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        seen = {}
        for node in fleet['nodes']:
            result = reshaper.reshape_node(backend, node['provider'], _devices(node), check_mode=True)
            seen[node['name']] = result['status']
            if node['kind'] == 'gpu':
                # every held mdev's VGPU unit moves to a GPU child; on the SEV nodes the SEV
                # guest's MEM_ENCRYPTION_CONTEXT moves to <node>_amd_sev in the same reshape
                want = {'VGPU': node['vgpu_held']}
                if node['spec'].get('sev'):
                    want['MEM_ENCRYPTION_CONTEXT'] = 1
                    kids = sorted(c['name'] for c in result['plan']['children'] if 'amd_sev' in c['name'])
                    assert kids == [node['provider'] + '_amd_sev'] + (
                        [node['provider'] + '_amd_sev_es'] if node['name'] == 'compute-02' else [])
                assert result['moved']['units'] == want
            if node['kind'] == 'sriov':
                # no PCI class on the legacy root: the children are created and every guest
                # holding a VF or the A2 gets its PCI allocation (what nova 34 would heal)
                held = simfleet.pci_held_units(node)
                want = {}
                for units in held.values():
                    for rc, n in units.items():
                        want[rc] = want.get(rc, 0) + n
                assert result['moved']['units'] == want
                assert sorted(c['name'] for c in result['plan']['create_children']) == [
                    node['provider'] + '_0000:3B:00.0', node['provider'] + '_0000:81:00.0']
            if node['kind'] in ('migrating', 'resizing', 'evacuating'):
                reasons[node['kind']] = result['deferred_reason']
                assert result['plan']['allocations'] == {} and not result['changed']
            if node['kind'] == 'plain':
                remarks = ' '.join(result['plan']['warnings'])
    assert seen == fleet['expected']
    assert list(seen.values()).count('reshaped') == 7
    assert list(seen.values()).count('noop') == 2
    assert list(seen.values()).count('deferred') == 3
    by_kind = dict((n['kind'], n) for n in fleet['nodes'])
    # nova's migration model: the untyped migration consumer holds the source allocations
    mig = by_kind['migrating']
    assert 'consumer %s holds' % mig['migration_consumer'] in reasons['migrating']
    assert 'migration in flight' in reasons['migrating'] and 'orphan' in reasons['migrating']
    assert 'nova-manage placement audit' in reasons['migrating'] and 'VGPU' in reasons['migrating']
    # a resize to the same host, Placement reporting the consumer type
    assert 'consumer %s is a migration (consumer_type MIGRATION)' % by_kind['resizing']['migration_consumer'] \
        in reasons['resizing']
    # an evacuated guest on two compute trees
    evac = by_kind['evacuating']
    guest = evac['instances'][evac['evacuated_guest']]
    assert 'instance %s holds allocations on this node' % guest in reasons['evacuating']
    assert 'evacuation' in reasons['evacuating'] and '(compute-12)' in reasons['evacuating']
    # the plain node has nothing to change: it is skipped, its remarks name the moves (the evacuated
    # guest holds nothing the plain node's reshape moves: only its tree part is read there, so it is
    # named as a consumer no domain is, left as it is, not as an instance on two trees)
    assert guest in remarks and 'holds nothing this reshape moves, so it is left as it is' in remarks


def test_unmapped_consumer_stops_the_plan(tmp_path):
    small = simfleet.build(str(tmp_path / 'f'), nodes=4, unmapped=['compute-02'])
    assert small['expected'] == {'compute-01': 'reshaped', 'compute-02': 'failed',
                                 'compute-03': 'reshaped', 'compute-04': 'noop'}
    node = small['nodes'][1]
    with EmbeddedBackend(small['embedded_db']) as backend:
        with pytest.raises(planner.PlanError) as err:
            reshaper.reshape_node(backend, node['provider'], _devices(node), check_mode=True)
    # a guest on the host whose domain explains none of its VGPU: not a move in flight, a stop
    assert err.value.consumers == [node['unmappable_consumer']]
    assert 'no device ownership known' in err.value.detail


def test_builds_are_reproducible(tmp_path):
    first = simfleet.build(str(tmp_path / 'a'), nodes=5)
    second = simfleet.build(str(tmp_path / 'b'), nodes=5)
    for a, b in zip(first['nodes'], second['nodes']):
        assert a['uuid'] == b['uuid'] and a['instances'] == b['instances'] and a['consumers'] == b['consumers']
    with EmbeddedBackend(first['embedded_db']) as one, EmbeddedBackend(second['embedded_db']) as two:
        for node in first['nodes']:
            for consumer in node['consumers']:
                assert one.get_allocations(consumer)['allocations'].keys() == \
                    two.get_allocations(consumer)['allocations'].keys()


def test_command_line(tmp_path):
    out = str(tmp_path / 'cli')
    proc = subprocess.run([sys.executable, os.path.join(TOOLS, 'simfleet.py'), out, '--nodes', '3', '-q'],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    assert printed['inventory'] == os.path.join(out, 'inventory.yml')
    assert sorted(printed['expected']) == ['compute-01', 'compute-02', 'compute-03']
    bad = subprocess.run([sys.executable, os.path.join(TOOLS, 'simfleet.py'), out, '--nodes', '3',
                          '--unmapped', 'compute-07'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, check=False)
    assert bad.returncode == 2 and 'compute-07 is not in the fleet' in bad.stderr


def test_nvidia_vfio_nodes_come_after_the_default_fleet(tmp_path):
    """--nvidia-vfio N: NVIDIA vGPU nodes of the vendor-specific VFIO framework, appended;
    the default fleet before them is the same; seeded flat (nothing of the VFs in Placement),
    the roll reshapes them: nova's PCI providers, each guest's vGPU class moved there."""
    assert simfleet.fleet_plan(12, nvidia_vfio=1)[:12] == simfleet.fleet_plan(12)
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=2, nvidia_vfio=1)
    assert [n['kind'] for n in fleet['nodes']] == ['gpu', 'gpu', 'nvidia-vfio']
    assert fleet['expected']['compute-03'] == 'reshaped'
    node = fleet['nodes'][2]
    assert simfleet.pci_held_units(node) == {'instance-00000061': {'CUSTOM_NVIDIA_L4_6Q': 1},
                                             'instance-00000062': {'CUSTOM_NVIDIA_L4_12Q': 1}}
    devices = _devices(node)
    assert [pf['vgpu_framework'] for pf in devices['sriov_pfs']] == ['nvidia-vfio', 'nvidia-vfio']
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        root = backend.list_providers(name='compute-03')[0]['uuid']
        assert [p['name'] for p in backend.list_providers(in_tree=root)] == ['compute-03']
        result = reshaper.reshape_node(backend, 'compute-03', devices, snapshot_dir=str(tmp_path / 'snap'))
        assert result['status'] == 'reshaped' and result['verified'] is True
        assert result['moved']['units'] == {'CUSTOM_NVIDIA_L4_6Q': 1, 'CUSTOM_NVIDIA_L4_12Q': 1}
        assert sorted(p['name'] for p in backend.list_providers(in_tree=root)) == [
            'compute-03', 'compute-03_0000:41:00.0', 'compute-03_0000:42:00.0']
    out = str(tmp_path / 'cli')
    proc = subprocess.run([sys.executable, os.path.join(TOOLS, 'simfleet.py'), out, '--nodes', '1',
                           '--nvidia-vfio', '1', '-q'],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)['expected'] == {'compute-01': 'reshaped', 'compute-02': 'reshaped'}
