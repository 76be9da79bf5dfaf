# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Allocations and consumers in the embedded store (placement/objects/allocation.py, consumer.py).

:func:`ensure_consumers`, :func:`allocation_list` and :func:`replace_all` are the
steps of every allocation write (the reshaper uses them too);
:class:`AllocationsMixin` holds the allocation endpoints of :class:`.EmbeddedBackend`.
The rules are in :mod:`..rules.allocations`.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections

from ...errors import BadRequest, ConcurrentUpdate, NotFound
from ...rules import allocations as rules
from ...rules import schemas
from . import inventories, providers
from .store import CommitThenRaise, placeholders

#: One allocation of a write: the consumer, the provider's row, the class and the amount (0: removed).
Allocation = collections.namedtuple('Allocation', 'consumer provider rc used')
#: A consumer of a write: its row id, its generation and whether the write created it.
Consumer = collections.namedtuple('Consumer', 'id generation new')


def ensure_consumers(conn, data):
    """Placement's ensure_consumer for every consumer of the request, in order.

    Checks the consumer generation (409 concurrent_update) and creates the
    consumers that do not exist yet (generation 0).  Returns ``{uuid: Consumer}``.
    """
    consumers = collections.OrderedDict()
    for cuuid, req in data.items():
        given = req.get('consumer_generation')
        row = conn.execute('SELECT id, generation FROM consumers WHERE uuid = ?', (cuuid,)).fetchone()
        rules.check_consumer_generation(row['generation'] if row is not None else None, given)
        if row is not None:
            consumers[cuuid] = Consumer(row['id'], row['generation'], False)
        else:
            cur = conn.execute('INSERT INTO consumers (uuid, project_id, user_id, consumer_type, '
                               'generation) VALUES (?, ?, ?, ?, 0)',
                               (cuuid, req['project_id'], req['user_id'], req.get('consumer_type')))
            consumers[cuuid] = Consumer(cur.lastrowid, 0, True)
    return consumers


def allocation_list(conn, data):
    """Placement's create_allocation_list: [Allocation].

    An empty ``allocations`` map turns the consumer's current allocations into
    ``used = 0`` entries (removal).  Unknown provider -> BadRequest.
    """
    allocs = []
    for cuuid, req in data.items():
        requested = req['allocations']
        if requested:
            found = {}
            for rp in requested:
                found[rp] = providers.get(conn, rp)
                if found[rp] is None:
                    raise rules.unknown_provider_error(rp)
            for rp, entry in requested.items():
                for rc, amount in entry['resources'].items():
                    allocs.append(Allocation(cuuid, found[rp], rc, int(amount)))
        else:
            for held in conn.execute(
                    'SELECT p.uuid, rc.name FROM allocations a JOIN providers p ON p.id = a.provider_id'
                    ' JOIN resource_classes rc ON rc.id = a.rc_id WHERE a.consumer_uuid = ?'
                    ' ORDER BY a.id', (cuuid,)).fetchall():
                allocs.append(Allocation(cuuid, providers.get(conn, held['uuid']), held['name'], 0))
    return allocs


def _usage_map(conn, provider_ids, rc_ids):
    if not provider_ids or not rc_ids:
        return {}
    return dict(((r['provider_id'], r['rc_id']), r['used']) for r in conn.execute(
        'SELECT provider_id, rc_id, SUM(used) AS used FROM allocations WHERE provider_id IN (%s) AND rc_id IN (%s)'
        ' GROUP BY provider_id, rc_id' % (placeholders(provider_ids), placeholders(rc_ids)),
        list(provider_ids) + list(rc_ids)))


