# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A pass that failed after its POST /reshaper is never hidden by a rerun (issue 40, section 1),
against the REAL Placement: it answers 204 (with its request id) to a reshape body that is not the
plan's (an allocation dropped, an owner changed: what its deadlock retry has been seen to commit)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import shlex

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement import resources as ops
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import snapshot

from test_reshaper_support import Wrapper, consumers_by_name, flat_gpu_node, gpu_report

pytestmark = pytest.mark.real

OTHER_PROJECT = '99999999-8a1e-4c4f-9d52-1d0b8e1c2a01'


class Damages(Wrapper):
    """The body Placement commits (and answers 204 to) is not the one the pass sent."""

    def __init__(self, inner, edit):
        super(Damages, self).__init__(inner)
        self.edit = edit
        self.answers = []

    def reshape(self, body):
        body = json.loads(json.dumps(body))
        self.edit(body)
        answer = self.inner.reshape(body)
        self.answers.append(answer)
        return answer


def test_placements_damage_fails_every_pass_until_corrected(rest_backend, unique_name, tmp_path):
    backend = rest_backend
    name = unique_name('cn')
    report = gpu_report(tmp_path / 'host', name)
    node = flat_gpu_node(backend, name, report)
    snapdir = str(tmp_path / 'snapshots')
    guests = consumers_by_name(report)
    lost, owned = guests['instance-00000001'], guests['instance-00000002']

    def edit(body):
        body['allocations'][lost]['allocations'].pop(node['pool'])
        body['allocations'][owned]['project_id'] = OTHER_PROJECT

    damaging = Damages(backend, edit)
    first = reshaper.reshape_node(damaging, name, report, snapshot_dir=snapdir, run_id='run-1')
    [answer] = damaging.answers
    assert answer['status'] == 204 and answer['request_id'].startswith('req-')
    assert first['verified'] is False and first['status'] == 'failed'
    assert 'Placement answered 204 (request id %s)' % answer['request_id'] in first['msg']
    outcome = snapshot.load_snapshot(first['snapshot'])['outcome']
    assert outcome['status'] == 'failed' and outcome['answer']['request_id'] == answer['request_id']

    # the rerun with Placement behaving: never noop, nothing written, the damage named
    again = reshaper.reshape_node(backend, name, report, snapshot_dir=snapdir, run_id='run-2')
    assert again['status'] == 'failed' and again['verified'] is False and again['changed'] is False
    damaged = dict((d['consumer'], d) for d in again['damaged'])
    assert sorted(damaged) == sorted([lost, owned])
    assert damaged[lost]['should'][node['pool']] == {'resources': {'DISK_GB': 20}}
    assert node['pool'] not in damaged[lost]['has']
    assert damaged[owned]['owner_has']['project_id'] == OTHER_PROJECT
    assert damaged[owned]['owner_should']['project_id'] != OTHER_PROJECT
    assert OTHER_PROJECT in again['msg'] and 'DISK_GB=20' in again['msg']
    verified = reshaper.verify_node(backend, name, report, snapshot_dir=snapdir)
    assert verified['verified'] is False
    failed = [c['check'] for c in verified['verification'] if not c['passed']]
    assert 'consumers_keep_their_owner' in failed and 'consumers_as_snapshot_or_plan' in failed

    # the printed corrections, applied as the allocation module applies them
    assert len(again['corrections']) == 2
    for command in again['corrections']:
        argv = shlex.split(command)
        assert argv[:5] == ['ansible', 'localhost', '-m', 'placement.upgrade.allocation', '-a']
        ops.ensure_allocations(backend, [json.loads(argv[5])])
    assert reshaper.verify_node(backend, name, report, snapshot_dir=snapdir)['verified'] is True
    fixed = reshaper.reshape_node(backend, name, report, snapshot_dir=snapdir, run_id='run-3')
    assert fixed['status'] == 'verified' and fixed['verified'] is True, fixed['msg']
    assert backend.get_allocations(owned)['project_id'] != OTHER_PROJECT
    assert backend.get_allocations(lost)['allocations'][node['pool']]['resources'] == {'DISK_GB': 20}
    last = reshaper.reshape_node(backend, name, report, snapshot_dir=snapdir)
    assert last['status'] == 'noop'
