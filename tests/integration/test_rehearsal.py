# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rehearse the upgrade (issue 16), end to end with the real Placement on 127.0.0.1.

* export: the fleet's trees, their consumers and the sharing pool are copied from the real
  Placement into an embedded store; production is only read (no write request reaches it,
  no generation moves);
* rehearse: playbooks/rehearse.yml exports and rolls through the nodes on the copy;
* compare: a plan against production (playbooks/plan.yml) is the plan the rehearsal executed
  (playbooks/compare_plan.yml, placement.upgrade.plan_compare);
* the real roll then leaves production exactly as the rehearsal left the copy (provider uuids,
  names, parents, inventories, traits, aggregates, every consumer's allocations with their
  amounts, project, user and type; not generations);
* production changing between the rehearsal and the real run (a new guest) is listed by the
  comparison;
* recorded discovery: playbooks/record_discovery.yml writes each node's discovery on the
  controller, and a rehearsal replays it (rolling_reshape_devices_replay_dir) without the nodes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import shutil
import stat
import uuid as _uuid

import pytest
import yaml

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import Backend
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import compare, export

import simfleet
from journal_support import assert_figures_are_placements_diff, placement_states
from test_fleet_playbook import REPO, playbook, statuses, trees

pytestmark = [pytest.mark.slow, pytest.mark.real]

WRITES = ('create_', 'update_', 'delete_', 'set_', 'ensure_', 'put_', 'post_', 'reshape')


class CountingBackend(object):
    """A backend proxy counting the calls of every method that writes."""

    def __init__(self, backend):
        self._backend = backend
        self.writes = []

    def __getattr__(self, name):
        attr = getattr(self._backend, name)
        if callable(attr) and name.startswith(WRITES):
            def counted(*args, **kwargs):
                self.writes.append(name)
                return attr(*args, **kwargs)
            return counted
        return attr


def state(backend, names):
    """What an export reads of ``names`` (trees, their consumers, sharing and other providers),
    without generations: what production and the copy must agree on."""
    data = export.read_export(backend, names)
    providers = dict((u, dict((k, v) for k, v in p.items() if k != 'why')) for u, p in data['providers'].items())
    allocations = {}
    for consumer, body in data['allocations'].items():
        allocations[consumer] = {
            'allocations': dict((rp, entry['resources']) for rp, entry in body['allocations'].items()),
            'project_id': body.get('project_id'), 'user_id': body.get('user_id'),
            'consumer_type': body.get('consumer_type')}
    return {'providers': providers, 'allocations': allocations}


def requests(server, offset):
    """{method: count} of the requests Placement logged after ``offset`` (placement.requestlog)."""
    with open(server.log_path, 'rb') as handle:
        handle.seek(offset)
        text = handle.read().decode('utf-8', 'replace')
    found = {}
    for method in re.findall(r'"(GET|HEAD|POST|PUT|PATCH|DELETE) /[^"]*"', text):
        found[method] = found.get(method, 0) + 1
    return found


def log_size(server):
    """Where the server's log ends now (None for a server this session did not start: no log)."""
    return os.path.getsize(server.log_path) if server.log_path else None


def _dirs(tmp_path, name):
    base = str(tmp_path / name)
    return base, {'rolling_reshape_report_dir': os.path.join(base, 'reports'),
                  'rolling_reshape_snapshot_dir': os.path.join(base, 'snapshots')}


