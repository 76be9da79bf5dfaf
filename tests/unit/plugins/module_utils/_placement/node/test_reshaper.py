# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reshaper (apply, retry, rollback, verify) end to end on the embedded store."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os
import stat
import uuid as _uuid

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import layout
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import planner
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import snapshot
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import (
    ConcurrentUpdate,
    Forbidden,
)

from test_reshaper_support import (
    child_named,
    comparable,
    consumers_by_name,
    make_provider,
    put,
    report_for,
    vgpu_on,
    Wrapper,
    WritesBeforeFirstReshape,
)

GPU_A = '0000:84:00.0'
GPU_B = '0000:85:00.0'


def test_reshape_moves_vgpu_to_the_gpu_each_instance_uses(embedded_backend, node):
    backend = embedded_backend
    before = provider_tree_state(backend, node['root'])
    result = reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert result['changed'] is True
    assert result['status'] == 'reshaped'
    assert result['retries'] == 0
    assert result['verified'] is True, result['verification']
    assert set(c['check'] for c in result['verification']) == {
        'consumer_totals_unchanged', 'consumers_keep_their_owner', 'usage_matches_allocations',
        'usage_within_capacity', 'moved_classes_gone_from_root', 'tree_matches_layout',
        'allocations_on_owned_devices'}
    assert result['moved']['consumers'] == 3
    assert result['moved']['units'] == {'VGPU': 5}
    assert result['msg'] == ('node compute-01: created 2 child(ren), changed the inventory of 3 provider(s), '
                             'moved 5 VGPU of 3 consumer(s); verification passed')

    a = child_named(backend, 'compute-01_pci_0000_84_00_0')
    b = child_named(backend, 'compute-01_pci_0000_85_00_0')
    assert a['uuid'] == layout.child_uuid(node['root'], a['name'])
    assert b['parent_provider_uuid'] == node['root']
    for child in (a, b):
        inv = backend.get_inventories(child['uuid'])['inventories']
        assert inv['VGPU']['total'] == 8 and inv['VGPU']['max_unit'] == 8
    assert 'VGPU' not in backend.get_inventories(node['root'])['inventories']

    names = consumers_by_name(node['report'])
    assert vgpu_on(backend, names['instance-00000001']) == {a['uuid']: 2}
    assert vgpu_on(backend, names['instance-00000002']) == {a['uuid']: 1, b['uuid']: 1}   # spans both
    assert vgpu_on(backend, names['instance-00000003']) == {b['uuid']: 1}
    for consumer in node['consumers']:
        allocs = backend.get_allocations(consumer)['allocations']
        assert allocs[node['pool']]['resources'] == {'DISK_GB': 20}          # sharing pool kept
        assert allocs[node['root']]['resources'] == {'VCPU': 2, 'MEMORY_MB': 2048}
        assert (before['allocations'][consumer]['project_id']
                == backend.get_allocations(consumer)['project_id'])

    path = result['snapshot']
    assert os.path.dirname(path) == node['snapdir']
    assert os.path.basename(path).startswith('compute-01.') and path.endswith('Z.json')
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    latest = snapshot.latest_path(node['snapdir'], 'compute-01')
    with open(path) as one, open(latest) as two:
        assert json.load(one) == json.load(two)
    doc = snapshot.load_snapshot(latest)
    assert sorted(doc['created_children']) == [a['name'], b['name']]
    assert doc['state']['providers'][node['root']]['inventories']['VGPU']['total'] == 16
    assert not [n for n in os.listdir(node['snapdir']) if n.endswith('.tmp')]
    json.dumps(result)


def test_check_mode_predicts_and_changes_nothing(embedded_backend, node):
    backend = embedded_backend
    before = comparable(provider_tree_state(backend, node['root']))
    result = reshaper.reshape_node(backend, node['root'], node['report'], check_mode=True)
    assert result['changed'] is True and result['status'] == 'reshaped'
    assert result['snapshot'] is None and result['verification'] == []
    assert result['msg'] == ('check mode: node compute-01: 2 child(ren) to create, inventory of 3 '
                             'provider(s) to change, 5 VGPU of 3 consumer(s) to move')
    assert comparable(provider_tree_state(backend, node['root'])) == before
    assert not os.path.exists(node['snapdir'])
    plan = result['plan']
    predicted = dict((c['name'], c['uuid']) for c in plan['create_children'])
    diff = result['diff']
    assert set(diff['after']['providers']) == {'compute-01', 'compute-01_pci_0000_84_00_0',
                                               'compute-01_pci_0000_85_00_0'}
    assert 'VGPU' in diff['before']['providers']['compute-01']['inventories']
    assert 'VGPU' not in diff['after']['providers']['compute-01']['inventories']
    assert set(diff['before']['consumers']) == set(node['consumers'])

    applied = reshaper.reshape_node(backend, node['root'], node['report'], snapshot_dir=node['snapdir'])
    for name, uuid in predicted.items():
        assert child_named(backend, name)['uuid'] == uuid
    # the check-mode plan is the plan that was applied (predicted child uuids included)
    assert applied['plan']['allocations'] == plan['allocations']
    assert applied['plan']['assignments'] == plan['assignments']


