# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verification checks on hand-built states: each one passes on a good tree and
catches the fault it exists for."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import rollback
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import verify

ROOT = 'a0000000-0000-4000-8000-000000000001'
CA = 'a0000000-0000-4000-8000-00000000000a'
CB = 'a0000000-0000-4000-8000-00000000000b'
POOL = 'a0000000-0000-4000-8000-000000000002'
I1 = '11111111-1111-4111-8111-111111111111'
I2 = '22222222-2222-4222-8222-222222222222'


def _state():
    def prov(name, inventories, usages, parent=None, traits=()):
        return {'name': name, 'generation': 3, 'parent_provider_uuid': parent, 'inventories': inventories,
                'usages': usages, 'traits': list(traits), 'aggregates': []}
    return {
        'providers': {
            ROOT: prov('cn', {'VCPU': {'total': 8}}, {'VCPU': 3}),
            CA: prov('cn_a', {'VGPU': {'total': 4, 'max_unit': 4}}, {'VGPU': 3}, parent=ROOT),
            CB: prov('cn_b', {'VGPU': {'total': 4, 'max_unit': 4}}, {'VGPU': 1}, parent=ROOT,
                     traits=['CUSTOM_X']),
        },
        'allocations': {
            I1: {'allocations': {ROOT: {'resources': {'VCPU': 2}}, CA: {'resources': {'VGPU': 2}},
                                 POOL: {'resources': {'DISK_GB': 10}}}},
            I2: {'allocations': {ROOT: {'resources': {'VCPU': 1}}, CA: {'resources': {'VGPU': 1}},
                                 CB: {'resources': {'VGPU': 1}}}},
        },
    }


CHILDREN = [{'name': 'cn_a', 'inventories': {'VGPU': {'total': 4, 'max_unit': 4}}, 'traits': []},
            {'name': 'cn_b', 'inventories': {'VGPU': {'total': 4, 'max_unit': 4}}, 'traits': ['CUSTOM_X']}]


def test_every_check_passes_on_a_consistent_tree():
    state = _state()
    checks = [
        verify.consumer_totals_unchanged(state, copy.deepcopy(state)),
        verify.usage_matches_allocations(state),
        verify.usage_within_capacity(state),
        verify.moved_classes_gone_from_root(state, ROOT, ['VGPU']),
        verify.tree_matches_layout(state, ROOT, CHILDREN),
        verify.allocations_on_owned_devices(state, {I2: {'VGPU': {'how': 'ownership', 'to': {CA: 1, CB: 1}}}}),
    ]
    assert verify.passed(checks), checks
    assert [c['check'] for c in checks] == [
        'consumer_totals_unchanged', 'usage_matches_allocations', 'usage_within_capacity',
        'moved_classes_gone_from_root', 'tree_matches_layout', 'allocations_on_owned_devices']


def test_consumer_totals_catch_a_lost_allocation():
    before = _state()
    after = copy.deepcopy(before)
    del after['allocations'][I1]['allocations'][POOL]
    check = verify.consumer_totals_unchanged(before, after)
    assert not check['passed'] and I1 in check['detail'] and 'DISK_GB=10' in check['detail']
    del after['allocations'][I2]
    check = verify.consumer_totals_unchanged(before, after)
    assert I2 in check['detail'] and 'nothing' in check['detail']


def test_usage_must_equal_the_allocations():
    state = _state()
    state['providers'][CA]['usages']['VGPU'] = 4
    check = verify.usage_matches_allocations(state)
    assert not check['passed'] and 'cn_a' in check['detail']


def test_capacity_unless_it_was_already_exceeded():
    after = _state()
    after['providers'][CA]['inventories']['VGPU']['reserved'] = 2       # capacity 2, usage 3
    check = verify.usage_within_capacity(after)
    assert not check['passed'] and 'above its capacity 2' in check['detail']
    before = _state()
    before['providers'][CA]['usages']['VGPU'] = 3
    assert verify.usage_within_capacity(after, before)['passed']
    after['providers'][ROOT]['usages']['PCPU'] = 1
    assert 'no PCPU inventory' in verify.usage_within_capacity(after, before)['detail']


