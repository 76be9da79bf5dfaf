# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 40 section 3: a pass's journal compared with a diff of Placement's state read by the test
itself (independently of journal.py), on the embedded store (tests/unit) and the real Placement
(tests/integration)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.placement.upgrade.plugins.module_utils._placement import journal as _journal
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.base import provider_tree_state


def read_whole(backend, root):
    """The whole tree as Placement has it now (no ``known``: every consumer read in full)."""
    return copy.deepcopy(provider_tree_state(backend, root))


def placement_diff(before, after):
    """The figures of a journal, counted from two reads of Placement (independently of journal.py)."""
    def flat(state):
        out = {}
        for consumer, body in state['allocations'].items():
            for rp, entry in body['allocations'].items():
                for rc, n in entry['resources'].items():
                    out.setdefault((consumer, rc), {})[rp] = n
        return out

    old, new = flat(before), flat(after)
    kinds = {}
    for key in set(old) | set(new):
        was, will = old.get(key, {}), new.get(key, {})
        if was == will:
            continue
        if sum(was.values()) == sum(will.values()):
            kinds[key] = 'moved'
        else:
            kinds[key] = 'created' if sum(will.values()) > sum(was.values()) else 'removed'
    converted = 0
    for (consumer, rc), kind in list(kinds.items()):
        if kind != 'removed' or new.get((consumer, rc)):
            continue
        for (other_consumer, other_rc), other_kind in list(kinds.items()):
            if (other_consumer == consumer and other_kind == 'created' and not old.get((consumer, other_rc))
                    and new[(consumer, other_rc)] == old[(consumer, rc)]):
                kinds[(consumer, rc)] = kinds[(consumer, other_rc)] = 'converted'
                converted += 1
                break
    names_before = dict((u, p['name']) for u, p in before['providers'].items())
    names_after = dict((u, p['name']) for u, p in after['providers'].items())
    both = set(names_before) & set(names_after)

    def totals(prov):
        return dict((rc, inv['total']) for rc, inv in (prov.get('inventories') or {}).items())

    inventories = 0
    for uuid in set(names_before) | set(names_after):
        then = totals(before['providers'].get(uuid, {}))
        now = totals(after['providers'].get(uuid, {}))
        inventories += sum(1 for rc in set(then) | set(now) if then.get(rc) != now.get(rc))
    return {
        'consumers_moved': len(set(c for (c, _rc), k in kinds.items() if k == 'moved')),
        'allocations_moved': sum(1 for k in kinds.values() if k == 'moved'),
        'allocations_created': sum(1 for k in kinds.values() if k == 'created'),
        'allocations_removed': sum(1 for k in kinds.values() if k == 'removed'),
        'allocations_converted': converted,
        'providers_created': len(set(names_after) - set(names_before)),
        'providers_removed': len(set(names_before) - set(names_after)),
        'inventories_changed': inventories,
        'traits_changed': sum(1 for u in both if set(before['providers'][u].get('traits') or ())
                              != set(after['providers'][u].get('traits') or ())),
    }


def assert_journal_is_the_diff(result, before, after, mode, left=0):
    journal = result['journal']
    assert journal['mode'] == mode, journal
    figures = journal['figures']
    assert figures == _journal.figures(journal)
    want = dict(placement_diff(before, after), providers_left=left)
    assert figures == want, (figures, want, journal)
    return figures


def placement_states(db, fleet):
    """``{provider name: its whole tree}`` of every node of a fleet (tools/simfleet.py) in the embedded
    store ``db`` (the fleet's, or a rehearsal's copy of it), read by the test."""
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.node.reshaper import resolve_root
    backend = EmbeddedBackend(db)
    try:
        return dict((node['provider'], read_whole(backend, resolve_root(backend, node['provider'])['uuid']))
                    for node in fleet['nodes'])
    finally:
        backend.close()


def assert_figures_are_placements_diff(summary, before, after):
    """Every node's figures (and the totals) in a report's summary are the diff of Placement's state
    before and after the run (issue 40 section 3), read by the test."""
    totals = {}
    for node in summary['nodes']:
        want = dict(placement_diff(before[node['provider']], after[node['provider']]), providers_left=0)
        assert node['figures'] == want, (node['node'], node['figures'], want)
        for key, value in want.items():
            totals[key] = totals.get(key, 0) + value
    assert summary['totals']['figures'] == totals, (summary['totals']['figures'], totals)
    assert any(totals.values()), totals
