# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 26 section 2: the report says what happened.  A node that only got a missing trait is
counted apart and its trait change shown; rollback advice only for nodes with a snapshot (the
others say why); the microversion the run negotiated; every warning of the node's pass in its
section; a long deferral reason once, linked from the tables."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery, reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import records as stored_records
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend

import simfleet

ROOT = 'aaaaaaaa-0000-4000-8000-000000000001'
CHILD = 'aaaaaaaa-0000-4000-8000-000000000002'


def _state(child_traits):
    return {'providers': {
        ROOT: {'name': 'cn1', 'parent_provider_uuid': None, 'inventories': {'VCPU': {'total': 8}},
               'usages': {'VCPU': 0}, 'traits': ['COMPUTE_NODE']},
        CHILD: {'name': 'cn1_pci_0000_81_00_0', 'parent_provider_uuid': ROOT, 'inventories': {'VGPU': {'total': 4}},
                'usages': {'VGPU': 0}, 'traits': child_traits}},
            'allocations': {}}


def _trait_only_result():
    """What reshape_node returns for a node whose only difference was OWNER_NOVA on a child."""
    return {'status': 'reshaped', 'changed': True, 'snapshot': None, 'verified': True, 'retries': 0,
            'moved': {'consumers': 0, 'allocations': 0}, 'remarks': [], 'reshaper_applied': False,
            'traits_written': [{'provider': 'cn1_pci_0000_81_00_0', 'uuid': CHILD, 'added': ['OWNER_NOVA'],
                                'removed': []}],
            'children_created': []}


def _collected(node, result, state, **fields):
    record = dict({'node': node, 'reshape': result, 'started': 1.0, 'finished': 2.0}, **fields)
    rec, _w = report.collect_record(None, record, read=(state, {}))
    return rec


# -- 1. a trait-only node ----------------------------------------------------------------

def test_a_trait_only_node_is_counted_apart_and_shows_the_trait_it_got():
    rec = _collected('cn1', _trait_only_result(), _state(['OWNER_NOVA']))
    assert rec['written'] == {'reshaper': False, 'children': [],
                              'traits': [{'provider': 'cn1_pci_0000_81_00_0', 'uuid': CHILD,
                                          'added': ['OWNER_NOVA'], 'removed': []}]}
    data = report.build_report([rec], hosts=['cn1'])
    entry = data['nodes'][0]
    assert entry['status'] == 'updated' and entry['touched'] is True
    assert data['totals']['statuses']['updated'] == 1 and data['totals']['statuses']['reshaped'] == 0
    assert report.summary_line(data).startswith('1 node: 0 reshaped, 1 updated without a reshape (traits or '
                                                'children only), 0 skipped')
    assert 'traits added: OWNER_NOVA on cn1_pci_0000_81_00_0' in entry['outcome']
    assert 'no POST /reshaper' in entry['outcome']
    node = report.summary(data)['nodes'][0]
    assert node['status'] == 'updated' and node['label'] == 'updated without a reshape'
    assert node['written']['traits'][0]['added'] == ['OWNER_NOVA']
    markdown = report.render_markdown(data)
    html = report.render_html(data)
    assert '## cn1: updated without a reshape' in markdown
    assert '| [cn1](#node-cn1) | updated without a reshape | yes | 0 | 0 |' in markdown
    assert '- traits added on cn1_pci_0000_81_00_0: OWNER_NOVA' in markdown
    assert 'Written by this run (no POST /reshaper):' in markdown
    assert '<li>traits added on cn1_pci_0000_81_00_0: OWNER_NOVA</li>' in html
    assert 'updated without a reshape</span>' in html
    # no rollback command: there is no snapshot to roll back to, and the report says why
    assert entry['rollback'] == '' and 'rollback' not in ' '.join(s for s in data['next_steps'] if 'No rollback' not in s)
    assert data['next_steps'] == ['No rollback for cn1: this run sent no POST /reshaper, so it took no snapshot (one '
                                  'is taken just before a POST /reshaper); it wrote only traits added: OWNER_NOVA on '
                                  'cn1_pci_0000_81_00_0']
    assert 'No rollback: this run sent no POST /reshaper' in markdown
    assert '<b>No rollback:</b> this run sent no POST /reshaper' in html


