# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Export compute nodes' trees from a Placement into a new embedded store (a rehearsal copy).

:func:`read_export` only READS the source (any :class:`..backends.base.Backend`, in practice
the production Placement over REST): for each chosen root provider its whole tree
(providers, inventories with every field, traits, aggregates), every consumer holding an
allocation on the tree with its FULL allocations (project, user, consumer type), the
sharing providers of the trees' aggregates (trait ``MISC_SHARES_VIA_AGGREGATE``), and every
other provider those consumers hold allocations on (a sharing pool, the other node of a
migration) with the providers above it, so that each allocation fits.  A provider outside
the chosen trees is copied with its inventories, traits and aggregates, never with the
allocations of other consumers: its usage in the copy is only the exported consumers'.

:func:`write_export` writes what was read into a NEW embedded store file: same provider
uuids, names and parents, same inventories, traits and aggregates, the same consumers with
the same allocations, project, user and type (an untyped consumer, as nova 34 writes its
migration records, stays untyped).  Generations are the copy's own.  The file is built
under a temporary name next to ``dest`` and renamed into place at the end: a failed
export leaves no half store.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sqlite3
import tempfile

from .. import files as _files
from ..backends.base import provider_tree_state
from ..errors import BadInput, ConfigurationError, LocalFileError, NotFound
from ..rules import providers as provider_rules

#: a consumer written before consumer types (nova's migration records) reads back as this
UNKNOWN_CONSUMER_TYPE = 'unknown'


def _provider_entry(backend, prov):
    """A provider with its inventories, traits and aggregates (no usages, no allocations)."""
    uuid = prov['uuid']
    entry = dict((k, prov.get(k)) for k in ('uuid', 'name', 'parent_provider_uuid', 'root_provider_uuid'))
    entry['inventories'] = backend.get_inventories(uuid)['inventories']
    entry['traits'] = sorted(backend.get_provider_traits(uuid)['traits'])
    entry['aggregates'] = sorted(backend.get_aggregates(uuid)['aggregates'])
    return entry


def resolve_roots(backend, compute_nodes):
    """The root providers named by ``compute_nodes`` (names or uuids), in the given order.

    An empty list means every root provider of the source.  A name or uuid that is not a
    provider, or a provider that is not a root, is a :class:`ConfigurationError`.
    """
    for index, node in enumerate(compute_nodes or []):
        if node is None or not str(node).strip():
            raise BadInput('compute_nodes[%d] is empty (null or an empty string, as a template that renders to nothing '
                           'gives); name the compute nodes to export, or give an empty list to export every root provider'
                           % index, field='compute_nodes[%d]' % index)
    if not compute_nodes:
        return sorted((p for p in backend.list_providers() if not p.get('parent_provider_uuid')),
                      key=lambda p: (p['name'], p['uuid']))
    roots, seen, missing, children = [], set(), [], []
    for node in compute_nodes:
        node = str(node)
        found = []
        if provider_rules.is_uuid_like(node):
            found = backend.list_providers(uuid=provider_rules.normalize_uuid(node))
        if not found:
            found = backend.list_providers(name=node)
        if not found:
            missing.append(node)
            continue
        prov = found[0]
        if prov.get('parent_provider_uuid'):
            children.append('%s (a child of %s)' % (node, prov['parent_provider_uuid']))
            continue
        if prov['uuid'] not in seen:
            seen.add(prov['uuid'])
            roots.append(prov)
    if missing or children:
        parts = []
        if missing:
            parts.append('no resource provider named or with uuid %s' % ', '.join("'%s'" % m for m in missing))
        if children:
            parts.append('not root providers (name the compute node itself): %s' % ', '.join(children))
        raise ConfigurationError('compute_nodes: %s' % '; '.join(parts))
    return roots


def _ancestors(backend, uuid, known):
    """``uuid`` and the providers above it that are not in ``known``, root first."""
    chain = []
    while uuid and uuid not in known:
        try:
            prov = backend.get_provider(uuid)
        except NotFound:
            break
        chain.append(prov)
        uuid = prov.get('parent_provider_uuid')
    return list(reversed(chain))


