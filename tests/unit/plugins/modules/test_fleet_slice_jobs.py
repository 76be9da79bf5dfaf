# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fleet_slice and the jobs behind the claims (issues 40 and 46): a claim names its job (the
ansible-playbook process: host, boot, pid, start); a relaunch takes over the claim of a job that is
gone, and fails naming a claim whose job cannot be told, instead of skipping its node silently; a
slice given a run id other than the pre-flight's is refused before it claims anything."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import socket
import subprocess

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import slices
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet.records import save_record
from ansible_collections.placement.upgrade.plugins.modules import fleet_slice

from module_runner import run_module_main

RUN = 'run-1'


def _run(capsys, check=False, **args):
    args = dict({'run_id': RUN, 'owner': 'AWX job 8'}, **args)
    if check:
        args['_ansible_check_mode'] = True
    return run_module_main(fleet_slice.main, args, capsys)


@pytest.fixture
def playbook_process():
    """A process that looks like ansible-playbook (its argv[0]), running until the test ends."""
    proc = subprocess.Popen(['bash', '-c', 'exec -a ansible-playbook sleep 60'])
    try:
        for _attempt in range(200):                       # until exec has happened
            if slices._argv(proc.pid)[:1] == ['ansible-playbook']:  # pylint: disable=protected-access
                break
            subprocess.call(['sleep', '0.01'])
        yield proc
    finally:
        proc.kill()
        proc.wait()


def _write_claim(dest, node, doc):
    os.makedirs(os.path.join(dest, 'claims'), exist_ok=True)
    with open(slices.claim_path(dest, node), 'w') as handle:
        json.dump(doc, handle)


def test_a_claim_names_its_ansible_playbook_process(playbook_process):
    job = slices.this_job(pid=playbook_process.pid)
    assert job['host'] == socket.gethostname() and job['pid'] == playbook_process.pid
    assert job['boot_id'] and isinstance(job['start_ticks'], int) and job['started'].endswith('Z')
    assert slices.job_alive(job) is True
    text = slices.job_text({'owner': 'ansible-playbook on localhost', 'job': job})
    assert text == 'ansible-playbook on localhost (ansible-playbook pid %d on %s, started %s)' % (
        playbook_process.pid, job['host'], job['started'])


def test_two_jobs_on_one_controller_are_told_apart_and_a_live_ones_claim_is_left(
        capsys, tmp_path, playbook_process):
    """Two ansible-playbook runs on one controller both said "ansible-playbook on <controller>": the
    claim now tells which process; a running one keeps its node (left alone, as before)."""
    dest = str(tmp_path / RUN)
    job = slices.this_job(pid=playbook_process.pid)
    _write_claim(dest, 'cn-02', {'node': 'cn-02', 'owner': 'ansible-playbook on ctl', 'run_id': RUN,
                                 'claimed': 1.0, 'job': job})
    rc, out = _run(capsys, dest=dest, nodes=['cn-02', 'cn-03'])
    assert rc == 0 and out['claimed'] == ['cn-03'] and out['stale'] == [] and out['taken_over'] == [], out
    assert out['taken'] == [{'node': 'cn-02', 'owner': 'ansible-playbook on ctl', 'why': 'claimed'}]
    with open(slices.claim_path(dest, 'cn-03')) as handle:
        mine = json.load(handle)
    assert mine['owner'] == 'AWX job 8' and mine['job']['host'] == socket.gethostname()
    assert mine['job'] == out['job']


def test_a_relaunch_takes_over_the_claim_of_a_job_that_is_gone(capsys, tmp_path):
    """A slice killed after claiming its batch: its process is gone (same host, same boot), the
    relaunch takes the node over and rolls it, saying so."""
    proc = subprocess.Popen(['bash', '-c', 'exec -a ansible-playbook sleep 0.3'])
    for _attempt in range(200):
        if slices._argv(proc.pid)[:1] == ['ansible-playbook']:  # pylint: disable=protected-access
            break
        subprocess.call(['sleep', '0.01'])
    job = slices.this_job(pid=proc.pid)
    proc.wait()                                    # the killed slice's ansible-playbook is gone
    assert slices.job_alive(job) is False
    dest = str(tmp_path / RUN)
    _write_claim(dest, 'cn-04', {'node': 'cn-04', 'owner': 'AWX job 7', 'run_id': RUN, 'claimed': 1.0, 'job': job})
    rc, out = _run(capsys, dest=dest, nodes=['cn-04'])
    assert rc == 0 and out['claimed'] == ['cn-04'] and out['taken'] == [], out
    assert out['taken_over'] == [{'node': 'cn-04', 'owner': slices.job_text({'owner': 'AWX job 7', 'job': job})}]
    assert 'cn-04 taken over from AWX job 7 (ansible-playbook pid %d' % job['pid'] in out['msg']
    with open(slices.claim_path(dest, 'cn-04')) as handle:
        now = json.load(handle)
    assert now['owner'] == 'AWX job 8' and now['took_over']['owner'] == 'AWX job 7'
    assert sorted(os.listdir(os.path.join(dest, 'claims'))) == ['cn-04.json']


