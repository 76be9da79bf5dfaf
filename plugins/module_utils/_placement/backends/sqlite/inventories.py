# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Inventories, usages and resource classes in the embedded store
(placement/objects/inventory.py, usage.py, resource_class.py).

:func:`replace` is Placement's ``_set_inventory`` (the reshaper uses it too);
:class:`InventoriesMixin` holds the inventory, usage and resource class endpoints
of :class:`.EmbeddedBackend`.  The rules are in :mod:`..rules.inventory`.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections

from ...errors import ConcurrentUpdate, InventoryInUse, NotFound
from ...rules import inventory as rules
from ...rules import names as name_rules
from ...rules import schemas
from . import providers
from .store import placeholders

# Custom resource classes get ids from 10000 like Placement does (standard classes
# keep the os-resource-classes order from 0).
_CUSTOM_RC_FIRST_ID = 10000

_COLUMNS = ('total', 'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio')


class RcNotFound(Exception):
    """A resource class name that does not exist (Placement's ResourceClassNotFound)."""

    def __init__(self, name):
        super(RcNotFound, self).__init__(name)
        self.name = name

    def __str__(self):
        return 'No such resource class %s.' % self.name


# -- resource classes -----------------------------------------------------------
def rc_id(conn, name):
    if not isinstance(name, str):
        return None
    row = conn.execute('SELECT id FROM resource_classes WHERE name = ?', (name,)).fetchone()
    return row['id'] if row else None


def rc_id_or_raise(conn, name):
    found = rc_id(conn, name)
    if found is None:
        raise RcNotFound(name)
    return found


def _ensure_resource_class(conn, name):
    if conn.execute('SELECT 1 FROM resource_classes WHERE name = ?', (name,)).fetchone():
        return False
    last = conn.execute('SELECT MAX(id) AS last FROM resource_classes').fetchone()['last']
    conn.execute('INSERT INTO resource_classes (id, name) VALUES (?, ?)',
                 (max(_CUSTOM_RC_FIRST_ID, (last or 0) + 1), name))
    return True


# -- inventory rows ----------------------------------------------------------------
def record(row):
    """An inventory row as Placement's record."""
    return dict((key, row[key]) for key in _COLUMNS)


def rows(conn, provider_id):
    """{class name: row (name, rc_id and the record's columns)}, in class id order."""
    found = conn.execute(
        'SELECT rc.name, i.rc_id, i.total, i.reserved, i.min_unit, i.max_unit, i.step_size,'
        ' i.allocation_ratio FROM inventories i JOIN resource_classes rc ON rc.id = i.rc_id'
        ' WHERE i.provider_id = ? ORDER BY i.rc_id', (provider_id,)).fetchall()
    return collections.OrderedDict((r['name'], r) for r in found)


def records(conn, provider_id):
    return collections.OrderedDict((rc, record(r)) for rc, r in rows(conn, provider_id).items())


def _values(inv):
    return tuple(inv[key] for key in _COLUMNS)


def _insert(conn, provider_id, class_id, inv):
    conn.execute('INSERT INTO inventories (total, reserved, min_unit, max_unit, step_size,'
                 ' allocation_ratio, provider_id, rc_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
                 _values(inv) + (provider_id, class_id))


def _update(conn, provider_id, class_id, inv):
    return conn.execute('UPDATE inventories SET total = ?, reserved = ?, min_unit = ?, max_unit = ?,'
                        ' step_size = ?, allocation_ratio = ? WHERE provider_id = ? AND rc_id = ?',
                        _values(inv) + (provider_id, class_id)).rowcount


def replace(conn, row, wanted):
    """Placement's _set_inventory: add, update and delete to make the provider's set ``wanted``.

    Unknown class -> RcNotFound (before anything else); dropping an allocated
    class -> InventoryInUse; generation +1 (compare-and-update).  Returns the
    new generation.
    """
    pid = row['id']
    existing = rows(conn, pid)
    wanted_ids = collections.OrderedDict((rc, rc_id_or_raise(conn, rc)) for rc in wanted)
    to_delete = [r['rc_id'] for rc, r in existing.items() if rc not in wanted_ids]
    if to_delete:
        used = conn.execute(
            'SELECT DISTINCT rc.name FROM allocations a JOIN resource_classes rc ON rc.id = a.rc_id'
            ' WHERE a.provider_id = ? AND a.rc_id IN (%s) ORDER BY a.rc_id' % placeholders(to_delete),
            [pid] + to_delete).fetchall()
        if used:
            raise InventoryInUse(rules.in_use_text([r['name'] for r in used], row['uuid']))
        conn.execute('DELETE FROM inventories WHERE provider_id = ? AND rc_id IN (%s)' % placeholders(to_delete),
                     [pid] + to_delete)
    for rc, class_id in wanted_ids.items():
        if rc in existing:
            _update(conn, pid, class_id, wanted[rc])
        else:
            _insert(conn, pid, class_id, wanted[rc])
    return providers.bump(conn, row)


def _check_generation(row, generation):
    if generation != row['generation']:
        raise ConcurrentUpdate('resource provider generation conflict')