def test_the_root_gets_nova_34s_marks_and_the_result_says_so(embedded_backend, node):
    """nova 34 marks every compute node COMPUTE_NODE + OWNER_NOVA: the reshape adds them to the root
    after its POST /reshaper, check mode predicts that write, the result lists it with the others
    (traits_written), and a rollback takes them off again with the snapshot's root traits."""
    backend = embedded_backend
    root = node['root']
    assert backend.get_provider_traits(root)['traits'] == ['COMPUTE_ARCH_X86_64']
    check = reshaper.reshape_node(backend, root, node['report'], check_mode=True)
    marks = {'provider': 'compute-01', 'uuid': root, 'added': ['COMPUTE_NODE', 'OWNER_NOVA'], 'removed': []}
    assert check['would_write']['reshaper'] is True and check['would_write']['traits'] == [marks]
    assert backend.get_provider_traits(root)['traits'] == ['COMPUTE_ARCH_X86_64']
    done = reshaper.reshape_node(backend, root, node['report'], snapshot_dir=node['snapdir'])
    assert done['reshaper_applied'] is True and done['traits_written'] == [marks]
    assert sorted(backend.get_provider_traits(root)['traits']) == ['COMPUTE_ARCH_X86_64', 'COMPUTE_NODE', 'OWNER_NOVA']
    assert snapshot.load_snapshot(done['snapshot'])['state']['providers'][root]['traits'] == ['COMPUTE_ARCH_X86_64']
    back = reshaper.rollback_node(backend, 'compute-01', snapshot_dir=node['snapdir'])
    assert back['status'] == 'rolled_back' and back['verified'] is True, back['verification']
    assert backend.get_provider_traits(root)['traits'] == ['COMPUTE_ARCH_X86_64']


def test_a_disabled_service_s_root_gets_its_status_trait_with_the_marks(embedded_backend, node):
    """Told that nova-compute is disabled (the roll disabled it before the reshape), the reshape writes
    COMPUTE_STATUS_DISABLED with nova 34's marks, as nova reports a disabled service's root, check mode
    predicts it, and a rollback takes it off with them (the snapshot's root traits)."""
    backend = embedded_backend
    root = node['root']
    marks = {'provider': 'compute-01', 'uuid': root, 'removed': [],
             'added': ['COMPUTE_NODE', 'COMPUTE_STATUS_DISABLED', 'OWNER_NOVA']}
    check = reshaper.reshape_node(backend, root, node['report'], check_mode=True, service_disabled=True)
    assert check['would_write']['traits'] == [marks]
    done = reshaper.reshape_node(backend, root, node['report'], snapshot_dir=node['snapdir'], service_disabled=True)
    assert done['reshaper_applied'] is True and done['traits_written'] == [marks]
    assert sorted(backend.get_provider_traits(root)['traits']) == [
        'COMPUTE_ARCH_X86_64', 'COMPUTE_NODE', 'COMPUTE_STATUS_DISABLED', 'OWNER_NOVA']
    back = reshaper.rollback_node(backend, 'compute-01', snapshot_dir=node['snapdir'])
    assert back['status'] == 'rolled_back' and back['verified'] is True, back['verification']
    assert backend.get_provider_traits(root)['traits'] == ['COMPUTE_ARCH_X86_64']


def test_rerun_is_a_noop(embedded_backend, node):
    backend = embedded_backend
    reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    files = sorted(os.listdir(node['snapdir']))
    again = reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert again['changed'] is False
    assert again['status'] == 'noop'
    assert again['plan']['allocations'] == {} and again['plan']['create_children'] == []
    assert again['plan']['inventory_changes'] == []
    assert again['diff'] == {'before': {'providers': {}, 'consumers': {}},
                             'after': {'providers': {}, 'consumers': {}}}
    assert sorted(os.listdir(node['snapdir'])) == files


