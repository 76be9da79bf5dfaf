# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Idempotent operations behind the modules: read, validate, predict, diff, apply.

Every ``ensure_*`` function follows the same steps, inside one
:func:`.retry.with_conflict_retry` step so a lost generation race is recomputed
from a fresh read:

1. read the current state through the :class:`.backend.Backend` interface;
2. validate the request against it BEFORE any write (unknown provider, class or
   trait, bad values, an in-use class or provider, a re-parent the server cannot
   do), raising the :mod:`.errors` type and message the real service would give,
   so a bad request fails the same way in check mode and changes nothing;
3. compute the desired state and the PREDICTED result (including the provider
   and consumer generations Placement will hand out);
4. when nothing differs, send nothing (a PUT that would only bump a generation
   is not a change); in check mode stop here; otherwise write with the
   generations read in step 1 and re-read the result.

Each returns a dict with ``changed``, ``diff`` (``{"before", "after"}``), the
module's object keys and ``retries``.  Nothing here imports Ansible.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from .rules import microversions
from .errors import (
    RESOURCE_PROVIDER_NOT_FOUND,
    BadRequest,
    ConcurrentUpdate,
    Conflict,
    DuplicateName,
    NoAnswer,
    NotFound,
    UnsupportedVersion,
)
from .retry import DEFAULT_ATTEMPTS, with_conflict_retry
from .tree import ProviderTree
from .rules import allocations as allocation_rules
from .rules import inventory as inventory_rules
from .rules import names as name_rules
from .rules import providers as provider_rules
from .rules.providers import REPARENT_MICROVERSION

#: Re-parenting or un-parenting a provider (PUT /resource_providers/{u}) needs this.


def _microversion(backend):
    try:
        return microversions.version_tuple(backend.microversion)
    except (ValueError, TypeError, AttributeError):
        return microversions.MAX_MICROVERSION


def _retry(step, attempts, log, what):
    result, retries = with_conflict_retry(step, attempts=attempts, log=log, what=what)
    result['retries'] = retries
    return result


# -- providers: lookup and views ----------------------------------------------------
def find_provider(backend, ref):
    """A provider by uuid (uuid-like ``ref``) or by name; None when there is none."""
    if ref is None or ref == '':
        return None
    if provider_rules.is_uuid_like(ref):
        try:
            return backend.get_provider(provider_rules.normalize_uuid(ref))
        except NotFound:
            return None
    found = backend.list_providers(name=ref)
    return found[0] if found else None


def resolve_provider(backend, ref, what='Resource provider'):
    """Like :func:`find_provider` but a missing provider is a clear NotFound."""
    if ref is None or str(ref).strip() == '':
        raise BadRequest('%s: a provider name or uuid is required' % what)
    prov = find_provider(backend, ref)
    if prov is None:
        if provider_rules.is_uuid_like(ref):
            raise NotFound('%s with uuid %s not found' % (what, provider_rules.normalize_uuid(ref)),
                           code=RESOURCE_PROVIDER_NOT_FOUND)
        raise NotFound("%s named '%s' not found" % (what, ref),
                       code=RESOURCE_PROVIDER_NOT_FOUND)
    return prov


def provider_record(backend, prov, with_allocations=False):
    """One provider with its inventories, usages, traits and aggregates (and allocations)."""
    uuid = prov['uuid']
    record = provider_rules.provider_view(prov)
    record['inventories'] = _normalized_inventories(backend.get_inventories(uuid)['inventories'])
    record['usages'] = dict(backend.get_usages(uuid)['usages'])
    record['traits'] = sorted(backend.get_provider_traits(uuid)['traits'])
    record['aggregates'] = sorted(backend.get_aggregates(uuid)['aggregates'])
    if with_allocations:
        allocs = backend.get_provider_allocations(uuid)['allocations']
        record['allocations'] = dict(
            (consumer, {'resources': dict(entry.get('resources', {}))})
            for consumer, entry in allocs.items())
    return record


def tree_order(providers):
    """Sort providers root first, then depth-first with siblings by name (the tree's order)."""
    tree = ProviderTree({'providers': dict((p['uuid'], p) for p in providers)})
    return [tree.get(uuid) for uuid, _depth in tree.depth_first()]


def providers_info(backend, name=None, uuid=None, in_tree=None, with_allocations=False, details=True):
    """Providers by name, by uuid, a whole tree (``in_tree``: name or uuid), or all.

    A provider or tree that does not exist gives an empty list.  ``details`` False: each provider
    as Placement lists it (:func:`provider_rules.provider_view`), without the four or five reads
    per provider of its inventories, usages, traits, aggregates (and allocations).
    """
    if uuid is not None:
        uuid = provider_rules.normalize_uuid(uuid)
        try:
            provs = [backend.get_provider(uuid)]
        except NotFound:
            provs = []
    elif name is not None:
        provs = backend.list_providers(name=name)
    elif in_tree is not None:
        anchor = find_provider(backend, in_tree)
        provs = backend.list_providers(in_tree=anchor['uuid']) if anchor else []
    else:
        provs = backend.list_providers()
    if not details:
        return [provider_rules.provider_view(p) for p in tree_order(provs)]
    return [provider_record(backend, p, with_allocations) for p in tree_order(provs)]


