# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rollback's rules in one room: what refuses a snapshot, the reverse plan, the verification after it.

A rollback (:func:`rollback_node`, step 5, drives it against the backend) goes through them in order:

1. **refusals, without the node** (:func:`rollback_problems`): independent of the snapshot's digest,
   the document must agree with the plan recorded in it -- the root is in the state, every provider
   is of the root's tree, no allocation is on a class its provider has no inventory of, each
   consumer the reshape wrote holds (by the plan's ``planned_totals`` and each kind's rule of what
   it changed on purpose: :func:`planned_changes`) what the plan made of its snapshot totals, and each
   inventory equals ``inventories_before`` (the inventory the reshape replaced, recorded in its plan);
2. **refusals, against the node** (:func:`inventory_drift`): a snapshot written before its plan
   recorded ``inventories_before`` is compared with the node instead, for the classes the reshape
   does not change; :func:`refuse_snapshot` turns either list into the one
   :class:`.snapshot.SnapshotError` the operator reads (nothing changed);
3. **the reverse plan** (:func:`plan_rollback`, :func:`rollback_body`): one reverse
   ``POST /reshaper`` that gives every provider its snapshot inventory and every consumer of the
   snapshot still on the node its snapshot allocations in the tree; a consumer changed since the
   snapshot, or created since and holding what the restored inventory cannot carry, refuses the
   whole rollback (:class:`.kinds.common.PlanError`, naming them);
4. **the verification after it** (:func:`verify_rollback`): the tree and the restored consumers are
   as in the snapshot; :func:`removed_before` and :func:`children_left_behind` say which of the
   layout's children were removed on request (by this run or an interrupted one) or are left.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from .planner import (
    PLAN_VERSION,
    STATUS_NOOP,
    STATUS_PLANNED,
    PlanError,
    _named_allocs,
    write_request,
)
from .kinds import registry as _kinds
from .kinds.common import plan_assignments
from .kinds.common import plan_count as _count, plan_items as _items, plan_mapping as _mapping
from . import outcome as _outcome
from . import snapshot as _snapshot
from . import verify as _verify
from .reading import read_node, resolve_root
from .settle import SETTLE_DELAYS, Progress, log_line, send_settled
from .snapshot import SnapshotError
from .verify import (
    _check,
    _fmt_allocs,
    _fmt_inv,
    _names,
    _tree_of,
    consumer_totals_unchanged,
    usage_matches_allocations,
    usage_within_capacity,
)
from ..errors import PlacementError
from ..retry import DEFAULT_ATTEMPTS, with_conflict_retry
from ..rules import allocations as allocation_rules
from .. import journal as _journal
from .. import request as _request
from .. import resources as ops
from .. import tree as _tree

__all__ = [
    'children_left_behind', 'inventory_drift', 'plan_rollback', 'planned_changes', 'refuse_snapshot',
    'RollbackRequest', 'removed_before', 'rollback_body', 'rollback_node', 'rollback_problems',
    'unverified_note', 'verify_rollback',
]


# -- 1, 2: what refuses a snapshot (independent of the digest) ---------------------------

def _text_list(value):
    """A part of a snapshot's plan read as a list of names."""
    return [item for item in value if isinstance(item, type(u''))] if isinstance(value, list) else []


def _fmt_record(record):
    if record is None:
        return 'none'
    return ', '.join('%s=%s' % (key, record[key]) for key in sorted(record))


def _record_diff(have, want):
    """The fields two inventory records differ in: ``(have text, want text)``."""
    if have is None or want is None:
        return _fmt_record(have), _fmt_record(want)
    keys = sorted(k for k in set(have) | set(want) if have.get(k) != want.get(k))
    return (', '.join('%s=%s' % (k, have.get(k)) for k in keys),
            ', '.join('%s=%s' % (k, want.get(k)) for k in keys))


