# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/rolling_reshape.yml and playbooks/rollback.yml run with ansible-playbook.

Each test builds a small simulated fleet (tools/simfleet.py: local-connection hosts with
fake sysfs and libvirt XML, a seeded Placement) and runs the real playbooks on it, with
the collection taken from this working tree and the rolling_progress callback on.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import subprocess
import sys

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend

import simfleet

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLAYBOOKS = os.path.join(REPO, 'playbooks')
BIN = os.path.dirname(sys.executable)

pytestmark = pytest.mark.slow


def _env(tmp):
    link_parent = os.path.join(tmp, 'collections', 'ansible_collections', 'placement')
    if not os.path.isdir(link_parent):
        os.makedirs(link_parent)
        os.symlink(REPO, os.path.join(link_parent, 'upgrade'))
    env = dict(os.environ)
    env.update({
        'ANSIBLE_COLLECTIONS_PATH': os.path.join(tmp, 'collections'),
        'ANSIBLE_CALLBACKS_ENABLED': 'placement.upgrade.rolling_progress',
        'ANSIBLE_FORKS': '2',
        'ANSIBLE_NOCOLOR': '1',
        'ANSIBLE_FORCE_COLOR': '0',
        'ANSIBLE_RETRY_FILES_ENABLED': '0',
        'ANSIBLE_HOME': os.path.join(tmp, '.ansible'),
        'ANSIBLE_LOCAL_TEMP': os.path.join(tmp, '.ansible', 'tmp'),
        'ANSIBLE_PYTHON_INTERPRETER': sys.executable,
    })
    env.pop('ANSIBLE_CONFIG', None)
    return env


def playbook(fleet, name, extra=None, check=False, inventories=(), limit=None, forks=None, env=None):
    out = fleet['out_dir']
    args = [os.path.join(BIN, 'ansible-playbook'), '-i', fleet['inventory']]
    for inv in inventories:
        args += ['-i', inv]
    args.append(os.path.join(PLAYBOOKS, name))
    extra = dict({'rolling_reshape_snapshot_dir': os.path.join(out, 'snapshots'),
                  'rolling_reshape_report_dir': os.path.join(out, 'reports')}, **(extra or {}))
    args += ['-e', json.dumps(extra)]
    if check:
        args.append('--check')
    if limit:
        args += ['--limit', limit]
    extra_env = env
    env = _env(out)
    if forks:
        env['ANSIBLE_FORKS'] = str(forks)
    env.update(extra_env or {})
    proc = subprocess.run(args, env=env, cwd=out, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=900)
    return proc.returncode, proc.stdout


def summary(fleet):
    with open(os.path.join(fleet['out_dir'], 'reports', 'latest', 'summary.json')) as handle:
        return json.load(handle)


def statuses(fleet):
    return dict((n['node'], n['status']) for n in summary(fleet)['nodes'])


def trees(fleet, backend=None):
    def read(b):
        return dict((n['name'], provider_tree_state(b, n['uuid'])) for n in fleet['nodes'])
    if backend is not None:
        return read(backend)
    with EmbeddedBackend(fleet['embedded_db']) as store:
        return read(store)


def recap(output):
    """{host: {ok, changed, failed, ...}} from the PLAY RECAP."""
    found = {}
    for host, stats in re.findall(r'^(\S+)\s+:\s+(ok=.*)$', output, flags=re.M):
        found[host] = dict((k, int(v)) for k, v in re.findall(r'(\w+)=(\d+)', stats))
    return found


def comparable(state):
    """A tree without generations, by provider name."""
    names = dict((u, p['name']) for u, p in state['providers'].items())
    providers = dict((p['name'], (names.get(p.get('parent_provider_uuid')), p['inventories'], p['usages'],
                                  p['traits']))
                     for p in state['providers'].values())
    allocations = {}
    for consumer, body in state['allocations'].items():
        allocations[consumer] = dict((names.get(rp, rp), entry['resources'])
                                     for rp, entry in body['allocations'].items())
    return {'providers': providers, 'allocations': allocations}