# -- resource_provider ---------------------------------------------------------
def check_provider_request(name=None, uuid=None, traits=None, aggregates=None):
    """The checks of :func:`ensure_provider` that need no backend; returns (uuid, traits, aggregates) normalized."""
    if name is None and uuid is None:
        raise BadRequest('Either name or uuid of the resource provider is required')
    if name is not None:
        _validate_provider_name(name)
    if uuid is not None:
        uuid = provider_rules.normalize_uuid(uuid)
    want_traits = None if traits is None else _validate_traits(traits)
    want_aggs = None
    if aggregates is not None:
        want_aggs = sorted(set(provider_rules.normalize_uuid(a) for a in aggregates))
    return uuid, want_traits, want_aggs


def _validate_provider_name(name):
    if not name or provider_rules.name_error(name):
        raise BadRequest("Resource provider name must be a string of 1 to %d characters, got %r"
                         % (provider_rules.NAME_MAX, name))
    return name


def _validate_traits(traits):
    names = []
    for trait in traits:
        name_rules.validate_name(trait, 'trait')
        if trait not in names:
            names.append(trait)
    return names


def _missing_traits(backend, names):
    """Split requested trait names that do not exist yet into (custom, standard)."""
    if not names:
        return [], []
    known = set(backend.list_traits(name='in:' + ','.join(sorted(names))))
    missing = [n for n in names if n not in known]
    custom = sorted(n for n in missing if name_rules.is_custom(n))
    standard = sorted(n for n in missing if not name_rules.is_custom(n))
    for trait in custom:
        name_rules.validate_custom_name(trait, 'trait')
    return custom, standard


def ensure_provider(backend, name=None, uuid=None, parent_provider=None, traits=None,
                    traits_exclusive=False, aggregates=None, aggregates_exclusive=False,
                    check_mode=False, attempts=DEFAULT_ATTEMPTS, log=None):
    """Make a provider exist as described.

    ``name``/``uuid`` identify it (uuid wins; with both, an existing provider is
    renamed).  ``parent_provider`` (name or uuid) sets its parent, ``''`` makes it a
    root, None leaves the parent alone.  ``traits``/``aggregates`` are added to the
    current sets, or replace them when the matching ``*_exclusive`` is true; None
    leaves a set alone.  Custom traits that do not exist are created.

    Returns ``{"changed", "provider", "diff", "created_traits", "retries"}``;
    ``provider`` is the full provider record (predicted in check mode; a provider
    created without ``uuid`` has ``uuid`` None in check mode, the server picks it).
    """
    uuid, want_traits, want_aggs = check_provider_request(name, uuid, traits, aggregates)
    what = 'resource provider %s' % (name or uuid)

    def step():
        return _lost_write_retry(lambda: _ensure_provider_once(
            backend, name, uuid, parent_provider, want_traits, traits_exclusive, want_aggs,
            aggregates_exclusive, check_mode, log), attempts, log, what)

    return _retry(step, attempts, log, what)


def _lost_write_retry(once, attempts, log, what):
    """Run ``once()`` (a read-compute-write step of :func:`ensure_provider`) again from a fresh read
    when one of its writes got no answer (NoAnswer: a reset connection, a timeout), at most
    ``attempts`` times.

    Every write of that step is safe to send again after a re-read: the create and the rename are
    not sent once the re-read shows them done, and the traits and aggregates PUTs carry the
    generation read (a write that did land moved it: the re-read shows the traits in place and
    sends nothing).  A step that then finds nothing to do still made the change: ``changed``.
    """
    lost = 0
    for attempt in range(1, attempts + 1):
        try:
            result = once()
        except NoAnswer as exc:
            if getattr(exc, 'method', None) in (None, 'GET', 'HEAD') or attempt == attempts:
                raise
            lost += 1
            if log is not None:
                log('%s: the answer to %s %s was lost (%s); re-reading, and writing again what did not land'
                    % (what, exc.method, getattr(exc, 'path', ''), exc.detail))
            continue
        if lost:
            result['changed'] = True
        return result
    raise AssertionError('unreachable')  # pragma: no cover