def test_export_rehearse_compare_then_the_real_roll_ends_as_the_rehearsal(tmp_path, placement_server, rest_backend,
                                                                          unique_name):
    prefix = unique_name('r') + '-'
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=5, prefix=prefix, backend=rest_backend,
                           inventory_vars={'placement_backend': placement_server.module_auth()})
    names = [n['provider'] for n in fleet['nodes']]
    before = trees(fleet, rest_backend)
    seen = log_size(placement_server)

    # the sharing providers: one request on the real Placement, the same as reading every provider
    aggregates = [fleet['pool']['aggregate']]
    assert [p['uuid'] for p in rest_backend.sharing_providers(aggregates)] == [fleet['pool']['uuid']]
    assert [p['uuid'] for p in Backend.sharing_providers(rest_backend, aggregates)] == [fleet['pool']['uuid']]

    # 1. the export core only reads its source: no write method called, nothing logged, no generation moved
    counting = CountingBackend(rest_backend)
    data = export.read_export(counting, names)
    copy = str(tmp_path / 'core-copy.db')
    export.write_export(data, copy)
    assert counting.writes == []
    summary = export.summarize(data)
    assert summary['compute_nodes'] == names
    assert summary['sharing_providers'] == [fleet['pool']['name']]
    with EmbeddedBackend(copy, create=False) as store:
        assert state(store, names) == state(rest_backend, names)
    # the migrating node's consumer is untyped in production (nova's migration record): so in the copy
    migrating = [n for n in fleet['nodes'] if n['kind'] == 'migrating'][0]
    with EmbeddedBackend(copy, create=False) as store:
        assert store.get_allocations(migrating['migration_consumer'])['consumer_type'] == 'unknown'

    # 2. rehearse: export + roll on the copy, through the playbook; production untouched
    rehearsal, rehearsal_dirs = _dirs(tmp_path, 'rehearsal')
    rc, out = playbook(fleet, 'rehearse.yml', extra=dict(rehearsal_dirs, rehearsal_dir=rehearsal,
                                                         rolling_reshape_serial='100%'))
    assert rc == 0, out
    assert 'Exported 5 compute node(s)' in out
    assert trees(fleet, rest_backend) == before, 'the rehearsal changed production'
    if seen is not None:
        logged = requests(placement_server, seen)
        assert logged.get('GET', 0) > 100, logged                  # the log sees every request ...
        assert set(logged) == {'GET'}, 'a write request reached production: %s' % logged   # ... and only reads
    assert statuses({'out_dir': rehearsal}) == fleet['expected']
    store_path = os.path.join(rehearsal, 'placement.db')
    with EmbeddedBackend(store_path, create=False) as store:
        rehearsed = state(store, names)
    assert rehearsed != state(rest_backend, names), 'the rehearsal reshaped nothing'

    # 3. at the moment of the real run: the plan against production equals the rehearsal
    plan, plan_dirs = _dirs(tmp_path, 'plan')
    rc, out = playbook(fleet, 'plan.yml', extra=dict(plan_dirs, rolling_reshape_serial='100%'))
    assert rc == 0, out
    assert trees(fleet, rest_backend) == before
    rc, out = playbook(fleet, 'compare_plan.yml', extra={
        'rehearsal_report': os.path.join(rehearsal, 'reports', 'latest'),
        'plan_report': os.path.join(plan, 'reports', 'latest')})
    assert rc == 0, out
    assert 'The plan against production is the plan the rehearsal executed, on every node' in out

    # 4. the real roll: production ends exactly as the rehearsal ended
    real, real_dirs = _dirs(tmp_path, 'real')
    rc, out = playbook(fleet, 'rolling_reshape.yml', forks=1, extra=dict(real_dirs, rolling_reshape_serial='100%'))
    assert rc == 0, out
    assert statuses({'out_dir': real}) == fleet['expected']
    assert state(rest_backend, names) == rehearsed


