# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sliced roll as AWX runs it (docs/awx.md, "A roll sliced over several controllers").

Each job goes through ``ansible_runner`` (the library AWX runs its jobs with), in the order of the
workflow extensions/awx/rolling_reshape_workflow.yml builds: the pre-flight job over the whole
inventory in check mode (playbooks/sliced_preflight.yml), whose ``set_stats`` artifacts are passed
on as extra vars as AWX passes a workflow's artifacts; the canary's job; N=4 slice jobs AT ONCE, each
with the inventory AWX gives slice k of N (:func:`awx_slice`: the hosts ordered by name, every Nth
from the (k-1)th, as ``Inventory.get_sliced_hosts`` of awx/main/models/inventory.py) and its own
``awx_job_id``; then the report job over the whole inventory.  Against the embedded store and
against Placement on MariaDB behind gunicorn with 4 workers (``placement_mariadb``):

* the merged report's outcome equals a single-controller roll's of the same fleet, node by node;
* every node was taken by exactly one job (its claim), the canary first and once;
* a node failing in one slice stops the other slices at their next batch (the fleet's budget).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import time

import pytest
import yaml

import simfleet
from journal_support import assert_figures_are_placements_diff, placement_states
from test_fleet_playbook import BIN, REPO, playbook

pytestmark = pytest.mark.slow

SLICES = 4


def awx_slice(hosts, number, count):
    """The hosts AWX gives slice ``number`` (1-based) of ``count``: awx/main/models/inventory.py,
    ``get_script_data`` orders the inventory's hosts by name and ``get_sliced_hosts`` takes
    ``hosts[number - 1::count]``."""
    return sorted(hosts)[number - 1::count]


def _inventory(fleet, hosts, path):
    """The fleet's inventory with only ``hosts`` (what AWX's inventory of a slice job holds)."""
    with open(fleet['inventory']) as handle:
        doc = yaml.safe_load(handle)
    group = doc['all']['children']['compute']
    group['hosts'] = dict((name, group['hosts'][name]) for name in hosts)
    with open(path, 'w') as handle:
        yaml.safe_dump(doc, handle)
    return path


def _envvars(tmp):
    link_parent = os.path.join(tmp, 'collections', 'ansible_collections', 'placement')
    if not os.path.isdir(link_parent):
        os.makedirs(link_parent)
        os.symlink(REPO, os.path.join(link_parent, 'upgrade'))
    return {
        'ANSIBLE_COLLECTIONS_PATH': os.path.join(tmp, 'collections'),
        'ANSIBLE_COLLECTIONS_SCAN_SYS_PATH': 'false',
        'ANSIBLE_CALLBACKS_ENABLED': 'placement.upgrade.rolling_progress',
        'ANSIBLE_FORKS': '2',
        'ANSIBLE_HOME': os.path.join(tmp, '.ansible'),
        'ANSIBLE_LOCAL_TEMP': os.path.join(tmp, '.ansible', 'tmp'),
        'PATH': BIN + os.pathsep + os.environ.get('PATH', ''),
    }


class Job(object):
    """One AWX job: ``ansible_runner`` on the project (this checkout), in its own private data dir."""

    def __init__(self, tmp, name, playbook_name, inventory, extravars, check=False):
        import ansible_runner

        self.name = name
        self.began = time.time()
        pdd = os.path.join(tmp, 'jobs', name)
        os.makedirs(pdd)
        cmdline = '-e ansible_python_interpreter=%s' % os.path.join(BIN, 'python')
        if check:
            cmdline += ' --check'  # job_type "check"
        self.thread, self.runner = ansible_runner.run_async(
            private_data_dir=pdd, project_dir=REPO, playbook=os.path.join('playbooks', playbook_name),
            inventory=inventory, extravars=extravars, envvars=_envvars(tmp), quiet=True, cmdline=cmdline)

    def wait(self):
        self.thread.join(600)
        assert not self.thread.is_alive(), '%s did not end' % self.name
        self.took = time.time() - self.began
        return self

    @property
    def ok(self):
        return self.runner.rc == 0 and self.runner.status == 'successful'

    def stdout(self):
        with open(self.runner.stdout.name) as handle:
            return handle.read()

    def span(self):
        """When the job's playbook started and ended (its first and last events' times)."""
        ends = ('playbook_on_start', 'playbook_on_stats')
        times = sorted(e['created'] for e in self.runner.events if e.get('event') in ends)
        return times[0], times[-1]

    def artifacts(self):
        """What AWX keeps as the job's artifacts: the set_stats data of the playbook_on_stats event."""
        stats = [e for e in self.runner.events if e.get('event') == 'playbook_on_stats']
        return stats[-1]['event_data'].get('artifact_data') or {}


def workflow(fleet, tmp, extravars, canary=True, slices=SLICES):
    """The workflow of extensions/awx/rolling_reshape_workflow.yml, job after job as AWX runs it:
    {'preflight', 'canary', 'slices': [...], 'report'} (each a finished :class:`Job`)."""
    tmp = str(tmp)
    hosts = [node['name'] for node in fleet['nodes']]
    whole = fleet['inventory']
    jobs = {}
    pre = Job(tmp, 'preflight', 'sliced_preflight.yml', whole, dict(extravars, awx_job_id=100), check=True).wait()
    assert pre.ok, pre.stdout()[-6000:]
    artifacts = pre.artifacts()
    jobs['preflight'] = pre
    # AWX: a later node's extra vars are the workflow's, updated with its ancestors' artifacts
    passed = dict(extravars, **artifacts)
    if canary:
        jobs['canary'] = Job(tmp, 'canary', 'sliced_roll.yml', whole,
                             dict(passed, awx_job_id=101, rolling_reshape_canary_only=True)).wait()
        assert jobs['canary'].ok, jobs['canary'].stdout()[-6000:]
    started = []
    for number in range(1, slices + 1):
        inventory = _inventory(fleet, awx_slice(hosts, number, slices), os.path.join(tmp, 'slice%d.yml' % number))
        started.append(Job(tmp, 'slice%d' % number, 'sliced_roll.yml', inventory,
                           dict(passed, awx_job_id=110 + number)))
    jobs['slices'] = [job.wait() for job in started]
    jobs['report'] = Job(tmp, 'report', 'sliced_report.yml', whole, dict(passed, awx_job_id=120)).wait()
    jobs['run_id'] = artifacts.get('preflight_run_id')
    print('JOBS', dict((j.name, round(j.took, 1)) for j in [pre, jobs.get('canary', pre), jobs['report']] + jobs['slices']))
    return jobs


def _strip(name, prefix):
    return name[len(prefix):] if prefix and isinstance(name, str) and name.startswith(prefix) else name


def outcome(summary, prefix=''):
    """What a report says the roll did, without times, run ids, paths and the fleet's name prefix."""
    nodes = {}
    for node in summary['nodes']:
        nodes[_strip(node['node'], prefix)] = {
            'status': node['status'], 'outcome': node['outcome'], 'touched': node['touched'],
            'moved': node['moved'], 'created': sorted(_strip(c, prefix) for c in node['created']),
            'written': sorted(_strip(c, prefix) for c in (node.get('written') or {}).get('children') or []),
            'verification_failed': node['verification_failed'],
        }
    totals = dict((k, v) for k, v in summary['totals'].items() if k not in ('duration', 'retries'))
    return {'nodes': nodes, 'totals': totals, 'mode': summary['mode'],
            'deferred': sorted(_strip(item['node'], prefix) for item in summary['deferred']),
            'failed': sorted(_strip(item['node'], prefix) for item in summary['failed']),
            'touched': sorted(_strip(n, prefix) for n in summary['touched']),
            'unreached': sorted(_strip(n, prefix) for n in summary['unreached'])}


def _summary(report_dir, run_id):
    with open(os.path.join(report_dir, run_id, 'summary.json')) as handle:
        return json.load(handle)


def _claims(report_dir, run_id):
    folder = os.path.join(report_dir, run_id, 'claims')
    out = {}
    for name in os.listdir(folder):
        with open(os.path.join(folder, name)) as handle:
            doc = json.load(handle)
        out[doc['node']] = doc
    return out


def _single_roll(tmp, prefix, serial):
    """The same fleet rolled by ONE controller (playbooks/rolling_reshape.yml) on the embedded store:
    its report's summary."""
    fleet = simfleet.build(str(tmp / 'single'), nodes=12, prefix=prefix)
    rc, out = playbook(fleet, 'rolling_reshape.yml', extra={'rolling_reshape_serial': serial})
    assert rc == 0, out[-6000:]
    with open(os.path.join(fleet['out_dir'], 'reports', 'latest', 'summary.json')) as handle:
        return json.load(handle)


def _check_sliced_roll(tmp, fleet, prefix, single, serial):
    report_dir = str(tmp / 'reports')
    extravars = {'rolling_reshape_serial': serial, 'rolling_reshape_report_dir': report_dir,
                 'rolling_reshape_snapshot_dir': str(tmp / 'snapshots')}
    states = placement_states(fleet['embedded_db'], fleet) if fleet.get('embedded_db') else None
    jobs = workflow(fleet, tmp, extravars)
    run_id = jobs['run_id']
    assert run_id and not run_id.endswith('-plan'), jobs['preflight'].artifacts()
    for job in jobs['slices']:
        assert job.ok, '%s: %s' % (job.name, job.stdout()[-6000:])
    assert jobs['report'].ok, jobs['report'].stdout()[-6000:]
    canary = jobs['preflight'].artifacts()['rolling_reshape_canary']
    # the pre-flight's plan of the whole fleet is a run of its own, beside the roll's
    plan = _summary(report_dir, run_id + '-plan')
    assert plan['mode'] == 'plan' and len(plan['nodes']) == len(fleet['expected']) and plan['would_stop'] == []
    assert not os.path.isdir(os.path.join(report_dir, run_id + '-plan', 'claims'))
    # its next steps are the workflow's playbooks with its run id, never the single roll's (issue 40)
    assert not any('placement.upgrade.rolling_reshape' in step for step in plan['next_steps']), plan['next_steps']
    assert any(step.endswith('placement.upgrade.sliced_roll -e preflight_run_id=%s' % run_id)
               for step in plan['next_steps']), plan['next_steps']
    # the canary: the first node by name the plan would reshape, rolled by its own job
    assert canary == sorted(n for n, s in fleet['expected'].items() if s == 'reshaped')[0]
    # one report, of the whole fleet, with the outcome of the single controller's roll
    summary = _summary(report_dir, run_id)
    assert summary['run_id'] == run_id
    if states is not None:
        # the pre-flight's plan changed nothing; the slices' report says what they wrote
        after = placement_states(fleet['embedded_db'], fleet)
        assert set(plan['totals']['figures'].values()) != {0} and plan['totals']['words'] == 'would'
        assert_figures_are_placements_diff(summary, states, after)
    assert dict((n['node'], n['status']) for n in summary['nodes']) == fleet['expected']
    assert outcome(summary, prefix) == outcome(single, prefix)
    # every node taken by one job: the canary by the canary's, each other node by its AWX slice's
    claims = _claims(report_dir, run_id)
    hosts = sorted(fleet['expected'])
    assert sorted(claims) == hosts
    assert claims[canary]['owner'] == 'AWX job 101'
    for number in range(1, SLICES + 1):
        for host in awx_slice(hosts, number, SLICES):
            if host != canary:
                assert claims[host]['owner'] == 'AWX job %d' % (110 + number), (host, claims[host])
    # ... and each node discovered (its pass run) by that job alone
    passes = dict((h, []) for h in hosts)
    for job in [jobs['canary']] + jobs['slices']:
        for host in _discovered(job):
            passes[host].append(job.name)
    assert passes == dict((h, ['canary'] if h == canary else ['slice%d' % (hosts.index(h) % SLICES + 1)])
                          for h in hosts), passes
    # the slices ran at once: every slice job's playbook started before any of them ended
    spans = [job.span() for job in jobs['slices']]
    assert max(start for start, _end in spans) < min(end for _start, end in spans), spans
    return jobs, summary


def _discovered(job):
    """The hosts whose pass the job ran (its discovery task ended ok on them)."""
    return sorted(set(e['event_data']['host'] for e in job.runner.events
                      if e.get('event') == 'runner_on_ok'
                      and e['event_data'].get('task', '').startswith("Discover the node's devices")))


def test_awx_slice_is_awx_order():
    # awx/main/models/inventory.py: order_by('name'), then [slice_number - 1::slice_count]
    hosts = ['c-%02d' % i for i in range(10, 0, -1)]
    assert awx_slice(hosts, 1, 4) == ['c-01', 'c-05', 'c-09']
    assert awx_slice(hosts, 4, 4) == ['c-04', 'c-08']
    assert sorted(sum((awx_slice(hosts, k, 4) for k in range(1, 5)), [])) == sorted(hosts)


def test_sliced_roll_on_the_embedded_store(tmp_path):
    single = _single_roll(tmp_path, '', '2')
    fleet = simfleet.build(str(tmp_path / 'fleet'), nodes=12)
    _check_sliced_roll(tmp_path, fleet, '', single, '2')


@pytest.mark.real
@pytest.mark.mariadb
@pytest.mark.extended  # make test runs its embedded twin, test_sliced_roll_on_the_embedded_store
def test_sliced_roll_on_mariadb_placement(tmp_path, placement_mariadb, make_placement_backend, unique_name):
    """Four slices at once on Placement on MariaDB (gunicorn, 4 workers).  The single-controller roll
    it is compared with is the same fleet (same names) rolled on the embedded store: the differential
    suite (tests/integration/test_differential.py) holds that the embedded store answers as this
    Placement does, and test_sliced_roll_on_the_embedded_store compares on one store."""
    backend = make_placement_backend(placement_mariadb)
    prefix = unique_name('sl') + '-'
    single = _single_roll(tmp_path, prefix, '2')
    fleet = simfleet.build(str(tmp_path / 'fleet'), nodes=12, prefix=prefix, backend=backend,
                           inventory_vars={'placement_backend': placement_mariadb.module_auth()})
    _jobs, summary = _check_sliced_roll(tmp_path, fleet, prefix, single, '2')
    assert summary['context']['backend'] != 'embedded' and single['context']['backend'] == 'embedded'


def _marker_of_a_gated_preflight(report_dir, run_id):
    """The marker the pre-flight job writes in the run's record folder (roles/rolling_reshape/tasks/
    preflight_marker.yml), written here for the tests whose fleet holds a node the pre-flight's plan
    would stop at (the gate working): they test the slices' failure budget past that gate.  The slices
    refuse to move anything without it (tests/integration/test_sliced_reference.py)."""
    folder = os.path.join(report_dir, run_id)
    os.makedirs(folder, mode=0o700)
    with open(os.path.join(folder, 'preflight.json'), 'w') as handle:
        json.dump({'run_id': run_id, 'plan': {'run_id': run_id + '-plan', 'digest': 'sha256:' + '0' * 64,
                                              'summary': 'summary.json'},
                   'written_by': 'the test, standing in for a pre-flight its plan stopped'}, handle)


def test_a_failure_in_one_slice_stops_the_others_within_one_batch(tmp_path):
    """compute-02 (the first node of slice 2 of 4: compute-02, -06, -10) cannot be mapped and fails
    with the strict policy; with max_fail 0 every slice stops at its next batch: none claims a node
    after the failed record is stored, at most one batch after the failure, and the fleet is not
    rolled through."""
    fleet = simfleet.build(str(tmp_path / 'fleet'), nodes=12, unmapped=['compute-02'])
    hosts = sorted(fleet['expected'])
    report_dir = str(tmp_path / 'reports')
    extravars = {'rolling_reshape_serial': '1', 'rolling_reshape_report_dir': report_dir,
                 'rolling_reshape_snapshot_dir': str(tmp_path / 'snapshots'),
                 'rolling_reshape_fleet_max_fail': 0}
    # (no pre-flight: its plan would stop at compute-02, the gate working; the slices are given a run id)
    run_id = 'fail-%d' % int(time.time())
    _marker_of_a_gated_preflight(report_dir, run_id)
    passed = dict(extravars, preflight_run_id=run_id)
    started = []
    for number in range(1, SLICES + 1):
        inventory = _inventory(fleet, awx_slice(hosts, number, SLICES), str(tmp_path / ('slice%d.yml' % number)))
        started.append(Job(str(tmp_path), 'slice%d' % number, 'sliced_roll.yml', inventory,
                           dict(passed, awx_job_id=110 + number)))
    slices = [job.wait() for job in started]
    report = Job(str(tmp_path), 'report', 'sliced_report.yml', fleet['inventory'], dict(passed, awx_job_id=120)).wait()
    failing = slices[1]
    assert not failing.ok and 'compute-02' in failing.stdout()
    folder = os.path.join(report_dir, run_id)
    with open(os.path.join(folder, 'nodes', 'compute-02.json')) as handle:
        failed = json.load(handle)
    assert failed['status'] == 'failed' and failed['run_id'] == run_id
    stored_at = os.stat(os.path.join(folder, 'nodes', 'compute-02.json')).st_mtime
    claims = _claims(report_dir, run_id)
    # no slice claimed a batch after the failed record was stored ...
    late = sorted(n for n, c in claims.items() if c['claimed'] > stored_at)
    assert late == [], (late, stored_at)
    # ... so at most one batch (serial 1: one node) per slice after compute-02 failed
    for number, job in enumerate(slices, 1):
        mine = [claims[h] for h in awx_slice(hosts, number, SLICES) if h in claims]
        after = [c['node'] for c in mine if c['claimed'] > failed['finished']]
        assert len(after) <= 1, (job.name, after)
    # a slice that left nodes unclaimed was stopped by the budget (the failing one by its own failure)
    for number, job in enumerate(slices, 1):
        left = [h for h in awx_slice(hosts, number, SLICES) if h not in claims]
        if number != 2 and left:
            assert not job.ok and 'failure budget is spent' in job.stdout(), (job.name, job.stdout()[-3000:])
        elif number != 2:
            assert job.ok, job.stdout()[-3000:]
    stopped = [job.name for n, job in enumerate(slices, 1)
               if n != 2 and [h for h in awx_slice(hosts, n, SLICES) if h not in claims]]
    assert stopped, 'no other slice was stopped: the failure came too late to show the budget'
    assert 'compute-10' not in claims and 'compute-06' not in claims  # the failing slice stopped at once
    # the one report: compute-02 failed, the rest done or not reached; the report job fails the workflow
    assert not report.ok and 'compute-02' in report.stdout()
    summary = _summary(report_dir, run_id)
    assert [item['node'] for item in summary['failed']] == ['compute-02']
    assert sorted(summary['unreached']) == sorted(set(hosts) - set(claims))


def test_a_budget_of_one_lets_a_slice_past_the_first_failure_and_stops_it_at_the_second(tmp_path):
    """rolling_reshape_fleet_max_fail 1 over 4 slices: compute-02 and compute-06, the first two nodes of
    slice 2 (-02, -06, -10), cannot be mapped.  The first failure is within the budget: slice 2 goes on
    (ansible-playbook would end its play at a batch whose nodes all failed, serial 1 here: the role
    records the failure without failing the host) and claims compute-06 after compute-02's failed
    record is stored.  The second spends it: slice 2 stops before compute-10, saying so; no slice
    claims a batch after the second failed record is stored; every slice left with nodes says the
    budget is spent; the jobs of the slices that ran a failed node fail."""
    fleet = simfleet.build(str(tmp_path / 'fleet'), nodes=12, unmapped=['compute-02', 'compute-06'])
    hosts = sorted(fleet['expected'])
    report_dir = str(tmp_path / 'reports')
    run_id = 'budget1-%d' % int(time.time())
    _marker_of_a_gated_preflight(report_dir, run_id)
    passed = {'rolling_reshape_serial': '1', 'rolling_reshape_report_dir': report_dir,
              'rolling_reshape_snapshot_dir': str(tmp_path / 'snapshots'),
              'rolling_reshape_fleet_max_fail': 1, 'preflight_run_id': run_id}
    started = []
    for number in range(1, SLICES + 1):
        inventory = _inventory(fleet, awx_slice(hosts, number, SLICES), str(tmp_path / ('slice%d.yml' % number)))
        started.append(Job(str(tmp_path), 'slice%d' % number, 'sliced_roll.yml', inventory,
                           dict(passed, awx_job_id=210 + number)))
    slices = [job.wait() for job in started]
    report = Job(str(tmp_path), 'report', 'sliced_report.yml', fleet['inventory'], dict(passed, awx_job_id=220)).wait()
    folder = os.path.join(report_dir, run_id, 'nodes')
    stored = {}
    for node in ('compute-02', 'compute-06'):
        with open(os.path.join(folder, node + '.json')) as handle:
            assert json.load(handle)['status'] == 'failed'
        stored[node] = os.stat(os.path.join(folder, node + '.json')).st_mtime
    claims = _claims(report_dir, run_id)
    # past the first failure: slice 2 claimed its next node after the failed record was stored
    assert claims['compute-06']['claimed'] > stored['compute-02'], (claims['compute-06'], stored)
    said = ' '.join(slices[1].stdout().split())
    assert 'Failed: compute-02' in said and 'The slice goes on' in said, said[-3000:]
    # stopped at the second: slice 2 not past it, nothing claimed after it was stored
    assert 'compute-10' not in claims
    assert not slices[1].ok and '2 node(s) failed' in said and 'failure budget is spent' in said, said[-3000:]
    late = sorted(n for n, c in claims.items() if c['claimed'] > stored['compute-06'])
    assert late == [], (late, stored)
    for number, job in enumerate(slices, 1):
        left = [h for h in awx_slice(hosts, number, SLICES) if h not in claims]
        if left:
            text = ' '.join(job.stdout().split())
            assert not job.ok and 'failure budget is spent' in text, (job.name, job.stdout()[-3000:])
            assert 'compute-02' in text and 'compute-06' in text, text[-3000:]
        else:
            assert job.ok, (job.name, job.stdout()[-3000:])
    # the one report: both failed, the nodes nobody claimed not reached; the report job fails the workflow
    assert not report.ok
    summary = _summary(report_dir, run_id)
    assert sorted(item['node'] for item in summary['failed']) == ['compute-02', 'compute-06']
    assert sorted(summary['unreached']) == sorted(set(hosts) - set(claims))


def test_a_slice_within_the_budget_rolls_all_its_nodes_and_its_job_fails_at_the_end(tmp_path):
    """rolling_reshape_fleet_max_fail 2, compute-02 (slice 2: -02, -06, -10) cannot be mapped: slice 2
    rolls compute-06 and compute-10 too, and its job fails at its end naming compute-02; the other
    slices' jobs succeed; the report holds the one failure and every other node."""
    fleet = simfleet.build(str(tmp_path / 'fleet'), nodes=12, unmapped=['compute-02'])
    hosts = sorted(fleet['expected'])
    report_dir = str(tmp_path / 'reports')
    run_id = 'budget2-%d' % int(time.time())
    _marker_of_a_gated_preflight(report_dir, run_id)
    passed = {'rolling_reshape_serial': '1', 'rolling_reshape_report_dir': report_dir,
              'rolling_reshape_snapshot_dir': str(tmp_path / 'snapshots'),
              'rolling_reshape_fleet_max_fail': 2, 'preflight_run_id': run_id}
    started = []
    for number in range(1, SLICES + 1):
        inventory = _inventory(fleet, awx_slice(hosts, number, SLICES), str(tmp_path / ('slice%d.yml' % number)))
        started.append(Job(str(tmp_path), 'slice%d' % number, 'sliced_roll.yml', inventory,
                           dict(passed, awx_job_id=310 + number)))
    slices = [job.wait() for job in started]
    report = Job(str(tmp_path), 'report', 'sliced_report.yml', fleet['inventory'], dict(passed, awx_job_id=320)).wait()
    claims = _claims(report_dir, run_id)
    assert sorted(claims) == hosts
    said = ' '.join(slices[1].stdout().split())
    assert not slices[1].ok
    # the progress says the slice went on past compute-02, through all its nodes (one roll, not one per batch)
    assert ('[rolling_progress] failed, the roll went on past it: compute-02: ' in said
            and "within the fleet's failure budget: 3/3 nodes in" in said and 'not reached' not in said), said[-3000:]
    assert 'compute-02 failed in run %s: ' % run_id in said and 'The slice went on past it' in said, said[-3000:]
    # the job's host summary names the node that failed, not another of the slice
    recap = re.sub(r'\x1b\[[0-9;]*m', '', slices[1].stdout().split('PLAY RECAP')[-1])
    failed_hosts = sorted(line.split()[0] for line in recap.splitlines() if 'failed=' in line and 'failed=0' not in line)
    assert failed_hosts == ['compute-02'], recap
    assert [job.ok for n, job in enumerate(slices, 1) if n != 2] == [True, True, True]
    assert not report.ok
    summary = _summary(report_dir, run_id)
    assert [item['node'] for item in summary['failed']] == ['compute-02']
    assert summary['unreached'] == []
    statuses = dict((n['node'], n['status']) for n in summary['nodes'])
    assert statuses == fleet['expected'], statuses


def test_a_failure_whose_record_is_not_stored_stops_the_slice_whatever_the_budget(tmp_path):
    """The slices count the stored failed records: a failure not stored (here the records are off,
    rolling_reshape_report false; a full disk or a lost mount alike) is not tolerated, the slice stops
    at it as with a budget of 0 (found by a review: the budget was overrun, unseen)."""
    fleet = simfleet.build(str(tmp_path / 'fleet'), nodes=4, unmapped=['compute-02'])
    report_dir = str(tmp_path / 'reports')
    run_id = 'unstored-%d' % int(time.time())
    _marker_of_a_gated_preflight(report_dir, run_id)
    job = Job(str(tmp_path), 'slice1', 'sliced_roll.yml', fleet['inventory'], {
        'rolling_reshape_serial': '1', 'rolling_reshape_report_dir': report_dir, 'rolling_reshape_report': False,
        'rolling_reshape_snapshot_dir': str(tmp_path / 'snapshots'), 'rolling_reshape_fleet_max_fail': 2,
        'preflight_run_id': run_id, 'awx_job_id': 401}).wait()
    said = ' '.join(job.stdout().split())
    assert not job.ok
    assert 'The roll stops at compute-02' in said and 'The slice goes on' not in said, said[-3000:]
    assert sorted(_claims(report_dir, run_id)) == ['compute-01', 'compute-02']
