# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A killed write of a timestamped snapshot left ``.<root>.<stamp>.json.<random>.tmp`` forever: its
name is written once, so the writer's cleanup of its own path never met it (issue 40).  The next
snapshot of the root removes every leftover of that pattern, and nothing else."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.placement.upgrade.plugins.module_utils._placement import files
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import snapshot

ROOT = {'uuid': '2c1c4e6a-0d0f-4c3e-9f7b-6a4f5e3d2c1b', 'name': 'compute-01'}
STATE = {'providers': {}, 'allocations': {}}


def _old(path):
    with open(path, 'w') as handle:
        handle.write('{"partial": ')
    past = files.STARTED - 3600
    os.utime(path, (past, past))
    return path


def test_the_next_snapshot_removes_the_leftovers_of_killed_timestamped_writes(tmp_path):
    snapdir = str(tmp_path / 'snaps')
    os.makedirs(snapdir)
    stem = snapshot.safe_name('compute-01')
    killed = [_old(os.path.join(snapdir, '.%s.20261127T101010.123456Z.json.ab12cd34.tmp' % stem)),
              _old(os.path.join(snapdir, '.%s.20261126T090909.000001Z.json.zz_9xy01.tmp' % stem))]
    kept = [
        _old(os.path.join(snapdir, '.compute-02.20261127T101010.123456Z.json.ab12cd34.tmp')),   # another root's
        _old(os.path.join(snapdir, '.%s.20261127T101010.123456Z.json.ab12cd34.tmp.keep' % stem)),  # not the pattern
        _old(os.path.join(snapdir, '%s.20261127T101010.123456Z.json' % stem)),                   # a snapshot
    ]
    # a write in progress in another process (newer than this one) is left too
    fresh = os.path.join(snapdir, '.%s.20261128T000000.000000Z.json.qq11ww22.tmp' % stem)
    with open(fresh, 'w') as handle:
        handle.write('{')
    files.take_removed()
    path = snapshot.write_snapshot(snapdir, ROOT, STATE)
    for leftover in killed:
        assert not os.path.exists(leftover), leftover
    for other in kept + [fresh, path, snapshot.latest_path(snapdir, 'compute-01')]:
        assert os.path.exists(other), other
    assert sorted(files.take_removed()) == sorted(killed)      # told in the task's result (leftovers)
