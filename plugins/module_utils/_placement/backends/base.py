# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one backend interface of the placement core.

Two implementations: :mod:`.embedded` (SQLite, no cloud) and :mod:`.rest`
(a real Placement API through openstacksdk).  Modules, the planner and the
tests only ever use this interface, so they never know which one they talk to.

Every method speaks Placement's JSON shapes at microversion 1.39 (dicts and
lists, never objects), mirrors one Placement endpoint, and either returns what
the endpoint returns or raises the :mod:`.errors` type with the status and code
the real service gives.  Writes are compare-and-update: a provider write names
the generation it read, a consumer write names the consumer generation
(``None`` for a new consumer); a mismatch raises ``ConcurrentUpdate``.  The
backend never retries a write on its own: re-read-and-retry belongs to the
caller (see :mod:`.retry`), which knows how to recompute the write.

Shapes used below:

``provider``
    ``{"uuid", "name", "generation", "parent_provider_uuid", "root_provider_uuid"}``
``inventories``
    ``{"resource_provider_generation": int, "inventories": {RC: {"total", "reserved",
    "min_unit", "max_unit", "step_size", "allocation_ratio"}}}``
``consumer allocations`` (GET /allocations/{c})
    ``{"allocations": {rp: {"generation": int, "resources": {RC: n}}},
    "consumer_generation": int, "project_id", "user_id", "consumer_type"}``;
    ``{"allocations": {}}`` when the consumer has none.
``allocation request`` (PUT /allocations/{c} body)
    ``{"allocations": {rp: {"resources": {RC: n}}}, "project_id", "user_id",
    "consumer_generation": int|None, "consumer_type"}``

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ..tree import is_partial

#: the trait of a provider sharing its inventory with the members of its aggregates
SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE'


