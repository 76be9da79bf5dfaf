# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report says what happened: run ids in snapshots, touched nodes, unread trees, context,
next steps, plan labels, one write path (atomic, 0600), badly shaped records."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import os
import re
import stat

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery, reshaper, snapshot
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import (
    Forbidden,
    ServiceUnavailable,
)
from ansible_collections.placement.upgrade.plugins.module_utils._placement.version import COLLECTION_VERSION

import simfleet


# -- snapshots carry the run id ------------------------------------------------------------

ROOT = {'uuid': '11111111-1111-4111-8111-111111111111', 'name': 'compute-01'}
STATE = {'providers': {ROOT['uuid']: {'name': 'compute-01', 'parent_provider_uuid': None,
                                      'inventories': {'VGPU': {'total': 4}}, 'usages': {'VGPU': 1}}},
         'allocations': {}}


def _at(second):
    return datetime.datetime(2026, 1, 1, 12, 0, second, tzinfo=datetime.timezone.utc)


def test_snapshot_stores_run_id_and_old_snapshots_read_as_no_run(tmp_path):
    folder = str(tmp_path / 'snaps')
    path = snapshot.write_snapshot(folder, ROOT, STATE, run_id='run-7', now=_at(1))
    doc = snapshot.load_snapshot(path)
    assert doc['run_id'] == 'run-7' and snapshot.snapshot_run_id(doc) == 'run-7'
    assert doc['format'] == snapshot.FORMAT
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    # a snapshot written before run ids existed still loads, and belongs to no run (it had no
    # digest either: digests came later)
    del doc['run_id']
    del doc['digest']
    old = os.path.join(folder, 'compute-01.20250101T000000.000000Z.json')
    with open(old, 'w') as handle:
        json.dump(doc, handle)
    assert snapshot.snapshot_run_id(snapshot.load_snapshot(old)) == ''
    assert snapshot.write_snapshot(folder, ROOT, STATE, now=_at(2)) and \
        snapshot.load_snapshot(snapshot.latest_path(folder, 'compute-01'))['run_id'] == ''


def test_run_snapshots_finds_only_this_run_of_this_root(tmp_path):
    folder = str(tmp_path / 'snaps')
    first = snapshot.write_snapshot(folder, ROOT, STATE, run_id='run-7', now=_at(3))
    second = snapshot.write_snapshot(folder, ROOT, STATE, run_id='run-7', now=_at(5))
    snapshot.write_snapshot(folder, ROOT, STATE, run_id='run-6', now=_at(4))
    # a root whose name starts with this one's, and the same run
    snapshot.write_snapshot(folder, {'uuid': ROOT['uuid'], 'name': 'compute-01.example'}, STATE,
                            run_id='run-7', now=_at(6))
    with open(os.path.join(folder, 'compute-01.20260101T120007.000000Z.json'), 'w') as handle:
        handle.write('{broken')
    found = snapshot.run_snapshots(folder, 'compute-01', 'run-7')
    assert [path for path, _doc in found] == [first, second]
    assert all(doc['root']['name'] == 'compute-01' for _path, doc in found)
    assert snapshot.run_snapshots(folder, 'compute-01', '') == []
    assert snapshot.run_snapshots(folder, 'compute-02', 'run-7') == []
    assert snapshot.run_snapshots(str(tmp_path / 'none'), 'compute-01', 'run-7') == []


def test_atomic_write_modes_and_no_leftovers(tmp_path):
    path = str(tmp_path / 'f.txt')
    snapshot.atomic_write(path, 'one')
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    snapshot.atomic_write(path, 'two', mode=0o640)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    with open(path) as handle:
        assert handle.read() == 'two'
    assert os.listdir(str(tmp_path)) == ['f.txt']


# -- one small fleet, reshaped for real ---------------------------------------------------

def _devices(node):
    return discovery.discover(node['sysfs_root'], domain_xml_glob=node['domain_xml_glob'],
                              hostname=node['provider'], nova_conf=node['nova_conf'],
                              domain_capabilities=node.get('domain_capabilities'))


@pytest.fixture
def fleet(tmp_path):
    built = simfleet.build(str(tmp_path / 'fleet'), nodes=3)
    built['snap'] = str(tmp_path / 'snaps')
    return built


def _node(fleet, name):
    return next(n for n in fleet['nodes'] if n['name'] == name)


