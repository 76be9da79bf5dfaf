# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The embedded placement: a SQLite store that behaves like Placement 16.0.0 at 1.39.

:class:`EmbeddedBackend` implements every method of :class:`.backend.Backend` on the
standard library's ``sqlite3``, so the modules, the planner and the demo run without
a cloud.  It mirrors the real service endpoint by endpoint -- the same validation
order, the same generation deltas, the same status and error code for each failure
-- and a differential test suite runs the same scenarios against the real service
to prove it (tests/integration/test_differential*.py).

Faithfully reproduced behaviours of the real service that may surprise:

* ``PUT /allocations/{c}`` with ``allocations: {}`` for an unknown consumer (sent
  generation ``null``) succeeds and leaves an EMPTY consumer at generation 0: the
  next write must send ``0``, not ``null``.  The same holds for a ``POST
  /allocations`` entry that empties an unknown consumer.
* A PUT/POST ``/allocations`` or ``/reshaper`` naming an unknown provider fails with
  400 AFTER Placement created the (new) consumers, which stay behind, empty, at
  generation 0.
* Emptying a consumer (``allocations: {}``) bumps the generation of the providers it
  leaves; moving a consumer away with a non-empty allocation does not.
* ``allocation_ratio`` 0 is accepted; ``reserved > total`` is only refused when the
  computed capacity ``int((total - reserved) * allocation_ratio)`` is negative, and
  the reshaper never refuses it.
* ``PUT /resource_providers/{u}/inventories/{rc}`` only UPDATES: a class the
  provider has no inventory of is 400, an unknown class 404.  (``set_inventory``
  is create-or-update by the Backend contract; both backends create a missing
  class with the same checks and the same +1 as a PUT of the whole set.)
* ``DELETE`` of one in-use inventory class answers 409 ``placement.concurrent_update``
  (``PUT`` of the set / ``DELETE`` of all answer ``placement.inventory.inuse``).

Concurrency: one database file may be used by many processes at once (Ansible
forks).  The file is created 0600, the journal is WAL, every write runs in its own
``BEGIN IMMEDIATE`` transaction (reads in a deferred one) and SQLite's busy handler
waits up to ``busy_timeout`` seconds for the write lock; a lock still held after
that is a :class:`.errors.ServiceUnavailable` naming the file.  No ``sqlite3``
exception ever escapes: everything is a :class:`.errors.PlacementError`.

A damaged file is never used: opening runs SQLite's ``integrity_check`` (about 30 ms on a
1,000-node store) and refuses a corrupt store with :class:`.errors.StoreCorrupt`; a file
that is not SQLite, or an empty (0-byte) file when ``create`` is false, is refused with
:class:`.errors.StoreNotADatabase` and left as it is.  Only a missing or empty file is
initialised, and only with ``create``.  An SQLite error during a call (``database disk image
is malformed``, ``disk I/O error``, ``database or disk is full``, ...) rolls the transaction
back and becomes a :class:`.errors.StoreError` naming the file, what SQLite said and what to do.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import collections
import os
import re
import sqlite3
import threading
import time
import uuid as _uuid

from . import model
from . import names
from .backend import Backend
from .errors import (BadRequest, CannotDeleteParent, CapacityExceeded, ConcurrentUpdate,
                     ConfigurationError, DuplicateName, InventoryInUse, NotFound,
                     PlacementError, ProviderInUse, ServiceUnavailable, StoreCorrupt, StoreError,
                     StoreFull, StoreIOError, StoreNotADatabase, RESOURCE_PROVIDER_NOT_FOUND)

MICROVERSION = '1.39'

#: Version of the database layout written by this module.  A later release that
#: changes the layout adds a step to :data:`_MIGRATIONS` and bumps this number.
SCHEMA_VERSION = 1

DEFAULT_BUSY_TIMEOUT = 30.0

# Custom resource classes get ids from 10000 like Placement does (standard classes
# keep the os-resource-classes order from 0).
_CUSTOM_RC_FIRST_ID = 10000

_SQL_SP_FLOAT_MAX = 3.40282e+38      # placement.db.constants.SQL_SP_FLOAT_MAX
_SQLITE_HEADER = b'SQLite format 3\x00'
_RESTORE_HINT = ('a copy taken before the damage; the snapshots in snapshot_dir hold each reshaped '
                 'node\'s tree and allocations as they were before its reshape')
_UUID_KEY_RE = re.compile(r'^[0-9a-fA-F-]{36}$')    # placement.schemas.common.UUID_PATTERN
_RC_TRAIT_RE = re.compile(r'^[A-Z0-9_]+$')
_CUSTOM_RE = re.compile(r'^CUSTOM_[A-Z0-9_]+$')
_GROUP_RE = re.compile(r'^[a-zA-Z0-9_-]{1,64}$')

_ALLOCATION_KEYS = ('allocations', 'project_id', 'user_id', 'consumer_generation',
                    'consumer_type', 'mappings')
_INVENTORY_RECORD_KEYS = ('resource_provider_generation',) + model.INVENTORY_FIELDS

