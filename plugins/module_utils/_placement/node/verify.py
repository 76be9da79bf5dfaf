# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verification of a node's tree after a reshape, a rollback, or on demand.

Every check returns ``{"check": name, "passed": bool, "detail": text}``; a
verification is the list of them and passes when all of them pass.  States are
what :func:`backend.provider_tree_state` reads (``before`` the one the reshape
was computed from, ``after`` a fresh read), given as state dicts or as
:class:`tree.ProviderTree`; every check reads them through the tree.

Checks
    ``consumer_totals_unchanged``   every consumer's per-class totals (over all
                                    providers, in the tree or not) are the same;
    ``usage_matches_allocations``   each provider's usage equals the sum of the
                                    allocations on it;
    ``usage_within_capacity``       no usage exceeds capacity unless it already
                                    did before (inventory_rules.fits);
    ``moved_classes_gone_from_root`` the root holds no inventory of a class the
                                    layout puts on children;
    ``tree_matches_layout``         every layout child exists under the root with
                                    the planned inventory and (at least) its traits;
    ``allocations_on_owned_devices`` each moved allocation sits on the child of
                                    the device its owner uses (or where the pack
                                    policy put it);
    ``inventories_match_snapshot`` / ``allocations_match_snapshot`` (rollback, in
                                    rollback.verify_rollback with the other rollback rules:
                                    traits and aggregates are not part of a reshape and
                                    are neither restored nor compared, so nova's own
                                    trait updates, e.g. COMPUTE_STATUS_DISABLED, survive).

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from . import layout as _layout
from .kinds import registry as _kinds
from ..rules import allocations as allocation_rules
from ..rules import inventory as inventory_rules
from .. import tree as _tree

_MAX_ITEMS = 20


def _check(name, problems, ok_detail):
    if problems:
        shown = problems[:_MAX_ITEMS]
        more = len(problems) - len(shown)
        detail = '; '.join(shown) + ('; ... and %d more' % more if more else '')
        return {'check': name, 'passed': False, 'detail': detail}
    return {'check': name, 'passed': True, 'detail': ok_detail}


def passed(checks):
    return all(c['passed'] for c in checks)


def failures(checks):
    return [c for c in checks if not c['passed']]


def _tree_of(state):
    return _tree.ProviderTree.of(state)


def _names(*states):
    names = {}
    for state in states:
        if state:
            names.update(_tree_of(state).names())
    return names


# -- the generic checks ---------------------------------------------------------

def consumer_totals_unchanged(before, after, consumers=None, planned=None, also_accept=None):
    """Per-class totals of every consumer of ``before`` (or of ``consumers``) are unchanged.

    ``planned`` (``{consumer: allocations}``) names the consumers whose totals the
    plan itself changes (a GPU of a custom mdev class takes VGPU units as its class;
    nova's PCI allocation healing adds the PCI devices a guest holds): those must
    hold exactly the planned totals instead.  ``also_accept`` (``{consumer: totals}``,
    a snapshot's ``planned_totals``) are totals accepted besides ``before``'s.
    """
    before, after = _tree_of(before), _tree_of(after)
    consumers = sorted(consumers if consumers is not None else before.consumers())
    planned = planned or {}
    problems = []
    for consumer in consumers:
        if consumer in planned:
            was = allocation_rules.consumer_totals(allocation_rules.strip_allocations(planned[consumer]))
        else:
            was = allocation_rules.consumer_totals(before.allocations(consumer))
        now = allocation_rules.consumer_totals(after.allocations(consumer))
        if was != now and now != (also_accept or {}).get(consumer):
            problems.append('consumer %s %s %s, now has %s'
                            % (consumer, 'was planned to hold' if consumer in planned else 'had',
                               _fmt(was), _fmt(now) or 'nothing'))
    return _check('consumer_totals_unchanged', problems,
                  '%d consumer(s) hold the same amount of every class (or what the plan gave them)'
                  % len(consumers))