def _reshape(backend, fleet, name, run_id='run-7', check_mode=False):
    node = _node(fleet, name)
    return reshaper.reshape_node(backend, node['provider'], _devices(node), check_mode=check_mode,
                                 snapshot_dir=None if check_mode else fleet['snap'], run_id=run_id)


def _names(tree):
    return sorted(p['name'] for p in report.normalize_tree(tree)['providers'].values())


def test_reshape_node_writes_the_run_id_into_its_snapshot(fleet):
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        done = _reshape(backend, fleet, 'compute-01', run_id='20260101T120000Z')
    assert done['status'] == 'reshaped'
    assert snapshot.load_snapshot(done['snapshot'])['run_id'] == '20260101T120000Z'
    assert snapshot.run_snapshots(fleet['snap'], 'compute-01', '20260101T120000Z')[0][0] == done['snapshot']


def test_failed_after_the_reshape_is_touched(fleet):
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        original = provider_tree_state(backend, _node(fleet, 'compute-01')['uuid'])
        done = _reshape(backend, fleet, 'compute-01')
        # a post task failed after the reshape: the role records failed, with the reshape's result
        rec, warnings = report.collect_record(backend, {
            'node': 'compute-01', 'status': 'failed', 'reason': 'nova-compute did not restart (task: Restart)',
            'reshape': done}, snapshot_dir=fleet['snap'], run_id='run-7')
        # and a node that failed before anything was applied (the reshape result is a failure without snapshot)
        plain, _w = report.collect_record(backend, {
            'node': 'compute-03', 'status': 'failed', 'reason': 'discovery failed',
            'reshape': {'failed': True, 'msg': 'boom'}}, snapshot_dir=fleet['snap'], run_id='run-7')
    assert warnings == []
    assert rec['touched'] is True and rec['status'] == 'failed' and rec['snapshot'] == done['snapshot']
    assert rec['moved'] == done['moved']
    assert _names(rec['before']) == _names(original) == ['compute-01']
    assert len(_names(rec['after'])) > 1                  # the children the reshape made
    assert plain['touched'] is False and plain['snapshot'] == ''
    data = report.build_report([rec, plain], hosts=['compute-01', 'compute-02', 'compute-03'], run_id='run-7')
    first, third = data['nodes'][0], data['nodes'][2]
    assert first['touched'] and first['changed_tree']
    assert first['moved'] == {'consumers': done['moved']['consumers'], 'allocations': done['moved']['allocations']}
    rollback = 'ansible-playbook -i INVENTORY placement.upgrade.rollback -e rollback_nodes=compute-01'
    assert first['outcome'] == 'failed after its reshape was applied (rollback: %s)' % rollback
    assert third['outcome'] == 'failed, left untouched' and not third['touched']
    assert data['touched'] == ['compute-01']
    assert data['failed'] == [
        {'node': 'compute-01', 'reason': 'nova-compute did not restart (task: Restart)', 'touched': True},
        {'node': 'compute-03', 'reason': 'discovery failed', 'touched': False}]
    assert data['totals']['allocations_moved'] == done['moved']['allocations']
    text = report.render_markdown(data)
    assert 'Outcome: failed after its reshape was applied (rollback: ' in text
    assert 'Outcome: failed, left untouched' in text
    assert '**The roll stopped at compute-01 (failed after its reshape was applied): ' in text
    assert 'Provider tree before (from its snapshot):' in text
    assert 'Provider tree after (read from Placement now):' in text
    assert 'Roll back: `%s`' % rollback in text
    assert report.summary_line(data).startswith('3 nodes: 0 reshaped, 0 skipped, 0 deferred, '
                                                '2 failed (1 after its reshape was applied), 1 not reached;')
    html = report.render_html(data)
    assert 'failed after its reshape was applied (rollback: ' in html and 'failed, left untouched' in html
    nodes = dict((n['node'], n) for n in report.summary(data)['nodes'])
    assert nodes['compute-01']['touched'] is True and nodes['compute-01']['rollback'] == rollback
    assert nodes['compute-03']['touched'] is False and nodes['compute-03']['rollback'] == ''


