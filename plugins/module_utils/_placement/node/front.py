# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The front door of a node's plans: a device report (discovery), or explicit move records
(moves.py, issue 16); both end in :func:`planner.plan_reshape`.

A :class:`PlanFront` is made once per call (a pass, a verification): the device report is
checked once (:meth:`PlanFront.check`, :func:`discovery.check_report`), and the ownership of the
report derived once; the layout is built once per tree state (a read of the node, or a read plus the
children a pass just created): the layout :func:`reading.read_node` builds to choose the
consumers it reads in full is the layout the plan of that read is computed from.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from . import layout as _layout
from . import moves as _moves
from . import planner
from .discover.report_check import check_report as _check_report
from .. import resources as ops


class PlanFront(object):
    """``source`` names what the plan comes from: ``devices``, ``layout_options``, ``policy``,
    ``ownership`` (the operator's overrides), ``moves`` and ``consumers`` (a request object)."""

    def __init__(self, backend, source):
        self.backend = backend
        self.devices, self.layout_options = source.devices, source.layout_options
        self.policy, self.moves, self.consumers = source.policy, source.moves, source.consumers
        self.overrides = source.ownership
        self.owners = None      # the report's ownership (with the overrides), derived once
        self._built = None      # (the providers of the tree state, (layout, ownership)) last built

        self.checked = False

    def check(self):
        """Check the device report (its one check in this call); at the first layout if not before.
        Move records are checked with their layout (moves.py)."""
        if self.moves is None and not self.checked:
            _check_report(self.devices)
            self.checked = True

    def lookup(self, ref):
        return ops.find_provider(self.backend, ref)

    def layout(self, state, root_uuid):
        """``(layout, ownership)`` of the tree state ``state``, built once per state: a state
        sharing the providers of the last one built from (a read's partial and full states)
        gets the same."""
        providers = state['providers']
        if self._built is not None and self._built[0] is providers:
            return self._built[1]
        self.check()
        if self.moves is not None:
            built = _moves.layout_from_moves(state, root_uuid, self.moves, consumers=self.consumers,
                                             policy=self.policy, lookup=self.lookup)
        else:
            lay = planner.layout_of_checked(state, root_uuid, self.devices, self.layout_options)
            if self.owners is None:
                self.owners = _layout.merge_ownership(_layout.ownership_of_report(self.devices), self.overrides)
            built = (lay, self.owners)
        self._built = (providers, built)
        return built

    def layout_on(self, root_uuid):
        """``layout(state)`` for :func:`reading.read_node` (which chooses from it the consumers to read in full)."""
        return lambda state: self.layout(state, root_uuid)[0]

    def plan(self, state, root_uuid, context):
        """The plan of ``state`` (a :class:`planner.PlanContext` says the rest)."""
        lay, owners = self.layout(state, root_uuid)
        if self.moves is not None:
            return _moves.plan_of_moves_layout(state, root_uuid, lay, owners, self.policy, context)
        instances = (self.devices or {}).get('instances')
        return planner.plan_reshape(state, root_uuid, lay, owners, policy=self.policy, context=context.replace(
            instances=None if instances is None else list(instances), devices=self.devices))