def test_root_must_lose_the_moved_classes():
    state = _state()
    state['providers'][ROOT]['inventories']['VGPU'] = {'total': 8}
    check = verify.moved_classes_gone_from_root(state, ROOT, ['VGPU'])
    assert not check['passed'] and 'VGPU' in check['detail']


def test_tree_must_match_the_layout():
    state = _state()
    assert not verify.tree_matches_layout(state, ROOT, CHILDREN + [
        {'name': 'cn_c', 'inventories': {'VGPU': {'total': 1}}, 'traits': []}])['passed']
    wrong = copy.deepcopy(state)
    wrong['providers'][CA]['inventories']['VGPU']['total'] = 5
    assert 'total=5' in verify.tree_matches_layout(wrong, ROOT, CHILDREN)['detail']
    wrong = copy.deepcopy(state)
    wrong['providers'][CB]['traits'] = []
    assert 'lacks trait(s) CUSTOM_X' in verify.tree_matches_layout(wrong, ROOT, CHILDREN)['detail']
    wrong = copy.deepcopy(state)
    wrong['providers'][CB]['parent_provider_uuid'] = CA
    assert 'not the root' in verify.tree_matches_layout(wrong, ROOT, CHILDREN)['detail']
    extra = copy.deepcopy(state)
    extra['providers'][CB]['traits'] = ['CUSTOM_X', 'CUSTOM_OPERATOR']     # extra traits are fine
    assert verify.tree_matches_layout(extra, ROOT, CHILDREN)['passed']


def test_moved_allocation_must_sit_on_the_owned_device():
    state = _state()
    check = verify.allocations_on_owned_devices(state, {I1: {'VGPU': {'how': 'ownership', 'to': {CB: 2},
                                                                      'pool': [CA, CB]}}})
    assert not check['passed']
    assert 'cn_a=2' in check['detail'] and 'cn_b=2' in check['detail']


def test_on_demand_ownership_check():
    state = _state()
    children = [{'name': 'cn_a', 'uuid': CA, 'device': 'A', 'inventories': {'VGPU': {}}},
                {'name': 'cn_b', 'uuid': CB, 'device': 'B', 'inventories': {'VGPU': {}}}]
    owners = {I1: {'A': 2}, I2: {'A': 1, 'B': 1}}
    expected, problems = verify.unowned_allocations(state, children, owners, 'strict')
    assert problems == []
    assert verify.allocations_on_owned_devices(state, expected)['passed']
    expected, problems = verify.unowned_allocations(state, children, {I1: {'B': 2}, I2: {'A': 1, 'B': 1}}, 'strict')
    assert not verify.allocations_on_owned_devices(state, expected)['passed']
    expected, problems = verify.unowned_allocations(state, children, {I1: {'A': 2}}, 'strict')
    assert len(problems) == 1 and I2 in problems[0]
    expected, problems = verify.unowned_allocations(state, children, {I1: {'A': 2}}, 'pack')
    assert problems == [] and list(expected) == [I1]


def test_rollback_verification():
    snap = _state()
    after = copy.deepcopy(snap)
    doc = {'state': snap}
    assert verify.passed(rollback.verify_rollback(doc, after, restored=[I1, I2]))
    after['providers'][ROOT]['inventories']['VCPU']['total'] = 16
    after['allocations'][I1]['allocations'][CA]['resources']['VGPU'] = 1
    after['providers'][CA]['usages']['VGPU'] = 2
    checks = dict((c['check'], c) for c in rollback.verify_rollback(doc, after, restored=[I1, I2]))
    assert not checks['inventories_match_snapshot']['passed']
    assert not checks['allocations_match_snapshot']['passed'] and I1 in checks['allocations_match_snapshot']['detail']
    assert not checks['consumer_totals_unchanged']['passed']
    removed = copy.deepcopy(snap)
    del removed['providers'][CB]
    removed['allocations'][I2]['allocations'].pop(CB)
    checks = dict((c['check'], c) for c in rollback.verify_rollback(doc, removed, restored=[], removed=[CB]))
    assert checks['inventories_match_snapshot']['passed']
    checks = dict((c['check'], c) for c in rollback.verify_rollback(doc, removed, restored=[]))
    assert 'cn_b of the snapshot is gone' in checks['inventories_match_snapshot']['detail']


