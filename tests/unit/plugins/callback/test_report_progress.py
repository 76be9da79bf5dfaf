# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rolling_progress callback: batches, outcome counts, time left, the end-of-run lines."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.placement.upgrade.plugins.callback import rolling_progress


class _Host(object):
    def __init__(self, name):
        self.name = name

    def get_name(self):
        return self.name


class _Inventory(object):
    def __init__(self, hosts):
        self.hosts = hosts
        self.batch = hosts

    def get_hosts(self, pattern, ignore_restrictions=False):
        return [_Host(h) for h in (self.hosts if ignore_restrictions else self.batch)]


class _VariableManager(object):
    def __init__(self, inventory):
        self._inventory = inventory


class _Play(object):
    def __init__(self, name, inventory, serial):
        self.name = name
        self.hosts = 'compute'
        self.serial = serial
        self._uuid = 'play-' + name
        self._vm = _VariableManager(inventory)

    def get_name(self):
        return self.name

    def get_variable_manager(self):
        return self._vm


class _Task(object):
    def __init__(self, action, check_mode=None):
        self.action = action
        self.check_mode = check_mode


class _Result(object):
    def __init__(self, host, result, action='ansible.builtin.set_fact', check_mode=None):
        self._host = _Host(host)
        self._result = result
        self._task = _Task(action, check_mode)


class _Display(object):
    def __init__(self):
        self.lines = []

    def display(self, msg, color=None, **kwargs):
        self.lines.append(msg)


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


def _record(host, status, reason=''):
    fact = {'node': host, 'status': status, 'reason': reason}
    return _Result(host, {'ansible_facts': {'rolling_reshape_result': fact}})


def _said(cb):
    return [line.replace('[rolling_progress] ', '') for line in cb._display.lines]


def test_batches_counts_and_time_left(callback, clock):
    inventory = _Inventory(['c1', 'c2', 'c3', 'c4', 'c5'])
    play = _Play('Roll through the compute nodes', inventory, [1, 2])
    inventory.batch = ['c1']
    callback.v2_playbook_on_play_start(play)
    clock[0] += 10
    callback.v2_runner_on_ok(_record('c1', 'reshaped'))
    inventory.batch = ['c2', 'c3']
    callback.v2_playbook_on_play_start(play)
    clock[0] += 10
    callback.v2_runner_on_ok(_Result('c2', {'status': 'noop'}, action='placement.upgrade.reshape'))
    callback.v2_runner_on_ok(_record('c3', 'deferred', 'migration in flight'))
    inventory.batch = ['c4', 'c5']
    callback.v2_playbook_on_play_start(play)
    clock[0] += 5
    callback.v2_runner_on_ok(_record('c4', 'reshaped'))
    callback.v2_runner_on_ok(_record('c5', 'reshaped'))
    callback.v2_playbook_on_stats(None)
    assert _said(callback) == [
        'rolling through 5 nodes: Roll through the compute nodes',
        'batch 1: c1 (nodes 1-1 of 5)',
        'batch 1 done in 10.0 s: 1/5 nodes (1 reshaped, 0 skipped, 0 deferred, 0 failed); elapsed 10.0 s, '
        'about 40.0 s left for 4 more nodes',
        'batch 2: c2, c3 (nodes 2-3 of 5)',
        'c2: plan (nothing to move: already in the layout)',
        'batch 2 done in 10.0 s: 3/5 nodes (1 reshaped, 1 skipped, 1 deferred, 0 failed); elapsed 20.0 s, '
        'about 13.3 s left for 2 more nodes',
        'batch 3: c4, c5 (nodes 4-5 of 5)',
        'batch 3 done in 5.0 s: 5/5 nodes (3 reshaped, 1 skipped, 1 deferred, 0 failed); elapsed 25.0 s',
        'Roll through the compute nodes: 5/5 nodes in 25.0 s (3 reshaped, 1 skipped, 1 deferred, 0 failed)',
        'deferred c3: migration in flight',
    ]


