# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fleet/compare.py: a rehearsal's node records against a plan's, node by node."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import LocalFileError
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import compare

ROOT = '00000000-0000-0000-0000-00000000000a'
GPU = '00000000-0000-0000-0000-00000000000b'
POOL = '00000000-0000-0000-0000-00000000000c'
G1 = '10000000-0000-0000-0000-000000000001'
G2 = '10000000-0000-0000-0000-000000000002'


def _prov(uuid, name, parent=None, inventories=None, generation=3, traits=()):
    return {'uuid': uuid, 'name': name, 'parent_provider_uuid': parent, 'generation': generation,
            'inventories': inventories or {}, 'usages': {}, 'traits': list(traits), 'aggregates': []}


def _alloc(resources_by_rp, generation=1):
    return {'allocations': dict((rp, {'generation': 7, 'resources': r}) for rp, r in resources_by_rp.items()),
            'consumer_generation': generation, 'project_id': 'p', 'user_id': 'u', 'consumer_type': 'INSTANCE'}


def _record(status, generation=3):
    before = {'providers': {ROOT: _prov(ROOT, 'cn1', inventories={'VCPU': {'total': 8}, 'VGPU': {'total': 4}},
                                        generation=generation)},
              'allocations': {G1: _alloc({ROOT: {'VCPU': 2, 'VGPU': 1}, POOL: {'DISK_GB': 20}})}}
    after = {'providers': {ROOT: _prov(ROOT, 'cn1', inventories={'VCPU': {'total': 8}}, generation=generation + 2),
                           GPU: _prov(GPU, 'cn1_pci_0000_84_00_0', parent=ROOT, inventories={'VGPU': {'total': 4}},
                                      traits=['CUSTOM_NVIDIA_222'])},
             'allocations': {G1: _alloc({ROOT: {'VCPU': 2}, GPU: {'VGPU': 1}, POOL: {'DISK_GB': 20}}, generation=2)}}
    return {'node': 'compute-01', 'provider': 'cn1', 'status': status, 'before': before, 'after': after,
            'names': {POOL: 'pool'}}


def test_a_roll_and_a_plan_doing_the_same_are_equal_whatever_the_generations():
    result = compare.compare_runs({'compute-01': _record('reshaped')}, {'compute-01': _record('planned', generation=9)})
    assert result['equal'] and result['differences'] == []
    assert compare.message(result) == ('The plan against production is the plan the rehearsal executed, on every '
                                       'node (compute-01).')


def test_a_new_consumer_in_production_is_listed_before_and_after():
    plan = _record('planned')
    for tree in ('before', 'after'):
        plan[tree]['allocations'][G2] = _alloc({ROOT: {'VCPU': 1}})
    result = compare.compare_runs({'compute-01': _record('reshaped')}, {'compute-01': plan})
    assert not result['equal']
    assert result['differences'] == [
        {'node': 'compute-01', 'what': 'before', 'item': 'consumer ' + G2, 'rehearsal': None,
         'production': {'cn1': {'VCPU': 1}}},
        {'node': 'compute-01', 'what': 'after', 'item': 'consumer ' + G2, 'rehearsal': None,
         'production': {'cn1': {'VCPU': 1}}}]
    assert compare.lines(result)[0] == ('compute-01: before consumer %s: rehearsal null, production '
                                        '{"cn1": {"VCPU": 1}}' % G2)
    assert compare.message(result).startswith('The plan against production differs from the rehearsal on 1 '
                                              'node(s): compute-01 (2 difference(s)).')


