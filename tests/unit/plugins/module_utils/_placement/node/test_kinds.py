# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kind contract: every reshape kind is one file in node/kinds/ and one line of the
registry, and the layout, the planner and verification take a kind from there alone."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os
import re

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import assign
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node.kinds import registry as kinds
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import layout
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import planner
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import verify
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node.kinds import common

from test_reshaper_support import gpu_report

PLACEMENT = os.path.dirname(os.path.dirname(planner.__file__))
ROOT = 'a0000000-0000-4000-8000-000000000001'
I1 = '11111111-1111-4111-8111-111111111111'
I2 = '22222222-2222-4222-8222-222222222222'
# every standard class a kind of this collection moves or converts
CLASSES = ('VGPU', 'VCPU', 'PCPU', 'MEMORY_MB', 'MEM_ENCRYPTION_CONTEXT', 'SRIOV_NET_VF', 'DISK_GB')


def test_every_kind_is_one_file_and_one_registry_line_keeping_the_contract():
    names = [k.name for k in kinds.KINDS]
    assert names == ['vgpu', 'pci', 'numa', 'mem_encryption', 'pcpu']
    for kind in kinds.KINDS:
        assert isinstance(kind, common.Kind)
        module = type(kind).__module__
        assert module.endswith('.node.kinds.' + kind.name), (kind.name, module)
        assert os.path.isfile(os.path.join(PLACEMENT, 'node', 'kinds', kind.name + '.py'))
        # the module that discovers its devices on the host is named and exists
        path = kind.discovery.split(' ', maxsplit=1)[0]
        assert os.path.isfile(os.path.join(PLACEMENT, path)), (kind.name, kind.discovery)
    assert layout.KINDS is kinds.KINDS


def _string_constants(path):
    """The string constants of a module that are neither docstrings nor names in ``__all__``."""
    tree = ast.parse(open(path).read())
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skip.add(id(first.value))
        if isinstance(node, ast.Assign) and any(getattr(t, 'id', None) == '__all__' for t in node.targets):
            skip.update(id(n) for n in ast.walk(node.value))
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip]


@pytest.mark.parametrize('module', [planner, assign, layout, verify])
def test_the_planner_layout_and_verification_name_no_resource_class(module):
    named = [s for s in _string_constants(module.__file__) for rc in CLASSES if re.search(r'\b%s\b' % rc, s)]
    assert named == []


class _FPGA(common.Kind):
    """A kind that is not in the collection: FPGA cards, CUSTOM_FPGA from the root to one
    child per card, one unit per card a guest owns."""

    name = 'fpga'

    def children(self, root_name, devices, opts, nova, numa_source, warnings):
        return [{'name': '%s_fpga_%s' % (root_name, card['address'].replace(':', '_').replace('.', '_')),
                 'kind': self.name, 'device': card['address'],
                 'inventories': {'CUSTOM_FPGA': {'total': 1, 'max_unit': 1}},
                 'traits': ['CUSTOM_FPGA_CARD'], 'inherit': [], 'numa_node': -1}
                for card in devices.get('fpgas') or []]


def _fpga_state():
    root = {'uuid': ROOT, 'name': 'cn1', 'generation': 4, 'parent_provider_uuid': None,
            'root_provider_uuid': ROOT, 'traits': [], 'aggregates': [],
            'inventories': {'VCPU': {'total': 16}, 'CUSTOM_FPGA': {'total': 2, 'max_unit': 2}},
            'usages': {'VCPU': 4, 'CUSTOM_FPGA': 2}}
    allocations = dict((c, {'allocations': {ROOT: {'generation': 4, 'resources': {'VCPU': 2, 'CUSTOM_FPGA': 1}}},
                            'consumer_generation': 1, 'project_id': 'p', 'user_id': 'u'})
                       for c in (I1, I2))
    return {'providers': {ROOT: root}, 'allocations': allocations}


