# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet plan and the truthful report, with the real Placement on 127.0.0.1.

* a fleet of the shape operators have (tools/simfleet.py, 12 nodes): nova's migration
  consumer (untyped, as nova 34 writes it), a resize to the same host (consumer_type
  MIGRATION), an evacuated instance on two compute trees, an unmappable owner, a guest
  holding mdevs of two physical GPUs, a shared DISK_GB pool, a node already reshaped;
* ``playbooks/plan.yml`` visits every node, writes the plan report, changes nothing and fails
  at the end; the real roll then does on every node exactly what the plan said; once the
  moves are over, a rerun of the deferred nodes reshapes them;
* Placement going down in the middle of a roll: the roll stops, and the report and the stop
  summary are still written, saying what could not be read.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import json
import os
import stat
import textwrap

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.rules import allocations as allocation_rules

import simfleet
from placement_server import PlacementServer
from test_fleet_playbook import comparable, playbook, statuses, summary, trees

pytestmark = [pytest.mark.slow, pytest.mark.real]


def _records(fleet):
    """{node: the node record the latest run stored} (reports/latest/nodes/*.json)."""
    found = {}
    for path in glob.glob(os.path.join(fleet['out_dir'], 'reports', 'latest', 'nodes', '*.json')):
        with open(path) as handle:
            record = json.load(handle)
        found[record['node']] = record
    return found


def _after(record, tree_part=()):
    """What a node record says the tree is after the run: inventories and allocations by
    provider name (uuids of the children are deterministic, generations are not compared).
    The consumers in ``tree_part`` are cut to their allocations on the tree (a reshape reads
    only the tree part of a consumer it does not write: see :func:`_partial_in`)."""
    tree = record.get('after') or {}
    names = dict((u, p['name']) for u, p in (tree.get('providers') or {}).items())
    providers = dict((p['name'], sorted((p.get('inventories') or {}).items()))
                     for p in (tree.get('providers') or {}).values())
    allocations = {}
    for consumer, body in (tree.get('allocations') or {}).items():
        allocations[consumer] = dict((names.get(rp, rp), entry.get('resources'))
                                     for rp, entry in (body.get('allocations') or {}).items()
                                     if consumer not in tree_part or rp in names)
    return providers, allocations


def _partial_in(*records):
    """The consumers any of ``records`` holds as a partial body (its tree part only)."""
    return set(c for r in records for c, body in ((r.get('after') or {}).get('allocations') or {}).items()
               if body.get('partial'))


def _by_kind(fleet):
    return dict((n['kind'], n) for n in fleet['nodes'] if n['kind'] != 'gpu')