def _ensure_provider_once(backend, name, uuid, parent_ref, want_traits, traits_exclusive,
                          want_aggs, aggs_exclusive, check_mode, log):
    # 1. read
    current = None
    if uuid is not None:
        try:
            current = backend.get_provider(uuid)
        except NotFound:
            current = None
    else:
        found = backend.list_providers(name=name)
        current = found[0] if found else None
    if name is not None and (current is None or current['name'] != name):
        holder = backend.list_providers(name=name)
        if holder and (current is None or holder[0]['uuid'] != current['uuid']):
            raise DuplicateName('Conflicting resource provider name: %s already exists.' % name)
    if current is None and name is None:
        raise BadRequest('Resource provider %s does not exist and no name was given to create it'
                         % uuid)
    before = provider_record(backend, current) if current is not None else None

    # 2. validate the parent
    parent = None
    want_parent_uuid = before['parent_provider_uuid'] if before else None
    if parent_ref is not None:
        if parent_ref == '':
            want_parent_uuid = None
        else:
            parent = resolve_provider(backend, parent_ref, 'Parent resource provider')
            want_parent_uuid = parent['uuid']
            if current is None:
                provider_rules.check_create_parent(name, uuid, parent['uuid'])
    reparent = before is not None and want_parent_uuid != before['parent_provider_uuid']
    if reparent:
        if before['parent_provider_uuid'] is not None:
            have = _microversion(backend)
            if have < REPARENT_MICROVERSION:
                raise UnsupportedVersion(
                    'Re-parenting or un-parenting resource provider %s needs Placement '
                    'microversion %s; this Placement supports %s'
                    % (current['uuid'], microversions.version_str(REPARENT_MICROVERSION),
                       microversions.version_str(have)))
        if want_parent_uuid is not None:
            tree = backend.list_providers(in_tree=current['uuid'])
            provider_rules.check_new_parent(current['uuid'], want_parent_uuid, provider_rules.subtree(
                [(p['uuid'], p.get('parent_provider_uuid')) for p in tree], current['uuid']))

    # 3. traits and aggregates
    have_traits = before['traits'] if before else []
    new_traits = _merged(have_traits, want_traits, traits_exclusive)
    create_traits, unknown = _missing_traits(backend, [t for t in new_traits if t not in have_traits])
    if unknown:
        raise BadRequest('No such trait(s): %s.' % ', '.join(unknown))
    have_aggs = before['aggregates'] if before else []
    new_aggs = _merged(have_aggs, want_aggs, aggs_exclusive)
    traits_change = new_traits != have_traits
    aggs_change = new_aggs != have_aggs

    # 4. predict
    if before is None:
        after = {
            'uuid': uuid,
            'name': name,
            'generation': 0,
            'parent_provider_uuid': want_parent_uuid,
            'root_provider_uuid': parent['root_provider_uuid'] if parent is not None else uuid,
            'inventories': {},
            'usages': {},
            'traits': [],
            'aggregates': [],
        }
    else:
        after = copy.deepcopy(before)
        if name is not None:
            after['name'] = name
        if reparent:
            after['parent_provider_uuid'] = want_parent_uuid
            after['root_provider_uuid'] = (parent['root_provider_uuid'] if parent is not None
                                           else before['uuid'])
    if traits_change:
        after['traits'] = new_traits
        after['generation'] += 1
    if aggs_change:
        after['aggregates'] = new_aggs
        after['generation'] += 1
    changed = before is None or after != before
    result = {
        'changed': changed,
        'provider': after,
        'diff': {'before': before, 'after': after},
        'created_traits': create_traits,
    }
    if not changed or check_mode:
        return result

    # 5. apply
    for trait in create_traits:
        if backend.ensure_trait(trait) and log is not None:
            log('created custom trait %s' % trait)
    if before is None:
        prov = backend.create_provider(name, uuid=uuid, parent_provider_uuid=want_parent_uuid)
    elif (name is not None and name != before['name']) or reparent:
        prov = backend.update_provider(before['uuid'], name if name is not None else before['name'],
                                       parent_provider_uuid=want_parent_uuid)
    else:
        prov = current
    rp_uuid = prov['uuid']
    # Compare-and-update with the generation read above (0 for a new provider): a
    # concurrent writer makes the write fail with ConcurrentUpdate and the whole
    # step is recomputed from a fresh read.
    gen = before['generation'] if before is not None else prov['generation']
    if traits_change:
        gen = _generation_after(backend.set_provider_traits(rp_uuid, gen, new_traits), gen)
    if aggs_change:
        backend.set_aggregates(rp_uuid, gen, new_aggs)
    result['provider'] = provider_record(backend, backend.get_provider(rp_uuid))
    result['diff']['after'] = result['provider']
    return result


