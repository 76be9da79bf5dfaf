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
by name, respecting capacity, min/max unit and step size (rules/inventory.py's rules).

The plan is JSON-serialisable, diffable and EMPTY (status ``noop``) when the
node already has the layout.  A node with something to change and a move in
flight (inflight.py: a migration consumer, an instance on two compute trees, a
consumer no guest domain on the host is) is ``deferred``: nothing is changed.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from . import inflight as _inflight
from . import layout as _layout
from ..rules import allocations as allocation_rules
from ..rules import inventory as inventory_rules
from ..rules import names as name_rules
from ..rules import providers as provider_rules
from .. import tree as _tree
from ..errors import PlacementError

PLAN_VERSION = 1
POLICY_STRICT = 'strict'
POLICY_PACK = 'pack'
POLICIES = (POLICY_STRICT, POLICY_PACK)

STATUS_PLANNED = 'planned'
STATUS_NOOP = 'noop'
STATUS_DEFERRED = 'deferred'


class PlanError(PlacementError):
    """The plan cannot be made (unmapped consumer, capacity, bad input).

    ``consumers`` names the consumers at fault (may be empty).
    """

    status = 0
    default_code = 'placement_upgrade.plan'

    def __init__(self, detail, consumers=None, **kwargs):
        kwargs.setdefault('title', 'Reshape Plan Refused')
        super(PlanError, self).__init__(detail, **kwargs)
        self.consumers = sorted(consumers or [])


# -- small helpers ------------------------------------------------------------

# one rule, in tree.py (verification and the reshaper compare inventories with it too)
norm_inventories = _tree.norm_inventories


def _amount_on(allocs, rp, rc):
    return ((allocs.get(rp) or {}).get('resources') or {}).get(rc, 0)


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


def numa_source(state, root_uuid, devices, options):
    """The VCPU/PCPU/MEMORY_MB inventory a NUMA layout splits.

    The root's inventory plus what NUMA children of that layout already hold, so
    the split is the same before and after a reshape (the rerun is a no-op).
    """
    opts = _layout.merge_options(options)
    if not opts[_layout.KIND_NUMA]['enabled']:
        return {}
    tree = _tree.ProviderTree.of(state)
    root = find_root(tree, root_uuid)
    names = set(_layout.numa_child_names(root['name'], devices, options))
    sources = [tree.raw_inventory(root_uuid)]
    for uuid in tree.uuids():
        if uuid != root_uuid and tree.get(uuid).get('name') in names:
            sources.append(tree.raw_inventory(uuid))
    out = {}
    for rc in opts[_layout.KIND_NUMA]['resource_classes']:
        recs = [norm_inventories({rc: s[rc]})[rc] for s in sources if rc in s]
        if not recs:
            continue
        out[rc] = {
            'total': sum(r['total'] for r in recs),
            'reserved': sum(r['reserved'] for r in recs),
            'min_unit': min(r['min_unit'] for r in recs),
            'max_unit': max(r['max_unit'] for r in recs),
            'step_size': recs[0]['step_size'],
            'allocation_ratio': recs[0]['allocation_ratio'],
        }
    return out


# -- the plan ---------------------------------------------------------------------

def plan_from_devices(state, root_uuid, devices, layout_options=None, policy=POLICY_STRICT,
                      ownership_overrides=None, allow_foreign_allocations=False, foreign=None,
                      migrations=None, defer_in_flight=True, orphans=None):
    """Build the layout and the ownership map from a device report, then plan.

    The guest domains of the report are the consumers the host knows; ``migrations``
    are nova's in-progress migration records when nova was asked, ``orphans`` the
    consumers nova knows neither as an instance nor as a migration (inflight.py).
    ``state`` is a state dict (backend.provider_tree_state) or a :class:`tree.ProviderTree`.
    """
    tree = _tree.ProviderTree.of(state)
    lay = layout_from_devices(tree, root_uuid, devices, layout_options)
    owners = _layout.merge_ownership(_layout.ownership_from_devices(devices), ownership_overrides)
    instances = (devices or {}).get('instances')
    return plan_reshape(tree, root_uuid, lay, owners, policy=policy,
                        allow_foreign_allocations=allow_foreign_allocations, foreign=foreign,
                        instances=None if instances is None else list(instances),
                        migrations=migrations, defer_in_flight=defer_in_flight, orphans=orphans,
                        devices=devices)


def layout_from_devices(state, root_uuid, devices, layout_options=None):
    """The layout of a device report on this tree (its providers only: no consumer is needed)."""
    tree = _tree.ProviderTree.of(state)
    root = find_root(tree, root_uuid)
    return _layout.build_layout(root['name'], devices, layout_options,
                                numa_source=numa_source(tree, root_uuid, devices, layout_options))


def write_candidates(state, root_uuid, layout):
    """The consumers a plan of ``layout`` may write: those holding ON THE TREE a class the
    layout places on a child (the moved classes, and the classes of the children, which
    heal existing holders), VCPU when the layout turns VCPU into PCPU on the root, and the
    holders a healing child names.  A superset of the consumers :func:`plan_reshape`
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
        if want.get('heal'):
            holders.update(str(c).lower() for c in want.get('holders') or {})
    if layout.get('cpu') and 'PCPU' not in (tree.raw_inventory(root_uuid) or {}):
        classes.add('VCPU')
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


def plan_reshape(state, root_uuid, layout, ownership=None, policy=POLICY_STRICT,
                 allow_foreign_allocations=False, foreign=None, instances=None, migrations=None,
                 defer_in_flight=True, orphans=None, devices=None):
    """Compute the reshape plan (see the module docstring); raises PlanError.

    The plan's ``orphans`` lists the orphaned allocations nova confirmed on the node, each
    with the command that deletes it (empty when nova was not asked).  ``devices`` (the host's
    device report, when the plan comes from one) lets a move in flight say what the host's
    devices show (inflight.find).
    ``state`` is a state dict (backend.provider_tree_state) or a :class:`tree.ProviderTree`.
    """
    tree = _tree.ProviderTree.of(state)
    plan = _plan_reshape(tree, root_uuid, layout, ownership=ownership, policy=policy,
                         allow_foreign_allocations=allow_foreign_allocations, foreign=foreign,
                         instances=instances, migrations=migrations, defer_in_flight=defer_in_flight,
                         orphans=orphans, devices=devices)
    plan['orphans'] = _orphans_on(tree, orphans, provider_rules.normalize_uuid(root_uuid))
    return plan


def _plan_reshape(tree, root_uuid, layout, ownership=None, policy=POLICY_STRICT,
                  allow_foreign_allocations=False, foreign=None, instances=None, migrations=None,
                  defer_in_flight=True, orphans=None, devices=None):
    if policy not in POLICIES:
        raise PlanError('ownership policy must be one of %s, got %r' % (', '.join(POLICIES), policy))
    root_uuid = provider_rules.normalize_uuid(root_uuid)
    root = find_root(tree, root_uuid)
    foreign = foreign or {}
    ownership = ownership or {}
    warnings = list(layout.get('warnings') or [])

    # -- children: reuse by name, else a deterministic uuid ---------------------
    children = []
    for want in layout['children']:
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
            warnings.append('child %s exists but its parent is %s, not the root; it is reused as is'
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
        children.append({
            'name': want['name'], 'uuid': uuid, 'kind': want['kind'], 'device': want['device'],
            'exists': exists, 'inventories': final_inv, 'traits': want['traits'],
            'traits_before': cur_traits, 'traits_after': final_traits,
            'moves_from': dict(want.get('moves_from') or {}), 'heal': bool(want.get('heal')),
            'holders': dict(want.get('holders') or {}), 'takes_all': want.get('takes_all'),
            'guest_models': dict(want.get('guest_models') or {}),
        })
    child_by_uuid = dict((c['uuid'], c) for c in children)

    _check_nova_rules(layout, tree, root_uuid, children)

    # -- inventories ------------------------------------------------------------
    root_inv = tree.inventory(root_uuid)
    moved = sorted(rc for rc in root_inv if rc in layout['classes'])
    _check_root_classes(tree, root, root_inv, moved, layout, children)
    inv_before = dict((u, tree.inventory(u)) for u in tree.providers)
    inv_after = copy.deepcopy(inv_before)
    inv_after[root_uuid] = dict((rc, rec) for rc, rec in root_inv.items() if rc not in moved)
    for child in children:
        inv_before.setdefault(child['uuid'], {})
        inv_after[child['uuid']] = child['inventories']

    current = tree.all_allocations()
    names = tree.names()
    names.update((c['uuid'], c['name']) for c in children)
    for rp, info in foreign.items():
        names.setdefault(rp, info.get('name') or rp)

    # -- moves in flight (inflight.py: every form nova uses) -------------------------
    if defer_in_flight:
        touched_classes = set(moved)
        if layout.get('cpu') and 'PCPU' not in root_inv:
            touched_classes.add('VCPU')
        reasons, remarks, _named = _inflight.find(
            tree.state, root['name'], tree.providers, foreign=foreign, touched=touched_classes,
            instances=instances, migrations=migrations,
            explained=set(ownership) | set((layout.get('cpu') or {}).get('pinned') or {}),
            two_trees_ok=allow_foreign_allocations, root_uuid=root_uuid, orphans=orphans, devices=devices)
        warnings.extend(remarks)
        if reasons:
            # a node already in the layout stays "already done": only a node with something
            # to change waits for the move
            try:
                trial = plan_reshape(tree, root_uuid, layout, ownership, policy=policy,
                                     allow_foreign_allocations=True, foreign=foreign,
                                     defer_in_flight=False)
            except PlanError:
                trial = None
            if trial is not None and trial['status'] == STATUS_NOOP:
                trial['warnings'] = warnings + [r + ' (nothing to reshape here)' for r in reasons]
                return trial
            reason = 'move in flight: %s' % '; '.join(reasons)
            return _finish(tree, root, moved, layout, children, inv_before, inv_before, {}, {},
                           policy, warnings, names, reason, current)

    # -- VCPU -> PCPU (Train): who is pinned, decided before anything moves ------
    cpu = layout.get('cpu')
    pinned_consumers = []
    cpu_plan = None
    if cpu and 'PCPU' not in root_inv:
        undecided = []
        for consumer in sorted(current):
            if not _amount_on(current[consumer], root_uuid, 'VCPU'):
                continue
            verdict = cpu['pinned'].get(consumer, 'no guest domain on this host is this consumer (a '
                                                  'migration in flight, or an orphan allocation)')
            if verdict is True:
                pinned_consumers.append(consumer)
            elif verdict is not False:
                undecided.append('%s: %s' % (consumer, verdict))
        if undecided:
            reason = ('VCPU to PCPU ([compute]cpu_dedicated_set in %s): cannot tell whether these '
                      'consumers are pinned guests: %s. Name them in the layout option pcpu.pinned or '
                      'pcpu.unpinned, or reshape once the migration is over'
                      % (cpu['files'], '; '.join(undecided)))
            return _finish(tree, root, moved, layout, children, inv_before, inv_before, {}, {},
                           policy, warnings, names, reason, current)
        cpu_plan = _cpu_inventory(root_inv, cpu, layout.get('nova') or {})
        inv_after[root_uuid].update(cpu_plan['set'])
        for rc in cpu_plan['drop']:
            inv_after[root_uuid].pop(rc, None)

    # -- consumers: re-assign the moved classes -------------------------------
    used = _tree.sum_allocations(current)
    used_before = copy.deepcopy(used)
    healers = [c for c in children if c['heal']]
    touched = [c for c in current
               if any(_amount_on(current[c], root_uuid, rc) for rc in moved)
               or any(c in child['holders'] for child in healers)]
    new_allocs = dict((c, copy.deepcopy(current[c])) for c in touched)
    assignments = {}
    unmapped = []
    to_pack = []
    for consumer in touched:
        allocs = new_allocs[consumer]
        root_entry = allocs.get(root_uuid, {'resources': {}})
        owned = ownership.get(consumer) or {}
        for rc in moved:
            amount = root_entry['resources'].pop(rc, 0)
            if not amount:
                continue
            used[root_uuid][rc] -= amount
            targets = [c for c in children if _child_rc(c, rc) in c['inventories']]
            taker = _layout.taker(targets, rc)
            if taker is not None:
                # nova's rule for this class: every allocation of the root goes to that child
                # (MEM_ENCRYPTION_CONTEXT -> <node>_amd_sev, whatever the guest's model)
                _add(allocs, used, taker['uuid'], rc, amount)
                seen = taker['guest_models'].get(consumer, 'amd-sev')
                if seen != 'amd-sev':
                    warnings.append('consumer %s runs as %s (domain <launchSecurity>) but holds %s on '
                                    'the root: nova 34 moves every such allocation to %s, and so does '
                                    'this reshape' % (consumer, seen, rc, taker['name']))
                assignments.setdefault(consumer, {})[rc] = {
                    'how': 'nova-rule', 'amount': amount, 'to': {taker['name']: amount}}
                continue
            want, reason = _by_ownership(rc, amount, targets, owned, allocs)
            owned_total = sum(want.values())
            if reason is None:
                for child_uuid, n in want.items():
                    _add(allocs, used, child_uuid, _child_rc(child_by_uuid[child_uuid], rc), n)
                assignments.setdefault(consumer, {})[rc] = {
                    'how': 'ownership', 'amount': amount,
                    'to': _named_units(want, child_by_uuid)}
            elif policy == POLICY_PACK:
                # what ownership does place stays there; the rest is packed
                partial = want if owned_total < amount else {}
                for child_uuid, n in partial.items():
                    _add(allocs, used, child_uuid, _child_rc(child_by_uuid[child_uuid], rc), n)
                to_pack.append((consumer, rc, amount, targets, reason, partial))
            else:
                unmapped.append((consumer, rc, amount, reason))
        if not root_entry['resources']:
            allocs.pop(root_uuid, None)
    if unmapped:
        raise PlanError(
            'cannot assign moved resources to devices by ownership: %s. Nothing was changed. '
            'Fix the device report (guest domain XML / mdevs), give explicit ownership, or '
            'choose the pack policy.'
            % '; '.join('consumer %s: %d %s (%s)' % (c, n, rc, why) for c, rc, n, why in unmapped),
            consumers=[c for c, _rc, _n, _w in unmapped])
    for consumer, rc, amount, targets, reason, partial in to_pack:
        allocs = new_allocs[consumer]
        placed = _pack(consumer, rc, amount - sum(partial.values()), targets, allocs, used, inv_after)
        for child_uuid, n in placed.items():
            _add(allocs, used, child_uuid, _child_rc(child_by_uuid[child_uuid], rc), n)
        to = dict(partial)
        for child_uuid, n in placed.items():
            to[child_uuid] = to.get(child_uuid, 0) + n
        assignments.setdefault(consumer, {})[rc] = {
            'how': 'ownership+pack' if partial else 'pack', 'amount': amount, 'reason': reason,
            'to': _named_units(to, child_by_uuid)}

    _heal(healers, current, new_allocs, used, assignments, warnings)
    if cpu_plan is not None:
        for consumer in pinned_consumers:
            allocs = new_allocs.setdefault(consumer, copy.deepcopy(current[consumer]))
            res = allocs[root_uuid]['resources']
            n = res.pop('VCPU')
            res['PCPU'] = res.get('PCPU', 0) + n
            used[root_uuid]['VCPU'] -= n
            used[root_uuid]['PCPU'] = used[root_uuid].get('PCPU', 0) + n
        cpu_plan['pinned'] = list(pinned_consumers)
        # what the conversion writes, for the result message (summary)
        cpu_plan['units'] = sum(_amount_on(current[c], root_uuid, 'VCPU') for c in pinned_consumers)
        cpu_plan['root_inventory'] = {
            'before': dict((rc, root_inv[rc]['total']) for rc in ('VCPU', 'PCPU') if rc in root_inv),
            'after': dict((rc, inv_after[root_uuid][rc]['total']) for rc in ('VCPU', 'PCPU')
                          if rc in inv_after[root_uuid])}
        _check_root_cpu(root, inv_after[root_uuid], used.get(root_uuid) or {}, used_before.get(root_uuid) or {})
    _check_children(children, new_allocs, used, used_before, inv_after)
    plan = _finish(tree, root, moved, layout, children, inv_before, inv_after, new_allocs,
                   assignments, policy, warnings, names, None, current)
    plan['cpu'] = cpu_plan
    return plan


def _cpu_inventory(root_inv, cpu, nova):
    """The root's VCPU/PCPU records nova 34 reports under ``cpu_dedicated_set``."""
    default = nova.get('default') or {}
    out = {'set': {'PCPU': inventory_rules.normalize_inventory(dict(cpu['pcpu']), 'PCPU')}, 'drop': []}
    if cpu['vcpu_total']:
        rec = dict(root_inv.get('VCPU') or {})
        n = cpu['vcpu_total']
        rec.update({'total': n, 'max_unit': n, 'min_unit': 1, 'step_size': 1,
                    'reserved': default.get('reserved_host_cpus') or 0})
        if default.get('cpu_allocation_ratio') is not None:
            rec['allocation_ratio'] = default['cpu_allocation_ratio']
        out['set']['VCPU'] = inventory_rules.normalize_inventory(rec, 'VCPU')
    else:
        out['drop'].append('VCPU')
    return out


def _check_root_cpu(root, inv, used, used_before):
    for rc in ('VCPU', 'PCPU'):
        after = used.get(rc, 0)
        if rc not in inv:
            if after:
                raise PlanError('unpinned guests hold %d VCPU on %s but nova 34 would report no VCPU '
                                '(cpu_dedicated_set without cpu_shared_set). Set cpu_shared_set, or '
                                'name them in pcpu.pinned. Nothing was changed.' % (after, root['name']))
            continue
        if not inventory_rules.fits(inv[rc], used_before.get(rc, 0), after):
            raise PlanError('%s would have %d %s allocated but nova 34 reports a capacity of %d under '
                            'cpu_dedicated_set / cpu_shared_set. Nothing was changed.'
                            % (root['name'], after, rc, inventory_rules.capacity(inv[rc])))


def _child_rc(child, rc):
    """The class a child takes a root class ``rc`` as (a custom-class GPU takes VGPU as its class)."""
    return (child.get('moves_from') or {}).get(rc, rc)


MEM_ENCRYPTION_COMMANDS = (
    'openstack --os-placement-api-version 1.28 resource provider allocation unset --provider {root} '
    '--resource-class MEM_ENCRYPTION_CONTEXT <consumer>',
    'openstack resource provider inventory delete {root} --resource-class MEM_ENCRYPTION_CONTEXT')


def _check_root_classes(tree, root, root_inv, moved, layout, children):
    """Stops a plan that would leave on the root a class nova 34 moves off it at start-up
    (VGPU, MEM_ENCRYPTION_CONTEXT) without moving it: such a node is never "noop" or
    "planned" while nova would fail or change it on its first start.  The message says what
    nova 34 does at start-up and which input is missing, or why no reshape exists."""
    nova = layout.get('nova')
    files = ', '.join((nova or {}).get('files') or [])
    if 'VGPU' in root_inv and 'VGPU' not in moved:
        holders = tree.consumers_of(root['uuid'], 'VGPU')
        held = ', allocated by consumers %s' % ', '.join(holders) if holders else ''
        if nova is not None:
            raise PlanError('the root provider %s has VGPU inventory%s but nova.conf (%s) gives '
                            'nova 34 no device to report it on ([devices]enabled_mdev_types): '
                            'nova would drop it from the root (InventoryInUse while instances '
                            'hold it). Set enabled_mdev_types as the new release runs it, then '
                            'plan again. Nothing was changed.' % (root['name'], held, files),
                            consumers=holders)
        raise PlanError('the root provider %s has VGPU inventory%s and this layout moves it nowhere '
                        '(the device report gives no physical GPU with an mdev type a child, or the '
                        'layout option gpu.enabled is false), and no nova.conf was read on this node. '
                        'At start-up nova 34 moves the root\'s VGPU to one child per physical GPU of '
                        '[devices]enabled_mdev_types, and with no enabled mdev type it removes VGPU from '
                        'the root (Placement refuses that with InventoryInUse while instances hold '
                        'it). Missing input: the node\'s nova.conf (device_info nova_conf); give it '
                        'and plan again. Nothing was changed.' % (root['name'], held),
                        consumers=holders)
    mec = _layout.MEM_ENCRYPTION_CONTEXT
    if mec not in root_inv or _layout.taker(children, mec) is not None:
        return
    holders = tree.consumers_of(root['uuid'], mec)
    name = root['name']
    nova_does = ('At start-up nova 34 moves every %s allocation of the root to the AMD SEV child '
                 '%s_amd_sev and to no other provider (_reshape_memory_encryption_allocations), '
                 'then removes the class from the root; with no AMD SEV child its start-up reshape '
                 'fails (ReshapeFailed: the child resource provider for AMD SEV is not found)%s'
                 % (mec, name, ' while a consumer holds it on the root' if holders else
                    '; as no consumer holds it, nova only removes the root\'s inventory'))
    held = (' allocated by consumers %s' % ', '.join(holders)) if holders else ' no consumer holds'
    seen = layout.get('mem_encryption')
    if seen is None:
        missing = ['libvirt\'s domain capabilities (device_info use_virsh or domain_capabilities), '
                   'which with the kernel\'s kvm_amd parameters tell whether nova 34 finds AMD SEV']
        if nova is None:
            missing.append('the node\'s nova.conf (device_info nova_conf; none was read)')
        raise PlanError('the root provider %s has %s inventory (AMD SEV before 2025.2),%s, and the '
                        'device report cannot tell whether this host supports AMD SEV. %s. Missing '
                        'input: %s. Give it and plan again. Nothing was changed.'
                        % (name, mec, held, nova_does, '; '.join(missing)), consumers=holders)
    models = seen.get('models') or {}
    source = seen.get('source') or 'domain capabilities'
    if models.get('amd_sev') == 0:
        found = ('this host has AMD SEV with no guest slots (maxGuests 0 in %s), so nova 34 makes no '
                 '%s_amd_sev child' % (source, name))
    else:
        found = ('this host has no AMD SEV support (the kernel\'s kvm_amd sev parameter and <sev '
                 'supported=\'yes\'> in %s, which were read), so nova 34 makes no %s_amd_sev child'
                 % (source, name))
    others = sorted(m for m, n in models.items() if n and m != 'amd_sev')
    if others:
        found += ('; the models it does report (%s) get their own children, which nova never moves '
                  'root allocations to' % ', '.join(others))
    cmds = [c.format(root=root['uuid']) for c in MEM_ENCRYPTION_COMMANDS]
    if holders:
        todo = ('No reshape leads from this state to one nova 34 accepts. What you can do: if these '
                'guests are AMD SEV guests and the host does support it, enable it (kvm_amd sev=1, '
                'a libvirt and firmware that show <sev supported=\'yes\'>) and plan again; otherwise '
                'their %s on the root backs nothing nova 34 knows: remove it from each consumer with '
                '`%s`, then the root\'s inventory with `%s`, and plan again (or keep this node\'s '
                'nova-compute on its current release)' % (mec, cmds[0], cmds[1]))
    else:
        todo = ('This reshape does not remove inventory nova would remove: delete it with `%s` and plan '
                'again' % cmds[1])
    raise PlanError('the root provider %s has %s inventory (AMD SEV before 2025.2),%s, but %s. %s. %s. '
                    'Nothing was changed.' % (name, mec, held, found, nova_does, todo), consumers=holders)


def _check_nova_rules(layout, tree, root_uuid, children):
    """Stops where nova 34 would refuse the tree we leave or change it on its first start."""
    nova = layout.get('nova')
    if nova is None:
        return
    wanted = set(c['name'] for c in children)
    # nova's ensure_tracking_was_not_enabled_before looks at every provider of the tree,
    # the root included; the PCI view (stray check) only at the children
    marked = sorted(tree.name(u) for u in tree.providers
                    if 'COMPUTE_MANAGED_PCI_DEVICE' in tree.traits(u))
    managed = [n for n in marked if n != tree.name(root_uuid)]
    files = ', '.join(nova.get('files') or []) or 'nova.conf'
    if marked and not nova.get('pci_in_placement'):
        raise PlanError('providers %s carry COMPUTE_MANAGED_PCI_DEVICE but [pci]report_in_placement '
                        'is False in %s: nova 34 refuses to start on this node ("Nova does not '
                        'support disabling it after it is enabled"). Enable report_in_placement in '
                        'nova.conf, or remove the trait / those providers, then plan again. Nothing '
                        'was changed.' % (', '.join(marked), files))
    stray = [n for n in managed if n not in wanted]
    if stray:
        raise PlanError('PCI providers %s are not in the PCI view nova 34 builds from %s '
                        '([pci]device_spec, physical_network tags): nova would delete them on its '
                        'first start. Remove them (or fix device_spec), then plan again. Nothing was '
                        'changed.' % (', '.join(stray), files))
    present = set(tree.names().values())
    gone = [n for n in layout.get('remove') or [] if n in present]
    if gone:
        raise PlanError('providers %s get no inventory from nova 34 with %s and this host '
                        '([mdev_<type>]max_instances, or a memory encryption model with no slots '
                        'left): nova would delete them on its first start. Fix the configuration '
                        'or remove them, then plan again. Nothing was changed.'
                        % (', '.join(gone), files))


def _heal(healers, current, new_allocs, used, assignments, warnings):
    """nova's PCI allocation healing, done in the reshape: every holder in the tree gets its units."""
    for child in healers:
        rc = next(iter(child['inventories']))
        for consumer, units in sorted(child['holders'].items()):
            if consumer not in current:
                warnings.append('consumer %s holds %d device(s) of %s but has no allocation on this '
                                'node (a migration holds them, or it is gone): nova does not heal it '
                                'either' % (consumer, units, child['name']))
                continue
            allocs = new_allocs[consumer]
            have = _amount_on(allocs, child['uuid'], rc)
            if have == units:
                continue
            _add(allocs, used, child['uuid'], rc, units - have)
            if not allocs[child['uuid']]['resources'][rc]:
                del allocs[child['uuid']]['resources'][rc]
            assignments.setdefault(consumer, {})[rc] = {
                'how': 'pci-heal', 'amount': units - have, 'to': {child['name']: units}}


def _named_units(per_uuid, child_by_uuid):
    return dict(sorted((child_by_uuid[u]['name'], n) for u, n in per_uuid.items()))


def _add(allocs, used, rp, rc, n):
    entry = allocs.setdefault(rp, {'resources': {}})
    entry['resources'][rc] = entry['resources'].get(rc, 0) + n
    used.setdefault(rp, {})
    used[rp][rc] = used[rp].get(rc, 0) + n


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


def _check_children(children, new_allocs, used, used_before, inv_after):
    """Every planned allocation on a child obeys the unit checks and capacity."""
    problems = []
    for child in children:
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
            before = (used_before.get(child['uuid']) or {}).get(rc, 0)
            if not inventory_rules.fits(inv[rc], before, after):
                problems.append('%s would have %d %s allocated but its capacity is %d'
                                % (child['name'], after, rc, inventory_rules.capacity(inv[rc])))
    if problems:
        raise PlanError('the planned allocations do not fit the layout: %s. Nothing was changed.'
                        % '; '.join(problems))


def _finish(tree, root, moved, layout, children, inv_before, inv_after, new_allocs,
            assignments, policy, warnings, names, deferred_reason, current):
    root_uuid = root['uuid']
    allocations = {}
    for consumer in sorted(new_allocs):
        if new_allocs[consumer] == current[consumer]:
            continue
        allocations[consumer] = write_request(tree, consumer, new_allocs[consumer])
    provider_out = {}
    inventory_changes = []
    for uuid in sorted(set(inv_before) | set(inv_after)):
        exists = uuid in tree
        child = next((c for c in children if c['uuid'] == uuid), None)
        changed = inv_before.get(uuid, {}) != inv_after.get(uuid, {})
        if changed:
            inventory_changes.append(uuid)
        provider_out[uuid] = {
            'name': names.get(uuid, uuid),
            'parent_provider_uuid': tree.parent(uuid) if exists else root_uuid,
            'generation': tree.generation(uuid) if exists else None,
            'new': not exists,
            'inventories': inv_after.get(uuid, {}),
            'inventory_changed': changed,
            'traits': child['traits_after'] if child else tree.traits(uuid),
        }
    root_traits = None
    root_before = tree.traits(root_uuid)
    drop = set(layout.get('root_traits_remove') or [])
    if drop & set(root_before) and _layout.MEM_ENCRYPTION_CONTEXT in moved and not deferred_reason:
        # nova takes HW_CPU_X86_AMD_SEV off the root when it moves MEM_ENCRYPTION_CONTEXT
        root_traits = {'uuid': root_uuid, 'name': root['name'], 'before': root_before,
                       'after': sorted(set(root_before) - drop)}
        provider_out[root_uuid]['traits'] = root_traits['after']
    create = [{'name': c['name'], 'uuid': c['uuid'], 'parent_provider_uuid': root_uuid}
              for c in children if not c['exists']]
    set_traits = [{'name': c['name'], 'uuid': c['uuid'], 'traits': c['traits_after']}
                  for c in children if c['traits_after'] != c['traits_before']]
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

    plan = {
        'version': PLAN_VERSION,
        'status': status,
        'root': {'uuid': root_uuid, 'name': root['name'], 'generation': root.get('generation')},
        'policy': policy,
        'layout_classes': list(layout['classes']),
        'moved_classes': moved if status != STATUS_DEFERRED else [],
        'children': [{'name': c['name'], 'uuid': c['uuid'], 'kind': c['kind'], 'device': c['device'],
                      'exists': c['exists'], 'inventories': c['inventories'], 'traits': c['traits'],
                      'takes_all': c['takes_all']}
                     for c in children],
        'create_children': create,
        'set_traits': set_traits,
        'root_traits': root_traits,
        'ensure': {'resource_classes': ensure_rcs if status == STATUS_PLANNED else [],
                   'traits': ensure_traits if status == STATUS_PLANNED else []},
        'providers': provider_out,
        'inventory_changes': inventory_changes,
        'allocations': allocations,
        'assignments': assignments if status == STATUS_PLANNED else {},
        'moved': {'consumers': len(allocations), 'allocations': moved_records if status == STATUS_PLANNED else 0,
                  'units': moved_units if status == STATUS_PLANNED else {}},
        'deferred_reason': deferred_reason,
        'warnings': warnings,
    }
    plan['cpu'] = None
    plan['diff'] = plan_diff(plan, tree, names)
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
    """What the plan writes into allocations: the moves to children and the VCPU to PCPU
    conversion of the pinned guests (each said apart; "no allocation" when neither)."""
    parts = []
    units = plan['moved']['units']
    cpu = plan.get('cpu')
    if units:
        text = ', '.join('%d %s' % (n, rc) for rc, n in sorted(units.items()))
        movers = len(plan.get('assignments') or {}) if cpu else plan['moved']['consumers']
        parts.append(('moved %s of %d consumer(s)' if past else '%s of %d consumer(s) to move') % (text, movers))
    if cpu:
        pinned = len(cpu.get('pinned') or [])
        if pinned:
            text = ('converted %d VCPU to PCPU of %d pinned consumer(s)' if past
                    else '%d VCPU to PCPU of %d pinned consumer(s) to convert') % (cpu.get('units', 0), pinned)
        else:
            text = 'no pinned consumer to convert from VCPU to PCPU'
        inv = cpu.get('root_inventory') or {}
        before, after = inv.get('before') or {}, inv.get('after') or {}
        changes = []
        for rc in ('PCPU', 'VCPU'):
            if rc in after and rc not in before:
                changes.append('%s inventory %d (new)' % (rc, after[rc]))
            elif rc in before and rc not in after:
                changes.append('%s inventory %d removed' % (rc, before[rc]))
            elif rc in before and before[rc] != after[rc]:
                changes.append('%s inventory %d -> %d' % (rc, before[rc], after[rc]))
        if changes:
            text += ' (root %s: %s)' % (plan['root']['name'], ', '.join(changes))
        parts.append(text)
    if not parts:
        parts.append('moved no allocation' if past else 'no allocation to move')
    return parts


# -- rollback ---------------------------------------------------------------------------

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
      snapshot are deleted afterwards (the caller does it, after the reshape).

    Returns ``{"status": "planned"|"noop", "root", "root_traits", "inventories": {rp:
    {"resource_provider_generation", "inventories"}}, "allocations": {consumer:
    request}, "restored": [consumer], "gone": [consumer], "remove_children":
    [{"uuid", "name"}], "diff", "warnings"}``.
    """
    tree = _tree.ProviderTree.of(state)
    snap_tree = _tree.ProviderTree(snap['state'])
    root_uuid = snap['root']['uuid']
    sprov = snap_tree.providers
    warnings = []
    if root_uuid not in tree:
        raise PlanError('the snapshot\'s root provider %s is not in the tree that was read' % root_uuid)

    target_inv = dict((u, tree.inventory(u)) for u in tree.providers)
    inventories = {}
    for uuid in snap_tree.uuids():
        snapped = sprov[uuid]
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

    current = tree.all_allocations()
    snapped_allocs = snap_tree.all_allocations()
    refused = []
    writes = {}
    restored = []
    gone = []
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
        planned = ((snap.get('plan') or {}).get('planned_totals') or {}).get(consumer)
        if now != then and now != planned:
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

    remove = []
    if remove_children:
        managed = set(snap.get('layout_children') or [])
        parents = tree.parents()
        for uuid, snapped in sorted(sprov.items(), key=lambda i: i[1].get('name') or ''):
            if uuid == root_uuid or uuid not in tree or snapped.get('name') not in managed:
                continue
            if snap_tree.inventory(uuid):
                continue
            if uuid in parents:
                warnings.append('child %s has children of its own and is kept' % snapped['name'])
                continue
            remove.append({'uuid': uuid, 'name': snapped['name']})

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

    # the root's traits as the snapshot has them (a reshape may have taken one off, e.g.
    # HW_CPU_X86_AMD_SEV); applied after the reverse reshape, like the reshape's own
    root_traits = None
    now_traits = tree.traits(root_uuid)
    then_traits = snap_tree.traits(root_uuid)
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
        'diff': {'before': before, 'after': after},
        'warnings': warnings,
    }


def rollback_body(rplan):
    """The POST /reshaper body of a rollback plan (None when only removals are left)."""
    if not rplan['inventories'] and not rplan['allocations']:
        return None
    return {'inventories': copy.deepcopy(rplan['inventories']),
            'allocations': copy.deepcopy(rplan['allocations'])}


def _fmt_totals(totals):
    return ', '.join('%s=%s' % (rc, n) for rc, n in sorted(totals.items())) or 'nothing'
