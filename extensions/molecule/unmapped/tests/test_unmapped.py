# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roll stopped at the node whose VGPU consumer cannot be mapped; later nodes untouched."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

FLEET = os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], 'fleet')
STOP = 'compute-02'


def _fleet():
    with open(os.path.join(FLEET, 'fleet.json')) as handle:
        return json.load(handle)


def _node(host):
    name = host.backend.get_hostname()
    return [n for n in _fleet()['nodes'] if n['name'] == name][0]


def _providers(node):
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend

    with EmbeddedBackend(os.path.join(FLEET, 'placement.db')) as backend:
        tree = backend.list_providers(in_tree=node['uuid'])
        return dict((p['name'], backend.get_inventories(p['uuid'])['inventories']) for p in tree)


def _summary():
    with open(os.path.join(FLEET, 'reports', 'latest', 'summary.json')) as handle:
        return json.load(handle)


def test_only_the_nodes_before_the_failure_were_reshaped(host):
    node = _node(host)
    providers = _providers(node)
    if node['name'] == 'compute-01':
        assert 'VGPU' not in providers[node['provider']]
        assert len(providers) == 1 + node['gpus']
        assert host.file(os.path.join(FLEET, 'snapshots', 'compute-01.latest.json')).exists
    elif node['kind'] == 'reshaped':
        # compute-04 was reshaped when the fleet was built, and left alone since
        assert len(providers) == 1 + node['gpus']
    else:
        # the failing node and the ones after it keep the legacy flat layout
        assert list(providers) == [node['provider']]
        assert 'VGPU' in providers[node['provider']]
        assert not host.file(os.path.join(FLEET, 'snapshots', '%s.latest.json' % node['provider'])).exists
    # the hooks never left a node "disabled": compute-02 failed before its pre hook
    assert not host.file(os.path.join(os.path.dirname(node['sysfs_root']), 'nova-compute.disabled')).exists


def test_report_names_the_node_and_the_reason(host):
    node = _node(host)
    summary = _summary()
    status = dict((n['node'], n) for n in summary['nodes'])
    want = {'compute-01': 'reshaped', 'compute-02': 'failed', 'compute-03': 'unreached',
            'compute-04': 'unreached'}[node['name']]
    assert status[node['name']]['status'] == want
    if node['name'] == STOP:
        ghost = node['unmappable_consumer']
        assert ghost in status[STOP]['reason']
        assert summary['stopped']['node'] == STOP
        assert summary['unreached'] == ['compute-03', 'compute-04']


def test_the_roll_said_where_and_why_it_stopped(host):
    output = host.file(os.path.join(FLEET, 'roll.log')).content_string
    ghost = [n for n in _fleet()['nodes'] if n['name'] == STOP][0]['unmappable_consumer']
    assert 'The roll stops at compute-02' in output
    assert ghost in output
    assert 'Nodes not reached, left untouched: compute-03, compute-04' in output
    # the progress callback says it too, at the end of the run
    assert '[rolling_progress] stopped at compute-02: ' in output
    assert '[rolling_progress] not reached (untouched): compute-03, compute-04' in output
