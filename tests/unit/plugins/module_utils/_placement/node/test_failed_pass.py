# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A pass that failed after its POST /reshaper is never hidden by a rerun (issue 40, section 1;
issue 46, "a wrong 204 said as Placement's"), on the embedded store.

Placement answering 204 and committing something else is played by a backend whose reshape
changes the body before the store applies it (the store answers as Placement does)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import shlex

from ansible_collections.placement.upgrade.plugins.module_utils._placement import resources as ops
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import snapshot

from test_reshaper_support import Wrapper, consumers_by_name

OTHER_PROJECT = '99999999-8a1e-4c4f-9d52-1d0b8e1c2a01'


class Edits(Wrapper):
    """Placement answering 204 to POST /reshaper after committing ``edit(body)`` instead."""

    def __init__(self, inner, edit):
        super(Edits, self).__init__(inner)
        self.edit = edit

    def reshape(self, body):
        body = json.loads(json.dumps(body))
        self.edit(body)
        return self.inner.reshape(body)


def _loses_disk(victim, pool):
    def edit(body):
        body['allocations'][victim]['allocations'].pop(pool)
    return edit


def _changes_project(victim):
    def edit(body):
        body['allocations'][victim]['project_id'] = OTHER_PROJECT
    return edit


def apply_corrections(backend, commands):
    """Run each printed correction's arguments through the allocation module's operation."""
    for command in commands:
        argv = shlex.split(command)
        assert argv[:5] == ['ansible', 'localhost', '-m', 'placement.upgrade.allocation', '-a']
        args = json.loads(argv[5])
        assert args.pop('embedded_db') == backend.path
        ops.ensure_allocations(backend, [args])


def _failures(result):
    return dict((c['check'], c['detail']) for c in result['verification'] if not c['passed'])


def test_a_lost_allocation_is_never_hidden_by_the_rerun(embedded_backend, node):
    victim = consumers_by_name(node['report'])['instance-00000001']
    first = reshaper.reshape_node(Edits(embedded_backend, _loses_disk(victim, node['pool'])), 'compute-01',
                                  node['report'], snapshot_dir=node['snapdir'], run_id='run-1')
    assert first['verified'] is False
    # issue 46: what Placement answered, that it is Placement's fault, never "reshaped"/"moved"
    assert first['status'] == 'failed'
    assert 'Placement answered 204' in first['msg'] and "this is Placement's fault" in first['msg']
    assert 'moved 5 VGPU' not in first['msg']
    assert snapshot.load_snapshot(first['snapshot'])['outcome']['status'] == 'failed'
    assert [d['consumer'] for d in first['damaged']] == [victim]
    # the two others landed as planned (3 VGPU); the victim's move is not counted
    assert first['moved']['consumers'] == 2 and first['moved']['units'] == {'VGPU': 3}

    again = reshaper.reshape_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'],
                                  run_id='run-2')
    assert again['status'] != 'noop'
    assert again['verified'] is False and again['changed'] is False
    assert again['status'] == 'failed'
    assert victim in _failures(again)['consumers_as_snapshot_or_plan']
    [item] = again['damaged']
    assert item['consumer'] == victim
    assert node['pool'] not in item['has'] and item['should'][node['pool']] == {'resources': {'DISK_GB': 20}}
    assert 'run-1' in again['msg'] and 'compute-01-pool{DISK_GB=20}' in again['msg']
    assert again['corrections'] and again['corrections'][0] in again['msg']
    # still failing while the damage is there
    third = reshaper.reshape_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert third['verified'] is False and third['status'] == 'failed'

    apply_corrections(embedded_backend, again['corrections'])
    fixed = reshaper.reshape_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'],
                                  run_id='run-3')
    assert fixed['verified'] is True and fixed['status'] == 'verified', fixed['msg']
    assert snapshot.load_snapshot(first['snapshot'])['outcome']['status'] == 'verified'
    latest = snapshot.load_snapshot(snapshot.latest_path(node['snapdir'], 'compute-01'))
    assert latest['outcome']['status'] == 'verified'
    # once verified, the node is in the layout and the pass is the usual noop
    last = reshaper.reshape_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert last['status'] == 'noop' and last['verified'] is None


