# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet_report module: records stored per node, the report re-rendered from all of them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery, reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
from ansible_collections.placement.upgrade.plugins.modules import fleet_report

import simfleet
from module_runner import run_module_main


@pytest.fixture
def run(capsys):
    def run_module(args, check=False):
        return run_module_main(fleet_report.main, args, capsys, check=check)
    return run_module


@pytest.fixture(scope='module')
def rolled(tmp_path_factory):
    """A 5-node fleet; compute-01 reshaped with the core, the other results in check mode."""
    base = tmp_path_factory.mktemp('rolled')
    fleet = simfleet.build(str(base / 'fleet'), nodes=5)
    results = {}
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        for node in fleet['nodes']:
            devices = discovery.discover(node['sysfs_root'], domain_xml_glob=node['domain_xml_glob'],
                                         hostname=node['provider'], nova_conf=node['nova_conf'],
                                         domain_capabilities=node.get('domain_capabilities'))
            apply = node['name'] == 'compute-01'
            results[node['name']] = reshaper.reshape_node(
                backend, node['provider'], devices, check_mode=not apply,
                snapshot_dir=str(base / 'snapshots') if apply else None)
    return fleet, results


def _record(name, result, status=None, reason=None):
    rec = {'node': name, 'reshape': result, 'started': 10.0, 'finished': 11.5}
    if status:
        rec['status'] = status
    if reason:
        rec['reason'] = reason
    return rec


def test_batches_accumulate_into_one_report(run, rolled, tmp_path):
    fleet, results = rolled
    dest = str(tmp_path / 'reports' / 'run-1')
    hosts = [n['name'] for n in fleet['nodes']]
    rc, res = run({'embedded_db': fleet['embedded_db'], 'dest': dest, 'hosts': hosts, 'run_id': 'run-1',
                   'records': [_record('compute-01', results['compute-01'])]})
    assert rc == 0, res
    assert res['changed'] is True and res['log'] == []
    assert res['unreached_nodes'] == hosts[1:]
    assert res['summary']['totals']['statuses']['reshaped'] == 1
    # the next batch adds its nodes; the first one stays in the report
    rc, res = run({'embedded_db': fleet['embedded_db'], 'dest': dest, 'hosts': hosts, 'run_id': 'run-1',
                   'records': [_record(n, results[n]) for n in hosts[1:]]})
    assert rc == 0, res
    assert res['unreached_nodes'] == [] and res['failed_nodes'] == []
    statuses = dict((n['node'], n['status']) for n in res['summary']['nodes'])
    # what each reshape returned (whatever the planner decides for the migration's target node)
    assert statuses == dict((n, results[n]['status']) for n in hosts)
    assert statuses['compute-01'] == 'reshaped' and statuses['compute-03'] == 'noop'
    assert statuses['compute-04'] == 'deferred'
    assert [d['node'] for d in res['deferred_nodes']] == [n for n in hosts if statuses[n] == 'deferred']
    assert res['touched_nodes'] == [n for n in hosts if statuses[n] == 'reshaped']
    assert sorted(os.listdir(os.path.join(dest, 'nodes'))) == ['compute-0%d.json' % i for i in range(1, 6)]
    assert os.readlink(str(tmp_path / 'reports' / 'latest')) == 'run-1'
    with open(res['paths']['html']) as handle:
        html = handle.read()
    for name in hosts:
        assert 'id="node-%s"' % name in html
    # compute-01's tree was read back from Placement: its new children are drawn
    assert 'compute-01_pci_0000_84_00_0' in html and 'shared-storage-pool' in html


def test_plan_mode_and_check_mode(run, rolled, tmp_path):
    fleet, results = rolled
    dest = str(tmp_path / 'plan')
    rc, res = run({'embedded_db': fleet['embedded_db'], 'dest': dest, 'mode': 'plan',
                   'records': [_record('compute-02', results['compute-02'])]}, check=True)
    assert rc == 0, res
    assert res['changed'] is False and res['stored'] == []
    assert not os.path.exists(dest), 'check mode must not write'
    assert res['summary']['nodes'][0]['status'] == 'planned'
    # every figure from the plan's journal (issue 40): compute-02's PCI healing creates 3 allocations
    # (counted as "moved" before) and converts one guest's VCPU to PCPU; none is moved
    figures = res['summary']['totals']['figures']
    assert figures == results['compute-02']['journal']['figures'], figures
    assert res['summary']['totals']['allocations_moved'] == 0
    assert figures['allocations_created'] == 3 and figures['allocations_converted'] == 1
    assert res['summary']['totals']['words'] == 'would'
    rc, res = run({'embedded_db': fleet['embedded_db'], 'dest': dest, 'mode': 'plan',
                   'records': [_record('compute-02', results['compute-02'])]})
    assert rc == 0 and os.path.exists(res['paths']['markdown'])
    with open(res['paths']['markdown']) as handle:
        text = handle.read()
    assert 'Plan only (check mode): nothing was changed.' in text
    assert 'Provider tree after (planned):' in text


