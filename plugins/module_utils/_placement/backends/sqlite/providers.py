# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Resource providers in the embedded store (placement/objects/resource_provider.py).

Row helpers every other part of the store uses (:func:`get`, :func:`require`,
:func:`bump`) and :class:`ProvidersMixin`, the provider endpoints of
:class:`.EmbeddedBackend`.  The rules are in :mod:`..rules.providers`.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import uuid as _uuid

from ...errors import ConcurrentUpdate, DuplicateName, NotFound
from ...rules import providers as rules
from ...rules import schemas

_SELECT = ('SELECT p.id, p.uuid, p.name, p.generation, p.parent_id, p.root_id,'
           ' par.uuid AS parent_provider_uuid, root.uuid AS root_provider_uuid FROM providers p'
           ' LEFT JOIN providers par ON par.id = p.parent_id'
           ' LEFT JOIN providers root ON root.id = p.root_id')


def get(conn, uuid):
    """The provider's row (id, uuid, name, generation, parent_id, root_id, parent_provider_uuid,
    root_provider_uuid) or None."""
    return conn.execute(_SELECT + ' WHERE p.uuid = ?', (uuid,)).fetchone()


def require(conn, uuid, message=None):
    row = get(conn, uuid) if isinstance(uuid, str) else None
    if row is None:
        raise NotFound(message or 'No resource provider with uuid %s found' % (uuid,))
    return row


def collection(conn, uuid, key, read, message=None):
    """Placement's answer to a GET of one of a provider's collections (its inventories, usages, traits,
    aggregates, allocations): ``{'resource_provider_generation': <the provider's>, key: read(conn, <its
    row id>)}``; NotFound (``message``) when there is no such provider."""
    row = require(conn, uuid, message)
    return {'resource_provider_generation': row['generation'], key: read(conn, row['id'])}


def as_dict(row):
    return rules.provider_view(row)


def bump(conn, row):
    """Compare-and-update the provider's generation (+1) from the one in ``row``; returns the new one."""
    cur = conn.execute('UPDATE providers SET generation = generation + 1 '
                       'WHERE id = ? AND generation = ?', (row['id'], row['generation']))
    if cur.rowcount != 1:
        raise ConcurrentUpdate('Another thread concurrently updated the resource provider '
                               'data. Please retry your update')
    return row['generation'] + 1


def check_generation(row, generation):
    """A provider write (traits, aggregates) names the generation it read."""
    if generation != row['generation']:
        raise ConcurrentUpdate("Resource provider's generation already changed. Please update the "
                               "generation and try again.")


def subtree_ids(conn, row):
    """The provider and all its descendants (ids)."""
    pairs = [(r['id'], r['parent_id']) for r in
             conn.execute('SELECT id, parent_id FROM providers WHERE root_id = ?', (row['root_id'],))]
    return rules.subtree(pairs, row['id'])


def _list(conn, name, uuid, in_tree):
    where, args = [], []
    if name:
        where.append('p.name = ?')
        args.append(name)
    if uuid:
        where.append('p.uuid = ?')
        args.append(uuid)
    if in_tree:
        tree = get(conn, in_tree)
        if tree is None:
            return []
        where.append('p.root_id = ?')
        args.append(tree['root_id'])
    sql = _SELECT
    if where:
        sql += ' WHERE ' + ' AND '.join(where)
    return [as_dict(r) for r in conn.execute(sql + ' ORDER BY p.id', args)]


def _create(conn, name, uuid, parent_uuid):
    if not name:
        raise rules.create_refused(name, uuid, 'name is required')
    parent = None
    if parent_uuid is not None:
        rules.check_create_parent(name, uuid, parent_uuid)
        parent = get(conn, parent_uuid)
        if parent is None:
            raise rules.create_refused(name, uuid, 'parent provider UUID does not exist.')
    dups = []
    if conn.execute('SELECT 1 FROM providers WHERE uuid = ?', (uuid,)).fetchone():
        dups.append('uuid: %s' % uuid)
    if conn.execute('SELECT 1 FROM providers WHERE name = ?', (name,)).fetchone():
        dups.append('name: %s' % name)
    if dups:
        raise DuplicateName('Conflicting resource provider %s already exists.' % ', '.join(dups))
    cur = conn.execute('INSERT INTO providers (uuid, name, generation, parent_id, root_id) '
                       'VALUES (?, ?, 0, ?, ?)',
                       (uuid, name, parent['id'] if parent else None, parent['root_id'] if parent else None))
    if parent is None:
        conn.execute('UPDATE providers SET root_id = id WHERE id = ?', (cur.lastrowid,))
    return as_dict(get(conn, uuid))