def test_production_changing_after_the_rehearsal_is_listed(tmp_path, placement_server, rest_backend, unique_name):
    prefix = unique_name('c') + '-'
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=3, prefix=prefix, backend=rest_backend,
                           inventory_vars={'placement_backend': placement_server.module_auth()})
    rehearsal, rehearsal_dirs = _dirs(tmp_path, 'rehearsal')
    rc, out = playbook(fleet, 'rehearse.yml', extra=dict(rehearsal_dirs, rehearsal_dir=rehearsal))
    assert rc == 0, out

    # a new guest lands on the first node after the rehearsal
    node = fleet['nodes'][0]
    guest = str(_uuid.uuid4())
    rest_backend.put_allocations(guest, {
        'allocations': {node['uuid']: {'resources': {'VCPU': 1, 'MEMORY_MB': 512}}},
        'project_id': simfleet.PROJECT_ID, 'user_id': simfleet.USER_ID,
        'consumer_generation': None, 'consumer_type': 'INSTANCE'})

    plan, plan_dirs = _dirs(tmp_path, 'plan')
    rc, out = playbook(fleet, 'plan.yml', extra=plan_dirs)
    assert rc == 0, out
    rc, out = playbook(fleet, 'compare_plan.yml', extra={
        'rehearsal_report': os.path.join(rehearsal, 'reports', 'latest'),
        'plan_report': os.path.join(plan, 'reports', 'latest')})
    assert rc != 0, out
    assert 'The plan against production differs from the rehearsal on 1 node(s): %s' % node['name'] in out
    assert '%s: before consumer %s: rehearsal null, production {"%s": {"MEMORY_MB": 512, "VCPU": 1}}' % (
        node['name'], guest, node['provider']) in out

    # the same, from the core: only the new guest differs, before and after the pass
    result = compare.compare_runs(compare.load_run(os.path.join(rehearsal, 'reports', 'latest'))[0],
                                  compare.load_run(os.path.join(plan, 'reports', 'latest'))[0])
    assert not result['equal']
    assert sorted((d['node'], d['what'], d['item']) for d in result['differences']) == [
        (node['name'], 'after', 'consumer %s' % guest), (node['name'], 'before', 'consumer %s' % guest)]


def refused_extra_vars(fleet, marker):
    """Every variable of the rehearsal's own settings (playbooks/rehearse.yml rehearsal_settings), with
    an extra var that would reach production or a node: production's backend or folders, a node as
    the controller, a hook, a step switch, nova-compute's handling or one of its commands."""
    production = {'embedded_db': fleet['embedded_db']}
    node = fleet['nodes'][0]['name']
    hook = os.path.join(os.path.dirname(fleet['inventory']), 'hook.yml')
    command = ['touch', marker]
    return {
        'placement_backend': production,
        'rolling_reshape_backend': production,
        'preflight_backend': production,
        'rolling_reshape_controller': node,
        'preflight_controller': node,
        'rolling_reshape_snapshot_dir': os.path.join(fleet['out_dir'], 'snapshots'),
        'rolling_reshape_report_dir': os.path.join(fleet['out_dir'], 'reports'),
        'rolling_reshape_rehearsal_store': fleet['embedded_db'],
        'rolling_reshape_pre_tasks': hook,
        'rolling_reshape_post_tasks': hook,
        'rolling_reshape_steps': True,
        'rolling_reshape_nova_service': 'always',
        'rolling_reshape_nova_steps': True,
        'rolling_reshape_nova_managed': True,
        'rolling_reshape_nova_stops': True,
        'rolling_reshape_nova_compute_service': 'nova-compute',
        'rolling_reshape_nova_stop_command': command,
        'rolling_reshape_nova_start_command': command,
        'rolling_reshape_nova_status_command': command,
        'rolling_reshape_nova_version_command': command,
        'rolling_reshape_nova_force_down': True,
    }


