# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wrongly shaped input gets a message naming the field, never "Unexpected error" (issue 12, item 6)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import layout, snapshot
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report
from ansible_collections.placement.upgrade.plugins.modules import fleet_report, reshape

from module_runner import run_module_main


def _dump(backend, root):
    return json.dumps(backend.list_providers(in_tree=root), sort_keys=True) + json.dumps(
        dict((c, backend.get_allocations(c)) for c in sorted(backend.get_provider_allocations(root)['allocations'])),
        sort_keys=True)


@pytest.mark.parametrize('devices,words', [
    ({'gpus': 'abc'}, 'devices.gpus must be a list of GPU records, got str'),
    ({'gpus': ['abc']}, 'devices.gpus[0] must be a mapping (one of GPU records), got str'),
    ({'gpus': [{'address': 7}]}, 'devices.gpus[0].address must be a string, got int'),
    ({'gpus': [{'address': '0000:84:00.0', 'mdevs': {}}]}, 'devices.gpus[0].mdevs must be a list of mdev records'),
    ({'numa_cells': [{'id': 'zero'}]}, 'devices.numa_cells[0].id must be an integer, got str'),
    ({'instances': {'u': {'mdevs': 'a,b'}}}, 'devices.instances.u.mdevs must be a list of mdev UUIDs, got str'),
    ({'nova_conf': {'compute': {'cpu_dedicated_set': '2-7'}}},
     'devices.nova_conf.compute.cpu_dedicated_set must be a list of CPU ids, got str'),
])
def test_device_report_shapes_name_the_field(devices, words):
    for call in (lambda: layout.build_layout('cn', devices), lambda: layout.ownership_from_devices(devices),
                 lambda: layout.numa_child_names('cn', devices)):
        with pytest.raises(errors.BadInput) as info:
            call()
        assert info.value.detail == words or info.value.detail.startswith(words), info.value.detail


@pytest.mark.parametrize('ratio', [float('nan'), float('inf'), 'nan', -1.0, 0])
def test_layout_ratio_must_be_finite_and_positive(ratio):
    with pytest.raises(layout.LayoutError) as info:
        layout.merge_options({'gpu': {'allocation_ratio': ratio}})
    assert 'gpu.allocation_ratio must be a finite number > 0' in info.value.detail


def test_reshape_module_refuses_a_bad_device_report_and_changes_nothing(capsys, node, embedded_backend):
    before = _dump(embedded_backend, node['root'])
    args = {'embedded_db': embedded_backend.path, 'root_provider': 'compute-01', 'devices': {'gpus': 'abc'},
            'snapshot_dir': node['snapdir'], 'nova_migrations': 'never'}
    rc, out = run_module_main(reshape.main, args, capsys)
    assert rc == 1 and out['msg'].startswith('devices.gpus must be a list of GPU records, got str'), out['msg']
    assert _dump(embedded_backend, node['root']) == before
    assert not os.path.isdir(node['snapdir']) or os.listdir(node['snapdir']) == []


def _snapshot_doc(state):
    return {'format': 1, 'kind': snapshot.KIND, 'created_at': '2026-01-01T00:00:00.000000Z',
            'root': {'uuid': '55555555-5555-4555-8555-555555555555', 'name': 'cn'}, 'state': state,
            'foreign': {}, 'layout_children': [], 'created_children': [], 'plan': None, 'run_id': ''}


@pytest.mark.parametrize('state,words', [
    ({'providers': []}, 'state.providers must be a mapping, got list'),
    ({'providers': {'u': {'name': 'cn', 'inventories': {'VCPU': {'total': '8'}}}}},
     'state.providers.u.inventories.VCPU.total must be an integer, got str'),
    ({'providers': {'u': {'name': 'cn', 'traits': 'CUSTOM_A'}}}, 'state.providers.u.traits must be a list of trait'),
    ({'providers': {}, 'allocations': {'c': {'allocations': {'u': {'resources': {'VGPU': None}}}}}},
     'state.allocations.c.allocations.u.resources.VGPU must be an integer, got null'),
])
def test_snapshot_state_shapes_name_the_file_and_field(tmp_path, state, words):
    path = str(tmp_path / 'cn.latest.json')
    with open(path, 'w') as handle:
        json.dump(_snapshot_doc(state), handle)
    with pytest.raises(snapshot.SnapshotError) as info:
        snapshot.load_snapshot(path)
    assert path in info.value.detail and words in info.value.detail, info.value.detail


