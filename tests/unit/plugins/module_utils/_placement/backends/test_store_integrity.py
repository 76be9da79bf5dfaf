# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A damaged embedded store is never used, never initialised by mistake, and SQLite's
errors become typed errors with nothing half-written (issue 12, item 4)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import random
import sqlite3

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.sqlite import store
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
from ansible_collections.placement.upgrade.plugins.modules import inventory as inv_module
from ansible_collections.placement.upgrade.plugins.modules import (
    allocation_info,
    reshape,
    resource_provider,
    resource_provider_info,
)

from module_runner import run_module_main

PAGE = 4096


def _seed(path, nodes=40):
    backend = EmbeddedBackend(path)
    try:
        for i in range(nodes):
            root = backend.create_provider('compute-%03d' % i)
            backend.set_inventories(root['uuid'], 0, {'VCPU': {'total': 64}, 'MEMORY_MB': {'total': 65536},
                                                      'VGPU': {'total': 8}})
            for k in range(3):
                backend.put_allocations('%08d-0000-4000-8000-%012d' % (i, k), {
                    'allocations': {root['uuid']: {'resources': {'VCPU': 2, 'VGPU': 1}}},
                    'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
                    'consumer_type': 'INSTANCE'})
    finally:
        backend.close()


def _integrity_ok(path):
    try:
        conn = sqlite3.connect(path)
        try:
            return conn.execute('PRAGMA integrity_check').fetchall() == [('ok',)]
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return False


def _dump(path):
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def _read(path):
    with open(path, 'rb') as handle:
        return handle.read()


def _corrupt(path, rng):
    """Random bytes into one page (never page 1, the header SQLite checks on its own)."""
    pages = os.path.getsize(path) // PAGE
    page = rng.randrange(1, pages)
    with open(path, 'r+b') as handle:
        if rng.random() < 0.5:
            handle.seek(page * PAGE)
            handle.write(bytes(rng.randrange(256) for _byte in range(PAGE)))
        else:
            handle.seek(page * PAGE + rng.randrange(PAGE - 64))
            handle.write(bytes(rng.randrange(256) for _byte in range(rng.randrange(1, 64))))


@pytest.fixture(scope='module')
def seeded(tmp_path_factory):
    path = str(tmp_path_factory.mktemp('seed') / 'placement.db')
    _seed(path)
    return _read(path)


def test_every_corruption_integrity_check_sees_is_refused_and_left_unwritten(seeded, tmp_path):
    rng = random.Random(12)
    refused = 0
    for trial in range(60):
        path = str(tmp_path / ('c%d.db' % trial))
        with open(path, 'wb') as handle:
            handle.write(seeded)
        _corrupt(path, rng)
        if _integrity_ok(path):
            continue            # the bytes landed where nothing reads them (free space)
        before = _read(path)
        with pytest.raises(errors.StoreCorrupt) as info:
            EmbeddedBackend(path, create=False)
        assert path in info.value.detail and 'restore it from a backup' in info.value.detail
        assert info.value.sqlite_error and info.value.sqlite_error in info.value.detail
        assert _read(path) == before
        refused += 1
    assert refused >= 40        # most random page writes break the store


def test_quick_mode_is_the_cheaper_check_and_off_skips_it(seeded, tmp_path):
    path = str(tmp_path / 'c.db')
    with open(path, 'wb') as handle:
        handle.write(seeded)
    rng = random.Random(3)
    while _integrity_ok(path):
        with open(path, 'wb') as handle:
            handle.write(seeded)
        _corrupt(path, rng)
    with pytest.raises(errors.StoreCorrupt):
        EmbeddedBackend(path, integrity_check='full')
    with pytest.raises(errors.ConfigurationError):
        EmbeddedBackend(path, integrity_check='sometimes')


def _run(module, args, capsys):
    return run_module_main(module.main, args, capsys)


@pytest.fixture
def corrupt_db(seeded, tmp_path):
    path = str(tmp_path / 'placement.db')
    rng = random.Random(5)
    while True:
        with open(path, 'wb') as handle:
            handle.write(seeded)
        _corrupt(path, rng)
        if not _integrity_ok(path):
            return path


@pytest.mark.parametrize('module,args', [
    (resource_provider_info, {'name': 'compute-001'}),
    (allocation_info, {'in_tree': 'compute-001'}),
    (inv_module, {'resource_provider': 'compute-001', 'resource_class': 'VCPU', 'total': 8}),
    (resource_provider, {'name': 'compute-999'}),
    (reshape, {'root_provider': 'compute-001', 'devices': {}, 'snapshot_dir': '/nonexistent'}),
], ids=['resource_provider_info', 'allocation_info', 'inventory', 'resource_provider', 'reshape'])
def test_modules_refuse_a_corrupt_store(capsys, corrupt_db, module, args):
    before = _read(corrupt_db)
    rc, out = _run(module, dict(args, embedded_db=corrupt_db), capsys)
    assert rc == 1 and out['failed'] is True
    assert 'Unexpected error' not in out['msg']
    assert corrupt_db in out['msg'] and 'is corrupt' in out['msg'] and 'backup' in out['msg'], out['msg']
    assert out['error']['code'] == 'placement_upgrade.store.corrupt'
    assert _read(corrupt_db) == before


def test_an_empty_file_is_not_a_store_for_a_reader(capsys, tmp_path):
    path = str(tmp_path / 'empty.db')
    open(path, 'wb').close()
    with pytest.raises(errors.StoreNotADatabase) as info:
        EmbeddedBackend(path, create=False)
    assert 'empty (0 bytes)' in info.value.detail and path in info.value.detail
    rc, out = _run(resource_provider_info, {'embedded_db': path, 'name': 'x'}, capsys)
    assert rc == 1 and 'empty (0 bytes)' in out['msg'] and 'Unexpected' not in out['msg']
    assert os.path.getsize(path) == 0
    assert not os.path.exists(path + '-wal')