def consumers_keep_their_owner(before, after, consumers):
    """Every consumer the reshape wrote still has the project, user and consumer type it had.

    The reshape sends each consumer's project and user as read and keeps its type (1.37);
    Placement's own deadlock retry has been seen to commit a reshape without them
    (docs/reliability.md): a change here is Placement's, reported with the values."""
    before, after = _tree_of(before), _tree_of(after)
    problems = []
    for consumer in sorted(consumers):
        if not after.has_consumer(consumer) or before.is_partial(consumer) or after.is_partial(consumer):
            continue
        was, now = before.allocation_request(consumer), after.allocation_request(consumer)
        for field in ('project_id', 'user_id', 'consumer_type'):
            if field in was and field in now and was[field] != now[field]:
                problems.append('consumer %s: %s was %r, Placement now has %r (the reshape sent %r)'
                                % (consumer, field, was[field], now[field], was[field]))
    return _check('consumers_keep_their_owner', problems,
                  '%d written consumer(s) keep their project, user and type' % len(consumers))


def usage_matches_allocations(after):
    """Each provider's usages equal the sum of its allocations."""
    after = _tree_of(after)
    used = after.allocated()
    problems = []
    for uuid in after.uuids():
        reported = dict((rc, n) for rc, n in after.usages(uuid).items() if n)
        summed = dict((rc, n) for rc, n in (used.get(uuid) or {}).items() if n)
        if reported != summed:
            problems.append('%s reports usage %s but its allocations add up to %s'
                            % (after.get(uuid).get('name'), _fmt(reported) or 'none', _fmt(summed) or 'none'))
    return _check('usage_matches_allocations', problems,
                  'usage equals the sum of allocations on %d provider(s)' % len(after))


def usage_within_capacity(after, before=None):
    """No usage above capacity, unless that provider's usage of the class was already that high."""
    after = _tree_of(after)
    before = _tree_of(before)
    problems = []
    for uuid in after.uuids():
        name = after.get(uuid).get('name')
        inv = after.inventory(uuid)
        for rc, n in sorted(after.usages(uuid).items()):
            if not n:
                continue
            if rc not in inv:
                problems.append('%s has %d %s allocated and no %s inventory' % (name, n, rc, rc))
            elif not inventory_rules.fits(inv[rc], before.usage(uuid, rc), n):
                problems.append('%s uses %d %s, above its capacity %d'
                                % (name, n, rc, inventory_rules.capacity(inv[rc])))
    return _check('usage_within_capacity', problems,
                  'every usage fits its capacity (or was already above it)')


def moved_classes_gone_from_root(after, root_uuid, classes):
    after = _tree_of(after)
    left = sorted(rc for rc in after.classes(root_uuid) if rc in set(classes))
    problems = ['the root %s still has inventory of %s' % ((after.get(root_uuid) or {}).get('name'), ', '.join(left))] \
        if left else []
    return _check('moved_classes_gone_from_root', problems,
                  'the root has no inventory of %s' % (', '.join(sorted(classes)) or 'any layout class'))


def tree_matches_layout(after, root_uuid, children):
    """``children``: ``[{"name", "inventories", "traits"}]`` as planned (full records)."""
    after = _tree_of(after)
    problems = []
    for child in children:
        uuid = after.uuid_of(child['name'])
        if uuid is None:
            problems.append('child %s is missing' % child['name'])
            continue
        if after.parent(uuid) != root_uuid:
            problems.append('child %s has parent %s, not the root' % (child['name'], after.parent(uuid)))
        want = dict((rc, inventory_rules.normalize_inventory(rec, rc)) for rc, rec in child['inventories'].items())
        have = after.inventory(uuid)
        if want != have:
            problems.append('child %s has inventory %s, the layout wants %s'
                            % (child['name'], _fmt_inv(have) or 'none', _fmt_inv(want)))
        missing = sorted(set(child.get('traits') or []) - set(after.traits(uuid)))
        if missing:
            problems.append('child %s lacks trait(s) %s' % (child['name'], ', '.join(missing)))
    return _check('tree_matches_layout', problems,
                  '%d child provider(s) as the layout wants' % len(children))