def test_the_rehearsal_refuses_to_roll_on_anything_but_the_copy(tmp_path):
    # production's backend given as placement_backend in the extra vars would be the roll's too; a
    # step switch, a hook or a nova-compute command given with -e would run on the production nodes
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=3)
    before = trees(fleet)
    rehearsal, rehearsal_dirs = _dirs(tmp_path, 'rehearsal')
    marker = str(tmp_path / 'a-node-was-touched')
    refused = refused_extra_vars(fleet, marker)
    with open(os.path.join(REPO, 'playbooks', 'rehearse.yml')) as handle:
        settings = yaml.safe_load(handle)[0]['vars']['rehearsal_settings']
    assert sorted(refused) == sorted(settings)      # every setting of the rehearsal is tested here
    for name, value in sorted(refused.items()):
        rc, out = playbook(fleet, 'rehearse.yml', extra=dict(rehearsal_dirs, rehearsal_dir=rehearsal, **{name: value}))
        assert rc != 0, (name, out)
        assert ('The rehearsal runs on the copy %s only, from the controller, without the operator\'s hooks and '
                'without nova-compute\'s steps; these extra vars would override that and are refused: %s.'
                % (os.path.join(rehearsal, 'placement.db'), name)) in ' '.join(out.split()), (name, out)
        assert 'Roll through the compute nodes' not in out and 'Exported' not in out
        assert not os.path.exists(rehearsal), name      # nothing exported, no folder made
        assert not os.path.exists(marker), name
    # several at once are named together
    rc, out = playbook(fleet, 'rehearse.yml', extra=dict(rehearsal_dirs, rehearsal_dir=rehearsal, rolling_reshape_steps=True,
                                                         rolling_reshape_nova_managed=True,
                                                         rolling_reshape_nova_start_command=['touch', marker]))
    assert rc != 0 and ('are refused: rolling_reshape_steps, rolling_reshape_nova_managed, '
                        'rolling_reshape_nova_start_command.') in ' '.join(out.split()), out
    assert trees(fleet) == before and not os.path.exists(marker) and not os.path.exists(rehearsal)
    # --check: a fresh copy, and a plan on it
    rc, out = playbook(fleet, 'rehearse.yml', check=True, extra=dict(rehearsal_dirs, rehearsal_dir=rehearsal))
    assert rc == 0, out
    assert statuses({'out_dir': rehearsal}) == dict((n, 'planned' if s == 'reshaped' else s)
                                                    for n, s in fleet['expected'].items())
    assert trees(fleet) == before


def test_a_rehearsal_replays_recorded_discovery_without_the_nodes(tmp_path):
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=5)
    recordings = str(tmp_path / 'devices')
    # the play refuses to start without the directory
    rc, out = playbook(fleet, 'record_discovery.yml')
    assert rc != 0, out
    assert 'Give rolling_reshape_devices_record_dir' in out
    assert not os.path.exists(recordings)

    # record (read only on the nodes; the recordings are written in check mode too), then plan with discovery
    rc, out = playbook(fleet, 'record_discovery.yml', check=True, extra={'rolling_reshape_devices_record_dir': recordings})
    assert rc == 0, out
    assert 'Recorded the discovery of 5 node(s) in %s' % recordings in out
    assert sorted(os.listdir(recordings)) == sorted('%s.json' % n['name'] for n in fleet['nodes'])
    assert stat.S_IMODE(os.stat(recordings).st_mode) == 0o700
    for node in fleet['nodes']:
        path = os.path.join(recordings, '%s.json' % node['name'])
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        with open(path) as handle:
            recorded = json.load(handle)
        assert sorted(recorded) == ['devices', 'ownership']
        assert recorded['devices']['hostname'] == node['provider']
    plan, plan_dirs = _dirs(tmp_path, 'plan')
    rc, out = playbook(fleet, 'plan.yml', extra=dict(plan_dirs, rolling_reshape_serial='100%'))
    assert rc == 0, out

    production = placement_states(fleet['embedded_db'], fleet)
    # the nodes are gone: the rehearsal reads the recordings on the controller
    hosts = os.path.join(fleet['out_dir'], 'hosts')
    shutil.move(hosts, hosts + '.gone')
    rehearsal, rehearsal_dirs = _dirs(tmp_path, 'rehearsal')
    rc, out = playbook(fleet, 'rehearse.yml', extra=dict(rehearsal_dirs, rehearsal_dir=rehearsal,
                                                         rolling_reshape_devices_replay_dir=recordings,
                                                         rolling_reshape_serial='100%'))
    assert rc == 0, out
    assert statuses({'out_dir': rehearsal}) == fleet['expected']
    # its report gives no command of the rollback or of the roll (both would act on production): it says
    # that production has nothing to roll back, naming the copy
    with open(os.path.join(rehearsal, 'reports', 'latest', 'summary.json')) as handle:
        summary = json.load(handle)
    with open(os.path.join(rehearsal, 'reports', 'latest', 'report.md')) as handle:
        text = handle.read()
    reshaped = [n for n, s in sorted(fleet['expected'].items()) if s == 'reshaped']
    assert reshaped and summary['context']['playbook'] == 'placement.upgrade.rehearse'
    # every figure of the rehearsal's report is the diff of production (unchanged) and its copy (issue 40)
    assert placement_states(fleet['embedded_db'], fleet) == production
    assert_figures_are_placements_diff(summary, production,
                                       placement_states(os.path.join(rehearsal, 'placement.db'), fleet))
    assert ('Nothing to roll back in production for %s: this run was a rehearsal on the copy %s: production was not '
            'changed' % (', '.join(reshaped), os.path.join(rehearsal, 'placement.db'))) in ' '.join(summary['next_steps'])
    for where in (' '.join(summary['next_steps']), text):
        assert 'placement.upgrade.rollback' not in where and 'placement.upgrade.rolling_reshape ' not in where
    # the plan made with the nodes' own discovery is the plan the rehearsal executed from the recordings
    rc, out = playbook(fleet, 'compare_plan.yml', extra={
        'rehearsal_report': os.path.join(rehearsal, 'reports', 'latest'),
        'plan_report': os.path.join(plan, 'reports', 'latest')})
    assert rc == 0, out
    assert 'The plan against production is the plan the rehearsal executed, on every node' in out

    # a recording of another node fails that node, naming both
    first, second = fleet['nodes'][0], fleet['nodes'][1]
    shutil.copy(os.path.join(recordings, '%s.json' % second['name']), os.path.join(recordings, '%s.json' % first['name']))
    again, again_dirs = _dirs(tmp_path, 'again')
    rc, out = playbook(fleet, 'rehearse.yml', limit=first['name'],
                       extra=dict(again_dirs, rehearsal_dir=again, rolling_reshape_devices_replay_dir=recordings))
    assert rc != 0, out
    assert 'The roll stops at %s: replay_from: %s is the recording of %s, not of %s' % (
        first['name'], os.path.join(recordings, '%s.json' % first['name']), second['provider'], first['provider']) in out
    assert statuses({'out_dir': again}) == {first['name']: 'failed'}


