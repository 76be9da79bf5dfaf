# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Guards on the number of backend calls (= Placement round trips) of the reshape path.

Against a real Placement every backend call is an HTTP request (plus Keystone and a
database transaction), so the count per node is what an operator pays per node of a
rolling pass.  These tests pin the counts of ``reshaper.reshape_node`` on a fixed node
(two GPUs, three consumers, a sharing DISK_GB pool), and check that the savings do not
change what the reshape is computed from: the state the reshape and its snapshot use is
exactly what a full, fresh read of the tree gives, and a conflict still re-reads
everything from scratch.

A count that changes is not necessarily a bug: if a change adds or removes calls on
purpose, update the expected breakdown here (and docs/benchmarks.md).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import json
import uuid as _uuid

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import base as _backend
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import layout
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import snapshot
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import DuplicateName

from test_reshaper_support import (
    make_provider,
    put,
    report_for,
)

CHILD_A = 'compute-01_pci_0000_84_00_0'
CHILD_B = 'compute-01_pci_0000_85_00_0'

#: every method of the backend interface (what a RestBackend turns into one HTTP request)
BACKEND_METHODS = frozenset(
    name for name, value in vars(_backend.Backend).items()
    if callable(value) and not name.startswith('_') and name != 'close')


class CountingBackend(object):
    """Delegates to a backend and counts every call of a Backend interface method."""

    def __init__(self, inner):
        self.inner = inner
        self.calls = collections.Counter()
        self.sequence = []

    def __getattr__(self, name):
        target = getattr(self.inner, name)
        if name not in BACKEND_METHODS:
            return target

        def counted(*args, **kwargs):
            self.calls[name] += 1
            self.sequence.append(name)
            if name == 'list_providers' and kwargs.get('in_tree'):
                self.sequence[-1] = 'list_providers(in_tree)'
            return target(*args, **kwargs)
        return counted

    @property
    def total(self):
        return sum(self.calls.values())

    def reset(self):
        self.calls.clear()
        del self.sequence[:]


def full_read(backend, root_uuid):
    """A reference tree read that skips nothing: every per-provider endpoint, every consumer.

    Written out here on purpose (not ``backend.provider_tree_state``), so the reshape path's
    state is compared with what Placement answers to every request, not with itself.
    """
    providers = {}
    consumers = set()
    for prov in backend.list_providers(in_tree=root_uuid):
        uuid = prov['uuid']
        entry = dict(prov)
        entry['inventories'] = backend.get_inventories(uuid)['inventories']
        entry['usages'] = backend.get_usages(uuid)['usages']
        entry['traits'] = sorted(backend.get_provider_traits(uuid)['traits'])
        entry['aggregates'] = sorted(backend.get_aggregates(uuid)['aggregates'])
        providers[uuid] = entry
        consumers.update(backend.get_provider_allocations(uuid)['allocations'])
    allocations = dict((c, backend.get_allocations(c)) for c in sorted(consumers))
    return json.loads(json.dumps({'providers': providers, 'allocations': allocations}))


def as_the_reshape_reads(fresh, saved):
    """``fresh`` (a :func:`full_read`) with the consumers ``saved`` holds as PARTIAL bodies cut to
    their allocations on the tree (the reshape reads in full only the consumers it may write)."""
    out = {'providers': fresh['providers'], 'allocations': dict(fresh['allocations'])}
    for consumer, body in saved['allocations'].items():
        if body.get('partial'):
            out['allocations'][consumer] = {
                'allocations': dict((rp, e) for rp, e in fresh['allocations'][consumer]['allocations'].items()
                                    if rp in fresh['providers']),
                'partial': True}
    return out


def assert_written_consumers_read_fresh(body, saved, fresh):
    """Every consumer the reshape writes was read in full, and as a fresh read gives it."""
    assert body['allocations']
    for consumer, request in body['allocations'].items():
        assert not saved['allocations'][consumer].get('partial')
        assert saved['allocations'][consumer] == fresh['allocations'][consumer]
        assert request['consumer_generation'] == fresh['allocations'][consumer]['consumer_generation']