def test_an_empty_file_is_a_new_store_for_a_writer(capsys, tmp_path):
    path = str(tmp_path / 'empty.db')
    open(path, 'wb').close()
    rc, out = _run(resource_provider, {'embedded_db': path, 'name': 'compute-01'}, capsys)
    assert rc == 0 and out['changed'] is True
    assert _integrity_ok(path)


def test_an_empty_file_with_a_write_ahead_log_is_a_truncated_store(tmp_path):
    path = str(tmp_path / 'p.db')
    open(path, 'wb').close()
    with open(path + '-wal', 'wb') as handle:
        handle.write(b'\x37\x7f\x06\x82' + b'\x00' * 100)
    with pytest.raises(errors.StoreNotADatabase) as info:
        EmbeddedBackend(path, create=True)
    assert 'truncated' in info.value.detail
    assert os.path.getsize(path) == 0


@pytest.mark.parametrize('create', [True, False])
def test_a_file_that_is_not_sqlite_is_never_overwritten(tmp_path, create):
    path = str(tmp_path / 'notes.txt')
    with open(path, 'wb') as handle:
        handle.write(b'my notes, not a database\n' * 50)
    before = _read(path)
    with pytest.raises(errors.StoreNotADatabase) as info:
        EmbeddedBackend(path, create=create)
    assert path in info.value.detail and 'not an SQLite database' in info.value.detail
    assert isinstance(info.value, errors.ConfigurationError)
    assert _read(path) == before


def test_disk_full_rolls_back_the_whole_write(tmp_path):
    path = str(tmp_path / 'p.db')
    _seed(path, nodes=2)
    backend = EmbeddedBackend(path)
    try:
        root = backend.list_providers(name='compute-000')[0]
        pages = backend._conn.execute('PRAGMA page_count').fetchone()[0]   # pylint: disable=protected-access
        backend._conn.execute('PRAGMA max_page_count = %d' % pages)        # pylint: disable=protected-access
        with pytest.raises(errors.StoreFull) as info:
            for i in range(2000):
                backend.create_provider('filler-%05d-%s' % (i, 'x' * 150), parent_provider_uuid=root['uuid'])
        assert path in info.value.detail and 'full' in info.value.detail
        assert 'rolled back' in info.value.detail
        full = _dump(path)
        many = dict(('%08d-1111-4000-8000-%012d' % (i, i), {
            'allocations': {root['uuid']: {'resources': {'MEMORY_MB': 1}}},
            'project_id': 'p' * 200, 'user_id': 'u' * 200, 'consumer_generation': None,
            'consumer_type': 'INSTANCE'}) for i in range(300))
        with pytest.raises(errors.StoreFull):
            backend.post_allocations(many)
        assert _dump(path) == full           # the failed write left nothing behind
        assert backend.get_provider(root['uuid'])['generation'] == root['generation']
    finally:
        backend.close()


class _FailingConnection(object):
    """An sqlite3 connection whose Nth matching statement raises ``error``."""

    def __init__(self, conn, match, error):
        self._conn = conn
        self._match = match
        self._error = error
        self.rolled_back = False

    def execute(self, sql, *args):
        if sql == 'ROLLBACK':
            self.rolled_back = True
        if self._match in sql:
            raise self._error
        return self._conn.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self._conn, name)


@pytest.mark.parametrize('message,cls,words', [
    ('disk I/O error', errors.StoreIOError, 'I/O error'),
    ('database disk image is malformed', errors.StoreCorrupt, 'is corrupt'),
    ('database or disk is full', errors.StoreFull, 'is full'),
    ('file is not a database', errors.StoreNotADatabase, 'not an SQLite database'),
    ('attempt to write a readonly database', errors.StoreIOError, 'cannot be written'),
    ('some new sqlite failure', errors.StoreError, 'failed during'),
])
def test_sqlite_errors_mid_write_are_typed_and_rolled_back(tmp_path, message, cls, words):
    path = str(tmp_path / 'p.db')
    _seed(path, nodes=1)
    backend = EmbeddedBackend(path)
    try:
        root = backend.list_providers(name='compute-000')[0]
        before = _dump(path)
        real = backend._conn                                                # pylint: disable=protected-access
        failing = _FailingConnection(real, 'UPDATE providers SET generation', sqlite3.OperationalError(message))
        backend._conn = failing                                             # pylint: disable=protected-access
        with pytest.raises(errors.PlacementError) as info:
            backend.set_inventories(root['uuid'], root['generation'], {'VCPU': {'total': 40}, 'MEMORY_MB': {'total': 1024},
                                                                       'VGPU': {'total': 4}})
        backend._conn = real                                                # pylint: disable=protected-access
        assert info.value.__class__ is cls, info.value.__class__
        assert path in info.value.detail and words in info.value.detail and message in info.value.detail
        assert failing.rolled_back
        assert _dump(path) == before
    finally:
        backend.close()


def test_locked_stays_service_unavailable():
    exc = sqlite3.OperationalError('database is locked')
    assert store.sqlite_kind(exc) == 'busy'
    backend = EmbeddedBackend.__new__(EmbeddedBackend)
    backend.path, backend.busy_timeout = '/x/p.db', 1.0
    err = backend._translate(exc, 'set_inventories')     # pylint: disable=protected-access
    assert isinstance(err, errors.ServiceUnavailable) and '/x/p.db' in err.detail
