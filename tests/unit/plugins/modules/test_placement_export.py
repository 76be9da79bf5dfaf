# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The placement_export and plan_compare modules (embedded source; the real Placement in
tests/integration/test_rehearsal.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import yaml

from ansible.release import __version__ as ansible_version

from module_runner import run_module_main
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
from ansible_collections.placement.upgrade.plugins.modules import placement_export, plan_compare

GUEST = 'aaaaaaaa-0000-0000-0000-000000000001'


def _seed(store):
    root = store.create_provider('cn1')
    store.set_inventories(root['uuid'], 0, {'VCPU': {'total': 8}})
    store.put_allocations(GUEST, {'allocations': {root['uuid']: {'resources': {'VCPU': 2}}}, 'project_id': 'p',
                                  'user_id': 'u', 'consumer_generation': None, 'consumer_type': 'INSTANCE'})
    return root['uuid']


def test_export_check_mode_writes_nothing_then_the_copy_is_written_once(run_module, store, tmp_path):
    root = _seed(store)
    dest = str(tmp_path / 'copy.db')
    rc, out = run_module(placement_export, {'compute_nodes': ['cn1'], 'dest': dest}, check=True)
    assert rc == 0, out
    assert out['changed'] is True and out['dest'] == dest and not os.path.exists(dest)
    assert out['export'] == {'compute_nodes': ['cn1'], 'providers': 1, 'sharing_providers': [],
                             'other_providers': [], 'consumers': 1, 'allocations': 1}
    rc, out = run_module(placement_export, {'compute_nodes': ['cn1'], 'dest': dest})
    assert rc == 0 and out['changed'] is True
    with EmbeddedBackend(dest, create=False) as copy:
        assert copy.get_allocations(GUEST)['allocations'][root]['resources'] == {'VCPU': 2}
    rc, out = run_module(placement_export, {'compute_nodes': ['cn1'], 'dest': dest})
    assert rc == 1 and 'exists; an export never overwrites a store (set force to replace it)' in out['msg']
    rc, out = run_module(placement_export, {'compute_nodes': ['cn1'], 'dest': dest, 'force': True})
    assert rc == 0 and out['changed'] is True


def test_export_refuses_its_own_source_and_unknown_nodes(run_module, store, db_path, tmp_path):
    _seed(store)
    rc, out = run_module(placement_export, {'dest': db_path, 'force': True})
    assert rc == 1 and out['msg'] == 'dest: %s is the source store (embedded_db); export into another file' % db_path
    rc, out = run_module(placement_export, {'compute_nodes': ['cn9'], 'dest': str(tmp_path / 'c.db')})
    assert rc == 1 and out['msg'] == "compute_nodes: no resource provider named or with uuid 'cn9'"
    assert not os.path.exists(str(tmp_path / 'c.db'))


def _report_dir(path, status, vcpu):
    os.makedirs(os.path.join(path, 'nodes'))
    tree = {'providers': {'r': {'uuid': 'r', 'name': 'cn1', 'inventories': {'VCPU': {'total': 8}}}},
            'allocations': {GUEST: {'allocations': {'r': {'resources': {'VCPU': vcpu}}}}}}
    with open(os.path.join(path, 'nodes', 'cn1.json'), 'w') as handle:
        json.dump({'node': 'cn1', 'status': status, 'before': tree, 'after': tree}, handle)
    return path


def test_plan_compare_says_equal_or_fails_listing_the_differences(capsys, tmp_path):
    def run_module(module, args):
        return run_module_main(module.main, args, capsys)

    rehearsal = _report_dir(str(tmp_path / 'r'), 'noop', 2)
    same = _report_dir(str(tmp_path / 'p1'), 'noop', 2)
    other = _report_dir(str(tmp_path / 'p2'), 'noop', 3)
    rc, out = run_module(plan_compare, {'rehearsal': rehearsal, 'plan': same})
    assert rc == 0 and out['equal'] is True and out['changed'] is False and out['differences'] == []
    rc, out = run_module(plan_compare, {'rehearsal': rehearsal, 'plan': other})
    assert rc == 1 and out['equal'] is False
    assert out['lines'] == ['cn1: before consumer %s: rehearsal {"cn1": {"VCPU": 2}}, production {"cn1": {"VCPU": 3}}' % GUEST,
                            'cn1: after consumer %s: rehearsal {"cn1": {"VCPU": 2}}, production {"cn1": {"VCPU": 3}}' % GUEST]
    rc, out = run_module(plan_compare, {'rehearsal': rehearsal, 'plan': other, 'fail_on_difference': False})
    assert rc == 0 and out['equal'] is False and len(out['differences']) == 2
    rc, out = run_module(plan_compare, {'rehearsal': str(tmp_path), 'plan': other})
    assert rc == 1 and 'is not a report folder of the rolling_reshape role' in out['msg']