def set_traits(backend, uuid, traits, what=None, attempts=DEFAULT_ATTEMPTS, log=None):
    """Make the traits of the existing provider ``uuid`` exactly ``traits``: its traits read with
    their generation (one ``GET .../traits``) and, when they differ, the missing traits checked and
    one generation-checked ``PUT``.  Retried from a fresh read on a conflict and when the PUT's
    answer is lost (as :func:`ensure_provider`), at most ``attempts`` times.  Two or three requests
    where :func:`ensure_provider` reads the whole provider before and after (a reshape sets the
    root's traits this way while nova-compute is out of service).

    Returns ``{"changed", "before", "after", "generation", "retries"}`` (``generation``: the
    provider's generation after the write, or as read when nothing was written).
    """
    want = sorted(_validate_traits(traits))
    what = what or 'resource provider %s' % uuid

    def once():
        read = backend.get_provider_traits(uuid)
        have = sorted(read['traits'])
        generation = read['resource_provider_generation']
        result = {'changed': have != want, 'before': have, 'after': want, 'generation': generation}
        if have == want:
            return result
        create_traits, unknown = _missing_traits(backend, [t for t in want if t not in have])
        if unknown:
            raise BadRequest('No such trait(s): %s.' % ', '.join(unknown))
        for trait in create_traits:
            if backend.ensure_trait(trait) and log is not None:
                log('created custom trait %s' % trait)
        result['generation'] = _generation_after(backend.set_provider_traits(uuid, generation, want), generation)
        return result

    return _retry(lambda: _lost_write_retry(once, attempts, log, what), attempts, log, what)


def _merged(have, want, exclusive):
    """A provider's new trait or aggregate set: ``have`` (None wanted), ``want`` (exclusive) or both, sorted."""
    if want is None:
        return list(have)
    if exclusive:
        return sorted(want)
    return sorted(set(have) | set(want))


def _generation_after(response, sent):
    """The generation a provider write answered with (sent + 1 when it does not say)."""
    if isinstance(response, dict) and response.get('resource_provider_generation') is not None:
        return response['resource_provider_generation']
    return sent + 1


def create_new_provider(backend, name, uuid, parent_provider_uuid, traits=None,
                        attempts=DEFAULT_ATTEMPTS, log=None):
    """Create a provider its caller has just read as absent: fewer round trips than
    :func:`ensure_provider`, the same result.

    For the reshape path, where the planner read the whole tree and found neither
    ``name`` nor ``uuid`` in it.  The provider is created directly (no lookups of the
    uuid, the name or the parent) and not read back: a provider Placement has just
    created has generation 0 and no inventory, usages or aggregates, and its traits
    are set with one compare-and-update write from generation 0.  Unknown standard
    traits are refused before any write, as :func:`ensure_provider` does.

    Whatever the direct path does not expect -- the name or uuid taken elsewhere (409),
    the parent gone (400/404), an unknown trait, a concurrent write to the new provider
    (409) -- is handed to :func:`ensure_provider` with the same arguments, which reads
    everything and gives the result or the error it always gave.

    Returns :func:`ensure_provider`'s result, plus ``predicted``: True when ``provider``
    was built from the writes' answers (direct path), False when it was read back.
    """
    def fallback():
        result = ensure_provider(backend, name=name, uuid=uuid, parent_provider=parent_provider_uuid,
                                 traits=traits, attempts=attempts, log=log)
        result['predicted'] = False
        return result

    _validate_provider_name(name)
    uuid = provider_rules.normalize_uuid(uuid)
    want_traits = sorted(_validate_traits(traits or []))
    create_traits, unknown = _missing_traits(backend, want_traits)
    if unknown:
        return fallback()
    for trait in create_traits:
        if backend.ensure_trait(trait) and log is not None:
            log('created custom trait %s' % trait)
    try:
        prov = backend.create_provider(name, uuid=uuid, parent_provider_uuid=parent_provider_uuid)
    except (Conflict, BadRequest, NotFound):
        # created nothing: let the full path find out why and answer as it always did
        return fallback()
    except NoAnswer:
        # the POST may have been applied (a reset after it went out): the full path reads and
        # creates it if it is not there; either way this call made it (it was read as absent)
        return _made_here(fallback())
    gen = prov['generation']
    if want_traits:
        try:
            gen = _generation_after(backend.set_provider_traits(prov['uuid'], gen, want_traits), gen)
        except ConcurrentUpdate:
            return fallback()
        except NoAnswer:
            # the traits PUT may or may not have landed: the full path reads and sets them
            return _made_here(fallback())
    record = provider_rules.provider_view(prov)
    record.update({'generation': gen, 'inventories': {}, 'usages': {}, 'traits': want_traits,
                   'aggregates': []})
    return {'changed': True, 'provider': record, 'diff': {'before': None, 'after': record},
            'created_traits': create_traits, 'retries': 0, 'predicted': True}


def _made_here(result):
    """:func:`create_new_provider`'s fallback after a lost answer: the provider did not exist when
    the caller read the tree, so whatever the full path found, this call created it."""
    result['changed'] = True
    return result