def test_a_check_mode_result_written_into_an_apply_report_stays_reshaped():
    """(a plan result says nothing was written: it is not an update)"""
    result = dict(_trait_only_result(), traits_written=[], verified=None)
    rec = _collected('cn1', result, _state([]))
    assert report.build_report([rec])['nodes'][0]['status'] == 'reshaped'


@pytest.fixture(scope='module')
def old_child(tmp_path_factory):
    """A 3-node simulated fleet whose compute-03 is in the layout but for OWNER_NOVA on one child
    (a child made by an older nova)."""
    fleet = simfleet.build(str(tmp_path_factory.mktemp('trait') / 'fleet'), nodes=3)
    node = [n for n in fleet['nodes'] if n['kind'] == 'reshaped'][0]
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        root = backend.list_providers(name=node['provider'])[0]
        for prov in backend.list_providers(in_tree=root['uuid']):
            traits = backend.get_provider_traits(prov['uuid'])
            if prov['uuid'] != root['uuid'] and 'OWNER_NOVA' in traits['traits']:
                backend.set_provider_traits(prov['uuid'], traits['resource_provider_generation'],
                                            sorted(set(traits['traits']) - {'OWNER_NOVA'}))
                return fleet, node, prov
    raise AssertionError('no child with OWNER_NOVA')


def test_the_reshaper_says_it_only_put_a_trait(old_child, tmp_path):
    fleet, node, child = old_child
    devices = discovery.discover(node['sysfs_root'], domain_xml_glob=node['domain_xml_glob'],
                                 hostname=node['provider'], nova_conf=node['nova_conf'],
                                 domain_capabilities=node.get('domain_capabilities'))
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        planned = reshaper.reshape_node(backend, node['provider'], devices, check_mode=True)
        before = provider_tree_state(backend, backend.list_providers(name=node['provider'])[0]['uuid'])
        result = reshaper.reshape_node(backend, node['provider'], devices, snapshot_dir=str(tmp_path / 'snaps'))
        state = provider_tree_state(backend, backend.list_providers(name=node['provider'])[0]['uuid'])
    assert result['status'] == 'reshaped' and result['verified'] is True
    assert result['reshaper_applied'] is False and result['snapshot'] is None
    assert result['traits_written'] == [{'provider': child['name'], 'uuid': child['uuid'], 'added': ['OWNER_NOVA'],
                                         'removed': []}]
    assert result['children_created'] == []
    assert 'traits added: OWNER_NOVA on %s' % child['name'] in result['msg']
    assert 'no POST /reshaper' in result['msg'] and 'created the missing children (none)' not in result['msg']
    assert 'OWNER_NOVA' in state['providers'][child['uuid']]['traits']
    assert planned['would_write'] == {'reshaper': False, 'children': [], 'traits': result['traits_written']}
    assert planned['msg'] == ('check mode: node %s: would write only traits added: OWNER_NOVA on %s; nothing to '
                              'move, no POST /reshaper' % (node['provider'], child['name']))
    # a plan's report says it would be an update, not a reshape
    rec, _w = report.collect_record(None, {'node': node['name'], 'reshape': planned}, mode='plan', read=(before, {}))
    data = report.build_report([rec], mode='plan')
    assert data['nodes'][0]['status'] == 'updated' and data['nodes'][0]['outcome'] == 'would update without a reshape'
    assert report.summary_line(data).startswith('1 node (plan): 0 would reshape, 1 would update without a reshape '
                                                '(traits or children only), 0 already done')
    markdown = report.render_markdown(data)
    # in the plan's words (issue 40: nothing was added by a plan)
    assert 'To be written (plan) (no POST /reshaper):\n- traits to add on %s: OWNER_NOVA' % child['name'] in markdown
    # the record the role stores of it reads as an update in the report
    rec, _w = report.collect_record(None, stored_records.node_record(node['name'], node['provider'], result),
                                    read=(state, {}))
    assert report.build_report([rec])['nodes'][0]['status'] == 'updated'


