# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report: moves, totals, Markdown/HTML/SVG rendering, records, plan prediction."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import stat
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery, reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state

import simfleet

ROOT = '11111111-1111-4111-8111-111111111111'
GPU_A = '22222222-2222-4222-8222-222222222222'
GPU_B = '33333333-3333-4333-8333-333333333333'
POOL = '44444444-4444-4444-8444-444444444444'


def _inv(total, **kw):
    rec = {'total': total}
    rec.update(kw)
    return rec


def _trees():
    before = {
        'providers': {
            ROOT: {'name': 'compute-01', 'parent_provider_uuid': None,
                   'inventories': {'VCPU': _inv(16, allocation_ratio=4.0), 'VGPU': _inv(16)},
                   'usages': {'VCPU': 6, 'VGPU': 5}, 'traits': ['COMPUTE_NODE']},
        },
        'allocations': {
            'c1': {'allocations': {ROOT: {'resources': {'VCPU': 2, 'VGPU': 2}}, POOL: {'resources': {'DISK_GB': 20}}},
                   'consumer_generation': 1},
            'c2': {'allocations': {ROOT: {'resources': {'VCPU': 2, 'VGPU': 2}}, POOL: {'resources': {'DISK_GB': 40}}}},
            'c3': {'allocations': {ROOT: {'resources': {'VCPU': 2, 'VGPU': 1}}}},
        },
    }
    after = {
        'providers': {
            ROOT: {'name': 'compute-01', 'parent_provider_uuid': None,
                   'inventories': {'VCPU': _inv(16, allocation_ratio=4.0)}, 'usages': {'VCPU': 6}},
            GPU_A: {'name': 'compute-01_pci_0000_84_00_0', 'parent_provider_uuid': ROOT,
                    'inventories': {'VGPU': _inv(8, max_unit=8)}, 'usages': {'VGPU': 3}},
            GPU_B: {'name': 'compute-01_pci_0000_85_00_0', 'parent_provider_uuid': ROOT,
                    'inventories': {'VGPU': _inv(8, max_unit=8)}, 'usages': {'VGPU': 2}},
        },
        'allocations': {
            'c1': {'allocations': {ROOT: {'resources': {'VCPU': 2}}, GPU_A: {'resources': {'VGPU': 2}},
                                   POOL: {'resources': {'DISK_GB': 20}}}},
            'c2': {'allocations': {ROOT: {'resources': {'VCPU': 2}}, GPU_A: {'resources': {'VGPU': 1}},
                                   GPU_B: {'resources': {'VGPU': 1}}, POOL: {'resources': {'DISK_GB': 40}}}},
            'c3': {'allocations': {ROOT: {'resources': {'VCPU': 2}}, GPU_B: {'resources': {'VGPU': 1}}}},
        },
    }
    return before, after


def test_normalize_tree_fills_placement_defaults():
    before, _after = _trees()
    tree = report.normalize_tree(before)
    inv = tree['providers'][ROOT]['inventories']['VCPU']
    assert inv == {'total': 16, 'reserved': 0, 'min_unit': 1, 'max_unit': 2147483647, 'step_size': 1,
                   'allocation_ratio': 4.0}
    assert tree['allocations']['c1'] == {ROOT: {'VCPU': 2, 'VGPU': 2}, POOL: {'DISK_GB': 20}}
    assert report.normalize_tree(None) == {'providers': {}, 'allocations': {}}


