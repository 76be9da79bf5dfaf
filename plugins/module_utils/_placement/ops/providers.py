# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The provider operations (resource_provider, resource_provider_info): look-ups and views,
ensure / create / remove a provider, its traits.  The steps every ``ensure_*`` follows: :mod:`..resources`.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ..rules import microversions
from ..errors import (
    RESOURCE_PROVIDER_NOT_FOUND,
    BadRequest,
    ConcurrentUpdate,
    Conflict,
    DuplicateName,
    NoAnswer,
    NotFound,
    UnsupportedVersion,
)
from .. import request as _request
from ..retry import DEFAULT_ATTEMPTS
from ..tree import ProviderTree
from ..rules import names as name_rules
from ..rules import providers as provider_rules
from ..rules.providers import REPARENT_MICROVERSION
from .common import microversion_of, normalized_inventories, retried


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
    record['inventories'] = normalized_inventories(backend.get_inventories(uuid)['inventories'])
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


class ProviderRequest(_request.Request):
    """What :func:`ensure_provider` is asked (each field is described there)."""

    FIELDS = (('name', None), ('uuid', None), ('parent_provider', None), ('traits', None), ('traits_exclusive', False),
              ('aggregates', None), ('aggregates_exclusive', False), ('check_mode', False),
              ('attempts', DEFAULT_ATTEMPTS), ('log', None))


def ensure_provider(backend, request=None, **fields):
    """Make a provider exist as described (``request``: a :class:`ProviderRequest`, or its fields).

    ``name``/``uuid`` identify it (uuid wins; with both, an existing provider is
    renamed).  ``parent_provider`` (name or uuid) sets its parent, ``''`` makes it a
    root, None leaves the parent alone.  ``traits``/``aggregates`` are added to the
    current sets, or replace them when the matching ``*_exclusive`` is true; None
    leaves a set alone.  Custom traits that do not exist are created.

    Returns ``{"changed", "provider", "diff", "created_traits", "retries"}``;
    ``provider`` is the full provider record (predicted in check mode; a provider
    created without ``uuid`` has ``uuid`` None in check mode, the server picks it).
    """
    req = ProviderRequest.of(request, **fields)
    uuid, want_traits, want_aggs = check_provider_request(req.name, req.uuid, req.traits, req.aggregates)
    req = req.replace(uuid=uuid, traits=want_traits, aggregates=want_aggs)
    what = 'resource provider %s' % (req.name or uuid)

    def step():
        return _lost_write_retry(lambda: _ensure_provider_once(backend, req), req.attempts, req.log, what)

    return retried(step, req.attempts, req.log, what)


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


class _ProviderChange(object):
    """What one step of :func:`ensure_provider` found and will write, filled step by step."""

    def __init__(self, current, before):
        self.current, self.before = current, before     # the provider as read (None: absent), its record
        self.parent = None                              # the parent named, resolved
        self.parent_uuid = before['parent_provider_uuid'] if before else None
        self.reparent = False
        self.traits = self.aggregates = None            # the sets after the write
        self.create_traits = []
        self.traits_change = self.aggregates_change = False


def _ensure_provider_once(backend, req):
    """One read-compute-write step of :func:`ensure_provider` (``req``: its request, checked)."""
    current = _read_provider(backend, req.name, req.uuid)
    change = _ProviderChange(current, provider_record(backend, current) if current is not None else None)
    _check_parent(backend, req, change)
    _trait_and_aggregate_sets(backend, req, change)
    after = _predicted(req, change)
    before = change.before
    changed = before is None or after != before
    result = {
        'changed': changed,
        'provider': after,
        'diff': {'before': before, 'after': after},
        'created_traits': change.create_traits,
    }
    if not changed or req.check_mode:
        return result
    result['provider'] = _apply_provider(backend, req, change)
    result['diff']['after'] = result['provider']
    return result


def _read_provider(backend, name, uuid):
    """Step 1, read: the provider by uuid (else by name), None when absent; a name another
    provider holds, and an absent provider without a name to create it, refused."""
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
    return current


