# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 40 section 3 on the REST backend against the real Placement: the journal of a check, a
roll, a rollback (children left), a repeated rollback and a rollback with remove_children is the
diff of Placement's own state read before and after each pass (independently of journal.py), and
the writes the journal names are the requests Placement logged."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import pytest

from journal_support import assert_journal_is_the_diff, read_whole
from test_reshaper_support import flat_gpu_node, gpu_report

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper

pytestmark = pytest.mark.real


def _log_size(server):
    """Bytes of Placement's log (its placement.requestlog lines) so far; None for a server this test
    run did not start (--placement-url: no log to read)."""
    path = server.log_path
    if path is None and getattr(server, 'external', False):
        return None
    assert path and os.path.exists(path), 'the test server has no request log at %s' % path
    return os.path.getsize(path)


def _requests(server, since, method, path_part):
    """The ``method ... path_part`` requests Placement logged after ``since`` bytes of its log."""
    with open(server.log_path, 'rb') as handle:
        handle.seek(since)
        text = handle.read().decode('utf-8', 'replace')
    return [line for line in text.splitlines() if re.search(r'"?%s [^ ]*%s' % (method, re.escape(path_part)), line)]


def test_every_journal_is_the_real_placements_diff(placement_server, rest_backend, unique_name, tmp_path):
    backend = rest_backend
    name = unique_name('cn')
    report = gpu_report(tmp_path / 'host', name)
    root = flat_gpu_node(backend, name, report)['root']
    snaps = str(tmp_path / 'snaps')
    start = read_whole(backend, root)

    check = reshaper.reshape_node(backend, name, report, check_mode=True)
    assert read_whole(backend, root) == start
    assert check['journal']['mode'] == 'would'

    mark = _log_size(placement_server)
    roll = reshaper.reshape_node(backend, name, report, snapshot_dir=snaps)
    assert roll['verified'], roll['msg']
    rolled = read_whole(backend, root)
    did = assert_journal_is_the_diff(roll, start, rolled, 'did')
    assert did['providers_created'] == 2 and did['allocations_moved'] > 0
    assert check['journal']['figures'] == did
    if mark is not None:
        # one POST /reshaper, one POST /resource_providers per child the journal says it created
        assert len(_requests(placement_server, mark, 'POST', '/reshaper')) == 1
        assert len(_requests(placement_server, mark, 'POST', '/resource_providers')) == did['providers_created']

    mark = _log_size(placement_server)
    back = reshaper.rollback_node(backend, name, snapshot_dir=snaps)
    assert back['verified'], back['msg']
    restored = read_whole(backend, root)
    figures = assert_journal_is_the_diff(back, rolled, restored, 'restored', left=2)
    assert figures['allocations_moved'] == did['allocations_moved'] and figures['providers_created'] == 0
    # what the rollback's report draws as "before": the tree Placement held
    assert dict((u, p['inventories']) for u, p in back['tree_before']['providers'].items()) == \
        dict((u, p['inventories']) for u, p in rolled['providers'].items())
    if mark is not None:
        assert len(_requests(placement_server, mark, 'POST', '/reshaper')) == 1

    mark = _log_size(placement_server)
    twice = reshaper.rollback_node(backend, name, snapshot_dir=snaps)
    assert read_whole(backend, root) == restored
    figures = assert_journal_is_the_diff(twice, restored, restored, 'restored', left=2)
    assert figures['allocations_moved'] == 0 and figures['inventories_changed'] == 0
    if mark is not None:
        assert _requests(placement_server, mark, 'POST', '/reshaper') == []

    mark = _log_size(placement_server)
    gone = reshaper.rollback_node(backend, name, snapshot_dir=snaps, remove_children=True)
    figures = assert_journal_is_the_diff(gone, restored, read_whole(backend, root), 'restored')
    assert figures['providers_removed'] == 2 and figures['providers_left'] == 0
    if mark is not None:
        assert len(_requests(placement_server, mark, 'DELETE', '/resource_providers/')) == figures['providers_removed']