def allocations_on_owned_devices(after, expected, names=None):
    """``expected``: ``{consumer: {rc: {"how", "to": {child uuid: units}}}}``.

    For every consumer and class listed, the allocation of that class on the
    children of that class must be exactly ``to`` (no units elsewhere among them).
    """
    after = _tree_of(after)
    names = names or after.names()
    problems = []
    count = 0
    for consumer in sorted(expected):
        allocs = after.allocations(consumer)
        for rc, rec in sorted(expected[consumer].items()):
            count += 1
            pool = set(rec.get('pool') or rec['to'])
            have = dict((rp, (allocs.get(rp) or {}).get('resources', {}).get(rc, 0)) for rp in pool)
            have = dict((rp, n) for rp, n in have.items() if n)
            want = dict((rp, n) for rp, n in rec['to'].items() if n)
            if have != want:
                problems.append('consumer %s holds %s of %s where its %s says %s'
                                % (consumer, _fmt_named(have, names) or 'nothing', rc,
                                   'packing' if rec.get('how') == 'pack' else 'devices',
                                   _fmt_named(want, names) or 'nothing'))
    return _check('allocations_on_owned_devices', problems,
                  '%d moved allocation(s) sit on the devices their owners use' % count)


def unowned_allocations(after, children, ownership, policy):
    """On-demand form of the ownership check, from the ownership map (no plan).

    For every consumer holding a layout class on the layout's children: a class nova
    puts on one child whatever the guest (a kind's rule, kinds.registry.taker: MEM_ENCRYPTION_CONTEXT) must be
    there in full; otherwise, with ownership known, the units on each child must equal
    the owned units; with no ownership, ``strict`` fails and ``pack`` accepts (placed by
    packing).
    Returns the expected map for :func:`allocations_on_owned_devices` plus the
    problems found while building it.
    """
    after = _tree_of(after)
    expected = {}
    problems = []
    for consumer in after.consumers():
        allocs = after.allocations(consumer)
        owned = ownership.get(consumer) or {}
        for rc in sorted(set(r for c in children for r in c['inventories'])):
            carriers = [c for c in children if rc in c['inventories'] and c.get('uuid')]
            held = sum((allocs.get(c['uuid']) or {}).get('resources', {}).get(rc, 0) for c in carriers)
            if not held:
                continue
            taker = _kinds.taker(carriers, rc)
            if taker is not None:
                # nova's rule for this class (MEM_ENCRYPTION_CONTEXT): every unit on that child
                expected.setdefault(consumer, {})[rc] = {'how': 'nova-rule', 'to': {taker['uuid']: held},
                                                         'pool': [c['uuid'] for c in carriers]}
                continue
            want = dict((c['uuid'], _layout.owned_units(owned.get(c['device'], 0), rc)) for c in carriers)
            if sum(want.values()) == held:
                pool = [c['uuid'] for c in carriers]
                expected.setdefault(consumer, {})[rc] = {'how': 'ownership', 'to': want, 'pool': pool}
            elif policy != 'pack':
                problems.append('consumer %s holds %d %s on the children but owns %d unit(s) of it '
                                'by the device report' % (consumer, held, rc, sum(want.values())))
    return expected, problems


# -- what a reshape / rollback / on-demand verification runs ----------------------

