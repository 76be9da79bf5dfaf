# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Moves in flight (inflight.py): every form nova uses defers the node, untouched, and the
rerun reshapes it once the move is over."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import uuid as _uuid

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import inflight
from ansible_collections.placement.upgrade.plugins.module_utils._placement.rules import allocations as allocation_rules
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state

from test_reshaper_support import (WritesBeforeFirstReshape, comparable, consumers_by_name, make_provider, put,
                                   put_untyped)

ROOT = 'a0000000-0000-4000-8000-000000000001'
CHILD = 'a0000000-0000-4000-8000-000000000004'
POOL = 'a0000000-0000-4000-8000-000000000002'
OTHER = 'a0000000-0000-4000-8000-000000000003'
INST = '11111111-1111-4111-8111-111111111111'
MIG = '22222222-2222-4222-8222-222222222222'
FOREIGN = {POOL: {'name': 'pool', 'traits': ['MISC_SHARES_VIA_AGGREGATE']},
           OTHER: {'name': 'cn2', 'traits': []}}


def _state(**consumers):
    allocations = {}
    for consumer, (allocs, ctype) in consumers.items():
        allocations[consumer] = {'allocations': dict((rp, {'resources': r}) for rp, r in allocs.items()),
                                 'consumer_type': ctype}
    return {'providers': {ROOT: {}, CHILD: {}}, 'allocations': allocations}


def _find(state, **kwargs):
    kwargs.setdefault('foreign', FOREIGN)
    kwargs.setdefault('touched', ('VGPU',))
    kwargs.setdefault('instances', [INST])
    return inflight.find(state, 'cn1', [ROOT, CHILD], **kwargs)


def _mig(status='finished', source='cn1', dest='cn2', kind='resize', uuid=MIG):
    return {'uuid': uuid, 'instance_uuid': INST, 'status': status, 'migration_type': kind,
            'source_node': source, 'dest_node': dest, 'source_compute': source, 'dest_compute': dest}


def test_migration_from_nova_names_the_instance_and_what_to_do():
    state = _state(**{MIG: ({ROOT: {'VCPU': 2, 'VGPU': 1}, POOL: {'DISK_GB': 20}}, 'unknown')})
    reasons, remarks, named = _find(state, migrations=[_mig()])
    assert len(reasons) == 1 and named == [MIG] and remarks == []
    assert 'resize %s of instance %s (status finished, from cn1 to cn2)' % (MIG, INST) in reasons[0]
    assert 'source allocations on this node (VCPU 2, VGPU 1)' in reasons[0]
    assert 'confirm or revert' in reasons[0]
    # a record that is over is not a move in flight: the consumer is then judged as any other
    reasons, _remarks, _named = _find(state, migrations=[_mig(status='confirmed')])
    assert 'migration in flight' in reasons[0] and 'orphan' in reasons[0]


def test_migration_from_nova_without_allocations_here_still_defers_both_ends():
    state = _state(**{INST: ({ROOT: {'VCPU': 2}}, 'INSTANCE')})
    for source, dest in (('cn1', 'cn2'), ('cn0', 'cn1')):
        reasons, _remarks, named = _find(state, migrations=[_mig(source=source, dest=dest, kind='live-migration',
                                                                 status='running')])
        assert named == [MIG] and 'nova reports live-migration %s' % MIG in reasons[0]
    assert _find(state, migrations=[_mig(source='cn7', dest='cn8')]) == ([], [], [])


def test_same_host_resize_and_evacuation_are_named_so():
    same = _mig(source='cn1', dest='cn1')
    state = _state(**{MIG: ({ROOT: {'VGPU': 1}}, 'unknown'), INST: ({ROOT: {'VGPU': 1}}, 'INSTANCE')})
    reasons, _remarks, _named = _find(state, migrations=[same])
    assert 'to the same host' in reasons[0]
    evac = _mig(kind='evacuation', status='accepted')
    reasons, _remarks, _named = _find(_state(**{MIG: ({ROOT: {'VGPU': 1}}, 'unknown')}), migrations=[evac])
    assert 'source\'s nova-compute' in reasons[0]