def _check_capacity(conn, allocs, rc_ids, provider_ids, prev_usage):
    """Placement's _check_capacity_exceeded, in the same order with the same outcomes.

    Returns the provider rows whose generation the write must bump (every
    provider named in ``allocs``, removals included).
    """
    ids = list(rc_ids.values())
    inv = {}
    for row in conn.execute(
            'SELECT provider_id, rc_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio'
            ' FROM inventories WHERE provider_id IN (%s) AND rc_id IN (%s)'
            % (placeholders(provider_ids), placeholders(ids)), list(provider_ids) + ids):
        inv[(row['provider_id'], row['rc_id'])] = inventories.record(row)
    usage = _usage_map(conn, provider_ids, ids)
    with_inv = set(pid for pid, _rc in inv)
    missing = []
    for alloc in allocs:
        if alloc.provider['id'] not in with_inv and alloc.provider['uuid'] not in missing:
            missing.append(alloc.provider['uuid'])
    if missing:
        raise rules.no_inventory_error(list(rc_ids), missing)
    visited = collections.OrderedDict()
    needed_all = collections.defaultdict(int)
    for alloc in allocs:
        prow = alloc.provider
        visited.setdefault(prow['uuid'], prow)
        key = (prow['id'], rc_ids[alloc.rc])
        needed_all[key] += alloc.used
        if alloc.used == 0:
            continue
        rules.check_allocation(inv.get(key), alloc.used, alloc.rc, prow['uuid'],
                               prev_usage.get(key, 0), usage.get(key, 0) + needed_all[key])
    return list(visited.values())


def replace_all(conn, data, consumers, allocs, provider_rows=None):
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
                      consumers[cuuid].id, consumers[cuuid].generation))
    if provider_rows:
        allocs = [a._replace(provider=provider_rows.get(a.provider['uuid'], a.provider)) for a in allocs]
    if not allocs:
        return
    # Resolve classes first: an unknown class is a 400 before any capacity check.
    rc_ids = collections.OrderedDict()
    for alloc in allocs:
        if alloc.rc not in rc_ids:
            rc_ids[alloc.rc] = inventories.rc_id_or_raise(conn, alloc.rc)
    provider_ids = sorted(set(a.provider['id'] for a in allocs))
    prev_usage = _usage_map(conn, provider_ids, list(rc_ids.values()))
    consumer_uuids = []
    for alloc in allocs:
        if alloc.consumer not in consumer_uuids:
            consumer_uuids.append(alloc.consumer)
    conn.executemany('DELETE FROM allocations WHERE consumer_uuid = ?', [(c,) for c in consumer_uuids])

    visited = _check_capacity(conn, allocs, rc_ids, provider_ids, prev_usage)
    conn.executemany('INSERT INTO allocations (provider_id, rc_id, consumer_uuid, used) VALUES (?, ?, ?, ?)',
                     [(a.provider['id'], rc_ids[a.rc], a.consumer, a.used) for a in allocs if a.used > 0])
    for prow in visited:
        providers.bump(conn, prow)
    for cuuid in consumer_uuids:
        info = consumers[cuuid]
        cur = conn.execute('UPDATE consumers SET generation = generation + 1 WHERE id = ? AND generation = ?',
                           (info.id, info.generation))
        if cur.rowcount != 1:
            raise ConcurrentUpdate('Another thread concurrently updated the data. Please retry your update')
    with_allocs = set(a.consumer for a in allocs if a.used > 0)
    empty = [c for c in consumer_uuids if c not in with_allocs]
    conn.executemany('DELETE FROM consumers WHERE uuid = ? AND NOT EXISTS '
                     '(SELECT 1 FROM allocations WHERE consumer_uuid = ?)', [(c, c) for c in empty])


def _write(conn, data, unknown_class):
    """PUT /allocations/{c} and POST /allocations: consumers, then the allocations, in one writer.

    ``unknown_class`` is the 400's text before the class (Placement words the two differently).
    """
    consumers = ensure_consumers(conn, data)
    try:
        allocs = allocation_list(conn, data)
    except BadRequest as exc:
        # Placement created the consumers in their own transaction before it
        # looked the providers up: they stay (empty, generation 0).
        raise CommitThenRaise(exc)
    try:
        replace_all(conn, data, consumers, allocs)
    except inventories.RcNotFound as exc:
        raise BadRequest('%s %s' % (unknown_class, exc))
    except ConcurrentUpdate as exc:
        raise ConcurrentUpdate('Inventory and/or allocations changed while attempting to '
                               'allocate: %s' % exc.detail)