def test_a_kind_registered_in_one_place_is_laid_out_planned_and_verified(monkeypatch):
    monkeypatch.setattr(kinds, 'KINDS', kinds.KINDS + (_FPGA(),))
    devices = {'fpgas': [{'address': '0000:3b:00.0'}, {'address': '0000:3c:00.0'}]}
    owners = {I1: {'0000:3b:00.0': 1}, I2: {'0000:3c:00.0': 1}}
    lay = layout.build_layout('cn1', devices)
    assert [c['name'] for c in lay['children']] == ['cn1_fpga_0000_3b_00_0', 'cn1_fpga_0000_3c_00_0']
    assert lay['classes'] == ['CUSTOM_FPGA']
    plan = planner.plan_reshape(_fpga_state(), ROOT, lay, owners)
    assert plan['status'] == planner.STATUS_PLANNED
    assert plan['moved_classes'] == ['CUSTOM_FPGA']
    assert plan['ensure']['traits'] == ['CUSTOM_FPGA_CARD']
    assert dict((c, a['CUSTOM_FPGA']['to']) for c, a in plan['assignments'].items()) == {
        I1: {'cn1_fpga_0000_3b_00_0': 1}, I2: {'cn1_fpga_0000_3c_00_0': 1}}
    assert 'CUSTOM_FPGA' not in plan['providers'][ROOT]['inventories']
    # without the registry line, the same report lays out no FPGA child
    monkeypatch.undo()
    assert layout.build_layout('cn1', devices)['children'] == []


def test_a_plan_checks_the_device_report_once(monkeypatch, tmp_path):
    devices = gpu_report(tmp_path, 'cn1', spare_mdevs=1)
    calls = []
    real = discovery.check_report

    def counting(report, *args, **kwargs):
        calls.append(1)
        return real(report, *args, **kwargs)

    monkeypatch.setattr(discovery, 'check_report', counting)
    state = _fpga_state()
    state['providers'][ROOT]['inventories'] = {'VCPU': {'total': 16}}
    state['providers'][ROOT]['usages'] = {'VCPU': 4}
    for body in state['allocations'].values():
        body['allocations'][ROOT]['resources'] = {'VCPU': 2}
    planner.plan_from_devices(state, ROOT, devices, layout_options={'numa': {'enabled': True}})
    assert len(calls) == 1


# -- a kind is a pair: the code around the kinds names none (issue 44) -----------------------

from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import inventory
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import inflight
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import plan_state
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node.discover import holders
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node.discover import registry as parts
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node.discover import report_check
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import rollback

# the classes of the kinds' devices (the ones a guest holds through a device of the host)
DEVICE_CLASSES = ('VGPU', 'SRIOV_NET_VF', 'PCI_DEVICE', 'PGPU', 'MEM_ENCRYPTION_CONTEXT', r'CUSTOM_PCI_\w*')


def _names_of(module, words):
    return sorted(set(s for s in _string_constants(module.__file__) for w in words if re.search(r'\b%s\b' % w, s)))


@pytest.mark.parametrize('module', [planner, assign, layout, verify, inflight, inventory, rollback])
def test_the_code_around_the_kinds_names_no_device_class(module):
    assert _names_of(module, DEVICE_CLASSES) == []


def test_the_rollback_names_no_class_nor_plan_key_of_a_kind():
    """rollback.py asks the kinds what a reshape changed on purpose (Kind.planned_changes,
    Kind.root_classes_changed): it names none of their classes, plan keys, snapshot keys
    (``cpu_pinned``) nor assignment records (``how: pci-heal``)."""
    keys = [k for kind in kinds.KINDS for k in tuple(kind.plan_keys) + tuple(kind.own_assignments)]
    assert 'pci-heal' in keys and 'cpu' in keys    # what the check reads is there
    assert _names_of(rollback, CLASSES + DEVICE_CLASSES + tuple(keys) + ('cpu_pinned',)) == []