def _guest_without_devices(report, consumer):
    """The report with one more guest domain on the host: ``consumer``, holding no device."""
    report = copy.deepcopy(report)
    report['instances'][consumer] = {'name': 'instance-stray', 'mdevs': [], 'pci_addresses': [],
                                     'source': 'test'}
    return report


def test_unmapped_consumer_fails_and_leaves_the_node_untouched(embedded_backend, node):
    backend = embedded_backend
    stray = str(_uuid.uuid4())
    put(backend, stray, {node['root']: {'resources': {'VGPU': 1, 'VCPU': 1}}})
    before = comparable(provider_tree_state(backend, node['root']))
    # no guest domain is this consumer: a migration or an orphan, the node waits
    result = reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert result['status'] == 'deferred' and stray in result['deferred_reason']
    assert comparable(provider_tree_state(backend, node['root'])) == before
    # a guest of the host whose domain explains none of its VGPU: the plan stops
    with pytest.raises(planner.PlanError) as info:
        reshaper.reshape_node(backend, 'compute-01', _guest_without_devices(node['report'], stray),
                              snapshot_dir=node['snapdir'])
    assert stray in str(info.value)
    assert info.value.consumers == [stray]
    assert comparable(provider_tree_state(backend, node['root'])) == before
    assert backend.list_providers(name='compute-01_pci_0000_84_00_0') == []
    assert not os.path.exists(snapshot.latest_path(node['snapdir'], 'compute-01'))


def test_pack_policy_places_the_unmapped_consumer_first_fit(embedded_backend, node):
    backend = embedded_backend
    stray = str(_uuid.uuid4())
    put(backend, stray, {node['root']: {'resources': {'VGPU': 2}}})
    result = reshaper.reshape_node(backend, 'compute-01', _guest_without_devices(node['report'], stray),
                                   policy='pack', snapshot_dir=node['snapdir'])
    assert result['verified'] is True, result['verification']
    a = child_named(backend, 'compute-01_pci_0000_84_00_0')
    assert vgpu_on(backend, stray) == {a['uuid']: 2}       # first child by name with room
    assert result['plan']['assignments'][stray]['VGPU']['how'] == 'pack'


def test_migration_in_flight_defers_the_node(embedded_backend, node):
    backend = embedded_backend
    other = make_provider(backend, 'compute-02', {'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 8192}})
    names = consumers_by_name(node['report'])
    moving = names['instance-00000003']
    allocs = backend.get_allocations(moving)['allocations']
    body = dict((rp, {'resources': e['resources']}) for rp, e in allocs.items())
    body[other] = {'resources': {'VCPU': 2, 'MEMORY_MB': 2048}}
    put(backend, moving, body)
    before = comparable(provider_tree_state(backend, node['root']))

    result = reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert result['changed'] is False
    assert result['status'] == 'deferred'
    assert moving in result['deferred_reason'] and 'compute-02' in result['deferred_reason']
    assert result['plan']['allocations'] == {} and result['plan']['create_children'] == []
    assert comparable(provider_tree_state(backend, node['root'])) == before

    forced = reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'],
                                   allow_foreign_allocations=True)
    assert forced['status'] == 'reshaped' and forced['verified'] is True
    after = backend.get_allocations(moving)['allocations']
    assert after[other]['resources'] == {'VCPU': 2, 'MEMORY_MB': 2048}   # carried along


def test_concurrent_allocation_is_retried_and_kept(embedded_backend, node):
    newcomer = str(_uuid.uuid4())

    def write(inner):
        put(inner, newcomer, {node['root']: {'resources': {'VCPU': 4, 'MEMORY_MB': 1024}},
                              node['pool']: {'resources': {'DISK_GB': 5}}})

    logs = []
    backend = WritesBeforeFirstReshape(embedded_backend, write)
    result = reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'],
                                   log=logs.append, backoff=0)
    assert result['status'] == 'reshaped'
    assert result['retries'] == 1
    assert len(backend.reshape_calls) == 2
    assert any('conflict' in line for line in logs)
    assert 'after 1 retry' in result['msg']
    assert result['verified'] is True, result['verification']
    allocs = embedded_backend.get_allocations(newcomer)['allocations']
    assert allocs[node['root']]['resources'] == {'VCPU': 4, 'MEMORY_MB': 1024}
    assert allocs[node['pool']]['resources'] == {'DISK_GB': 5}
    doc = snapshot.load_snapshot(result['snapshot'])
    assert newcomer in doc['state']['allocations']      # the snapshot describes what was replaced