def test_long_failure_lists_are_cut():
    before = {'providers': {}, 'allocations': {}}
    after = {'providers': {}, 'allocations': {}}
    for i in range(30):
        consumer = '%08d-0000-4000-8000-000000000000' % i
        before['allocations'][consumer] = {'allocations': {ROOT: {'resources': {'VCPU': 1}}}}
    check = verify.consumer_totals_unchanged(before, after)
    assert check['detail'].endswith('... and 10 more')
    assert check['detail'].count('consumer ') == 20


def test_state_verified_passes_on_every_node_the_reshape_verified(tmp_path):
    """``state: verified`` agrees with the reshape's own verification on every kind of the
    simulated fleet: AMD SEV's MEM_ENCRYPTION_CONTEXT sits on its child by nova's rule (not by
    device ownership), and the snapshot's planned totals (PCI healing, VCPU -> PCPU) are
    accepted as the consumers' totals; a deferred node is reported as not in the layout."""
    import simfleet
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery, reshaper
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend

    fleet = simfleet.build(str(tmp_path / 'fleet'), nodes=12)
    snapdir = str(tmp_path / 'snapshots')
    seen = set()
    with EmbeddedBackend(fleet['embedded_db']) as store:
        for node in fleet['nodes']:
            devices = discovery.discover(node['sysfs_root'], domain_xml_glob=node['domain_xml_glob'],
                                         hostname=node['provider'], nova_conf=node.get('nova_conf') or None,
                                         domain_capabilities=node.get('domain_capabilities'))
            done = reshaper.reshape_node(store, node['provider'], devices, snapshot_dir=snapdir)
            checked = reshaper.verify_node(store, node['provider'], devices, snapshot_dir=snapdir)
            if done['status'] == 'reshaped':
                assert done['verified'] is True
                assert checked['verified'] is True, (node['name'], node['kind'], checked['msg'])
            elif done['status'] == 'noop':
                assert checked['verified'] is True, (node['name'], checked['msg'])
            else:
                assert checked['verified'] is False and 'layout_applied' in checked['msg']
            seen.add((node['kind'], done['status']))
    # the fleet holds SEV, PCI healing with VCPU -> PCPU, and deferred nodes
    assert {('gpu', 'reshaped'), ('sriov', 'reshaped'), ('reshaped', 'noop')} <= seen
    assert any(status == 'deferred' for _kind, status in seen)


def test_a_written_consumer_that_lost_its_project_user_or_type_is_caught():
    before = _state()
    for body in before['allocations'].values():
        body.update({'project_id': 'p1', 'user_id': 'u1', 'consumer_type': 'INSTANCE', 'consumer_generation': 2})
    after = copy.deepcopy(before)
    check = verify.consumers_keep_their_owner(before, after, [I1, I2])
    assert check['passed'] and check['detail'] == '2 written consumer(s) keep their project, user and type'
    # Placement's deadlock retry committing a reshape without the consumer's owner
    after['allocations'][I1]['project_id'] = 'another'
    after['allocations'][I2]['consumer_type'] = 'unknown'
    check = verify.consumers_keep_their_owner(before, after, [I1, I2])
    assert not check['passed']
    assert "consumer %s: project_id was 'p1', Placement now has 'another'" % I1 in check['detail']
    assert "consumer %s: consumer_type was 'INSTANCE', Placement now has 'unknown'" % I2 in check['detail']
    # a consumer the reshape did not write is not its business
    assert verify.consumers_keep_their_owner(before, after, [])['passed']