def test_failed_result_without_snapshot_is_checked_against_the_run_snapshot(fleet):
    """The reshape module failed without returning its result (e.g. an error after POST /reshaper):
    a snapshot of this run exists, and Placement shows the tree changed."""
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        done = _reshape(backend, fleet, 'compute-01')
        failed = {'node': 'compute-01', 'status': 'failed', 'reason': 'timeout (task: Reshape)',
                  'reshape': {'failed': True, 'msg': 'timeout'}}
        rec, warnings = report.collect_record(backend, failed, snapshot_dir=fleet['snap'], run_id='run-7')
        # the same without this run's snapshot (another run id): nothing says it was touched
        other, _w = report.collect_record(backend, failed, snapshot_dir=fleet['snap'], run_id='run-8')
    assert rec['touched'] is True and rec['snapshot'] == done['snapshot']
    assert len(warnings) == 1 and 'counted as changed by this run' in warnings[0]
    entry = report.build_report([rec])['nodes'][0]
    # no result to take the counts from: they are counted on the trees (snapshot -> Placement)
    assert entry['touched'] and entry['moves'] and entry['moved']['consumers'] == done['moved']['consumers']
    assert other['touched'] is False and other['snapshot'] == ''


def test_failed_before_the_reshape_with_an_unchanged_tree_is_untouched(fleet):
    """A snapshot of this run, but the tree is the snapshot's: the reshape did not go through."""
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        node = _node(fleet, 'compute-01')
        state = provider_tree_state(backend, node['uuid'])
        snapshot.write_snapshot(fleet['snap'], {'uuid': node['uuid'], 'name': node['provider']}, state,
                                run_id='run-7')
        rec, warnings = report.collect_record(backend, {'node': 'compute-01', 'status': 'failed',
                                                        'reason': 'POST /reshaper refused'},
                                              snapshot_dir=fleet['snap'], run_id='run-7')
    assert rec['touched'] is False and warnings == []
    assert report.build_report([rec])['nodes'][0]['outcome'] == 'failed, left untouched'


def test_derived_record_of_a_node_the_roll_did_not_record(fleet):
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        original = provider_tree_state(backend, _node(fleet, 'compute-02')['uuid'])
        done = _reshape(backend, fleet, 'compute-02')
        found = snapshot.run_snapshots(fleet['snap'], 'compute-02', 'run-7')
        rec, warnings = report.derive_record(backend, 'compute-02', 'compute-02', found)
        unread, _w = report.derive_record(None, 'compute-02', 'compute-02', found,
                                          read_error='cannot use Placement: down')
    assert rec['status'] == 'reshaped' and rec['touched'] is True and rec['derived'] is True
    assert rec['snapshot'] == done['snapshot']
    assert 'record was not written by the roll' in rec['reason'] and 'derived from its snapshot' in rec['reason']
    assert len(warnings) == 1 and warnings[0].startswith('compute-02: its record was not written')
    assert _names(rec['before']) == _names(original)
    assert _names(rec['after']) == _names(provider_tree_state(EmbeddedBackend(fleet['embedded_db']),
                                                              _node(fleet, 'compute-02')['uuid']))
    assert rec['started'] is not None
    entry = report.build_report([rec])['nodes'][0]
    assert entry['moves'] and entry['moved']['consumers'] == done['moved']['consumers']
    assert entry['outcome'].startswith('reshaped (derived from its snapshot and Placement')
    # Placement down: the tree before from the snapshot, the moves the snapshot's plan names
    assert unread['after'] is None and unread['unread'] == 'cannot use Placement: down'
    assert 'which could not be read' in unread['reason']
    entry = report.build_report([unread])['nodes'][0]
    assert entry['touched'] and not entry['after_known']
    assert entry['moved']['allocations'] == done['moved']['allocations']
    text = report.render_markdown(report.build_report([unread]))
    assert 'Provider tree after: not read from Placement.' in text
    assert '## Trees not read from Placement' in text and '- compute-02: cannot use Placement: down' in text


class _Flaky(object):
    """A backend whose provider look-up by name fails for some names."""

    def __init__(self, inner, failing, error):
        self._inner = inner
        self._failing = failing
        self._error = error

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def list_providers(self, **kwargs):
        if kwargs.get('name') in self._failing:
            raise self._error
        return self._inner.list_providers(**kwargs)