# -- 2. rollback advice only with a snapshot -----------------------------------------------

def test_rollback_advice_only_for_nodes_with_a_snapshot():
    with_snap = {'node': 'cn1', 'status': 'reshaped', 'snapshot': '/snaps/cn1.json', 'touched': True}
    without = {'node': 'cn2', 'status': 'reshaped', 'touched': True}
    failed = {'node': 'cn3', 'status': 'failed', 'touched': True, 'reason': 'verification failed'}
    data = report.build_report([with_snap, without, failed], hosts=['cn1', 'cn2', 'cn3'],
                               context={'inventory': 'inv.yml'})
    entries = dict((e['node'], e) for e in data['nodes'])
    assert entries['cn1']['rollback'].endswith('-e rollback_nodes=cn1') and entries['cn1']['no_rollback'] == ''
    assert entries['cn2']['rollback'] == '' and entries['cn3']['rollback'] == ''
    assert entries['cn2']['no_rollback'] == 'its record names no snapshot, so there is nothing to roll it back to'
    assert entries['cn3']['outcome'] == ('failed after its reshape was applied (no snapshot named: nothing to roll '
                                         'it back to)')
    steps = data['next_steps']
    rollback = [s for s in steps if 'placement.upgrade.rollback' in s]
    assert rollback == ['To undo this run on the node it reshaped (only if needed), roll it back: ansible-playbook '
                        '-i inv.yml placement.upgrade.rollback -e rollback_nodes=cn1']
    assert 'No rollback for cn2: its record names no snapshot, so there is nothing to roll it back to' in steps
    assert 'No rollback for cn3: its record names no snapshot, so there is nothing to roll it back to' in steps
    markdown = report.render_markdown(data)
    assert markdown.count('rollback_nodes=cn2') == 0 and markdown.count('rollback_nodes=cn3') == 0
    assert 'No rollback: its record names no snapshot' in markdown


# -- 3. the microversion the run negotiated ------------------------------------------------

class _Backend(object):
    kind = 'rest'
    microversion = '1.36'


def test_the_microversion_the_run_negotiated_is_shown():
    rec, _w = report.collect_record(_Backend(), {'node': 'cn1', 'status': 'noop'}, read=(_state([]), {}))
    assert rec['placement_microversion'] == '1.36'
    # the report itself did not read Placement (every node had its record): the records say it
    context, _d = report.run_context({}, {'cloud': 'overcloud'}, None)
    assert context['backend'] == 'rest' and context['placement_microversion'] is None
    data = report.build_report([rec], context=context)
    assert data['context']['placement_microversion'] == '1.36'
    assert '| Placement microversion | 1.36 |' in report.render_markdown(data)
    assert '<th>Placement microversion</th><td>1.36</td>' in report.render_html(data)
    # the embedded store says what it speaks, opened or not
    context, _d = report.run_context({}, {'embedded_db': '/srv/p.db'}, None)
    assert dict(report.context_rows(context))['Placement microversion'] == '1.39'


# -- 4. every warning of the node's pass, in its section -----------------------------------

def test_discovery_warnings_and_reshape_remarks_are_in_the_node_section():
    devices = {'warnings': ['no nova.conf at /etc/nova/nova.conf: the layout falls back to the layout options']}
    result = {'status': 'noop', 'remarks': ['child cn1_x exists but its parent is cn0, not the root']}
    record = stored_records.node_record('cn1', 'cn1', result, warnings=stored_records.discovery_warnings(devices))
    rec, _w = report.collect_record(None, record, read=(_state([]), {}))
    assert rec['warnings'] == ['device_info: no nova.conf at /etc/nova/nova.conf: the layout falls back to the '
                               'layout options', 'child cn1_x exists but its parent is cn0, not the root']
    # the reshape task's warning of its retries (run_module warns it) is the node's too
    retried, _w = report.collect_record(None, dict(record, reshape=dict(result, status='reshaped', retries=2)),
                                        read=(_state([]), {}))
    assert retried['warnings'][2:] == ['2 generation conflict(s): the write was recomputed from a fresh read and '
                                       'retried (see log)']
    other = report.collect_record(None, {'node': 'cn2', 'status': 'noop'}, read=(_state([]), {}))[0]
    data = report.build_report([rec, other], hosts=['cn1', 'cn2'])
    assert report.summary(data)['nodes'][0]['warnings'] == rec['warnings']
    markdown = report.render_markdown(data)
    section = markdown.split('## cn1: ')[1].split('## cn2: ')[0]
    assert '- warning: device_info: no nova.conf at /etc/nova/nova.conf: the layout falls back' in section
    assert '- warning: child cn1_x exists but its parent is cn0, not the root' in section
    html = report.render_html(data)
    section = html.split('id="node-cn1"')[1].split('id="node-cn2"')[0]
    assert '<p class="meta">warning: device_info: no nova.conf at /etc/nova/nova.conf' in section