def test_concurrent_vgpu_consumer_is_retried_onto_its_device(embedded_backend, node):
    newcomer = str(_uuid.uuid4())

    def write(inner):
        put(inner, newcomer, {node['root']: {'resources': {'VGPU': 1}}})

    backend = WritesBeforeFirstReshape(embedded_backend, write)
    result = reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'],
                                   ownership={newcomer: {GPU_B: 1}}, backoff=0)
    assert result['retries'] == 1 and result['verified'] is True
    b = child_named(embedded_backend, 'compute-01_pci_0000_85_00_0')
    assert vgpu_on(embedded_backend, newcomer) == {b['uuid']: 1}


def test_conflicts_are_bounded(embedded_backend, node):
    class AlwaysLoses(Wrapper):
        def reshape(self, body):
            self.reshape_calls.append(body)
            raise ConcurrentUpdate('resource provider generation conflict')

    backend = AlwaysLoses(embedded_backend)
    with pytest.raises(ConcurrentUpdate) as info:
        reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'],
                              attempts=3, backoff=0)
    assert len(backend.reshape_calls) == 3
    assert 'gave up after 3 attempts' in info.value.detail


def test_forbidden_reshape_names_the_service_role(embedded_backend, node):
    class Refuses(Wrapper):
        def reshape(self, body):
            raise Forbidden('Policy does not allow placement:reshaper:reshape to be performed.')

    with pytest.raises(Forbidden) as info:
        reshaper.reshape_node(Refuses(embedded_backend), 'compute-01', node['report'],
                              snapshot_dir=node['snapdir'])
    assert info.value.status == 403
    assert '"service" role' in info.value.detail
    assert 'placement:reshaper:reshape' in info.value.detail


def test_verification_failure_is_reported(embedded_backend, node):
    names = consumers_by_name(node['report'])
    victim = names['instance-00000001']

    class LosesDisk(Wrapper):
        """A reshape that silently drops a consumer's sharing-pool allocation."""

        def reshape(self, body):
            body = json.loads(json.dumps(body))
            body['allocations'][victim]['allocations'].pop(node['pool'])
            return self.inner.reshape(body)

    result = reshaper.reshape_node(LosesDisk(embedded_backend), 'compute-01', node['report'],
                                   snapshot_dir=node['snapdir'])
    assert result['verified'] is False
    failed = dict((c['check'], c['detail']) for c in result['verification'] if not c['passed'])
    assert list(failed) == ['consumer_totals_unchanged']
    assert victim in failed['consumer_totals_unchanged']
    assert 'FAILED' in result['msg']


def test_rollback_returns_exactly_the_snapshot(embedded_backend, node):
    backend = embedded_backend
    original = comparable(provider_tree_state(backend, node['root']))
    done = reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    snap_state = comparable(snapshot.load_snapshot(done['snapshot'])['state'])

    check = reshaper.rollback_node(backend, 'compute-01', snapshot_dir=node['snapdir'], check_mode=True)
    assert check['changed'] is True and check['verification'] == []
    assert comparable(provider_tree_state(backend, node['root'])) != snap_state

    back = reshaper.rollback_node(backend, 'compute-01', snapshot_dir=node['snapdir'])
    assert back['status'] == 'rolled_back' and back['changed'] is True
    assert back['verified'] is True, back['verification']
    assert comparable(provider_tree_state(backend, node['root'])) == snap_state
    # children left (empty): the snapshot was taken after they were created
    assert child_named(backend, 'compute-01_pci_0000_84_00_0')

    again = reshaper.rollback_node(backend, 'compute-01', snapshot_dir=node['snapdir'])
    assert again['changed'] is False and again['status'] == 'noop'

    removed = reshaper.rollback_node(backend, 'compute-01', snapshot_dir=node['snapdir'],
                                     remove_children=True)
    assert removed['changed'] is True and removed['verified'] is True, removed['verification']
    assert comparable(provider_tree_state(backend, node['root'])) == original
    assert backend.list_providers(name='compute-01_pci_0000_84_00_0') == []

    # and the node can be reshaped again afterwards
    redo = reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert redo['status'] == 'reshaped' and redo['verified'] is True


