# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report of a sliced roll, written from the stored records after the slices (issue 40, section 1):
a node rolled back since is not reported as reshaped, and a stray record file names no node."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery, reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
from ansible_collections.placement.upgrade.plugins.modules import fleet_report

import simfleet
from module_runner import run_module_main

RUN = 'run-s1'


@pytest.fixture
def run(capsys):
    def run_module(args, check=False):
        return run_module_main(fleet_report.main, args, capsys, check=check)
    return run_module


@pytest.fixture
def sliced(tmp_path, run):
    """compute-01 and compute-02 reshaped by two slices of run-s1, each record stored (summarize=false)."""
    fleet = simfleet.build(str(tmp_path / 'fleet'), nodes=2)
    snapdir = str(tmp_path / 'snapshots')
    dest = str(tmp_path / 'reports' / RUN)
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        for node in fleet['nodes']:
            devices = discovery.discover(node['sysfs_root'], domain_xml_glob=node['domain_xml_glob'],
                                         hostname=node['provider'], nova_conf=node['nova_conf'],
                                         domain_capabilities=node.get('domain_capabilities'))
            result = reshaper.reshape_node(backend, node['provider'], devices, snapshot_dir=snapdir, run_id=RUN)
            assert result['status'] == 'reshaped' and result['verified'] is True
            rc, res = run({'embedded_db': fleet['embedded_db'], 'dest': dest, 'run_id': RUN, 'summarize': False,
                           'snapshot_dir': snapdir,
                           'records': [{'node': node['name'], 'provider': node['provider'], 'status': 'reshaped',
                                        'reshape': result, 'started': 10.0, 'finished': 11.5, 'run_id': RUN}]})
            assert rc == 0, res
    return fleet, snapdir, dest


def _report(run, fleet, snapdir, dest):
    rc, res = run({'embedded_db': fleet['embedded_db'], 'dest': dest, 'run_id': RUN, 'snapshot_dir': snapdir,
                   'hosts': [n['name'] for n in fleet['nodes']]})
    assert rc == 0, res
    return res, dict((n['node'], n['status']) for n in res['summary']['nodes'])


def test_a_node_rolled_back_after_the_run_is_not_reported_reshaped(run, sliced):
    fleet, snapdir, dest = sliced
    first = fleet['nodes'][0]
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        back = reshaper.rollback_node(backend, first['provider'], snapshot_dir=snapdir)
    assert back['status'] == 'rolled_back' and back['verified'] is True
    res, statuses = _report(run, fleet, snapdir, dest)
    assert statuses == {first['name']: 'rolled_back', fleet['nodes'][1]['name']: 'reshaped'}
    entry = next(n for n in res['summary']['nodes'] if n['node'] == first['name'])
    assert 'rolled back after this run' in entry['reason']


def test_a_stray_record_file_names_no_node(run, sliced):
    fleet, snapdir, dest = sliced
    nodes = os.path.join(dest, 'nodes')
    first = fleet['nodes'][0]['name']
    # a copy of a record under another name, and a record of a node that is no host of the run
    shutil.copy(os.path.join(nodes, '%s.json' % first), os.path.join(nodes, '%s.bak.json' % first))
    with open(os.path.join(nodes, '%s.json' % first)) as handle:
        record = json.load(handle)
    record['node'] = record['provider'] = 'compute-99'
    with open(os.path.join(nodes, 'compute-99.json'), 'w') as handle:
        json.dump(record, handle)
    res, statuses = _report(run, fleet, snapdir, dest)
    assert sorted(statuses) == sorted(n['name'] for n in fleet['nodes'])
    assert 'compute-99' not in statuses
    files = sorted(os.path.basename(item['file']) for item in res['bad_records'])
    assert files == sorted(['%s.bak.json' % first, 'compute-99.json'])
    assert all('stray record file' in item['problem'] for item in res['bad_records'])