def test_consumer_moves_list_only_what_moved():
    before, after = (report.normalize_tree(t) for t in _trees())
    moves = report.consumer_moves(before, after)
    assert moves == [
        {'consumer': 'c1', 'resource_class': 'VGPU', 'from': [[ROOT, 2]], 'to': [[GPU_A, 2]]},
        {'consumer': 'c2', 'resource_class': 'VGPU', 'from': [[ROOT, 2]],
         'to': sorted([[GPU_A, 1], [GPU_B, 1]])},
        {'consumer': 'c3', 'resource_class': 'VGPU', 'from': [[ROOT, 1]], 'to': [[GPU_B, 1]]},
    ]
    # a consumer that appears (or disappears) is compared with an empty set
    after['allocations']['c4'] = {GPU_A: {'VGPU': 1}}
    extra = [m for m in report.consumer_moves(before, after) if m['consumer'] == 'c4']
    assert extra == [{'consumer': 'c4', 'resource_class': 'VGPU', 'from': [], 'to': [[GPU_A, 1]]}]


def _records():
    before, after = _trees()
    return [
        {'node': 'compute-01', 'status': 'reshaped', 'before': before, 'after': after, 'started': 100.0,
         'finished': 102.5, 'names': {POOL: 'shared-storage-pool'}, 'snapshot': '/snap/compute-01.json',
         'verification': [{'check': 'consumer_totals_unchanged', 'passed': True, 'detail': 'ok'}]},
        {'node': 'compute-02', 'status': 'noop', 'before': after, 'started': 103.0, 'finished': 103.5},
        {'node': 'compute-03', 'status': 'deferred', 'reason': 'migration in flight: consumer c9',
         'before': before, 'started': 104.0, 'finished': 104.5},
        {'node': 'compute-04', 'status': 'failed', 'reason': 'cannot assign | consumer c7',
         'before': before, 'started': 105.0, 'finished': 106.0},
    ]


def test_build_report_orders_by_hosts_and_counts():
    data = report.build_report(_records(), hosts=['compute-01', 'compute-02', 'compute-03', 'compute-04',
                                                  'compute-05'], run_id='run-1')
    order = ['compute-01', 'compute-02', 'compute-03', 'compute-04', 'compute-05']
    assert [n['node'] for n in data['nodes']] == order
    assert data['nodes'][-1]['status'] == 'unreached'
    totals = data['totals']
    assert totals['statuses']['reshaped'] == 1 and totals['statuses']['noop'] == 1
    assert totals['statuses']['deferred'] == 1 and totals['statuses']['failed'] == 1
    assert totals['statuses']['unreached'] == 1
    assert totals['consumers_moved'] == 3
    assert totals['allocations_moved'] == 4          # c2's VGPU went to two GPUs
    assert totals['providers_created'] == 2
    assert totals['duration'] == pytest.approx(6.0)
    assert data['stopped'] == {'node': 'compute-04', 'reason': 'cannot assign | consumer c7'}
    assert data['deferred'] == [{'node': 'compute-03', 'reason': 'migration in flight: consumer c9'}]
    assert data['unreached'] == ['compute-05']
    assert data['names'][POOL] == 'shared-storage-pool'
    line = report.summary_line(data)
    assert line.startswith('5 nodes: 1 reshaped, 1 skipped, 1 deferred, 1 failed, 1 not reached; '
                           '4 allocations of 3 consumers moved')


def test_reported_moved_counts_win_over_computed_ones():
    recs = _records()[:1]
    recs[0]['moved'] = {'consumers': 7, 'allocations': 9}
    data = report.build_report(recs)
    assert data['nodes'][0]['moved'] == {'consumers': 7, 'allocations': 9}


def test_markdown_lists_every_node_tree_and_move():
    data = report.build_report(_records(), hosts=['compute-01', 'compute-02', 'compute-03', 'compute-04',
                                                  'compute-05'])
    text = report.render_markdown(data)
    for node in ('compute-01', 'compute-02', 'compute-03', 'compute-04', 'compute-05'):
        assert '## %s: ' % node in text
    assert '- **compute-01**: VCPU 6/64, VGPU 5/16' in text
    assert '  - **compute-01_pci_0000_84_00_0** (new): VGPU 3/8' in text
    assert '| c2 | VGPU | compute-01: 2 | compute-01_pci_0000_84_00_0: 1, compute-01_pci_0000_85_00_0: 1 |' in text
    # a pipe in a reason cannot break the table
    assert 'cannot assign \\| consumer c7' in text
    assert '**The roll stopped at compute-04: cannot assign \\| consumer c7**' in text
    assert 'Not touched: the roll did not reach this node.' in text
    assert 'Verification: 1 of 1 checks passed.' in text