def test_check_mode_plans_the_whole_fleet_and_changes_nothing(tmp_path):
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=5)
    before = trees(fleet)
    rc, out = playbook(fleet, 'rolling_reshape.yml', check=True, extra={
        'rolling_reshape_serial': '100%',
        'rolling_reshape_pre_tasks': os.path.join(PLAYBOOKS, 'hooks', 'demo_disable_compute.yml')})
    assert rc == 0, out
    assert trees(fleet) == before, 'check mode changed Placement'
    # no snapshot (not even the directory): check mode creates nothing but the report
    assert not os.path.exists(os.path.join(fleet['out_dir'], 'snapshots'))
    for node in fleet['nodes']:
        assert not os.path.exists(os.path.join(os.path.dirname(node['sysfs_root']), 'nova-compute.disabled'))
    report = summary(fleet)
    assert report['mode'] == 'plan'
    want = dict((n, 'planned' if s == 'reshaped' else s) for n, s in fleet['expected'].items())
    assert statuses(fleet) == want
    assert report['totals']['allocations_moved'] > 0
    with open(os.path.join(fleet['out_dir'], 'reports', 'latest', 'report.html')) as handle:
        assert 'Plan only (check mode): nothing was changed.' in handle.read()


def test_a_deferred_node_can_be_made_to_stop_the_roll(tmp_path):
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=5)
    before = trees(fleet)
    # the plan visits every node and fails at the end, naming the node that would stop
    rc, out = playbook(fleet, 'rolling_reshape.yml', check=True,
                       extra={'rolling_reshape_fail_on_deferred': True})
    assert rc != 0
    assert 'The plan says 1 node(s) would stop a real roll: compute-04: compute-04 is deferred and ' \
        'fail_on_deferred is set: ' in out
    report = summary(fleet)
    assert report['mode'] == 'plan' and report['unreached'] == []
    assert statuses(fleet)['compute-05'] == 'noop' and statuses(fleet)['compute-04'] == 'failed'
    assert trees(fleet) == before
    # a real roll stops there
    rc, out = playbook(fleet, 'rolling_reshape.yml', extra={'rolling_reshape_fail_on_deferred': True})
    assert rc != 0
    assert 'The roll stops at compute-04: compute-04 is deferred and fail_on_deferred is set: ' in out
    assert 'Nodes not reached, left untouched: compute-05.' in out
    assert '[rolling_progress] not reached (untouched): compute-05' in out
    report = summary(fleet)
    assert report['stopped']['node'] == 'compute-04' and report['unreached'] == ['compute-05']