def remove_provider(backend, ref, check_mode=False, attempts=DEFAULT_ATTEMPTS, log=None):
    """Delete a provider (name or uuid) if it exists.

    Refuses, with Placement's code and message and before any write, a provider
    with children (409 cannot_delete_parent) or with allocations (409 inuse).
    """
    if provider_rules.is_uuid_like(ref):
        ref = provider_rules.normalize_uuid(ref)

    def step():
        current = find_provider(backend, ref)
        if current is None:
            return {'changed': False, 'provider': None, 'diff': {'before': None, 'after': None}}
        rp_uuid = current['uuid']
        before = provider_record(backend, current)
        provider_rules.check_delete(
            rp_uuid,
            has_children=any(p.get('parent_provider_uuid') == rp_uuid
                             for p in backend.list_providers(in_tree=rp_uuid)),
            has_allocations=bool(backend.get_provider_allocations(rp_uuid)['allocations']))
        if not check_mode:
            backend.delete_provider(rp_uuid)
        return {'changed': True, 'provider': None, 'diff': {'before': before, 'after': None}}

    return _retry(step, attempts, log, 'delete resource provider %s' % ref)


# -- inventory ---------------------------------------------------------------------
def _normalized_inventories(invs):
    return dict((rc, inventory_rules.normalize_inventory(rec, rc)) for rc, rec in invs.items())


def _missing_classes(backend, names):
    """Split requested resource classes that do not exist into (custom, standard)."""
    if not names:
        return [], []
    known = set(backend.list_resource_classes())
    missing = [n for n in names if n not in known]
    custom = sorted(n for n in missing if name_rules.is_custom(n))
    for rc in custom:
        name_rules.validate_custom_name(rc, 'resource class')
    standard = sorted(n for n in missing if not name_rules.is_custom(n))
    return custom, standard


def ensure_inventory(backend, provider, inventories=None, remove=None, exclusive=False,
                     check_mode=False, attempts=DEFAULT_ATTEMPTS, log=None):
    """Set (or remove) inventory records on one provider (name or uuid).

    ``inventories`` maps a resource class to a record (fields omitted take
    Placement's defaults); they are merged into the current set, or replace it
    when ``exclusive``.  ``remove`` lists classes to drop.  Custom classes that do
    not exist are created.  Removing a class still allocated fails with 409
    placement.inventory.inuse before any write.

    Returns ``{"changed", "resource_provider" ({uuid, name}), "inventories",
    "resource_provider_generation", "usages", "created_resource_classes",
    "diff", "retries", "warnings"}``; ``warnings`` (:func:`inventory_warnings`)
    names what Placement accepts but no operator means.
    """
    inventories = dict(inventories or {})
    remove = list(remove or [])
    for rc in list(inventories) + remove:
        name_rules.validate_name(rc, 'resource class')
    both = sorted(set(inventories) & set(remove))
    if both:
        raise BadRequest('Resource class(es) both set and removed: %s' % ', '.join(both))
    wanted = {}
    for rc, rec in inventories.items():
        inv = inventory_rules.normalize_inventory(rec, rc)
        inventory_rules.check_capacity(inv, rc)
        wanted[rc] = inv

    def step():
        prov = resolve_provider(backend, provider)
        rp_uuid = prov['uuid']
        read = backend.get_inventories(rp_uuid)
        generation = read['resource_provider_generation']
        have = _normalized_inventories(read['inventories'])
        usages = dict(backend.get_usages(rp_uuid)['usages'])
        if exclusive:
            new = dict(wanted)
        else:
            new = dict(have)
            new.update(wanted)
        for rc in remove:
            new.pop(rc, None)
        create, unknown = _missing_classes(backend, sorted(rc for rc in wanted if rc not in have))
        if unknown:
            raise inventory_rules.unknown_class_error(rp_uuid, unknown)
        inventory_rules.check_removal(have, new, usages, rp_uuid)
        changed = new != have
        after_gen = generation + 1 if changed else generation
        after_usages = dict((rc, usages.get(rc, 0)) for rc in new)
        result = {
            'changed': changed,
            'warnings': inventory_warnings(prov['name'], wanted, usages),
            'resource_provider': {'uuid': rp_uuid, 'name': prov['name']},
            'inventories': new,
            'resource_provider_generation': after_gen,
            'usages': after_usages,
            'created_resource_classes': create,
            'diff': {
                'before': {'resource_provider_generation': generation, 'inventories': have},
                'after': {'resource_provider_generation': after_gen, 'inventories': new},
            },
        }
        if not changed or check_mode:
            return result
        for rc in create:
            if backend.ensure_resource_class(rc) and log is not None:
                log('created custom resource class %s' % rc)
        backend.set_inventories(rp_uuid, generation, new)
        reread = backend.get_inventories(rp_uuid)
        result['inventories'] = _normalized_inventories(reread['inventories'])
        result['resource_provider_generation'] = reread['resource_provider_generation']
        result['usages'] = dict(backend.get_usages(rp_uuid)['usages'])
        result['diff']['after'] = {
            'resource_provider_generation': reread['resource_provider_generation'],
            'inventories': result['inventories'],
        }
        return result

    return _retry(step, attempts, log, 'inventory of %s' % provider)