def test_consumer_type_migration_defers_even_without_nova():
    state = _state(**{MIG: ({ROOT: {'VCPU': 1}}, 'MIGRATION')})
    reasons, _remarks, named = _find(state, instances=None)
    assert named == [MIG] and 'consumer_type MIGRATION' in reasons[0]


def test_a_consumer_no_domain_is_may_be_a_migration_or_an_orphan():
    holds_vgpu = _state(**{MIG: ({ROOT: {'VCPU': 1, 'VGPU': 1}}, 'unknown')})
    reasons, remarks, named = _find(holds_vgpu)
    assert named == [MIG] and remarks == []
    for words in ('migration in flight', 'orphaned allocation', 'openstack server migration list',
                  'nova-manage placement audit', 'the ownership option'):
        assert words in reasons[0]
    # holding nothing this reshape moves: left as it is, said as a remark
    cpu_only = _state(**{MIG: ({ROOT: {'VCPU': 1}}, 'unknown')})
    reasons, remarks, named = _find(cpu_only)
    assert reasons == [] and named == [] and 'left as it is' in remarks[0]
    # only VCPU moving (VCPU -> PCPU): the hint is the pcpu option
    reasons, _remarks, _named = _find(cpu_only, touched=('VCPU',))
    assert 'pcpu.pinned or pcpu.unpinned' in reasons[0]
    # the operator placed it explicitly, or the host's domains are unknown: no suspicion
    assert _find(holds_vgpu, explained=[MIG]) == ([], [], [])
    assert _find(holds_vgpu, instances=None) == ([], [], [])
    # the domain list is compared case-insensitively
    assert _find(holds_vgpu, instances=[MIG.upper()]) == ([], [], [])


def test_an_orphan_nova_confirmed_is_named_as_one_with_the_command():
    holds_vgpu = _state(**{MIG: ({ROOT: {'VCPU': 1, 'VGPU': 1}}, 'unknown')})
    reasons, remarks, named = _find(holds_vgpu, orphans=[MIG.upper()], root_uuid=ROOT)
    assert named == [MIG] and remarks == []
    assert 'nova has no instance and no migration in flight with that uuid: an orphaned allocation' in reasons[0]
    assert 'nova-manage placement audit --resource_provider %s --verbose --delete' % ROOT in reasons[0]
    assert 'openstack server migration list' not in reasons[0]        # no guessing any more
    # holding nothing the reshape moves: a remark with the same command
    cpu_only = _state(**{MIG: ({ROOT: {'VCPU': 1}}, 'unknown')})
    reasons, remarks, _named = _find(cpu_only, orphans=[MIG], root_uuid=ROOT)
    assert reasons == [] and 'orphaned allocation' in remarks[0] and '--delete' in remarks[0]


def test_two_compute_trees_but_not_a_sharing_pool():
    pool_only = _state(**{INST: ({ROOT: {'VGPU': 1}, POOL: {'DISK_GB': 10}}, 'INSTANCE')})
    assert _find(pool_only) == ([], [], [])
    both = _state(**{INST: ({ROOT: {'VGPU': 1}, OTHER: {'VCPU': 1}}, 'INSTANCE')})
    reasons, _remarks, named = _find(both)
    assert named == [INST] and 'evacuation' in reasons[0] and '%s (cn2)' % OTHER in reasons[0]
    reasons, remarks, named = _find(both, two_trees_ok=True)
    assert reasons == [] and named == [] and remarks[0].startswith('allow_foreign_allocations: ')


# -- through the reshape, on the embedded Placement (the node fixture: tests/unit/conftest.py) ----

def test_same_host_resize_waits_then_the_rerun_reshapes(embedded_backend, node):
    backend = embedded_backend
    resized = consumers_by_name(node['report'])['instance-00000003']
    migration = str(_uuid.uuid4())
    old = allocation_rules.strip_allocations(backend.get_allocations(resized)['allocations'])
    put_untyped(backend, node['root'], migration, old)
    assert backend.get_allocations(migration)['consumer_type'] == 'unknown'
    before = comparable(provider_tree_state(backend, node['root']))
    result = reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert result['status'] == 'deferred' and result['changed'] is False
    assert 'consumer %s holds' % migration in result['deferred_reason']
    assert comparable(provider_tree_state(backend, node['root'])) == before
    # nova's API names it: the reason says which instance and what to do
    record = {'uuid': migration, 'instance_uuid': resized, 'status': 'finished', 'migration_type': 'resize',
              'source_node': 'compute-01', 'dest_node': 'compute-01'}
    result = reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'],
                                   check_mode=True, migrations=[record])
    assert 'resize %s of instance %s' % (migration, resized) in result['deferred_reason']
    assert 'to the same host' in result['deferred_reason']
    # the resize is confirmed (nova deletes the migration's allocations): the rerun reshapes
    backend.delete_allocations(migration)
    result = reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert result['status'] == 'reshaped' and result['verified'] is True, result['msg']