def test_canary_roll_rerun_and_rollback(tmp_path):
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=4)
    before = trees(fleet)
    hooks = {'rolling_reshape_pre_tasks': os.path.join(PLAYBOOKS, 'hooks', 'demo_disable_compute.yml'),
             'rolling_reshape_post_tasks': os.path.join(PLAYBOOKS, 'hooks', 'demo_enable_compute.yml')}
    # the canary list as an AWX survey text field sends it
    extra = dict(hooks, rolling_reshape_serial='1,2', preflight_upgrade_checks=[
        {'name': 'nova-status', 'command': "sh -c 'echo 1 warning: a deprecated option; exit 1'"}])
    rc, out = playbook(fleet, 'rolling_reshape.yml', extra=extra)
    assert rc == 0, out
    assert statuses(fleet) == fleet['expected'] == {'compute-01': 'reshaped', 'compute-02': 'reshaped',
                                                    'compute-03': 'reshaped', 'compute-04': 'noop'}
    # an upgrade check answering 1 warns and the roll goes on
    assert 'WARNING nova-status (rc 1): 1 warning: a deprecated option' in out
    # the canary batch, then batches of two, with the progress and an estimate of the time left
    assert '[rolling_progress] batch 1: compute-01 (nodes 1-1 of 4)' in out
    assert '[rolling_progress] batch 2: compute-02, compute-03 (nodes 2-3 of 4)' in out
    assert '[rolling_progress] batch 3: compute-04 (nodes 4-4 of 4)' in out
    # (durations read "9.4 s" or "1 min 10 s", whatever the machine's load)
    assert re.search(r'batch 1 done in [\d.]+ s: 1/4 nodes \(1 reshaped, 0 skipped, 0 deferred, 0 failed\); '
                     r'elapsed [\d.]+ s, about (\d+ min )?[\d.]+ s left for 3 more nodes', out), out
    assert 'Roll finished: 4 nodes: 3 reshaped, 1 skipped, 0 deferred, 0 failed' in out
    for node in fleet['nodes']:
        assert not os.path.exists(os.path.join(os.path.dirname(node['sysfs_root']), 'nova-compute.disabled'))
    after = trees(fleet)

    # a second run finds every node in the layout: nothing changes, no hook runs
    rc, out = playbook(fleet, 'rolling_reshape.yml', extra=dict(hooks, rolling_reshape_serial='[1, 2]'))
    assert rc == 0, out
    assert all(stats['changed'] == 0 for stats in recap(out).values()), out
    assert '[rolling_progress] batch 2: compute-02, compute-03 (nodes 2-3 of 4)' in out
    assert set(statuses(fleet).values()) == {'noop'}
    assert trees(fleet) == after

    # rollback needs the nodes named
    rc, out = playbook(fleet, 'rollback.yml')
    assert rc != 0 and 'Name the nodes to roll back with -e rollback_nodes=' in out
    rc, out = playbook(fleet, 'rollback.yml', extra={'rollback_nodes': 'compute-02',
                                                     'rolling_reshape_remove_children': True})
    assert rc == 0, out
    now = trees(fleet)
    assert comparable(now['compute-02']) == comparable(before['compute-02'])
    assert comparable(now['compute-01']) == comparable(after['compute-01'])
    assert comparable(now['compute-03']) == comparable(after['compute-03'])
    report = summary(fleet)
    assert [(n['node'], n['status']) for n in report['nodes']] == [('compute-02', 'rolled_back')]
    # issue 40: the rollback's figures are its journal's, in its words; it created nothing
    children = len(after['compute-02']['providers']) - len(before['compute-02']['providers'])
    assert children > 0
    assert report['totals']['words'] == 'restored' and report['totals']['providers_created'] == 0
    assert report['totals']['figures']['providers_removed'] == children, report['totals']
    assert report['totals']['figures']['providers_left'] == 0, report['totals']
    assert 'Rollback finished: 1 node: ' in out and 'Roll finished' not in out, out
    assert 'moved back' in out and 'reshape (one POST /reshaper' not in out, out


KEPT_PLAY = u"""
- name: The roll
  ansible.builtin.import_playbook: %s
- name: What the controller kept of each node
  hosts: compute
  gather_facts: false
  tasks:
    - name: Write it
      ansible.builtin.copy:
        dest: "{{ kept_out }}"
        content: >-
          {%%- set out = {} -%%}
          {%%- for host in ansible_play_hosts_all -%%}
          {%%-   set _ = out.update({host: {}}) -%%}
          {%%-   for name in ['rolling_reshape_devices', 'rolling_reshape_applied', 'rolling_reshape_plan',
                              'rolling_reshape_result'] -%%}
          {%%-     set _ = out[host].update({name: hostvars[host][name] | default(None)}) -%%}
          {%%-   endfor -%%}
          {%%- endfor -%%}
          {{ out | to_json }}
        mode: '0644'
      delegate_to: localhost
      run_once: true
"""