def test_rollback_of_a_badly_shaped_snapshot_is_a_clean_failure(capsys, node, embedded_backend, tmp_path):
    path = str(tmp_path / 'bad.json')
    with open(path, 'w') as handle:
        json.dump(_snapshot_doc({'providers': {'u': 'cn'}}), handle)
    before = _dump(embedded_backend, node['root'])
    for state in ('rolled_back', 'verified'):
        args = {'embedded_db': embedded_backend.path, 'root_provider': 'compute-01', 'state': state,
                'snapshot': path, 'devices': node['report'], 'nova_migrations': 'never'}
        rc, out = run_module_main(reshape.main, args, capsys)
        assert rc == 1 and 'state.providers.u must be a provider record (a mapping), got str' in out['msg'], out
        assert 'Unexpected' not in out['msg']
    assert _dump(embedded_backend, node['root']) == before


def test_one_bad_record_does_not_sink_the_report():
    records = [{'node': 'cn-1', 'status': 'noop'}, {'node': 'cn-2', 'status': 'reshaped', 'started': 'yesterday'},
               {'node': 'cn-3', 'status': 'reshaped', 'before': {'providers': 'x'}}]
    data = report.build_report(records, hosts=['cn-1', 'cn-2', 'cn-3'])
    assert [n['node'] for n in data['nodes']] == ['cn-1', 'cn-2', 'cn-3']
    assert data['problems'] == [
        'the record of cn-2 is badly shaped (record.started must be a finite number, got str); shown without trees',
        'the record of cn-3 is badly shaped (record.before.providers must be a mapping, got str); shown without trees']
    assert report.render_html(data) and report.render_markdown(data)


def test_fleet_report_lists_bad_records_and_reports_the_rest(capsys, tmp_path):
    dest = str(tmp_path / 'run')
    records = ['junk', {'status': 'noop'}, {'node': 'cn-2', 'started': 'yesterday'},
               {'node': 'cn-3', 'reshape': 'failed'}, {'node': 'cn-1', 'status': 'noop', 'started': 1.0}]
    rc, out = run_module_main(fleet_report.main, {'dest': dest, 'records': records, 'hosts': ['cn-1', 'cn-2', 'cn-3'],
                                                  'read_trees': False, 'latest_link': False}, capsys)
    assert rc == 0, out
    problems = [(b['node'], b['problem']) for b in out['bad_records']]
    assert (None, 'records[0] must be a node record (a mapping), got str') in problems
    assert (None, 'records[1] names no node (neither node nor provider is set)') in problems
    assert ('cn-2', 'record.started must be a finite number, got str') in problems
    assert ('cn-3', 'record.reshape must be a reshape task result (a mapping), got str') in problems
    assert '4 bad node record(s)' in out['summary_line']
    assert sorted(n['node'] for n in out['summary']['nodes']) == ['cn-1', 'cn-2', 'cn-3']
    assert os.path.exists(os.path.join(dest, 'report.html'))


def _tagger():
    """``(tag, is_tagged)``: ansible-core's own data tags (2.19+); before 2.19 there are none, and
    subclasses of the builtins named as 2.19 names them stand in (what type_name must see through
    is a subclass of a builtin, whatever made it)."""
    try:
        from ansible.module_utils._internal._datatag import AnsibleTagHelper
        from ansible.module_utils._internal._datatag._tags import Deprecated
    except ImportError:   # ansible-core 2.18: no data tagging
        stand_ins = dict((base, type('_AnsibleTagged%s' % base.__name__.capitalize(), (base,), {}))
                         for base in (str, list, dict, int, float, tuple))
        return (lambda value: stand_ins[type(value)](value)), (lambda value: type(value) in stand_ins.values())
    tag = Deprecated(msg='tagged for the test')
    return tag.tag, (lambda value: bool(AnsibleTagHelper.tags(value)))


def test_type_names_of_ansible_tagged_values_are_the_builtin_names():
    """issue 26: under ansible-core 2.19 data tagging a module argument or a templated value is a
    tagged subclass (_AnsibleTaggedStr, _AnsibleTaggedList, ...); messages name str, list, dict."""
    from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors as _errors
    from ansible_collections.placement.upgrade.plugins.module_utils._placement import shapes as _shapes

    tag, is_tagged = _tagger()
    for plain, name in (('abc', 'str'), ([1, 2], 'list'), ({'a': 1}, 'dict'), (5, 'int'), (1.5, 'float'),
                        ((1,), 'tuple')):
        tagged = tag(plain)
        assert is_tagged(tagged), name                           # really tagged
        assert type(tagged).__name__.startswith('_AnsibleTagged'), type(tagged)
        assert _errors.type_name(tagged) == name
    assert _errors.type_name(True) == 'bool' and _errors.type_name(None) == 'null'
    assert _errors.type_name(float('nan')) == 'float nan'
    err = _shapes.shape_error('devices', 'a mapping', tag(['x']))
    assert str(err) == 'devices must be a mapping, got list', str(err)