# -- 6. a long deferral reason, once ----------------------------------------------------------

LONG = ('move in flight: consumer 76437888-0ba0-5d7a-bf26-84dbffc38f55 holds MEMORY_MB 4096, VCPU 4, VGPU 2 on '
        'this node but no guest domain on the host is this consumer: either a migration in flight (nova\'s '
        'migration record holds the source node\'s allocations until the move is confirmed or reverted; a resize '
        'to the same host looks the same) or an orphaned allocation (its instance is gone). Tell them apart with '
        '`openstack server migration list --host cn2` and `nova-manage placement audit --verbose`. Wait for the '
        'migration or remove the orphan, then rerun the roll for this node')


def test_a_long_deferral_reason_is_printed_once_and_linked_from_the_tables():
    assert len(LONG) > 500
    deferred = {'node': 'cn2', 'status': 'deferred', 'reason': LONG}
    data = report.build_report([{'node': 'cn1', 'status': 'noop'}, deferred], hosts=['cn1', 'cn2'])
    markdown = report.render_markdown(data)
    html = report.render_html(data)
    tail = 'Wait for the migration or remove the orphan'   # (the end of the reason: only in the whole of it)
    assert markdown.count(tail) == 1 and html.count(tail) == 1
    assert markdown.count('move in flight') == 3 and html.count('move in flight') == 3   # list, table, section
    # the tables and the list give its head and link to the node's section, which holds it whole
    assert '- [cn2](#node-cn2): move in flight ([whole reason](#node-cn2))' in markdown
    assert re.search(r'^\| \[cn2\]\(#node-cn2\) \| deferred \|.*\| move in flight \(\[whole reason\]\(#node-cn2\)\) \|$',
                     markdown, flags=re.M), markdown
    assert '<a id="node-cn2"></a>\n\n## cn2: deferred' in markdown
    assert markdown.split('## cn2: deferred')[1].count(tail) == 1
    assert '<td>move in flight (<a href="#node-cn2">whole reason</a>)</td>' in html
    assert '<section class="node" id="node-cn2">' in html
    assert html.split('<section class="node" id="node-cn2">')[1].count(tail) == 1
    # a short reason is shown whole, with no link
    short = report.build_report([{'node': 'cn3', 'status': 'deferred', 'reason': 'resize not confirmed'}])
    assert '- [cn3](#node-cn3): resize not confirmed\n' in report.render_markdown(short)
    assert report.short_reason(LONG) == 'move in flight'
    assert report.short_reason('x' * 200).endswith('\u2026') and len(report.short_reason('x' * 200)) == 90


def test_a_long_stop_reason_is_shortened_in_the_next_steps():
    reason = 'cn2 is deferred and fail_on_deferred is set: ' + LONG
    data = report.build_report([{'node': 'cn2', 'status': 'failed', 'reason': reason}], hosts=['cn2'])
    step = data['next_steps'][0]
    assert step.startswith('The roll stopped at cn2 (left untouched): cn2 is deferred and fail_on_deferred is set: '
                           'move in flight (the whole reason is in its section of the report). Fix the reason')
    markdown = report.render_markdown(data)
    assert markdown.count('Wait for the migration or remove the orphan') == 1
