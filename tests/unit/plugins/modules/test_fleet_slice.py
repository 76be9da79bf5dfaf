# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fleet_slice: the claims of a sliced roll's batches and the fleet's failure budget
(plugins/module_utils/_placement/fleet/slices.py), run as the module and raced by processes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import multiprocessing
import os

import yaml

from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import slices
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet.records import save_record
from ansible_collections.placement.upgrade.plugins.modules import fleet_slice

from module_runner import run_module_main

RUN = 'run-1'


def _run(capsys, check=False, **args):
    args = dict({'run_id': RUN, 'owner': 'AWX job 7'}, **args)
    if check:
        args['_ansible_check_mode'] = True
    return run_module_main(fleet_slice.main, args, capsys)


def test_a_batch_is_claimed_once_and_recorded_nodes_are_left(capsys, tmp_path):
    dest = str(tmp_path / RUN)
    save_record(dest, {'node': 'cn-01', 'status': 'reshaped', 'run_id': RUN})  # the canary's
    rc, out = _run(capsys, dest=dest, nodes=['cn-01', 'cn-02', 'cn-03'])
    assert rc == 0 and out['changed'] is True and out['spent'] is False
    assert out['claimed'] == ['cn-02', 'cn-03']
    assert out['taken'] == [{'node': 'cn-01', 'owner': '', 'why': 'already recorded in run %s' % RUN}]
    with open(slices.claim_path(dest, 'cn-02')) as handle:
        assert json.load(handle)['owner'] == 'AWX job 7'
    # a claim without a record whose job cannot be told running (no ansible-playbook process here):
    # the batch claims nothing and fails naming it (test_fleet_slice_jobs.py: a running job's is left)
    rc, out = _run(capsys, dest=dest, nodes=['cn-02', 'cn-04'], owner='AWX job 8')
    assert rc == 1 and out['claimed'] == [] and [s['node'] for s in out['stale']] == ['cn-02'], out
    assert not os.path.exists(slices.claim_path(dest, 'cn-04'))


def test_the_budget_counts_failed_records_of_the_run_over_every_slice(capsys, tmp_path):
    dest = str(tmp_path / RUN)
    save_record(dest, {'node': 'cn-01', 'status': 'failed', 'run_id': RUN})
    rc, out = _run(capsys, dest=dest, nodes=['cn-02'], max_fail=1)
    assert rc == 0 and out['spent'] is False and out['claimed'] == ['cn-02'] and out['failed_nodes'] == ['cn-01']
    save_record(dest, {'node': 'cn-05', 'status': 'failed', 'run_id': RUN})
    save_record(dest, {'node': 'cn-06', 'status': 'deferred', 'run_id': RUN})
    rc, out = _run(capsys, dest=dest, nodes=['cn-03', 'cn-04'], max_fail=1)
    assert rc == 0 and out['spent'] is True and out['claimed'] == [] and out['changed'] is False
    assert out['failed_nodes'] == ['cn-01', 'cn-05'] and 'budget is spent' in out['msg']
    assert not os.path.exists(slices.claim_path(dest, 'cn-03'))
    # another run's failures are not this run's
    assert slices.failed_records(dest, 'run-2') == ([], [])


def test_check_mode_writes_nothing_and_bad_input_is_refused(capsys, tmp_path):
    dest = str(tmp_path / RUN)
    rc, out = _run(capsys, check=True, dest=dest, nodes=['cn-01'])
    assert rc == 0 and out['claimed'] == ['cn-01'] and out['changed'] is False
    assert not os.path.exists(dest)
    rc, out = _run(capsys, dest=dest, nodes=['cn-01'], max_fail=-1)
    assert rc == 1 and 'max_fail must be 0 or more' in out['msg']
    rc, out = _run(capsys, dest=dest, nodes=['cn-01'], run_id=' ')
    assert rc == 1 and 'run_id is empty' in out['msg']


def _claim_all(args):
    dest, owner, nodes = args
    return [n for n in nodes if slices.claim(dest, n, owner, RUN)[0]]


def test_racing_slices_claim_each_node_exactly_once(tmp_path):
    dest = str(tmp_path / RUN)
    os.makedirs(os.path.join(dest, 'claims'))
    nodes = ['cn-%02d' % i for i in range(40)]
    # four processes claim every node, each in its own order
    orders = [nodes, nodes[::-1], nodes[10:] + nodes[:10], nodes[25:] + nodes[:25]]
    pool = multiprocessing.get_context('fork').Pool(4)
    try:
        won = pool.map(_claim_all, [(dest, 'slice %d' % k, order) for k, order in enumerate(orders)])
    finally:
        pool.close()
        pool.join()
    assert sorted(sum(won, [])) == nodes
    for k, mine in enumerate(won):
        for node in mine:
            with open(slices.claim_path(dest, node)) as handle:
                assert json.load(handle)['owner'] == 'slice %d' % k


def test_documentation_names_every_option():
    doc = yaml.safe_load(fleet_slice.DOCUMENTATION)
    assert set(doc['options']) == {'dest', 'nodes', 'run_id', 'owner', 'max_fail', 'publish'}
    yaml.safe_load(fleet_slice.EXAMPLES)
    returned = yaml.safe_load(fleet_slice.RETURN)
    assert set(returned) == {'spent', 'claimed', 'taken', 'failed_nodes', 'max_fail', 'problems', 'stale',
                             'taken_over', 'job', 'published'}
