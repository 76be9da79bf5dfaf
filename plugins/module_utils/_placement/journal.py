# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The journal of one pass's writes: what a reshape wrote, a check-mode plan would write, a
rollback restored or left behind (issue 40, section 3: every figure from what was written).

A journal is plain data (JSON-serialisable, stored in the node's record) built by
:func:`journal_of` where the writes happen (node/reshaper.py) from the tree the writes were
computed on and the tree read back after them (the tree a plan would produce, in check mode),
plus what the pass says it did outside that diff (children it created, traits it put, children
it removed or left).  Its ``mode`` says in which words it is told (:data:`WORDS`):

* ``would``: check mode, nothing was written;
* ``did``: a reshape (or a trait-only update) that was applied;
* ``restored``: a rollback that was applied: what it restored, and the children it ``left``
  behind (empty, with ``remove_children`` false).

Every figure the reports show of a node, and the fleet's totals, are :func:`figures` of its
journal, said by :func:`figure_text` / :func:`journal_lines` in the words of its mode; nothing
else counts.

Allocations are told per consumer and resource class: ``moved`` (the consumer holds the same
amount of the class, on other providers), ``created`` (it holds more: PCI healing), ``removed``
(it holds less), ``converted`` (one class given up and another taken on the same provider, the
same amount: the VCPU -> PCPU conversion of pinned guests).

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

MODE_WOULD = 'would'
MODE_DID = 'did'
MODE_RESTORED = 'restored'
MODES = (MODE_WOULD, MODE_DID, MODE_RESTORED)

#: the figures of a journal, in the order the reports show them
FIGURES = ('consumers_moved', 'allocations_moved', 'allocations_created', 'allocations_removed',
           'allocations_converted', 'providers_created', 'providers_removed', 'providers_left',
           'inventories_changed', 'traits_changed')

#: each figure's words per mode (None: the figure is not said in that mode, it is always 0)
WORDS = {
    'consumers_moved': {MODE_WOULD: 'consumers to move', MODE_DID: 'consumers moved',
                        MODE_RESTORED: 'consumers restored'},
    'allocations_moved': {MODE_WOULD: 'allocations to move', MODE_DID: 'allocations moved',
                          MODE_RESTORED: 'allocations moved back'},
    'allocations_created': {MODE_WOULD: 'allocations to create', MODE_DID: 'allocations created',
                            MODE_RESTORED: 'allocations restored'},
    'allocations_removed': {MODE_WOULD: 'allocations to remove', MODE_DID: 'allocations removed',
                            MODE_RESTORED: 'allocations removed'},
    'allocations_converted': {MODE_WOULD: 'allocations to convert', MODE_DID: 'allocations converted',
                              MODE_RESTORED: 'allocations converted back'},
    'providers_created': {MODE_WOULD: 'child providers to create', MODE_DID: 'child providers created',
                          MODE_RESTORED: None},
    'providers_removed': {MODE_WOULD: 'child providers to remove', MODE_DID: 'child providers removed',
                          MODE_RESTORED: 'child providers removed'},
    'providers_left': {MODE_WOULD: None, MODE_DID: None,
                       MODE_RESTORED: 'child providers left behind (empty)'},
    'inventories_changed': {MODE_WOULD: 'inventories to change', MODE_DID: 'inventories changed',
                            MODE_RESTORED: 'inventories restored'},
    'traits_changed': {MODE_WOULD: 'providers whose traits would change', MODE_DID: 'providers whose traits changed',
                       MODE_RESTORED: 'providers whose traits were restored'},
}


def _providers(state):
    return (state or {}).get('providers') or {}


def _name(uuid, *states):
    for state in states:
        prov = _providers(state).get(uuid)
        if prov and prov.get('name'):
            return str(prov['name'])
    return str(uuid)


def _holdings(state):
    """``{consumer: {rc: {rp: n}}}`` of a tree state (backend.provider_tree_state's shape)."""
    out = {}
    for consumer, body in ((state or {}).get('allocations') or {}).items():
        per = out.setdefault(consumer, {})
        for rp, entry in ((body or {}).get('allocations') or {}).items():
            for rc, amount in ((entry or {}).get('resources') or {}).items():
                if amount:
                    per.setdefault(rc, {})[rp] = per.setdefault(rc, {}).get(rp, 0) + int(amount)
    return out


def _inventory_totals(prov):
    return dict((rc, (rec or {}).get('total')) for rc, rec in ((prov or {}).get('inventories') or {}).items())


def journal_of(before, after, mode, created=(), removed=(), left=(), traits=()):
    """The journal of the writes that took ``before`` to ``after`` (tree states), told in ``mode``.

    ``created`` / ``removed`` / ``left``: names of the children the pass created (already in
    ``before`` when it was read after they were made), removed, or left behind empty;
    ``traits``: ``[{"provider", "added", "removed"}]`` the pass put before ``before`` was read
    (node/reshaper.py's ``traits_written``).  A provider only in ``after`` is created, one only
    in ``before`` removed, whatever the lists say.
    """
    if mode not in MODES:
        raise ValueError('journal mode %r is not one of %s' % (mode, ', '.join(MODES)))
    old, new = _providers(before), _providers(after)
    made = set(str(c) for c in created)
    made.update(_name(u, after) for u in new if u not in old)
    gone = set(str(c) for c in removed)
    gone.update(_name(u, before) for u in old if u not in new)
    inventories = []
    for uuid in sorted(set(old) | set(new), key=lambda u: _name(u, before, after)):
        then, now = _inventory_totals(old.get(uuid)), _inventory_totals(new.get(uuid))
        for rc in sorted(set(then) | set(now)):
            if then.get(rc) != now.get(rc):
                inventories.append({'provider': _name(uuid, before, after), 'resource_class': rc,
                                    'before': then.get(rc), 'after': now.get(rc)})
    trait_changes = {}
    for item in traits or ():
        slot = trait_changes.setdefault(str(item.get('provider') or item.get('uuid') or '?'),
                                        {'added': set(), 'removed': set()})
        slot['added'].update(str(t) for t in item.get('added') or ())
        slot['removed'].update(str(t) for t in item.get('removed') or ())
    for uuid in set(old) & set(new):
        then, now = set(old[uuid].get('traits') or ()), set(new[uuid].get('traits') or ())
        if then != now:
            slot = trait_changes.setdefault(_name(uuid, before, after), {'added': set(), 'removed': set()})
            slot['added'].update(now - then)
            slot['removed'].update(then - now)
    allocations, conversions = _allocation_changes(before, after)
    journal = {
        'mode': mode,
        'providers': {'created': sorted(made), 'removed': sorted(gone), 'left': sorted(set(str(c) for c in left))},
        'inventories': inventories,
        'allocations': allocations,
        'conversions': conversions,
        'traits': [{'provider': p, 'added': sorted(t['added']), 'removed': sorted(t['removed'])}
                   for p, t in sorted(trait_changes.items()) if t['added'] or t['removed']],
    }
    journal['figures'] = figures(journal)
    return journal


def _allocation_changes(before, after):
    """(allocations, conversions): per consumer and class what changed (names of providers)."""
    then, now = _holdings(before), _holdings(after)
    changes = []
    for consumer in sorted(set(then) | set(now)):
        old, new = then.get(consumer, {}), now.get(consumer, {})
        for rc in sorted(set(old) | set(new)):
            was, will = old.get(rc, {}), new.get(rc, {})
            gone, came = [], []
            for rp in sorted(set(was) | set(will)):
                delta = will.get(rp, 0) - was.get(rp, 0)
                if delta < 0:
                    gone.append([rp, -delta])
                elif delta > 0:
                    came.append([rp, delta])
            if not gone and not came:
                continue
            total_then, total_now = sum(was.values()), sum(will.values())
            kind = 'moved' if total_then == total_now else ('created' if total_now > total_then else 'removed')
            changes.append({'consumer': consumer, 'resource_class': rc, 'kind': kind,
                            'from': gone, 'to': came, 'before': total_then, 'after': total_now})
    conversions = []
    for change in changes:
        if change['kind'] != 'removed' or change['after']:
            continue
        for other in changes:
            if (other['consumer'] == change['consumer'] and other['kind'] == 'created' and not other['before']
                    and other['to'] == change['from']):
                change['kind'] = other['kind'] = 'converted'
                conversions.append({'consumer': change['consumer'], 'from': change['resource_class'],
                                    'to': other['resource_class'], 'providers': [rp for rp, _n in change['from']],
                                    'amount': change['before']})
                break
    names = {}
    for state in (before, after):
        for uuid in _providers(state):
            names.setdefault(uuid, _name(uuid, state))
    for change in changes:
        for side in ('from', 'to'):
            change[side] = [[names.get(rp, rp), n] for rp, n in change[side]]
    for conv in conversions:
        conv['providers'] = [names.get(rp, rp) for rp in conv['providers']]
    return changes, conversions


def figures(journal):
    """The journal's figures (:data:`FIGURES`): the numbers every report of the pass shows."""
    journal = journal or {}
    allocations = journal.get('allocations') or []
    providers = journal.get('providers') or {}
    moved = [a for a in allocations if a.get('kind') == 'moved']
    return {
        'consumers_moved': len(set(a['consumer'] for a in moved)),
        'allocations_moved': len(moved),
        'allocations_created': sum(1 for a in allocations if a.get('kind') == 'created'),
        'allocations_removed': sum(1 for a in allocations if a.get('kind') == 'removed'),
        'allocations_converted': len(journal.get('conversions') or []),
        'providers_created': len(providers.get('created') or []),
        'providers_removed': len(providers.get('removed') or []),
        'providers_left': len(providers.get('left') or []),
        'inventories_changed': len(journal.get('inventories') or []),
        'traits_changed': len(journal.get('traits') or []),
    }


def figure_text(key, mode):
    """The words of figure ``key`` in ``mode`` (None when the mode never says it)."""
    return WORDS[key][mode if mode in MODES else MODE_DID]


def figures_text(counts, mode, keep_zero=('consumers_moved', 'allocations_moved')):
    """``allocations moved 4, allocations created 2`` of a figures dict, in ``mode``'s words."""
    parts = []
    for key in FIGURES:
        words = figure_text(key, mode)
        value = (counts or {}).get(key, 0)
        if words and (value or key in keep_zero):
            parts.append('%s %d' % (words, value))
    return ', '.join(parts)


#: the sentences of :func:`journal_lines`, per mode
_LINES = {
    MODE_WOULD: {'created': 'child %s to create', 'removed': 'child %s to remove',
                 'inventory': 'inventory %s on %s to change: %s -> %s',
                 'allocation': '%s of %s to %s: %s -> %s', 'conversion': '%d %s of consumer %s to convert to %s on %s',
                 'added': 'traits to add on %s: %s', 'taken': 'traits to remove on %s: %s',
                 'moved': 'move', 'created_a': 'create', 'removed_a': 'remove'},
    MODE_DID: {'created': 'child %s created', 'removed': 'child %s removed',
               'inventory': 'inventory %s on %s changed: %s -> %s',
               'allocation': '%s of %s %s: %s -> %s', 'conversion': '%d %s of consumer %s converted to %s on %s',
               'added': 'traits added on %s: %s', 'taken': 'traits removed on %s: %s',
               'moved': 'moved', 'created_a': 'created', 'removed_a': 'removed'},
    MODE_RESTORED: {'created': 'child %s created', 'removed': 'child %s removed',
                    'inventory': 'inventory %s on %s restored: %s -> %s',
                    'allocation': '%s of %s %s: %s -> %s',
                    'conversion': '%d %s of consumer %s converted back to %s on %s',
                    'added': 'traits restored on %s: %s', 'taken': 'traits removed on %s: %s',
                    'moved': 'moved back', 'created_a': 'restored', 'removed_a': 'removed'},
}


def journal_lines(journal):
    """What the pass wrote, one sentence per write, in the words of its mode (the report's list
    under "Written by this run", "To be written (plan)", "Restored by this rollback")."""
    journal = journal or {}
    mode = journal.get('mode') if journal.get('mode') in MODES else MODE_DID
    say = _LINES[mode]
    lines = []
    providers = journal.get('providers') or {}
    for name in providers.get('created') or []:
        lines.append(say['created'] % name)
    for name in providers.get('removed') or []:
        lines.append(say['removed'] % name)
    for name in providers.get('left') or []:
        lines.append('child %s left behind (empty): the rollback with remove_children removes it' % name)
    for inv in journal.get('inventories') or []:
        lines.append(say['inventory'] % (inv['resource_class'], inv['provider'], _amount(inv['before']),
                                         _amount(inv['after'])))
    for change in journal.get('allocations') or []:
        if change['kind'] == 'converted':
            continue
        verb = say.get(change['kind'] + ('_a' if change['kind'] != 'moved' else ''), change['kind'])
        lines.append(say['allocation'] % (change['resource_class'], 'consumer %s' % change['consumer'], verb,
                                          _side(change['from']), _side(change['to'])))
    for conv in journal.get('conversions') or []:
        lines.append(say['conversion'] % (conv['amount'], conv['from'], conv['consumer'], conv['to'],
                                          ', '.join(conv['providers'])))
    for item in journal.get('traits') or []:
        if item['added']:
            lines.append(say['added'] % (item['provider'], ', '.join(item['added'])))
        if item['removed']:
            lines.append(say['taken'] % (item['provider'], ', '.join(item['removed'])))
    return lines


def _amount(value):
    return 'none' if value is None else str(value)


def _side(pairs):
    return ', '.join('%s %d' % (rp, n) for rp, n in pairs) if pairs else 'none'


def planned_state(state, plan):
    """The tree a reshape plan would produce (check mode): what a ``would`` journal is the diff to.

    ``state`` is a provider tree (backend.provider_tree_state shape), ``plan`` what the planner
    returned: every provider in ``plan["providers"]`` gets its planned inventories and traits
    (a new child is added under its parent), every consumer in ``plan["allocations"]`` its
    planned allocations, and the usages are recomputed from the allocations.
    """
    state = state or {}
    providers = {}
    for uuid, prov in (state.get('providers') or {}).items():
        providers[uuid] = dict(prov)
    for uuid, want in ((plan or {}).get('providers') or {}).items():
        prov = providers.get(uuid)
        if prov is None:
            prov = {'uuid': uuid, 'name': want.get('name') or uuid,
                    'parent_provider_uuid': want.get('parent_provider_uuid'), 'traits': []}
            providers[uuid] = prov
        prov['inventories'] = dict(want.get('inventories') or {})
        if want.get('traits') is not None:
            prov['traits'] = sorted(want['traits'])
    allocations = {}
    for consumer, body in (state.get('allocations') or {}).items():
        allocations[consumer] = body
    for consumer, body in ((plan or {}).get('allocations') or {}).items():
        allocations[consumer] = {'allocations': body.get('allocations') or {}}
    for uuid, prov in providers.items():
        usages = dict((rc, 0) for rc in prov.get('inventories') or {})
        for body in allocations.values():
            entry = (body.get('allocations') or {}).get(uuid)
            for rc, amount in ((entry or {}).get('resources') or {}).items():
                usages[rc] = usages.get(rc, 0) + amount
        prov['usages'] = usages
    return {'providers': providers, 'allocations': allocations}


def rolled_back_state(state, rplan):
    """The tree a rollback plan (rollback.plan_rollback) would produce: its inventories and
    allocations written, its children removed (check mode of a rollback)."""
    state = state or {}
    providers = dict((u, dict(p)) for u, p in (state.get('providers') or {}).items())
    for uuid, body in ((rplan or {}).get('inventories') or {}).items():
        if uuid in providers:
            providers[uuid]['inventories'] = dict((body or {}).get('inventories') or {})
    for item in (rplan or {}).get('remove_children') or ():
        providers.pop(item['uuid'], None)
    allocations = dict((state.get('allocations') or {}))
    for consumer, body in ((rplan or {}).get('allocations') or {}).items():
        allocations[consumer] = {'allocations': (body or {}).get('allocations') or {}}
    return {'providers': providers, 'allocations': allocations}