class ReadsBeforeReshape(object):
    """Takes a full reference read right before every reshape, and can write in between."""

    def __init__(self, inner, root_uuid, write_before_first=None):
        self.inner = inner
        self.root_uuid = root_uuid
        self.write_before_first = write_before_first
        self.reads = []
        self.bodies = []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def reshape(self, body):
        if not self.bodies and self.write_before_first is not None:
            self.write_before_first(self.inner)
        self.reads.append(full_read(self.inner, self.root_uuid))
        self.bodies.append(json.loads(json.dumps(body)))
        return self.inner.reshape(body)


def _reshape(backend, node, **kwargs):
    return reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'],
                                 backoff=0, **kwargs)


# Expected breakdowns.  The node: root (VCPU, MEMORY_MB, VGPU 16) + a sharing pool outside
# the tree; three consumers hold VGPU on the root and DISK_GB on the pool.
#   resolve the root                                   1 (list_providers by name)
#   read: tree listing, root x5, 3 consumers, pool x2 11
#   create the 2 children (no traits)                  2
#   the ONE reshape                                    1
#   verification read: listing, 3 providers x5, 3     19
#   the root's marks (COMPUTE_NODE, OWNER_NOVA), after the reshape, through resources.
#   set_traits: the root's traits read (with its generation), checked, one PUT 3
#   (through resources.ensure_provider before: the root read in full twice, 12)
# (before: 73 -- a full re-read after creating the children, ~9 calls per child and the
# sharing pool read again for the verification)
RESHAPE_CALLS = {
    'list_providers': 3, 'get_provider': 1, 'create_provider': 2, 'reshape': 1,
    'get_inventories': 4, 'get_usages': 4, 'get_provider_traits': 6, 'get_aggregates': 4,
    'get_provider_allocations': 4, 'get_allocations': 6,
    # nova's OWNER_NOVA on each new child: checked once per child, set with the child;
    # the root's marks: checked once, set once
    'list_traits': 3, 'set_provider_traits': 3,
}
NOOP_CALLS = {
    'list_providers': 2, 'get_provider': 1,
    'get_inventories': 3, 'get_usages': 3, 'get_provider_traits': 4, 'get_aggregates': 3,
    'get_provider_allocations': 3, 'get_allocations': 3,
}


def test_reshape_node_call_count(embedded_backend, node):
    counting = CountingBackend(embedded_backend)
    result = _reshape(counting, node)
    assert result['status'] == 'reshaped' and result['verified'] is True, result['msg']
    assert result['retries'] == 0
    assert dict(counting.calls) == RESHAPE_CALLS, counting.sequence
    assert counting.total == sum(RESHAPE_CALLS.values())


def test_noop_rerun_call_count(embedded_backend, node):
    _reshape(embedded_backend, node)
    counting = CountingBackend(embedded_backend)
    result = _reshape(counting, node)
    assert result['status'] == 'noop' and result['changed'] is False
    assert dict(counting.calls) == NOOP_CALLS, counting.sequence


def test_reshape_and_snapshot_use_a_fresh_read(embedded_backend, node):
    """The state the reshape is computed from (saved in the snapshot) equals a fresh re-read: in
    full for every consumer it writes, the tree part for the others (none here: all hold VGPU)."""
    spy = ReadsBeforeReshape(embedded_backend, node['root'])
    result = _reshape(spy, node)
    assert result['status'] == 'reshaped' and result['verified'] is True, result['msg']
    assert len(spy.bodies) == 1
    saved = json.loads(json.dumps(snapshot.load_snapshot(result['snapshot'])['state']))
    assert saved == spy.reads[0]
    assert_written_consumers_read_fresh(spy.bodies[0], saved, spy.reads[0])
    children = dict((p['name'], p) for p in saved['providers'].values() if p['uuid'] != node['root'])
    assert sorted(children) == [CHILD_A, CHILD_B]
    for child in children.values():
        # created (generation 0), then OWNER_NOVA set (generation 1), nothing else yet
        assert child['generation'] == 1 and child['inventories'] == {} and child['usages'] == {}
        assert child['traits'] == ['OWNER_NOVA']
        assert child['uuid'] == layout.child_uuid(node['root'], child['name'])
        # the reshape names the generations Placement has, not a guess
        assert spy.bodies[0]['inventories'][child['uuid']]['resource_provider_generation'] == 1