def test_a_failure_is_named_and_the_rest_listed_untouched(callback, clock):
    inventory = _Inventory(['c1', 'c2', 'c3'])
    play = _Play('Roll', inventory, 1)
    inventory.batch = ['c1']
    callback.v2_playbook_on_play_start(play)
    clock[0] += 2
    # the task failure, then the role's rescue records the reason
    callback.v2_runner_on_failed(_Result('c1', {'msg': 'cannot assign moved resources'},
                                         action='placement.upgrade.reshape'))
    callback.v2_runner_on_ok(_record('c1', 'failed', 'cannot assign moved resources (task: Reshape)'))
    callback.v2_playbook_on_stats(None)
    said = _said(callback)
    assert said[2] == 'batch 1 done in 2.0 s: 1/3 nodes (0 reshaped, 0 skipped, 0 deferred, 1 failed); ' \
                      'elapsed 2.0 s, about 4.0 s left for 2 more nodes'
    assert said[3] == 'c1 failed: cannot assign moved resources (task: Reshape)'
    assert said[-2:] == ['stopped at c1: cannot assign moved resources (task: Reshape)',
                         'not reached (untouched): c2, c3']


def test_plays_without_serial_and_ignored_errors_are_not_reported(callback, clock):
    inventory = _Inventory(['c1', 'c2'])
    callback.v2_playbook_on_play_start(_Play('Pre-flight', inventory, None))
    callback.v2_runner_on_failed(_Result('c1', {'msg': 'x'}), ignore_errors=True)
    callback.v2_runner_on_ok(_record('c1', 'reshaped'))
    callback.v2_playbook_on_stats(None)
    assert callback._display.lines == []


def test_check_mode_counts_what_would_be_reshaped(callback, clock):
    class _Context(object):
        check_mode = True

    callback.set_play_context(_Context())
    inventory = _Inventory(['c1', 'c2'])
    inventory.batch = ['c1', 'c2']
    callback.v2_playbook_on_play_start(_Play('Roll', inventory, '100%'))
    callback.v2_runner_on_ok(_record('c1', 'reshaped'))
    callback.v2_runner_on_ok(_record('c2', 'noop'))
    callback.v2_playbook_on_stats(None)
    assert _said(callback)[-1] == 'Roll: 2/2 nodes in 0.0 s (1 would reshape, 1 skipped, 0 deferred, 0 failed)'


def test_each_node_s_steps_are_named(callback, clock):
    """discover, plan, reshape, verify: one line per node when its reshape task ends."""
    inventory = _Inventory(['c1', 'c2', 'c3'])
    play = _Play('Roll', inventory, 3)
    callback.v2_playbook_on_play_start(play)
    gpus = {'gpus': [{}, {}], 'sriov_pfs': [], 'instances': {'a': {}, 'b': {}, 'c': {}}}
    callback.v2_runner_on_ok(_Result('c1', {'devices': gpus}, action='placement.upgrade.device_info'))
    callback.v2_runner_on_ok(_Result('c2', {'devices': {'pci_devices': [{}], 'instances': {'a': {}}}},
                                     action='placement.upgrade.device_info'))
    callback.v2_runner_on_ok(_Result('c3', {'devices': {}}, action='placement.upgrade.device_info'))
    # the plan of the hooks' path (check mode on the task), then the reshape itself
    planned = {'status': 'reshaped', 'moved': {'consumers': 2, 'allocations': 3, 'units': {'VGPU': 3}}, 'verified': None}
    callback.v2_runner_on_ok(_Result('c1', planned, action='placement.upgrade.reshape', check_mode=True))
    done = dict(planned, verified=True, retries=1)
    callback.v2_runner_on_ok(_Result('c1', done, action='placement.upgrade.reshape'))
    callback.v2_runner_on_ok(_Result('c2', {'status': 'deferred', 'deferred_reason': 'move in flight: x holds',
                                            'moved': {}}, action='placement.upgrade.reshape'))
    callback.v2_runner_on_failed(_Result('c3', {'msg': 'boom'}, action='placement.upgrade.reshape'))
    said = _said(callback)
    assert said[2:5] == [
        'c1: discover (2 GPUs, 3 guests) - plan (2 consumers, 3 allocations: VGPU 3) - reshape (planned, not applied)',
        'c1: plan (2 consumers, 3 allocations: VGPU 3) - reshape (one POST /reshaper, 1 retry) - verify (passed)',
        'c2: discover (1 PCI device, 1 guest) - plan (deferred: move in flight)',
    ]
    assert not [line for line in said if line.startswith('c3:')], 'a failed task names no steps'


def test_a_roll_of_one_node_says_one_node(callback, clock):
    """issue 40: "rolling through 1 nodes"."""
    inventory = _Inventory(['c1'])
    play = _Play('Roll through the compute nodes', inventory, [1])
    inventory.batch = ['c1']
    callback.v2_playbook_on_play_start(play)
    assert _said(callback)[0] == 'rolling through 1 node: Roll through the compute nodes'
