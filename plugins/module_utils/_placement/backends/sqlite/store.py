# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The embedded store's file: connection, schema, WAL, busy timeout, integrity check, transactions.

:class:`Store` opens (or creates) one SQLite file and gives every call ONE
transaction through :meth:`Store.transaction`: a reader (deferred ``BEGIN``) or a
writer (``BEGIN IMMEDIATE``), committed when the block ends, rolled back when it
raises, an ``sqlite3`` error turned into a :class:`..errors.StoreError` naming the
file (Placement's own ``placement_context_manager.reader`` / ``.writer``).

Rows are :class:`sqlite3.Row`: read by column name.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import os
import sqlite3
import threading
import time

from ... import names
from ...errors import ConfigurationError, PlacementError, ServiceUnavailable, StoreCorrupt, StoreError, StoreFull, StoreIOError, StoreNotADatabase

MICROVERSION = '1.39'

#: Version of the database layout written by this module.  A later release that
#: changes the layout adds a step to :data:`MIGRATIONS` and bumps this number.
SCHEMA_VERSION = 1

DEFAULT_BUSY_TIMEOUT = 30.0

_SQLITE_HEADER = b'SQLite format 3\x00'
_RESTORE_HINT = ('a copy taken before the damage; the snapshots in snapshot_dir hold each reshaped '
                 'node\'s tree and allocations as they were before its reshape')

DDL = (
    'CREATE TABLE IF NOT EXISTS schema_version ('
    ' id INTEGER PRIMARY KEY CHECK (id = 1),'
    ' version INTEGER NOT NULL)',
    'CREATE TABLE IF NOT EXISTS resource_classes ('
    ' id INTEGER PRIMARY KEY,'
    ' name TEXT NOT NULL UNIQUE)',
    'CREATE TABLE IF NOT EXISTS traits ('
    ' id INTEGER PRIMARY KEY,'
    ' name TEXT NOT NULL UNIQUE)',
    'CREATE TABLE IF NOT EXISTS providers ('
    ' id INTEGER PRIMARY KEY,'
    ' uuid TEXT NOT NULL UNIQUE,'
    ' name TEXT NOT NULL UNIQUE,'
    ' generation INTEGER NOT NULL DEFAULT 0,'
    ' parent_id INTEGER REFERENCES providers (id),'
    ' root_id INTEGER REFERENCES providers (id))',
    'CREATE INDEX IF NOT EXISTS providers_root ON providers (root_id)',
    'CREATE INDEX IF NOT EXISTS providers_parent ON providers (parent_id)',
    'CREATE TABLE IF NOT EXISTS inventories ('
    ' provider_id INTEGER NOT NULL REFERENCES providers (id),'
    ' rc_id INTEGER NOT NULL REFERENCES resource_classes (id),'
    ' total INTEGER NOT NULL,'
    ' reserved INTEGER NOT NULL,'
    ' min_unit INTEGER NOT NULL,'
    ' max_unit INTEGER NOT NULL,'
    ' step_size INTEGER NOT NULL,'
    ' allocation_ratio REAL NOT NULL,'
    ' PRIMARY KEY (provider_id, rc_id))',
    'CREATE TABLE IF NOT EXISTS consumers ('
    ' id INTEGER PRIMARY KEY,'
    ' uuid TEXT NOT NULL UNIQUE,'
    ' project_id TEXT NOT NULL,'
    ' user_id TEXT NOT NULL,'
    ' consumer_type TEXT,'
    ' generation INTEGER NOT NULL DEFAULT 0)',
    'CREATE TABLE IF NOT EXISTS allocations ('
    ' id INTEGER PRIMARY KEY,'
    ' provider_id INTEGER NOT NULL REFERENCES providers (id),'
    ' rc_id INTEGER NOT NULL REFERENCES resource_classes (id),'
    ' consumer_uuid TEXT NOT NULL,'
    ' used INTEGER NOT NULL)',
    'CREATE INDEX IF NOT EXISTS allocations_consumer ON allocations (consumer_uuid)',
    'CREATE INDEX IF NOT EXISTS allocations_provider_rc ON allocations (provider_id, rc_id)',
    'CREATE TABLE IF NOT EXISTS provider_traits ('
    ' provider_id INTEGER NOT NULL REFERENCES providers (id),'
    ' trait_id INTEGER NOT NULL REFERENCES traits (id),'
    ' PRIMARY KEY (provider_id, trait_id))',
    'CREATE TABLE IF NOT EXISTS provider_aggregates ('
    ' id INTEGER PRIMARY KEY,'
    ' provider_id INTEGER NOT NULL REFERENCES providers (id),'
    ' aggregate_uuid TEXT NOT NULL,'
    ' UNIQUE (provider_id, aggregate_uuid))',
)

# version -> list of SQL statements upgrading the layout from version-1 to version.
MIGRATIONS = {}


class CommitThenRaise(Exception):
    """Raised inside a writer: commit what the transaction did so far, then raise ``error``.

    Used where the real service has already committed part of the work in an
    earlier, separate transaction when it fails (auto-created consumers).
    """

    def __init__(self, error):
        super(CommitThenRaise, self).__init__(str(error))
        self.error = error


class Store(object):
    """One SQLite file holding an embedded placement (see :class:`.EmbeddedBackend` for the options)."""

    def __init__(self, path, busy_timeout=DEFAULT_BUSY_TIMEOUT, synchronous='FULL', create=True,
                 integrity_check='full'):
        if not path:
            raise ConfigurationError('embedded_db: a database file path is required')
        self.path = os.path.abspath(os.path.expanduser(str(path)))
        if not create and not os.path.exists(self.path):
            # A read (an info module, a reshape of an existing node) on a path that does not
            # exist is a typo or a missing seed, never a reason to create an empty placement.
            raise ConfigurationError('embedded_db: %s does not exist (only the modules that write '
                                     'providers, inventories or allocations create a new embedded '
                                     'placement)' % self.path)
        self._check_file(create)
        self.busy_timeout = float(busy_timeout)
        if str(synchronous).upper() not in ('OFF', 'NORMAL', 'FULL', 'EXTRA'):
            raise ConfigurationError('embedded_db: synchronous must be OFF, NORMAL, FULL or EXTRA')
        self._synchronous = str(synchronous).upper()
        if integrity_check not in ('full', 'quick', 'off'):
            raise ConfigurationError('embedded_db: integrity_check must be full, quick or off')
        self.integrity_check = integrity_check
        self._conn = None
        # One connection per backend object; the lock makes sharing the object
        # between threads safe (each call is still its own transaction).
        self._lock = threading.RLock()
        self.journal_mode = None
        self._open()

    @property
    def microversion(self):
        return MICROVERSION

    def close(self):
        with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                try:
                    conn.close()
                except sqlite3.Error:
                    pass

    def __repr__(self):
        return '%s(%r)' % (type(self).__name__, self.path)

    # -- the file ----------------------------------------------------------------
    def _check_file(self, create):
        """Refuse a file that is not an embedded placement before SQLite touches it.

        A missing file, or an EMPTY (0-byte) one without a write-ahead log, is a new store:
        created when ``create`` is true, refused otherwise (SQLite would silently turn any
        empty file into an empty placement).  A file that does not start with SQLite's header
        is refused whatever ``create`` says: it is never overwritten.
        """
        try:
            size = os.path.getsize(self.path)
        except OSError:
            return      # missing: created by _open (create was checked by the caller)
        if not os.path.isfile(self.path):
            raise StoreNotADatabase('embedded_db: %s is not a regular file' % self.path, path=self.path)
        if size == 0:
            wal = self.path + '-wal'
            if os.path.exists(wal) and os.path.getsize(wal) > 0:
                raise StoreNotADatabase(
                    'embedded_db: %s is empty (0 bytes) but its write-ahead log %s is not: the database '
                    'file was truncated. It is not used: restore it from a backup (%s)'
                    % (self.path, wal, _RESTORE_HINT), path=self.path)
            if not create:
                raise StoreNotADatabase(
                    'embedded_db: %s is empty (0 bytes): it is not an embedded placement database. It '
                    'was not initialised (only the modules that write providers, inventories or '
                    'allocations create a new embedded placement, and only from a missing or empty '
                    'file); check the path, or restore the database from a backup (%s)'
                    % (self.path, _RESTORE_HINT), path=self.path)
            return
        try:
            with open(self.path, 'rb') as handle:
                header = handle.read(len(_SQLITE_HEADER))
        except (IOError, OSError) as exc:
            raise StoreIOError('embedded_db: cannot read %s: %s' % (self.path, exc), path=self.path)
        if header != _SQLITE_HEADER:
            raise StoreNotADatabase(
                'embedded_db: %s is not an SQLite database (file is not a database: it does not start '
                'with the SQLite header). It was left as it is, neither used nor overwritten: check the '
                'path, or restore the database from a backup (%s)' % (self.path, _RESTORE_HINT),
                path=self.path, sqlite_error='file is not a database')

    def _check_integrity(self, conn):
        """SQLite's ``integrity_check`` (b-trees, free list, every index against its table).

        About 30 ms on a 1,000-node store (3,000 providers, 4,000 consumers, 2.7 MB), 10 ms
        for ``quick_check``, which misses an index that no longer matches its table (one in ten
        random page corruptions in our measurement): a module run costs ~250 ms anyway, so every
        open pays the full check, readers included (a corrupt store must not answer either).
        """
        if self.integrity_check == 'off':
            return
        pragma = 'PRAGMA quick_check(5)' if self.integrity_check == 'quick' else 'PRAGMA integrity_check(5)'
        rows = conn.execute(pragma).fetchall()
        problems = [str(r[0]) for r in rows if r and r[0] != 'ok']
        if problems:
            raise StoreCorrupt(
                'embedded placement database %s is corrupt: SQLite\'s %s says: %s. It was not used and '
                'nothing was written to it: restore it from a backup (%s); keep the corrupt file for '
                'analysis.' % (self.path, pragma.split()[1].split('(')[0], '; '.join(problems), _RESTORE_HINT),
                path=self.path, sqlite_error='; '.join(problems))

    def _open(self):
        directory = os.path.dirname(self.path)
        if directory and not os.path.isdir(directory):
            raise ConfigurationError('embedded_db: directory %s does not exist' % directory)
        old_umask = os.umask(0o077)
        try:
            try:
                # Create the file 0600 before SQLite sees it; SQLite gives the -wal
                # and -shm side files the mode of the database file.
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
                os.close(fd)
            except OSError as exc:
                raise ConfigurationError('embedded_db: cannot open %s: %s' % (self.path, exc))
            try:
                conn = sqlite3.connect(self.path, timeout=self.busy_timeout,
                                       isolation_level=None, check_same_thread=False)
            except sqlite3.Error as exc:
                raise self._translate(exc, 'open')
            conn.row_factory = sqlite3.Row
            self._conn = conn
            try:
                conn.execute('PRAGMA busy_timeout = %d' % int(self.busy_timeout * 1000))
                # WAL lets readers run while a writer holds the lock.  A file
                # system without shared memory (some network mounts) keeps the
                # rollback journal: still correct, readers then wait too.
                self.journal_mode = self._retry_busy(
                    lambda: conn.execute('PRAGMA journal_mode = WAL').fetchone()[0])
                conn.execute('PRAGMA synchronous = %s' % self._synchronous)
                conn.execute('PRAGMA foreign_keys = ON')
                self._check_integrity(conn)
                self._ensure_schema(conn)
            except sqlite3.Error as exc:
                self.close()
                raise self._translate(exc, 'open')
            except PlacementError:
                self.close()
                raise
        finally:
            os.umask(old_umask)

    def _retry_busy(self, func):
        """Run ``func`` retrying SQLITE_BUSY up to the busy timeout.

        Switching the journal mode takes an exclusive lock and does not always go
        through the busy handler when several processes open a new file at once.
        """
        deadline = time.time() + self.busy_timeout
        delay = 0.01
        while True:
            try:
                return func()
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc) or time.time() >= deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.25)

    def _ensure_schema(self, conn):
        row = None
        try:
            row = conn.execute('SELECT version FROM schema_version WHERE id = 1').fetchone()
        except sqlite3.OperationalError:
            row = None
        if row is not None and row['version'] == SCHEMA_VERSION:
            return
        conn.execute('BEGIN IMMEDIATE')
        try:
            for stmt in DDL:
                conn.execute(stmt)
            row = conn.execute('SELECT version FROM schema_version WHERE id = 1').fetchone()
            if row is None:
                _seed(conn)
                conn.execute('INSERT INTO schema_version (id, version) VALUES (1, ?)', (SCHEMA_VERSION,))
            elif row['version'] > SCHEMA_VERSION:
                raise ConfigurationError(
                    'embedded_db: %s was written by a newer placement.upgrade (schema version %d, '
                    'this one knows up to %d)' % (self.path, row['version'], SCHEMA_VERSION))
            elif row['version'] < SCHEMA_VERSION:
                for version in range(row['version'] + 1, SCHEMA_VERSION + 1):
                    for stmt in MIGRATIONS.get(version, ()):
                        conn.execute(stmt)
                conn.execute('UPDATE schema_version SET version = ? WHERE id = 1', (SCHEMA_VERSION,))
            conn.execute('COMMIT')
        except BaseException:
            _rollback(conn)
            raise

    # -- transactions -------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self, write, what):
        """ONE transaction on the store's connection, yielded: a writer (``BEGIN IMMEDIATE``) or a reader.

        Committed when the block ends; rolled back when it raises (a
        :class:`CommitThenRaise` commits first, then raises its error); an
        ``sqlite3`` error becomes the typed error naming the file and ``what``.
        """
        with self._lock:
            if self._conn is None:
                raise ConfigurationError('embedded_db: %s is closed' % self.path)
            conn = self._conn
            try:
                conn.execute('BEGIN IMMEDIATE' if write else 'BEGIN')
                try:
                    yield conn
                except CommitThenRaise as partial:
                    conn.execute('COMMIT')
                    raise partial.error
                except BaseException:
                    _rollback(conn)
                    raise
                conn.execute('COMMIT')
            except sqlite3.Error as exc:
                _rollback(conn)
                raise self._translate(exc, what)

    def reader(self, what):
        return self.transaction(False, what)

    def writer(self, what):
        return self.transaction(True, what)

    def _translate(self, exc, what):
        """The typed error for an ``sqlite3`` exception (the transaction was rolled back)."""
        kind = sqlite_kind(exc)
        said = str(exc)
        where = 'during %s' % what
        if kind == 'busy':
            return ServiceUnavailable(
                'embedded placement database %s is locked by another process: gave up after '
                'waiting %.0f s (%s: %s)' % (self.path, self.busy_timeout, what, exc))
        if kind == 'corrupt':
            return StoreCorrupt(
                'embedded placement database %s is corrupt (SQLite: %s, %s). Nothing was written: the '
                'transaction was rolled back. Stop using it and restore it from a backup (%s); keep the '
                'corrupt file for analysis.' % (self.path, said, where, _RESTORE_HINT),
                path=self.path, sqlite_error=said)
        if kind == 'notadb':
            return StoreNotADatabase(
                'embedded_db: %s is not an SQLite database (SQLite: %s, %s). It was not used: check the '
                'path, or restore the database from a backup (%s)' % (self.path, said, where, _RESTORE_HINT),
                path=self.path, sqlite_error=said)
        if kind == 'full':
            return StoreFull(
                'embedded placement database %s: the disk (or the database) is full (SQLite: %s, %s). '
                'Nothing was written: the transaction was rolled back. Free space on the file system '
                'holding it and run the task again.' % (self.path, said, where),
                path=self.path, sqlite_error=said)
        if kind == 'io':
            return StoreIOError(
                'embedded placement database %s: I/O error (SQLite: %s, %s). Nothing was written: the '
                'transaction was rolled back. Check the disk and the file system (dmesg), then run the '
                'task again; if the error stays, restore the database from a backup (%s).'
                % (self.path, said, where, _RESTORE_HINT), path=self.path, sqlite_error=said)
        if kind == 'readonly':
            return StoreIOError(
                'embedded placement database %s cannot be written (SQLite: %s, %s): check the file\'s '
                'owner and mode and the mount (read-only file system?). Nothing was written.'
                % (self.path, said, where), path=self.path, sqlite_error=said)
        if kind == 'cantopen':
            return StoreIOError(
                'embedded placement database %s cannot be opened (SQLite: %s, %s): check the path, the '
                'directory\'s permissions and that its -wal/-shm side files are writable.'
                % (self.path, said, where), path=self.path, sqlite_error=said)
        return StoreError('embedded placement database %s failed %s (SQLite: %s: %s). Nothing was written: '
                          'the transaction was rolled back.' % (self.path, where, type(exc).__name__, said),
                          path=self.path, sqlite_error=said)