def test_one_unreadable_tree_marks_that_node_only(fleet):
    with EmbeddedBackend(fleet['embedded_db']) as inner:
        backend = _Flaky(inner, {'compute-02'}, Forbidden('policy does not allow placement:resource_providers:list'))
        ok, ok_w = report.collect_record(backend, {'node': 'compute-03', 'status': 'noop'})
        bad, bad_w = report.collect_record(backend, {'node': 'compute-02', 'status': 'deferred', 'reason': 'x'})
        down = _Flaky(inner, {'compute-02'}, ServiceUnavailable('Placement could not be reached'))
        with pytest.raises(ServiceUnavailable):
            report.collect_record(down, {'node': 'compute-02', 'status': 'noop'})
    assert ok_w == [] and 'unread' not in ok and ok['before'] is not None
    assert bad['before'] is None and bad['unread'].startswith('cannot read the provider tree from Placement: 403')
    assert bad_w == ['compute-02: %s' % bad['unread']]
    data = report.build_report([ok, bad])
    assert data['unread'] == [{'node': 'compute-02', 'reason': bad['unread']}]
    assert report.summary(data)['unread'] == data['unread']
    assert report.summary_line(data).endswith('; 1 node tree not read from Placement')
    html = report.render_html(data)
    assert 'Trees not read from Placement' in html and 'Not read from Placement:' in html


# -- badly shaped records -----------------------------------------------------------------

def test_badly_shaped_records_do_not_sink_the_report(tmp_path):
    records = [
        {'node': 'good', 'status': 'noop'},
        {'node': 'bad', 'status': 'reshaped', 'before': {'providers': 'not a mapping'}, 'retries': 'many'},
        {'node': 'worse', 'status': 42, 'moved': {'consumers': 'x'}, 'before': {'providers': {'u': 7}}},
        ['not', 'a', 'record'],
        {'status': 'noop'},
    ]
    data = report.build_report(records, hosts=['good', 'bad', 'worse'])
    assert [e['node'] for e in data['nodes']] == ['good', 'bad', 'worse']
    bad = data['nodes'][1]
    assert bad['status'] == 'reshaped' and bad['touched'] is True
    assert bad['unread'].startswith('its node record is badly shaped')
    assert data['nodes'][2]['status'] == 'failed'
    problems = data['problems']
    assert any(p.startswith('the record of bad is badly shaped') for p in problems)
    assert any(p.startswith('the record of worse is badly shaped') for p in problems)
    assert 'a node record is not a mapping (list); it was left out' in problems
    assert 'a node record names no node; it was left out' in problems
    paths = report.write_report(str(tmp_path / 'out'), data)
    with open(paths['summary']) as handle:
        assert [n['node'] for n in json.load(handle)['nodes']] == ['good', 'bad', 'worse']


def test_load_records_names_files_that_are_not_records(tmp_path):
    dest = str(tmp_path)
    report.save_record(dest, {'node': 'a', 'status': 'noop'})
    for name, text in (('list.json', '[1, 2]'), ('nameless.json', '{"status": "noop"}')):
        with open(os.path.join(dest, 'nodes', name), 'w') as handle:
            handle.write(text)
    records, problems = report.load_records(dest)
    assert records == [{'node': 'a', 'status': 'noop'}]
    assert len(problems) == 2 and all('not a node record' in p for p in problems)
    assert stat.S_IMODE(os.stat(os.path.join(dest, 'nodes')).st_mode) == 0o700


# -- context, next steps, plan mode -------------------------------------------------------