def verify_reshape(plan, before, after):
    """Checks after applying ``plan`` (computed from ``before``) on the tree read as ``after``."""
    root_uuid = plan['root']['uuid']
    before, after = _tree_of(before), _tree_of(after)
    names = _names(before, after)
    children = [{'name': c['name'], 'inventories': plan['providers'][c['uuid']]['inventories'],
                 'traits': c['traits']} for c in plan['children']]
    expected = {}
    for consumer, per_rc in plan['assignments'].items():
        final = plan['allocations'].get(consumer, {}).get('allocations') or {}
        for rc, rec in per_rc.items():
            pool = [c['uuid'] for c in plan['children'] if rc in c['inventories']]
            to = dict((u, (final.get(u) or {}).get('resources', {}).get(rc, 0)) for u in pool)
            expected.setdefault(consumer, {})[rc] = {'how': rec['how'], 'to': to, 'pool': pool}
    before_totals = dict((c, allocation_rules.consumer_totals(before.allocations(c))) for c in plan['allocations'])
    planned = dict((c, body['allocations']) for c, body in plan['allocations'].items()
                   if allocation_rules.consumer_totals(allocation_rules.strip_allocations(body['allocations'])) != before_totals[c])
    return [
        consumer_totals_unchanged(before, after, planned=planned),
        consumers_keep_their_owner(before, after, plan['allocations']),
        usage_matches_allocations(after),
        usage_within_capacity(after, before),
        moved_classes_gone_from_root(after, root_uuid, plan['layout_classes']),
        tree_matches_layout(after, root_uuid, children),
        allocations_on_owned_devices(after, expected, names),
    ]


def verify_current(plan, after, ownership, policy, baseline=None, planned_totals=None):
    """On-demand verification (``state: verified``) of the tree as it is.

    ``plan`` is the plan computed on ``after`` (a node that has the layout gives
    an empty one); ``baseline`` is a snapshot's state, if one exists, to compare
    consumer totals with, and ``planned_totals`` the totals that snapshot's reshape
    gave its consumers on purpose (PCI healing, VCPU -> PCPU), accepted as well.
    """
    root_uuid = plan['root']['uuid']
    after = _tree_of(after)
    checks = []
    if baseline is not None:
        baseline = _tree_of(baseline)
        present = [c for c in baseline.allocation_bodies if after.has_consumer(c)]
        checks.append(consumer_totals_unchanged(baseline, after, consumers=present, also_accept=planned_totals))
    checks.append(usage_matches_allocations(after))
    checks.append(usage_within_capacity(after, baseline))
    checks.append(moved_classes_gone_from_root(after, root_uuid, plan['layout_classes']))
    children = [{'name': c['name'], 'uuid': c['uuid'] if c['exists'] else None, 'device': c['device'],
                 'inventories': c['inventories'], 'traits': c['traits'], 'takes_all': c.get('takes_all')}
                for c in plan['children']]
    checks.append(tree_matches_layout(after, root_uuid, children))
    expected, problems = unowned_allocations(after, children, ownership, policy)
    owned = allocations_on_owned_devices(after, expected)
    if problems:
        owned = _check('allocations_on_owned_devices',
                       problems + ([owned['detail']] if not owned['passed'] else []), '')
    checks.append(owned)
    pending = plan['status'] == 'planned'
    checks.append(_check('layout_applied',
                         ['the node does not have the layout yet: %s' % _plan_line(plan)] if pending else [],
                         'nothing left to reshape'))
    return checks


# -- a pass that failed after its POST /reshaper (issue 40) ---------------------------

OWNER_FIELDS = ('project_id', 'user_id', 'consumer_type')