class _Healer(common.Kind):
    """A kind that is not in the collection: it changes a consumer's CUSTOM_FPGA total on purpose
    (its assignment record ``how: fpga-heal``) and converts the root's CUSTOM_SLOT in place."""

    name = 'fpga_healer'
    own_assignments = ('fpga-heal',)

    def planned_changes(self, plan, consumer, then, planned, moves, delta):
        return dict((rc, common.plan_count(rec.get('amount')) or 0)
                    for rc, rec in common.plan_assignments(plan, consumer) if rec.get('how') == 'fpga-heal')

    def root_classes_changed(self, plan):
        return ('CUSTOM_SLOT',)


def _healed_snapshot():
    """A snapshot (as load_snapshot reads it) of a node whose consumer I1 the reshape healed from 1
    to 2 CUSTOM_FPGA, on a child of one other class (a move there would change the class)."""
    state = _fpga_state()
    del state['allocations'][I2]
    state['providers'][ROOT]['inventories']['CUSTOM_SLOT'] = {'total': 4}
    plan = {'children': [{'name': 'cn1_fpga', 'uuid': I2, 'inventories': {'CUSTOM_FPGA_CARD': {'total': 2}}}],
            'moved_classes': ['CUSTOM_FPGA'],
            'assignments': {I1: {'CUSTOM_FPGA': {'how': 'fpga-heal', 'amount': 1, 'to': {'cn1_fpga': 2}}}},
            'planned_totals': {I1: {'VCPU': 2, 'CUSTOM_FPGA': 2}}}
    return {'root': {'uuid': ROOT, 'name': 'cn1'}, 'state': state, 'plan': plan}


def test_a_kinds_planned_change_is_honoured_by_the_rollback_check(monkeypatch):
    doc = _healed_snapshot()
    # without the kind, its record reads as a move (to a child of another class), and the healed
    # consumer as an edited snapshot
    refused = rollback.rollback_problems(doc)
    assert [p.split(':')[0] for p in refused] == ['consumer %s, CUSTOM_FPGA' % I1, 'consumer %s, CUSTOM_FPGA_CARD' % I1]
    assert 'the state gives it 1, but its plan says 4 before the reshape' in refused[0]
    monkeypatch.setattr(kinds, 'KINDS', kinds.KINDS + (_Healer(),))
    assert rollback.planned_changes(doc['plan'], I1, {'VCPU': 2, 'CUSTOM_FPGA': 1},
                                    doc['plan']['planned_totals'][I1]) == {'CUSTOM_FPGA': 1}
    assert rollback.rollback_problems(doc) == []
    # an edit of the healed amount is still refused
    doc['plan']['assignments'][I1]['CUSTOM_FPGA']['amount'] = 2
    assert [p.split(':')[0] for p in rollback.rollback_problems(doc)] == ['consumer %s, CUSTOM_FPGA' % I1]


def test_a_root_class_a_kind_changes_in_place_is_not_drift_in_an_old_snapshot(monkeypatch):
    doc = _healed_snapshot()
    now = _fpga_state()
    now['providers'][ROOT]['inventories']['CUSTOM_SLOT'] = {'total': 2}
    assert [p.split(':')[0] for p in rollback.inventory_drift(doc, now)] == ['provider cn1, CUSTOM_SLOT']
    monkeypatch.setattr(kinds, 'KINDS', kinds.KINDS + (_Healer(),))
    assert rollback.inventory_drift(doc, now) == []