def test_run_context_keeps_named_keys_and_never_secrets():
    given = {'awx_job_id': 4711, 'awx_job_template': 'reshape fleet', 'playbook': 'site.yml',
             'check_mode': False, 'inventory': 'inv/prod.yml', 'password': 'hunter2',
             'auth': {'token': 'tok'}, 'backend': 'forged', 'playbook_vars': {'x': 1}}
    ctx, dropped = report.run_context(given, {'cloud': 'overcloud', 'auth': {'token': 'tok',
                                              'endpoint': 'https://admin:pw@placement.example:8778/p?t=tok'}})
    assert dropped == ['auth', 'backend', 'password', 'playbook_vars']
    assert ctx == {'awx_job_id': 4711, 'awx_job_template': 'reshape fleet', 'playbook': 'site.yml',
                   'check_mode': False, 'inventory': 'inv/prod.yml', 'backend': 'rest', 'cloud': 'overcloud',
                   'embedded_db': None, 'endpoint': 'https://placement.example:8778/p',
                   'placement_microversion': None, 'collection_version': COLLECTION_VERSION}
    assert 'pw' not in json.dumps(ctx) and 'tok' not in json.dumps(ctx)
    # a cloud given as a dict of connection arguments is not shown at all
    ctx, _d = report.run_context({}, {'cloud': {'auth': {'password': 'pw'}}})
    assert ctx['backend'] == 'rest' and ctx['cloud'] is None and 'pw' not in json.dumps(ctx)
    # what the role gives
    role, dropped = report.run_context({'awx_job_id': '', 'awx_job_template': '', 'inventory': ['a.yml', 'b.yml'],
                                        'limit': 'compute-0*', 'plan': True}, {'embedded_db': '/srv/p.db'})
    assert dropped == []
    rows = dict(report.context_rows(role))
    assert 'AWX job' not in rows and rows['inventory'] == 'a.yml, b.yml' and rows['limit'] == 'compute-0*'
    assert rows['plan only'] == 'yes'
    rows = dict(report.context_rows(dict(given, **report.run_context(given, {'embedded_db': '/srv/p.db'})[0])))
    assert rows['AWX job'] == '4711 (template reshape fleet)'
    assert rows['Placement'] == 'embedded database /srv/p.db'
    # the embedded store speaks one microversion, opened or not
    assert rows['Placement microversion'] == '1.39'
    assert rows['collection'] == 'placement.upgrade %s' % COLLECTION_VERSION
    assert rows['check mode'] == 'no'


def test_context_with_an_open_backend(fleet):
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        ctx, _d = report.run_context({'playbook': 'p.yml'}, {'embedded_db': fleet['embedded_db']}, backend)
    assert ctx['backend'] == 'embedded' and ctx['embedded_db'] == os.path.abspath(fleet['embedded_db'])
    assert ctx['placement_microversion'] == backend.microversion
    data = report.build_report([{'node': 'a', 'status': 'noop'}], context=ctx)
    text = report.render_markdown(data)
    assert '| Placement microversion | %s |' % backend.microversion in text
    assert '| playbook | p.yml |' in text
    assert report.summary(data)['context'] == ctx
    assert 'placement.upgrade %s' % COLLECTION_VERSION in report.render_html(data)


def _mixed_records():
    return [
        {'node': 'n1', 'status': 'reshaped', 'snapshot': '/s/n1.json'},
        {'node': 'n2', 'status': 'deferred', 'reason': 'migration in flight'},
        {'node': 'n3', 'status': 'noop'},
        {'node': 'n4', 'status': 'deferred', 'reason': 'resize not confirmed'},
        {'node': 'n5', 'status': 'failed', 'reason': 'strict ownership'},
    ]


def test_next_steps_name_the_commands():
    hosts = ['n1', 'n2', 'n3', 'n4', 'n5', 'n6']
    data = report.build_report(_mixed_records(), hosts=hosts, context={'inventory': 'inv/my hosts.yml'})
    inv = "'inv/my hosts.yml'"
    assert data['next_steps'] == [
        'The roll stopped at n5 (left untouched): strict ownership. Fix the reason, then rerun with --limit n5: '
        'ansible-playbook -i %s placement.upgrade.rolling_reshape --limit n5' % inv,
        'Rerun the deferred nodes after their reasons are cleared: '
        'ansible-playbook -i %s placement.upgrade.rolling_reshape --limit n2,n4' % inv,
        'The roll did not reach n6; once the cause of the stop is fixed, run it: '
        'ansible-playbook -i %s placement.upgrade.rolling_reshape --limit n6' % inv,
        'To undo this run on the node it reshaped (only if needed), roll it back: '
        'ansible-playbook -i %s placement.upgrade.rollback -e rollback_nodes=n1' % inv,
    ]
    assert report.summary(data)['next_steps'] == data['next_steps']
    text = report.render_markdown(data)
    assert '## Next steps' in text
    assert ('- Rerun the deferred nodes after their reasons are cleared: '
            '`ansible-playbook -i %s placement.upgrade.rolling_reshape --limit n2,n4`' % inv) in text
    html = report.render_html(data)
    assert ('<code>ansible-playbook -i %s placement.upgrade.rollback -e rollback_nodes=n1</code>'
            % report._h(inv)) in html
    # several inventory sources (ansible_inventory_sources): one -i each
    several = report.build_report(_mixed_records(), context={'inventory': ['inv/a.yml', 'inv/b c.yml']})
    assert several['next_steps'][-1] == ('To undo this run on the node it reshaped (only if needed), roll it back: '
                                         "ansible-playbook -i inv/a.yml -i 'inv/b c.yml' placement.upgrade.rollback "
                                         '-e rollback_nodes=n1')
    # without an inventory in the context, the placeholder
    plain = report.build_report(_mixed_records())
    assert plain['next_steps'][-1].endswith('ansible-playbook -i INVENTORY placement.upgrade.rollback '
                                            '-e rollback_nodes=n1')
    assert report.build_report([{'node': 'a', 'status': 'noop'}])['next_steps'] == []