def test_a_node_already_reshaped_stays_skipped_with_a_move_in_flight(embedded_backend, node):
    backend = embedded_backend
    assert reshaper.reshape_node(backend, 'compute-01', node['report'],
                                 snapshot_dir=node['snapdir'])['status'] == 'reshaped'
    moving = consumers_by_name(node['report'])['instance-00000003']
    other = make_provider(backend, 'compute-02', {'VCPU': {'total': 8}})
    allocs = allocation_rules.strip_allocations(backend.get_allocations(moving)['allocations'])
    allocs[other] = {'resources': {'VCPU': 1}}
    put(backend, moving, allocs)
    result = reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert result['status'] == 'noop' and result['changed'] is False
    assert any(moving in w and 'nothing to reshape here' in w for w in result['warnings'])


def test_a_migration_starting_between_plan_and_reshape_is_replanned_not_overwritten(embedded_backend, node):
    migration = str(_uuid.uuid4())
    resized = consumers_by_name(node['report'])['instance-00000003']
    old = allocation_rules.strip_allocations(embedded_backend.get_allocations(resized)['allocations'])

    def start_migration(inner):
        # nova swaps the source allocations to the migration record (move_allocations)
        put_untyped(inner, node['root'], migration, old)
        put(inner, resized, {node['pool']: {'resources': {'DISK_GB': 20}}})

    backend = WritesBeforeFirstReshape(embedded_backend, start_migration)
    result = reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'],
                                   backoff=0)
    assert result['status'] == 'deferred' and result['retries'] == 1
    assert len(backend.reshape_calls) == 1                # the first one lost on generations
    assert migration in result['deferred_reason']
    # the migration's allocations are as nova wrote them, the node still flat
    assert embedded_backend.get_allocations(migration)['allocations'][node['root']]['resources'] == \
        old[node['root']]['resources']
    assert 'VGPU' in embedded_backend.get_inventories(node['root'])['inventories']
    # the children made before it are removed again (nothing was reshaped, nothing is left)
    children = [p for p in embedded_backend.list_providers(in_tree=node['root']) if p['uuid'] != node['root']]
    assert children == []
    assert result['changed'] is False
    assert any('were removed again' in w for w in result['warnings'])
    embedded_backend.delete_allocations(migration)
    rerun = reshaper.reshape_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert rerun['status'] == 'reshaped' and rerun['verified'] is True
    assert len(rerun['plan']['children']) == 2


# -- what a consumer no domain is gets said about it (issue 26) ------------------------------------

def _devices(held_by_inst=True, free=1):
    mdevs = [{'uuid': 'b0000000-0000-4000-8000-00000000000%d' % i, 'type': 'nvidia-35', 'instance_uuid': None}
             for i in range(1 + free)]
    if held_by_inst:
        mdevs[0]['instance_uuid'] = INST
    return {'gpus': [{'address': '0000:84:00.0', 'mdevs': mdevs}],
            'instances': {INST: {'name': 'instance-0000002a', 'mdevs': [mdevs[0]['uuid']] if held_by_inst else []}}}


