# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 40 section 3, the progress line: a node's pass says the figures of its journal, in the
words of what it did; a rollback is a rollback ("moved back", "left behind"), never "reshape"."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.placement.upgrade.plugins.callback import rolling_progress
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper

from test_report_progress import _Display, _Inventory, _Play, _Result, _said
from test_reshaper_support import flat_gpu_node, gpu_report


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


def test_the_progress_line_says_the_journals_figures_in_its_words(callback, clock, embedded_backend, tmp_path):
    report = gpu_report(tmp_path / 'host', 'c1')
    flat_gpu_node(embedded_backend, 'c1', report)
    snaps = str(tmp_path / 'snaps')
    roll = reshaper.reshape_node(embedded_backend, 'c1', report, snapshot_dir=snaps)
    back = reshaper.rollback_node(embedded_backend, 'c1', snapshot_dir=snaps)
    again = reshaper.rollback_node(embedded_backend, 'c1', snapshot_dir=snaps)
    moved = roll['journal']['figures']['allocations_moved']
    assert moved and back['journal']['figures']['allocations_moved'] == moved

    inventory = _Inventory(['c1'])
    callback.v2_playbook_on_play_start(_Play('Roll', inventory, 1))
    callback.v2_runner_on_ok(_Result('c1', roll, action='placement.upgrade.reshape'))
    callback.v2_playbook_on_stats(None)
    line = next(text for text in _said(callback) if text.startswith('c1: '))
    assert ' - reshape (one POST /reshaper: consumers moved %d, allocations moved %d, child providers created 2' % (
        roll['journal']['figures']['consumers_moved'], moved) in line, line

    callback.v2_playbook_on_play_start(_Play('Roll back', inventory, 1))
    callback.v2_runner_on_ok(_Result('c1', back, action='placement.upgrade.reshape'))
    callback.v2_playbook_on_stats(None)
    line = [text for text in _said(callback) if text.startswith('c1: ')][-1]
    assert line.startswith('c1: rollback (one POST /reshaper: '), line
    assert 'allocations moved back %d' % moved in line and 'child providers left behind (empty) 2' in line, line
    assert 'reshape (' not in line and 'created' not in line and line.endswith(' - verify (passed)'), line

    # the rollback again: nothing restored, and said as a rollback's (not "already in the layout")
    callback.v2_playbook_on_play_start(_Play('Roll back again', inventory, 1))
    callback.v2_runner_on_ok(_Result('c1', again, action='placement.upgrade.reshape'))
    callback.v2_playbook_on_stats(None)
    line = [text for text in _said(callback) if text.startswith('c1: ')][-1]
    assert line == 'c1: rollback (nothing to restore: the node is at its snapshot)', line