def inventory_warnings(provider_name, records, usages):
    """What Placement accepts silently in ``records`` ({RC: normalized record}) but breaks allocations.

    ``min_unit > max_unit`` (no amount satisfies both: every allocation of the class is
    refused), a capacity below the current usage (allowed so a node can shrink; no new
    allocation fits until usage drops) and an ``allocation_ratio`` of 0 (capacity 0).
    """
    out = []
    for rc in sorted(records):
        inv = records[rc]
        where = '%s on %s' % (rc, provider_name)
        if inv['min_unit'] > inv['max_unit']:
            out.append('inventory of %s: min_unit %d is greater than max_unit %d; Placement accepts it, but no '
                       'amount satisfies both, so every new allocation of %s will be refused'
                       % (where, inv['min_unit'], inv['max_unit'], rc))
        if inv['allocation_ratio'] == 0:
            out.append('inventory of %s: allocation_ratio 0 gives a capacity of 0; Placement accepts it, '
                       'but nothing more can be allocated' % where)
        used = usages.get(rc, 0)
        cap = inventory_rules.capacity(inv)
        if used > cap:
            out.append('inventory of %s: capacity %d (int((total %d - reserved %d) * allocation_ratio %s)) is '
                       'below the current usage %d; Placement accepts it, the existing allocations stay, but no '
                       'new allocation fits until the usage drops below the capacity'
                       % (where, cap, inv['total'], inv['reserved'], inv['allocation_ratio'], used))
    return out


# -- allocations -----------------------------------------------------------------
def consumer_view(read):
    """GET /allocations/{c} -> the uniform consumer shape the modules return."""
    allocs = read.get('allocations') or {}
    view = {
        'allocations': dict(
            (rp, {'generation': entry.get('generation'),
                  'resources': dict(entry.get('resources', {}))})
            for rp, entry in allocs.items() if entry.get('resources')),
        'consumer_generation': None,
        'project_id': None,
        'user_id': None,
        'consumer_type': None,
    }
    if view['allocations']:
        for key in ('consumer_generation', 'project_id', 'user_id', 'consumer_type'):
            view[key] = read.get(key)
    return view


def _amount(value, rc, where):
    if isinstance(value, bool):
        value = None
    elif isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if not isinstance(value, int) or value < 1 or value > inventory_rules.INT_MAX:
        raise BadRequest('Amount of %s on %s must be an integer between 1 and %d, got %r'
                         % (rc, where, inventory_rules.INT_MAX, value))
    return value


def normalize_consumer_request(spec):
    """Check one consumer request (before any read) and normalize it.

    ``spec``: ``{"consumer_uuid", "state" (present|absent), "allocations": [{"resource_provider":
    name-or-uuid, "resources": {RC: n}}] or {ref: {RC: n}}, "project_id", "user_id",
    "consumer_type"}``.
    """
    consumer = allocation_rules.consumer_uuid(spec.get('consumer_uuid'))
    state = spec.get('state') or 'present'
    if state not in ('present', 'absent'):
        raise BadRequest("state of consumer %s must be 'present' or 'absent', got %r" % (consumer, state))
    entries = spec.get('allocations')
    if isinstance(entries, dict):
        entries = [{'resource_provider': ref, 'resources': res} for ref, res in entries.items()]
    entries = list(entries or [])
    if state == 'present' and not entries:
        raise BadRequest('Consumer %s: allocations must name at least one resource provider '
                         '(use state=absent to remove all of its allocations)' % consumer)
    if state == 'absent' and entries:
        raise BadRequest('Consumer %s: allocations cannot be given with state=absent' % consumer)
    norm = []
    for entry in entries:
        ref = entry.get('resource_provider')
        resources = entry.get('resources')
        if not isinstance(resources, dict) or not resources:
            raise BadRequest('Consumer %s: resources on %s must be a non-empty mapping of '
                             'resource class to amount' % (consumer, ref))
        clean = {}
        for rc, amount in resources.items():
            name_rules.validate_name(rc, 'resource class')
            clean[rc] = _amount(amount, rc, ref)
        norm.append({'resource_provider': ref, 'resources': clean})
    consumer_type = spec.get('consumer_type')
    if consumer_type is not None:
        name_rules.validate_consumer_type(consumer_type)
    for key in ('project_id', 'user_id'):
        value = spec.get(key)
        if value is not None and (not isinstance(value, str) or not value or len(value) > allocation_rules.ID_MAX):
            raise BadRequest('Consumer %s: %s must be a string of 1 to %d characters' % (consumer, key, allocation_rules.ID_MAX))
    return {
        'consumer_uuid': consumer,
        'state': state,
        'allocations': norm,
        'project_id': spec.get('project_id'),
        'user_id': spec.get('user_id'),
        'consumer_type': consumer_type,
    }