def test_rollback_refuses_consumers_created_on_the_children(embedded_backend, node):
    backend = embedded_backend
    reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    a = child_named(backend, 'compute-01_pci_0000_84_00_0')
    late = str(_uuid.uuid4())
    put(backend, late, {a['uuid']: {'resources': {'VGPU': 1}}})
    before = comparable(provider_tree_state(backend, node['root']))
    with pytest.raises(planner.PlanError) as info:
        reshaper.rollback_node(backend, 'compute-01', snapshot_dir=node['snapdir'])
    assert late in info.value.detail and 'created after the snapshot' in info.value.detail
    assert info.value.consumers == [late]
    assert comparable(provider_tree_state(backend, node['root'])) == before


def test_rollback_does_not_resurrect_deleted_consumers(embedded_backend, node):
    backend = embedded_backend
    reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    names = consumers_by_name(node['report'])
    gone = names['instance-00000003']
    backend.delete_allocations(gone)
    back = reshaper.rollback_node(backend, 'compute-01', snapshot_dir=node['snapdir'])
    assert back['verified'] is True, back['verification']
    assert gone in back['plan']['gone']
    assert backend.get_allocations(gone)['allocations'] == {}
    assert any(gone in w for w in back['warnings'])


def test_rollback_refuses_a_snapshot_of_another_node(embedded_backend, node, tmp_path):
    backend = embedded_backend
    reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    make_provider(backend, 'compute-09', {'VCPU': {'total': 4}})
    with pytest.raises(snapshot.SnapshotError):
        reshaper.rollback_node(backend, 'compute-09',
                               snapshot_file=snapshot.latest_path(node['snapdir'], 'compute-01'))
    with pytest.raises(snapshot.SnapshotError) as info:
        reshaper.rollback_node(backend, 'compute-09', snapshot_dir=node['snapdir'])
    assert 'no snapshot of compute-09' in info.value.detail


def test_verify_node_on_demand(embedded_backend, node):
    backend = embedded_backend
    flat = reshaper.verify_node(backend, 'compute-01', node['report'])
    assert flat['status'] == 'verified' and flat['changed'] is False
    assert flat['verified'] is False
    failed = set(c['check'] for c in flat['verification'] if not c['passed'])
    assert {'layout_applied', 'tree_matches_layout', 'moved_classes_gone_from_root'} <= failed

    reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    good = reshaper.verify_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert good['verified'] is True, good['verification']
    assert 'consumer_totals_unchanged' in [c['check'] for c in good['verification']]

    # an allocation moved by hand to the wrong GPU is caught
    names = consumers_by_name(node['report'])
    a = child_named(backend, 'compute-01_pci_0000_84_00_0')
    b = child_named(backend, 'compute-01_pci_0000_85_00_0')
    who = names['instance-00000003']
    allocs = dict((rp, {'resources': e['resources']})
                  for rp, e in backend.get_allocations(who)['allocations'].items())
    allocs.pop(b['uuid'])
    allocs[a['uuid']] = {'resources': {'VGPU': 1}}
    put(backend, who, allocs)
    bad = reshaper.verify_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    failed = dict((c['check'], c['detail']) for c in bad['verification'] if not c['passed'])
    assert list(failed) == ['allocations_on_owned_devices']
    assert who in failed['allocations_on_owned_devices']


def test_root_must_be_a_root(embedded_backend, node):
    reshaper.reshape_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    with pytest.raises(planner.PlanError) as info:
        reshaper.reshape_node(embedded_backend, 'compute-01_pci_0000_84_00_0', node['report'],
                              check_mode=True)
    assert 'not a root provider' in info.value.detail


def test_apply_needs_a_snapshot_dir(embedded_backend, node):
    before = comparable(provider_tree_state(embedded_backend, node['root']))
    with pytest.raises(snapshot.SnapshotError):
        reshaper.reshape_node(embedded_backend, 'compute-01', node['report'])
    assert comparable(provider_tree_state(embedded_backend, node['root'])) == before