def _svgs(html):
    return re.findall(r'<svg .*?</svg>', html, flags=re.S)


def test_html_is_self_contained_and_draws_valid_svg():
    data = report.build_report(_records(), hosts=['compute-01', 'compute-02', 'compute-03', 'compute-04'])
    html = report.render_html(data)
    assert html.startswith('<!DOCTYPE html>')
    assert not re.search(r'(src|href)="(https?:)?//', html), 'the page must not load anything'
    assert '<script' not in html
    svgs = _svgs(html)
    # compute-01 before and after, one picture for each of the three unchanged nodes
    assert len(svgs) == 5
    for svg in svgs:
        root = ET.fromstring(svg)
        assert root.tag == '{http://www.w3.org/2000/svg}svg'
    after = ET.fromstring(svgs[1])
    ns = {'s': 'http://www.w3.org/2000/svg'}
    names = [t.text for t in after.iterfind('.//s:text', ns) if 'compute-01' in (t.text or '')]
    assert 'compute-01_pci_0000_84_00_0' in names and 'compute-01_pci_0000_85_00_0' in names
    created = [r for r in after.iterfind('.//s:rect', ns) if 'created' in (r.get('class') or '')]
    assert len(created) == 2
    # the sharing pool is drawn as a box outside the tree
    assert 'shared-storage-pool (shared)' in svgs[1]


def test_html_escapes_names():
    before, _after = _trees()
    before['providers'][ROOT]['name'] = '<script>alert(1)</script>'
    data = report.build_report([{'node': 'x&<y>', 'status': 'noop', 'before': before}])
    html = report.render_html(data)
    assert '<script>' not in html
    assert '&lt;script&gt;' in html and 'x&amp;&lt;y&gt;' in html
    for svg in _svgs(html):
        ET.fromstring(svg)


def test_usage_bar_marks_overcommit():
    tree = report.normalize_tree({'providers': {ROOT: {'name': 'n', 'inventories': {'VGPU': _inv(2)},
                                                       'usages': {'VGPU': 3}}}, 'allocations': {}})
    svg = report.tree_svg(tree)
    assert '#cf222e' in svg and '3/2' in svg


def test_write_report_files(tmp_path):
    data = report.build_report(_records())
    paths = report.write_report(str(tmp_path / 'run'), data)
    assert sorted(os.listdir(str(tmp_path / 'run'))) == ['report.html', 'report.md', 'summary.json']
    with open(paths['summary']) as handle:
        summary = json.load(handle)
    assert summary['totals']['nodes'] == 4
    assert [n['status'] for n in summary['nodes']] == ['reshaped', 'noop', 'deferred', 'failed']
    assert summary['nodes'][0]['created'] == ['compute-01_pci_0000_84_00_0', 'compute-01_pci_0000_85_00_0']
    for path in paths.values():
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(str(tmp_path / 'run')).st_mode) == 0o700


def test_records_round_trip_and_bad_files(tmp_path):
    dest = str(tmp_path)
    path = report.save_record(dest, {'node': 'compute/01', 'status': 'noop'})
    assert os.path.basename(path) == 'compute%2F01.json'
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with open(os.path.join(dest, 'nodes', 'broken.json'), 'w') as handle:
        handle.write('{not json')
    records, problems = report.load_records(dest)
    assert records == [{'node': 'compute/01', 'status': 'noop'}]
    assert len(problems) == 1 and 'broken.json' in problems[0]


# -- with the embedded store and the real planner -----------------------------------------

@pytest.fixture
def fleet(tmp_path):
    return simfleet.build(str(tmp_path / 'fleet'), nodes=2)