def read_export(backend, compute_nodes=None):
    """Read everything a rehearsal of ``compute_nodes`` needs from ``backend`` (reads only).

    Returns ``{"roots": [uuid], "providers": {uuid: {"uuid", "name", "parent_provider_uuid",
    "root_provider_uuid", "inventories", "traits", "aggregates", "why"}}, "allocations":
    {consumer: GET /allocations/{c}}}``, ``why`` being ``tree`` (a chosen tree),
    ``sharing`` (a sharing provider of the trees' aggregates) or ``allocations`` (a
    provider an exported consumer holds allocations on, or above one).
    """
    roots = resolve_roots(backend, compute_nodes)
    providers = {}
    allocations = {}
    for root in roots:
        state = provider_tree_state(backend, root['uuid'])
        for uuid, prov in state['providers'].items():
            entry = dict((k, prov.get(k)) for k in ('uuid', 'name', 'parent_provider_uuid', 'root_provider_uuid',
                                                    'inventories', 'traits', 'aggregates'))
            entry['why'] = 'tree'
            providers[uuid] = entry
        allocations.update(state['allocations'])
    # the sharing providers of the trees' aggregates (one request on the real Placement)
    aggregates = set()
    for prov in providers.values():
        aggregates.update(prov['aggregates'])
    for prov in sorted(backend.sharing_providers(aggregates), key=lambda p: p['uuid']):
        for above in _ancestors(backend, prov['uuid'], providers):
            entry = _provider_entry(backend, above)
            entry['why'] = 'sharing' if above['uuid'] == prov['uuid'] else 'allocations'
            providers[above['uuid']] = entry
    # every other provider the consumers hold allocations on, with the providers above it
    for body in allocations.values():
        for rp in sorted((body.get('allocations') or {})):
            for above in _ancestors(backend, rp, providers):
                entry = _provider_entry(backend, above)
                entry['why'] = 'allocations'
                providers[above['uuid']] = entry
    return {'roots': [r['uuid'] for r in roots], 'providers': providers, 'allocations': allocations}


def summarize(data):
    """What an export holds, for the module's result (counts and names, no trees)."""
    providers = data['providers']
    by_why = {}
    for prov in providers.values():
        by_why.setdefault(prov['why'], []).append(prov['name'])
    held = sum(len((body.get('allocations') or {})) for body in data['allocations'].values())
    return {
        'compute_nodes': [providers[u]['name'] for u in data['roots']],
        'providers': len(providers),
        'sharing_providers': sorted(by_why.get('sharing', [])),
        'other_providers': sorted(by_why.get('allocations', [])),
        'consumers': len(data['allocations']),
        'allocations': held,
    }


def _depth(providers, uuid):
    depth = 0
    seen = set()
    while providers.get(uuid, {}).get('parent_provider_uuid') and uuid not in seen:
        seen.add(uuid)
        uuid = providers[uuid]['parent_provider_uuid']
        depth += 1
    return depth


def _request(body, with_type):
    request = {
        'allocations': dict((rp, {'resources': dict(entry.get('resources') or {})})
                            for rp, entry in (body.get('allocations') or {}).items()),
        'project_id': body.get('project_id'),
        'user_id': body.get('user_id'),
        'consumer_generation': None,
    }
    if with_type:
        request['consumer_type'] = body['consumer_type']
    return request


def _ensure_known(names, known, ensure):
    """Create (``ensure``) each of ``names`` that is not in ``known`` yet, and add it there."""
    for name in names:
        if name not in known:
            ensure(name)
            known.add(name)