def _seed(conn):
    conn.executemany('INSERT OR IGNORE INTO resource_classes (id, name) VALUES (?, ?)',
                     list(enumerate(names.STANDARD_RESOURCE_CLASSES)))
    conn.executemany('INSERT OR IGNORE INTO traits (name) VALUES (?)',
                     [(t,) for t in names.STANDARD_TRAITS])


def _rollback(conn):
    try:
        if conn.in_transaction:
            conn.execute('ROLLBACK')
    except sqlite3.Error:
        pass


def _is_busy(exc):
    text = str(exc).lower()
    return 'locked' in text or 'busy' in text


# SQLite's primary result codes (exc.sqlite_errorcode & 0xff, Python 3.11+) and, for older
# Pythons or errors raised without a code, the words of SQLite's own messages.
_SQLITE_KINDS = {5: 'busy', 6: 'busy', 8: 'readonly', 10: 'io', 11: 'corrupt', 13: 'full',
                 14: 'cantopen', 26: 'notadb'}
_SQLITE_WORDS = (('malformed', 'corrupt'), ('not a database', 'notadb'), ('disk i/o error', 'io'),
                 ('database or disk is full', 'full'), ('readonly database', 'readonly'),
                 ('unable to open database', 'cantopen'))


def sqlite_kind(exc):
    """busy, corrupt, notadb, io, full, readonly, cantopen or None for an sqlite3 exception."""
    code = getattr(exc, 'sqlite_errorcode', None)
    if isinstance(code, int) and (code & 0xff) in _SQLITE_KINDS:
        return _SQLITE_KINDS[code & 0xff]
    text = str(exc).lower()
    if _is_busy(exc):
        return 'busy'
    for words, kind in _SQLITE_WORDS:
        if words in text:
            return kind
    return None


def placeholders(values):
    """``?,?,?`` for an ``IN (...)`` of ``values``."""
    return ','.join('?' * len(values))
