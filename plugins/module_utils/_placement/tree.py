# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One in-memory view of a node's provider tree, modelled on nova's ``ProviderTree``
(nova/compute/provider_tree.py).

The planner, the verification and whoever else reads a tree read it through
:class:`ProviderTree` instead of walking the state dict by hand.  It is built from
what :func:`backend.provider_tree_state` returns::

    {"providers": {uuid: {"uuid", "name", "generation", "parent_provider_uuid",
                          "root_provider_uuid", "inventories": {RC: record},
                          "usages": {RC: n}, "traits": [..], "aggregates": [..]}},
     "allocations": {consumer: GET /allocations/{consumer} body}}

and keeps that dict as it is (:attr:`ProviderTree.state`): the records it hands
out are the ones read, so a caller that still needs the raw shape (an allocation
request's ``project_id``, a provider's ``generation``) reads it from there.

Unlike nova's, this tree is read-only: it is a view of what was read, and the
plan, not the tree, says what changes.

The normalised inventory (:func:`norm_inventories`: only Placement's fields,
its defaults filled in, so two records compare with ``==``, by
``rules.inventory.normalize_inventory``) is written here once for the planner,
the verification and the reshaper.  The report reads trees through this class too
(``report.normalize_tree``, ``report.provider_tree``), leniently: ``inventory(uuid,
strict=False)`` and ``allocations(consumer, strict=False)`` (:func:`lenient_inventories`,
:func:`lenient_allocations`) show what they can of a malformed record instead of raising.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from .rules import allocations as _allocations
from .rules import inventory as _inventory


def norm_inventories(inventories):
    """``{rc: inventory}`` with only Placement's fields, defaults filled in (compare with ==)."""
    return dict((rc, _inventory.normalize_inventory(dict((k, v) for k, v in rec.items()
                                                         if k in _inventory.INVENTORY_FIELDS), rc))
                for rc, rec in (inventories or {}).items())


def lenient_inventories(inventories):
    """``{rc: inventory}`` read leniently, for a reader that must show what it can (the report):
    Placement's defaults filled in under the fields given (a ``None`` value counts as absent,
    a missing ``total`` as 0), nothing checked or converted, a record that is not a mapping
    read as an empty one.  :func:`norm_inventories` is the strict reading."""
    out = {}
    for rc, rec in (inventories or {}).items():
        inv = dict(_inventory.INVENTORY_DEFAULTS)
        inv.update(dict((k, v) for k, v in (rec if isinstance(rec, dict) else {}).items()
                        if k in _inventory.INVENTORY_FIELDS and v is not None))
        inv.setdefault('total', 0)
        out[rc] = inv
    return out


def lenient_allocations(body):
    """``{rp: {"resources": {RC: n}}}`` of one consumer read leniently: ``body`` is the
    GET /allocations/{consumer} body or its bare ``allocations`` map; entries that are not
    mappings or hold nothing are left out, nothing is checked.  The strict reading is
    ``rules.allocations.strip_allocations``."""
    allocs = body.get('allocations', body) if isinstance(body, dict) else {}
    out = {}
    for rp, item in (allocs if isinstance(allocs, dict) else {}).items():
        resources = item.get('resources', {}) if isinstance(item, dict) else {}
        if resources:
            out[rp] = {'resources': dict(resources)}
    return out


