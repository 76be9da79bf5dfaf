# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Explicit move records: the second front door to the planner (issue 16).

Where the node's layout cannot be discovered (an offline node, a driver that reports
nothing, a custom resource class), the operator states the reshape in the vocabulary
Placement's developers used for it::

    moves:
      - from_resource_provider: compute-01           # name or uuid: the node's ROOT
        to_resource_provider: compute-01_gpu0        # name or uuid; created under the root if missing
        moved_resources: {VGPU: 4}
        traits: [OWNER_NOVA]                         # optional: traits the target gets
    consumers:                                       # only where a class is split over targets
      <consumer uuid>: {compute-01_gpu0: {VGPU: 1}, compute-01_gpu1: {VGPU: 1}}

:func:`layout_from_moves` checks the records against the tree read and turns them into
the SAME layout :func:`layout.build_layout` returns for a device report (one child per
target, ``device`` = the target's name) and into the ownership map the planner reads
(``{consumer: {target name: {RC: units}}}``).  :func:`plan_from_moves` hands both to
:func:`planner.plan_reshape`: the plan, its dry run, snapshot, single ``POST /reshaper``,
verification and rollback are the discovery path's own (reshaper.py, verify.py).

The rules:

* ``from_resource_provider`` is the root of the node named by ``root_provider`` (the
  planner moves classes off the root, as nova's reshapes do);
* ``to_resource_provider`` is a provider of the node's tree other than the root, or a new
  name (a child of the root with a deterministic uuid, :func:`layout.child_uuid`); a uuid
  that names no provider, or a provider of another tree, is refused;
* a class moves off the root WHOLE: the records of a class add up to the root's total of
  it (more is "more than the source has", less leaves units nowhere);
* each target gets the root's record of the class with ``total`` = the units moved to it,
  ``max_unit`` = min(root's max_unit, total), ``reserved`` carried to a single target (a
  split needs it 0);
* a consumer's units of a class that goes to ONE target go there; a class split over
  several targets needs ``consumers`` (units adding up to what the consumer holds, targets
  among the class's targets, within each target's capacity) or ``ownership_policy: pack``
  (the planner's packing rule); otherwise the plan is refused naming the consumers;
* once the reshape is done (the root holds none of the class, each target holds the class
  with the recorded total), the same records describe the node as it is: the plan is a
  no-op and ``state: verified`` checks the tree against them.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from . import layout as _layout
from . import planner
from .. import names as _names
from .. import tree as _tree
from ..errors import MOVES, ConfigurationError
from ..rules import inventory as inventory_rules
from ..rules import names as name_rules
from ..rules import providers as provider_rules

#: the kind of a child that explicit move records ask for (the layout's ``kind``)
KIND_MOVE = 'move'

RECORD_KEYS = ('from_resource_provider', 'to_resource_provider', 'moved_resources', 'traits')


class MovesError(ConfigurationError):
    """The move records (or the consumers' split) cannot describe a reshape of this node."""

    default_code = MOVES
    default_title = 'Move Records Refused'


def _refused(text):
    return MovesError('%s. Nothing was changed.' % text)


# -- the records' shapes ------------------------------------------------------------

def check_records(moves):
    """Shape of the records alone (no tree needed): ``[{"from", "to", "resources", "traits", "path"}]``."""
    if not isinstance(moves, list) or not moves:
        raise _refused('moves must be a non-empty list of move records')
    out = []
    for i, rec in enumerate(moves):
        path = 'moves[%d]' % i
        if not isinstance(rec, dict):
            raise _refused('%s must be a mapping with from_resource_provider, to_resource_provider and '
                           'moved_resources, got %r' % (path, rec))
        unknown = sorted(set(rec) - set(RECORD_KEYS))
        if unknown:
            raise _refused('%s: unknown key(s) %s (known: %s)'
                           % (path, ', '.join(map(str, unknown)), ', '.join(RECORD_KEYS)))
        refs = {}
        for key in ('from_resource_provider', 'to_resource_provider'):
            value = rec.get(key)
            if not isinstance(value, str) or not value.strip():
                raise _refused('%s.%s: a provider name or uuid is required' % (path, key))
            refs[key] = value.strip()
        resources = rec.get('moved_resources')
        if not isinstance(resources, dict) or not resources:
            raise _refused('%s.moved_resources must map resource class -> units, e.g. {VGPU: 4}, got %r'
                           % (path, resources))
        for rc, units in resources.items():
            if not name_rules.is_valid_name(rc) or not (_names.is_standard_resource_class(rc)
                                                        or name_rules.is_valid_custom_name(rc)):
                raise _refused('%s.moved_resources: %r is not a resource class Placement knows (a '
                               'standard class, or CUSTOM_ followed by A-Z, 0-9 and _)' % (path, rc))
            if isinstance(units, bool) or not isinstance(units, int) or units < 1:
                raise _refused('%s.moved_resources.%s: units must be an integer > 0, got %r' % (path, rc, units))
        traits = rec.get('traits') or []
        if not isinstance(traits, list):
            raise _refused('%s.traits must be a list of trait names, got %r' % (path, traits))
        for trait in traits:
            if not name_rules.is_valid_name(trait) or not (_names.is_standard_trait(trait)
                                                           or name_rules.is_valid_custom_name(trait)):
                raise _refused('%s.traits: %r is not a trait Placement knows (a standard trait, or '
                               'CUSTOM_ followed by A-Z, 0-9 and _)' % (path, trait))
        out.append({'from': refs['from_resource_provider'], 'to': refs['to_resource_provider'],
                    'resources': dict(resources), 'traits': sorted(set(traits)), 'path': path})
    return out


# -- the records against the tree -----------------------------------------------------

def _outside(lookup, ref):
    """The provider ``ref`` names outside the tree (lookup's record), or None."""
    if lookup is None:
        return None
    return lookup(ref)


def _where(prov):
    root = prov.get('root_provider_uuid')
    if root and root != prov.get('uuid'):
        return 'provider %s (%s) of the tree of %s' % (prov.get('name'), prov.get('uuid'), root)
    return 'provider %s (%s), the root of another tree' % (prov.get('name'), prov.get('uuid'))


def _resolve_from(tree, root_uuid, rec, lookup):
    uuid = tree.find(provider_rules.normalize_uuid(rec['from']) if provider_rules.is_uuid_like(rec['from'])
                     else rec['from'])
    if uuid is None:
        prov = _outside(lookup, rec['from'])
        if prov is not None:
            raise _refused('%s.from_resource_provider %s is not in the tree of %s: it is %s (another '
                           'compute node)' % (rec['path'], rec['from'], tree.name(root_uuid), _where(prov)))
        raise _refused('%s.from_resource_provider %s: unknown provider (no provider has that %s)'
                       % (rec['path'], rec['from'], 'uuid' if provider_rules.is_uuid_like(rec['from']) else 'name'))
    if uuid != root_uuid:
        raise _refused('%s.from_resource_provider %s is a child provider of %s: move records move '
                       'resources off the node\'s root provider (%s) only'
                       % (rec['path'], rec['from'], tree.name(root_uuid), tree.name(root_uuid)))
    return uuid


def _resolve_to(tree, root_uuid, rec, lookup):
    """The target's name, and its uuid when it exists in the tree (None: a new child)."""
    ref = rec['to']
    is_uuid = provider_rules.is_uuid_like(ref)
    uuid = tree.find(provider_rules.normalize_uuid(ref) if is_uuid else ref)
    if uuid == root_uuid:
        raise _refused('%s.to_resource_provider %s is the root provider itself: name a child (a new '
                       'name creates one under the root)' % (rec['path'], ref))
    if uuid is not None:
        return tree.name(uuid), uuid
    prov = _outside(lookup, ref)
    if prov is not None:
        raise _refused('%s.to_resource_provider %s is not in the tree of %s: it is %s; a reshape only '
                       'moves resources within one compute node\'s tree'
                       % (rec['path'], ref, tree.name(root_uuid), _where(prov)))
    if is_uuid:
        raise _refused('%s.to_resource_provider %s: no provider has that uuid; name a NEW child by its '
                       'name (it is created under the root with a deterministic uuid)' % (rec['path'], ref))
    problem = provider_rules.name_error(ref)
    if problem:
        raise _refused('%s.to_resource_provider: %s' % (rec['path'], problem))
    return ref, None


def _child_record(root_rec, units, carry_reserved):
    rec = {'total': units, 'reserved': root_rec['reserved'] if carry_reserved else 0,
           'min_unit': root_rec['min_unit'], 'max_unit': min(root_rec['max_unit'], units),
           'step_size': root_rec['step_size'], 'allocation_ratio': root_rec['allocation_ratio']}
    return rec


def _targets(tree, root_uuid, records, lookup):
    """``{target name: {"uuid", "moved": {RC: units}, "traits", "paths"}}`` of the records."""
    targets = {}
    for rec in records:
        _resolve_from(tree, root_uuid, rec, lookup)
        name, uuid = _resolve_to(tree, root_uuid, rec, lookup)
        target = targets.setdefault(name, {'uuid': uuid, 'moved': {}, 'traits': set(), 'paths': []})
        target['traits'].update(rec['traits'])
        target['paths'].append(rec['path'])
        for rc, units in rec['resources'].items():
            if rc in target['moved']:
                raise _refused('%s: %s to %s is already moved by %s; give it once'
                               % (rec['path'], rc, name, target['paths'][0]))
            target['moved'][rc] = units
    return targets


def _by_class(targets):
    """``{RC: {target name: units}}``: where the records move each class."""
    by_class = {}
    for name, target in targets.items():
        for rc, units in target['moved'].items():
            by_class.setdefault(rc, {})[name] = units
    return by_class


def _where_to(per_target):
    return ', '.join('%d to %s' % (n, t) for t, n in sorted(per_target.items()))


def _check_already_moved(root, rc, per_target, targets, child_inv):
    """A class the root no longer has: the targets must hold what the records say (else refused)."""
    have = dict((t, (child_inv[t].get(rc) or {}).get('total')) for t in per_target)
    if all(have[t] == n for t, n in per_target.items()):
        return
    raise _refused('%s: the root %s has no %s inventory to move (%s)%s'
                   % (', '.join(p for t in sorted(per_target) for p in targets[t]['paths']),
                      root['name'], rc, _where_to(per_target),
                      ''.join('; %s holds %s of it' % (t, h) for t, h in sorted(have.items()) if h)))


def _check_class_move(root, rc, per_target, root_inv, child_inv):
    """Refuse a move of ``rc`` that is not the root's whole class into targets without it."""
    wanted = sum(per_target.values())
    where = _where_to(per_target)
    total = root_inv[rc]['total']
    if wanted > total:
        raise _refused('the records move %d %s off %s (%s): more than the source has (total %d)'
                       % (wanted, rc, root['name'], where, total))
    if wanted < total:
        raise _refused('the records move %d %s off %s (%s) but it has %d: a reshape moves a class off '
                       'the root whole; say where the other %d go'
                       % (wanted, rc, root['name'], where, total, total - wanted))
    for t in sorted(per_target):
        if rc in child_inv[t]:
            raise _refused('%s already has %s inventory (total %d) while the root still has %s: moving '
                           'into a provider that already carries the class is not supported'
                           % (t, rc, child_inv[t][rc]['total'], rc))
    if len(per_target) > 1 and root_inv[rc]['reserved']:
        raise _refused('%s of %s has reserved %d and the records split it over %s: a split cannot '
                       'divide the reserved units; set the root\'s reserved to 0 first, or move it '
                       'to one target' % (rc, root['name'], root_inv[rc]['reserved'], ', '.join(sorted(per_target))))


def _child_inventories(tree, root_uuid, root, targets, by_class):
    """``{target name: inventories}``: each target's own, plus the classes moved to it."""
    root_inv = tree.inventory(root_uuid)
    child_inv = dict((name, tree.inventory(t['uuid']) if t['uuid'] else {}) for name, t in targets.items())
    for rc in sorted(by_class):
        per_target = by_class[rc]
        if rc not in root_inv:
            # already moved: the records describe the tree as it is, and the planner finds nothing
            # to do for the class, as on the discovery path on a node that has its layout
            _check_already_moved(root, rc, per_target, targets, child_inv)
            continue
        _check_class_move(root, rc, per_target, root_inv, child_inv)
        for t, units in per_target.items():
            child_inv[t][rc] = inventory_rules.normalize_inventory(
                _child_record(root_inv[rc], units, len(per_target) == 1), rc)
    return child_inv


def _moves_layout(root, targets, child_inv, by_class, records):
    """The layout :func:`layout.build_layout` would return: one child per target."""
    children = []
    for name in sorted(targets):
        target = targets[name]
        children.append({
            'name': name, 'kind': KIND_MOVE, 'device': name, 'inventories': child_inv[name],
            'traits': sorted(target['traits']), 'inherit': [], 'numa_node': -1,
            'moves_from': {}, 'traits_exact': False, 'heal': False, 'takes_all': None,
            'records': list(target['paths']),
        })
    return {'root_name': root['name'], 'options': _layout.merge_options(None), 'children': children,
            'classes': sorted(by_class), 'warnings': [], 'remove': [], 'root_traits_remove': [],
            'nova': None, 'cpu': None, 'moves': [dict((k, r[k]) for k in ('from', 'to', 'resources', 'traits'))
                                                 for r in records]}


def layout_from_moves(state, root_uuid, moves, consumers=None, policy=planner.POLICY_STRICT, lookup=None):
    """Move records -> ``(layout, ownership)``, the planner's two inputs (see the module doc).

    ``state`` is a state dict (backend.provider_tree_state) or a :class:`tree.ProviderTree`;
    ``lookup(ref)`` returns the provider a name or uuid names outside the tree (None when
    none does), so a record naming another node's provider is told apart from a typo.
    Raises :class:`MovesError` (bad records) or :class:`planner.PlanError` (a split that
    cannot be decided); nothing is written either way.
    """
    if policy not in planner.POLICIES:
        raise planner.PlanError('ownership policy must be one of %s, got %r' % (', '.join(planner.POLICIES), policy))
    tree = _tree.ProviderTree.of(state)
    root_uuid = provider_rules.normalize_uuid(root_uuid)
    root = planner.find_root(tree, root_uuid)
    records = check_records(moves)
    targets = _targets(tree, root_uuid, records, lookup)
    by_class = _by_class(targets)
    child_inv = _child_inventories(tree, root_uuid, root, targets, by_class)
    ownership = _ownership(tree, root_uuid, root, targets, by_class, child_inv, consumers, policy)
    return _moves_layout(root, targets, child_inv, by_class, records), ownership


def _ownership(tree, root_uuid, root, targets, by_class, child_inv, consumers, policy):
    """``{consumer: {target name: {RC: units}}}`` for the moved classes (see the module doc)."""
    given = _check_consumers(consumers, targets, by_class)
    ownership = {}
    undecided = {}
    target_uuids = dict((t['uuid'], name) for name, t in targets.items() if t['uuid'])
    for rc in sorted(by_class):
        per_target = by_class[rc]
        holders = {}
        for consumer in tree.consumers():
            allocs = tree.allocations(consumer)
            n = sum(((allocs.get(rp) or {}).get('resources') or {}).get(rc, 0)
                    for rp in [root_uuid] + [u for u, t in target_uuids.items() if t in per_target])
            if n:
                holders[consumer] = n
        if len(per_target) == 1:
            only = next(iter(per_target))
            for consumer, n in holders.items():
                split = (given.get(consumer) or {}).get(rc)
                if split is not None and split != {only: n}:
                    raise _refused('consumers.%s: %s goes to %s alone (%d unit(s)), the split given says %s'
                                   % (consumer, rc, only, n, _fmt_split(split)))
                ownership.setdefault(consumer, {}).setdefault(only, {})[rc] = n
            continue
        for consumer in sorted(given):
            if rc in given[consumer] and consumer not in holders:
                raise _refused('consumers.%s: it holds no %s on %s (or its targets) to split'
                               % (consumer, rc, root['name']))
        used = dict((t, 0) for t in per_target)
        for consumer, n in sorted(holders.items()):
            split = (given.get(consumer) or {}).get(rc)
            if split is None:
                undecided.setdefault(rc, []).append((consumer, n))
                continue
            if sum(split.values()) != n:
                raise _refused('consumers.%s: the split gives %d %s (%s) but the consumer holds %d on %s'
                               % (consumer, sum(split.values()), rc, _fmt_split(split), n, root['name']))
            for t, units in split.items():
                used[t] += units
                if units:
                    ownership.setdefault(consumer, {}).setdefault(t, {})[rc] = units
        for t, n in sorted(used.items()):
            cap = inventory_rules.capacity(child_inv[t][rc])
            if n > cap:
                named = sorted(c for c in given if ((given[c].get(rc) or {}).get(t)))
                raise _refused('consumers: the split puts %d %s on %s but its capacity is %d (consumers %s)'
                               % (n, rc, t, cap, ', '.join(named)))
    if undecided and policy != planner.POLICY_PACK:
        consumers_named = sorted(set(c for items in undecided.values() for c, _n in items))
        raise planner.PlanError(
            'the move records split %s, and these consumers hold it with no split given: %s. Say which '
            'target each one\'s units go to (consumers: {<uuid>: {<target>: {<class>: units}}}), or '
            'choose ownership_policy: pack. Nothing was changed.'
            % ('; '.join('%s of %s over %s' % (rc, root['name'], ', '.join(sorted(by_class[rc])))
                         for rc in sorted(undecided)),
               '; '.join('%s (%d %s)' % (c, n, rc) for rc in sorted(undecided) for c, n in undecided[rc])),
            consumers=consumers_named)
    return ownership


def _check_consumers(consumers, targets, by_class):
    """``consumers`` checked: ``{consumer uuid: {RC: {target name: units}}}``."""
    if consumers is None:
        return {}
    if not isinstance(consumers, dict):
        raise _refused('consumers must map consumer uuid -> {target: {class: units}}, got %r' % (consumers,))
    by_ref = {}
    for name, target in targets.items():
        by_ref[name] = name
        if target['uuid']:
            by_ref[target['uuid']] = name
    out = {}
    for consumer, split in consumers.items():
        if not provider_rules.is_uuid_like(consumer):
            raise _refused('consumers: %r is not a consumer uuid' % (consumer,))
        key = provider_rules.normalize_uuid(consumer)
        if not isinstance(split, dict) or not split:
            raise _refused('consumers.%s must map target -> {class: units}, got %r' % (key, split))
        entry = out.setdefault(key, {})
        for ref, per_rc in split.items():
            ref_key = provider_rules.normalize_uuid(ref) if provider_rules.is_uuid_like(ref) else ref
            name = by_ref.get(ref_key)
            if name is None:
                raise _refused('consumers.%s.%s: not a to_resource_provider of the move records (targets: %s)'
                               % (key, ref, ', '.join(sorted(targets))))
            if not isinstance(per_rc, dict) or not per_rc:
                raise _refused('consumers.%s.%s must map class -> units, e.g. {VGPU: 1}, got %r' % (key, ref, per_rc))
            for rc, units in per_rc.items():
                if rc not in by_class:
                    raise _refused('consumers.%s.%s.%s: %s is not moved by the records (moved: %s)'
                                   % (key, ref, rc, rc, ', '.join(sorted(by_class))))
                if name not in by_class[rc]:
                    raise _refused('consumers.%s.%s.%s: %s is not a target of %s (targets of %s: %s)'
                                   % (key, ref, rc, name, rc, rc, ', '.join(sorted(by_class[rc]))))
                if isinstance(units, bool) or not isinstance(units, int) or units < 0:
                    raise _refused('consumers.%s.%s.%s: units must be an integer >= 0, got %r' % (key, ref, rc, units))
                entry.setdefault(rc, {})
                entry[rc][name] = entry[rc].get(name, 0) + units
    return out


def _fmt_split(split):
    return ', '.join('%d to %s' % (n, t) for t, n in sorted(split.items()))


def plan_from_moves(state, root_uuid, moves, consumers=None, policy=planner.POLICY_STRICT, lookup=None,
                    context=None, **fields):
    """The plan of the move records: :func:`layout_from_moves`, then :func:`planner.plan_reshape`.

    ``context``: a :class:`planner.PlanContext`, or its fields as keywords.  No guest domains
    are known on this path (``instances`` None): a move in flight is found from the
    allocations, ``migrations`` and ``orphans`` alone (inflight.py).
    """
    tree = _tree.ProviderTree.of(state)
    lay, owners = layout_from_moves(tree, root_uuid, moves, consumers=consumers, policy=policy, lookup=lookup)
    return plan_of_moves_layout(tree, root_uuid, lay, owners, policy, planner.PlanContext.of(context, **fields))


def plan_of_moves_layout(state, root_uuid, lay, owners, policy, context):
    """:func:`plan_from_moves` of a layout and ownership :func:`layout_from_moves` already built."""
    plan = planner.plan_reshape(state, root_uuid, lay, owners, policy=policy,
                                context=context.replace(instances=None, devices=None))
    plan['moves'] = lay['moves']
    return plan