def _devices(node):
    return discovery.discover(node['sysfs_root'], domain_xml_glob=node['domain_xml_glob'],
                              hostname=node['provider'], nova_conf=node['nova_conf'],
                              domain_capabilities=node.get('domain_capabilities'))


def _comparable(tree):
    tree = report.normalize_tree(tree)
    return {
        'providers': dict((p['name'], (p['inventories'], dict((k, v) for k, v in p['usages'].items()),
                                       tree['providers'].get(p['parent'], {}).get('name')))
                          for p in tree['providers'].values()),
        'allocations': tree['allocations'],
    }


def test_apply_plan_predicts_the_real_reshape(fleet, tmp_path):
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend

    node = fleet['nodes'][0]
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        devices = _devices(node)
        plan = reshaper.reshape_node(backend, node['provider'], devices, check_mode=True)
        state = provider_tree_state(backend, node['uuid'])
        predicted = report.apply_plan(state, plan['plan'])
        done = reshaper.reshape_node(backend, node['provider'], devices, snapshot_dir=str(tmp_path / 'snap'))
        assert done['status'] == 'reshaped' and done['verified']
        real = provider_tree_state(backend, node['uuid'])
    assert _comparable(predicted) == _comparable(real)


def _partial_where(full, read):
    """``full`` (a full tree read) with the consumers ``read`` holds as PARTIAL bodies (the reshape
    read only their allocations on the tree) cut to their tree part, as the reshape read them."""
    out = {'providers': full['providers'], 'allocations': dict(full['allocations'])}
    for consumer, body in (read.get('allocations') or {}).items():
        if body.get('partial'):
            out['allocations'][consumer] = {
                'allocations': dict((rp, e) for rp, e in full['allocations'][consumer]['allocations'].items()
                                    if rp in full['providers']),
                'partial': True}
    return out


def test_collect_record_reads_trees(fleet, tmp_path):
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend

    first, second = fleet['nodes']
    with EmbeddedBackend(fleet['embedded_db']) as backend:
        before = provider_tree_state(backend, first['uuid'])
        planned = reshaper.reshape_node(backend, second['provider'], _devices(second), check_mode=True)
        done = reshaper.reshape_node(backend, first['provider'], _devices(first),
                                     snapshot_dir=str(tmp_path / 'snap'))
        rec, warnings = report.collect_record(backend, {'node': first['name'], 'reshape': done,
                                                        'started': 1.0, 'finished': 2.0})
        assert warnings == []
        assert rec['status'] == 'reshaped' and rec['snapshot'] == done['snapshot']
        # the consumers the reshape moved are saved in full, the others as their tree part
        assert any(not body.get('partial') for body in rec['before']['allocations'].values())
        assert _comparable(rec['before']) == _comparable(_partial_where(before, rec['before']))
        assert _comparable(rec['after']) == _comparable(_partial_where(provider_tree_state(backend, first['uuid']),
                                                                       rec['after']))
        assert rec['names'][fleet['pool']['uuid']] == fleet['pool']['name']

        plan_rec, _w = report.collect_record(backend, {'node': second['name'], 'reshape': planned}, mode='plan')
        assert plan_rec['status'] == 'planned'
        assert len(plan_rec['after']['providers']) > len(plan_rec['before']['providers'])

        failed, _w = report.collect_record(backend, {'node': 'compute-99', 'status': 'failed', 'reason': 'boom'})
        assert failed['status'] == 'failed' and failed['before'] is None
        assert _w == ['compute-99: root provider compute-99 not found in Placement']

    data = report.build_report([rec, plan_rec])
    assert data['nodes'][0]['moved']['allocations'] == done['moved']['allocations']
    assert data['totals']['allocations_moved'] == done['moved']['allocations'] + planned['moved']['allocations']
    assert data['nodes'][1]['moved']['allocations'] == planned['moved']['allocations']
