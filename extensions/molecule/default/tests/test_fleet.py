# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verify the converged simulated fleet: the nodes (testinfra ``host``) and Placement.

The node side is read through testinfra (the local connection of the inventory); the
Placement side in-process from the embedded store the roll wrote to.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

FLEET = os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], 'fleet')


def _fleet():
    with open(os.path.join(FLEET, 'fleet.json')) as handle:
        return json.load(handle)


def _node(host):
    name = host.backend.get_hostname()
    return [n for n in _fleet()['nodes'] if n['name'] == name][0]


_CACHE = {}


def _state(node):
    """The node's provider tree and its consumers' allocations, read from the embedded Placement."""
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend

    if node['name'] not in _CACHE:
        with EmbeddedBackend(os.path.join(FLEET, 'placement.db')) as backend:
            _CACHE[node['name']] = provider_tree_state(backend, node['uuid'])
    return _CACHE[node['name']]


def _tree(node):
    return dict((p['name'], p) for p in _state(node)['providers'].values())


def _snapshot(node):
    """The snapshot of the node's tree before its reshape (the roll's, or the fleet build's)."""
    for folder in ('snapshots', 'build-snapshots'):
        path = os.path.join(FLEET, folder, '%s.latest.json' % node['provider'])
        if os.path.exists(path):
            with open(path) as handle:
                return json.load(handle)
    raise AssertionError('no snapshot of %s' % node['provider'])


def _totals(allocations):
    totals = {}
    for entry in allocations.values():
        for rc, amount in entry['resources'].items():
            totals[rc] = totals.get(rc, 0) + amount
    return totals


def test_node_discovery_inputs_are_in_place(host):
    node = _node(host)
    assert host.file(node['sysfs_root']).is_directory
    assert host.file(os.path.join(node['sysfs_root'], 'class', 'mdev_bus')).is_directory
    # the post hook ran after the pre hook: nova-compute is "enabled" again everywhere
    assert not host.file(os.path.join(os.path.dirname(node['sysfs_root']), 'nova-compute.disabled')).exists


def test_vgpu_lives_on_one_child_per_gpu(host):
    node = _node(host)
    tree = _tree(node)
    root = tree.pop(node['provider'])
    assert 'VGPU' not in root['inventories'], 'VGPU left on the root provider'
    # the AMD SEV node (the one with domain capabilities) also gets nova 34's <node>_amd_sev child
    # (and <node>_amd_sev_es), holding the MEM_ENCRYPTION_CONTEXT that left its root
    sev = dict((name, tree.pop(name)) for name in list(tree) if name.startswith(node['provider'] + '_amd_sev'))
    if node.get('domain_capabilities'):
        assert 'MEM_ENCRYPTION_CONTEXT' not in root['inventories']
        assert 'MEM_ENCRYPTION_CONTEXT' in sev['%s_amd_sev' % node['provider']]['inventories']
    else:
        assert not sev
    assert sorted(tree) == sorted('%s_pci_0000_%02x_00_0' % (node['provider'], 0x84 + i)
                                  for i in range(node['gpus']))
    for child in tree.values():
        assert child['parent_provider_uuid'] == root['uuid']
        assert child['inventories']['VGPU']['total'] == child['inventories']['VGPU']['max_unit']
    assert sum(c['usages']['VGPU'] for c in tree.values()) == node['vgpu_held']


def test_every_guest_kept_its_allocations(host):
    node = _node(host)
    pool = _fleet()['pool']['uuid']
    now = _state(node)['allocations']
    before = _snapshot(node)['state']['allocations']
    assert sorted(now) == sorted(before) == sorted(node['consumers'])
    tree = set(_state(node)['providers'])
    partial = 0
    for consumer, view in now.items():
        assert pool in view['allocations'], 'the shared DISK_GB allocation of %s was dropped' % consumer
        if before[consumer].get('partial'):
            # the reshape did not write this guest, so it read only its allocations on the
            # node's tree (a partial body, no pool part, project or generation): compare that part
            partial += 1
            on_tree = dict((rp, a) for rp, a in view['allocations'].items() if rp in tree)
            assert _totals(on_tree) == _totals(before[consumer]['allocations']), consumer
            continue
        assert _totals(view['allocations']) == _totals(before[consumer]['allocations']), consumer
        assert view['project_id'] == before[consumer]['project_id']
    # the guests holding VGPU were written, so the snapshot holds them in full
    assert len(now) - partial >= (1 if node['vgpu_held'] else 0)


def test_snapshot_and_report(host):
    node = _node(host)
    summary_path = os.path.join(FLEET, 'reports', 'latest', 'summary.json')
    assert host.file(summary_path).exists
    summary = json.loads(host.file(summary_path).content_string)
    status = dict((n['node'], n['status']) for n in summary['nodes'])
    expected = _fleet()['expected'][node['name']]
    # the second converge (idempotence) found every node in the layout already
    assert status[node['name']] == 'noop'
    snapshot = host.file(os.path.join(FLEET, 'snapshots', '%s.latest.json' % node['provider']))
    if expected == 'reshaped':
        assert snapshot.exists and snapshot.mode == 0o600
    else:
        assert not snapshot.exists
    assert host.file(os.path.join(FLEET, 'reports', 'latest', 'report.html')).contains(node['name'])