def test_the_controller_keeps_no_plan_per_node_and_reports_once(tmp_path):
    """Issue 13 target 2: once a batch is through, its nodes' discovery and reshape results
    are dropped (one run_once task per batch; each node's record is stored for the report).
    The report is written once, after the last batch."""
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=5)
    play = tmp_path / 'kept.yml'
    play.write_text(KEPT_PLAY % os.path.join(PLAYBOOKS, 'rolling_reshape.yml'))
    kept_out = str(tmp_path / 'kept.json')
    rc, out = playbook(fleet, str(play), extra={'rolling_reshape_serial': 2, 'kept_out': kept_out})
    assert rc == 0, out
    assert statuses(fleet) == fleet['expected']
    assert sorted(set(fleet['expected'].values())) == ['deferred', 'noop', 'reshaped']
    with open(kept_out) as handle:
        kept = json.load(handle)
    assert sorted(kept) == ['compute-0%d' % i for i in range(1, 6)]
    for host, facts in kept.items():
        assert facts == {'rolling_reshape_devices': {}, 'rolling_reshape_applied': {}, 'rolling_reshape_plan': {},
                         'rolling_reshape_result': None}, (host, facts)
    # each node's record was stored, and the report rendered from them once, after the last batch
    records = os.listdir(os.path.join(fleet['out_dir'], 'reports', 'latest', 'nodes'))
    assert sorted(records) == ['compute-0%d.json' % i for i in range(1, 6)], records
    # the batches' drop of results and the report's condition are weighed for one host of each batch
    # (serial 2: 3 batches), and the report is written once, after the last batch
    one_host = r'TASK \[placement\.upgrade\.rolling_reshape : %s\] \*+\n(?:%s): [^\n]*\n\n'
    assert len(re.findall(one_host % ("Drop the batch's discovery and reshape results[^]]*", 'ok'), out)) == 3, out
    assert len(re.findall(one_host % ('Write the report of the run', 'skipping|included'), out)) == 3, out
    assert len(re.findall(r'rolling_reshape/tasks/report\.yml for compute-05\n', out)) == 1, out
    assert out.count('Roll finished: 5 nodes') == 1, out


def test_preflight_stops_the_run_before_any_node(tmp_path):
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=3)
    extra_inventory = tmp_path / 'more.yml'
    extra_inventory.write_text(u'all:\n  children:\n    compute:\n      hosts:\n        compute-99: {}\n')
    before = trees(fleet)
    rc, out = playbook(fleet, 'rolling_reshape.yml', inventories=[str(extra_inventory)])
    assert rc != 0
    assert "no resource provider named or with uuid 'compute-99'" in out
    assert 'Pre-flight failed, no node was touched' in out
    assert trees(fleet) == before
    assert not os.path.exists(os.path.join(fleet['out_dir'], 'reports', 'latest'))
    # the default checks (nova-status, placement-status) are skipped where their service's
    # configuration is not, saying so; an optional check that can run does, and failing hard
    # (placement-status's rc 2) stops the run too
    conf = tmp_path / 'placement.conf'
    conf.write_text(u'[placement_database]\n')
    rc, out = playbook(fleet, 'rolling_reshape.yml', extra={'preflight_upgrade_checks': [
        {'name': 'nova-status', 'command': 'nova-status upgrade check', 'optional': True,
         'requires': '/etc/nova/nova.conf.absent'},
        {'name': 'no-such-tool', 'command': 'no-such-tool upgrade check', 'optional': True},
        # found on one host (one command per host finds them: each is told apart by its index)
        {'name': 'on-node', 'command': 'no-such-tool upgrade check', 'optional': True, 'host': 'compute-02'},
        {'name': 'true-on-node', 'command': "sh -c 'echo ran on the node; exit 1'", 'optional': True,
         'host': 'compute-02', 'requires': str(conf)},
        {'name': 'placement-status', 'command': "sh -c 'echo Failure: missing data migration; exit 2'",
         'optional': True, 'requires': str(conf)}]})
    assert rc != 0 and 'missing data migration' in out
    assert 'nova-status skipped: nova-status or /etc/nova/nova.conf.absent not found on localhost' in out
    assert 'no-such-tool skipped: no-such-tool not found on localhost' in out
    assert 'on-node skipped: no-such-tool not found on compute-02' in out
    # the checks that can run did, each where it was asked to; none of the others is said skipped
    assert 'ok: [compute-01 -> compute-02] => (item=true-on-node)' in out
    # the controller's three were looked up by the pre-flight's Placement check (no command run);
    # one command found compute-02's two
    finds = re.findall(r'ok: \[compute-01 -> (\S+)\] => \(item=\S+\)\n', out.split('Find which optional')[1].split('TASK')[0])
    assert finds == ['compute-02'], out
    assert out.count(' skipped: ') == 3, out
    assert 'true-on-node skipped' not in out and 'placement-status skipped' not in out
    assert trees(fleet) == before


