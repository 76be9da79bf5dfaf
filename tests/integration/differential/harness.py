# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Record a scenario's outcomes on one backend, in a form two backends can compare.

A scenario is a function ``scenario(ctx)`` that drives ``ctx.b`` (a Backend)
through ``ctx.do(label, func, *args)``.  Every step's outcome is recorded:
``{"ok": <result>}`` or ``{"error": [status, code, ErrorType]}``.  The real
server is shared by the whole test session, so a scenario never uses a fixed
uuid or name: ``ctx.uuid(sym)``, ``ctx.name(sym)``, ``ctx.rc(sym)`` and
``ctx.trait(sym)`` make fresh ones and remember the symbol, and
:meth:`Context.normalize` maps every occurrence back to ``<sym>`` before
comparing.  At the end :meth:`Context.snapshot` reads the full state of every
provider and consumer the scenario touched.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import uuid as _uuid

from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import PlacementError

PROJECT = 'proj-diff'
USER = 'user-diff'


class Context(object):
    """One run of one scenario on one backend."""

    def __init__(self, backend):
        self.b = backend
        self.token = _uuid.uuid4().hex[:10]
        self.steps = []
        self._symbols = {}          # real string -> symbol
        self.providers = []         # provider symbols, in creation order
        self.consumers = []         # consumer symbols
        self._by_symbol = {}

    # -- fresh identifiers ------------------------------------------------
    def _remember(self, real, sym):
        if sym in self._by_symbol:
            return self._by_symbol[sym]
        self._symbols[real] = sym
        self._by_symbol[sym] = real
        return real

    def uuid(self, sym):
        """A fresh uuid standing for ``sym`` (the same uuid on every call with ``sym``)."""
        if sym in self._by_symbol:
            return self._by_symbol[sym]
        return self._remember(str(_uuid.uuid4()), sym)

    def rp(self, sym):
        """The uuid of provider ``sym`` (remembered for the final snapshot)."""
        if sym not in self.providers:
            self.providers.append(sym)
        return self.uuid(sym)

    def consumer(self, sym):
        if sym not in self.consumers:
            self.consumers.append(sym)
        return self.uuid(sym)

    def name(self, sym):
        key = 'name:' + sym
        if key in self._by_symbol:
            return self._by_symbol[key]
        return self._remember('d%s-%s' % (self.token, sym), key)

    def rc(self, sym):
        key = 'rc:' + sym
        if key in self._by_symbol:
            return self._by_symbol[key]
        return self._remember('CUSTOM_D%s_%s' % (self.token.upper(), sym.upper()), key)

    def trait(self, sym):
        key = 'trait:' + sym
        if key in self._by_symbol:
            return self._by_symbol[key]
        return self._remember('CUSTOM_T%s_%s' % (self.token.upper(), sym.upper()), key)

    # -- steps ------------------------------------------------------------
    def do(self, label, func, *args, **kwargs):
        """Run one operation and record its outcome; returns the raw result (or None)."""
        try:
            result = func(*args, **kwargs)
        except PlacementError as exc:
            self.steps.append((label, {'error': [exc.status, exc.code, type(exc).__name__]}))
            return None
        self.steps.append((label, {'ok': self.normalize(_answer_only(result))}))
        return result

    def note(self, label, value):
        """Record a value computed by the scenario (already backend-neutral or normalizable)."""
        self.steps.append((label, {'value': self.normalize(value)}))

    # -- shorthand for common operations -----------------------------------
    def create(self, sym, parent=None, label=None):
        return self.do(label or 'create %s' % sym, self.b.create_provider, self.name(sym), uuid=self.rp(sym),
                       parent_provider_uuid=self.rp(parent) if parent else None)

    def gen(self, sym):
        return self.b.get_provider(self.rp(sym))['generation']

    def set_inv(self, sym, inventories, label=None, generation=None):
        gen = self.gen(sym) if generation is None else generation
        return self.do(label or 'inventories %s' % sym, self.b.set_inventories, self.rp(sym), gen, inventories)

    def alloc_body(self, allocations, generation, project=PROJECT, user=USER, consumer_type='INSTANCE'):
        return {
            'allocations': dict((self.rp(rp), {'resources': dict(res)}) for rp, res in allocations.items()),
            'project_id': project,
            'user_id': user,
            'consumer_generation': generation,
            'consumer_type': consumer_type,
        }

    def cgen(self, csym):
        return self.b.get_allocations(self.consumer(csym)).get('consumer_generation')

    def put(self, csym, allocations, generation='current', label=None, **kw):
        if generation == 'current':
            generation = self.cgen(csym)
        return self.do(label or 'put allocations %s' % csym, self.b.put_allocations, self.consumer(csym),
                       self.alloc_body(allocations, generation, **kw))

    # -- normalization ----------------------------------------------------
    def _norm_str(self, text):
        if text in self._symbols:
            return '<%s>' % self._symbols[text]
        return text

    def normalize(self, value):
        if isinstance(value, dict):
            return dict((self._norm_str(k) if isinstance(k, str) else k, self.normalize(v))
                        for k, v in value.items())
        if isinstance(value, (list, tuple)):
            return [self.normalize(v) for v in value]
        if isinstance(value, str):
            return self._norm_str(value)
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value

    # -- final state --------------------------------------------------------
    def snapshot(self, light=False):
        """Everything the scenario's providers and consumers look like at the end.

        ``light`` leaves out traits, aggregates and the tree listing (for callers
        that compare those on every step already).
        """
        state = {'providers': {}, 'consumers': {}}
        for sym in self.providers:
            uuid = self._by_symbol[sym]
            try:
                prov = self.b.get_provider(uuid)
            except PlacementError as exc:
                state['providers'][sym] = {'error': [exc.status, exc.code]}
                continue
            entry = {'provider': prov}
            entry['inventories'] = self.b.get_inventories(uuid)
            entry['usages'] = self.b.get_usages(uuid)
            entry['allocations'] = self.b.get_provider_allocations(uuid)
            if light:
                state['providers'][sym] = self.normalize(entry)
                continue
            # Sort AFTER normalizing: raw uuids and names differ between the backends.
            traits = self.b.get_provider_traits(uuid)
            entry['traits'] = {'generation': traits['resource_provider_generation'],
                               'traits': sorted(self.normalize(traits['traits']))}
            aggs = self.b.get_aggregates(uuid)
            entry['aggregates'] = {'generation': aggs['resource_provider_generation'],
                                   'aggregates': sorted(self.normalize(aggs['aggregates']))}
            tree = self.b.list_providers(in_tree=uuid)
            entry['tree'] = sorted(self.normalize(p)['uuid'] for p in tree)
            state['providers'][sym] = self.normalize(entry)
        for sym in self.consumers:
            state['consumers'][sym] = self.normalize(self.b.get_allocations(self._by_symbol[sym]))
        return state

    def record(self):
        return {'steps': self.steps, 'state': self.snapshot()}


