# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Traits and aggregates in the embedded store (placement/objects/trait.py and the
aggregate part of resource_provider.py): :class:`TraitsAggregatesMixin` holds
their endpoints of :class:`.EmbeddedBackend`.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ...errors import BadRequest
from ...rules import names as name_rules
from ...rules import schemas
from . import providers
from .store import placeholders


def _trait_filters(name):
    """GET /traits?name=in:a,b or startswith:PREFIX."""
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
    return filters


def _list_traits(conn, filters):
    if 'in' in filters:
        wanted = filters['in']
        found = conn.execute('SELECT name FROM traits WHERE name IN (%s) ORDER BY name'
                             % placeholders(wanted), wanted) if wanted else []
    elif 'prefix' in filters:
        prefix = filters['prefix']
        found = conn.execute('SELECT name FROM traits WHERE substr(name, 1, ?) = ? ORDER BY name',
                             (len(prefix), prefix))
    else:
        found = conn.execute('SELECT name FROM traits ORDER BY name')
    return [r['name'] for r in found]


def traits_of(conn, provider_id):
    return [r['name'] for r in conn.execute(
        'SELECT t.name FROM provider_traits pt JOIN traits t ON t.id = pt.trait_id'
        ' WHERE pt.provider_id = ? ORDER BY t.name', (provider_id,))]


def aggregates_of(conn, provider_id):
    return [r['aggregate_uuid'] for r in conn.execute(
        'SELECT aggregate_uuid FROM provider_aggregates WHERE provider_id = ? ORDER BY id', (provider_id,))]


def _set_traits(conn, uuid, generation, traits):
    row = providers.require(conn, uuid)
    providers.check_generation(row, generation)
    wanted = list(traits)
    found = {}
    if wanted:
        for trait in conn.execute('SELECT id, name FROM traits WHERE name IN (%s)' % placeholders(wanted), wanted):
            found[trait['name']] = trait['id']
    missing = sorted(set(wanted) - set(found))
    if missing:
        raise BadRequest('No such trait %s' % ', '.join(missing))
    existing = set(r['trait_id'] for r in conn.execute(
        'SELECT trait_id FROM provider_traits WHERE provider_id = ?', (row['id'],)))
    want_ids = set(found.values())
    to_add, to_delete = want_ids - existing, existing - want_ids
    generation = row['generation']
    if to_add or to_delete:
        conn.executemany('DELETE FROM provider_traits WHERE provider_id = ? AND trait_id = ?',
                         [(row['id'], t) for t in to_delete])
        conn.executemany('INSERT INTO provider_traits (provider_id, trait_id) VALUES (?, ?)',
                         [(row['id'], t) for t in to_add])
        generation = providers.bump(conn, row)
    return {'resource_provider_generation': generation, 'traits': sorted(found)}


def _set_aggregates(conn, uuid, generation, aggregates):
    row = providers.require(conn, uuid)
    schemas.check_aggregates_body(aggregates, generation)
    providers.check_generation(row, generation)
    existing = set(aggregates_of(conn, row['id']))
    wanted = list(aggregates)
    conn.executemany('DELETE FROM provider_aggregates WHERE provider_id = ? AND aggregate_uuid = ?',
                     [(row['id'], a) for a in existing - set(wanted)])
    conn.executemany('INSERT OR IGNORE INTO provider_aggregates (provider_id, aggregate_uuid) '
                     'VALUES (?, ?)', [(row['id'], a) for a in wanted if a not in existing])
    return {'resource_provider_generation': providers.bump(conn, row), 'aggregates': wanted}


class TraitsAggregatesMixin(object):
    """/traits, /resource_providers/{u}/traits and /resource_providers/{u}/aggregates."""

    def list_traits(self, name=None):
        filters = _trait_filters(name)
        with self.reader('list_traits') as conn:
            return _list_traits(conn, filters)

    def ensure_trait(self, name):
        name_rules.check_new_trait(name)
        with self.writer('ensure_trait') as conn:
            return conn.execute('INSERT OR IGNORE INTO traits (name) VALUES (?)', (name,)).rowcount == 1

    def get_provider_traits(self, uuid):
        with self.reader('get_provider_traits') as conn:
            return providers.collection(conn, uuid, 'traits', traits_of)

    def set_provider_traits(self, uuid, generation, traits):
        # SET_TRAITS_FOR_RP_SCHEMA is checked before the provider is looked up.
        schemas.check_traits_body(traits, generation)
        with self.writer('set_provider_traits') as conn:
            return _set_traits(conn, uuid, generation, traits)

    def get_aggregates(self, uuid):
        with self.reader('get_aggregates') as conn:
            return providers.collection(conn, uuid, 'aggregates', aggregates_of)

    def set_aggregates(self, uuid, generation, aggregates):
        with self.writer('set_aggregates') as conn:
            return _set_aggregates(conn, uuid, generation, aggregates)