def test_plan_mode_lists_the_nodes_that_would_stop_first():
    records = [dict(r, status='planned') if r['status'] == 'reshaped' else r for r in _mixed_records()]
    data = report.build_report(records, hosts=['n1', 'n2', 'n3', 'n4', 'n5'], mode='plan')
    assert [e['node'] for e in data['nodes']] == ['n5', 'n1', 'n2', 'n3', 'n4']
    assert data['would_stop'] == [{'node': 'n5', 'reason': 'strict ownership'}]
    assert data['stopped'] is None and data['touched'] == []
    assert report.summary_line(data) == ('5 nodes (plan): 1 would reshape, 1 already done, 2 deferred, '
                                         '1 would stop the roll; 0 allocations of 0 consumers to move')
    assert data['next_steps'][0] == ('n5 would stop a real roll: strict ownership. Fix the reason, then rerun '
                                     'with --limit n5: ansible-playbook -i INVENTORY '
                                     'placement.upgrade.rolling_reshape --limit n5')
    assert not any('rollback' in step for step in data['next_steps'])
    text = report.render_markdown(data)
    assert '## n5: would stop the roll' in text
    assert '| [n5](#node-n5) | would stop the roll | no |' in text
    assert '**1 node would stop a real roll: [n5](#node-n5) (strict ownership)**' in text
    assert text.index('## n5: would stop the roll') < text.index('## n1: would reshape')
    assert 'The roll stopped at' not in text
    html = report.render_html(data)
    assert '>would stop the roll</span>' in html and '1 node would stop a real roll' in html
    assert report.summary(data)['nodes'][0]['label'] == 'would stop the roll'
    # an apply run has no would_stop, and stops at the failed node
    applied = report.build_report(_mixed_records(), hosts=['n1', 'n2', 'n3', 'n4', 'n5'])
    assert applied['would_stop'] == [] and applied['stopped'] == {'node': 'n5', 'reason': 'strict ownership'}
    assert [e['node'] for e in applied['nodes']] == ['n1', 'n2', 'n3', 'n4', 'n5']


def test_report_files_are_private(tmp_path):
    dest = str(tmp_path / 'reports' / 'run')
    paths = report.write_report(dest, report.build_report(_mixed_records()))
    record = report.save_record(dest, {'node': 'n1', 'status': 'noop'})
    for path in list(paths.values()) + [record]:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path
    for folder in (dest, os.path.join(dest, 'nodes')):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700, folder
    assert not [n for n in os.listdir(dest) if re.match(r'^\.', n)], 'no temporary file left'


def test_check_run_refuses_mixed_runs():
    assert report.check_run([{'node': 'a', 'run_id': 'r1'}], 'r1') == 'r1'
    assert report.check_run([{'node': 'a', 'run_id': 'r1'}], '') == 'r1'
    assert report.check_run([], '') == ''
    with pytest.raises(report.ReportError) as info:
        report.check_run([{'node': 'a', 'run_id': 'r1'}, {'node': 'b'}], 'r2', '/srv/rep/r2')
    assert info.value.detail.startswith('/srv/rep/r2 already holds node records of another run '
                                        '(run (none): b; run r1: a), not of run r2')
    with pytest.raises(report.ReportError) as info:
        report.check_run([{'node': 'a', 'run_id': 'r1'}, {'node': 'b', 'run_id': 'r3'}], '')
    assert 'records of several runs (r1, r3)' in info.value.detail