def _update(conn, uuid, name, parent_uuid):
    row = require(conn, uuid)
    # PUT_RP_SCHEMA_V1_14 (validated after the provider is found, like Placement)
    schemas.check_provider_body(name, parent_uuid)
    new_parent_id, new_root_id = row['parent_id'], row['root_id']
    subtree = []
    if parent_uuid is not None:
        parent = get(conn, parent_uuid)
        if parent is None:
            raise rules.update_refused(uuid, 'parent provider UUID does not exist.', action='create')
        subtree = subtree_ids(conn, row)
        rules.check_new_parent(uuid, parent['id'], subtree)
        new_parent_id, new_root_id = parent['id'], parent['root_id']
    elif row['parent_id'] is not None:
        # un-parent (1.37+): this provider becomes a root
        subtree = subtree_ids(conn, row)
        new_parent_id, new_root_id = None, row['id']
    if name != row['name'] and conn.execute('SELECT 1 FROM providers WHERE name = ? AND id != ?',
                                            (name, row['id'])).fetchone():
        raise DuplicateName('Conflicting resource provider %s already exists.' % name)
    conn.execute('UPDATE providers SET name = ?, parent_id = ?, root_id = ? WHERE id = ?',
                 (name, new_parent_id, new_root_id, row['id']))
    if subtree and new_root_id != row['root_id']:
        conn.executemany('UPDATE providers SET root_id = ? WHERE id = ?',
                         [(new_root_id, pid) for pid in subtree])
    return as_dict(get(conn, uuid))


def _delete(conn, uuid):
    row = require(conn, uuid, 'No resource provider with uuid %s found for delete' % uuid)
    pid = row['id']
    rules.check_delete(
        uuid,
        has_children=conn.execute('SELECT 1 FROM providers WHERE parent_id = ? LIMIT 1', (pid,)).fetchone(),
        has_allocations=conn.execute('SELECT 1 FROM allocations WHERE provider_id = ? LIMIT 1', (pid,)).fetchone())
    conn.execute('DELETE FROM inventories WHERE provider_id = ?', (pid,))
    conn.execute('DELETE FROM provider_aggregates WHERE provider_id = ?', (pid,))
    conn.execute('DELETE FROM provider_traits WHERE provider_id = ?', (pid,))
    conn.execute('UPDATE providers SET root_id = NULL WHERE id = ?', (pid,))
    conn.execute('DELETE FROM providers WHERE id = ?', (pid,))


class ProvidersMixin(object):
    """GET/POST/PUT/DELETE /resource_providers."""

    def list_providers(self, name=None, uuid=None, in_tree=None):
        schemas.check_provider_query(uuid=uuid, in_tree=in_tree)
        with self.reader('list_providers') as conn:
            return _list(conn, name, uuid, in_tree)

    def get_provider(self, uuid):
        with self.reader('get_provider') as conn:
            return as_dict(require(conn, uuid))

    def create_provider(self, name, uuid=None, parent_provider_uuid=None):
        schemas.check_provider_body(name, parent_provider_uuid, uuid=uuid)   # POST_RP_SCHEMA_V1_14
        uuid = rules.normalize_uuid(uuid) if uuid else str(_uuid.uuid4())
        with self.writer('create_provider') as conn:
            return _create(conn, name, uuid, parent_provider_uuid)

    def update_provider(self, uuid, name, parent_provider_uuid=None):
        with self.writer('update_provider') as conn:
            return _update(conn, uuid, name, parent_provider_uuid)

    def delete_provider(self, uuid):
        with self.writer('delete_provider') as conn:
            _delete(conn, uuid)