def _tree_problems(doc):
    """The root is in the state, without a parent; every provider is of its tree."""
    state, root = doc['state'], doc['root']
    providers = state['providers']
    if root['uuid'] not in providers:
        return ['its state has no provider %s, the root %s it is the snapshot of (a rollback would take '
                'from the root what the state does not list, e.g. its traits)' % (root['uuid'], root['name'])]
    problems = []
    if providers[root['uuid']].get('parent_provider_uuid') is not None:
        problems.append('its root %s has a parent (%s) in the state' % (root['name'],
                                                                        providers[root['uuid']]['parent_provider_uuid']))
    for uuid, prov in sorted(providers.items()):
        top, seen = uuid, set()
        while providers.get(top, {}).get('parent_provider_uuid') is not None and top not in seen:
            seen.add(top)
            top = providers[top]['parent_provider_uuid']
        claimed = prov.get('root_provider_uuid')
        if top != root['uuid'] or claimed not in (None, root['uuid']):
            problems.append('provider %s (%s) is of another tree (root %s), not of %s (%s)'
                            % (prov.get('name'), uuid, claimed if claimed not in (None, root['uuid']) else top,
                               root['name'], root['uuid']))
    return problems


def _allocation_problems(state):
    """No allocation is on a class its provider (of the tree) has no inventory of: Placement never has one."""
    problems = []
    providers = state['providers']
    for consumer, entry in sorted((state.get('allocations') or {}).items()):
        for rp, item in sorted(((entry or {}).get('allocations') or {}).items()):
            if rp not in providers:
                continue  # outside the tree (a sharing pool): never written by a rollback
            inventory = providers[rp].get('inventories') or {}
            for rc, amount in sorted(((item or {}).get('resources') or {}).items()):
                if amount and rc not in inventory:
                    problems.append('consumer %s holds %s %s on %s, which has no %s inventory in the snapshot'
                                    % (consumer, amount, rc, providers[rp].get('name'), rc))
    return problems


def _inventory_problems(doc):
    """Each provider's inventory equals what the plan recorded as the inventory the reshape replaced."""
    plan = _mapping(doc.get('plan'))
    before = plan.get('inventories_before')
    if not isinstance(before, dict):
        return []  # written before the plan recorded it: inventory_drift compares with the node
    providers = doc['state']['providers']
    problems = []
    for uuid in sorted(set(providers) | set(before)):
        # a provider missing on one side had no inventory there (a child the reshape created)
        name = (providers.get(uuid) or {}).get('name') or uuid
        try:
            have = _tree.norm_inventories((providers.get(uuid) or {}).get('inventories'))
            want = _tree.norm_inventories(before.get(uuid))
        except (PlacementError, TypeError, ValueError, AttributeError) as exc:
            problems.append('the inventory of provider %s cannot be read: %s' % (name, getattr(exc, 'detail', exc)))
            continue
        for rc in sorted(set(have) | set(want)):
            if have.get(rc) != want.get(rc):
                now, then = _record_diff(have.get(rc), want.get(rc))
                problems.append('provider %s, %s: the state has %s, the plan recorded %s as the inventory the '
                                'reshape replaced' % (name, rc, now, then))
    return problems


def planned_changes(plan, consumer, then, planned):
    """``{RC: n}``: how the reshape recorded in ``plan`` changed the consumer's per-class totals on
    purpose.  A reshape only moves allocations, except by a kind's own rule
    (:meth:`.kinds.common.Kind.planned_changes`: a GPU child of a custom mdev class, nova's PCI
    allocation healing, the VCPU -> PCPU conversion); the kinds' answers are summed in the order
    of :data:`.kinds.registry.KINDS`, each kind given what those before it changed."""
    records = plan_assignments(plan, consumer)
    own = tuple(how for kind in _kinds.KINDS for how in kind.own_assignments)
    moves = [(rc, rec) for rc, rec in records if rec.get('how') not in own]
    delta = {}
    for kind in _kinds.KINDS:
        for rc, n in sorted(kind.planned_changes(plan, consumer, then, planned, moves, dict(delta)).items()):
            delta[rc] = delta.get(rc, 0) + n
    return dict((rc, n) for rc, n in delta.items() if n)