def damage_checks(doc, now, instances=None):
    """The node as read now (``now``: every consumer read in full) against the snapshot ``doc`` of a
    pass that never said its node was verified (snapshot.unsettled): ``(checks, damaged)``.

    Every consumer that pass wrote (its plan's ``planned_allocations``; a plan recorded before them:
    ``planned_totals``, compared as totals) must hold either what it held in the snapshot (the
    reshape did not commit) or what the plan gave it (it did), with the snapshot's project, user and
    consumer type; usages must equal the allocations and fit the capacity.  A consumer holding
    nothing at all is taken as deleted since, unless ``instances`` (the device report's guests) is
    given and lists it, or is None (unknown): then it is damage.

    ``damaged`` is ``[{"consumer", "has", "should", "owner_has", "owner_should", "problems"}]``
    (allocations as ``{rp: {"resources": {RC: n}}}``, owners as ``{field: value}``).
    """
    base = _tree_of(doc['state'])
    now = _tree_of(now)
    plan = doc.get('plan') if isinstance(doc.get('plan'), dict) else {}
    planned_allocs = plan.get('planned_allocations') if isinstance(plan.get('planned_allocations'), dict) else None
    planned_totals = plan.get('planned_totals') if isinstance(plan.get('planned_totals'), dict) else {}
    consumers = sorted(planned_allocs if planned_allocs is not None else planned_totals)
    known = None if instances is None else set(str(i).lower() for i in instances)
    names = _names(base, now)
    for rp, info in (doc.get('foreign') or {}).items():
        if isinstance(info, dict) and info.get('name'):
            names.setdefault(rp, info['name'])  # a sharing pool outside the tree, by its name
    damaged = []
    for consumer in consumers:
        was_body = base.allocation_request(consumer) or {}
        was = base.allocations(consumer)
        planned = allocation_rules.strip_allocations((planned_allocs or {}).get(consumer) or {}) \
            if planned_allocs is not None else None
        owner_should = dict((f, was_body[f]) for f in OWNER_FIELDS if was_body.get(f) is not None)
        if not now.has_consumer(consumer):
            if known is not None and str(consumer).lower() not in known:
                continue  # deleted since: its guest is gone from the node
            damaged.append({'consumer': consumer, 'has': {}, 'should': planned if planned is not None else was,
                            'owner_has': {}, 'owner_should': owner_should,
                            'problems': ['holds nothing in Placement (its guest is still on the node)'
                                         if known is not None else 'holds nothing in Placement']})
            continue
        body = now.allocation_request(consumer) or {}
        has = now.allocations(consumer)
        problems = []
        if planned is not None:
            allocs_ok = has in (was, planned)
        else:
            totals = allocation_rules.consumer_totals(has)
            allocs_ok = totals in (allocation_rules.consumer_totals(was), planned_totals.get(consumer))
        should = was if (has == was or planned is None) else planned
        if not allocs_ok:
            problems.append('holds %s, should hold %s' % (_fmt_allocs(has, names), _fmt_allocs(should, names)))
        owner_has = dict((f, body.get(f)) for f in OWNER_FIELDS)
        for field in OWNER_FIELDS:
            if field in owner_should and not now.is_partial(consumer) and body.get(field) != owner_should[field]:
                problems.append('%s is %r, should be %r' % (field, body.get(field), owner_should[field]))
        if problems:
            damaged.append({'consumer': consumer, 'has': has, 'should': should, 'owner_has': owner_has,
                            'owner_should': owner_should, 'problems': problems})
    check = _check('consumers_as_snapshot_or_plan',
                   ['consumer %s: %s' % (d['consumer'], '; '.join(d['problems'])) for d in damaged],
                   '%d consumer(s) the pass wrote hold what they held before it or what it planned, with '
                   'their project, user and type' % len(consumers))
    return [check, usage_matches_allocations(now), usage_within_capacity(now, base)], damaged


# -- formatting ---------------------------------------------------------------------

def _fmt(totals):
    return ', '.join('%s=%s' % (rc, n) for rc, n in sorted(totals.items()))


def _fmt_inv(inv):
    return ', '.join('%s(total=%d reserved=%d max_unit=%d ratio=%s)'
                     % (rc, r['total'], r['reserved'], r['max_unit'], r['allocation_ratio'])
                     for rc, r in sorted(inv.items()))


def _fmt_named(per_rp, names):
    items = sorted(per_rp.items(), key=lambda i: names.get(i[0], i[0]))
    return ', '.join('%s=%d' % (names.get(rp, rp), n) for rp, n in items)


def _fmt_allocs(allocs, names):
    parts = []
    for rp, entry in sorted(allocs.items(), key=lambda i: names.get(i[0], i[0])):
        parts.append('%s{%s}' % (names.get(rp, rp), _fmt(entry.get('resources', {}))))
    return ' '.join(parts) or 'nothing'


def _plan_line(plan):
    return ('%d child(ren) to create, %d inventory change(s), %d consumer(s) to move'
            % (len(plan['create_children']), len(plan['inventory_changes']), len(plan['allocations'])))
