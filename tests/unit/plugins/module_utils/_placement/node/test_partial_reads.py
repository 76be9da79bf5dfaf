# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's reshape reads in full only the consumers it may write (issue 13 target 3).

The others get a PARTIAL body (their allocations on the tree); what is written does not
change: the ``POST /reshaper`` body is the one a plan on a full read gives.  A partial body
never reaches a write.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import uuid as _uuid

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import base as _backend
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import planner
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import rollback
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import snapshot

from test_reshaper_support import flat_gpu_node, gpu_report, make_provider, put


class BodyOnFullRead(object):
    """At each reshape: the body a plan on a FULL read of the tree (every consumer) would send.

    ``allow_foreign_allocations``: a full read sees the bystander that also holds allocations on
    another compute node, which deferred the whole node before; with it carried along, the plan
    is the one a full read made."""

    def __init__(self, inner, root_uuid, report):
        self.inner = inner
        self.root_uuid = root_uuid
        self.report = report
        self.sent = []
        self.expected = []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def reshape(self, body):
        state, foreign = reshaper.read_node(self.inner, self.root_uuid)
        assert not any(b.get('partial') for b in state['allocations'].values())
        plan = planner.plan_from_devices(state, self.root_uuid, self.report, foreign=foreign,
                                         allow_foreign_allocations=True)
        self.expected.append(json.loads(json.dumps(planner.reshape_body(plan))))
        self.sent.append(json.loads(json.dumps(body)))
        return self.inner.reshape(body)


@pytest.fixture
def node(embedded_backend, tmp_path):
    report = gpu_report(tmp_path / 'host', 'compute-01')
    built = flat_gpu_node(embedded_backend, 'compute-01', report)
    other = make_provider(embedded_backend, 'compute-02', {'VCPU': {'total': 64}, 'MEMORY_MB': {'total': 65536}})
    pooled, elsewhere = str(_uuid.uuid4()), str(_uuid.uuid4())
    # holds no moved class: VCPU/MEMORY_MB on the root, DISK_GB on the sharing pool
    put(embedded_backend, pooled, {built['root']: {'resources': {'VCPU': 1, 'MEMORY_MB': 512}},
                                   built['pool']: {'resources': {'DISK_GB': 3}}})
    # holds no moved class, and allocations on another compute node's tree (mid-move there)
    put(embedded_backend, elsewhere, {built['root']: {'resources': {'VCPU': 1, 'MEMORY_MB': 512}},
                                      other: {'resources': {'VCPU': 1, 'MEMORY_MB': 512}}})
    built.update(report=report, other=other, pooled=pooled, elsewhere=elsewhere, snapdir=str(tmp_path / 'snap'))
    return built


def test_body_is_the_one_a_full_read_gives_and_bystanders_stay_partial(embedded_backend, node):
    spy = BodyOnFullRead(embedded_backend, node['root'], node['report'])
    result = reshaper.reshape_node(spy, 'compute-01', node['report'], snapshot_dir=node['snapdir'], backoff=0)
    assert result['status'] == 'reshaped' and result['verified'] is True, result['msg']
    assert len(spy.sent) == 1
    assert spy.sent == spy.expected
    written = set(spy.sent[0]['allocations'])
    assert written == set(node['consumers'])
    saved = snapshot.load_snapshot(result['snapshot'])['state']['allocations']
    for consumer in written:
        assert not saved[consumer].get('partial') and saved[consumer]['consumer_generation'] is not None
    for consumer in (node['pooled'], node['elsewhere']):
        assert saved[consumer]['partial'] is True and 'consumer_generation' not in saved[consumer]
        assert set(saved[consumer]['allocations']) == set([node['root']])
    # the node was not deferred for the consumer that also holds allocations on compute-02
    assert result['deferred_reason'] is None
    # the bystanders' allocations, outside the tree included, are as they were
    assert embedded_backend.get_allocations(node['pooled'])['allocations'][node['pool']]['resources'] == {'DISK_GB': 3}
    assert node['other'] in embedded_backend.get_allocations(node['elsewhere'])['allocations']


def test_a_moved_consumer_on_another_compute_node_still_defers(embedded_backend, node):
    moved = sorted(node['consumers'])[0]
    held = embedded_backend.get_allocations(moved)['allocations']
    allocs = dict((rp, {'resources': dict(e['resources'])}) for rp, e in held.items())
    allocs[node['other']] = {'resources': {'VCPU': 2, 'MEMORY_MB': 1024}}
    put(embedded_backend, moved, allocs)
    result = reshaper.reshape_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'],
                                   backoff=0)
    assert result['status'] == 'deferred'
    assert moved in result['deferred_reason'] and 'outside this tree' in result['deferred_reason']
    assert node['elsewhere'] not in result['deferred_reason']


def test_a_partial_body_never_reaches_the_reshape(embedded_backend, node):
    # every consumer read as its tree part only: the plan would write the VGPU holders
    state = _backend.provider_tree_state(embedded_backend, node['root'], select=lambda partial_state: set())
    assert all(body['partial'] is True for body in state['allocations'].values())
    with pytest.raises(planner.PlanError) as info:
        planner.plan_from_devices(state, node['root'], node['report'])
    assert 'internal error' in info.value.detail and 'partial body' in info.value.detail
    assert info.value.consumers and info.value.consumers[0] in node['consumers']


def test_a_partial_body_never_reaches_the_rollback(embedded_backend, node):
    result = reshaper.reshape_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'],
                                   backoff=0)
    assert result['status'] == 'reshaped'
    snap = snapshot.load_snapshot(result['snapshot'])
    state = _backend.provider_tree_state(embedded_backend, node['root'], select=lambda partial_state: set())
    with pytest.raises(planner.PlanError) as info:
        rollback.plan_rollback(state, snap)
    assert 'internal error' in info.value.detail and info.value.consumers[0] in node['consumers']


def test_rollback_of_a_partial_snapshot_and_of_a_full_one(embedded_backend, node, tmp_path):
    full_before = _backend.provider_tree_state(embedded_backend, node['root'])
    result = reshaper.reshape_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'],
                                   backoff=0)
    assert result['status'] == 'reshaped' and result['verified'] is True
    back = reshaper.rollback_node(embedded_backend, 'compute-01', snapshot_file=result['snapshot'], backoff=0)
    assert back['verified'] is True, back['msg']
    assert sorted(back['plan']['allocations']) == sorted(node['consumers'])
    again = reshaper.reshape_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'],
                                  backoff=0)
    assert again['status'] == 'reshaped' and again['verified'] is True
    # a snapshot written before partial reads (every consumer in full) still rolls back
    old = snapshot.load_snapshot(again['snapshot'])
    old_root = {'uuid': node['root'], 'name': 'compute-01'}
    full_path = snapshot.write_snapshot(str(tmp_path / 'old'), old_root, full_before,
                                        layout_children=old['layout_children'], plan=old['plan'])
    back = reshaper.rollback_node(embedded_backend, 'compute-01', snapshot_file=full_path, backoff=0)
    assert back['verified'] is True, back['msg']
    assert sorted(back['plan']['allocations']) == sorted(node['consumers'])
    for consumer in (node['pooled'], node['elsewhere']):
        assert embedded_backend.get_allocations(consumer)['allocations'] == \
            dict((rp, dict(e, generation=embedded_backend.get_provider(rp)['generation']))
                 for rp, e in full_before['allocations'][consumer]['allocations'].items())