def test_concurrent_write_is_retried_from_a_fresh_read(embedded_backend, node):
    """A write between read and reshape: the retry re-reads everything, nothing patched."""
    newcomer = str(_uuid.uuid4())

    def write(inner):
        put(inner, newcomer, {node['root']: {'resources': {'VCPU': 4, 'MEMORY_MB': 1024}},
                              node['pool']: {'resources': {'DISK_GB': 5}}})

    spy = ReadsBeforeReshape(embedded_backend, node['root'], write_before_first=write)
    counting = CountingBackend(spy)
    logs = []
    result = _reshape(counting, node, log=logs.append)
    assert result['status'] == 'reshaped' and result['retries'] == 1
    assert result['verified'] is True, result['verification']
    assert any('conflict' in line for line in logs)
    assert len(spy.bodies) == 2
    # the retry's body names the generation the root has after the concurrent write
    fresh_root_gen = spy.reads[1]['providers'][node['root']]['generation']
    assert fresh_root_gen > spy.bodies[0]['inventories'][node['root']]['resource_provider_generation']
    assert spy.bodies[1]['inventories'][node['root']]['resource_provider_generation'] == fresh_root_gen
    # and the snapshot describes the state the retry replaced, newcomer included
    saved = json.loads(json.dumps(snapshot.load_snapshot(result['snapshot'])['state']))
    assert saved == as_the_reshape_reads(spy.reads[1], saved)
    assert_written_consumers_read_fresh(spy.bodies[1], saved, spy.reads[1])
    assert newcomer in saved['allocations'] and saved['allocations'][newcomer]['partial'] is True
    allocs = embedded_backend.get_allocations(newcomer)['allocations']
    assert allocs[node['root']]['resources'] == {'VCPU': 4, 'MEMORY_MB': 1024}
    assert allocs[node['pool']]['resources'] == {'DISK_GB': 5}
    # between the lost reshape and the retried one the tree was listed and every consumer the
    # reshape writes re-read in full (the newcomer holds no VGPU: its tree part is all it needs)
    first, second = [i for i, name in enumerate(counting.sequence) if name == 'reshape']
    between = counting.sequence[first + 1:second]
    assert 'list_providers(in_tree)' in between
    assert between.count('get_allocations') >= len([b for b in saved['allocations'].values() if not b.get('partial')])


def test_child_name_taken_outside_the_tree_fails_as_before(embedded_backend, node):
    """A planned child whose name another tree already uses: Placement's duplicate-name error."""
    other = make_provider(embedded_backend, 'compute-02', {'VCPU': {'total': 4}})
    squatter = make_provider(embedded_backend, CHILD_A, parent=other)
    before = full_read(embedded_backend, node['root'])
    with pytest.raises(DuplicateName) as info:
        _reshape(embedded_backend, node)
    assert CHILD_A in info.value.detail
    after = full_read(embedded_backend, node['root'])
    assert set(after['providers']) - set(before['providers']) <= set(
        [layout.child_uuid(node['root'], CHILD_B)])
    assert after['allocations'] == before['allocations']
    assert embedded_backend.get_provider(squatter)['parent_provider_uuid'] == other


def test_reshape_after_rollback_reuses_the_empty_children(embedded_backend, node):
    """Children left empty by a rollback: reused as they are, same result."""
    _reshape(embedded_backend, node)
    back = reshaper.rollback_node(embedded_backend, 'compute-01', snapshot_dir=node['snapdir'])
    assert back['verified'] is True, back['verification']
    spy = ReadsBeforeReshape(embedded_backend, node['root'])
    counting = CountingBackend(spy)
    result = _reshape(counting, node)
    assert result['status'] == 'reshaped' and result['verified'] is True, result['msg']
    assert counting.calls['create_provider'] == 0
    saved = json.loads(json.dumps(snapshot.load_snapshot(result['snapshot'])['state']))
    assert saved == spy.reads[0]