def _consumer_problems(doc):
    """Each consumer the reshape wrote holds in the snapshot what its plan made into ``planned_totals``."""
    plan = _mapping(doc.get('plan'))
    planned_totals = plan.get('planned_totals')
    if not isinstance(planned_totals, dict):
        return []
    allocations = doc['state'].get('allocations') or {}
    problems = []
    for consumer, planned in sorted(planned_totals.items()):
        if not isinstance(planned, dict) or any(_count(n) is None for n in planned.values()):
            problems.append('the plan\'s planned_totals of consumer %s are not {class: amount}' % consumer)
            continue
        entry = allocations.get(consumer)
        if entry is None:
            problems.append('consumer %s, which the reshape wrote (its plan gave it %s), has no allocations '
                            'in the state' % (consumer, _fmt_totals(planned)))
            continue
        if entry.get('partial'):
            continue  # only its tree part was saved: the reshape did not write it (never the case)
        then = allocation_rules.consumer_totals(entry.get('allocations') or {})
        delta = planned_changes(plan, consumer, then, planned)
        for rc in sorted(set(then) | set(planned) | set(delta)):
            expected = planned.get(rc, 0) - delta.get(rc, 0)
            if then.get(rc, 0) != expected:
                why = ('changed by %+d on purpose' % delta[rc]) if delta.get(rc) else 'not changed'
                problems.append('consumer %s, %s: the state gives it %d, but its plan says %d before the reshape '
                                '(%d after it, its total %s by the reshape)'
                                % (consumer, rc, then.get(rc, 0), expected, planned.get(rc, 0), why))
    return problems


def rollback_problems(doc):
    """What a rollback must not apply from ``doc`` (a document :func:`.snapshot.load_snapshot` read), checked
    without the node: ``[text]``, empty when none.  See the module docstring."""
    problems = _tree_problems(doc)
    if problems:
        return problems
    return (_allocation_problems(doc['state']) + _inventory_problems(doc) + _consumer_problems(doc))


def inventory_drift(doc, state):
    """For a snapshot whose plan has no ``inventories_before`` (written before it was recorded):
    the inventory records a rollback would change although the reshape does not change them --
    every class of a provider that is neither the root nor a child of the layout, and the root's
    classes but the moved ones and those a kind changes in place (``Kind.root_classes_changed``:
    VCPU and PCPU).  ``state`` is the node as read now.  ``[text]``."""
    plan = doc.get('plan')
    if not isinstance(plan, dict) or isinstance(plan.get('inventories_before'), dict):
        return []
    root = doc['root']['uuid']
    skip_root = set(_text_list(plan.get('moved_classes')))
    for kind in _kinds.KINDS:
        skip_root.update(kind.root_classes_changed(plan))
    children = set(c.get('uuid') for c in _items(plan.get('children')))
    snap_tree, now_tree = _tree.ProviderTree(doc['state']), _tree.ProviderTree.of(state)
    problems = []
    for uuid in sorted(snap_tree.uuids()):
        if uuid in children or uuid not in now_tree:
            continue
        then, now = snap_tree.inventory(uuid), now_tree.inventory(uuid)
        for rc in sorted(set(then) | set(now)):
            if (uuid == root and rc in skip_root) or then.get(rc) == now.get(rc):
                continue
            had, has = _record_diff(then.get(rc), now.get(rc))
            problems.append('provider %s, %s: the snapshot has %s, the node %s now, and the reshape does not '
                            'change that record' % (snap_tree.name(uuid), rc, had, has))
    return problems


def children_left_behind(snap, after):
    """Names of the children the reshape created (empty in its snapshot) that are still in the tree."""
    created = set(snap.get('created_children') or ())
    snapped = (snap.get('state') or {}).get('providers') or {}
    return sorted(str(p.get('name')) for u, p in (after.get('providers') or {}).items()
                  if p.get('name') in created and not (snapped.get(u) or {}).get('inventories')
                  and not p.get('inventories'))


def removed_before(snap, after):
    """The uuids of the snapshot's layout children, empty in it, that are no longer in the tree ``after``
    (what ``remove_children`` removes: removed by an earlier, interrupted run of the same rollback)."""
    managed = set(snap.get('layout_children') or [])
    root_uuid = snap['root']['uuid']
    gone = []
    for uuid, prov in sorted(snap['state']['providers'].items()):
        if uuid != root_uuid and uuid not in after['providers'] and prov.get('name') in managed \
                and not prov.get('inventories'):
            gone.append(uuid)
    return gone


def refuse_snapshot(path, problems, unchanged=False):
    """Refuse a snapshot a rollback must not apply (:func:`rollback_problems` / :func:`inventory_drift`)."""
    if not problems:
        return
    if unchanged:
        why = ('a rollback restores only what the reshape changed, and this snapshot (written before snapshots '
               'carried a digest and the inventory the reshape replaced) cannot tell an edit of the file from a '
               'change made on the node since the reshape. Restore the file from a backup; or, if the node\'s '
               'record is right (nova changed it since the reshape), set the snapshot\'s record to it: the '
               'rollback then leaves that record as it is')
    else:
        why = ('the file was edited or damaged after it was written: restore it from a backup, or give another '
               'snapshot of the node')
    raise SnapshotError('snapshot %s was not used: %s. Nothing was changed; %s'
                        % (path, '; '.join(problems), why))