def test_a_bad_argument_of_one_node_stops_the_run_before_any_node(tmp_path):
    """The roll's arguments are checked for every node once, in the pre-flight play (the roll
    applies the role with rolespec_validate: false): a bad value on one host stops the run there."""
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=3)
    extra_inventory = tmp_path / 'bad.yml'
    extra_inventory.write_text(u'all:\n  children:\n    compute:\n      hosts:\n        compute-02:\n'
                               u'          rolling_reshape_ownership_policy: loose\n')
    before = trees(fleet)
    rc, out = playbook(fleet, 'rolling_reshape.yml', inventories=[str(extra_inventory)])
    assert rc != 0, out
    assert re.search(r'failed: \[compute-01\] \(item=compute-02\)', out), out
    assert 'value of rolling_reshape_ownership_policy must be one of: strict, pack, got: loose' in out, out
    assert not re.search(r'\(item=compute-0[13]\)[^\n]*\n[^\n]*must be one of', out), out
    assert 'PLAY [Roll through the compute nodes]' not in out
    assert trees(fleet) == before
    assert not os.path.exists(os.path.join(fleet['out_dir'], 'reports', 'latest'))


@pytest.mark.real
def test_roll_on_the_real_placement(tmp_path, placement_server, rest_backend, unique_name):
    prefix = unique_name('f') + '-'
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=5, prefix=prefix, backend=rest_backend,
                           inventory_vars={'placement_backend': placement_server.module_auth()})
    before = trees(fleet, rest_backend)
    # one fork: the test server's SQLite answers concurrent writers with 500 "database is locked"
    rc, out = playbook(fleet, 'rolling_reshape.yml', forks=1, extra={'rolling_reshape_serial': [1, '50%']})
    assert rc == 0, out
    assert statuses(fleet) == fleet['expected']
    after = trees(fleet, rest_backend)
    for node in fleet['nodes']:
        if fleet['expected'][node['name']] == 'reshaped':
            names = sorted(p['name'] for p in after[node['name']]['providers'].values())
            assert len(names) > 1 and names[0] == node['provider']
            old = comparable(before[node['name']])['allocations']
            new = comparable(after[node['name']])['allocations']
            assert sorted(old) == sorted(new)
        else:
            assert comparable(after[node['name']]) == comparable(before[node['name']])


def _drop_owner_nova(fleet, node):
    """One child of ``node`` (already in the layout) without OWNER_NOVA, as an older nova made it: its name."""
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        root = backend.list_providers(name=node)[0]
        for prov in backend.list_providers(in_tree=root['uuid']):
            traits = backend.get_provider_traits(prov['uuid'])
            if prov['uuid'] != root['uuid'] and 'OWNER_NOVA' in traits['traits']:
                backend.set_provider_traits(prov['uuid'], traits['resource_provider_generation'],
                                            sorted(set(traits['traits']) - {'OWNER_NOVA'}))
                return prov['name']
    raise AssertionError('no child of %s has OWNER_NOVA' % node)