def _set_all(conn, uuid, body):
    row = providers.require(conn, uuid)
    schemas.check_inventories_body(body)
    _check_generation(row, body['resource_provider_generation'])
    wanted = collections.OrderedDict(
        (rc, rules.with_defaults(rec)) for rc, rec in body['inventories'].items())
    for rc, inv in wanted.items():
        rules.check_capacity(inv, rc, uuid)
    try:
        generation = replace(conn, row, wanted)
    except RcNotFound as exc:
        raise rules.unknown_class_error(uuid, [exc.name])
    except InventoryInUse as exc:
        raise InventoryInUse('update conflict: %s' % exc.detail)
    return {'resource_provider_generation': generation,
            'inventories': dict((rc, dict(inv)) for rc, inv in wanted.items())}


def _set_one(conn, uuid, rc, body):
    row = providers.require(conn, uuid)
    schemas.check_inventory_record(body, 'inventory of %s' % (rc,), generation_required=True)
    _check_generation(row, body['resource_provider_generation'])
    inv = rules.with_defaults(body)
    rules.check_capacity(inv, rc, uuid)
    class_id = rc_id(conn, rc)
    if class_id is None:
        raise NotFound('No such resource class %s.' % (rc,))
    if _update(conn, row['id'], class_id, inv) != 1:
        # Placement's PUT of one class only updates (400 for a class the
        # provider does not have); the Backend contract is create-or-update,
        # which the REST backend does with a generation-checked PUT of the
        # whole set: the same checks -- on EVERY record, so an existing one
        # the reshaper accepted with a negative capacity refuses the create
        # -- and the same +1.
        for other, other_inv in records(conn, row['id']).items():
            rules.check_capacity(other_inv, other, uuid)
        _insert(conn, row['id'], class_id, inv)
    result = dict(inv)
    result['resource_provider_generation'] = providers.bump(conn, row)
    return result


def _delete_one(conn, uuid, rc, generation):
    row = providers.require(conn, uuid)
    if generation is not None and generation != row['generation']:
        raise ConcurrentUpdate(
            'resource provider generation conflict: deleting the %s inventory of resource provider '
            '%s expected generation %s, the provider is at %s. Please retry your request.'
            % (rc, uuid, generation, row['generation']))
    class_id = rc_id(conn, rc)
    if class_id is None:
        raise NotFound('No inventory of class %s found for delete: No such resource class %s.' % (rc, rc))
    if not conn.execute('SELECT 1 FROM inventories WHERE provider_id = ? AND rc_id = ?',
                        (row['id'], class_id)).fetchone():
        raise NotFound('No inventory of class %s found for delete: No inventory of class %s '
                       'found for delete' % (rc, rc))
    if conn.execute('SELECT 1 FROM allocations WHERE provider_id = ? AND rc_id = ? LIMIT 1',
                    (row['id'], class_id)).fetchone():
        # Placement answers this InventoryInUse with the concurrent_update code.
        raise ConcurrentUpdate('Unable to delete inventory of class %s: %s' % (rc, rules.in_use_text([rc], uuid)))
    conn.execute('DELETE FROM inventories WHERE provider_id = ? AND rc_id = ?', (row['id'], class_id))
    providers.bump(conn, row)


def _delete_all(conn, uuid, generation):
    row = providers.require(conn, uuid)
    if generation is not None:
        _check_generation(row, generation)
    replace(conn, row, {})


def _usages_of(conn, provider_id):
    """Amount used by class, every class with inventory (0 when unused)."""
    usages = {}
    for used in conn.execute(
            'SELECT rc.name, COALESCE((SELECT SUM(a.used) FROM allocations a'
            ' WHERE a.provider_id = i.provider_id AND a.rc_id = i.rc_id), 0) AS used'
            ' FROM inventories i JOIN resource_classes rc ON rc.id = i.rc_id'
            ' WHERE i.provider_id = ?', (provider_id,)):
        usages[used['name']] = used['used']
    return usages


def _records_of(conn, provider_id):
    return dict(records(conn, provider_id))


class InventoriesMixin(object):
    """/resource_providers/{u}/inventories, /usages and /resource_classes."""

    def get_inventories(self, uuid):
        with self.reader('get_inventories') as conn:
            return providers.collection(conn, uuid, 'inventories', _records_of)

    def set_inventories(self, uuid, generation, inventories):
        body = {'resource_provider_generation': generation, 'inventories': inventories}
        with self.writer('set_inventories') as conn:
            return _set_all(conn, uuid, body)

    def set_inventory(self, uuid, resource_class, generation, inventory):
        body = dict(inventory or {})
        body['resource_provider_generation'] = generation
        with self.writer('set_inventory') as conn:
            return _set_one(conn, uuid, resource_class, body)

    def delete_inventory(self, uuid, resource_class, generation=None):
        with self.writer('delete_inventory') as conn:
            _delete_one(conn, uuid, resource_class, generation)

    def delete_inventories(self, uuid, generation=None):
        with self.writer('delete_inventories') as conn:
            _delete_all(conn, uuid, generation)

    def get_usages(self, uuid):
        with self.reader('get_usages') as conn:
            return providers.collection(conn, uuid, 'usages', _usages_of)

    def list_resource_classes(self):
        with self.reader('list_resource_classes') as conn:
            return [r['name'] for r in conn.execute('SELECT name FROM resource_classes ORDER BY id')]

    def ensure_resource_class(self, name):
        name_rules.check_new_resource_class(name)
        with self.writer('ensure_resource_class') as conn:
            return _ensure_resource_class(conn, name)