def unverified_note(path):
    return ('snapshot %s has no digest (written before snapshots carried one): it was checked against the plan '
            'recorded in it and against the node, but an edit of the file cannot be detected' % path)


# -- 3: the reverse plan ----------------------------------------------------------------

def plan_rollback(state, snap, remove_children=False):
    """The reverse reshape that brings the tree back to a snapshot (plain data).

    * every provider of the snapshot gets its snapshot inventory back (children
      the reshape filled become empty again);
    * every consumer of the snapshot still on the node gets its snapshot
      allocations back inside the tree (a consumer the reshape did not write has only its
      tree part in the snapshot, a partial body: that is what is compared; it is written only
      if its tree part changed, from its full body read now); its allocations outside the tree (a
      sharing pool) are kept as they are now.  One whose per-class totals changed
      since the snapshot (resized, or reshaped again) is refused: restoring it
      would undo a change nobody asked to undo.  A consumer of the snapshot that
      is no longer on the node (deleted or migrated away) is NOT brought back;
    * a consumer that did not exist at snapshot time and holds allocations the
      restored inventory cannot carry (typically a new instance on a child that
      goes back to empty) is refused, named in the message; nothing is written;
    * with ``remove_children`` the layout's children that are empty in the
      snapshot are deleted afterwards (the caller does it, after the reshape);
    * the root's traits go back to the snapshot's, whichever kind changed them
      (``Kind.root_cleanup``: the SEV trait), after the reverse reshape like the reshape's own.

    Returns ``{"status": "planned"|"noop", "root", "root_traits", "inventories": {rp:
    {"resource_provider_generation", "inventories"}}, "allocations": {consumer:
    request}, "restored": [consumer], "gone": [consumer], "remove_children":
    [{"uuid", "name"}], "diff", "warnings"}``.
    """
    tree = _tree.ProviderTree.of(state)
    snap_tree = _tree.ProviderTree(snap['state'])
    root_uuid = snap['root']['uuid']
    warnings = []
    if root_uuid not in tree:
        raise PlanError('the snapshot\'s root provider %s is not in the tree that was read' % root_uuid)
    target_inv, inventories = _rollback_inventories(tree, snap_tree, warnings)
    current = tree.all_allocations()
    writes, restored, gone = _rollback_consumers(tree, snap_tree, snap, target_inv, current)
    if gone:
        warnings.append('consumer(s) of the snapshot no longer on this node, not brought back: %s'
                        % ', '.join(gone))
    allocations = {}
    for consumer, target in sorted(writes.items()):
        allocations[consumer] = write_request(tree, consumer, target)
    if allocations and not inventories:
        # the reshaper schema wants at least one provider: the root, unchanged
        inventories[root_uuid] = {'resource_provider_generation': tree.get(root_uuid)['generation'],
                                  'inventories': target_inv[root_uuid]}
    remove = _rollback_removals(tree, snap_tree, snap, warnings) if remove_children else []
    root_traits = None
    now_traits, then_traits = tree.traits(root_uuid), snap_tree.traits(root_uuid)
    if now_traits != then_traits:
        root_traits = {'uuid': root_uuid, 'name': snap['root']['name'], 'before': now_traits,
                       'after': then_traits}
    status = STATUS_PLANNED if (inventories or allocations or remove or root_traits) else STATUS_NOOP
    return {
        'version': PLAN_VERSION,
        'status': status,
        'root': {'uuid': root_uuid, 'name': snap['root']['name']},
        'root_traits': root_traits,
        'inventories': inventories,
        'allocations': allocations,
        'restored': restored,
        'gone': gone,
        'remove_children': remove,
        'moved': {'consumers': len(allocations),
                  'allocations': sum(len(a['allocations']) for a in allocations.values())},
        'diff': _rollback_diff(tree, current, inventories, remove, allocations),
        'warnings': warnings,
    }


