# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the log and the messages call things (issue 40): a 503 on POST /reshaper is no "generation
conflict"; "Nothing was changed" said once; "1 node", not "1 nodes"."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import uuid as _uuid

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils import common
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import NoAnswer, ServiceUnavailable
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import planner, reshaper
from ansible_collections.placement.upgrade.plugins.modules import reshape as reshape_module

from module_runner import run_module_main
from test_reshaper_support import Wrapper, flat_gpu_node, gpu_report, put


@pytest.fixture
def env(tmp_path):
    db = str(tmp_path / 'placement.db')
    store = EmbeddedBackend(db)
    rep = gpu_report(tmp_path / 'host', 'compute-01')
    node = flat_gpu_node(store, 'compute-01', rep)
    node.update(store=store, db=db, report=rep, snapdir=str(tmp_path / 'snaps'))
    try:
        yield node
    finally:
        store.close()


class FailsOnce(Wrapper):
    """The first POST /reshaper fails with ``error`` and is not applied."""

    error = None

    def reshape(self, body):
        if not self.reshape_calls:
            self.reshape_calls.append(body)
            raise self.error
        return super(FailsOnce, self).reshape(body)


@pytest.mark.parametrize('error, said', [
    (ServiceUnavailable('Placement at http://placement is busy'), 'POST /reshaper failed with 503 Service Unavailable'),
    (NoAnswer('Placement at http://placement could not be reached (POST /reshaper): connection reset'),
     'the answer to POST /reshaper was lost'),
])
def test_the_module_log_calls_a_resent_post_reshaper_what_it_was(env, monkeypatch, capsys, error, said):
    """The module log said "generation conflict on attempt 1 of 5" for a 503 (or a lost answer) on
    POST /reshaper that a re-read showed was not applied: there was no generation conflict."""
    backend = FailsOnce(env['store'])
    backend.error = error
    backend.close = lambda: None      # the fixture closes the store
    monkeypatch.setattr(common.factory, 'get_backend', lambda *args, **kwargs: backend)
    rc, result = run_module_main(reshape_module.main, {
        'embedded_db': env['db'], 'root_provider': 'compute-01', 'devices': env['report'],
        'snapshot_dir': env['snapdir']}, capsys)
    assert rc == 0 and result['status'] == 'reshaped' and result['resent'] == 1, result
    text = json.dumps(result['log'])
    assert 'generation conflict' not in text, text
    assert [line for line in result['log'] if 'POST /reshaper not applied on attempt 1 of' in line and said in line], text


def test_a_refused_plan_says_nothing_was_changed_once(env):
    """"... Nothing was changed. Fix the device report ... Nothing was reshaped": said twice."""
    stray = str(_uuid.uuid4())
    put(env['store'], stray, {env['root']: {'resources': {'VGPU': 1}}})
    bad = copy.deepcopy(env['report'])
    bad['instances'][stray] = {'name': 'instance-stray', 'mdevs': [], 'pci_addresses': []}
    with pytest.raises(planner.PlanError) as info:
        reshaper.reshape_node(env['store'], 'compute-01', bad, snapshot_dir=env['snapdir'], backoff=0)
    detail = info.value.detail
    assert detail.count('Nothing was changed') == 1 and 'Nothing was reshaped' not in detail, detail


def test_one_node_is_one_node():
    records = [{'node': 'cn-01', 'status': 'noop', 'before': {'providers': {}}}]
    line = report.summary_line(report.build_report(records, hosts=['cn-01']))
    assert line.startswith('1 node: 0 reshaped, 1 skipped'), line
    assert '0 allocations of 0 consumers moved' in line, line
