# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sliced roll at fleet scale (issue 42, 3), job by job through ``ansible_runner`` as AWX runs them.

* The pre-flight publishes a REFERENCE to its plan (the plan's record folder run id and the sha256 of
  its summary.json), not the plan: AWX copies a job's artifacts into every later job's extra vars, and
  the plan's summary is about 1.2 kB per node (about 6 MB at 5,000 nodes).  Its artifacts stay the
  same size whatever the fleet.
* The pre-flight writes a marker in the run's record folder (``<report dir>/<run id>/preflight.json``);
  the canary and each slice look for it before anything moves, and fail at once naming the path when
  they do not see it (a record folder that is not shared between the jobs: before, the pre-flight,
  canary and slices passed and only the report job failed, "9 not reached")."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os

import pytest

import simfleet
from test_sliced_roll import Job

pytestmark = pytest.mark.slow


def _preflight(tmp_path, fleet, report_dir):
    extravars = {'rolling_reshape_report_dir': report_dir, 'rolling_reshape_snapshot_dir': str(tmp_path / 'snapshots')}
    pre = Job(str(tmp_path), 'preflight', 'sliced_preflight.yml', fleet['inventory'],
              dict(extravars, awx_job_id=100), check=True).wait()
    assert pre.ok, pre.stdout()[-6000:]
    return pre, extravars


def test_the_preflight_publishes_a_reference_to_its_plan_and_a_marker(tmp_path):
    fleet = simfleet.build(str(tmp_path / 'fleet'), nodes=3)
    report_dir = str(tmp_path / 'reports')
    pre, _extravars = _preflight(tmp_path, fleet, report_dir)
    artifacts = pre.artifacts()
    run_id = artifacts['preflight_run_id']
    assert run_id and not run_id.endswith('-plan'), artifacts
    # the plan's summary is not an artifact: only the run id, the canary and the plan's reference
    assert sorted(artifacts) == ['preflight_plan', 'preflight_run_id', 'rolling_reshape_canary'], sorted(artifacts)
    summary_path = os.path.join(report_dir, run_id + '-plan', 'summary.json')
    with open(summary_path, 'rb') as handle:
        digest = 'sha256:' + hashlib.sha256(handle.read()).hexdigest()
    assert artifacts['preflight_plan'] == {'run_id': run_id + '-plan', 'digest': digest,
                                           'summary': 'summary.json'}
    assert len(json.dumps(artifacts)) < 400, artifacts  # whatever the number of nodes
    # the marker the canary and the slices must see, in the roll's record folder
    with open(os.path.join(report_dir, run_id, 'preflight.json')) as handle:
        marker = json.load(handle)
    assert marker['run_id'] == run_id and marker['plan'] == artifacts['preflight_plan']
    assert marker['written_by'] == 'AWX job 100'
    # the pre-flight changed nothing else in the roll's folder (no claims, no records)
    assert sorted(os.listdir(os.path.join(report_dir, run_id))) == ['preflight.json']


def test_a_canary_or_slice_without_the_shared_record_folder_fails_at_once_naming_the_path(tmp_path):
    fleet = simfleet.build(str(tmp_path / 'fleet'), nodes=3)
    pre, extravars = _preflight(tmp_path, fleet, str(tmp_path / 'reports'))
    passed = dict(extravars, **pre.artifacts())
    run_id = passed['preflight_run_id']
    # the next jobs' record folder is another one (as with a folder per job): no marker there
    elsewhere = str(tmp_path / 'not-shared')
    passed['rolling_reshape_report_dir'] = elsewhere
    marker = os.path.join(elsewhere, run_id, 'preflight.json')
    canary = Job(str(tmp_path), 'canary', 'sliced_roll.yml', fleet['inventory'],
                 dict(passed, awx_job_id=101, rolling_reshape_canary_only=True)).wait()
    one_slice = Job(str(tmp_path), 'slice1', 'sliced_roll.yml', fleet['inventory'],
                    dict(passed, awx_job_id=111)).wait()
    for job in (canary, one_slice):
        out = job.stdout()
        assert not job.ok, out[-6000:]
        assert ('no marker of the pre-flight of run %s at %s' % (run_id, marker)) in out, out[-6000:]
        assert 'Traceback' not in out
        # nothing moved: no node was claimed, discovered or recorded, no snapshot taken
        assert "Discover the node's devices" not in out and 'Claim the batch' not in out, out[-6000:]
    assert not os.path.exists(os.path.join(elsewhere, run_id))
    assert not os.path.exists(str(tmp_path / 'snapshots'))


def test_a_marker_of_another_run_is_refused(tmp_path):
    fleet = simfleet.build(str(tmp_path / 'fleet'), nodes=3)
    report_dir = str(tmp_path / 'reports')
    pre, extravars = _preflight(tmp_path, fleet, report_dir)
    passed = dict(extravars, **pre.artifacts())
    run_id = passed['preflight_run_id']
    marker = os.path.join(report_dir, run_id, 'preflight.json')
    with open(marker) as handle:
        doc = json.load(handle)
    doc['plan']['digest'] = 'sha256:' + '0' * 64  # another pre-flight's plan under the same run id
    with open(marker, 'w') as handle:
        json.dump(doc, handle)
    canary = Job(str(tmp_path), 'canary', 'sliced_roll.yml', fleet['inventory'],
                 dict(passed, awx_job_id=101, rolling_reshape_canary_only=True)).wait()
    out = canary.stdout()
    assert not canary.ok and 'Traceback' not in out
    assert ('The marker %s is of another pre-flight' % marker) in out, out[-6000:]
    assert "Discover the node's devices" not in out