@pytest.mark.parametrize('steps', [False, True], ids=['reshape-alone', 'with-steps'])
def test_the_report_and_the_progress_tell_what_happened(tmp_path, steps):
    """Issue 26 section 2: a node whose only difference is a missing trait says what was written and
    is counted apart; rollback advice only where a snapshot is; the microversion the run negotiated;
    device_info's warnings in the play output and in the node's section; a deferral's reason once."""
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=5)
    assert fleet['expected'] == {'compute-01': 'reshaped', 'compute-02': 'reshaped', 'compute-03': 'noop',
                                 'compute-04': 'deferred', 'compute-05': 'noop'}
    child = _drop_owner_nova(fleet, 'compute-03')
    nova_conf = fleet['nodes'][4]['nova_conf']
    os.unlink(nova_conf)
    extra = {}
    if steps:
        extra = {'rolling_reshape_pre_tasks': os.path.join(PLAYBOOKS, 'hooks', 'demo_disable_compute.yml'),
                 'rolling_reshape_post_tasks': os.path.join(PLAYBOOKS, 'hooks', 'demo_enable_compute.yml')}
    # the plan says compute-03 would only get the trait
    rc, out = playbook(fleet, 'rolling_reshape.yml', extra=extra, check=True)
    assert rc == 0, out
    assert summary(fleet)['mode'] == 'plan'
    assert statuses(fleet) == dict(fleet['expected'], **{'compute-01': 'planned', 'compute-02': 'planned',
                                                         'compute-03': 'updated'})
    assert 'update (planned, not applied: traits added: OWNER_NOVA on %s; no POST /reshaper)' % child in out, out
    assert '1 would update without a reshape (traits or children only)' in out, out
    rc, out = playbook(fleet, 'rolling_reshape.yml', extra=extra)
    assert rc == 0, out
    report = summary(fleet)
    assert statuses(fleet) == dict(fleet['expected'], **{'compute-03': 'updated'})
    # 1. the progress line and the report say what was written, counted apart from the reshaped nodes
    # (with steps, the plan's line names what discovery found, the reshape's line follows)
    assert re.search(r'\[rolling_progress\] compute-03: (discover \([^)]*\) - )?plan \(0 consumers, 0 allocations\) - '
                     r'update \(traits added: OWNER_NOVA on %s; no POST /reshaper\) - verify \(passed\)' % child, out), out
    assert 'Roll finished: 5 nodes: 2 reshaped, 1 updated without a reshape (traits or children only), 1 skipped, ' \
        '1 deferred, 0 failed' in out
    node = [n for n in report['nodes'] if n['node'] == 'compute-03'][0]
    assert node['written'] == {'reshaper': False, 'children': [],
                               'traits': [{'provider': child, 'uuid': node['written']['traits'][0]['uuid'],
                                           'added': ['OWNER_NOVA'], 'removed': []}]}
    latest = os.path.join(fleet['out_dir'], 'reports', 'latest')
    with open(os.path.join(latest, 'report.md')) as handle:
        markdown = handle.read()
    with open(os.path.join(latest, 'report.html')) as handle:
        html = handle.read()
    section = markdown.split('## compute-03: updated without a reshape')[1].split('## compute-04')[0]
    assert '- traits added on %s: OWNER_NOVA' % child in section
    assert '<li>traits added on %s: OWNER_NOVA</li>' % child in html
    # 2. rollback advice only for the nodes with a snapshot; compute-03 says why it has none
    steps_text = report['next_steps']
    assert [s for s in steps_text if 'placement.upgrade.rollback' in s] == [
        'To undo this run on the nodes it reshaped (only if needed), roll them back: ansible-playbook -i %s '
        'placement.upgrade.rollback -e rollback_nodes=compute-01,compute-02' % fleet['inventory']]
    assert 'No rollback for compute-03: this run sent no POST /reshaper, so it took no snapshot' in ' '.join(steps_text)
    assert 'rollback_nodes=compute-03' not in markdown + html
    # 3. the microversion the run negotiated (the report itself read nothing: every node stored its record)
    assert report['context']['placement_microversion'] == '1.39'
    assert '| Placement microversion | 1.39 |' in markdown
    # 4. device_info's warnings: in the play output, and in the node's section of the report
    warning = "no nova.conf at %s: the layout falls back" % nova_conf
    assert '[WARNING]: ' + warning in out, out
    section = markdown.split('## compute-05: ')[1]
    assert '- warning: device_info: ' + warning in section
    assert 'warning: device_info: ' + warning in html.split('id="node-compute-05"')[1]
    assert [n['warnings'] for n in report['nodes'] if n['node'] == 'compute-05'][0][0].startswith(
        'device_info: ' + warning)
    # 6. the deferral's reason once: in the node's section; the tables and the lists link to it
    reason = report['deferred'][0]['reason']
    assert len(reason) > 300
    tail = reason[-80:]
    assert markdown.count(tail) == 1 and html.count(tail) == 1
    assert markdown.split('## compute-04: deferred')[1].count(tail) == 1
    assert '- [compute-04](#node-compute-04): move in flight ([whole reason](#node-compute-04))' in markdown
    # and once in the play output (the summary); the progress callback gives its head and where the whole is
    assert out.count(tail) == 1, out
    assert re.search(r'\[rolling_progress\] deferred compute-04: move in flight \(the whole reason: \S+/%s/report\.html'
                     r'#node-compute-04\)\n' % report['run_id'], out), out