_DDL = (
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
_MIGRATIONS = {}


class _RcNotFound(Exception):
    """Internal: a resource class name that does not exist (Placement's ResourceClassNotFound)."""

    def __init__(self, name):
        super(_RcNotFound, self).__init__(name)
        self.name = name

    def __str__(self):
        return 'No such resource class %s.' % self.name


class _CommitThenRaise(Exception):
    """Internal: commit what the transaction did so far, then raise ``error``.

    Used where the real service has already committed part of the work in an
    earlier, separate transaction when it fails (auto-created consumers).
    """

    def __init__(self, error):
        super(_CommitThenRaise, self).__init__(str(error))
        self.error = error


# ---------------------------------------------------------------------------
# request validation (Placement's JSON schemas at 1.39, by hand: no dependency)
# ---------------------------------------------------------------------------

def _bad(message):
    return BadRequest('JSON does not validate: %s' % message)


def _is_int(value):
    # jsonschema (latest draft, as Placement uses it) counts 3.0 as an integer.
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and value.is_integer()


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_uuid_like(value):
    """oslo_utils.uuidutils.is_uuid_like: what Placement's 'uuid' format accepts."""
    if not isinstance(value, str):
        return False
    try:
        canon = str(_uuid.UUID(value)).replace('-', '')
    except (TypeError, ValueError, AttributeError):
        return False
    text = value.lower()
    for junk in ('urn:', 'uuid:', '{', '}', '-'):
        text = text.replace(junk, '')
    return canon == text


def _check_int_field(record, key, low, where):
    if key not in record:
        return
    value = record[key]
    if not _is_int(value):
        raise _bad("%r is not of type 'integer' (%s of %s)" % (value, key, where))
    if value < low:
        raise _bad('%r is less than the minimum of %d (%s of %s)' % (value, low, key, where))
    if value > model.INT_MAX:
        raise _bad('%r is greater than the maximum of %d (%s of %s)' % (value, model.INT_MAX, key, where))


def _check_inventory_record(record, where, generation_required=False):
    """One inventory record (PUT_INVENTORY_RECORD_SCHEMA / BASE_INVENTORY_SCHEMA)."""
    if not isinstance(record, dict):
        raise _bad('%r is not of type \'object\' (%s)' % (record, where))
    extra = sorted(set(record) - set(_INVENTORY_RECORD_KEYS))
    if extra:
        raise _bad('Additional properties are not allowed (%s were unexpected) in %s'
                   % (', '.join(repr(k) for k in extra), where))
    if 'total' not in record:
        raise _bad("'total' is a required property (%s)" % where)
    if generation_required and 'resource_provider_generation' not in record:
        raise _bad("'resource_provider_generation' is a required property (%s)" % where)
    if 'resource_provider_generation' in record and not _is_int(record['resource_provider_generation']):
        raise _bad("%r is not of type 'integer' (resource_provider_generation)"
                   % (record['resource_provider_generation'],))
    _check_int_field(record, 'total', 1, where)
    _check_int_field(record, 'reserved', 0, where)
    _check_int_field(record, 'min_unit', 1, where)
    _check_int_field(record, 'max_unit', 1, where)
    _check_int_field(record, 'step_size', 1, where)
    if 'allocation_ratio' in record:
        ratio = record['allocation_ratio']
        if not _is_number(ratio):
            raise _bad("%r is not of type 'number' (allocation_ratio of %s)" % (ratio, where))
        if ratio > _SQL_SP_FLOAT_MAX:
            raise _bad('%r is greater than the maximum of %r (allocation_ratio of %s)'
                       % (ratio, _SQL_SP_FLOAT_MAX, where))
        if not model.is_finite(ratio):
            # The schema lets NaN and -Infinity through; Placement then fails computing the
            # capacity with a 500 (placement.undefined_code): the same status and code here.
            raise PlacementError('allocation_ratio of %s is %s, not a finite number: Placement fails '
                                 'with "cannot convert float %s to integer"'
                                 % (where, ratio, 'NaN' if math.isnan(ratio) else 'infinity'), status=500)


def _inventory_values(record):
    """Placement's INVENTORY_DEFAULTS filled in (no range checks: done by the schema)."""
    inv = dict(model.INVENTORY_DEFAULTS)
    for key in model.INVENTORY_FIELDS:
        if key in record:
            inv[key] = record[key]
    for key in ('total', 'reserved', 'min_unit', 'max_unit', 'step_size'):
        inv[key] = int(inv[key])
    inv['allocation_ratio'] = float(inv['allocation_ratio'])
    return inv


def _check_inventories_body(body, where='inventories'):
    """PUT_INVENTORY_SCHEMA: {"resource_provider_generation": int, "inventories": {RC: record}}."""
    if not isinstance(body, dict):
        raise _bad('%r is not of type \'object\' (%s)' % (body, where))
    extra = sorted(set(body) - {'resource_provider_generation', 'inventories'})
    if extra:
        raise _bad('Additional properties are not allowed (%s were unexpected) in %s'
                   % (', '.join(repr(k) for k in extra), where))
    for key in ('resource_provider_generation', 'inventories'):
        if key not in body:
            raise _bad("'%s' is a required property (%s)" % (key, where))
    if not _is_int(body['resource_provider_generation']):
        raise _bad("%r is not of type 'integer' (resource_provider_generation)"
                   % (body['resource_provider_generation'],))
    invs = body['inventories']
    if not isinstance(invs, dict):
        raise _bad("%r is not of type 'object' (inventories)" % (invs,))
    for rc, record in invs.items():
        # Only names matching the class pattern are validated by the schema; any
        # other key fails later as an unknown resource class.
        if isinstance(rc, str) and _RC_TRAIT_RE.search(rc):
            _check_inventory_record(record, 'inventory of %s' % rc)


def _check_allocation_request(body, where, require_type=True):
    """ALLOCATION_SCHEMA_V1_38 (PUT) / one consumer of POST_ALLOCATIONS_V1_38.

    ``require_type=False``: the 1.37 form (no ``consumer_type``; an existing
    consumer keeps its type), which the reshaper accepts when no consumer of
    the request names a type.
    """
    if not isinstance(body, dict):
        raise _bad("%r is not of type 'object' (%s)" % (body, where))
    extra = sorted(set(body) - set(_ALLOCATION_KEYS))
    if extra:
        raise _bad('Additional properties are not allowed (%s were unexpected) in %s'
                   % (', '.join(repr(k) for k in extra), where))
    required = ('allocations', 'project_id', 'user_id', 'consumer_generation', 'consumer_type')
    for key in required if require_type else required[:-1]:
        if key not in body:
            raise _bad("'%s' is a required property (%s)" % (key, where))
    allocs = body['allocations']
    if not isinstance(allocs, dict):
        raise _bad("%r is not of type 'object' (allocations of %s)" % (allocs, where))
    for rp, entry in allocs.items():
        if not isinstance(rp, str) or not _UUID_KEY_RE.search(rp):
            raise _bad("Additional properties are not allowed (%r was unexpected) in allocations of %s"
                       % (rp, where))
        if not isinstance(entry, dict):
            raise _bad("%r is not of type 'object' (allocation of %s on %s)" % (entry, where, rp))
        bad_keys = sorted(set(entry) - {'resources', 'generation'})
        if bad_keys:
            raise _bad('Additional properties are not allowed (%s were unexpected) in allocation '
                       'of %s on %s' % (', '.join(repr(k) for k in bad_keys), where, rp))
        if 'resources' not in entry:
            raise _bad("'resources' is a required property (allocation of %s on %s)" % (where, rp))
        if 'generation' in entry and not _is_int(entry['generation']):
            raise _bad("%r is not of type 'integer' (generation of %s)" % (entry['generation'], rp))
        resources = entry['resources']
        if not isinstance(resources, dict):
            raise _bad("%r is not of type 'object' (resources of %s on %s)" % (resources, where, rp))
        if not resources:
            raise _bad('{} does not have enough properties (resources of %s on %s)' % (where, rp))
        for rc, amount in resources.items():
            if not isinstance(rc, str) or not _RC_TRAIT_RE.search(rc):
                raise _bad('Additional properties are not allowed (%r was unexpected) in resources '
                           'of %s on %s' % (rc, where, rp))
            if not _is_int(amount):
                raise _bad("%r is not of type 'integer' (%s of %s on %s)" % (amount, rc, where, rp))
            if amount < 1:
                raise _bad('%r is less than the minimum of 1 (%s of %s on %s)' % (amount, rc, where, rp))
    for key in ('project_id', 'user_id'):
        value = body[key]
        if not isinstance(value, str):
            raise _bad("%r is not of type 'string' (%s of %s)" % (value, key, where))
        if not 1 <= len(value) <= 255:
            raise _bad('%s of %s must be 1 to 255 characters long' % (key, where))
    gen = body['consumer_generation']
    if gen is not None and not _is_int(gen):
        raise _bad("%r is not of type 'integer', 'null' (consumer_generation of %s)" % (gen, where))
    ctype = body.get('consumer_type')
    if ctype is not None or require_type:
        if not isinstance(ctype, str):
            raise _bad("%r is not of type 'string' (consumer_type of %s)" % (ctype, where))
        if not 1 <= len(ctype) <= 255 or not _RC_TRAIT_RE.search(ctype):
            raise _bad("%r does not match '^[A-Z0-9_]+$' (consumer_type of %s)" % (ctype, where))
    if 'mappings' in body:
        mappings = body['mappings']
        if not isinstance(mappings, dict) or not mappings:
            raise _bad('mappings of %s must be a non-empty object' % where)
        for group, rps in mappings.items():
            if _GROUP_RE.search(group) and (
                    not isinstance(rps, list) or not rps or
                    not all(_is_uuid_like(r) for r in rps)):
                raise _bad('mappings[%r] of %s must be a non-empty list of uuids' % (group, where))


def _check_post_allocations(body, min_consumers=1, where='allocations', require_type=True):
    if not isinstance(body, dict):
        raise _bad("%r is not of type 'object' (%s)" % (body, where))
    if len(body) < min_consumers:
        raise _bad('{} does not have enough properties (%s)' % where)
    for consumer, request in body.items():
        if not isinstance(consumer, str) or not _UUID_KEY_RE.search(consumer):
            raise _bad('Additional properties are not allowed (%r was unexpected) in %s'
                       % (consumer, where))
        _check_allocation_request(request, 'consumer %s' % consumer, require_type=require_type)


# ---------------------------------------------------------------------------
# the backend
# ---------------------------------------------------------------------------

class EmbeddedBackend(Backend):
    """Placement 16.0.0 (microversion 1.39) on one SQLite file.

    ``path`` is the database file; it is created (mode 0600, schema and the
    standard resource classes and traits) on first use, unless ``create`` is
    false, when a missing file is a ConfigurationError (an empty one a
    StoreNotADatabase).  ``integrity_check`` is what opening checks: ``full``
    (SQLite's integrity_check, the default), ``quick`` (quick_check) or ``off``.  ``busy_timeout`` is how
    many seconds a write waits for another process holding the write lock.
    ``synchronous`` is SQLite's durability level (``FULL``: every commit is on
    disk before the call returns; ``NORMAL`` is faster and may lose the last
    commits on power loss, never corrupting the file).
    """

    kind = 'embedded'

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

    # -- session ---------------------------------------------------------
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
        return 'EmbeddedBackend(%r)' % (self.path,)

    # -- connection, schema, transactions -------------------------------
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
        if row is not None and row[0] == SCHEMA_VERSION:
            return
        conn.execute('BEGIN IMMEDIATE')
        try:
            for stmt in _DDL:
                conn.execute(stmt)
            row = conn.execute('SELECT version FROM schema_version WHERE id = 1').fetchone()
            if row is None:
                self._seed(conn)
                conn.execute('INSERT INTO schema_version (id, version) VALUES (1, ?)', (SCHEMA_VERSION,))
            elif row[0] > SCHEMA_VERSION:
                raise ConfigurationError(
                    'embedded_db: %s was written by a newer placement.upgrade (schema version %d, '
                    'this one knows up to %d)' % (self.path, row[0], SCHEMA_VERSION))
            elif row[0] < SCHEMA_VERSION:
                for version in range(row[0] + 1, SCHEMA_VERSION + 1):
                    for stmt in _MIGRATIONS.get(version, ()):
                        conn.execute(stmt)
                conn.execute('UPDATE schema_version SET version = ? WHERE id = 1', (SCHEMA_VERSION,))
            conn.execute('COMMIT')
        except BaseException:
            self._rollback(conn)
            raise

    @staticmethod
    def _seed(conn):
        conn.executemany('INSERT OR IGNORE INTO resource_classes (id, name) VALUES (?, ?)',
                         list(enumerate(names.STANDARD_RESOURCE_CLASSES)))
        conn.executemany('INSERT OR IGNORE INTO traits (name) VALUES (?)',
                         [(t,) for t in names.STANDARD_TRAITS])

    @staticmethod
    def _rollback(conn):
        try:
            if conn.in_transaction:
                conn.execute('ROLLBACK')
        except sqlite3.Error:
            pass

    def _connection(self):
        if self._conn is None:
            raise ConfigurationError('embedded_db: %s is closed' % self.path)
        return self._conn

    def _translate(self, exc, what):
        """The typed error for an ``sqlite3`` exception (the transaction was rolled back)."""
        kind = _sqlite_kind(exc)
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

    def _run(self, write, func, *args):
        """Run ``func(conn, *args)`` in one transaction (IMMEDIATE for writes)."""
        with self._lock:
            return self._run_locked(write, func, *args)

    def _run_locked(self, write, func, *args):
        conn = self._connection()
        what = getattr(func, '__name__', 'query').lstrip('_')
        try:
            conn.execute('BEGIN IMMEDIATE' if write else 'BEGIN')
            try:
                result = func(conn, *args)
            except _CommitThenRaise as partial:
                conn.execute('COMMIT')
                raise partial.error
            except BaseException:
                self._rollback(conn)
                raise
            conn.execute('COMMIT')
            return result
        except sqlite3.Error as exc:
            self._rollback(conn)
            raise self._translate(exc, what)

    # -- small lookups ----------------------------------------------------
    @staticmethod
    def _provider(conn, uuid):
        return conn.execute(
            'SELECT p.id, p.uuid, p.name, p.generation, p.parent_id, p.root_id,'
            ' par.uuid, root.uuid FROM providers p'
            ' LEFT JOIN providers par ON par.id = p.parent_id'
            ' LEFT JOIN providers root ON root.id = p.root_id'
            ' WHERE p.uuid = ?', (uuid,)).fetchone()

    def _require_provider(self, conn, uuid, message=None):
        row = self._provider(conn, uuid) if isinstance(uuid, str) else None
        if row is None:
            raise NotFound(message or 'No resource provider with uuid %s found' % (uuid,))
        return row

    @staticmethod
    def _provider_dict(row):
        return {
            'uuid': row[1],
            'name': row[2],
            'generation': row[3],
            'parent_provider_uuid': row[6],
            'root_provider_uuid': row[7],
        }

    @staticmethod
    def _rc_id(conn, name):
        if not isinstance(name, str):
            return None
        row = conn.execute('SELECT id FROM resource_classes WHERE name = ?', (name,)).fetchone()
        return row[0] if row else None

    def _rc_id_or_raise(self, conn, name):
        rc_id = self._rc_id(conn, name)
        if rc_id is None:
            raise _RcNotFound(name)
        return rc_id

    @staticmethod
    def _bump(conn, provider_id, generation):
        """Compare-and-update one provider generation (+1)."""
        cur = conn.execute('UPDATE providers SET generation = generation + 1 '
                           'WHERE id = ? AND generation = ?', (provider_id, generation))
        if cur.rowcount != 1:
            raise ConcurrentUpdate('Another thread concurrently updated the resource provider '
                                   'data. Please retry your update')
        return generation + 1

    @staticmethod
    def _inventory_rows(conn, provider_id):
        rows = conn.execute(
            'SELECT rc.name, i.rc_id, i.total, i.reserved, i.min_unit, i.max_unit, i.step_size,'
            ' i.allocation_ratio FROM inventories i JOIN resource_classes rc ON rc.id = i.rc_id'
            ' WHERE i.provider_id = ? ORDER BY i.rc_id', (provider_id,)).fetchall()
        return collections.OrderedDict((r[0], r) for r in rows)

    @staticmethod
    def _inventory_record(row):
        return {
            'total': row[2],
            'reserved': row[3],
            'min_unit': row[4],
            'max_unit': row[5],
            'step_size': row[6],
            'allocation_ratio': row[7],
        }

    # -- resource providers -------------------------------------------
    def list_providers(self, name=None, uuid=None, in_tree=None):
        if uuid is not None and not _is_uuid_like(uuid):
            raise BadRequest("Invalid query string parameters: '%s' is not a 'uuid'" % (uuid,))
        if in_tree is not None and not _is_uuid_like(in_tree):
            raise BadRequest("Invalid query string parameters: Expected 'in_tree' parameter to be "
                             "a format of uuid. Got: %s" % (in_tree,))
        return self._run(False, self._list_providers, name, uuid, in_tree)

    def _list_providers(self, conn, name, uuid, in_tree):
        sql = ('SELECT p.id, p.uuid, p.name, p.generation, p.parent_id, p.root_id,'
               ' par.uuid, root.uuid FROM providers p'
               ' LEFT JOIN providers par ON par.id = p.parent_id'
               ' LEFT JOIN providers root ON root.id = p.root_id')
        where, args = [], []
        if name:
            where.append('p.name = ?')
            args.append(name)
        if uuid:
            where.append('p.uuid = ?')
            args.append(uuid)
        if in_tree:
            tree = self._provider(conn, in_tree)
            if tree is None:
                return []
            where.append('p.root_id = ?')
            args.append(tree[5])
        if where:
            sql += ' WHERE ' + ' AND '.join(where)
        sql += ' ORDER BY p.id'
        return [self._provider_dict(r) for r in conn.execute(sql, args)]

    def get_provider(self, uuid):
        return self._run(False, self._get_provider, uuid)

    def _get_provider(self, conn, uuid):
        return self._provider_dict(self._require_provider(conn, uuid))

    def create_provider(self, name, uuid=None, parent_provider_uuid=None):
        # POST_RP_SCHEMA_V1_14
        if not isinstance(name, str):
            raise _bad("%r is not of type 'string' (name)" % (name,))
        if len(name) > 200:
            raise _bad('%r is too long (name: at most 200 characters)' % (name,))
        if uuid is not None and not _is_uuid_like(uuid):
            raise _bad("%r is not a 'uuid' (uuid)" % (uuid,))
        if parent_provider_uuid is not None and not _is_uuid_like(parent_provider_uuid):
            raise _bad("%r is not valid under any of the given schemas (parent_provider_uuid)"
                       % (parent_provider_uuid,))
        uuid = str(_uuid.UUID(uuid)) if uuid else str(_uuid.uuid4())
        return self._run(True, self._create_provider, name, uuid, parent_provider_uuid)

    def _create_provider(self, conn, name, uuid, parent_uuid):
        def refuse(reason):
            return BadRequest('Unable to create resource provider "%s", %s: Object action create '
                              'failed because: %s' % (name, uuid, reason))
        if not name:
            raise refuse('name is required')
        parent = None
        if parent_uuid is not None:
            if parent_uuid == uuid:
                raise refuse('parent provider UUID cannot be same as UUID. Please set parent '
                             'provider UUID to None if there is no parent.')
            parent = self._provider(conn, parent_uuid)
            if parent is None:
                raise refuse('parent provider UUID does not exist.')
        dups = []
        if conn.execute('SELECT 1 FROM providers WHERE uuid = ?', (uuid,)).fetchone():
            dups.append('uuid: %s' % uuid)
        if conn.execute('SELECT 1 FROM providers WHERE name = ?', (name,)).fetchone():
            dups.append('name: %s' % name)
        if dups:
            raise DuplicateName('Conflicting resource provider %s already exists.' % ', '.join(dups))
        cur = conn.execute('INSERT INTO providers (uuid, name, generation, parent_id, root_id) '
                           'VALUES (?, ?, 0, ?, ?)',
                           (uuid, name, parent[0] if parent else None, parent[5] if parent else None))
        if parent is None:
            conn.execute('UPDATE providers SET root_id = id WHERE id = ?', (cur.lastrowid,))
        return self._provider_dict(self._provider(conn, uuid))

    def update_provider(self, uuid, name, parent_provider_uuid=None):
        return self._run(True, self._update_provider, uuid, name, parent_provider_uuid)

    def _update_provider(self, conn, uuid, name, parent_uuid):
        row = self._require_provider(conn, uuid)
        # PUT_RP_SCHEMA_V1_14 (validated after the provider is found, like Placement)
        if not isinstance(name, str):
            raise _bad("%r is not of type 'string' (name)" % (name,))
        if len(name) > 200:
            raise _bad('%r is too long (name: at most 200 characters)' % (name,))
        if parent_uuid is not None and not _is_uuid_like(parent_uuid):
            raise _bad("%r is not valid under any of the given schemas (parent_provider_uuid)"
                       % (parent_uuid,))

        def refuse(reason, action='update'):
            return BadRequest('Unable to save resource provider %s: Object action %s failed '
                              'because: %s' % (uuid, action, reason))
        my_id, parent_id, root_id = row[0], row[4], row[5]
        new_parent_id, new_root_id = parent_id, root_id
        subtree = []
        if parent_uuid is not None:
            parent = self._provider(conn, parent_uuid)
            if parent is None:
                raise refuse('parent provider UUID does not exist.', action='create')
            subtree = self._subtree_ids(conn, my_id)
            if parent[0] in subtree:
                raise refuse('creating loop in the provider tree is not allowed.')
            new_parent_id, new_root_id = parent[0], parent[5]
        elif parent_id is not None:
            # un-parent (1.37+): this provider becomes a root
            subtree = self._subtree_ids(conn, my_id)
            new_parent_id, new_root_id = None, my_id
        if name != row[2] and conn.execute('SELECT 1 FROM providers WHERE name = ? AND id != ?',
                                           (name, my_id)).fetchone():
            raise DuplicateName('Conflicting resource provider %s already exists.' % name)
        conn.execute('UPDATE providers SET name = ?, parent_id = ?, root_id = ? WHERE id = ?',
                     (name, new_parent_id, new_root_id, my_id))
        if subtree and new_root_id != root_id:
            conn.executemany('UPDATE providers SET root_id = ? WHERE id = ?',
                             [(new_root_id, pid) for pid in subtree])
        return self._provider_dict(self._provider(conn, uuid))

    @staticmethod
    def _subtree_ids(conn, provider_id):
        """The provider and all its descendants (ids)."""
        root = conn.execute('SELECT root_id FROM providers WHERE id = ?', (provider_id,)).fetchone()[0]
        children = collections.defaultdict(list)
        for pid, parent in conn.execute('SELECT id, parent_id FROM providers WHERE root_id = ?', (root,)):
            if parent is not None:
                children[parent].append(pid)
        out, todo = [], [provider_id]
        while todo:
            pid = todo.pop()
            out.append(pid)
            todo.extend(children.get(pid, ()))
        return out

    def delete_provider(self, uuid):
        return self._run(True, self._delete_provider, uuid)

    def _delete_provider(self, conn, uuid):
        row = self._require_provider(conn, uuid, 'No resource provider with uuid %s found for delete' % uuid)
        pid = row[0]
        if conn.execute('SELECT 1 FROM providers WHERE parent_id = ? LIMIT 1', (pid,)).fetchone():
            raise CannotDeleteParent('Unable to delete parent resource provider %s: It has child '
                                     'resource providers.' % uuid)
        if conn.execute('SELECT 1 FROM allocations WHERE provider_id = ? LIMIT 1', (pid,)).fetchone():
            raise ProviderInUse('Unable to delete resource provider %s: Resource provider has '
                                'allocations.' % uuid)
        conn.execute('DELETE FROM inventories WHERE provider_id = ?', (pid,))
        conn.execute('DELETE FROM provider_aggregates WHERE provider_id = ?', (pid,))
        conn.execute('DELETE FROM provider_traits WHERE provider_id = ?', (pid,))
        conn.execute('UPDATE providers SET root_id = NULL WHERE id = ?', (pid,))
        conn.execute('DELETE FROM providers WHERE id = ?', (pid,))

    # -- inventories --------------------------------------------------------
    def get_inventories(self, uuid):
        return self._run(False, self._get_inventories, uuid)

    def _get_inventories(self, conn, uuid):
        row = self._require_provider(conn, uuid)
        invs = self._inventory_rows(conn, row[0])
        return {'resource_provider_generation': row[3],
                'inventories': dict((rc, self._inventory_record(r)) for rc, r in invs.items())}

    def set_inventories(self, uuid, generation, inventories):
        body = {'resource_provider_generation': generation, 'inventories': inventories}
        return self._run(True, self._set_inventories, uuid, body)

    def _set_inventories(self, conn, uuid, body):
        row = self._require_provider(conn, uuid)
        _check_inventories_body(body)
        if body['resource_provider_generation'] != row[3]:
            raise ConcurrentUpdate('resource provider generation conflict')
        wanted = collections.OrderedDict(
            (rc, _inventory_values(record)) for rc, record in body['inventories'].items())
        for rc, inv in wanted.items():
            self._check_capacity_not_negative(inv, rc, uuid)
        try:
            generation = self._replace_inventory(conn, row, wanted)
        except _RcNotFound as exc:
            raise BadRequest('Unknown resource class in inventory for resource provider %s: %s'
                             % (uuid, exc))
        except InventoryInUse as exc:
            raise InventoryInUse('update conflict: %s' % exc.detail)
        return {'resource_provider_generation': generation,
                'inventories': dict((rc, dict(inv)) for rc, inv in wanted.items())}

    @staticmethod
    def _check_capacity_not_negative(inv, rc, uuid):
        """The inventory endpoints refuse a negative capacity (1.26+)."""
        if model.capacity(inv) < 0:
            # Placement's 400 (placement.undefined_code) says "The reserved value is greater than
            # total." for any negative capacity; the detail here names the field at fault.
            raise BadRequest('Unable to update inventory for resource provider %s: Invalid inventory '
                             "for '%s' on resource provider '%s'. %s" % (
                                 uuid, rc, uuid, model.negative_ratio_text(inv, rc)
                                 or 'The reserved value is greater than total.'))

    def _replace_inventory(self, conn, row, wanted):
        """Placement's _set_inventory: add, update and delete to make the set ``wanted``.

        Unknown class -> _RcNotFound (before anything else); dropping an allocated
        class -> InventoryInUse; generation +1 (compare-and-update).  Returns the
        new generation.
        """
        pid, generation = row[0], row[3]
        existing = self._inventory_rows(conn, pid)
        wanted_ids = collections.OrderedDict((rc, self._rc_id_or_raise(conn, rc)) for rc in wanted)
        to_delete = [r[1] for rc, r in existing.items() if rc not in wanted_ids]
        if to_delete:
            used = conn.execute(
                'SELECT DISTINCT rc.name FROM allocations a JOIN resource_classes rc ON rc.id = a.rc_id'
                ' WHERE a.provider_id = ? AND a.rc_id IN (%s) ORDER BY a.rc_id'
                % ','.join('?' * len(to_delete)), [pid] + to_delete).fetchall()
            if used:
                raise InventoryInUse("Inventory for '%s' on resource provider '%s' in use."
                                     % (', '.join(r[0] for r in used), row[1]))
            conn.execute('DELETE FROM inventories WHERE provider_id = ? AND rc_id IN (%s)'
                         % ','.join('?' * len(to_delete)), [pid] + to_delete)
        for rc, rc_id in wanted_ids.items():
            inv = wanted[rc]
            values = (inv['total'], inv['reserved'], inv['min_unit'], inv['max_unit'],
                      inv['step_size'], inv['allocation_ratio'])
            if rc in existing:
                conn.execute('UPDATE inventories SET total = ?, reserved = ?, min_unit = ?, max_unit = ?,'
                             ' step_size = ?, allocation_ratio = ? WHERE provider_id = ? AND rc_id = ?',
                             values + (pid, rc_id))
            else:
                conn.execute('INSERT INTO inventories (total, reserved, min_unit, max_unit, step_size,'
                             ' allocation_ratio, provider_id, rc_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
                             values + (pid, rc_id))
        return self._bump(conn, pid, generation)

    def set_inventory(self, uuid, resource_class, generation, inventory):
        body = dict(inventory or {})
        body['resource_provider_generation'] = generation
        return self._run(True, self._set_inventory, uuid, resource_class, body)

    def _set_inventory(self, conn, uuid, rc, body):
        row = self._require_provider(conn, uuid)
        _check_inventory_record(body, 'inventory of %s' % (rc,), generation_required=True)
        if body['resource_provider_generation'] != row[3]:
            raise ConcurrentUpdate('resource provider generation conflict')
        inv = _inventory_values(body)
        self._check_capacity_not_negative(inv, rc, uuid)
        rc_id = self._rc_id(conn, rc)
        if rc_id is None:
            raise NotFound('No such resource class %s.' % (rc,))
        cur = conn.execute(
            'UPDATE inventories SET total = ?, reserved = ?, min_unit = ?, max_unit = ?, step_size = ?,'
            ' allocation_ratio = ? WHERE provider_id = ? AND rc_id = ?',
            (inv['total'], inv['reserved'], inv['min_unit'], inv['max_unit'], inv['step_size'],
             inv['allocation_ratio'], row[0], rc_id))
        if cur.rowcount != 1:
            # Placement's PUT of one class only updates (400 for a class the
            # provider does not have); the Backend contract is create-or-update,
            # which the REST backend does with a generation-checked PUT of the
            # whole set: the same checks -- on EVERY record, so an existing one
            # the reshaper accepted with a negative capacity refuses the create
            # -- and the same +1.
            for other, other_row in self._inventory_rows(conn, row[0]).items():
                self._check_capacity_not_negative(self._inventory_record(other_row), other, uuid)
            conn.execute('INSERT INTO inventories (total, reserved, min_unit, max_unit, step_size,'
                         ' allocation_ratio, provider_id, rc_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
                         (inv['total'], inv['reserved'], inv['min_unit'], inv['max_unit'],
                          inv['step_size'], inv['allocation_ratio'], row[0], rc_id))
        result = dict(inv)
        result['resource_provider_generation'] = self._bump(conn, row[0], row[3])
        return result

    def delete_inventory(self, uuid, resource_class, generation=None):
        return self._run(True, self._delete_inventory, uuid, resource_class, generation)

    def _delete_inventory(self, conn, uuid, rc, generation):
        row = self._require_provider(conn, uuid)
        if generation is not None and generation != row[3]:
            raise ConcurrentUpdate(
                'resource provider generation conflict: deleting the %s inventory of resource provider '
                '%s expected generation %s, the provider is at %s. Please retry your request.'
                % (rc, uuid, generation, row[3]))
        rc_id = self._rc_id(conn, rc)
        if rc_id is None:
            raise NotFound('No inventory of class %s found for delete: No such resource class %s.'
                           % (rc, rc))
        if not conn.execute('SELECT 1 FROM inventories WHERE provider_id = ? AND rc_id = ?',
                            (row[0], rc_id)).fetchone():
            raise NotFound('No inventory of class %s found for delete: No inventory of class %s '
                           'found for delete' % (rc, rc))
        if conn.execute('SELECT 1 FROM allocations WHERE provider_id = ? AND rc_id = ? LIMIT 1',
                        (row[0], rc_id)).fetchone():
            # Placement answers this InventoryInUse with the concurrent_update code.
            raise ConcurrentUpdate("Unable to delete inventory of class %s: Inventory for '%s' on "
                                   "resource provider '%s' in use." % (rc, rc, uuid))
        conn.execute('DELETE FROM inventories WHERE provider_id = ? AND rc_id = ?', (row[0], rc_id))
        self._bump(conn, row[0], row[3])

    def delete_inventories(self, uuid, generation=None):
        return self._run(True, self._delete_inventories, uuid, generation)

    def _delete_inventories(self, conn, uuid, generation):
        row = self._require_provider(conn, uuid)
        if generation is not None and generation != row[3]:
            raise ConcurrentUpdate('resource provider generation conflict')
        try:
            self._replace_inventory(conn, row, {})
        except InventoryInUse as exc:
            raise InventoryInUse(exc.detail)

    def get_usages(self, uuid):
        return self._run(False, self._get_usages, uuid)

    def _get_usages(self, conn, uuid):
        row = self._require_provider(conn, uuid)
        usages = {}
        for rc, used in conn.execute(
                'SELECT rc.name, COALESCE((SELECT SUM(a.used) FROM allocations a'
                ' WHERE a.provider_id = i.provider_id AND a.rc_id = i.rc_id), 0)'
                ' FROM inventories i JOIN resource_classes rc ON rc.id = i.rc_id'
                ' WHERE i.provider_id = ?', (row[0],)):
            usages[rc] = used
        return {'resource_provider_generation': row[3], 'usages': usages}

    # -- traits ---------------------------------------------------------------
    def list_traits(self, name=None):
        filters = {}
        if name is not None:
            if ':' not in name:
                raise BadRequest('Badly formatted name parameter. Expected name query string parameter '
                                 'in form: ?name=[in|startswith]:[name1,name2|prefix]. Got: "%s"' % name)
            op, value = name.split(':', 1)
            if op == 'in':
                filters['in'] = value.split(',')
            elif op == 'startswith':
                filters['prefix'] = value
        return self._run(False, self._list_traits, filters)

    @staticmethod
    def _list_traits(conn, filters):
        if 'in' in filters:
            wanted = filters['in']
            rows = conn.execute('SELECT name FROM traits WHERE name IN (%s) ORDER BY name'
                                % ','.join('?' * len(wanted)), wanted) if wanted else []
        elif 'prefix' in filters:
            prefix = filters['prefix']
            rows = conn.execute("SELECT name FROM traits WHERE substr(name, 1, ?) = ? ORDER BY name",
                                (len(prefix), prefix))
        else:
            rows = conn.execute('SELECT name FROM traits ORDER BY name')
        return [r[0] for r in rows]

    def ensure_trait(self, name):
        if not isinstance(name, str) or not (1 <= len(name) <= 255) or not _CUSTOM_RE.search(name):
            raise BadRequest('The trait is invalid. A valid trait must be no longer than 255 characters, '
                             'start with the prefix "CUSTOM_" and use following characters: "A"-"Z", '
                             '"0"-"9" and "_"')
        return self._run(True, self._ensure_trait, name)

    @staticmethod
    def _ensure_trait(conn, name):
        return conn.execute('INSERT OR IGNORE INTO traits (name) VALUES (?)', (name,)).rowcount == 1

    def get_provider_traits(self, uuid):
        return self._run(False, self._get_provider_traits, uuid)

    def _get_provider_traits(self, conn, uuid):
        row = self._require_provider(conn, uuid)
        return {'resource_provider_generation': row[3], 'traits': self._traits_of(conn, row[0])}

    @staticmethod
    def _traits_of(conn, provider_id):
        return [r[0] for r in conn.execute(
            'SELECT t.name FROM provider_traits pt JOIN traits t ON t.id = pt.trait_id'
            ' WHERE pt.provider_id = ? ORDER BY t.name', (provider_id,))]

    def set_provider_traits(self, uuid, generation, traits):
        body = {'resource_provider_generation': generation, 'traits': traits}
        # SET_TRAITS_FOR_RP_SCHEMA is checked before the provider is looked up.
        if not isinstance(traits, (list, tuple)):
            raise _bad("%r is not of type 'array' (traits)" % (traits,))
        for trait in traits:
            if not isinstance(trait, str) or not 1 <= len(trait) <= 255:
                raise _bad('%r is not a valid trait name (traits)' % (trait,))
        if not _is_int(generation):
            raise _bad("%r is not of type 'integer' (resource_provider_generation)" % (generation,))
        return self._run(True, self._set_provider_traits, uuid, body)

    def _set_provider_traits(self, conn, uuid, body):
        row = self._require_provider(conn, uuid)
        if body['resource_provider_generation'] != row[3]:
            raise ConcurrentUpdate("Resource provider's generation already changed. Please update the "
                                   "generation and try again.")
        wanted = list(body['traits'])
        found = {}
        if wanted:
            for tid, tname in conn.execute('SELECT id, name FROM traits WHERE name IN (%s)'
                                           % ','.join('?' * len(wanted)), wanted):
                found[tname] = tid
        missing = sorted(set(wanted) - set(found))
        if missing:
            raise BadRequest('No such trait %s' % ', '.join(missing))
        existing = set(r[0] for r in conn.execute('SELECT trait_id FROM provider_traits WHERE provider_id = ?',
                                                  (row[0],)))
        want_ids = set(found.values())
        to_add, to_delete = want_ids - existing, existing - want_ids
        generation = row[3]
        if to_add or to_delete:
            conn.executemany('DELETE FROM provider_traits WHERE provider_id = ? AND trait_id = ?',
                             [(row[0], t) for t in to_delete])
            conn.executemany('INSERT INTO provider_traits (provider_id, trait_id) VALUES (?, ?)',
                             [(row[0], t) for t in to_add])
            generation = self._bump(conn, row[0], row[3])
        return {'resource_provider_generation': generation, 'traits': sorted(found)}

    # -- aggregates -------------------------------------------------------
    def get_aggregates(self, uuid):
        return self._run(False, self._get_aggregates, uuid)

    def _get_aggregates(self, conn, uuid):
        row = self._require_provider(conn, uuid)
        return {'resource_provider_generation': row[3], 'aggregates': self._aggregates_of(conn, row[0])}

    @staticmethod
    def _aggregates_of(conn, provider_id):
        return [r[0] for r in conn.execute(
            'SELECT aggregate_uuid FROM provider_aggregates WHERE provider_id = ? ORDER BY id',
            (provider_id,))]

    def set_aggregates(self, uuid, generation, aggregates):
        body = {'resource_provider_generation': generation, 'aggregates': aggregates}
        return self._run(True, self._set_aggregates, uuid, body)

    def _set_aggregates(self, conn, uuid, body):
        row = self._require_provider(conn, uuid)
        aggregates = body['aggregates']
        if not isinstance(aggregates, (list, tuple)):
            raise _bad("%r is not of type 'array' (aggregates)" % (aggregates,))
        for agg in aggregates:
            if not _is_uuid_like(agg):
                raise _bad("%r is not a 'uuid' (aggregates)" % (agg,))
        if len(set(aggregates)) != len(aggregates):
            raise _bad('%r has non-unique elements (aggregates)' % (list(aggregates),))
        if not _is_int(body['resource_provider_generation']):
            raise _bad("%r is not of type 'integer' (resource_provider_generation)"
                       % (body['resource_provider_generation'],))
        if body['resource_provider_generation'] != row[3]:
            raise ConcurrentUpdate("Resource provider's generation already changed. Please update the "
                                   "generation and try again.")
        existing = set(self._aggregates_of(conn, row[0]))
        wanted = list(aggregates)
        conn.executemany('DELETE FROM provider_aggregates WHERE provider_id = ? AND aggregate_uuid = ?',
                         [(row[0], a) for a in existing - set(wanted)])
        conn.executemany('INSERT OR IGNORE INTO provider_aggregates (provider_id, aggregate_uuid) '
                         'VALUES (?, ?)', [(row[0], a) for a in wanted if a not in existing])
        generation = self._bump(conn, row[0], row[3])
        return {'resource_provider_generation': generation, 'aggregates': wanted}

    # -- resource classes -----------------------------------------------------
    def list_resource_classes(self):
        return self._run(False, self._list_resource_classes)

    @staticmethod
    def _list_resource_classes(conn):
        return [r[0] for r in conn.execute('SELECT name FROM resource_classes ORDER BY id')]

    def ensure_resource_class(self, name):
        if not isinstance(name, str) or len(name) > 255 or not _CUSTOM_RE.search(name):
            raise BadRequest("JSON does not validate: %r does not match '^CUSTOM_[A-Z0-9_]+$'" % (name,))
        return self._run(True, self._ensure_resource_class, name)

    @staticmethod
    def _ensure_resource_class(conn, name):
        if conn.execute('SELECT 1 FROM resource_classes WHERE name = ?', (name,)).fetchone():
            return False
        next_id = conn.execute('SELECT MAX(id) FROM resource_classes').fetchone()[0]
        next_id = max(_CUSTOM_RC_FIRST_ID, (next_id or 0) + 1)
        conn.execute('INSERT INTO resource_classes (id, name) VALUES (?, ?)', (next_id, name))
        return True

    # -- allocations: reads ---------------------------------------------------
    def get_allocations(self, consumer_uuid):
        return self._run(False, self._get_allocations, consumer_uuid)

    def _get_allocations(self, conn, consumer_uuid):
        rows = conn.execute(
            'SELECT p.uuid, p.generation, rc.name, a.used FROM allocations a'
            ' JOIN providers p ON p.id = a.provider_id JOIN resource_classes rc ON rc.id = a.rc_id'
            ' WHERE a.consumer_uuid = ? ORDER BY a.id', (consumer_uuid,)).fetchall()
        if not rows:
            return {'allocations': {}}
        allocations = {}
        for rp, gen, rc, used in rows:
            entry = allocations.setdefault(rp, {'resources': {}, 'generation': gen})
            entry['resources'][rc] = used
        consumer = conn.execute('SELECT project_id, user_id, generation, consumer_type FROM consumers '
                                'WHERE uuid = ?', (consumer_uuid,)).fetchone()
        result = {'allocations': allocations}
        if consumer is not None:
            result.update({'project_id': consumer[0], 'user_id': consumer[1],
                           'consumer_generation': consumer[2],
                           'consumer_type': consumer[3] or 'unknown'})
        return result

    def get_provider_allocations(self, uuid):
        return self._run(False, self._get_provider_allocations, uuid)

    def _get_provider_allocations(self, conn, uuid):
        row = self._require_provider(conn, uuid, "Resource provider '%s' not found: No resource "
                                                 "provider with uuid %s found" % (uuid, uuid))
        allocations = {}
        for consumer, rc, used, cgen in conn.execute(
                'SELECT a.consumer_uuid, rc.name, a.used, c.generation FROM allocations a'
                ' JOIN resource_classes rc ON rc.id = a.rc_id'
                ' LEFT JOIN consumers c ON c.uuid = a.consumer_uuid'
                ' WHERE a.provider_id = ? ORDER BY a.id', (row[0],)):
            entry = allocations.setdefault(consumer, {'resources': {}, 'consumer_generation': cgen})
            entry['resources'][rc] = used
        return {'resource_provider_generation': row[3], 'allocations': allocations}

    # -- allocations: writes ----------------------------------------------
    def put_allocations(self, consumer_uuid, body):
        if not _is_uuid_like(consumer_uuid):
            raise BadRequest('Malformed consumer_uuid: %s' % (consumer_uuid,))
        consumer_uuid = str(_uuid.UUID(consumer_uuid))
        _check_allocation_request(body, 'consumer %s' % consumer_uuid)
        self._run(True, self._put_allocations, consumer_uuid, body)

    def _put_allocations(self, conn, consumer_uuid, body):
        data = collections.OrderedDict([(consumer_uuid, body)])
        consumers = self._ensure_consumers(conn, data)
        try:
            allocs = self._allocation_list(conn, data, consumers)
        except BadRequest as exc:
            # Placement created the consumer in its own transaction before it
            # looked the providers up: the consumer stays (empty, generation 0).
            raise _CommitThenRaise(exc)
        try:
            self._set_allocations(conn, data, consumers, allocs)
        except _RcNotFound as exc:
            raise BadRequest('Unable to allocate inventory for consumer %s: %s' % (consumer_uuid, exc))
        except ConcurrentUpdate as exc:
            raise ConcurrentUpdate('Inventory and/or allocations changed while attempting to '
                                   'allocate: %s' % exc.detail)

    def post_allocations(self, body):
        _check_post_allocations(body)
        self._run(True, self._post_allocations, body)

    def _post_allocations(self, conn, body):
        data = collections.OrderedDict(body.items())
        consumers = self._ensure_consumers(conn, data)
        try:
            allocs = self._allocation_list(conn, data, consumers)
        except BadRequest as exc:
            raise _CommitThenRaise(exc)
        try:
            self._set_allocations(conn, data, consumers, allocs)
        except _RcNotFound as exc:
            raise BadRequest('Unable to allocate inventory %s' % exc)
        except ConcurrentUpdate as exc:
            raise ConcurrentUpdate('Inventory and/or allocations changed while attempting to '
                                   'allocate: %s' % exc.detail)

    def delete_allocations(self, consumer_uuid):
        self._run(True, self._delete_allocations, consumer_uuid)

    @staticmethod
    def _delete_allocations(conn, consumer_uuid):
        cur = conn.execute('DELETE FROM allocations WHERE consumer_uuid = ?', (consumer_uuid,))
        if cur.rowcount == 0:
            raise NotFound("No allocations for consumer '%s'" % (consumer_uuid,))
        # Provider generations are NOT bumped by DELETE /allocations/{c}.
        conn.execute('DELETE FROM consumers WHERE uuid = ?', (consumer_uuid,))

    def _ensure_consumers(self, conn, data):
        """Placement's ensure_consumer for every consumer of the request, in order.

        Checks the consumer generation (409 concurrent_update) and creates the
        consumers that do not exist yet (generation 0).  Returns
        ``{uuid: {"id", "generation", "new"}}``.
        """
        consumers = collections.OrderedDict()
        for cuuid, req in data.items():
            given = req.get('consumer_generation')
            row = conn.execute('SELECT id, generation FROM consumers WHERE uuid = ?', (cuuid,)).fetchone()
            if row is not None:
                if given is None or int(given) != row[1]:
                    raise ConcurrentUpdate('consumer generation conflict - expected %s but got %s'
                                           % (row[1], given))
                consumers[cuuid] = {'id': row[0], 'generation': row[1], 'new': False}
            else:
                if given is not None:
                    raise ConcurrentUpdate('consumer generation conflict - expected null but got %s'
                                           % (given,))
                cur = conn.execute('INSERT INTO consumers (uuid, project_id, user_id, consumer_type, '
                                   'generation) VALUES (?, ?, ?, ?, 0)',
                                   (cuuid, req['project_id'], req['user_id'], req.get('consumer_type')))
                consumers[cuuid] = {'id': cur.lastrowid, 'generation': 0, 'new': True}
        return consumers

    def _allocation_list(self, conn, data, consumers):
        """Placement's create_allocation_list: [(consumer, provider row, class, used)].

        An empty ``allocations`` map turns the consumer's current allocations into
        ``used = 0`` entries (removal).  Unknown provider -> BadRequest.
        """
        allocs = []
        for cuuid, req in data.items():
            requested = req['allocations']
            if requested:
                rows = {}
                for rp in requested:
                    prow = self._provider(conn, rp)
                    if prow is None:
                        raise BadRequest("Allocation for resource provider '%s' that does not exist." % rp)
                    rows[rp] = prow
                for rp, entry in requested.items():
                    for rc, amount in entry['resources'].items():
                        allocs.append((cuuid, rows[rp], rc, int(amount)))
            else:
                for prow_uuid, rc in conn.execute(
                        'SELECT p.uuid, rc.name FROM allocations a JOIN providers p ON p.id = a.provider_id'
                        ' JOIN resource_classes rc ON rc.id = a.rc_id WHERE a.consumer_uuid = ?'
                        ' ORDER BY a.id', (cuuid,)).fetchall():
                    allocs.append((cuuid, self._provider(conn, prow_uuid), rc, 0))
        return allocs

    def _set_allocations(self, conn, data, consumers, allocs, provider_rows=None):
        """Placement's update_consumers + alloc_obj.replace_all, in the caller's transaction.

        ``provider_rows`` ({uuid: row}) overrides the provider rows (and so the
        generations compared) with fresher ones, as the reshaper does after its
        interim inventory step.
        """
        # update_consumers: project, user and type follow the request (no generation bump)
        for cuuid, req in data.items():
            conn.execute('UPDATE consumers SET project_id = ?, user_id = ?, '
                         'consumer_type = COALESCE(?, consumer_type) WHERE id = ? AND generation = ?',
                         (req['project_id'], req['user_id'], req.get('consumer_type'),
                          consumers[cuuid]['id'], consumers[cuuid]['generation']))
        if provider_rows:
            allocs = [(c, provider_rows.get(p[1], p), rc, used) for c, p, rc, used in allocs]
        if not allocs:
            return
        # Resolve classes first: an unknown class is a 400 before any capacity check.
        rc_ids = collections.OrderedDict()
        for _c, _p, rc, _u in allocs:
            if rc not in rc_ids:
                rc_ids[rc] = self._rc_id_or_raise(conn, rc)
        provider_ids = sorted(set(p[0] for _c, p, _rc, _u in allocs))
        prev_usage = self._usage_map(conn, provider_ids, list(rc_ids.values()))
        consumer_uuids = []
        for cuuid, _p, _rc, _u in allocs:
            if cuuid not in consumer_uuids:
                consumer_uuids.append(cuuid)
        conn.executemany('DELETE FROM allocations WHERE consumer_uuid = ?', [(c,) for c in consumer_uuids])

        visited = self._check_capacity(conn, allocs, rc_ids, provider_ids, prev_usage)
        conn.executemany('INSERT INTO allocations (provider_id, rc_id, consumer_uuid, used) VALUES (?, ?, ?, ?)',
                         [(p[0], rc_ids[rc], c, used) for c, p, rc, used in allocs if used > 0])
        for prow in visited:
            self._bump(conn, prow[0], prow[3])
        for cuuid in consumer_uuids:
            info = consumers[cuuid]
            cur = conn.execute('UPDATE consumers SET generation = generation + 1 WHERE id = ? AND generation = ?',
                               (info['id'], info['generation']))
            if cur.rowcount != 1:
                raise ConcurrentUpdate('Another thread concurrently updated the data. Please retry your update')
        with_allocs = set(c for c, _p, _rc, used in allocs if used > 0)
        empty = [c for c in consumer_uuids if c not in with_allocs]
        conn.executemany('DELETE FROM consumers WHERE uuid = ? AND NOT EXISTS '
                         '(SELECT 1 FROM allocations WHERE consumer_uuid = ?)', [(c, c) for c in empty])

    @staticmethod
    def _usage_map(conn, provider_ids, rc_ids):
        if not provider_ids or not rc_ids:
            return {}
        return dict(((pid, rc), used) for pid, rc, used in conn.execute(
            'SELECT provider_id, rc_id, SUM(used) FROM allocations WHERE provider_id IN (%s) AND rc_id IN (%s)'
            ' GROUP BY provider_id, rc_id' % (','.join('?' * len(provider_ids)), ','.join('?' * len(rc_ids))),
            list(provider_ids) + list(rc_ids)))

    def _check_capacity(self, conn, allocs, rc_ids, provider_ids, prev_usage):
        """Placement's _check_capacity_exceeded, in the same order with the same outcomes.

        Returns the provider rows whose generation the write must bump (every
        provider named in ``allocs``, removals included).
        """
        ids = list(rc_ids.values())
        inv = {}
        for row in conn.execute(
                'SELECT provider_id, rc_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio'
                ' FROM inventories WHERE provider_id IN (%s) AND rc_id IN (%s)'
                % (','.join('?' * len(provider_ids)), ','.join('?' * len(ids))), list(provider_ids) + ids):
            inv[(row[0], row[1])] = {'total': row[2], 'reserved': row[3], 'min_unit': row[4],
                                     'max_unit': row[5], 'step_size': row[6], 'allocation_ratio': row[7]}
        usage = self._usage_map(conn, provider_ids, ids)
        with_inv = set(pid for pid, _rc in inv)
        missing = []
        for _c, prow, _rc, _u in allocs:
            if prow[0] not in with_inv and prow[1] not in missing:
                missing.append(prow[1])
        if missing:
            raise CapacityExceeded("Unable to allocate inventory: Inventory for '%s' on resource provider "
                                   "'%s' invalid." % (', '.join(rc_ids), ', '.join(missing)))
        visited = collections.OrderedDict()
        needed_all = collections.defaultdict(int)
        for _c, prow, rc, amount in allocs:
            visited.setdefault(prow[1], prow)
            key = (prow[0], rc_ids[rc])
            needed_all[key] += amount
            if amount == 0:
                continue
            record = inv.get(key)
            if record is None:
                raise CapacityExceeded("Unable to allocate inventory: Inventory for '%s' on resource "
                                       "provider '%s' invalid." % (rc, prow[1]))
            text = model.check_amount(record, amount, rc, prow[1])
            if text:
                raise CapacityExceeded(text)
            used = usage.get(key, 0)
            if not model.fits(record, prev_usage.get(key, 0), used + needed_all[key]):
                raise CapacityExceeded(
                    "Unable to allocate inventory: Unable to create allocation for '%s' on resource "
                    "provider '%s'. The requested amount would exceed the capacity." % (rc, prow[1]))
        return list(visited.values())

    # -- reshaper -------------------------------------------------------------
    def reshape(self, body):
        if not isinstance(body, dict):
            raise _bad("%r is not of type 'object' (reshaper)" % (body,))
        extra = sorted(set(body) - {'inventories', 'allocations'})
        if extra:
            raise _bad('Additional properties are not allowed (%s were unexpected) in the reshaper body'
                       % ', '.join(repr(k) for k in extra))
        for key in ('inventories', 'allocations'):
            if key not in body:
                raise _bad("'%s' is a required property (reshaper)" % key)
        inventories = body['inventories']
        if not isinstance(inventories, dict):
            raise _bad("%r is not of type 'object' (reshaper inventories)" % (inventories,))
        if not inventories:
            raise _bad('{} does not have enough properties (reshaper inventories)')
        for rp, inv_body in inventories.items():
            if not isinstance(rp, str) or not _UUID_KEY_RE.search(rp):
                raise _bad('Additional properties are not allowed (%r was unexpected) in reshaper '
                           'inventories' % (rp,))
            _check_inventories_body(inv_body, 'inventories of %s' % rp)
        allocations = body['allocations']
        # Placement at 1.37 (what RestBackend sends when no consumer names a type) keeps each
        # consumer's type; at 1.38+ every consumer must name one.
        typed = isinstance(allocations, dict) and any(
            isinstance(r, dict) and 'consumer_type' in r for r in allocations.values())
        _check_post_allocations(allocations, min_consumers=0, where='reshaper allocations',
                                require_type=typed)
        self._run(True, self._reshape, body)

    def _reshape(self, conn, body):
        # 1. providers and their generations, in request order
        targets = collections.OrderedDict()
        for rp, inv_body in body['inventories'].items():
            row = self._provider(conn, rp)
            if row is None:
                raise BadRequest('Resource provider %s in inventories not found: No resource provider '
                                 'with uuid %s found' % (rp, rp), code=RESOURCE_PROVIDER_NOT_FOUND)
            if inv_body['resource_provider_generation'] != row[3]:
                raise ConcurrentUpdate('resource provider generation conflict for provider %s: actual: %s, '
                                       'given: %s' % (rp, row[3], inv_body['resource_provider_generation']))
            targets[rp] = collections.OrderedDict(
                (rc, _inventory_values(record)) for rc, record in inv_body['inventories'].items())
        # 2. consumers (generation checks, auto-creation), 3. the allocation list
        data = collections.OrderedDict(body['allocations'].items())
        consumers = self._ensure_consumers(conn, data)
        try:
            allocs = self._allocation_list(conn, data, consumers)
        except BadRequest as exc:
            raise _CommitThenRaise(exc)
        # 4. one transaction: interim union inventory, allocations, final inventory
        try:
            fresh = {}
            for rp, wanted in targets.items():
                row = self._provider(conn, rp)
                if wanted:
                    union = collections.OrderedDict(
                        (rc, self._inventory_record(r)) for rc, r in self._inventory_rows(conn, row[0]).items())
                    union.update(wanted)
                    self._replace_inventory(conn, row, union)
                fresh[rp] = self._provider(conn, rp)
            self._set_allocations(conn, data, consumers, allocs, provider_rows=fresh)
            for rp, wanted in targets.items():
                self._replace_inventory(conn, self._provider(conn, rp), wanted)
        except _RcNotFound as exc:
            raise BadRequest('malformed reshaper data: %s' % exc)
        except InventoryInUse as exc:
            raise InventoryInUse('update conflict: %s' % exc.detail)
        except ConcurrentUpdate as exc:
            raise ConcurrentUpdate('update conflict: %s' % exc.detail)


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


def _sqlite_kind(exc):
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


__all__ = ['EmbeddedBackend', 'MICROVERSION', 'SCHEMA_VERSION']
