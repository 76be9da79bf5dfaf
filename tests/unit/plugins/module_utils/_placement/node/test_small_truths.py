# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 46 on the node pass: a disk full mid-reshape leads with what it left; the loser of two
concurrent reshapes of one node is not 'reshaped'."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils import common
from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper

from test_reshaper_support import Wrapper


def _children(backend, root):
    return sorted(p['name'] for p in backend.list_providers(in_tree=root) if p['uuid'] != root)


class DiskFull(Wrapper):
    """The embedded store's disk fills up after the children were created: the reshape and the
    clean-up's DELETEs fail with the store's own StoreFull."""

    def _full(self):
        return errors.StoreFull('embedded placement database %s: the disk (or the database) is full (SQLite: '
                                'database or disk is full, during a write). Nothing was written: the transaction '
                                'was rolled back. Free space on the file system holding it and run the task again.'
                                % self.inner.path, path=self.inner.path, sqlite_error='database or disk is full')

    def reshape(self, body):
        raise self._full()

    def delete_provider(self, uuid):
        raise self._full()


def test_a_full_disk_mid_reshape_leads_with_what_it_left(embedded_backend, node):
    with pytest.raises(errors.StoreFull) as info:
        reshaper.reshape_node(DiskFull(embedded_backend), 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    left = _children(embedded_backend, node['root'])
    assert len(left) == 2
    detail = info.value.detail
    assert detail.startswith('2 child provider(s) created by this run are LEFT in Placement'), detail
    head, _sep, _rest = detail.partition('Nothing was reshaped')
    assert all(name in head for name in left)
    assert 'Nothing was written' not in head
    # the failed task says something stayed
    failed = common.error_result(info.value)
    assert failed['changed'] is True
    assert failed['msg'].startswith('2 child provider(s) created by this run are LEFT')


def test_a_full_disk_with_nothing_left_is_unchanged(embedded_backend, node):
    class FullOnReshape(DiskFull):
        def delete_provider(self, uuid):
            return self.inner.delete_provider(uuid)

    with pytest.raises(errors.StoreFull) as info:
        reshaper.reshape_node(FullOnReshape(embedded_backend), 'compute-01', node['report'],
                              snapshot_dir=node['snapdir'])
    assert _children(embedded_backend, node['root']) == []
    assert common.error_result(info.value).get('changed', False) is False
    assert 'were removed again' in info.value.detail


class WinnerFirst(Wrapper):
    """Another controller's reshape of the same node runs to its end right after this pass planned,
    before this pass creates its first child."""

    def __init__(self, inner, winner):
        super(WinnerFirst, self).__init__(inner)
        self.winner = winner
        self.won = None

    def create_provider(self, *args, **kwargs):
        if self.won is None:
            self.won = self.winner()
        return self.inner.create_provider(*args, **kwargs)


def test_the_loser_of_two_concurrent_reshapes_is_noop(embedded_backend, node, tmp_path):
    def winner():
        return reshaper.reshape_node(embedded_backend, 'compute-01', node['report'],
                                     snapshot_dir=str(tmp_path / 'winner'))

    backend = WinnerFirst(embedded_backend, winner)
    loser = reshaper.reshape_node(backend, 'compute-01', node['report'], snapshot_dir=node['snapdir'])
    assert backend.won['status'] == 'reshaped' and backend.won['verified'] is True
    assert loser['children_created'] == [] and loser['traits_written'] == [] and loser['reshaper_applied'] is False
    assert loser['status'] == 'noop', loser['msg']
    assert loser['changed'] is False
