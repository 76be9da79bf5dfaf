# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reshape planner: provider tree + layout + ownership -> a plan (plain data).

Inputs
    ``state``      what :func:`backend.provider_tree_state` read: every provider of
                   the node's tree with inventories/usages/traits, and the FULL
                   allocations of every consumer with an allocation in the tree
                   (so allocations outside it, e.g. a sharing DISK_GB pool, are
                   carried along unchanged); a state dict or the :class:`tree.ProviderTree`
                   of one, which is how the planner reads it;
    ``layout``     what :func:`layout.build_layout` returned;
    ``ownership``  ``{consumer: {device: units}}`` (:func:`layout.ownership_from_devices`);
    ``foreign``    ``{provider uuid: {"name", "traits", "root_provider_uuid"}}`` for the
                   providers outside the tree that the consumers use.

A class is *moved* when the root has inventory of a class the layout puts on
children.  Every consumer holding a moved class on the root gets it re-assigned
to the children of the devices it owns, in the owned amounts; with the ``pack``
policy, what ownership cannot place is packed first-fit over the children sorted
by name, respecting capacity, min/max unit and step size (rules/inventory.py's rules):
that step (6) is :mod:`.assign`'s.

The plan is JSON-serialisable, diffable and EMPTY (status ``noop``) when the
node already has the layout.  A node with something to change and a move in
flight (inflight.py: a migration consumer, an instance on two compute trees, a
consumer no guest domain on the host is) is ``deferred``: nothing is changed.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from . import discovery as _discovery
from . import assign as _assignment
from . import inflight as _inflight
from . import layout as _layout
from .kinds import registry as _kinds
from .kinds.common import PlanError
from .plan_state import PlanState
from ..rules import allocations as allocation_rules
from ..rules import inventory as inventory_rules
from ..rules import names as name_rules
from ..rules import providers as provider_rules
from .. import request as _request
from .. import tree as _tree

PLAN_VERSION = 1
# the policies are step 6's (assign.py); planner.POLICY_* stay their names for the callers
POLICY_STRICT, POLICY_PACK, POLICIES = _assignment.POLICY_STRICT, _assignment.POLICY_PACK, _assignment.POLICIES

STATUS_PLANNED = 'planned'
STATUS_NOOP = 'noop'
STATUS_DEFERRED = 'deferred'


# -- small helpers ------------------------------------------------------------

# one rule, in tree.py (verification and the reshaper compare inventories with it too)
norm_inventories = _tree.norm_inventories
# PlanError (imported above) is defined with the kinds (kinds/common.py), which raise it too;
# planner.PlanError stays its name for the callers.


def find_root(state, root_uuid):
    """The root's provider record; ``state`` is a state dict or a :class:`tree.ProviderTree`."""
    root = _tree.ProviderTree.of(state).get(root_uuid)
    if root is None:
        raise PlanError('provider %s is not in the tree that was read' % root_uuid)
    if root.get('parent_provider_uuid'):
        raise PlanError('provider %s (%s) is not a root provider: its parent is %s; name the '
                        'compute node\'s root provider'
                        % (root.get('name'), root_uuid, root['parent_provider_uuid']))
    return root


# -- the plan ---------------------------------------------------------------------

def plan_from_devices(state, root_uuid, devices, layout_options=None, policy=POLICY_STRICT,
                      ownership_overrides=None, context=None, **fields):
    """Build the layout and the ownership map from a device report, then plan.

    ``context`` (a :class:`PlanContext`, or its fields as keywords): the guest domains of
    the report are the consumers the host knows; ``migrations`` are nova's in-progress
    migration records when nova was asked, ``orphans`` the consumers nova knows neither
    as an instance nor as a migration (inflight.py).
    ``state`` is a state dict (backend.provider_tree_state) or a :class:`tree.ProviderTree`.
    """
    context = PlanContext.of(context, **fields)
    _discovery.check_report(devices)      # the report's one check in a plan
    tree = _tree.ProviderTree.of(state)
    lay = _layout_of(tree, root_uuid, devices, layout_options)
    owners = _layout.merge_ownership(_layout.ownership_of_report(devices), ownership_overrides)
    instances = (devices or {}).get('instances')
    return plan_reshape(tree, root_uuid, lay, owners, policy=policy, context=context.replace(
        instances=None if instances is None else list(instances), devices=devices))


def layout_of_checked(state, root_uuid, devices, layout_options=None):
    """The layout of a device report already checked (discovery.check_report) on this tree (its
    providers only: no consumer is needed)."""
    return _layout_of(_tree.ProviderTree.of(state), root_uuid, devices, layout_options)


def _layout_of(tree, root_uuid, devices, layout_options):
    root = find_root(tree, root_uuid)
    if not root.get('name'):
        raise _layout.LayoutError('the root provider has no name')
    source = _layout.numa_source(tree, root, devices, layout_options)
    return _layout.layout_of_report(root['name'], devices, layout_options, numa_source=source)


def numa_source(state, root_uuid, devices, options):
    """The VCPU/PCPU/MEMORY_MB inventory a NUMA layout splits (kinds/numa.py)."""
    if not _layout.merge_options(options)[_layout.KIND_NUMA]['enabled']:
        return {}
    _discovery.check_report(devices)
    tree = _tree.ProviderTree.of(state)
    return _layout.numa_source(tree, find_root(tree, root_uuid), devices, options)


def write_candidates(state, root_uuid, layout):
    """The consumers a plan of ``layout`` may write: those holding ON THE TREE a class the
    layout places on a child (the moved classes, and the classes of the children, which
    heal existing holders), and what a kind rewrites besides (``Kind.writes``: VCPU when
    the layout turns VCPU into PCPU on the root, the holders a healing child names).  A superset of the consumers :func:`plan_reshape`
    rewrites (its ``touched`` and pinned consumers): only these need their FULL allocations
    read (backend.provider_tree_state ``select``); the tree part of the others (a partial
    body) is all the plan reads of them.
    """
    tree = _tree.ProviderTree.of(state)
    root_uuid = provider_rules.normalize_uuid(root_uuid)
    classes = set(layout.get('classes') or ())
    holders = set()
    for want in layout.get('children') or ():
        classes.update(want.get('inventories') or {})
    root_inv = tree.raw_inventory(root_uuid) or {}
    for kind in _kinds.KINDS:
        more, named = kind.writes(layout, root_inv)
        classes.update(more)
        holders.update(named)
    out = set()
    for consumer in tree.consumers():
        allocs = tree.allocations(consumer, strict=False)
        if str(consumer).lower() in holders or any(
                classes & set(((entry or {}).get('resources') or {})) for entry in allocs.values()):
            out.add(consumer)
    return out


def write_request(tree, consumer, allocations):
    """The reshaper request that writes ``allocations`` for ``consumer`` (:func:`keep_type_request`
    of its body as read).  A PARTIAL body (backend.provider_tree_state: its tree part only, no
    generation, project or user) never reaches a write: PlanError, an internal error."""
    raw = tree.allocation_request(consumer)
    if _tree.is_partial(raw):
        raise PlanError('internal error: consumer %s was read only on this tree (a partial body, without '
                        'its consumer generation, project, user and allocations outside the tree) but '
                        'would be written; nothing was changed' % consumer, consumers=[consumer])
    return keep_type_request(raw, allocations)


def _orphans_on(tree, orphans, root_uuid):
    """The orphaned allocations nova confirmed on the node, each with the command that deletes it."""
    found = []
    lowered = set(str(c).lower() for c in orphans or ())
    for consumer in tree.consumers():
        if str(consumer).lower() in lowered:
            found.append({'consumer': consumer,
                          'allocations': tree.allocations(consumer),
                          'command': _inflight.orphan_command(root_uuid)})
    return found


class PlanContext(_request.Request):
    """What a plan is told besides the tree, the layout, the ownership and the policy.

    ``allow_foreign_allocations``, ``foreign`` (the providers outside the tree the consumers
    use), ``instances`` (the guest domains of the device report, None when there is none),
    ``migrations`` (nova's in-progress migration records), ``defer_in_flight`` (False: plan
    even with a move in flight, as verification does), ``orphans`` (the consumers nova knows
    neither as an instance nor as a migration), ``devices`` (the device report) and
    ``service_disabled`` (the node's nova-compute service is disabled in nova when the plan is
    written: the root's marks include layout.DISABLED_TRAIT, as nova reports such a node).
    """

    FIELDS = (('allow_foreign_allocations', False), ('foreign', None), ('instances', None), ('migrations', None),
              ('defer_in_flight', True), ('orphans', None), ('devices', None), ('service_disabled', False))


def plan_reshape(state, root_uuid, layout, ownership=None, policy=POLICY_STRICT, context=None, **fields):
    """Compute the reshape plan (see the module docstring); raises PlanError.

    ``context``: a :class:`PlanContext`, or its fields as keywords.
    The plan's ``orphans`` lists the orphaned allocations nova confirmed on the node, each
    with the command that deletes it (empty when nova was not asked).  ``devices`` (the host's
    device report, when the plan comes from one) lets a move in flight say what the host's
    devices show (inflight.find).
    ``state`` is a state dict (backend.provider_tree_state) or a :class:`tree.ProviderTree`.
    """
    context = PlanContext.of(context, **fields)
    tree = _tree.ProviderTree.of(state)
    if context.service_disabled:
        layout = dict(layout, root_traits_add=sorted(set(layout.get('root_traits_add') or ()) | {_layout.DISABLED_TRAIT}))
    plan = _plan_reshape(tree, root_uuid, layout, ownership, policy, context)
    plan['orphans'] = _orphans_on(tree, context.orphans, provider_rules.normalize_uuid(root_uuid))
    return plan


def _plan_reshape(tree, root_uuid, layout, ownership, policy, context):
    """The plan's steps, in order (docs/architecture.md, "the plan"); each kind of
    :data:`kinds.registry.KINDS` adds its own rules at its step."""
    if policy not in POLICIES:
        raise PlanError('ownership policy must be one of %s, got %r' % (', '.join(POLICIES), policy))
    work = PlanState(tree, root_uuid, find_root(tree, provider_rules.normalize_uuid(root_uuid)), layout,
                     ownership, policy, context.foreign)
    _resolve_children(work)
    _check(work)
    _inventories(work)
    if context.defer_in_flight:
        waiting = _in_flight(work, context.allow_foreign_allocations, context.instances, context.migrations,
                             context.orphans, context.devices)
        if waiting is not None:
            return waiting
    for kind in _kinds.KINDS:
        reason = kind.prepare_root(work)
        if reason:
            return _finish(work, reason)
    _assignment.reassign(work)
    for kind in _kinds.KINDS:
        kind.settle(work)
    _check_children(work)
    plan = _finish(work)
    plan.update(work.results)
    return plan


def _resolve_children(work):
    """Step 1: every child of the layout, reused by name, else a deterministic uuid; its final
    inventories (fields the layout leaves to Placement inherited) and traits."""
    tree, root_uuid = work.tree, work.root_uuid
    for want in work.layout['children']:
        uuid = tree.uuid_of(want['name'])
        exists = uuid is not None
        if exists and uuid == root_uuid:
            raise PlanError('the layout names the root provider itself (%s) as a child' % want['name'])
        if not exists:
            uuid = _layout.child_uuid(root_uuid, want['name'])
            if uuid in tree:
                raise PlanError('provider %s in the tree already has the uuid planned for child %s '
                                'under another name (%s)' % (uuid, want['name'], tree.get(uuid)['name']))
        if exists and tree.parent(uuid) != root_uuid:
            work.warn('child %s exists but its parent is %s, not the root; it is reused as is'
                      % (want['name'], tree.parent(uuid)))
        cur_inv = tree.inventory(uuid)
        final_inv = {}
        for rc, rec in want['inventories'].items():
            rec = dict(rec)
            for field in want.get('inherit') or []:
                if rc in cur_inv and field not in rec:
                    rec[field] = cur_inv[rc][field]
            final_inv[rc] = inventory_rules.normalize_inventory(rec, rc)
        cur_traits = tree.traits(uuid)
        if want.get('traits_exact'):
            # nova's PCI tracking sets the trait set exactly (update_traits)
            final_traits = sorted(set(want['traits']))
        else:
            final_traits = sorted(set(cur_traits) | set(want['traits']))
        work.children.append({
            'name': want['name'], 'uuid': uuid, 'kind': want['kind'], 'device': want['device'],
            'exists': exists, 'inventories': final_inv, 'traits': want['traits'],
            'traits_before': cur_traits, 'traits_after': final_traits,
            'moves_from': dict(want.get('moves_from') or {}), 'heal': bool(want.get('heal')),
            'holders': dict(want.get('holders') or {}), 'takes_all': want.get('takes_all'),
            'guest_models': dict(want.get('guest_models') or {}),
        })
    work.child_by_uuid = dict((c['uuid'], c) for c in work.children)


def _check(work):
    """Step 2: the kinds' refusals (what nova 34 would refuse or change on its first start),
    then the providers nova 34 would delete."""
    for kind in _kinds.KINDS:
        kind.check_root(work)
    nova = work.layout.get('nova')
    if nova is None:
        return
    files = ', '.join(nova.get('files') or []) or 'nova.conf'
    present = set(work.tree.names().values())
    gone = [n for n in work.layout.get('remove') or [] if n in present]
    if gone:
        raise PlanError('providers %s get no inventory from nova 34 with %s and this host '
                        '([mdev_<type>]max_instances, or a memory encryption model with no slots '
                        'left): nova would delete them on its first start. Fix the configuration '
                        'or remove them, then plan again. Nothing was changed.'
                        % (', '.join(gone), files))


def _inventories(work):
    """Step 3: the inventories before and after (the moved classes leave the root, the
    children get theirs), the allocations as they are, the names of every provider."""
    tree, root_uuid = work.tree, work.root_uuid
    work.inv_before = dict((u, tree.inventory(u)) for u in tree.providers)
    work.inv_after = copy.deepcopy(work.inv_before)
    work.inv_after[root_uuid] = dict((rc, rec) for rc, rec in work.root_inv.items() if rc not in work.moved)
    for child in work.children:
        work.inv_before.setdefault(child['uuid'], {})
        work.inv_after[child['uuid']] = child['inventories']
    work.current = tree.all_allocations()
    work.names = tree.names()
    work.names.update((c['uuid'], c['name']) for c in work.children)
    for rp, info in work.foreign.items():
        work.names.setdefault(rp, info.get('name') or rp)


def _in_flight(work, allow_foreign_allocations, instances, migrations, orphans, devices):
    """Step 4: a move in flight (inflight.py: every form nova uses) defers a node with
    something to change; a node already in the layout stays "already done".  None: go on."""
    tree, layout = work.tree, work.layout
    touched_classes = set(work.moved)
    explained = set(work.ownership)
    for kind in _kinds.KINDS:
        touched_classes.update(kind.writes(layout, work.root_inv)[0])
        explained.update(kind.explained(layout))
    reasons, remarks, _named = _inflight.find(
        tree.state, work.root['name'], tree.providers, foreign=work.foreign, touched=touched_classes,
        instances=instances, migrations=migrations, explained=explained,
        two_trees_ok=allow_foreign_allocations, root_uuid=work.root_uuid, orphans=orphans, devices=devices)
    blind = _inflight.no_domain_found(tree.state, work.root['name'], tree.providers, touched_classes, instances)
    if blind:
        work.warnings.append(blind)
    work.warnings.extend(remarks)
    if not reasons:
        return None
    try:
        trial = plan_reshape(tree, work.root_uuid, layout, work.ownership, policy=work.policy,
                             allow_foreign_allocations=True, foreign=work.foreign, defer_in_flight=False)
    except PlanError:
        trial = None
    if trial is not None and trial['status'] == STATUS_NOOP:
        trial['warnings'] = work.warnings + [r + ' (nothing to reshape here)' for r in reasons]
        return trial
    return _finish(work, 'move in flight: %s' % '; '.join(reasons))


def _check_children(work):
    """Step 8: every planned allocation on a child obeys the unit checks and capacity."""
    problems = []
    new_allocs, used, inv_after = work.new_allocs, work.used, work.inv_after
    for child in work.children:
        inv = inv_after[child['uuid']]
        for consumer in sorted(new_allocs):
            for rc, amount in (new_allocs[consumer].get(child['uuid']) or {}).get('resources', {}).items():
                if rc not in inv:
                    problems.append('consumer %s would hold %d %s on %s, which has no %s inventory'
                                    % (consumer, amount, rc, child['name'], rc))
                    continue
                if allocation_rules.check_amount(inv[rc], amount, rc, child['uuid']):
                    problems.append('consumer %s: %d %s on %s violates min_unit %d / max_unit %d / '
                                    'step_size %d' % (consumer, amount, rc, child['name'],
                                                      inv[rc]['min_unit'], inv[rc]['max_unit'],
                                                      inv[rc]['step_size']))
        for rc, after in sorted((used.get(child['uuid']) or {}).items()):
            if rc not in inv:
                if after:
                    problems.append('%s has %d %s allocated but the layout gives it no %s inventory'
                                    % (child['name'], after, rc, rc))
                continue
            before = (work.used_before.get(child['uuid']) or {}).get(rc, 0)
            if not inventory_rules.fits(inv[rc], before, after):
                problems.append('%s would have %d %s allocated but its capacity is %d'
                                % (child['name'], after, rc, inventory_rules.capacity(inv[rc])))
    if problems:
        raise PlanError('the planned allocations do not fit the layout: %s. Nothing was changed.'
                        % '; '.join(problems))


def _providers_out(work, inv_after):
    """Every provider as the plan leaves it, and the uuids whose inventory changes."""
    tree, children = work.tree, work.children
    provider_out = {}
    inventory_changes = []
    for uuid in sorted(set(work.inv_before) | set(inv_after)):
        exists = uuid in tree
        child = next((c for c in children if c['uuid'] == uuid), None)
        changed = work.inv_before.get(uuid, {}) != inv_after.get(uuid, {})
        if changed:
            inventory_changes.append(uuid)
        provider_out[uuid] = {
            'name': work.names.get(uuid, uuid),
            'parent_provider_uuid': tree.parent(uuid) if exists else work.root_uuid,
            'generation': tree.generation(uuid) if exists else None,
            'new': not exists,
            'inventories': inv_after.get(uuid, {}),
            'inventory_changed': changed,
            'traits': child['traits_after'] if child else tree.traits(uuid),
        }
    return provider_out, inventory_changes


def _root_traits(work, provider_out, deferred_reason, reshapes):
    """The root's trait change after the reshape, or None: the traits the kinds take off
    (``Kind.root_cleanup``) and, when the plan ``reshapes`` the node, the ones it gets
    (:func:`_root_marks`).  A rollback puts the snapshot's root traits back."""
    root_uuid = work.root_uuid
    root_before = work.tree.traits(root_uuid)
    drop = set()
    for kind in _kinds.KINDS:
        drop.update(kind.root_cleanup(work.layout, work.moved))
    add = _root_marks(work) if reshapes else set()
    if not (drop & set(root_before) or add) or deferred_reason:
        return None
    root_traits = {'uuid': root_uuid, 'name': work.root['name'], 'before': root_before,
                   'after': sorted((set(root_before) - drop) | add)}
    provider_out[root_uuid]['traits'] = root_traits['after']
    return root_traits


def _root_marks(work):
    """The traits nova 34 marks every compute node with (``layout["root_traits_add"]``,
    layout.ROOT_TRAITS, and layout.DISABLED_TRAIT when the plan is told that the service is
    disabled) that the root lacks.  A plan that reshapes the node adds them after
    its POST /reshaper with the kinds' root clean-up (so a rollback takes them off again); a
    plan that only creates children or sets their traits adds them with those traits."""
    return set(work.layout.get('root_traits_add') or ()) - set(work.tree.traits(work.root_uuid))


def _finish(work, deferred_reason=None):
    """Step 9: the plan as plain data (a deferred node: nothing to write, ``deferred_reason``)."""
    tree, children, root_uuid = work.tree, work.children, work.root_uuid
    new_allocs = {} if deferred_reason else work.new_allocs
    inv_after = work.inv_before if deferred_reason else work.inv_after
    assignments = {} if deferred_reason else work.assignments
    allocations = {}
    for consumer in sorted(new_allocs):
        if new_allocs[consumer] == work.current[consumer]:
            continue
        allocations[consumer] = write_request(tree, consumer, new_allocs[consumer])
    provider_out, inventory_changes = _providers_out(work, inv_after)
    reshapes = bool(inventory_changes or allocations)
    root_traits = _root_traits(work, provider_out, deferred_reason, reshapes)
    create = [{'name': c['name'], 'uuid': c['uuid'], 'parent_provider_uuid': root_uuid}
              for c in children if not c['exists']]
    set_traits = [{'name': c['name'], 'uuid': c['uuid'], 'traits': c['traits_after']}
                  for c in children if c['traits_after'] != c['traits_before']]
    marks = _root_marks(work) if (create or set_traits) and not reshapes and not deferred_reason else set()
    if marks:
        after = sorted(set(work.tree.traits(root_uuid)) | marks)
        set_traits.append({'name': work.root['name'], 'uuid': root_uuid, 'traits': after})
        provider_out[root_uuid]['traits'] = after
    ensure_rcs = sorted(set(rc for c in children for rc in c['inventories'] if name_rules.is_custom(rc)))
    ensure_traits = sorted(set(t for c in children for t in c['traits'] if name_rules.is_custom(t)))
    moved_units = {}
    moved_records = 0
    for consumer, per_rc in assignments.items():
        for rc, rec in per_rc.items():
            moved_records += 1
            moved_units[rc] = moved_units.get(rc, 0) + rec['amount']
    if deferred_reason:
        status = STATUS_DEFERRED
        create, set_traits, inventory_changes, allocations = [], [], [], {}
        for p in provider_out.values():
            p['inventory_changed'] = False
    elif create or set_traits or inventory_changes or allocations:
        status = STATUS_PLANNED
    else:
        status = STATUS_NOOP
    planned = status == STATUS_PLANNED
    plan = {
        'version': PLAN_VERSION,
        'status': status,
        'root': {'uuid': root_uuid, 'name': work.root['name'], 'generation': work.root.get('generation')},
        'policy': work.policy,
        'layout_classes': list(work.layout['classes']),
        'moved_classes': work.moved if status != STATUS_DEFERRED else [],
        'children': [{'name': c['name'], 'uuid': c['uuid'], 'kind': c['kind'], 'device': c['device'],
                      'exists': c['exists'], 'inventories': c['inventories'], 'traits': c['traits'],
                      'takes_all': c['takes_all']}
                     for c in children],
        'create_children': create,
        'set_traits': set_traits,
        'root_traits': root_traits,
        'ensure': {'resource_classes': ensure_rcs if planned else [], 'traits': ensure_traits if planned else []},
        'providers': provider_out,
        'inventory_changes': inventory_changes,
        'allocations': allocations,
        'assignments': assignments if planned else {},
        'moved': {'consumers': len(allocations), 'allocations': moved_records if planned else 0,
                  'units': moved_units if planned else {}},
        'deferred_reason': deferred_reason,
        'warnings': work.warnings,
    }
    for kind in _kinds.KINDS:
        for key in kind.plan_keys:
            plan[key] = None
    plan['diff'] = plan_diff(plan, tree, work.names)
    return plan


def keep_type_request(raw, allocations):
    """A reshaper allocation request that leaves the consumer's type as Placement has it.

    No ``consumer_type`` key: the reshape is sent at microversion 1.37, where
    Placement keeps an existing consumer's type (``unknown`` included, which
    nova 34 leaves on every consumer it writes) instead of relabelling it.
    """
    return {
        'allocations': allocations,
        'project_id': raw.get('project_id'),
        'user_id': raw.get('user_id'),
        'consumer_generation': raw.get('consumer_generation'),
    }


def _named_allocs(allocs, names):
    return dict((names.get(rp, rp), dict(entry.get('resources', {}))) for rp, entry in allocs.items())


def plan_diff(plan, state, names):
    """Per-provider and per-consumer before/after of what the plan changes (names, not uuids).

    ``state`` is a state dict or a :class:`tree.ProviderTree`.
    """
    tree = _tree.ProviderTree.of(state)
    before = {'providers': {}, 'consumers': {}}
    after = {'providers': {}, 'consumers': {}}
    touched = set(plan['inventory_changes']) | set(c['uuid'] for c in plan['create_children']) \
        | set(t['uuid'] for t in plan['set_traits'])
    for uuid in sorted(touched, key=lambda u: names.get(u, u)):
        name = names.get(uuid, uuid)
        if uuid in tree:
            before['providers'][name] = {'uuid': uuid,
                                         'inventories': tree.inventory(uuid),
                                         'traits': tree.traits(uuid)}
        after['providers'][name] = {'uuid': uuid,
                                    'inventories': plan['providers'][uuid]['inventories'],
                                    'traits': plan['providers'][uuid]['traits']}
    for consumer, body in sorted(plan['allocations'].items()):
        before['consumers'][consumer] = _named_allocs(tree.allocations(consumer), names)
        after['consumers'][consumer] = _named_allocs(body['allocations'], names)
    return {'before': before, 'after': after}


def reshape_body(plan):
    """The POST /reshaper body of a plan whose children all exist (generations known)."""
    if plan['status'] != STATUS_PLANNED:
        raise PlanError('plan status is %s: there is nothing to reshape' % plan['status'])
    if plan['create_children']:
        raise PlanError('the plan still has children to create (%s); create them and re-plan first'
                        % ', '.join(c['name'] for c in plan['create_children']))
    inventories = {}
    for uuid in plan['inventory_changes']:
        prov = plan['providers'][uuid]
        if prov['generation'] is None:
            raise PlanError('provider %s has no generation in the plan' % prov['name'])
        inventories[uuid] = {'resource_provider_generation': prov['generation'],
                             'inventories': prov['inventories']}
    allocations = copy.deepcopy(plan['allocations'])
    if not inventories:
        # Placement's reshaper schema wants at least one provider: name the root
        # with the inventory it has (a no-op for the inventory, one generation bump).
        root = plan['providers'][plan['root']['uuid']]
        inventories[plan['root']['uuid']] = {'resource_provider_generation': root['generation'],
                                             'inventories': root['inventories']}
    return {'inventories': inventories, 'allocations': allocations}


def summary(plan, created=None):
    """One line for logs and the module's msg.

    ``created`` (names of the children created on the way) switches to the past
    tense: the plan was applied.
    """
    name = plan['root']['name']
    if plan['status'] == STATUS_DEFERRED:
        return 'node %s deferred: %s' % (name, plan['deferred_reason'])
    if plan['status'] == STATUS_NOOP:
        return 'node %s already has the layout: nothing to do' % name
    past = created is not None
    if not past:
        head = ('node %s: %d child(ren) to create, inventory of %d provider(s) to change'
                % (name, len(plan['create_children']), len(plan['inventory_changes'])))
    else:
        head = ('node %s: created %d child(ren), changed the inventory of %d provider(s)'
                % (name, len(created), len(plan['inventory_changes'])))
    return '%s, %s' % (head, ', '.join(_writes_text(plan, past)))


def _writes_text(plan, past):
    """What the plan writes into allocations: the moves to children, then what each kind
    writes itself (``Kind.said``: the VCPU to PCPU conversion of the pinned guests), each
    said apart; "no allocation" when nothing."""
    parts = []
    units = plan['moved']['units']
    own = any(plan.get(key) for kind in _kinds.KINDS for key in kind.plan_keys)
    if units:
        text = ', '.join('%d %s' % (n, rc) for rc, n in sorted(units.items()))
        # a kind that rewrites allocations of its own counts its consumers apart
        movers = len(plan.get('assignments') or {}) if own else plan['moved']['consumers']
        parts.append(('moved %s of %d consumer(s)' if past else '%s of %d consumer(s) to move') % (text, movers))
    for kind in _kinds.KINDS:
        parts.extend(kind.said(plan, past))
    if not parts:
        parts.append('moved no allocation' if past else 'no allocation to move')
    return parts