def test_an_other_move_another_child_and_another_outcome_are_listed():
    plan = _record('planned')
    plan['after']['allocations'][G1] = _alloc({ROOT: {'VCPU': 2, 'VGPU': 1}, POOL: {'DISK_GB': 20}})
    plan['after']['providers'][GPU]['inventories'] = {'VGPU': {'total': 2}}
    result = compare.compare_runs({'compute-01': _record('reshaped')}, {'compute-01': plan})
    found = sorted((d['what'], d['item']) for d in result['differences'])
    assert found == [('after', 'consumer ' + G1), ('after', 'provider cn1_pci_0000_84_00_0'),
                     ('created', 'child cn1_pci_0000_84_00_0'), ('moves', 'consumer %s VGPU' % G1)]
    moves = [d for d in result['differences'] if d['what'] == 'moves'][0]
    assert moves['rehearsal'] == {'from': [['cn1', 1]], 'to': [['cn1_pci_0000_84_00_0', 1]]}
    assert moves['production'] is None
    deferred = copy.deepcopy(_record('deferred'))
    deferred['after'] = deferred['before']
    result = compare.compare_runs({'compute-01': _record('reshaped')}, {'compute-01': deferred})
    assert result['differences'][0] == {'node': 'compute-01', 'what': 'status', 'item': 'outcome',
                                        'rehearsal': 'reshaped', 'production': 'deferred'}


def test_a_node_in_one_run_only():
    result = compare.compare_runs({'compute-01': _record('reshaped')}, {'compute-02': _record('planned')})
    assert [(d['node'], d['what'], d['rehearsal'], d['production']) for d in result['differences']] == [
        ('compute-01', 'node', 'reshaped', None), ('compute-02', 'node', None, 'planned')]


def test_load_run_reads_a_report_folder(tmp_path):
    with pytest.raises(LocalFileError) as info:
        compare.load_run(str(tmp_path), 'plan')
    assert 'is not a report folder of the rolling_reshape role' in info.value.detail
    os.mkdir(str(tmp_path / 'nodes'))
    with pytest.raises(LocalFileError) as info:
        compare.load_run(str(tmp_path))
    assert 'holds no node record' in info.value.detail
    (tmp_path / 'nodes' / 'compute-01.json').write_text(json.dumps(_record('reshaped')))
    (tmp_path / 'summary.json').write_text(u'{"mode": "apply"}')
    records, summary = compare.load_run(str(tmp_path))
    assert list(records) == ['compute-01'] and summary == {'mode': 'apply'}


def _bystander(record, partial):
    """G2, a guest the reshape does not write: on the root and the pool; read in full, or only its
    tree part (a partial body: what a reshape reads of a consumer it leaves alone)."""
    for tree in ('before', 'after'):
        if partial:
            record[tree]['allocations'][G2] = {'allocations': {ROOT: {'generation': 7, 'resources': {'VCPU': 1}}},
                                               'partial': True}
        else:
            record[tree]['allocations'][G2] = _alloc({ROOT: {'VCPU': 1}, POOL: {'DISK_GB': 10}})
    return record


def test_a_consumer_read_only_on_the_tree_is_compared_by_its_tree_part():
    # the rehearsal's roll read the bystander's tree part only; the plan (nova steps) read it in full
    rehearsal = _bystander(_record('reshaped'), partial=True)
    plan = _bystander(_record('planned'), partial=False)
    result = compare.compare_runs({'compute-01': rehearsal}, {'compute-01': plan})
    assert result['equal'] and result['differences'] == [], result
    # what it holds on the tree is still compared
    for tree in ('before', 'after'):
        plan[tree]['allocations'][G2]['allocations'][ROOT]['resources'] = {'VCPU': 2}
    result = compare.compare_runs({'compute-01': rehearsal}, {'compute-01': plan})
    assert [(d['what'], d['item']) for d in result['differences']] == [
        ('before', 'consumer %s' % G2), ('after', 'consumer %s' % G2)]
    assert result['differences'][0]['rehearsal'] == {'cn1': {'VCPU': 1}}
    assert result['differences'][0]['production'] == {'cn1': {'VCPU': 2}}
    # a consumer read in full on both sides keeps its pool part in the comparison
    full = _bystander(_record('reshaped'), partial=False)
    other = _bystander(_record('planned'), partial=False)
    for tree in ('before', 'after'):
        other[tree]['allocations'][G2]['allocations'][POOL]['resources'] = {'DISK_GB': 30}
    assert not compare.compare_runs({'compute-01': full}, {'compute-01': other})['equal']