def test_plan_then_the_roll_does_what_the_plan_said(tmp_path, rest_backend, placement_server, unique_name):
    prefix = unique_name('p') + '-'
    stop = prefix + 'compute-06'
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=12, prefix=prefix, backend=rest_backend,
                           unmapped=[stop], inventory_vars={'placement_backend': placement_server.module_auth()})
    kinds = _by_kind(fleet)
    # the shape of the fleet, as Placement holds it
    assert rest_backend.get_allocations(kinds['migrating']['migration_consumer'])['consumer_type'] == 'unknown'
    assert rest_backend.get_allocations(kinds['resizing']['migration_consumer'])['consumer_type'] == 'MIGRATION'
    two_gpus = [n for n in fleet['nodes'] if n['kind'] == 'gpu' and n['gpus'] >= 2]
    assert two_gpus, 'a guest holding mdevs of two physical GPUs'
    before = trees(fleet, rest_backend)

    # 1. the plan: every node visited, nothing changed, the run fails at the end
    rc, out = playbook(fleet, 'plan.yml', extra={'rolling_reshape_serial': '100%'})
    assert rc != 0, out
    assert 'The plan says 1 node(s) would stop a real roll: %s:' % stop in out
    assert trees(fleet, rest_backend) == before, 'the plan changed Placement'
    plan = summary(fleet)
    assert plan['mode'] == 'plan' and plan['unreached'] == []
    assert plan['nodes'][0]['node'] == stop, 'the nodes that would stop the roll come first'
    want = dict((n, 'planned' if s == 'reshaped' else s) for n, s in fleet['expected'].items())
    assert statuses(fleet) == want
    assert list(want.values()).count('deferred') == 3 and want[stop] == 'failed'
    planned = _records(fleet)
    assert sorted(planned) == sorted(n['name'] for n in fleet['nodes'])
    for kind in ('migrating', 'resizing', 'evacuating'):
        reason = planned[kinds[kind]['name']]['reason']
        assert reason.startswith('move in flight: '), reason
    assert kinds['migrating']['migration_consumer'] in planned[kinds['migrating']['name']]['reason']
    plan_created = dict((n['node'], n['created']) for n in plan['nodes'])

    # 2. the real roll (every node, the failing one does not stop the others here): each node
    #    does exactly what the plan said: same verdict, same children, same allocations after.
    #    One fork: the test server keeps Placement in SQLite, which answers concurrent writers
    #    from parallel nodes with 500 "database is locked" (a production MySQL does not).
    rc, out = playbook(fleet, 'rolling_reshape.yml', forks=1,
                       extra={'rolling_reshape_serial': '100%', 'rolling_reshape_max_fail_percentage': 100})
    assert rc != 0 and 'The roll stops at %s' % stop in out
    real = summary(fleet)
    assert real['mode'] == 'apply'
    assert statuses(fleet) == fleet['expected']
    assert dict((n['node'], n['created']) for n in real['nodes']) == plan_created
    done = _records(fleet)
    for node in fleet['nodes']:
        name = node['name']
        partial = _partial_in(done[name], planned[name])
        assert _after(done[name], partial) == _after(planned[name], partial), name
    after = trees(fleet, rest_backend)
    for node in fleet['nodes']:
        if fleet['expected'][node['name']] != 'reshaped':
            assert comparable(after[node['name']]) == comparable(before[node['name']]), node['name']

    # 3. the moves end as nova ends them; a rerun of the deferred nodes reshapes them
    pool = fleet['pool']['uuid']
    for kind in ('migrating', 'resizing'):
        rest_backend.delete_allocations(kinds[kind]['migration_consumer'])      # confirmed
    evac = kinds['evacuating']
    guest = evac['instances'][evac['evacuated_guest']]
    body = rest_backend.get_allocations(guest)
    kept = dict((rp, e) for rp, e in allocation_rules.strip_allocations(body['allocations']).items()
                if rp in (evac['uuid'], pool))
    rest_backend.put_allocations(guest, {'allocations': kept, 'project_id': body['project_id'],
                                         'user_id': body['user_id'], 'consumer_type': 'INSTANCE',
                                         'consumer_generation': body['consumer_generation']})
    deferred = sorted(n for n, s in fleet['expected'].items() if s == 'deferred')
    rc, out = playbook(fleet, 'rolling_reshape.yml', limit=','.join(deferred))
    assert rc == 0, out
    assert dict((n['node'], n['status']) for n in summary(fleet)['nodes']) == dict((n, 'reshaped') for n in deferred)


def test_placement_down_in_the_middle_of_the_roll_still_gives_the_report(tmp_path, unique_name):
    server = PlacementServer(workdir=str(tmp_path / 'placement'))
    server.start()
    try:
        from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend
        backend = RestBackend(server.adapter())
        try:
            fleet = simfleet.build(str(tmp_path / 'f'), nodes=3, backend=backend,
                                   inventory_vars={'placement_backend': server.module_auth()})
        finally:
            backend.close()
        hook = tmp_path / 'kill-placement.yml'
        hook.write_text(textwrap.dedent(u'''\
            ---
            - name: Placement goes down while compute-02 is being reshaped
              ansible.builtin.command: kill {pid}
              delegate_to: localhost
              changed_when: true
              when: inventory_hostname == 'compute-02'
            '''.format(pid=server.proc.pid)))
        rc, out = playbook(fleet, 'rolling_reshape.yml', extra={'rolling_reshape_pre_tasks': str(hook)})
    finally:
        server.stop()
    assert rc != 0
    # the stop summary is there, naming the node, the run's reshaped node and the report
    assert 'The roll stops at compute-02:' in out
    assert 'Reshaped by this run (see the report for each rollback): compute-01.' in out
    assert 'Nodes not reached, left untouched: compute-03.' in out
    report = summary(fleet)
    got = dict((n['node'], n['status']) for n in report['nodes'])
    assert got == {'compute-01': 'reshaped', 'compute-02': 'failed', 'compute-03': 'unreached'}
    # written from the records on disk, saying what could not be read from Placement
    assert report['unread'], report
    folder = os.path.realpath(os.path.join(fleet['out_dir'], 'reports', 'latest'))
    for name in ('report.md', 'report.html', 'summary.json'):
        assert stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode) == 0o600, name
    with open(os.path.join(folder, 'report.md')) as handle:
        text = handle.read()
    assert 'compute-02' in text and 'could not' in text.lower()