@pytest.mark.parametrize('job', [None, {'host': 'awx-job-7-abcde', 'pid': 12, 'start_ticks': 5, 'boot_id': 'b'}],
                         ids=['claim-without-job', 'job-on-another-host'])
def test_a_relaunch_fails_naming_a_claim_whose_job_cannot_be_told(capsys, tmp_path, job):
    """The claim of a killed slice whose liveness cannot be told here (an AWX job's container, a claim
    of the former format): the node was silently skipped and the job ended green. Now the batch claims
    nothing and the task fails, naming the claim, its job and the file to remove."""
    dest = str(tmp_path / RUN)
    doc = {'node': 'cn-05', 'owner': 'AWX job 7', 'run_id': RUN, 'claimed': 1.0}
    if job:
        doc['job'] = job
    _write_claim(dest, 'cn-05', doc)
    save_record(dest, {'node': 'cn-01', 'status': 'reshaped', 'run_id': RUN})
    rc, out = _run(capsys, dest=dest, nodes=['cn-05', 'cn-06'])
    assert rc == 1, out
    assert out['msg'].startswith('1 node(s) claimed by a job that is not known to be running and has no record '
                                 'in run %s: cn-05 by AWX job 7' % RUN), out['msg']
    assert out['msg'].endswith('relaunch the slice: rm %s' % slices.claim_path(dest, 'cn-05')), out['msg']
    assert [item['node'] for item in out['stale']] == ['cn-05']
    assert not os.path.exists(slices.claim_path(dest, 'cn-06'))       # nothing claimed
    # once the claim file is removed (the job is known to have ended) the relaunch takes the node
    os.unlink(slices.claim_path(dest, 'cn-05'))
    rc, out = _run(capsys, dest=dest, nodes=['cn-05', 'cn-06'])
    assert rc == 0 and out['claimed'] == ['cn-05', 'cn-06'], out


def test_a_slice_given_another_run_id_than_the_preflights_is_refused_before_claiming(capsys, tmp_path):
    reports = tmp_path / 'reports'
    rc, out = _run(capsys, dest=str(reports / RUN), nodes=[], publish=True, owner='AWX job 100 (pre-flight)')
    assert rc == 0 and out['changed'] is True and out['published'] == str(reports / 'sliced-run.json'), out
    rc, out = _run(capsys, dest=str(reports / 'run-2'), run_id='run-2', nodes=['cn-01', 'cn-02'])
    assert rc == 1, out
    assert out['msg'].startswith('this slice was given run id run-2, but the sliced roll of %s is run %s (%s, '
                                 'published by AWX job 100 (pre-flight) at ' % (reports, RUN,
                                                                                reports / 'sliced-run.json')), out
    assert not os.path.exists(str(reports / 'run-2'))                  # nothing claimed, no folder made
    rc, out = _run(capsys, dest=str(reports / RUN), nodes=['cn-01', 'cn-02'])
    assert rc == 0 and out['claimed'] == ['cn-01', 'cn-02'], out
    # a new pre-flight publishes the next run: the old run id is refused from then on
    rc, out = _run(capsys, dest=str(reports / 'run-3'), run_id='run-3', nodes=[], publish=True)
    assert rc == 0
    rc, out = _run(capsys, dest=str(reports / RUN), nodes=['cn-03'])
    assert rc == 1 and 'is run run-3' in out['msg'], out


def test_without_a_preflight_the_first_slices_run_is_the_run(capsys, tmp_path):
    """Two slices given different run ids, no pre-flight: both claimed and rolled the overlap."""
    reports = tmp_path / 'reports'
    rc, out = _run(capsys, dest=str(reports / 'run-a'), run_id='run-a', nodes=['cn-01', 'cn-02'])
    assert rc == 0 and out['claimed'] == ['cn-01', 'cn-02'], out
    rc, out = _run(capsys, dest=str(reports / 'run-b'), run_id='run-b', nodes=['cn-02', 'cn-03'])
    assert rc == 1 and 'this slice was given run id run-b, but the sliced roll of' in out['msg'], out
    assert not os.path.exists(str(reports / 'run-b'))


def test_check_mode_publishes_and_claims_nothing(capsys, tmp_path):
    reports = tmp_path / 'reports'
    rc, out = _run(capsys, check=True, dest=str(reports / RUN), nodes=[], publish=True)
    assert rc == 0 and out['changed'] is False and not os.path.exists(str(reports))
    rc, out = _run(capsys, check=True, dest=str(reports / RUN), nodes=['cn-01'])
    assert rc == 0 and out['claimed'] == ['cn-01'] and not os.path.exists(str(reports))