class ProviderTree(object):
    """A read-only view of one state dict (see the module docstring).

    Providers are looked up by uuid or by name; children, roots and the
    depth-first order sort siblings by (name, uuid), as the report draws them.
    """

    def __init__(self, state=None):
        state = state if state is not None else {}
        self.state = state
        self.providers = state.get('providers') or {}
        self.allocation_bodies = state.get('allocations') or {}
        self._by_name = dict((p.get('name'), u) for u, p in self.providers.items())
        self._kids = None   # {parent uuid: [child uuids sorted]}, built on first use

    @classmethod
    def of(cls, state_or_tree):
        """``state_or_tree`` itself when it is a ProviderTree, else the tree of that state dict."""
        if isinstance(state_or_tree, ProviderTree):
            return state_or_tree
        return cls(state_or_tree)

    # -- providers ----------------------------------------------------------------

    def __contains__(self, uuid):
        return uuid in self.providers

    def __len__(self):
        return len(self.providers)

    def uuids(self):
        """Every provider uuid, sorted."""
        return sorted(self.providers)

    def get(self, uuid, default=None):
        """The provider record as read (``default`` when it is not in the tree)."""
        return self.providers.get(uuid, default)

    def find(self, name_or_uuid):
        """The uuid of the provider with that uuid or, failing that, that name; None if neither."""
        if name_or_uuid in self.providers:
            return name_or_uuid
        return self._by_name.get(name_or_uuid)

    def uuid_of(self, name):
        """The uuid of the provider named ``name`` (names are unique in Placement), or None."""
        return self._by_name.get(name)

    def by_name(self, name):
        """``(uuid, record)`` of the provider named ``name``, or None."""
        uuid = self._by_name.get(name)
        return None if uuid is None else (uuid, self.providers[uuid])

    def name(self, uuid):
        """The provider's name (its uuid when it has none, or is not in the tree)."""
        return (self.providers.get(uuid) or {}).get('name') or uuid

    def names(self):
        """``{uuid: name}`` of every provider."""
        return dict((u, p.get('name') or u) for u, p in self.providers.items())

    def parent(self, uuid):
        return (self.providers.get(uuid) or {}).get('parent_provider_uuid')

    def generation(self, uuid):
        return (self.providers.get(uuid) or {}).get('generation')

    def _sort_key(self, uuid):
        return (self.providers[uuid].get('name') or uuid, uuid)

    def children(self, uuid):
        """Uuids of the providers whose parent is ``uuid``, sorted by name."""
        if self._kids is None:
            kids = {}
            for child, prov in self.providers.items():
                parent = prov.get('parent_provider_uuid')
                if parent is not None and parent != child:
                    kids.setdefault(parent, []).append(child)
            self._kids = dict((parent, sorted(group, key=self._sort_key)) for parent, group in kids.items())
        return list(self._kids.get(uuid, ()))

    def parents(self):
        """The set of uuids that are some provider's parent."""
        return set(p.get('parent_provider_uuid') for p in self.providers.values())

    @property
    def roots(self):
        """Uuids of the providers whose parent is not in the tree, sorted by name."""
        roots = [u for u, p in self.providers.items()
                 if not p.get('parent_provider_uuid') or p['parent_provider_uuid'] not in self.providers]
        return sorted(roots, key=self._sort_key)

    def depth_first(self):
        """``[(uuid, depth)]``: every provider depth-first from the roots, children by name."""
        out = []
        seen = set()

        def walk(start):
            stack = [(start, 0)]
            while stack:
                uuid, depth = stack.pop()
                if uuid in seen:
                    continue
                seen.add(uuid)
                out.append((uuid, depth))
                stack.extend((kid, depth + 1) for kid in reversed(self.children(uuid)))

        for root in self.roots:
            walk(root)
        for uuid in sorted(self.providers):   # cycles cannot happen in Placement; be safe anyway
            if uuid not in seen:
                walk(uuid)
        return out

    # -- inventories, usages, traits, aggregates ---------------------------------------

    def raw_inventory(self, uuid):
        """The inventories as read: ``{RC: record}``."""
        return (self.providers.get(uuid) or {}).get('inventories') or {}

    def classes(self, uuid):
        """The classes the provider has inventory of, sorted (records not checked)."""
        return sorted(self.raw_inventory(uuid))

    def inventory(self, uuid, strict=True):
        """The normalised inventories ``{RC: record}`` (:func:`norm_inventories`), a fresh dict.

        ``strict=False``: read leniently (:func:`lenient_inventories`: defaults filled in, a
        malformed record shown as far as it goes instead of raising), as the report does."""
        if not strict:
            return lenient_inventories(self.raw_inventory(uuid))
        return norm_inventories(self.raw_inventory(uuid))

    def usages(self, uuid):
        """The usages Placement reported for the provider ``{RC: n}``."""
        return (self.providers.get(uuid) or {}).get('usages') or {}

    def usage(self, uuid, rc):
        return self.usages(uuid).get(rc, 0)

    def used(self, uuid, rc):
        """The usage of ``rc`` Placement reported for the provider, else (a tree kept without
        its usages) the sum of the allocations read on it."""
        usages = self.usages(uuid)
        if rc in usages:
            return usages[rc]
        return self.allocated().get(uuid, {}).get(rc, 0)

    def traits(self, uuid):
        return sorted((self.providers.get(uuid) or {}).get('traits') or [])

    def has_traits(self, uuid, traits):
        return set(traits) <= set(self.traits(uuid))

    def aggregates(self, uuid):
        return sorted((self.providers.get(uuid) or {}).get('aggregates') or [])

    # -- allocations --------------------------------------------------------------------

    def consumers(self):
        """Every consumer with an allocation read, sorted."""
        return sorted(self.allocation_bodies)

    def has_consumer(self, consumer):
        return consumer in self.allocation_bodies

    def is_partial(self, consumer):
        """Whether only the consumer's allocations on this tree were read (:func:`is_partial`)."""
        return is_partial(self.allocation_bodies.get(consumer))

    def allocation_request(self, consumer):
        """The consumer's allocations body as read (project_id, user_id, generation...)."""
        return self.allocation_bodies.get(consumer)

    def allocations(self, consumer, strict=True):
        """``{rp: {"resources": {RC: n}}}`` of one consumer, in the PUT shape (empty entries dropped).

        ``strict=False``: read leniently (:func:`lenient_allocations`: the body or its bare
        map, what is not a mapping left out), as the report does."""
        if not strict:
            return lenient_allocations(self.allocation_bodies.get(consumer))
        return _allocations.strip_allocations((self.allocation_bodies.get(consumer) or {}).get('allocations') or {})

    def all_allocations(self):
        """``{consumer: {rp: {"resources": {RC: n}}}}`` of every consumer, sorted by consumer."""
        return dict((c, self.allocations(c)) for c in sorted(self.allocation_bodies))

    def amount(self, consumer, uuid, rc):
        """Units of ``rc`` the consumer holds on provider ``uuid``."""
        return ((self.allocations(consumer).get(uuid) or {}).get('resources') or {}).get(rc, 0)

    def consumers_of(self, uuid, rc=None):
        """Consumers holding something (or ``rc``) on provider ``uuid``, sorted."""
        out = []
        for consumer in self.consumers():
            res = (self.allocations(consumer).get(uuid) or {}).get('resources') or {}
            if (rc is None and res) or (rc is not None and res.get(rc)):
                out.append(consumer)
        return out

    def allocated(self):
        """``{rp: {RC: n}}``: the allocations of every consumer summed per provider."""
        return sum_allocations(self.all_allocations())


def is_partial(body):
    """Whether a consumer's allocations body is a PARTIAL one: only its allocations on the tree's
    providers, marked ``"partial": True`` (backend.provider_tree_state ``select``)."""
    return isinstance(body, dict) and bool(body.get('partial'))


def sum_allocations(allocations):
    """``{rp: {RC: n}}`` summed over ``{consumer: {rp: {"resources": {RC: n}}}}``."""
    used = {}
    for allocs in allocations.values():
        for rp, entry in allocs.items():
            for rc, amount in entry.get('resources', {}).items():
                used.setdefault(rp, {})
                used[rp][rc] = used[rp].get(rc, 0) + amount
    return used
