# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A wrong embedded_db path: modules that only read (or act on a tree that must exist) fail
clearly and create nothing; modules that write providers/inventories/allocations create it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.placement.upgrade.plugins.modules import (
    allocation_info,
    placement_preflight,
    reshape,
    resource_provider,
    resource_provider_info,
)

READERS = [
    (resource_provider_info, {'name': 'compute-01'}),
    (allocation_info, {'in_tree': 'compute-01'}),
    (reshape, {'root_provider': 'compute-01', 'devices': {}}),
    (placement_preflight, {'providers': ['compute-01']}),
]


@pytest.mark.parametrize('module,args', READERS, ids=[m.__name__.rsplit('.', 1)[-1] for m, _a in READERS])
def test_reader_on_a_missing_file_fails_and_creates_nothing(run_module, tmp_path, module, args):
    path = str(tmp_path / 'typo.db')
    args = dict(args, embedded_db=path)
    rc, out = run_module(module, args)
    assert rc == 1 and out['failed'] is True
    assert path in out['msg'] and 'does not exist' in out['msg'], out['msg']
    assert not os.path.exists(path)


def test_writer_creates_a_new_embedded_placement(run_module, tmp_path):
    path = str(tmp_path / 'new.db')
    rc, out = run_module(resource_provider, {'embedded_db': path, 'name': 'compute-01'})
    assert rc == 0 and out['changed'] is True
    assert os.path.exists(path) and oct(os.stat(path).st_mode & 0o777) == '0o600'
    rc, out = run_module(resource_provider_info, {'embedded_db': path, 'name': 'compute-01'})
    assert rc == 0 and [p['name'] for p in out['providers']] == ['compute-01']
