# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The embedded placement: a SQLite store that behaves like Placement 16.0.0 at 1.39.

:class:`EmbeddedBackend` implements every method of :class:`..backend.Backend` on the
standard library's ``sqlite3``, so the modules, the planner and the demo run without
a cloud.  It mirrors the real service endpoint by endpoint -- the same validation
order, the same generation deltas, the same status and error code for each failure
-- and a differential test suite runs the same scenarios against the real service
to prove it (tests/integration/test_differential*.py).

Split as Placement splits its ``objects/``: :mod:`.store` (the file, the schema, ONE
transaction helper), :mod:`.providers`, :mod:`.inventories` (with usages and resource
classes), :mod:`.traits_aggregates`, :mod:`.allocations` (with consumers) and
:mod:`.reshaper`.  Placement's rules themselves are in :mod:`..rules`.

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
that is a :class:`..errors.ServiceUnavailable` naming the file.  No ``sqlite3``
exception ever escapes: everything is a :class:`..errors.PlacementError`.

A damaged file is never used: opening runs SQLite's ``integrity_check`` (about 30 ms on a
1,000-node store) and refuses a corrupt store with :class:`..errors.StoreCorrupt`; a file
that is not SQLite, or an empty (0-byte) file when ``create`` is false, is refused with
:class:`..errors.StoreNotADatabase` and left as it is.  Only a missing or empty file is
initialised, and only with ``create``.  An SQLite error during a call (``database disk image
is malformed``, ``disk I/O error``, ``database or disk is full``, ...) rolls the transaction
back and becomes a :class:`..errors.StoreError` naming the file, what SQLite said and what to do.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from .base import Backend
from .sqlite.allocations import AllocationsMixin
from .sqlite.inventories import InventoriesMixin
from .sqlite.providers import ProvidersMixin
from .sqlite.reshaper import ReshaperMixin
from .sqlite.store import DEFAULT_BUSY_TIMEOUT, MICROVERSION, SCHEMA_VERSION, Store
from .sqlite.traits_aggregates import TraitsAggregatesMixin


class EmbeddedBackend(ProvidersMixin, InventoriesMixin, TraitsAggregatesMixin, AllocationsMixin,
                      ReshaperMixin, Store, Backend):
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


__all__ = ['EmbeddedBackend', 'MICROVERSION', 'SCHEMA_VERSION', 'DEFAULT_BUSY_TIMEOUT']
