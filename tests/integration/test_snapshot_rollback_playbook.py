# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 26 section 1 through playbooks/rollback.yml on a simulated fleet (embedded store): an
edited snapshot stops the rollback with a message naming the file (digest) or the consumer,
class and amounts (without a digest), and nothing in Placement changes; a snapshot written
before digests still rolls back, said unverified."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os

import pytest

import simfleet
from test_fleet_playbook import comparable, playbook, summary, trees

pytestmark = pytest.mark.slow


def _read(path):
    with open(path) as handle:
        return json.load(handle)


def _write(path, doc):
    with open(path, 'w') as handle:
        json.dump(doc, handle, indent=1, sort_keys=True)


def test_rollback_playbook_refuses_an_edited_snapshot_and_changes_nothing(tmp_path):
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=2)
    before = trees(fleet)
    rc, out = playbook(fleet, 'rolling_reshape.yml')
    assert rc == 0, out
    assert summary(fleet)['nodes'][0]['node'] == 'compute-01' and fleet['expected']['compute-01'] == 'reshaped'
    after = trees(fleet)
    latest = os.path.join(fleet['out_dir'], 'snapshots', 'compute-01.latest.json')
    original = _read(latest)
    root = next(n['uuid'] for n in fleet['nodes'] if n['name'] == 'compute-01')
    consumer, resources = next((c, body['allocations'][root]['resources'])
                               for c, body in sorted(original['state']['allocations'].items())
                               if body['allocations'].get(root, {}).get('resources', {}).get('VGPU'))
    held = resources['VGPU']
    edited = copy.deepcopy(original)
    edited['state']['allocations'][consumer]['allocations'][root]['resources']['VGPU'] = held + 2

    # the digest written with it no longer matches
    _write(latest, edited)
    rc, out = playbook(fleet, 'rollback.yml', extra={'rollback_nodes': 'compute-01'})
    assert rc != 0, out
    assert 'The rollback stops at compute-01: snapshot %s was changed after it was written' % latest in out
    assert 'verification passed' not in out
    assert trees(fleet) == after, 'the refused rollback wrote to Placement'
    assert [(n['node'], n['status']) for n in summary(fleet)['nodes']] == [('compute-01', 'failed')]

    # without the digest, the plan recorded in the snapshot names the consumer, class and amounts
    del edited['digest']
    _write(latest, edited)
    rc, out = playbook(fleet, 'rollback.yml', extra={'rollback_nodes': 'compute-01'})
    assert rc != 0, out
    assert ('snapshot %s was not used: consumer %s, VGPU: the state gives it %d, but its plan says %d before the '
            'reshape' % (latest, consumer, held + 2, held)) in out
    assert trees(fleet) == after, 'the refused rollback wrote to Placement'

    # the snapshot as the code before digests wrote it: rolled back, and said unverified
    old = copy.deepcopy(original)
    del old['digest']
    for key in ('inventories_before', 'cpu_pinned'):
        del old['plan'][key]
    _write(latest, old)
    rc, out = playbook(fleet, 'rollback.yml', extra={'rollback_nodes': 'compute-01',
                                                     'rolling_reshape_remove_children': True})
    assert rc == 0, out
    assert 'snapshot %s has no digest (written before snapshots carried one)' % latest in out
    now = trees(fleet)
    assert comparable(now['compute-01']) == comparable(before['compute-01'])
    assert comparable(now['compute-02']) == comparable(after['compute-02'])
    assert [(n['node'], n['status']) for n in summary(fleet)['nodes']] == [('compute-01', 'rolled_back')]