def test_documentation_names_every_option():
    for module, options in ((placement_export, {'compute_nodes', 'dest', 'force'}),
                            (plan_compare, {'rehearsal', 'plan', 'fail_on_difference'})):
        doc = yaml.safe_load(module.DOCUMENTATION)
        assert set(doc['options']) == options
        yaml.safe_load(module.EXAMPLES)
        yaml.safe_load(module.RETURN)


def test_export_from_a_missing_store_fails_and_creates_nothing(run_module, tmp_path):
    source = str(tmp_path / 'nope.db')
    rc, out = run_module(placement_export, {'embedded_db': source, 'dest': str(tmp_path / 'copy.db')})
    assert rc == 1 and 'does not exist' in out['msg']
    assert os.listdir(str(tmp_path)) == []


def test_plan_compare_refuses_a_record_with_a_wrong_field_naming_file_and_field(capsys, tmp_path):
    """A node record whose fields have the wrong type is refused naming the file and the field
    (it ended as "Unexpected error (AttributeError)"); nothing is written, the records stay as they are."""
    def run_module(module, args):
        return run_module_main(module.main, args, capsys)

    rehearsal = _report_dir(str(tmp_path / 'r'), 'noop', 2)
    cases = (('after', 7, 'record.after must be a mapping, got int'),
             ('names', [1, 2], 'record.names must be a mapping, got list'),
             ('providers', {'u': 'x'}, 'record.before.providers.u must be a provider record (a mapping), got str'))
    for index, (key, value, expected) in enumerate(cases):
        plan = _report_dir(str(tmp_path / ('p%d' % index)), 'noop', 2)
        path = os.path.join(plan, 'nodes', 'cn1.json')
        with open(path) as handle:
            record = json.load(handle)
        if key == 'providers':
            record['before']['providers'] = value
        else:
            record[key] = value
        with open(path, 'w') as handle:
            json.dump(record, handle)
        with open(path, 'rb') as handle:
            stored = handle.read()
        rc, out = run_module(plan_compare, {'rehearsal': rehearsal, 'plan': plan})
        assert rc == 1, out
        assert out['msg'] == 'plan: %s: %s' % (path, expected), out['msg']
        assert 'Unexpected error' not in out['msg']
        with open(path, 'rb') as handle:
            assert handle.read() == stored
        assert sorted(os.listdir(plan)) == ['nodes'] and os.listdir(os.path.join(plan, 'nodes')) == ['cn1.json']
    # the rehearsal side is named as such
    rc, out = run_module(plan_compare, {'rehearsal': str(tmp_path / 'p0'), 'plan': rehearsal})
    assert rc == 1 and out['msg'] == 'rehearsal: %s: %s' % (os.path.join(str(tmp_path / 'p0'), 'nodes', 'cn1.json'),
                                                            cases[0][2]), out['msg']


#: before ansible-core 2.19 a null element of a list of str is refused by AnsibleModule itself
#: (2.19 turns it into '', which the module refuses naming the item)
ANSIBLE_REFUSES_NULL_ELEMENTS = tuple(int(p) for p in ansible_version.split('.')[:2]) < (2, 19)


def test_export_refuses_a_null_or_empty_node_name(run_module, store, tmp_path):
    """``compute_nodes: [null]`` (a template rendering to [None]) exported every root; an empty name too.
    Refused naming the item; nothing is written."""
    _seed(store)
    store.create_provider('cn2')
    dest = str(tmp_path / 'copy.db')
    for nodes, item in (([None], 0), ([''], 0), (['cn1', None], 1), (['cn1', '  '], 1)):
        rc, out = run_module(placement_export, {'compute_nodes': nodes, 'dest': dest})
        assert rc == 1, (nodes, out)
        if None in nodes and ANSIBLE_REFUSES_NULL_ELEMENTS:
            # ansible-core 2.18 refuses a null element of a list of str itself, naming the option
            assert "Elements value for option 'compute_nodes' is of type <class 'NoneType'>" in out['msg'], out['msg']
        else:
            assert out['msg'] == ('compute_nodes[%d] is empty (null or an empty string, as a template that renders to '
                                  'nothing gives); name the compute nodes to export, or give an empty list to export '
                                  'every root provider' % item), out['msg']
        assert not os.path.exists(dest) and [n for n in os.listdir(str(tmp_path)) if not n.startswith('placement.db')] == []
        rc, out = run_module(placement_export, {'compute_nodes': nodes, 'dest': dest}, check=True)
        assert rc == 1 and ('compute_nodes[%d] is empty' % item in out['msg']
                            or (None in nodes and ANSIBLE_REFUSES_NULL_ELEMENTS and 'compute_nodes' in out['msg']))
    # the empty list still means every root
    rc, out = run_module(placement_export, {'compute_nodes': [], 'dest': dest})
    assert rc == 0 and out['export']['compute_nodes'] == ['cn1', 'cn2']
