# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The allocation operations (allocation, allocation_info): a consumer's view, its request
normalised, ensure its allocations (one consumer or several in one POST), what is read of them.
The steps: :mod:`..resources`.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ..errors import BadRequest
from ..retry import DEFAULT_ATTEMPTS
from ..rules import allocations as allocation_rules
from ..rules import inventory as inventory_rules
from ..rules import names as name_rules
from ..rules import providers as provider_rules
from .common import microversion_of, normalized_inventories, retried
from .providers import find_provider, tree_order


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
    return retried(step, attempts, log, 'allocations of %s' % label)


def _ensure_allocations_once(backend, reqs, multi, check_mode):
    """One read-compute-write step of :func:`ensure_allocations`: each consumer read and planned,
    the writes checked to fit, the views predicted, then (unless check mode) the one write."""
    with_type = microversion_of(backend) >= allocation_rules.CONSUMER_TYPE_MICROVERSION
    lookup = _ProviderLookup(backend)
    plans = [_consumer_plan(backend, req, lookup, with_type) for req in reqs]
    writes = [p for p in plans if p['changed']]
    _check_fit(backend, writes, lookup.providers)
    consumers = _predicted_views(plans, writes, lookup.providers)
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
    _write_allocations(backend, writes, multi, with_type)
    for plan in plans:
        consumers[plan['consumer']] = consumer_view(backend.get_allocations(plan['consumer']))
    result['diff']['after'] = dict(consumers)
    return result


class _ProviderLookup(object):
    """``lookup(ref)``: the provider a request names (read fresh, once per ref); ``providers``:
    ``{ref: provider}`` of those read."""

    def __init__(self, backend):
        self.backend = backend
        self.providers = {}

    def __call__(self, ref):
        if ref not in self.providers:
            prov = find_provider(self.backend, ref)
            if prov is None:
                if provider_rules.is_uuid_like(ref):
                    raise allocation_rules.unknown_provider_error(provider_rules.normalize_uuid(ref))
                raise BadRequest("Allocation for resource provider named '%s' that does not exist."
                                 % ref)
            self.providers[ref] = prov
        return self.providers[ref]


def _consumer_plan(backend, req, lookup, with_type):
    """Step 1, one consumer: its allocations read, what the request wants of it, whether it changes."""
    consumer = req['consumer_uuid']
    before = consumer_view(backend.get_allocations(consumer))
    desired = {}
    for entry in req['allocations']:
        prov = lookup(entry['resource_provider'])
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
    return {
        'consumer': consumer, 'before': before, 'have': have, 'desired': desired,
        'project_id': project_id, 'user_id': user_id, 'consumer_type': consumer_type,
        'changed': changed,
    }


def _predicted_views(plans, writes, providers):
    """Step 3, predict: each consumer's view after the write, with the predicted generations:
    every provider in the NEW allocation set of a written consumer gets +1 once per
    transaction; a provider only left behind does not."""
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
    return consumers


def _write_allocations(backend, writes, multi, with_type):
    """Step 4, apply: one ``PUT /allocations/{c}``, or one ``POST /allocations`` of every write."""
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
                invs[rp] = normalized_inventories(backend.get_inventories(rp)['inventories'])
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