def test_sriov_and_pci_layout(embedded_backend, tmp_path):
    import fakehost

    backend = embedded_backend
    report = report_for(tmp_path / 'host', fakehost.default_sriov_host(name='compute-05'),
                        pci_filters=[{'vendor_id': '10de'}])
    root = make_provider(backend, 'compute-05', {'VCPU': {'total': 32},
                                                 'MEMORY_MB': {'total': 65536},
                                                 'SRIOV_NET_VF': {'total': 4, 'max_unit': 4}})
    holders = {}
    for pf in report['sriov_pfs']:
        for vf in pf['vfs']:
            if vf['instance_uuid']:
                holders[vf['instance_uuid']] = holders.get(vf['instance_uuid'], 0) + 1
    assert len(holders) == 2
    for consumer, n in holders.items():
        put(backend, consumer, {root: {'resources': {'VCPU': 1, 'SRIOV_NET_VF': n}}})
    options = {'sriov': {'enabled': True, 'class_style': 'sriov_net_vf'}, 'pci': {'enabled': True}}
    result = reshaper.reshape_node(backend, 'compute-05', report, layout_options=options,
                                   snapshot_dir=str(tmp_path / 'snap'))
    assert result['verified'] is True, result['verification']
    pf_child = child_named(backend, 'compute-05_0000:81:00.0')
    gpu_child = child_named(backend, 'compute-05_0000:3B:00.0')
    assert backend.get_inventories(pf_child['uuid'])['inventories']['SRIOV_NET_VF']['total'] == 4
    assert backend.get_inventories(gpu_child['uuid'])['inventories']['CUSTOM_PCI_10DE_25B6']['total'] == 1
    traits = backend.get_provider_traits(gpu_child['uuid'])['traits']
    assert set(traits) == {'COMPUTE_MANAGED_PCI_DEVICE', 'OWNER_NOVA'}
    assert 'CUSTOM_PCI_10DE_25B6' in backend.list_resource_classes()
    for consumer in holders:
        allocs = backend.get_allocations(consumer)['allocations']
        assert allocs[pf_child['uuid']]['resources'] == {'SRIOV_NET_VF': 1}
        assert allocs[root]['resources'] == {'VCPU': 1}
    again = reshaper.reshape_node(backend, 'compute-05', report, layout_options=options,
                                  snapshot_dir=str(tmp_path / 'snap'))
    assert again['status'] == 'noop'
    # a trait lost meanwhile is put back (a change, though nothing is reshaped)
    gen = backend.get_provider(gpu_child['uuid'])['generation']
    backend.ensure_trait('CUSTOM_OPERATOR_TAG')
    backend.set_provider_traits(gpu_child['uuid'], gen, ['OWNER_NOVA', 'CUSTOM_OPERATOR_TAG'])
    fixed = reshaper.reshape_node(backend, 'compute-05', report, layout_options=options,
                                  snapshot_dir=str(tmp_path / 'snap'))
    assert fixed['changed'] is True and fixed['status'] == 'reshaped' and fixed['verified'] is True
    assert 'nothing to move' in fixed['msg']
    assert fixed['diff']['after']['providers']['compute-05_0000:3B:00.0']['traits'] == [
        'COMPUTE_MANAGED_PCI_DEVICE', 'CUSTOM_OPERATOR_TAG', 'OWNER_NOVA']
    assert set(backend.get_provider_traits(gpu_child['uuid'])['traits']) == {
        'COMPUTE_MANAGED_PCI_DEVICE', 'CUSTOM_OPERATOR_TAG', 'OWNER_NOVA'}
    assert reshaper.reshape_node(backend, 'compute-05', report, layout_options=options,
                                 snapshot_dir=str(tmp_path / 'snap'))['changed'] is False


def test_numa_layout_with_pack(embedded_backend, node):
    backend = embedded_backend
    options = {'numa': {'enabled': True}}
    with pytest.raises(planner.PlanError) as info:      # strict: no NUMA ownership in the report
        reshaper.reshape_node(backend, 'compute-01', node['report'], layout_options=options,
                              check_mode=True)
    assert 'VCPU' in info.value.detail
    result = reshaper.reshape_node(backend, 'compute-01', node['report'], layout_options=options,
                                   policy='pack', snapshot_dir=node['snapdir'])
    assert result['verified'] is True, result['verification']
    n0 = child_named(backend, 'compute-01_NUMA0')
    n1 = child_named(backend, 'compute-01_NUMA1')
    inv0 = backend.get_inventories(n0['uuid'])['inventories']
    inv1 = backend.get_inventories(n1['uuid'])['inventories']
    assert inv0['VCPU']['total'] + inv1['VCPU']['total'] == 64
    assert inv0['VCPU']['allocation_ratio'] == 4.0
    assert inv0['MEMORY_MB']['total'] + inv1['MEMORY_MB']['total'] == 131072
    assert inv0['MEMORY_MB']['reserved'] + inv1['MEMORY_MB']['reserved'] == 512
    assert backend.get_inventories(node['root'])['inventories'] == {}
    assert 'HW_NUMA_ROOT' in backend.get_provider_traits(n0['uuid'])['traits']
    again = reshaper.reshape_node(backend, 'compute-01', node['report'], layout_options=options,
                                  policy='pack', snapshot_dir=node['snapdir'])
    assert again['status'] == 'noop', again['plan']