def ensure_allocations(backend, requests, multi=False, check_mode=False,
                       attempts=DEFAULT_ATTEMPTS, log=None):
    """Make each consumer's FULL allocation set what the request says (replace semantics).

    ``requests`` is a list of consumer requests (see :func:`normalize_consumer_request`).
    With one request and ``multi`` false the write is one ``PUT /allocations/{c}``;
    otherwise the consumers that change are written in one ``POST /allocations``
    transaction.  Only consumers that differ are sent: an identical request sends
    nothing.

    Capacity, min_unit/max_unit/step_size and "class exists on provider" are checked
    before writing (Placement's rules in :mod:`.rules`, with the usage the write would
    free counted), so a request Placement would refuse fails without a write, in
    check mode too.

    Returns ``{"changed", "consumers": {c: view}, "diff", "retries"}``; a view is
    ``{"allocations": {rp: {"generation", "resources"}}, "consumer_generation",
    "project_id", "user_id", "consumer_type"}`` with the predicted generations.
    """
    reqs = [normalize_consumer_request(r) for r in requests]
    seen = set()
    for req in reqs:
        if req['consumer_uuid'] in seen:
            raise BadRequest('Consumer %s is listed more than once' % req['consumer_uuid'])
        seen.add(req['consumer_uuid'])
    if not reqs:
        raise BadRequest('No consumer given')

    def step():
        return _ensure_allocations_once(backend, reqs, multi or len(reqs) > 1, check_mode)

    label = reqs[0]['consumer_uuid'] if len(reqs) == 1 else '%d consumers' % len(reqs)
    return _retry(step, attempts, log, 'allocations of %s' % label)


def _ensure_allocations_once(backend, reqs, multi, check_mode):
    with_type = _microversion(backend) >= allocation_rules.CONSUMER_TYPE_MICROVERSION
    providers = {}   # ref -> provider (fresh read)

    def provider_of(ref):
        if ref not in providers:
            prov = find_provider(backend, ref)
            if prov is None:
                if provider_rules.is_uuid_like(ref):
                    raise allocation_rules.unknown_provider_error(provider_rules.normalize_uuid(ref))
                raise BadRequest("Allocation for resource provider named '%s' that does not exist."
                                 % ref)
            providers[ref] = prov
        return providers[ref]

    plans = []
    for req in reqs:
        consumer = req['consumer_uuid']
        before = consumer_view(backend.get_allocations(consumer))
        desired = {}
        for entry in req['allocations']:
            prov = provider_of(entry['resource_provider'])
            if prov['uuid'] in desired:
                raise BadRequest('Consumer %s: resource provider %s (%s) is listed more than once'
                                 % (consumer, prov['uuid'], prov['name']))
            desired[prov['uuid']] = dict(entry['resources'])
        have = dict((rp, e['resources']) for rp, e in before['allocations'].items())
        if req['state'] == 'absent':
            changed = bool(have)
            project_id = before['project_id']
            user_id = before['user_id']
            consumer_type = before['consumer_type']
        else:
            project_id = req['project_id'] or before['project_id']
            user_id = req['user_id'] or before['user_id']
            consumer_type = (req['consumer_type'] or before['consumer_type']
                             or allocation_rules.DEFAULT_CONSUMER_TYPE)
            if not with_type:
                consumer_type = None
            missing = [k for k, v in (('project_id', project_id), ('user_id', user_id)) if not v]
            if missing:
                raise BadRequest('Consumer %s has no allocations yet: %s required to create them'
                                 % (consumer, ' and '.join(missing)))
            changed = (desired != have or project_id != before['project_id']
                       or user_id != before['user_id']
                       or (with_type and consumer_type != before['consumer_type']))
        plans.append({
            'consumer': consumer, 'before': before, 'have': have, 'desired': desired,
            'project_id': project_id, 'user_id': user_id, 'consumer_type': consumer_type,
            'changed': changed,
        })

    writes = [p for p in plans if p['changed']]
    _check_fit(backend, writes, providers)

    # predicted generations: every provider in the NEW allocation set of a written
    # consumer gets +1 once per transaction; a provider only left behind does not.
    bumped = set()
    for plan in writes:
        bumped.update(plan['desired'])
    rp_generation = dict((p['uuid'], p['generation']) for p in providers.values())
    consumers = {}
    for plan in plans:
        before = plan['before']
        if not plan['changed']:
            # unchanged, but a provider it shares with a written consumer is bumped
            after = copy.deepcopy(before)
            for rp, entry in after['allocations'].items():
                if rp in bumped:
                    entry['generation'] = rp_generation.get(rp, entry['generation']) + 1
        elif not plan['desired']:
            after = consumer_view({'allocations': {}})
        else:
            gen = before['consumer_generation']
            after = {
                'allocations': dict(
                    (rp, {'generation': rp_generation[rp] + (1 if rp in bumped else 0),
                          'resources': res})
                    for rp, res in plan['desired'].items()),
                'consumer_generation': allocation_rules.next_consumer_generation(gen),
                'project_id': plan['project_id'],
                'user_id': plan['user_id'],
                'consumer_type': plan['consumer_type'],
            }
        consumers[plan['consumer']] = after
    result = {
        'changed': bool(writes),
        'consumers': consumers,
        'diff': {
            'before': dict((p['consumer'], p['before']) for p in plans),
            'after': dict(consumers),
        },
    }
    if not writes or check_mode:
        return result

    bodies = {}
    for plan in writes:
        body = {
            'allocations': dict((rp, {'resources': res}) for rp, res in plan['desired'].items()),
            'project_id': plan['project_id'],
            'user_id': plan['user_id'],
            'consumer_generation': plan['before']['consumer_generation'],
        }
        if with_type:
            body['consumer_type'] = plan['consumer_type'] or allocation_rules.DEFAULT_CONSUMER_TYPE
        bodies[plan['consumer']] = body
    if multi:
        backend.post_allocations(bodies)
    else:
        consumer = writes[0]['consumer']
        backend.put_allocations(consumer, bodies[consumer])
    for plan in plans:
        consumers[plan['consumer']] = consumer_view(backend.get_allocations(plan['consumer']))
    result['diff']['after'] = dict(consumers)
    return result