def _get(conn, consumer_uuid):
    found = conn.execute(
        'SELECT p.uuid, p.generation, rc.name, a.used FROM allocations a'
        ' JOIN providers p ON p.id = a.provider_id JOIN resource_classes rc ON rc.id = a.rc_id'
        ' WHERE a.consumer_uuid = ? ORDER BY a.id', (consumer_uuid,)).fetchall()
    if not found:
        return {'allocations': {}}
    allocations = {}
    for held in found:
        entry = allocations.setdefault(held['uuid'], {'resources': {}, 'generation': held['generation']})
        entry['resources'][held['name']] = held['used']
    consumer = conn.execute('SELECT project_id, user_id, generation, consumer_type FROM consumers '
                            'WHERE uuid = ?', (consumer_uuid,)).fetchone()
    result = {'allocations': allocations}
    if consumer is not None:
        result.update({'project_id': consumer['project_id'], 'user_id': consumer['user_id'],
                       'consumer_generation': consumer['generation'],
                       'consumer_type': consumer['consumer_type'] or 'unknown'})
    return result


def _held_on(conn, provider_id):
    """The allocations against one provider, by consumer (with each consumer's generation)."""
    allocations = {}
    for held in conn.execute(
            'SELECT a.consumer_uuid, rc.name, a.used, c.generation FROM allocations a'
            ' JOIN resource_classes rc ON rc.id = a.rc_id'
            ' LEFT JOIN consumers c ON c.uuid = a.consumer_uuid'
            ' WHERE a.provider_id = ? ORDER BY a.id', (provider_id,)):
        entry = allocations.setdefault(held['consumer_uuid'],
                                       {'resources': {}, 'consumer_generation': held['generation']})
        entry['resources'][held['name']] = held['used']
    return allocations


def _delete(conn, consumer_uuid):
    cur = conn.execute('DELETE FROM allocations WHERE consumer_uuid = ?', (consumer_uuid,))
    if cur.rowcount == 0:
        raise NotFound("No allocations for consumer '%s'" % (consumer_uuid,))
    # Provider generations are NOT bumped by DELETE /allocations/{c}.
    conn.execute('DELETE FROM consumers WHERE uuid = ?', (consumer_uuid,))


class AllocationsMixin(object):
    """/allocations/{c}, POST /allocations and /resource_providers/{u}/allocations."""

    def get_allocations(self, consumer_uuid):
        with self.reader('get_allocations') as conn:
            return _get(conn, consumer_uuid)

    def get_provider_allocations(self, uuid):
        with self.reader('get_provider_allocations') as conn:
            return providers.collection(conn, uuid, 'allocations', _held_on,
                                        "Resource provider '%s' not found: No resource "
                                        "provider with uuid %s found" % (uuid, uuid))

    def put_allocations(self, consumer_uuid, body):
        consumer_uuid = rules.consumer_uuid(consumer_uuid)
        schemas.check_allocation_request(body, 'consumer %s' % consumer_uuid)
        with self.writer('put_allocations') as conn:
            _write(conn, collections.OrderedDict([(consumer_uuid, body)]),
                   'Unable to allocate inventory for consumer %s:' % consumer_uuid)

    def post_allocations(self, body):
        schemas.check_post_allocations(body)
        with self.writer('post_allocations') as conn:
            _write(conn, collections.OrderedDict(body.items()), 'Unable to allocate inventory')

    def delete_allocations(self, consumer_uuid):
        with self.writer('delete_allocations') as conn:
            _delete(conn, consumer_uuid)