def fill_store(store, data):
    """Write an export (:func:`read_export`'s shape) into an empty embedded ``store``."""
    providers = data['providers']
    order = sorted(providers, key=lambda u: (_depth(providers, u), providers[u]['name'], u))
    for uuid in order:
        prov = providers[uuid]
        store.create_provider(prov['name'], uuid=uuid, parent_provider_uuid=prov.get('parent_provider_uuid'))
    classes = set(store.list_resource_classes())
    traits = set(store.list_traits())
    for uuid in order:
        prov = providers[uuid]
        generation = store.get_provider(uuid)['generation']
        _ensure_known(prov['inventories'], classes, store.ensure_resource_class)
        if prov['inventories']:
            generation = store.set_inventories(uuid, generation, prov['inventories'])['resource_provider_generation']
        _ensure_known(prov['traits'], traits, store.ensure_trait)
        if prov['traits']:
            generation = store.set_provider_traits(uuid, generation, prov['traits'])['resource_provider_generation']
        if prov['aggregates']:
            store.set_aggregates(uuid, generation, prov['aggregates'])
    typed, untyped = {}, {}
    for consumer, body in sorted(data['allocations'].items()):
        if not body.get('allocations'):
            continue
        if body.get('consumer_type') and body['consumer_type'] != UNKNOWN_CONSUMER_TYPE:
            typed[consumer] = _request(body, True)
        else:
            untyped[consumer] = _request(body, False)
    if typed:
        store.post_allocations(typed)
    if untyped:
        # a consumer without a type can only be written before 1.38: through the reshaper
        # (what nova 34 does), naming one provider with its inventory unchanged
        anchor = next(u for u in order if providers[u]['inventories'])
        inv = store.get_inventories(anchor)
        store.reshape({'inventories': {anchor: {'resource_provider_generation': inv['resource_provider_generation'],
                                                'inventories': inv['inventories']}},
                       'allocations': untyped})


#: the files SQLite keeps beside a store
STORE_SIDECARS = ('-wal', '-shm', '-journal')


def _remove_store_files(path):
    for name in (path,) + tuple(path + sidecar for sidecar in STORE_SIDECARS):
        if os.path.lexists(name):
            os.unlink(name)


def write_export(data, dest, force=False):
    """Write ``data`` into a new embedded store at ``dest``; refuse an existing file unless ``force``.

    The store is built under a temporary name in the same directory, then renamed over
    ``dest``; returns ``dest``'s absolute path.  What an interrupted export to ``dest`` left there
    (``.<name>.<random>.export`` and its SQLite files, older than this process) is removed first.
    """
    from ..backends.embedded import EmbeddedBackend

    dest = os.path.abspath(os.path.expanduser(dest))
    check_dest(dest, force)
    directory = os.path.dirname(dest)
    _files.remove_leftovers(directory, os.path.basename(dest), '.export', STORE_SIDECARS)
    fd, tmp = tempfile.mkstemp(prefix='.%s.' % os.path.basename(dest), suffix='.export', dir=directory)
    os.close(fd)
    os.unlink(tmp)
    try:
        store = EmbeddedBackend(tmp, create=True)
        try:
            fill_store(store, data)
        finally:
            store.close()
        try:
            _self_contained(tmp)
            if force:
                # a stale journal of the replaced store must not be applied to the new one
                for suffix in ('-wal', '-shm', '-journal'):
                    if os.path.lexists(dest + suffix):
                        os.unlink(dest + suffix)
            os.rename(tmp, dest)
        except (OSError, IOError, sqlite3.Error) as exc:
            raise LocalFileError('dest: cannot write %s: %s' % (dest, exc), path=dest)
        tmp = None
    finally:
        if tmp is not None:
            _remove_store_files(tmp)
    return dest


def _self_contained(path):
    """Fold the store's write-ahead log into the file: one file to rename, copy or keep."""
    conn = sqlite3.connect(path)
    try:
        conn.execute('PRAGMA journal_mode=DELETE').fetchall()
    finally:
        conn.close()


def check_dest(dest, force=False):
    """Refuse a ``dest`` that exists (unless ``force``) or whose directory does not."""
    directory = os.path.dirname(dest)
    if not os.path.isdir(directory):
        raise LocalFileError('dest: the directory %s does not exist' % directory, path=dest)
    if os.path.isdir(dest):
        raise LocalFileError('dest: %s is a directory; name the store file to create' % dest, path=dest)
    if os.path.lexists(dest) and not force:
        raise LocalFileError('dest: %s exists; an export never overwrites a store (set force to replace it)'
                             % dest, path=dest)