def test_failed_node_and_no_placement(run, tmp_path):
    dest = str(tmp_path / 'r')
    rc, res = run({'dest': dest, 'hosts': ['a', 'b', 'c'],
                   'records': [{'node': 'a', 'status': 'reshaped'},
                               {'node': 'b', 'status': 'failed', 'reason': 'boom (task: Reshape)'}]})
    assert rc == 0, res
    # no backend options: the outcome is reported without trees, and the log says why
    assert any('not reading provider trees' in line for line in res['log'])
    assert res['failed_nodes'] == [{'node': 'b', 'reason': 'boom (task: Reshape)', 'touched': False}]
    assert res['unreached_nodes'] == ['c']
    assert res['summary']['stopped'] == {'node': 'b', 'reason': 'boom (task: Reshape)'}
    # re-rendering without records keeps what is stored
    rc, res = run({'dest': dest, 'hosts': ['a', 'b', 'c'], 'read_trees': False})
    assert rc == 0 and res['stored'] == [] and res['summary']['totals']['nodes'] == 3


def test_unwritable_destination_fails_cleanly(run, tmp_path):
    blocker = tmp_path / 'file'
    blocker.write_text(u'not a directory')
    rc, res = run({'dest': str(blocker / 'run'), 'records': [{'node': 'a', 'status': 'noop'}]})
    assert rc == 1 and res['failed'] is True
    assert res['msg'].startswith('Cannot write the report in %s' % (blocker / 'run'))
    assert 'exception' not in res


def test_store_only_stores_the_node_and_reads_no_other_record(run, rolled, tmp_path):
    """summarize=false (the role, once per node): the record is stored with its tree; no report is
    built, and a badly shaped record of another node already stored is not even read."""
    fleet, results = rolled
    dest = str(tmp_path / 'run-2')
    os.makedirs(os.path.join(dest, 'nodes'))
    with open(os.path.join(dest, 'nodes', 'compute-05.json'), 'w') as handle:
        handle.write('{not json')
    rc, res = run({'embedded_db': fleet['embedded_db'], 'dest': dest, 'run_id': 'run-2', 'summarize': False,
                   'records': [_record('compute-01', results['compute-01'], status='reshaped')]})
    assert rc == 0, res
    assert res['changed'] is True and res['bad_records'] == []
    assert res['stored'] == [os.path.join(dest, 'nodes', 'compute-01.json')]
    for key in ('summary', 'summary_line', 'failed_nodes', 'unreached_nodes'):
        assert key not in res
    assert not os.path.exists(res['paths']['html']), 'store-only renders nothing'
    # the full render afterwards reads it (and names the unreadable file)
    rc, res = run({'embedded_db': fleet['embedded_db'], 'dest': dest, 'run_id': 'run-2',
                   'hosts': ['compute-01', 'compute-05']})
    assert rc == 0, res
    statuses = dict((n['node'], n['status']) for n in res['summary']['nodes'])
    assert statuses['compute-01'] == 'reshaped'
    assert [item['file'] for item in res['bad_records']] == [os.path.join(dest, 'nodes', 'compute-05.json')]


def test_store_only_refuses_another_runs_folder_and_check_mode_writes_nothing(run, rolled, tmp_path):
    fleet, results = rolled
    dest = str(tmp_path / 'run-3')
    rc, res = run({'embedded_db': fleet['embedded_db'], 'dest': dest, 'run_id': 'run-3', 'summarize': False,
                   'records': [_record('compute-02', results['compute-02'])]}, check=True)
    assert rc == 0 and res['changed'] is False and res['stored'] == [] and not os.path.exists(dest)
    rc, res = run({'embedded_db': fleet['embedded_db'], 'dest': dest, 'run_id': 'run-3', 'summarize': False,
                   'records': [_record('compute-02', results['compute-02'])]})
    assert rc == 0 and res['stored']
    # another node of another run in the same folder: refused, nothing written
    rc, res = run({'embedded_db': fleet['embedded_db'], 'dest': dest, 'run_id': 'run-4', 'summarize': False,
                   'records': [_record('compute-03', results['compute-03'])]})
    assert rc == 1 and 'another run' in res['msg'] and 'run-3' in res['msg']
    assert sorted(os.listdir(os.path.join(dest, 'nodes'))) == ['compute-02.json']
