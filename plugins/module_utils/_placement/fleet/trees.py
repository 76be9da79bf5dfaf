# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The provider trees of the fleet report: a node's tree reduced to what the report draws, where
each consumer's allocations moved between two trees, the tree a plan would produce (check mode),
whether two trees differ, what a tree's consumers hold outside it.

Every tree is read through :class:`.tree.ProviderTree`, leniently: the report shows a malformed
record as far as it goes.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ..journal import planned_state
from ..tree import ProviderTree


def normalize_tree(tree):
    """Reduce a provider tree to what the report draws.

    Returns ``{"providers": {uuid: {"uuid", "name", "parent", "inventories",
    "usages", "traits"}}, "allocations": {consumer: {rp: {RC: n}}}}`` with every
    inventory record completed with Placement's defaults.  ``None`` gives an
    empty tree.  The tree is read through :class:`.tree.ProviderTree`, leniently
    (``strict=False``): a malformed record is shown as far as it goes, never refused.
    """
    view = ProviderTree.of(tree or {})
    providers = {}
    for uuid in view.providers:
        providers[uuid] = {
            'uuid': uuid,
            'name': view.name(uuid),
            'parent': view.parent(uuid),
            'inventories': view.inventory(uuid, strict=False),
            'usages': dict(view.usages(uuid)),
            'traits': view.traits(uuid),
        }
    allocations = {}
    for consumer in view.allocation_bodies:
        allocations[consumer] = dict((rp, entry['resources'])
                                     for rp, entry in view.allocations(consumer, strict=False).items())
    return {'providers': providers, 'allocations': allocations}


def provider_tree(tree):
    """The :class:`.tree.ProviderTree` of a normalized tree (:func:`normalize_tree`'s shape, as the
    report data carries it), through which render.py walks it: roots, children, the depth-first
    order and the usages.  A ProviderTree is returned as it is."""
    if isinstance(tree, ProviderTree):
        return tree
    providers = dict((uuid, {'uuid': uuid, 'name': prov.get('name'), 'parent_provider_uuid': prov.get('parent'),
                             'inventories': prov.get('inventories'), 'usages': prov.get('usages'),
                             'traits': prov.get('traits')})
                     for uuid, prov in (tree.get('providers') or {}).items())
    allocations = dict((consumer, {'allocations': dict((rp, {'resources': resources}) for rp, resources in allocs.items())})
                       for consumer, allocs in (tree.get('allocations') or {}).items())
    return ProviderTree({'providers': providers, 'allocations': allocations})


def consumer_moves(before, after):
    """Where each consumer's allocations moved between two normalized trees.

    Returns ``[{"consumer", "resource_class", "from": [[rp, n]], "to": [[rp, n]]}]``
    sorted by consumer and class: per class, the amounts a consumer no longer
    holds on a provider (``from``) and the amounts it newly holds (``to``).
    Consumers that appear in only one of the trees are compared against an
    empty set (created or removed).
    """
    moves = []
    consumers = set(before['allocations']) | set(after['allocations'])
    for consumer in sorted(consumers):
        old = before['allocations'].get(consumer, {})
        new = after['allocations'].get(consumer, {})
        classes = set()
        for allocs in (old, new):
            for resources in allocs.values():
                classes.update(resources)
        for rc in sorted(classes):
            gone, came = [], []
            for rp in sorted(set(old) | set(new)):
                delta = new.get(rp, {}).get(rc, 0) - old.get(rp, {}).get(rc, 0)
                if delta < 0:
                    gone.append([rp, -delta])
                elif delta > 0:
                    came.append([rp, delta])
            if gone or came:
                moves.append({'consumer': consumer, 'resource_class': rc, 'from': gone, 'to': came})
    return moves


def moved_counts(moves):
    """``{"consumers", "allocations"}`` that ``moves`` (:func:`consumer_moves`) move."""
    consumers = set()
    allocations = 0
    for move in moves:
        consumers.add(move['consumer'])
        allocations += len(move['to'])
    return {'consumers': len(consumers), 'allocations': allocations}


def apply_plan(state, plan):
    """The tree a reshape plan would produce, for a check-mode (plan) report
    (:func:`..journal.planned_state`, where a check-mode journal is computed)."""
    return planned_state(state, plan)


def trees_differ(before, after):
    """Whether two normalized trees differ in providers, inventories, traits or allocations."""
    if set(before['providers']) != set(after['providers']):
        return True
    for uuid, prov in before['providers'].items():
        other = after['providers'][uuid]
        if prov['inventories'] != other['inventories'] or prov['traits'] != other['traits']:
            return True
        if prov.get('parent') != other.get('parent'):
            return True
    return before['allocations'] != after['allocations']


def external_holdings(tree):
    """{rp: {RC: n}} the tree's consumers hold on providers outside the tree."""
    out = {}
    for allocs in tree['allocations'].values():
        for rp, resources in allocs.items():
            if rp in tree['providers']:
                continue
            slot = out.setdefault(rp, {})
            for rc, n in resources.items():
                slot[rc] = slot.get(rc, 0) + n
    return out
