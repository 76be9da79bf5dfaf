# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nova-compute's version before and after, as the rolling role records it (``nova_compute`` in the
node record), in the report's data, its summary, Markdown and HTML; a badly shaped one is refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report


def _data():
    return report.build_report([
        {'node': 'cmp-01', 'status': 'reshaped', 'nova_compute': {'before': '33.0.0', 'after': '34.0.0'}},
        {'node': 'cmp-02', 'status': 'failed', 'reason': 'x', 'nova_compute': {'before': '33.0.0', 'after': None}},
        {'node': 'cmp-03', 'status': 'noop', 'nova_compute': {}},
        {'node': 'cmp-04', 'status': 'noop'},
    ], hosts=['cmp-01', 'cmp-02', 'cmp-03', 'cmp-04'])


def test_versions_in_the_data_and_the_summary():
    data = _data()
    by_node = dict((e['node'], e['nova_compute']) for e in data['nodes'])
    assert by_node == {'cmp-01': {'before': '33.0.0', 'after': '34.0.0'},
                       'cmp-02': {'before': '33.0.0', 'after': None}, 'cmp-03': {}, 'cmp-04': {}}
    summary = dict((n['node'], n['nova_compute']) for n in report.summary(data)['nodes'])
    assert summary == by_node


def test_versions_rendered():
    data = _data()
    markdown = report.render_markdown(data)
    # (Markdown escapes '>': it renders as 'nova-compute 33.0.0 -> 34.0.0')
    assert 'nova-compute 33.0.0 -\\> 34.0.0' in markdown
    assert 'nova-compute 33.0.0 -\\> ?' in markdown
    assert markdown.count('nova-compute ') == 2
    assert 'nova-compute 33.0.0 -&gt; 34.0.0' in report.render_html(data)


def test_a_badly_shaped_version_is_a_bad_record():
    data = report.build_report([{'node': 'cmp-01', 'status': 'reshaped', 'nova_compute': {'after': 34}},
                                {'node': 'cmp-02', 'status': 'noop', 'nova_compute': ['34.0.0']}])
    unread = dict((e['node'], e['unread']) for e in data['nodes'])
    assert 'record.nova_compute.after must be' in unread['cmp-01']
    assert 'record.nova_compute must be' in unread['cmp-02']


def test_the_progress_callback_says_the_versions_once():
    from ansible_collections.placement.upgrade.plugins.callback import rolling_progress
    from test_report_progress import _Display, _Inventory, _Play, _Result, _said

    callback = rolling_progress.CallbackModule()
    callback._display = _Display()
    inventory = _Inventory(['cmp-01', 'cmp-02'])
    callback.v2_playbook_on_play_start(_Play('Roll through the compute nodes', inventory, 2))
    fact = {'node': 'cmp-01', 'status': 'reshaped', 'nova_compute': {'before': '33.0.0', 'after': '34.0.0'}}
    for _times in range(2):
        callback.v2_runner_on_ok(_Result('cmp-01', {'ansible_facts': {'rolling_reshape_result': fact}}))
    fact = {'node': 'cmp-02', 'status': 'noop', 'nova_compute': {}}
    callback.v2_runner_on_ok(_Result('cmp-02', {'ansible_facts': {'rolling_reshape_result': fact}}))
    assert [line for line in _said(callback) if 'nova-compute' in line] == ['cmp-01: nova-compute 33.0.0 -> 34.0.0']


def test_the_versions_stay_in_the_record_the_fleet_report_module_stores():
    rolled = {'node': 'cmp-01', 'status': 'failed', 'reason': 'x', 'reshape': {},
              'nova_compute': {'before': '33.0.0', 'after': '34.0.0'}}
    record, _warnings = report.collect_record(None, rolled, read_error='not read here')
    assert record['nova_compute'] == {'before': '33.0.0', 'after': '34.0.0'}
    record, _warnings = report.collect_record(None, dict(rolled, nova_compute={}), read_error='not read here')
    assert record['nova_compute'] == {}