def test_every_part_of_the_report_is_one_module_and_one_registry_line():
    assert [p.name for p in parts.PARTS] == ['gpus', 'pci', 'numa', 'domains', 'mem_encryption']
    keys = [k for p in parts.PARTS for k in p.report_keys]
    assert keys == ['gpus', 'sriov_pfs', 'pci_devices', 'numa_cells', 'cpus_online', 'instances', 'mem_encryption']
    for part in parts.PARTS:
        assert type(part).__module__.endswith('.node.discover.' + part.name), part.name
    # every kind names the parts it reads, each of which is in the registry
    modules = set('node/discover/%s.py' % p.name for p in parts.PARTS)
    for kind in kinds.KINDS:
        named = re.findall(r'node/discover/\w+\.py', kind.discovery)
        assert named and set(named) <= modules, (kind.name, kind.discovery)


@pytest.mark.parametrize('module', [discovery, holders, report_check, inflight])
def test_discovery_and_the_report_checks_name_no_part(module):
    # the guests (``instances``) are every kind's: holders.py loops over them
    keys = [k for p in parts.PARTS for k in p.report_keys if k != 'instances']
    assert _names_of(module, keys) == []


def test_the_kinds_change_a_plan_state_through_its_methods_only():
    """No ``work.<field> = ...`` nor ``work.<field>[...] = ...`` in a kind's file: PlanState's methods
    (root_inventory_after, allocations_of, set_result, remember, ...) are the kinds' API."""
    for kind in kinds.KINDS:
        tree = ast.parse(open(__import__(type(kind).__module__, fromlist=['x']).__file__).read())
        writes = []
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, ast.AugAssign) else [])
            for target in targets:
                while isinstance(target, ast.Subscript):
                    target = target.value
                if isinstance(target, ast.Attribute) and getattr(target.value, 'id', None) == 'work':
                    writes.append('%s: work.%s' % (kind.name, target.attr))
        assert writes == []
    for name in ('root_inventory_after', 'allocations_of', 'assign', 'warn', 'set_result', 'result',
                 'remember', 'recall'):
        assert getattr(plan_state.PlanState, name).__doc__, name


def test_a_plan_state_keeps_a_kinds_notes_apart_from_the_plan():
    state = _fpga_state()
    from ansible_collections.placement.upgrade.plugins.module_utils._placement import tree as _tree
    work = plan_state.PlanState(_tree.ProviderTree.of(state), ROOT, state['providers'][ROOT],
                                {'classes': ['CUSTOM_FPGA'], 'children': [], 'warnings': ['w']})
    assert work.moved == ['CUSTOM_FPGA'] and work.warnings == ['w']
    work.remember('fpga', [I1])
    work.set_result('fpga', {'n': 1})
    assert work.recall('fpga') == [I1] and work.result('fpga') == {'n': 1}
    assert work.results == {'fpga': {'n': 1}}
    assert work.recall('other', 'none') == 'none'
    work.current = {I1: {ROOT: {'resources': {'CUSTOM_FPGA': 1}}}}
    mine = work.allocations_of(I1)
    mine[ROOT]['resources']['CUSTOM_FPGA'] = 0
    assert work.current[I1][ROOT]['resources'] == {'CUSTOM_FPGA': 1}
    assert work.allocations_of(I1) is mine


def test_the_request_objects_refuse_an_unknown_field():
    with pytest.raises(TypeError, match='sysfs_rot'):
        discovery.discover(sysfs_rot='/sys')
    with pytest.raises(TypeError, match='two_tree_ok'):
        inflight.find({'allocations': {}}, 'cn1', [ROOT], two_tree_ok=True)
    assert inflight.find({'allocations': {}}, 'cn1', [ROOT], two_trees_ok=True) == ([], [], [])


def test_the_inventory_needs_come_from_the_kinds():
    assert inventory.NEEDS == ('vgpu', 'pci', 'mem_encryption')
    assert [inventory.need_of(rc) for rc in ('VGPU', 'SRIOV_NET_VF', 'PGPU', 'CUSTOM_PCI_8086_154C',
                                             'MEM_ENCRYPTION_CONTEXT', 'VCPU', 'CUSTOM_FPGA')] == [
        'vgpu', 'pci', 'pci', 'pci', 'mem_encryption', None, None]