def test_recording_uses_the_discovery_options_and_defaults_of_the_role():
    """playbooks/record_discovery.yml passes device_info what the role's discovery task passes,
    with the role's defaults (applied in the task, not as play vars)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, 'playbooks', 'record_discovery.yml')) as handle:
        play = yaml.safe_load(handle)[0]
    with open(os.path.join(root, 'roles', 'rolling_reshape', 'tasks', 'main.yml')) as handle:
        role_tasks = yaml.safe_load(handle)[0]['block']
    with open(os.path.join(root, 'roles', 'rolling_reshape', 'defaults', 'main.yml')) as handle:
        defaults = yaml.safe_load(handle)
    assert 'vars' not in play
    recording = [t for t in play['tasks'] if 'placement.upgrade.device_info' in t][0]
    discovery = [t for t in role_tasks if 'placement.upgrade.device_info' in t][0]
    # the pre-flight's checks that ride on the role's discovery (issue 45: nova's credentials, the mdevs'
    # persistence) are off in a replay, so a recording for one does not run them
    checks = {'replay_from', 'nova_credentials', 'check_mdevs', 'mdevctl_dir', 'mdevctl', 'fail_on_transient_mdevs'}
    role_args = dict((k, v) for k, v in discovery['placement.upgrade.device_info'].items() if k not in checks)
    args = recording['placement.upgrade.device_info']
    assert sorted(args) == sorted(role_args)
    used = {}
    for value in list(args.values()) + [recording['become']]:
        for name, default in re.findall(r'(rolling_reshape_\w+) \| default\(([^)]*)\)', value):
            used[name] = default
    assert used.pop('rolling_reshape_provider_name') == 'inventory_hostname'
    assert defaults['rolling_reshape_provider_name'] == '{{ inventory_hostname }}'
    assert used and dict((name, yaml.safe_load(default)) for name, default in used.items()) == dict(
        (name, defaults[name]) for name in used)
    # every variable the role's discovery reads is read (with its default) by the recording
    role_vars = set(re.findall(r'rolling_reshape_\w+', json.dumps(role_args) + discovery['become']))
    role_vars -= {'rolling_reshape_devices_replay_dir'}
    assert role_vars == set(used) | {'rolling_reshape_provider_name'}