def test_a_consumer_no_domain_is_gets_what_is_known_and_commands_that_tell():
    """Its consumer_type, the host's mdevs (free, held), the domain that holds one without holding
    VGPU here (the likely instance of the migration), commands that run as printed."""
    state = _state(**{MIG: ({ROOT: {'VCPU': 1, 'VGPU': 1}}, 'unknown'), INST: ({OTHER: {'VCPU': 1}}, 'INSTANCE')})
    reasons, _remarks, named = _find(state, devices=_devices(), root_uuid=ROOT)
    assert named == [MIG]
    text = reasons[0]
    assert "Placement's consumer_type for it is unknown" in text, text
    assert "1 of the host's 2 mdevs is free, held by domains: instance-0000002a (%s) 1" % INST in text, text
    assert ('domain instance-0000002a (%s) holds 1 mdev(s) but holds no VGPU on this node in Placement: likely the '
            'instance of this migration' % INST) in text, text
    for command in ('OS_COMPUTE_API_VERSION=2.59 openstack server migration list --host cn1',
                    'openstack server show %s' % MIG,
                    'nova-manage placement audit --resource_provider %s --verbose' % ROOT,
                    'openstack server resize confirm %s' % INST, 'openstack server resize revert %s' % INST):
        assert '`%s`' % command in text, (command, text)
    assert '<' not in text                          # no placeholder in a command
    # every mdev free, none held: said so, no instance guessed
    reasons, _remarks, _named = _find(state, devices=_devices(held_by_inst=False), root_uuid=ROOT)
    assert "2 of the host's 2 mdevs are free" in reasons[0] and 'likely the instance' not in reasons[0]
    assert 'resize confirm' not in reasons[0]
    # a domain holding an mdev AND VGPU here is that consumer's own, not a migration's
    mine = _state(**{MIG: ({ROOT: {'VGPU': 1}}, 'unknown'), INST: ({ROOT: {'VGPU': 1}}, 'INSTANCE')})
    reasons, _remarks, _named = _find(mine, devices=_devices(), root_uuid=ROOT)
    assert 'likely the instance' not in reasons[0] and 'held by domains: instance-0000002a' in reasons[0]


def test_resize_hints_name_the_instance():
    """The confirm/revert hint named <instance>; nova's record, or the host's devices, tell it."""
    state = _state(**{MIG: ({ROOT: {'VGPU': 1}}, 'unknown')})
    reasons, _remarks, _named = _find(state, migrations=[_mig()])
    assert '`openstack server resize confirm %s` or `openstack server resize revert %s`' % (INST, INST) in reasons[0]
    reasons, _remarks, _named = _find(state, migrations=[_mig(kind='live-migration', status='running')])
    assert '`OS_COMPUTE_API_VERSION=2.59 openstack server migration abort %s %s`' % (INST, MIG) in reasons[0]
    typed = _state(**{MIG: ({ROOT: {'VGPU': 1}}, 'MIGRATION'), INST: ({OTHER: {'VGPU': 1}}, 'INSTANCE')})
    reasons, _remarks, _named = _find(typed, devices=_devices())
    assert 'openstack server resize confirm %s' % INST in reasons[0] and '<instance>' not in reasons[0]
    # nothing tells the instance: the command that finds it, no placeholder command
    reasons, _remarks, _named = _find(typed, instances=None)
    assert '<instance>' not in reasons[0] and '`OS_COMPUTE_API_VERSION=2.59 openstack server migration list ' \
        '--host cn1`' in reasons[0]


def test_a_cold_migration_away_names_its_instance_through_the_reshape(embedded_backend, node):
    """nova's cold migration before confirm: the migration's uuid (untyped) holds the source's
    allocations, the instance holds the destination's, its domain still holds the mdev here."""
    backend = embedded_backend
    moving = consumers_by_name(node['report'])['instance-00000003']
    migration = str(_uuid.uuid4())
    old = allocation_rules.strip_allocations(backend.get_allocations(moving)['allocations'])
    put_untyped(backend, node['root'], migration, old)
    other = make_provider(backend, 'compute-02', {'VCPU': {'total': 8}, 'VGPU': {'total': 4}})
    put(backend, moving, {other: {'resources': {'VCPU': 2, 'VGPU': old[node['root']]['resources']['VGPU']}}})
    result = reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert result['status'] == 'deferred', result['msg']
    reason = result['deferred_reason']
    assert "Placement's consumer_type for it is unknown" in reason, reason
    assert 'domain instance-00000003 (%s) holds' % moving in reason and 'likely the instance of this migration' in reason
    assert '`openstack server resize confirm %s`' % moving in reason, reason
    assert '`openstack server show %s`' % migration in reason