def _rollback_inventories(tree, snap_tree, warnings):
    """Every provider's inventory after the rollback, and the snapshot inventories to write."""
    target_inv = dict((u, tree.inventory(u)) for u in tree.providers)
    inventories = {}
    for uuid in snap_tree.uuids():
        snapped = snap_tree.providers[uuid]
        want = snap_tree.inventory(uuid)
        if uuid not in tree:
            if want:
                raise PlanError('provider %s (%s) of the snapshot no longer exists: its inventory '
                                'cannot be restored' % (snapped.get('name'), uuid))
            warnings.append('provider %s of the snapshot no longer exists (it had no inventory)'
                            % snapped.get('name'))
            continue
        target_inv[uuid] = want
        if want != tree.inventory(uuid):
            inventories[uuid] = {'resource_provider_generation': tree.get(uuid)['generation'],
                                 'inventories': want}
    return target_inv, inventories


def _rollback_consumers(tree, snap_tree, snap, target_inv, current):
    """``(writes, restored, gone)``: the allocations each consumer of the snapshot gets back;
    PlanError naming every consumer that cannot be (changed since, or created since and
    holding what the restored inventory cannot carry)."""
    sprov = snap_tree.providers
    snapped_allocs = snap_tree.all_allocations()
    refused, writes, restored, gone = [], {}, [], []
    planned_totals = (snap.get('plan') or {}).get('planned_totals') or {}
    for consumer in sorted(snapped_allocs):
        if consumer not in current:
            gone.append(consumer)
            continue
        now_allocs, then_allocs = current[consumer], snapped_allocs[consumer]
        if snap_tree.is_partial(consumer) or tree.is_partial(consumer):
            # only its tree part was saved (the reshape did not write it) or read: compare that
            now_allocs = dict((rp, e) for rp, e in now_allocs.items() if rp in sprov or rp in tree)
            then_allocs = dict((rp, e) for rp, e in then_allocs.items() if rp in sprov or rp in tree)
        now = allocation_rules.consumer_totals(now_allocs)
        then = allocation_rules.consumer_totals(then_allocs)
        if now != then and now != planned_totals.get(consumer):
            refused.append((consumer, 'consumer %s changed since the snapshot (now %s, then %s)'
                           % (consumer, _fmt_totals(now), _fmt_totals(then))))
            continue
        target = dict((rp, e) for rp, e in snapped_allocs[consumer].items() if rp in sprov)
        target.update((rp, e) for rp, e in current[consumer].items()
                      if rp not in sprov and rp not in tree)
        restored.append(consumer)
        if target != current[consumer]:
            writes[consumer] = target
    for consumer in sorted(set(current) - set(snapped_allocs)):
        for rp, entry in sorted(current[consumer].items()):
            if rp not in tree:
                continue
            lost = sorted(rc for rc in entry['resources'] if rc not in target_inv.get(rp, {}))
            if lost:
                refused.append((consumer, 'consumer %s was created after the snapshot and holds %s '
                                          'on %s, which the snapshot does not have there'
                                          % (consumer, ', '.join('%d %s' % (entry['resources'][rc], rc)
                                                                 for rc in lost),
                                             tree.get(rp)['name'])))
    if refused:
        raise PlanError('cannot roll back to the snapshot of %s: %s. Nothing was changed. Move or '
                        'delete these consumers first, or reshape again instead of rolling back.'
                        % (snap['root']['name'], '; '.join(text for _c, text in refused)),
                        consumers=sorted(set(c for c, _text in refused)))
    return writes, restored, gone


def _rollback_removals(tree, snap_tree, snap, warnings):
    """The layout's children that are empty in the snapshot (``remove_children``)."""
    root_uuid = snap['root']['uuid']
    managed = set(snap.get('layout_children') or [])
    parents = tree.parents()
    remove = []
    for uuid, snapped in sorted(snap_tree.providers.items(), key=lambda i: i[1].get('name') or ''):
        if uuid == root_uuid or uuid not in tree or snapped.get('name') not in managed:
            continue
        if snap_tree.inventory(uuid):
            continue
        if uuid in parents:
            warnings.append('child %s has children of its own and is kept' % snapped['name'])
            continue
        remove.append({'uuid': uuid, 'name': snapped['name']})
    return remove