def _pci_node(backend, tmp_path):
    """An SR-IOV + PCI node: the created children carry traits (COMPUTE_MANAGED_PCI_DEVICE ...)."""
    import fakehost

    report = report_for(tmp_path / 'host', fakehost.default_sriov_host(name='compute-05'),
                        pci_filters=[{'vendor_id': '10de'}])
    root = make_provider(backend, 'compute-05', {'VCPU': {'total': 32}, 'MEMORY_MB': {'total': 65536},
                                                 'SRIOV_NET_VF': {'total': 4, 'max_unit': 4}})
    for pf in report['sriov_pfs']:
        for vf in pf['vfs']:
            if vf['instance_uuid']:
                put(backend, vf['instance_uuid'], {root: {'resources': {'VCPU': 1, 'SRIOV_NET_VF': 1}}})
    return root, report


def _reshape_pci(backend, report, tmp_path):
    return reshaper.reshape_node(backend, 'compute-05', report, snapshot_dir=str(tmp_path / 'snap'),
                                 layout_options={'sriov': {'enabled': True, 'class_style': 'sriov_net_vf'},
                                                 'pci': {'enabled': True}}, backoff=0)


def test_children_with_traits_state_matches_a_fresh_read(embedded_backend, tmp_path):
    root, report = _pci_node(embedded_backend, tmp_path)
    spy = ReadsBeforeReshape(embedded_backend, root)
    counting = CountingBackend(spy)
    result = _reshape_pci(counting, report, tmp_path)
    assert result['status'] == 'reshaped' and result['verified'] is True, result['msg']
    saved = json.loads(json.dumps(snapshot.load_snapshot(result['snapshot'])['state']))
    assert saved == spy.reads[0]
    gpu = [p for p in saved['providers'].values() if p['name'] == 'compute-05_0000:3B:00.0'][0]
    assert gpu['traits'] == ['COMPUTE_MANAGED_PCI_DEVICE', 'OWNER_NOVA'] and gpu['generation'] == 1
    # one trait check and one trait write per child that has traits, no read-back; and one
    # write of the root's marks (COMPUTE_NODE, OWNER_NOVA) after the reshape
    traited = [p for p in saved['providers'].values() if p['traits'] and p['uuid'] != root]
    assert saved['providers'][root]['traits'] == []
    assert counting.calls['set_provider_traits'] == len(traited) + 1
    assert counting.calls['create_provider'] == len(saved['providers']) - 1


class TouchesNewChild(object):
    """A concurrent writer that changes the traits of a child right after it is created."""

    def __init__(self, inner):
        self.inner = inner
        self.touched = []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def create_provider(self, name, uuid=None, parent_provider_uuid=None):
        prov = self.inner.create_provider(name, uuid=uuid, parent_provider_uuid=parent_provider_uuid)
        if not self.touched:
            self.inner.set_provider_traits(prov['uuid'], prov['generation'], ['HW_CPU_X86_AVX2'])
            self.touched.append(prov['uuid'])
        return prov


def test_write_to_a_new_child_falls_back_to_reading_it(embedded_backend, tmp_path):
    """The direct creation loses a trait race: the child and the tree are read, not guessed."""
    root, report = _pci_node(embedded_backend, tmp_path)
    racer = TouchesNewChild(embedded_backend)
    spy = ReadsBeforeReshape(racer, root)
    result = _reshape_pci(spy, report, tmp_path)
    assert result['status'] == 'reshaped' and result['verified'] is True, result['msg']
    assert result['retries'] == 0
    saved = json.loads(json.dumps(snapshot.load_snapshot(result['snapshot'])['state']))
    assert saved == spy.reads[0]
    touched = saved['providers'][racer.touched[0]]
    assert 'HW_CPU_X86_AVX2' in touched['traits']           # kept: traits are added, not replaced
    assert set(embedded_backend.get_provider_traits(racer.touched[0])['traits']) == set(touched['traits'])


def _node_with_bystanders(backend, tmp_path, name, bystanders):
    """A flat-VGPU node (three VGPU consumers) plus ``bystanders`` consumers holding no moved class
    (VCPU and MEMORY_MB on the root, DISK_GB on the sharing pool)."""
    from test_reshaper_support import flat_gpu_node, gpu_report

    report = gpu_report(tmp_path / ('host-' + name), name)
    built = flat_gpu_node(backend, name, report)
    for _i in range(bystanders):
        put(backend, str(_uuid.uuid4()), {built['root']: {'resources': {'VCPU': 1, 'MEMORY_MB': 512}},
                                          built['pool']: {'resources': {'DISK_GB': 1}}})
    built['report'] = report
    built['snapdir'] = str(tmp_path / ('snap-' + name))
    return built


