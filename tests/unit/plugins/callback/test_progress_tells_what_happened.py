# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 26 section 2, the progress line: a node that only got a missing trait says what was
written and is counted apart; a long deferral reason is printed once (its head, and where the
whole of it is, once the run's report is written)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.placement.upgrade.plugins.callback import rolling_progress

from test_report_progress import _Display, _Inventory, _Play, _Result, _record, _said


@pytest.fixture
def clock(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(rolling_progress.time, 'time', lambda: now[0])
    return now


@pytest.fixture
def callback():
    cb = rolling_progress.CallbackModule()
    cb._display = _Display()
    return cb


TRAIT_ONLY = {'status': 'reshaped', 'changed': True, 'verified': True, 'moved': {'consumers': 0, 'allocations': 0},
              'reshaper_applied': False, 'children_created': [],
              'traits_written': [{'provider': 'c1_pci_0000_81_00_0', 'uuid': 'u', 'added': ['OWNER_NOVA'], 'removed': []}]}

LONG = 'move in flight: consumer 7643 holds VGPU 2 on this node but no guest domain on the host is this consumer: ' \
       'either a migration in flight or an orphaned allocation; tell them apart with openstack server migration list'


def test_a_trait_only_node_says_what_was_written_and_is_counted_apart(callback, clock):
    inventory = _Inventory(['c1', 'c2'])
    inventory.batch = ['c1', 'c2']
    callback.v2_playbook_on_play_start(_Play('Roll', inventory, 2))
    callback.v2_runner_on_ok(_Result('c1', TRAIT_ONLY, action='placement.upgrade.reshape'))
    reshaped = dict(TRAIT_ONLY, reshaper_applied=True, traits_written=[], moved={'consumers': 1, 'allocations': 1})
    callback.v2_runner_on_ok(_Result('c2', reshaped, action='placement.upgrade.reshape'))
    # (with steps around the reshape the role's fact follows, saying reshaped: the update stays counted apart)
    callback.v2_runner_on_ok(_record('c1', 'reshaped'))
    callback.v2_playbook_on_stats(None)
    said = _said(callback)
    assert said[2] == ('c1: plan (0 consumers, 0 allocations) - update (traits added: OWNER_NOVA on '
                       'c1_pci_0000_81_00_0; no POST /reshaper) - verify (passed)')
    assert said[3] == 'c2: plan (1 consumer, 1 allocation) - reshape (one POST /reshaper) - verify (passed)'
    assert said[-1] == 'Roll: 2/2 nodes in 0.0 s (1 reshaped, 1 updated without a reshape, 0 skipped, 0 deferred, 0 failed)'


def test_a_long_deferral_reason_once_with_where_the_whole_of_it_is(callback, clock):
    inventory = _Inventory(['c1', 'c2'])
    inventory.batch = ['c1', 'c2']
    callback.v2_playbook_on_play_start(_Play('Roll', inventory, 2))
    callback.v2_runner_on_ok(_record('c1', 'deferred', LONG))
    callback.v2_runner_on_ok(_record('c2', 'deferred', 'resize not confirmed'))
    # a node's record stored (summarize: false) is no report; the run's report is
    callback.v2_runner_on_ok(_Result('c1', {'stored': ['/r/nodes/c1.json'], 'paths': {'html': '/r/report.html'}},
                                     action='placement.upgrade.fleet_report'))
    callback.v2_playbook_on_stats(None)
    assert _said(callback)[-2:] == ['deferred c1: %s' % LONG, 'deferred c2: resize not confirmed']

    inventory.batch = ['c1', 'c2']
    callback.v2_playbook_on_play_start(_Play('Roll again', inventory, 2))
    callback.v2_runner_on_ok(_record('c1', 'deferred', LONG))
    callback.v2_runner_on_ok(_Result('c1', {'summary_line': '2 nodes: ...', 'paths': {'html': '/r/report.html'}},
                                     action='placement.upgrade.fleet_report'))
    callback.v2_playbook_on_stats(None)
    assert _said(callback)[-1] == 'deferred c1: move in flight (the whole reason: /r/report.html#node-c1)'


def test_a_plan_says_the_node_would_only_get_the_trait(callback, clock):
    class _Context(object):
        check_mode = True

    callback.set_play_context(_Context())
    inventory = _Inventory(['c1'])
    inventory.batch = ['c1']
    callback.v2_playbook_on_play_start(_Play('Roll', inventory, 1))
    planned = {'status': 'reshaped', 'changed': True, 'verified': None, 'moved': {'consumers': 0, 'allocations': 0},
               'would_write': {'reshaper': False, 'children': [], 'traits': TRAIT_ONLY['traits_written']}}
    callback.v2_runner_on_ok(_Result('c1', planned, action='placement.upgrade.reshape'))
    callback.v2_playbook_on_stats(None)
    said = _said(callback)
    assert said[2] == ('c1: plan (0 consumers, 0 allocations) - update (planned, not applied: traits added: OWNER_NOVA '
                       'on c1_pci_0000_81_00_0; no POST /reshaper)')
    assert said[-1] == 'Roll: 1/1 nodes in 0.0 s (0 would reshape, 1 would update without a reshape, 0 skipped, ' \
        '0 deferred, 0 failed)'