def _rollback_diff(tree, current, inventories, remove, allocations):
    names = tree.names()
    before = {'providers': {}, 'consumers': {}}
    after = {'providers': {}, 'consumers': {}}
    for uuid in sorted(inventories, key=lambda u: names.get(u, u)):
        before['providers'][names[uuid]] = {'uuid': uuid, 'inventories': tree.inventory(uuid)}
        after['providers'][names[uuid]] = {'uuid': uuid, 'inventories': inventories[uuid]['inventories']}
    for item in remove:
        before['providers'].setdefault(item['name'], {'uuid': item['uuid'], 'inventories': {}})
        after['providers'][item['name']] = None
    for consumer in sorted(allocations):
        before['consumers'][consumer] = _named_allocs(current[consumer], names)
        after['consumers'][consumer] = _named_allocs(allocations[consumer]['allocations'], names)
    return {'before': before, 'after': after}


def rollback_body(rplan):
    """The POST /reshaper body of a rollback plan (None when only removals are left)."""
    if not rplan['inventories'] and not rplan['allocations']:
        return None
    return {'inventories': copy.deepcopy(rplan['inventories']),
            'allocations': copy.deepcopy(rplan['allocations'])}


def _fmt_totals(totals):
    return ', '.join('%s=%s' % (rc, n) for rc, n in sorted(totals.items())) or 'nothing'


# -- 4: the verification after it --------------------------------------------------------

def verify_rollback(snapshot, after, restored, removed=None):
    """After a rollback: the tree and the restored consumers are as in the snapshot.

    ``restored`` lists the consumers the rollback wrote back (those of the
    snapshot still on the node); ``removed`` the child uuids deleted on request.
    """
    snap = _tree_of(snapshot['state'])
    after = _tree_of(after)
    removed = set(removed or [])
    problems = []
    for uuid in snap.uuids():
        prov = snap.get(uuid)
        now = after.get(uuid)
        if uuid in removed:
            if now is not None:
                problems.append('child %s was to be removed but is still there' % prov['name'])
            continue
        if now is None:
            problems.append('provider %s of the snapshot is gone' % prov['name'])
            continue
        have, want = after.inventory(uuid), snap.inventory(uuid)
        if have != want:
            problems.append('%s has inventory %s, the snapshot %s'
                            % (prov['name'], _fmt_inv(have) or 'none', _fmt_inv(want) or 'none'))
        if after.parent(uuid) != snap.parent(uuid) or now.get('name') != prov.get('name'):
            problems.append('%s is not where the snapshot had it' % prov['name'])
    inv_check = _check('inventories_match_snapshot', problems,
                       '%d provider(s) have the snapshot\'s inventory' % len(snap))
    names = _names(snap, after)
    problems = []
    for consumer in sorted(restored):
        want = snap.allocations(consumer)
        have = after.allocations(consumer)
        if want != have:
            problems.append('consumer %s holds %s, the snapshot %s'
                            % (consumer, _fmt_allocs(have, names), _fmt_allocs(want, names)))
    alloc_check = _check('allocations_match_snapshot', problems,
                         '%d consumer(s) hold exactly the snapshot\'s allocations' % len(restored))
    return [
        inv_check,
        alloc_check,
        consumer_totals_unchanged(snap, after, consumers=restored),
        usage_matches_allocations(after),
        usage_within_capacity(after, snap),
    ]


# -- 5: the rollback of a node, against the backend ------------------------------------------

class RollbackRequest(_request.Request):
    """What :func:`rollback_node` is asked: the snapshot (``snapshot_dir``, or ``snapshot_file``),
    ``remove_children``, ``check_mode``, and the retries (``attempts``, ``backoff``,
    ``settle_delays`` of a lost answer) and ``log``."""

    FIELDS = (('snapshot_dir', None), ('snapshot_file', None), ('remove_children', False), ('check_mode', False),
              ('attempts', DEFAULT_ATTEMPTS), ('log', None), ('backoff', 0.05), ('settle_delays', SETTLE_DELAYS))