def _check_fit(backend, writes, providers):
    """Placement's per-allocation checks for the consumers about to be written."""
    if not writes:
        return
    # (rp, rc) -> [amount freed by the write, amount claimed by the write]
    delta = {}
    for plan in writes:
        for rp, res in plan['have'].items():
            for rc, amount in res.items():
                delta.setdefault((rp, rc), [0, 0])[0] += amount
        for rp, res in plan['desired'].items():
            for rc, amount in res.items():
                delta.setdefault((rp, rc), [0, 0])[1] += amount
    invs, usages = {}, {}
    for plan in writes:
        for rp, res in sorted(plan['desired'].items()):
            if rp not in invs:
                invs[rp] = _normalized_inventories(backend.get_inventories(rp)['inventories'])
                usages[rp] = backend.get_usages(rp)['usages']
            for rc, amount in sorted(res.items()):
                freed, claimed = delta[(rp, rc)]
                used_before = usages[rp].get(rc, 0)
                allocation_rules.check_allocation(invs[rp].get(rc), amount, rc, rp,
                                                  used_before, used_before - freed + claimed)


def allocations_info(backend, consumer_uuid=None, resource_provider=None, in_tree=None):
    """Allocations by consumer, on one provider, or on a whole tree.

    Returns ``{"consumers": {c: view}}`` (every consumer's FULL allocation set,
    including providers outside the asked provider or tree), plus for a provider
    or tree ``{"resource_providers": {rp: {"name", "generation", "allocations":
    {c: {"resources"}}}}}``.  A consumer with no allocations, or a provider or tree
    that does not exist, gives empty maps.
    """
    if consumer_uuid is not None:
        consumer_uuid = allocation_rules.consumer_uuid(consumer_uuid)
        view = consumer_view(backend.get_allocations(consumer_uuid))
        return {'consumers': {consumer_uuid: view} if view['allocations'] else {}}
    if resource_provider is not None:
        prov = find_provider(backend, resource_provider)
        provs = [prov] if prov else []
    else:
        anchor = find_provider(backend, in_tree)
        provs = tree_order(backend.list_providers(in_tree=anchor['uuid'])) if anchor else []
    per_rp = {}
    wanted = set()
    for prov in provs:
        read = backend.get_provider_allocations(prov['uuid'])
        allocs = dict((c, {'resources': dict(e.get('resources', {}))})
                      for c, e in read['allocations'].items())
        per_rp[prov['uuid']] = {
            'name': prov['name'],
            'generation': read.get('resource_provider_generation', prov['generation']),
            'allocations': allocs,
        }
        wanted.update(allocs)
    consumers = {}
    for consumer in sorted(wanted):
        view = consumer_view(backend.get_allocations(consumer))
        if view['allocations']:
            consumers[consumer] = view
    return {'consumers': consumers, 'resource_providers': per_rp}
