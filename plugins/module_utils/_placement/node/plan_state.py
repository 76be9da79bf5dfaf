# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The state of one plan as it is computed: the API a reshape kind programs against.

:func:`planner.plan_reshape` builds one :class:`PlanState` per plan and hands it, step by
step, to every kind of :data:`kinds.registry.KINDS` (docs/architecture.md, "the plan's
steps").  What a kind may read and what it may change:

Read only (set by the planner before the kinds' hooks run)
    ``tree``          the :class:`..tree.ProviderTree` the plan reads;
    ``root_uuid``     the root provider's uuid (normalised), ``root`` its record;
    ``layout``        the layout (:func:`layout.build_layout`);
    ``ownership``     ``{consumer: {device: units}}``; ``policy`` the ownership policy;
    ``foreign``       the providers outside the tree the consumers use;
    ``root_inv``      the root's inventories as read; ``moved`` the classes leaving the root;
    ``children``      the layout's children as resolved (step 1), ``child_by_uuid`` by uuid;
    ``inv_before``    every provider's inventories before the plan (step 3);
    ``current``       every consumer's allocations as read (step 3); ``names`` uuid -> name;
    ``used_before``   the usage per provider before the moves (step 6).

Changed by the steps and by the kinds' ``prepare_root`` / ``settle``
    ``inv_after``     every provider's inventories after the plan (:meth:`root_inventory_after`);
    ``new_allocs``    the consumers' allocations after the plan (:meth:`allocations_of`);
    ``used``          the usage per provider after the moves (:meth:`use`);
    ``assignments``   ``{consumer: {class: record}}``: what was moved how (:meth:`assign`);
    ``warnings``      what the plan says besides (:meth:`warn`).

A kind's own part
    :meth:`set_result` / :meth:`result`: the plan keys the kind declares in ``plan_keys``
    (copied into the plan); :meth:`remember` / :meth:`recall`: what a kind notes for itself
    between its hooks (``prepare_root`` -> ``settle``), never in the plan.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ..rules import providers as provider_rules


class PlanState(object):
    """What a plan computes, step by step (see the module docstring for who writes what)."""

    def __init__(self, tree, root_uuid, root, layout, ownership=None, policy=None, foreign=None):
        self.tree = tree
        self.root_uuid = provider_rules.normalize_uuid(root_uuid)
        self.root = root
        self.layout = layout
        self.ownership = ownership or {}
        self.policy = policy
        self.foreign = foreign or {}
        self.warnings = list(layout.get('warnings') or [])
        self.children = []
        self.child_by_uuid = {}
        self.root_inv = tree.inventory(self.root_uuid)
        self.moved = sorted(rc for rc in self.root_inv if rc in layout['classes'])
        self.inv_before = {}
        self.inv_after = {}
        self.current = {}
        self.names = {}
        self.used = {}
        self.used_before = {}
        self.new_allocs = {}
        self.assignments = {}
        self.results = {}
        self._notes = {}

    # -- what the kinds write -------------------------------------------------------------

    def warn(self, text):
        """Add a warning to the plan."""
        self.warnings.append(text)

    def root_inventory_after(self):
        """The root's inventories after the plan (a kind's ``prepare_root`` changes them in place)."""
        return self.inv_after[self.root_uuid]

    def allocations_of(self, consumer):
        """The consumer's allocations after the plan, to change in place: a copy of what it
        holds now the first time a step rewrites it."""
        return self.new_allocs.setdefault(consumer, copy.deepcopy(self.current[consumer]))

    def use(self, rp, rc, n):
        """Count ``n`` more units of ``rc`` as used on ``rp`` after the plan (``n`` < 0: fewer)."""
        used = self.used.setdefault(rp, {})
        used[rc] = used.get(rc, 0) + n

    def assign(self, consumer, rc, record):
        """Record how ``consumer``'s ``rc`` was moved (the plan's ``assignments``)."""
        self.assignments.setdefault(consumer, {})[rc] = record

    def set_result(self, key, value):
        """Set one of the plan keys a kind declares (``Kind.plan_keys``); the plan carries it."""
        self.results[key] = value

    def result(self, key, default=None):
        """A plan key a kind set (:meth:`set_result`), or ``default``."""
        return self.results.get(key, default)

    def remember(self, kind_name, value):
        """A kind's own note between its hooks (not in the plan)."""
        self._notes[kind_name] = value

    def recall(self, kind_name, default=None):
        """What :meth:`remember` noted for ``kind_name``, or ``default``."""
        return self._notes.get(kind_name, default)