def rollback_node(backend, root, request=None, **fields):
    """Restore the node's snapshot with one reverse reshape, then verify it.

    ``request``: a :class:`RollbackRequest`, or its fields as keywords."""
    req = RollbackRequest.of(request, **fields)
    snapshot_dir, snapshot_file, remove_children = req.snapshot_dir, req.snapshot_file, req.remove_children
    check_mode, attempts, log = req.check_mode, req.attempts, req.log
    root_prov = resolve_root(backend, root)
    path = _snapshot.find_snapshot(snapshot_dir, root_prov['name'], snapshot_file)
    snap = _snapshot.load_snapshot(path)
    if snap['root']['uuid'] != root_prov['uuid']:
        raise SnapshotError('snapshot %s is of provider %s (%s), not of %s (%s)'
                            % (path, snap['root']['name'], snap['root']['uuid'], root_prov['name'], root_prov['uuid']))
    refuse_snapshot(path, rollback_problems(snap))
    verified = _snapshot.has_digest(snap)

    progress = Progress(snapshot=path)
    read = {}  # the tree the rollback was computed from (its journal's "before")

    def step():
        state, _foreign = read_node(backend, root_prov['uuid'])
        read['state'] = state
        refuse_snapshot(path, inventory_drift(snap, state), unchanged=True)
        rplan = plan_rollback(state, snap, remove_children=remove_children)
        if rplan['status'] == STATUS_PLANNED and not check_mode:
            body = rollback_body(rplan)
            if body is not None:
                send_settled(backend, root_prov['uuid'], body, progress, req.settle_delays, log,
                             unknown_hint='run the rollback again: it reads the node and either finds '
                                          'it back at the snapshot or rolls it back')
            _outcome.set_root_traits(backend, rplan['root_traits'], attempts, log)
        return rplan

    rplan, retries = with_conflict_retry(step, attempts=attempts, log=log,
                                         what='rollback of %s' % root_prov['name'], backoff=req.backoff)
    if progress.settled:
        rplan['warnings'] = list(rplan['warnings']) + [progress.settled]
    changed = rplan['status'] == STATUS_PLANNED
    result = _outcome.result(_outcome.STATUS_ROLLED_BACK if changed else _outcome.STATUS_NOOP, changed, plan=rplan,
                             diff=rplan['diff'], retries=retries, snapshot=path, moved=rplan['moved'],
                             warnings=list(rplan['warnings']), reshaper_applied=bool(progress.applied))
    result['snapshot_verified'] = verified
    unverified = '' if verified else '. ' + unverified_note(path)
    if not verified:
        result['warnings'].append(unverified_note(path))
    if check_mode:
        result['journal'] = _journal.journal_of(read['state'], _journal.rolled_back_state(read['state'], rplan),
                                                _journal.MODE_WOULD)
        result['msg'] = ('check mode: would roll %s back to %s' % (root_prov['name'], path)
                         if changed else '%s already matches %s' % (root_prov['name'], path)) + unverified
        return result
    removed = []
    for item in rplan['remove_children']:
        ops.remove_provider(backend, item['uuid'], attempts=attempts, log=log)
        removed.append(item['uuid'])
        log_line(log, 'removed child provider %s (%s)' % (item['name'], item['uuid']))
    after, _foreign = read_node(backend, root_prov['uuid'], known=snap['state'])
    result['journal'] = _journal.journal_of(read['state'], after, _journal.MODE_RESTORED,
                                            left=children_left_behind(snap, after))
    result['tree_before'] = read['state']   # what Placement held: the report's "before" (not the snapshot)
    removable = [c['uuid'] for c in rplan['remove_children']]
    if remove_children:
        # the children an earlier run of this rollback removed before it was stopped: asked for, gone
        removable += removed_before(snap, after)
    checks = verify_rollback(snap, after, rplan['restored'], removed=removable)
    result['verification'] = checks
    result['verified'] = _verify.passed(checks)
    if result['verified'] and verified:
        # the snapshot says its node was rolled back: a report of the run that reshaped it, written
        # afterwards (a sliced roll's report job), does not call the node reshaped (fleet/report.py)
        try:
            _snapshot.set_outcome(path, {'status': _snapshot.OUTCOME_ROLLED_BACK, 'at': _snapshot.utc_stamp(),
                                         'was': _snapshot.outcome_status(snap)}, snapshot_dir)
        except SnapshotError as exc:
            result['warnings'].append('the rollback could not be recorded in the snapshot: %s' % exc.detail)
    result['msg'] = '%s %s to %s; verification %s' % (
        'rolled' if changed else 'already rolled', root_prov['name'] + ' back', path,
        'passed' if result['verified'] else 'FAILED: ' + '; '.join(
            '%s: %s' % (c['check'], c['detail']) for c in _verify.failures(checks))) + unverified
    return result