class Backend(object):
    """Abstract Placement backend. Subclasses implement every method."""

    #: 'embedded' or 'rest'
    kind = None

    # -- session ---------------------------------------------------------
    @property
    def microversion(self):
        """The negotiated microversion as a string, e.g. '1.39'."""
        raise NotImplementedError

    def close(self):
        """Release connections / database handles. Idempotent."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # -- resource providers (GET/POST/PUT/DELETE /resource_providers) -----
    def list_providers(self, name=None, uuid=None, in_tree=None):
        """GET /resource_providers?name=&uuid=&in_tree= -> [provider].

        ``in_tree`` returns every provider of the tree of that provider's root.
        Sorted by (root, depth, name) is NOT promised; callers sort.
        An unknown ``in_tree`` uuid returns ``[]`` (like Placement).
        """
        raise NotImplementedError

    def get_provider(self, uuid):
        """GET /resource_providers/{uuid} -> provider, or raise NotFound."""
        raise NotImplementedError

    def sharing_providers(self, aggregates):
        """The providers sharing with the members of ``aggregates`` -> [provider].

        GET /resource_providers?member_of=in:A,B&required=MISC_SHARES_VIA_AGGREGATE: the
        providers with that trait in any of the aggregates.  This generic version reads
        every provider's traits (and a sharing one's aggregates); a backend that can ask
        Placement in one request overrides it.  Empty ``aggregates`` -> ``[]``.
        """
        aggregates = set(aggregates or ())
        if not aggregates:
            return []
        found = []
        for prov in self.list_providers():
            if SHARING_TRAIT not in self.get_provider_traits(prov['uuid'])['traits']:
                continue
            if aggregates & set(self.get_aggregates(prov['uuid'])['aggregates']):
                found.append(prov)
        return found

    def create_provider(self, name, uuid=None, parent_provider_uuid=None):
        """POST /resource_providers -> provider (generation 0).

        Raises DuplicateName (409) for a taken name, Conflict (409) for a
        taken uuid, BadRequest (400) for an unknown parent.
        """
        raise NotImplementedError

    def update_provider(self, uuid, name, parent_provider_uuid=None):
        """PUT /resource_providers/{uuid} -> provider.

        Rename and (1.37+) re-parent / un-parent.  Does not change the
        generation.  Moving a provider under its own descendant is 400.
        """
        raise NotImplementedError

    def delete_provider(self, uuid):
        """DELETE /resource_providers/{uuid}.

        CannotDeleteParent (409) when it has children (checked first),
        ProviderInUse (409) when it has allocations; NotFound (404).
        Inventories, traits and aggregates go with it.
        """
        raise NotImplementedError

    # -- inventories ------------------------------------------------------
    def get_inventories(self, uuid):
        """GET /resource_providers/{uuid}/inventories -> inventories."""
        raise NotImplementedError

    def set_inventories(self, uuid, generation, inventories):
        """PUT /resource_providers/{uuid}/inventories -> inventories.

        Replaces the whole set; generation +1 even when nothing changed.
        InventoryInUse (409) if an allocated class is dropped.
        """
        raise NotImplementedError

    def set_inventory(self, uuid, resource_class, generation, inventory):
        """PUT /resource_providers/{uuid}/inventories/{rc} -> record + generation.

        Returns ``{"resource_provider_generation": g, total, reserved, ...}``.
        Creates or updates one class; generation +1.
        """
        raise NotImplementedError

    def delete_inventory(self, uuid, resource_class, generation=None):
        """DELETE /resource_providers/{uuid}/inventories/{rc}.

        Placement's DELETE has no body: it uses the generation it reads, so
        ``generation`` is only compared client-side when given (the REST
        backend re-reads first).  In use -> ConcurrentUpdate (409, as the
        real service answers).  NotFound (404) if the class is not there.
        """
        raise NotImplementedError

    def delete_inventories(self, uuid, generation=None):
        """DELETE /resource_providers/{uuid}/inventories; InventoryInUse if allocated."""
        raise NotImplementedError

    def get_usages(self, uuid):
        """GET /resource_providers/{uuid}/usages.

        -> ``{"resource_provider_generation": g, "usages": {RC: n}}`` (every
        class with inventory appears, 0 when unused).
        """
        raise NotImplementedError

    # -- traits and aggregates -------------------------------------------
    def list_traits(self, name=None):
        """GET /traits[?name=startswith:X | in:A,B] -> [trait]."""
        raise NotImplementedError

    def ensure_trait(self, name):
        """PUT /traits/{name} (CUSTOM_ only). Returns True if it was created."""
        raise NotImplementedError

    def get_provider_traits(self, uuid):
        """GET /resource_providers/{uuid}/traits -> {"resource_provider_generation", "traits"}."""
        raise NotImplementedError

    def set_provider_traits(self, uuid, generation, traits):
        """PUT /resource_providers/{uuid}/traits; BadRequest for an unknown trait."""
        raise NotImplementedError

    def get_aggregates(self, uuid):
        """GET /resource_providers/{uuid}/aggregates -> {"resource_provider_generation", "aggregates"}."""
        raise NotImplementedError

    def set_aggregates(self, uuid, generation, aggregates):
        """PUT /resource_providers/{uuid}/aggregates (1.19 shape); generation +1."""
        raise NotImplementedError

    # -- resource classes -------------------------------------------------
    def list_resource_classes(self):
        """GET /resource_classes -> [name]."""
        raise NotImplementedError

    def ensure_resource_class(self, name):
        """PUT /resource_classes/{name} (1.7, CUSTOM_ only). Returns True if created."""
        raise NotImplementedError

    # -- allocations -----------------------------------------------------
    def get_allocations(self, consumer_uuid):
        """GET /allocations/{c} -> consumer allocations ({"allocations": {}} if none)."""
        raise NotImplementedError

    def put_allocations(self, consumer_uuid, body):
        """PUT /allocations/{c}: replace ALL of the consumer's allocations.

        ``body`` is an allocation request.  An empty ``allocations`` map
        removes the consumer.  Every provider in the new set gets generation
        +1; providers the consumer leaves do not.
        """
        raise NotImplementedError

    def post_allocations(self, body):
        """POST /allocations: ``{consumer: allocation request}`` in one transaction."""
        raise NotImplementedError

    def delete_allocations(self, consumer_uuid):
        """DELETE /allocations/{c}; NotFound (404) if the consumer has none."""
        raise NotImplementedError

    def get_provider_allocations(self, uuid):
        """GET /resource_providers/{uuid}/allocations.

        -> ``{"resource_provider_generation": g, "allocations": {consumer: {"resources": {RC: n},
        "consumer_generation": int}}}`` (Placement adds the consumer generation from 1.28)
        """
        raise NotImplementedError

    # -- reshaper -------------------------------------------------------------
    def reshape(self, body):
        """POST /reshaper: ``{"inventories": {rp: {"resource_provider_generation",
        "inventories"}}, "allocations": {consumer: allocation request}}``.

        One transaction, Placement's union semantics; returns Placement's answer
        ``{"status": 204, "request_id": id}`` (the REST backend's ``x-openstack-request-id``;
        None on the embedded store, which has no request ids).  Forbidden (403) when the
        credentials may not reshape.
        """
        raise NotImplementedError


def _unwritten_since(known_body, seen, providers):
    """``known_body`` (a consumer's full allocations read earlier) when the consumer was not written since.

    ``seen`` is what the per-provider allocation reads of the tree show of the consumer now:
    ``{"generations": set of consumer generations, "on_tree": {rp: {RC: n}}}``.  Every write of a
    consumer's allocations bumps its consumer generation (and one that leaves it with none deletes
    it), so the same generation on every provider and the same amounts on the tree mean the
    consumer's allocations, outside the tree included, are still ``known_body``'s.  Returns a copy
    with the tree providers' generations as read now, or None when it must be read again.
    """
    if not isinstance(known_body, dict) or known_body.get('consumer_generation') is None:
        return None
    if seen['generations'] != set([known_body['consumer_generation']]):
        return None
    allocs = known_body.get('allocations') or {}
    on_tree = dict((rp, dict((entry or {}).get('resources') or {})) for rp, entry in allocs.items() if rp in providers)
    if on_tree != seen['on_tree']:
        return None
    body = copy.deepcopy(known_body)
    for rp, entry in body['allocations'].items():
        if rp in providers and isinstance(entry, dict) and 'generation' in entry:
            entry['generation'] = providers[rp]['generation']
    return body


def provider_tree_state(backend, root_uuid, with_allocations=True, known=None, select=None):
    """Read one provider tree in full, backend-neutral.

    Returns ``{"providers": {uuid: {provider..., "inventories": {...},
    "usages": {...}, "traits": [...], "aggregates": [...]}},
    "allocations": {consumer: consumer allocations}}`` where ``allocations``
    holds, for every consumer with an allocation on any provider of the tree,
    its FULL allocation set (including providers outside the tree, such as a
    sharing DISK_GB pool).

    A provider without inventory has no usages (Placement computes usages per
    inventory record, so ``GET .../usages`` answers ``{}``): that request is not
    sent.  Its allocations are still read, so an allocation that should not exist
    shows up against its empty usages.

    ``known``: a state read earlier (this function's shape, e.g. the state a reshape was
    computed from, or a snapshot's).  A consumer whose per-provider reads show the same
    consumer generation and the same amounts on the tree as in ``known`` was not written
    since: its full allocations are taken from ``known`` instead of ``GET /allocations/{c}``
    (the providers of the tree are still read in full).  Only consumers written since are read.
    Such a body names the tree's providers at the generations read now, and a provider
    outside the tree (a sharing pool) at the generation ``known`` saw: nothing writes from a
    state read this way (a reshape's body is always computed from a read without ``known``).
    A consumer ``known`` holds as a PARTIAL body (see ``select``) gets a partial body again,
    from the per-provider reads, without a request.

    ``select``: callable given the state with every consumer as a PARTIAL body (only its
    allocations on the tree's providers, from the per-provider reads: ``{"allocations": {rp:
    {"resources", "generation"}}, "partial": True}``, no consumer_generation, project, user or
    type) and returning the consumers whose FULL allocations are read (None: all of them).
    The others keep their partial body: it names nothing outside the tree and must never be
    written (``tree.is_partial``; the planner refuses to write one).  A reshape selects the
    consumers it may write (node/reshaper.py ``read_node``).
    """
    providers = {}
    consumers = set()
    seen = {}
    for prov in backend.list_providers(in_tree=root_uuid):
        uuid = prov['uuid']
        entry = dict(prov)
        inv = backend.get_inventories(uuid)
        entry['inventories'] = inv['inventories']
        entry['usages'] = backend.get_usages(uuid)['usages'] if inv['inventories'] else {}
        entry['traits'] = sorted(backend.get_provider_traits(uuid)['traits'])
        entry['aggregates'] = sorted(backend.get_aggregates(uuid)['aggregates'])
        providers[uuid] = entry
        if with_allocations:
            held = backend.get_provider_allocations(uuid)['allocations']
            consumers.update(held)
            for consumer, entry in held.items():
                mine = seen.setdefault(consumer, {'generations': set(), 'on_tree': {}})
                mine['generations'].add((entry or {}).get('consumer_generation'))
                mine['on_tree'][uuid] = dict((entry or {}).get('resources') or {})
    partial = dict((consumer, partial_body(seen[consumer]['on_tree'], providers)) for consumer in consumers)
    full = None
    if select is not None:
        full = select({'providers': providers, 'allocations': partial})
        full = None if full is None else set(full)
    allocations = {}
    known_bodies = (known or {}).get('allocations') or {}
    for consumer in sorted(consumers):
        body = None
        if consumer in known_bodies:
            if is_partial(known_bodies[consumer]):
                body = partial[consumer]
            else:
                body = _unwritten_since(known_bodies[consumer], seen[consumer], providers)
        if body is None and full is not None and consumer not in full:
            body = partial[consumer]
        allocations[consumer] = body if body is not None else backend.get_allocations(consumer)
    return {'providers': providers, 'allocations': allocations}


def partial_body(on_tree, providers):
    """A consumer's PARTIAL allocations body: ``on_tree`` (``{rp: {RC: n}}``, its allocations on
    the tree's providers as the per-provider reads show them) at the providers' generations,
    marked ``"partial": True``; no consumer_generation, project, user, type or allocations
    outside the tree, so it can never be written (see :func:`provider_tree_state`)."""
    return {'allocations': dict((rp, {'resources': dict(res), 'generation': providers[rp]['generation']})
                                for rp, res in on_tree.items()),
            'partial': True}
