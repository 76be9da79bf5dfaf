# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan's step 6 (:mod:`.planner`): every holder of a moved class gets it on the children.

By a kind's own rule (:func:`.kinds.registry.taker`: MEM_ENCRYPTION_CONTEXT all to the AMD SEV
child), else by the device ownership (:func:`.layout.owned_units`), else, with the ``pack``
policy, packed first-fit over the children sorted by name, respecting capacity, min/max unit and
step size (rules/inventory.py's rules); with ``strict`` what ownership cannot place refuses the
plan (:class:`.kinds.common.PlanError`, naming the consumers).  :func:`reassign` works on the
planner's plan state (``work``): it sets ``used``, ``used_before``, ``new_allocs`` and
``assignments``.  The policies are named here; the planner re-exports them.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from . import layout as _layout
from .kinds import registry as _kinds
from .kinds.common import PlanError, add as _add, amount_on as _amount_on
from ..rules import allocations as allocation_rules
from ..rules import inventory as inventory_rules
from .. import tree as _tree

POLICY_STRICT = 'strict'
POLICY_PACK = 'pack'
POLICIES = (POLICY_STRICT, POLICY_PACK)


def reassign(work):
    """Step 6: every consumer holding a moved class on the root gets it on the children: by a
    kind's own rule (:func:`kinds.registry.taker`), else by the device ownership, else (``pack``) packed;
    the consumers a kind rewrites (``Kind.consumers``) are copied for its ``settle`` step."""
    current, root_uuid = work.current, work.root_uuid
    work.used = _tree.sum_allocations(current)
    work.used_before = copy.deepcopy(work.used)
    extra = set()
    for kind in _kinds.KINDS:
        extra.update(kind.consumers(work))
    touched = [c for c in current
               if any(_amount_on(current[c], root_uuid, rc) for rc in work.moved) or c in extra]
    work.new_allocs = dict((c, copy.deepcopy(current[c])) for c in touched)
    unmapped = []
    to_pack = []
    for consumer in touched:
        allocs = work.new_allocs[consumer]
        root_entry = allocs.get(root_uuid, {'resources': {}})
        for rc in work.moved:
            amount = root_entry['resources'].pop(rc, 0)
            if not amount:
                continue
            work.used[root_uuid][rc] -= amount
            left = _assign(work, consumer, rc, amount, allocs)
            if left is not None:
                (to_pack if work.policy == POLICY_PACK else unmapped).append(left)
        if not root_entry['resources']:
            allocs.pop(root_uuid, None)
    if unmapped:
        raise PlanError(
            'cannot assign moved resources to devices by ownership: %s. Nothing was changed. '
            'Fix the device report (guest domain XML / mdevs), give explicit ownership, or '
            'choose the pack policy.'
            % '; '.join('consumer %s: %d %s (%s)' % (c, n, rc, why) for c, rc, n, why, _t, _p in unmapped),
            consumers=[c for c, _rc, _n, _w, _t, _p in unmapped])
    for consumer, rc, amount, reason, targets, partial in to_pack:
        _pack_rest(work, consumer, rc, amount, reason, targets, partial)


def _assign(work, consumer, rc, amount, allocs):
    """One consumer's ``amount`` of a moved ``rc``: by a kind's rule or by ownership.  None when
    placed; else ``(consumer, rc, amount, why, targets, partial)`` for the pack policy (what
    ownership does place stays: ``partial``) or the refusal."""
    targets = [c for c in work.children if _child_rc(c, rc) in c['inventories']]
    taker = _kinds.taker(targets, rc)
    if taker is not None:
        # nova's rule for this class: every allocation of the root goes to that child
        # (MEM_ENCRYPTION_CONTEXT -> <node>_amd_sev, whatever the guest's model)
        _add(allocs, work.used, taker['uuid'], rc, amount)
        seen = taker['guest_models'].get(consumer, 'amd-sev')
        if seen != 'amd-sev':
            work.warnings.append('consumer %s runs as %s (domain <launchSecurity>) but holds %s on '
                                 'the root: nova 34 moves every such allocation to %s, and so does '
                                 'this reshape' % (consumer, seen, rc, taker['name']))
        work.assignments.setdefault(consumer, {})[rc] = {
            'how': 'nova-rule', 'amount': amount, 'to': {taker['name']: amount}}
        return None
    want, reason = _by_ownership(rc, amount, targets, work.ownership.get(consumer) or {}, allocs)
    if reason is None:
        for child_uuid, n in want.items():
            _add(allocs, work.used, child_uuid, _child_rc(work.child_by_uuid[child_uuid], rc), n)
        work.assignments.setdefault(consumer, {})[rc] = {
            'how': 'ownership', 'amount': amount, 'to': _named_units(want, work.child_by_uuid)}
        return None
    if work.policy != POLICY_PACK:
        return (consumer, rc, amount, reason, targets, {})
    # what ownership does place stays there; the rest is packed
    partial = want if sum(want.values()) < amount else {}
    for child_uuid, n in partial.items():
        _add(allocs, work.used, child_uuid, _child_rc(work.child_by_uuid[child_uuid], rc), n)
    return (consumer, rc, amount, reason, targets, partial)


def _pack_rest(work, consumer, rc, amount, reason, targets, partial):
    """The pack policy: what ownership left of a consumer's ``rc``, packed first-fit."""
    allocs = work.new_allocs[consumer]
    placed = _pack(consumer, rc, amount - sum(partial.values()), targets, allocs, work.used, work.inv_after)
    for child_uuid, n in placed.items():
        _add(allocs, work.used, child_uuid, _child_rc(work.child_by_uuid[child_uuid], rc), n)
    to = dict(partial)
    for child_uuid, n in placed.items():
        to[child_uuid] = to.get(child_uuid, 0) + n
    work.assignments.setdefault(consumer, {})[rc] = {
        'how': 'ownership+pack' if partial else 'pack', 'amount': amount, 'reason': reason,
        'to': _named_units(to, work.child_by_uuid)}


def _child_rc(child, rc):
    """The class a child takes a root class ``rc`` as (a custom-class GPU takes VGPU as its class)."""
    return (child.get('moves_from') or {}).get(rc, rc)


def _named_units(per_uuid, child_by_uuid):
    return dict(sorted((child_by_uuid[u]['name'], n) for u, n in per_uuid.items()))


def _by_ownership(rc, amount, targets, owned, allocs):
    """({child uuid: units} ownership places, None) or (what it places, why that is not all)."""
    if not owned:
        return {}, 'no device ownership known for it'
    want = {}
    for child in targets:
        units = _layout.owned_units(owned.get(child['device'], 0), rc)
        already = _amount_on(allocs, child['uuid'], _child_rc(child, rc))
        if units - already > 0:
            want[child['uuid']] = units - already
    total = sum(want.values())
    if total != amount:
        devices = ', '.join('%s=%s' % (d, n) for d, n in sorted(owned.items())) or 'none'
        return want, ('it owns %d unit(s) of %s on the devices of this layout (%s) but holds %d '
                      'on the root' % (total, rc, devices, amount))
    return want, None


def _pack(consumer, rc, amount, targets, allocs, used, inv_after):
    """Deterministic first-fit over ``targets`` sorted by name (whole amount first, then split)."""
    targets = sorted(targets, key=lambda c: c['name'])

    def room(child, extra):
        crc = _child_rc(child, rc)
        inv = inv_after[child['uuid']][crc]
        mine = _amount_on(allocs, child['uuid'], crc) + extra
        if allocation_rules.check_amount(inv, mine, crc, child['uuid']):
            return False
        cur = used.get(child['uuid'], {}).get(crc, 0)
        return cur + extra <= inventory_rules.capacity(inv)

    for child in targets:
        if room(child, amount):
            return {child['uuid']: amount}
    placed = {}
    left = amount
    crc_of = dict((c['uuid'], _child_rc(c, rc)) for c in targets)
    for child in targets:
        crc = crc_of[child['uuid']]
        inv = inv_after[child['uuid']][crc]
        cur = used.get(child['uuid'], {}).get(crc, 0)
        mine = _amount_on(allocs, child['uuid'], crc)
        take = min(left, inventory_rules.capacity(inv) - cur, inv['max_unit'] - mine)
        while take > 0 and not room(child, take):
            take -= 1
        if take > 0:
            placed[child['uuid']] = take
            used.setdefault(child['uuid'], {})
            used[child['uuid']][crc] = cur + take
            left -= take
            if not left:
                break
    for child_uuid, n in placed.items():      # undo the provisional usage; caller adds it
        used[child_uuid][crc_of[child_uuid]] -= n
    if left:
        raise PlanError('pack policy: consumer %s needs %d %s but only %d fit on the children %s '
                        '(capacity, max_unit, step_size). Nothing was changed.'
                        % (consumer, amount, rc, amount - left,
                           ', '.join(c['name'] for c in targets) or '(none carry it)'),
                        consumers=[consumer])
    return placed