def _phase_counts(backend, built, name):
    """Backend calls of one node's pass, per phase: the reshape's read (up to POST /reshaper), its
    verification (after it), ``verify_node`` with the snapshot, and the report record."""
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import report as fleet_report

    counting = CountingBackend(backend)
    result = reshaper.reshape_node(counting, name, built['report'], snapshot_dir=built['snapdir'], backoff=0)
    assert result['status'] == 'reshaped' and result['verified'] is True, result['msg']
    assert result['moved']['consumers'] == 3
    cut = counting.sequence.index('reshape') + 1
    counts = {'reshape': cut, 'verification': len(counting.sequence) - cut}
    counting.reset()
    checked = reshaper.verify_node(counting, name, built['report'], snapshot_dir=built['snapdir'])
    assert checked['verified'] is True, checked['msg']
    counts['verify_node'] = counting.total
    counting.reset()
    record, _warnings = fleet_report.collect_record(counting, {'node': name, 'provider': name, 'status': 'reshaped',
                                                               'reshape': result})
    assert record['status'] == 'reshaped' and record['touched'] is True
    assert len(record['after']['allocations']) == len(record['before']['allocations'])
    counts['report'] = counting.total
    return counts


def test_calls_do_not_grow_with_consumers_holding_no_moved_class(embedded_backend, tmp_path):
    """N=20 and N=60 consumers, the same 3 holding VGPU: the reshape, its verification, verify_node
    and the report cost the same (only the 3 consumers the reshape writes are read in full)."""
    small = _phase_counts(embedded_backend, _node_with_bystanders(embedded_backend, tmp_path, 'compute-01', 17),
                          'compute-01')
    large = _phase_counts(embedded_backend, _node_with_bystanders(embedded_backend, tmp_path, 'compute-02', 57),
                          'compute-02')
    assert large['verification'] == small['verification']
    assert large['verify_node'] == small['verify_node']
    assert large['report'] == small['report']
    assert large['reshape'] == small['reshape']


def test_known_state_rereads_exactly_the_consumers_written_since(embedded_backend, node):
    """``provider_tree_state(known=...)`` equals a full fresh read; it re-reads every consumer written
    since ``known`` (even one whose amounts on the tree did not change) and no other."""
    known = _backend.provider_tree_state(embedded_backend, node['root'])
    same, elsewhere, untouched = sorted(node['consumers'])
    held = dict((c, embedded_backend.get_allocations(c)['allocations']) for c in (same, elsewhere))
    # rewritten with the same amounts (its consumer generation moves on)
    put(embedded_backend, same, dict((rp, {'resources': e['resources']}) for rp, e in held[same].items()))
    # only its DISK_GB on the sharing pool, outside the tree, changes
    moved = dict((rp, {'resources': dict(e['resources'])}) for rp, e in held[elsewhere].items())
    moved[node['pool']]['resources']['DISK_GB'] += 1
    put(embedded_backend, elsewhere, moved)
    counting = CountingBackend(embedded_backend)
    state = _backend.provider_tree_state(counting, node['root'], known=known)
    fresh = full_read(embedded_backend, node['root'])
    # a body taken from ``known`` names the sharing pool (outside the tree) at the generation known
    # had; the writes above bumped it.  Everything else is what a fresh read gives.
    assert state['allocations'][untouched]['allocations'][node['pool']]['generation'] < \
        fresh['allocations'][untouched]['allocations'][node['pool']]['generation']
    state['allocations'][untouched]['allocations'][node['pool']]['generation'] = \
        fresh['allocations'][untouched]['allocations'][node['pool']]['generation']
    assert json.loads(json.dumps(state)) == fresh
    assert counting.calls['get_allocations'] == 2
    assert state['allocations'][elsewhere]['allocations'][node['pool']]['resources']['DISK_GB'] == \
        held[elsewhere][node['pool']]['resources']['DISK_GB'] + 1
    assert state['allocations'][untouched]['consumer_generation'] == known['allocations'][untouched]['consumer_generation']
