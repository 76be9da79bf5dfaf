# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading a compute node for a pass: its root provider, and its tree in full.

:func:`resolve_root` names the node's ROOT provider; :func:`read_node` reads its tree with
the consumers the plan may write in full (and the providers outside the tree they use);
:func:`with_new_providers` is a state read plus the children a pass just created.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from .. import resources as ops
from . import planner
from ..backends.base import provider_tree_state
from ..errors import NotFound


def resolve_root(backend, ref):
    """The compute node's ROOT provider, by name or uuid."""
    prov = ops.resolve_provider(backend, ref, 'Compute node root provider')
    if prov.get('parent_provider_uuid'):
        root = prov.get('root_provider_uuid')
        raise planner.PlanError('provider %s (%s) is not a root provider; its tree\'s root is %s'
                                % (prov['name'], prov['uuid'], root))
    return prov


def read_node(backend, root_uuid, known=None, layout_on=None):
    """(state, foreign): the tree in full, and what the consumers use outside it.

    ``known``: a state read earlier (see :func:`.backend.provider_tree_state`): the full
    allocations of consumers not written since are taken from it instead of read again.

    ``layout_on``: callable giving the layout to plan from a state whose consumers are
    PARTIAL bodies (their allocations on the tree, from the per-provider reads).  Then only
    the consumers the plan may write (:func:`planner.write_candidates`: those holding on the
    tree a class the layout moves or rewrites) are read in full (``GET /allocations/{c}``);
    every other consumer keeps its partial body, which the planner never writes.  A layout
    that cannot be built reads every consumer in full (the plan then fails as it would).

    ``foreign`` is ``{rp: {"name", "traits", "root_provider_uuid"}}`` for every
    provider outside the tree holding an allocation of a consumer of the tree
    (None name and no traits for one that vanished meanwhile).
    """
    def select(partial_state):
        try:
            layout = layout_on(partial_state)
        except Exception:  # pylint: disable=broad-except
            return None
        return planner.write_candidates(partial_state, root_uuid, layout)
    state = provider_tree_state(backend, root_uuid, known=known, select=select if layout_on is not None else None)
    foreign = {}
    for body in state['allocations'].values():
        for rp in body.get('allocations') or {}:
            if rp in state['providers'] or rp in foreign:
                continue
            try:
                prov = backend.get_provider(rp)
                traits = sorted(backend.get_provider_traits(rp)['traits'])
                foreign[rp] = {'name': prov['name'], 'traits': traits,
                               'root_provider_uuid': prov.get('root_provider_uuid')}
            except NotFound:
                foreign[rp] = {'name': None, 'traits': [], 'root_provider_uuid': None}
    return state, foreign


def with_new_providers(state, records):
    """``state`` (a :func:`.backend.provider_tree_state`) plus providers just created.

    ``records`` maps uuid -> the record of a provider created after ``state`` was read
    (generation, no inventory, usages or aggregates, the traits it was given), shaped
    as the tree read shapes a provider.  Nothing else in the state changes: a new
    provider has no allocations.
    """
    providers = dict(state['providers'])
    for uuid, rec in records.items():
        providers[uuid] = {
            'uuid': rec['uuid'],
            'name': rec['name'],
            'generation': rec['generation'],
            'parent_provider_uuid': rec['parent_provider_uuid'],
            'root_provider_uuid': rec['root_provider_uuid'],
            'inventories': dict(rec['inventories']),
            'usages': dict(rec['usages']),
            'traits': sorted(rec['traits']),
            'aggregates': sorted(rec['aggregates']),
        }
    return {'providers': providers, 'allocations': state['allocations']}
