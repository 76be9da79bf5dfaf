# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The embedded store's file: mode 0600, WAL, schema versioning, locking, many processes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import multiprocessing
import os
import sqlite3
import stat
import threading
import time

import pytest

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors, retry
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import SCHEMA_VERSION, EmbeddedBackend


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_database_and_side_files_are_private(tmp_path):
    path = str(tmp_path / 'placement.db')
    old = os.umask(0o022)       # a permissive umask must not leak into the files
    try:
        backend = EmbeddedBackend(path)
        backend.create_provider('cn')
        assert os.path.exists(path + '-wal')
        for name in (path, path + '-wal', path + '-shm'):
            if os.path.exists(name):
                assert _mode(name) & 0o077 == 0, '%s is %o' % (name, _mode(name))
        assert _mode(path) == 0o600
        backend.close()
    finally:
        os.umask(old)
    assert os.umask(old) == old     # the process umask was restored


def test_existing_file_mode_is_left_alone_and_wal_is_on(tmp_path):
    path = str(tmp_path / 'shared.db')
    open(path, 'w').close()
    os.chmod(path, 0o640)
    with EmbeddedBackend(path) as backend:
        assert backend.journal_mode == 'wal'
    assert _mode(path) == 0o640
    conn = sqlite3.connect(path)
    try:
        assert conn.execute('PRAGMA journal_mode').fetchone()[0] == 'wal'
        assert conn.execute('SELECT version FROM schema_version').fetchall() == [(SCHEMA_VERSION,)]
    finally:
        conn.close()


def test_reopen_keeps_data_and_schema_is_idempotent(tmp_path):
    path = str(tmp_path / 'p.db')
    with EmbeddedBackend(path) as first:
        rp = first.create_provider('cn')['uuid']
        first.ensure_resource_class('CUSTOM_X')
    with EmbeddedBackend(path) as second:
        assert second.get_provider(rp)['name'] == 'cn'
        assert second.list_resource_classes().count('CUSTOM_X') == 1
        assert second.list_resource_classes().count('VCPU') == 1


def test_newer_schema_is_refused(tmp_path):
    path = str(tmp_path / 'p.db')
    EmbeddedBackend(path).close()
    conn = sqlite3.connect(path)
    conn.execute('UPDATE schema_version SET version = ?', (SCHEMA_VERSION + 1,))
    conn.commit()
    conn.close()
    with pytest.raises(errors.ConfigurationError) as info:
        EmbeddedBackend(path)
    assert 'newer' in info.value.detail


def test_not_a_database(tmp_path):
    path = tmp_path / 'garbage.db'
    path.write_bytes(b'this is not sqlite' * 100)
    with pytest.raises(errors.ConfigurationError) as info:
        EmbeddedBackend(str(path))
    assert str(path) in info.value.detail


def test_missing_directory(tmp_path):
    with pytest.raises(errors.ConfigurationError):
        EmbeddedBackend(str(tmp_path / 'nope' / 'p.db'))


def test_locked_database_is_service_unavailable_naming_the_file(tmp_path):
    path = str(tmp_path / 'p.db')
    backend = EmbeddedBackend(path, busy_timeout=0.2)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute('BEGIN IMMEDIATE')
    try:
        start = time.time()
        with pytest.raises(errors.ServiceUnavailable) as info:
            backend.create_provider('blocked')
        assert time.time() - start >= 0.15          # it waited for the lock
        assert path in info.value.detail
        assert backend.list_providers() == []       # WAL: readers are not blocked by a writer
    finally:
        holder.execute('ROLLBACK')
        holder.close()
    assert backend.create_provider('free')['name'] == 'free'
    backend.close()


def _open_and_create(path, name, queue):
    try:
        with EmbeddedBackend(path) as backend:
            backend.create_provider(name)
        queue.put('ok')
    except Exception as exc:   # reported to the parent
        queue.put('%s: %s' % (type(exc).__name__, exc))


def _increment(path, rp, count, start, queue):
    """``count`` compare-and-update increments of the VCPU total, retried on conflict.

    The 1 ms between the read and the write widens the race window: without
    compare-and-update, writes would certainly be lost.
    """
    try:
        with EmbeddedBackend(path) as backend:
            retries = 0
            start.wait(60)
            for _attempt in range(count):
                def step():
                    cur = backend.get_inventories(rp)
                    total = cur['inventories']['VCPU']['total']
                    time.sleep(0.001)
                    backend.set_inventories(rp, cur['resource_provider_generation'], {'VCPU': {'total': total + 1}})
                _result, used = retry.with_conflict_retry(step, attempts=1000, backoff=0.001)
                retries += used
        queue.put(('ok', retries))
    except Exception as exc:   # reported to the parent
        queue.put(('%s: %s' % (type(exc).__name__, exc), 0))


def _spawn(target, args_list, with_start=False):
    ctx = multiprocessing.get_context('spawn')
    queue = ctx.Queue()
    start = ctx.Event()
    extra = (start, queue) if with_start else (queue,)
    procs = [ctx.Process(target=target, args=args + extra) for args in args_list]
    for proc in procs:
        proc.start()
    start.set()
    results = [queue.get(timeout=120) for _proc in procs]
    for proc in procs:
        proc.join(30)
    return results


def test_several_processes_create_the_same_new_file(tmp_path):
    path = str(tmp_path / 'fresh.db')
    results = _spawn(_open_and_create, [(path, 'cn-%d' % i) for i in range(4)])
    assert results == ['ok'] * 4
    with EmbeddedBackend(path) as backend:
        assert sorted(p['name'] for p in backend.list_providers()) == ['cn-0', 'cn-1', 'cn-2', 'cn-3']
        assert backend.list_resource_classes().count('VCPU') == 1


def test_no_lost_write_across_processes(tmp_path):
    path = str(tmp_path / 'shared.db')
    with EmbeddedBackend(path) as backend:
        rp = backend.create_provider('cn')['uuid']
        backend.set_inventories(rp, 0, {'VCPU': {'total': 1}})
    procs, each = 4, 50
    results = _spawn(_increment, [(path, rp, each) for _proc in range(procs)], with_start=True)
    assert [r[0] for r in results] == ['ok'] * procs, results
    # the processes did race: stale writes were refused and retried, not applied
    assert sum(r[1] for r in results) > 0, results
    with EmbeddedBackend(path) as backend:
        inv = backend.get_inventories(rp)
    assert inv['inventories']['VCPU']['total'] == 1 + procs * each
    assert inv['resource_provider_generation'] == 1 + procs * each


def test_one_backend_shared_by_threads(tmp_path):
    with EmbeddedBackend(str(tmp_path / 'p.db')) as backend:
        rp = backend.create_provider('cn')['uuid']
        backend.set_inventories(rp, 0, {'VCPU': {'total': 1}})
        failures = []

        def work():
            try:
                for _step in range(25):
                    def step():
                        cur = backend.get_inventories(rp)
                        backend.set_inventories(rp, cur['resource_provider_generation'],
                                                {'VCPU': {'total': cur['inventories']['VCPU']['total'] + 1}})
                    retry.with_conflict_retry(step, attempts=1000, backoff=0.001)
            except Exception as exc:   # collected for the assertion below
                failures.append(exc)

        threads = [threading.Thread(target=work) for _thread in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert failures == []
        assert backend.get_inventories(rp)['inventories']['VCPU']['total'] == 101
