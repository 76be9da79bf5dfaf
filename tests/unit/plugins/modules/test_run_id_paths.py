# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A run id names the run's folder (<report dir>/<run id>): one with ``/`` or ``..`` wrote the
records outside the report directory (issue 40).  Every module taking a run id refuses it before
anything is read or written."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import records
from ansible_collections.placement.upgrade.plugins.modules import fleet_report, fleet_slice, reshape

from module_runner import run_module_main
from test_reshaper_support import flat_gpu_node, gpu_report

# (the role makes the folder as "{{ report_dir }}/{{ run_id }}": every one of them stays under tmp_path here)
BAD = ['../outside', 'a/b', '/abs', '..', '.', 'r\\1', 'r\n1', ' r1']


def _files(top):
    return sorted(os.path.join(d, f) for d, _dirs, names in os.walk(top) for f in names)


@pytest.mark.parametrize('run_id', BAD)
def test_fleet_slice_refuses_a_run_id_that_is_no_folder_name(capsys, tmp_path, run_id):
    reports = tmp_path / 'reports'
    dest = str(reports) + '/' + run_id
    rc, out = run_module_main(fleet_slice.main, {'dest': dest, 'nodes': ['cn-01'], 'run_id': run_id,
                                                 'owner': 'AWX job 7'}, capsys)
    assert rc == 1, out
    assert out['msg'].startswith('run_id %r cannot name the run\'s folder in the report directory' % run_id), out
    assert _files(str(tmp_path)) == []                     # no claim, no folder anywhere


@pytest.mark.parametrize('run_id', BAD[:3])
def test_fleet_report_refuses_it_before_storing_a_record(capsys, tmp_path, run_id):
    dest = str(tmp_path / 'reports') + '/' + run_id
    for summarize in (True, False):
        rc, out = run_module_main(fleet_report.main, {
            'dest': dest, 'run_id': run_id, 'summarize': summarize, 'read_trees': False, 'render': False,
            'records': [{'node': 'cn-01', 'status': 'noop'}]}, capsys)
        assert rc == 1 and 'cannot name the run\'s folder' in out['msg'], out
    assert _files(str(tmp_path)) == []


def test_reshape_refuses_it_before_the_tree_is_touched(capsys, tmp_path):
    db = str(tmp_path / 'placement.db')
    store = EmbeddedBackend(db)
    try:
        report = gpu_report(tmp_path / 'host', 'compute-01')
        node = flat_gpu_node(store, 'compute-01', report)
        before = provider_tree_state(store, node['root'])
    finally:
        store.close()
    rc, out = run_module_main(reshape.main, {
        'embedded_db': db, 'root_provider': 'compute-01', 'devices': report, 'snapshot_dir': str(tmp_path / 'snaps'),
        'run_id': '../outside',
        'record': {'dest': str(tmp_path / 'reports') + '/../outside', 'node': 'compute-01'}}, capsys)
    assert rc == 1 and out['msg'].startswith("run_id '../outside' cannot name the run's folder"), out
    store = EmbeddedBackend(db, create=False)
    try:
        assert provider_tree_state(store, node['root']) == before           # nothing reshaped
    finally:
        store.close()
    assert not os.path.exists(str(tmp_path / 'snaps')) and not os.path.exists(str(tmp_path / 'reports'))


def test_plain_run_ids_are_taken():
    for run_id in ('', '20261128T004700Z-1a2b3c', 'fail-1764290000', 'r1.plan', 'run_2-plan'):
        assert records.check_run_id(run_id) == run_id