def test_an_owner_changed_by_placement_fails_every_pass_and_state_verified(embedded_backend, node):
    victim = consumers_by_name(node['report'])['instance-00000002']
    first = reshaper.reshape_node(Edits(embedded_backend, _changes_project(victim)), 'compute-01',
                                  node['report'], snapshot_dir=node['snapdir'])
    assert first['verified'] is False and first['status'] == 'failed'
    again = reshaper.reshape_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert again['verified'] is False and again['status'] == 'failed'
    detail = _failures(again)['consumers_as_snapshot_or_plan']
    assert victim in detail and OTHER_PROJECT in detail and 'project_id' in detail
    verified = reshaper.verify_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert verified['verified'] is False
    assert victim in _failures(verified)['consumers_keep_their_owner']
    apply_corrections(embedded_backend, again['corrections'])
    assert embedded_backend.get_allocations(victim)['project_id'] != OTHER_PROJECT
    assert reshaper.verify_node(embedded_backend, 'compute-01', node['report'],
                                snapshot_dir=node['snapdir'])['verified'] is True
    fixed = reshaper.reshape_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert fixed['status'] == 'verified' and fixed['verified'] is True


def test_a_pass_stopped_after_its_reshape_is_checked_by_the_next(embedded_backend, node):
    """A pass killed between its POST /reshaper and its verification leaves its snapshot pending."""
    victim = consumers_by_name(node['report'])['instance-00000003']
    done = reshaper.reshape_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert done['verified'] is True
    assert snapshot.load_snapshot(done['snapshot'])['outcome']['status'] == 'verified'
    snapshot.set_outcome(done['snapshot'], {'status': 'pending'}, node['snapdir'])
    body = embedded_backend.get_allocations(victim)
    body['allocations'].pop(node['pool'])
    embedded_backend.put_allocations(victim, body)
    again = reshaper.reshape_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert again['status'] == 'failed' and again['verified'] is False
    assert 'never recorded how it ended' in again['msg']
    apply_corrections(embedded_backend, again['corrections'])
    fixed = reshaper.reshape_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert fixed['status'] == 'verified' and fixed['verified'] is True


def test_a_pass_that_failed_before_its_reshape_leaves_nothing_to_check(embedded_backend, node):
    class Refuses(Wrapper):
        def reshape(self, body):
            raise RuntimeError('boom')

    try:
        reshaper.reshape_node(Refuses(embedded_backend), 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    except Exception as exc:  # pylint: disable=broad-except
        assert 'Nothing was reshaped' in str(exc)
    else:
        raise AssertionError('the pass did not fail')
    latest = snapshot.load_snapshot(snapshot.latest_path(node['snapdir'], 'compute-01'))
    assert latest['outcome']['status'] == 'not_applied' and not snapshot.unsettled(latest)
    done = reshaper.reshape_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert done['status'] == 'reshaped' and done['verified'] is True


def test_204_with_nothing_written_is_said_as_placements(embedded_backend, node):
    class Ignores(Wrapper):
        def reshape(self, body):
            return None

    first = reshaper.reshape_node(Ignores(embedded_backend), 'compute-01', node['report'],
                                  snapshot_dir=node['snapdir'])
    assert first['verified'] is False
    assert first['status'] == 'failed'
    assert not first['msg'].startswith('node compute-01: created')
    assert 'moved 5 VGPU' not in first['msg']
    assert 'Placement answered 204' in first['msg'] and "this is Placement's fault" in first['msg']
    # what Placement holds moved, not what the body asked: nothing
    assert first['moved'] == {'consumers': 0, 'allocations': 0, 'units': {}}
    # nothing moved: the consumers hold what they held, so a rerun reshapes the node
    again = reshaper.reshape_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert again['status'] == 'reshaped' and again['verified'] is True


def test_a_rollback_rerun_after_a_kill_with_remove_children_verifies(embedded_backend, node):
    """Killed after its reverse reshape and the removal of one child: the rerun removes the other
    and verifies the node right (the child the killed run removed is not 'gone' from the snapshot)."""
    done = reshaper.reshape_node(embedded_backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert done['verified'] is True
    # what the killed rollback did: the reverse reshape, then one of the two DELETEs
    first = reshaper.rollback_node(embedded_backend, 'compute-01', snapshot_dir=node['snapdir'])
    assert first['status'] == 'rolled_back' and first['verified'] is True
    child = embedded_backend.list_providers(name='compute-01_pci_0000_84_00_0')[0]
    embedded_backend.delete_provider(child['uuid'])
    rerun = reshaper.rollback_node(embedded_backend, 'compute-01', snapshot_dir=node['snapdir'],
                                   remove_children=True)
    assert rerun['verified'] is True, rerun['msg']
    assert 'FAILED' not in rerun['msg']
    assert embedded_backend.list_providers(name='compute-01_pci_0000_85_00_0') == []
    again = reshaper.rollback_node(embedded_backend, 'compute-01', snapshot_dir=node['snapdir'],
                                   remove_children=True)
    assert again['verified'] is True and again['status'] == 'noop', again['msg']