def _check_parent(backend, req, change):
    """Step 2, validate the parent: resolved, and a re-parenting checked (microversion, no loop)."""
    current, before, parent_ref = change.current, change.before, req.parent_provider
    if parent_ref is not None:
        if parent_ref == '':
            change.parent_uuid = None
        else:
            change.parent = resolve_provider(backend, parent_ref, 'Parent resource provider')
            change.parent_uuid = change.parent['uuid']
            if current is None:
                provider_rules.check_create_parent(req.name, req.uuid, change.parent['uuid'])
    change.reparent = before is not None and change.parent_uuid != before['parent_provider_uuid']
    if change.reparent:
        if before['parent_provider_uuid'] is not None:
            have = microversion_of(backend)
            if have < REPARENT_MICROVERSION:
                raise UnsupportedVersion(
                    'Re-parenting or un-parenting resource provider %s needs Placement '
                    'microversion %s; this Placement supports %s'
                    % (current['uuid'], microversions.version_str(REPARENT_MICROVERSION),
                       microversions.version_str(have)))
        if change.parent_uuid is not None:
            tree = backend.list_providers(in_tree=current['uuid'])
            provider_rules.check_new_parent(current['uuid'], change.parent_uuid, provider_rules.subtree(
                [(p['uuid'], p.get('parent_provider_uuid')) for p in tree], current['uuid']))


def _trait_and_aggregate_sets(backend, req, change):
    """Step 3, traits and aggregates: the sets after the write, the custom traits to create."""
    before = change.before
    have_traits = before['traits'] if before else []
    change.traits = _merged(have_traits, req.traits, req.traits_exclusive)
    change.create_traits, unknown = _missing_traits(backend, [t for t in change.traits if t not in have_traits])
    if unknown:
        raise BadRequest('No such trait(s): %s.' % ', '.join(unknown))
    have_aggs = before['aggregates'] if before else []
    change.aggregates = _merged(have_aggs, req.aggregates, req.aggregates_exclusive)
    change.traits_change = change.traits != have_traits
    change.aggregates_change = change.aggregates != have_aggs


def _predicted(req, change):
    """Step 4, predict: the provider's record after the write."""
    before, parent = change.before, change.parent
    if before is None:
        after = {
            'uuid': req.uuid,
            'name': req.name,
            'generation': 0,
            'parent_provider_uuid': change.parent_uuid,
            'root_provider_uuid': parent['root_provider_uuid'] if parent is not None else req.uuid,
            'inventories': {},
            'usages': {},
            'traits': [],
            'aggregates': [],
        }
    else:
        after = copy.deepcopy(before)
        if req.name is not None:
            after['name'] = req.name
        if change.reparent:
            after['parent_provider_uuid'] = change.parent_uuid
            after['root_provider_uuid'] = (parent['root_provider_uuid'] if parent is not None
                                           else before['uuid'])
    if change.traits_change:
        after['traits'] = change.traits
        after['generation'] += 1
    if change.aggregates_change:
        after['aggregates'] = change.aggregates
        after['generation'] += 1
    return after


def _apply_provider(backend, req, change):
    """Step 5, apply: the custom traits, the create / rename / re-parent, the traits and the
    aggregates; returns the provider's record read back."""
    before, name, log = change.before, req.name, req.log
    for trait in change.create_traits:
        if backend.ensure_trait(trait) and log is not None:
            log('created custom trait %s' % trait)
    if before is None:
        prov = backend.create_provider(name, uuid=req.uuid, parent_provider_uuid=change.parent_uuid)
    elif (name is not None and name != before['name']) or change.reparent:
        prov = backend.update_provider(before['uuid'], name if name is not None else before['name'],
                                       parent_provider_uuid=change.parent_uuid)
    else:
        prov = change.current
    rp_uuid = prov['uuid']
    # Compare-and-update with the generation read above (0 for a new provider): a
    # concurrent writer makes the write fail with ConcurrentUpdate and the whole
    # step is recomputed from a fresh read.
    gen = before['generation'] if before is not None else prov['generation']
    if change.traits_change:
        gen = _generation_after(backend.set_provider_traits(rp_uuid, gen, change.traits), gen)
    if change.aggregates_change:
        backend.set_aggregates(rp_uuid, gen, change.aggregates)
    return provider_record(backend, backend.get_provider(rp_uuid))


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

    return retried(lambda: _lost_write_retry(once, attempts, log, what), attempts, log, what)


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

    return retried(step, attempts, log, 'delete resource provider %s' % ref)