def test_the_roll_passes_its_conflict_retries_to_the_modules(tmp_path):
    """rolling_reshape_conflict_retries (else the backend's conflict_retries) reaches the node's
    Placement modules: a value they refuse fails the first node with their message, naming it."""
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=2)
    before = trees(fleet)
    rc, out = playbook(fleet, 'rolling_reshape.yml', extra={'rolling_reshape_conflict_retries': -1})
    assert rc != 0, out
    assert 'conflict_retries must be 0 or more, got -1' in out, out
    backend = {'embedded_db': fleet['embedded_db'], 'conflict_retries': -3}
    rc, out = playbook(fleet, 'rolling_reshape.yml', extra={'rolling_reshape_backend': backend})
    assert rc != 0, out
    assert 'conflict_retries must be 0 or more, got -3' in out, out
    assert trees(fleet) == before


@pytest.mark.parametrize('setting', ['rolling_reshape_nova_poll_interval', 'rolling_reshape_nova_report_interval'])
def test_a_wait_between_reads_of_nova_not_above_0_stops_the_run_before_any_node(tmp_path, setting):
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=2)
    before = trees(fleet)
    rc, out = playbook(fleet, 'rolling_reshape.yml', extra={setting: 0})
    assert rc != 0, out
    assert '%s of compute-01 must be more than 0 seconds, got 0' % setting in out, out
    assert 'PLAY [Roll through the compute nodes]' not in out
    assert trees(fleet) == before


@pytest.mark.parametrize('run_id', ['../outside', 'a/b', '..'])
def test_a_run_id_that_is_no_folder_name_stops_the_run_before_any_node(tmp_path, run_id):
    """The run id names the run's folder (<report dir>/<run id>): with a / or a .. the records were
    written outside the report directory. Refused by the pre-flight play, before any node is touched."""
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=2)
    before = trees(fleet)
    rc, out = playbook(fleet, 'rolling_reshape.yml', extra={'rolling_reshape_run_id': run_id})
    said = ' '.join(out.split())
    assert rc != 0, out
    assert 'The run id "%s" cannot name the run\'s folder in' % run_id in said, out
    assert 'PLAY [Roll through the compute nodes]' not in out
    assert trees(fleet) == before
    reports = os.path.join(fleet['out_dir'], 'reports')
    assert not os.path.exists(os.path.join(fleet['out_dir'], 'outside'))
    assert not os.path.exists(reports) or os.listdir(reports) == [], os.listdir(reports)