def run(scenario, backend):
    ctx = Context(backend)
    scenario(ctx)
    return ctx.record()


def first_difference(left, right, path='$'):
    """A short text naming the first place two records differ (None when equal)."""
    if type(left) is not type(right) and not (isinstance(left, (int, float)) and isinstance(right, (int, float))):
        return '%s: %r != %r' % (path, left, right)
    if isinstance(left, dict):
        for key in sorted(set(left) | set(right), key=str):
            if key not in left or key not in right:
                return '%s: key %r only on the %s side' % (path, key, 'left' if key in left else 'right')
            diff = first_difference(left[key], right[key], '%s.%s' % (path, key))
            if diff:
                return diff
        return None
    if isinstance(left, (list, tuple)):
        for idx, (a, b) in enumerate(zip(left, right)):
            diff = first_difference(a, b, '%s[%d]' % (path, idx))
            if diff:
                return diff
        if len(left) != len(right):
            return '%s: lengths %d != %d' % (path, len(left), len(right))
        return None
    if left != right:
        return '%s: %r != %r' % (path, left, right)
    return None


def compare(real, embedded, real_label='real'):
    """Assert-friendly comparison: returns None, or a message with both records' context.

    ``real_label`` names the real side in the message (e.g. ``real/mariadb``).
    """
    width = max(len(real_label), len('embedded')) + 1
    for idx, (a, b) in enumerate(zip(real['steps'], embedded['steps'])):
        if a != b:
            return ('step %d differs:\n  %s %s\n  %s %s'
                    % (idx, (real_label + ':').ljust(width), json.dumps(a, sort_keys=True, default=str),
                       'embedded:'.ljust(width), json.dumps(b, sort_keys=True, default=str)))
    if len(real['steps']) != len(embedded['steps']):
        return 'different number of steps: %s %d, embedded %d' % (
            real_label, len(real['steps']), len(embedded['steps']))
    diff = first_difference(real['state'], embedded['state'], '$.state')
    if diff:
        return 'final state differs (left = %s, right = embedded): %s' % (real_label, diff)
    return None


def _answer_only(result):
    """A POST /reshaper answer without its request id: transport metadata (Placement's
    ``x-openstack-request-id``, random per request; the embedded store has none), not behaviour."""
    if isinstance(result, dict) and set(result) == {'status', 'request_id'}:
        return {'status': result['status']}
    return result
