# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Moves in flight on a compute node: every form nova uses, and why each defers the node.

A node is reshaped only when no guest is moving on it: nova's own start-up reshape
fails (ReshapeFailed) on a node whose moved classes are held by a consumer no domain
on the host is, and the allocations of a move are rewritten by nova-compute when the
move is confirmed, reverted or cleaned up.  The forms, as nova writes them:

``migration``
    Since Queens every cold/live migration and resize swaps the source node's
    allocations to a consumer named after the MIGRATION record's uuid; the instance
    holds the destination's.  Placement reports that consumer's type as ``MIGRATION``
    only when the writer set it; nova 34 writes no consumer_type, so in a real cloud
    it reads ``unknown``.  Found (a) in nova's ``os-migrations`` (when a compute
    endpoint is configured), (b) by consumer_type MIGRATION, or (c) as a consumer on
    the node that no guest domain on the host is.  (c) may also be an ORPHAN (an
    allocation whose instance is gone): the reason says both and how to tell them
    apart.  A resize to the same host is the case where the instance and its
    migration consumer both hold allocations on this node.
``two trees``
    An instance holding allocations on this node and on another compute node's tree:
    an evacuation (the failed source keeps them until its nova-compute comes back) or
    the pre-Queens model of a migration.

Providers that share (MISC_SHARES_VIA_AGGREGATE, e.g. a DISK_GB pool) are not another
compute tree.  :func:`find` returns the reasons; the planner defers the node on any.
Only the consumers a reshape may write are read in full, so ``two trees`` and a
consumer_type MIGRATION are seen on those alone: a consumer the reshape does not write
keeps its allocations whatever it is doing elsewhere, and does not defer the node.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from .discover import domains as _domains
from .kinds import registry as _kinds
from ..backends.base import SHARING_TRAIT
from ..nova.migrations import in_progress

MIGRATION_TYPE = 'MIGRATION'


def _amounts(allocs, rps):
    out = {}
    for rp in rps:
        for rc, n in ((allocs.get(rp) or {}).get('resources') or {}).items():
            if n:
                out[rc] = out.get(rc, 0) + n
    return out


def _text(amounts):
    return ', '.join('%s %d' % (rc, n) for rc, n in sorted(amounts.items())) or 'nothing'


def _describe_migration(mig):
    kind = mig.get('migration_type') or 'migration'
    src = mig.get('source_node') or mig.get('source_compute') or '?'
    dst = mig.get('dest_node') or mig.get('dest_compute') or '?'
    where = 'to the same host' if src == dst else 'from %s to %s' % (src, dst)
    return '%s %s of instance %s (status %s, %s)' % (
        kind, mig.get('uuid') or mig.get('id') or '?', mig.get('instance_uuid') or '?',
        mig.get('status') or '?', where)


def _what_to_do(mig=None, instance=None, host=None):
    """What ends the move, with commands that run as printed: the instance is named when nova's
    record or the host's devices tell it, otherwise the command that finds it."""
    mig = mig or {}
    kind = mig.get('migration_type') or ''
    instance = mig.get('instance_uuid') or instance
    if kind == 'evacuation':
        return ('start the source\'s nova-compute again (it removes the evacuated instance\'s source '
                'allocations) or mark the evacuation done, then rerun the roll for this node')
    if instance is None:
        return ('wait for it to finish, then confirm or revert it: its instance is the Server UUID of the '
                'migration with this UUID in `OS_COMPUTE_API_VERSION=2.59 openstack server migration list '
                '--host %s`; confirm or revert the resize or cold migration of that instance (openstack server '
                'resize confirm, or revert, naming it) or, for a live migration, wait for it or abort it '
                '(openstack server migration abort), then rerun the roll for this node' % (host or '<node>'))
    if kind == 'live-migration':
        return ('wait for it to finish, or abort it (`OS_COMPUTE_API_VERSION=2.59 openstack server migration '
                'abort %s %s`), then rerun the roll for this node' % (instance, mig.get('uuid')))
    return ('wait for it to finish, then confirm or revert it (`openstack server resize confirm %s` or '
            '`openstack server resize revert %s`, a cold migration too), then rerun the roll for this node'
            % (instance, instance))


def _label(uuid, instances):
    name = ((instances or {}).get(uuid) or {}).get('name')
    return '%s (%s)' % (name, uuid) if name else uuid


def _device_facts(devices, here, holders):
    """What the host's devices say about a consumer no domain is: ``(sentences, likely)``.

    ``here``: the classes it holds on the tree; ``holders``: ``{class: set(consumer)}`` of the
    consumers holding each class on the tree.  Each kind says which of the host's devices hold
    which of those classes (``Kind.held_devices``: the mdevs for the mdev classes, the PCI
    devices and VFs for the PCI classes); for each: how many are free, which domains hold
    them, and the domains holding one whose consumer holds none of that class here: the likely
    instance of a migration (nova keeps the source's allocations on the migration's uuid while
    the instance's domain still holds the device).  ``likely`` lists those domains' uuids.
    """
    if not devices:
        return [], []
    instances = devices.get('instances') or {}
    out, likely = [], []
    kinds = [held for held in (kind.held_devices(devices, here) for kind in _kinds.KINDS) if held]
    for what, items, classes in kinds:
        if not classes:
            continue
        if not items:
            out.append('the host has no %s' % what)
            continue
        held = {}
        for item in items:
            if item.get('instance_uuid'):
                owner = str(item['instance_uuid']).lower()
                held[owner] = held.get(owner, 0) + 1
        free = len(items) - sum(held.values())
        text = '%d of the host\'s %d %ss %s free' % (free, len(items), what, 'is' if free == 1 else 'are')
        if held:
            text += ', held by domains: %s' % ', '.join('%s %d' % (_label(u, instances), n) for u, n in sorted(held.items()))
        out.append(text)
        holding = set()
        for rc in classes:
            holding |= holders.get(rc, set())
        for owner in sorted(held):
            if owner not in holding:
                likely.append(owner)
                out.append('domain %s holds %d %s(s) but holds no %s on this node in Placement: likely the '
                           'instance of this migration' % (_label(owner, instances), held[owner], what,
                                                           '/'.join(sorted(classes))))
    return out, likely


def orphan_command(root_uuid):
    """nova's command that deletes the orphaned allocations of a node (run it first without
    ``--delete`` to see what it would remove)."""
    return 'nova-manage placement audit --resource_provider %s --verbose --delete' % (root_uuid or '<root provider uuid>')


class InFlightQuery(object):
    """What :func:`find` is asked: the tree read (``state``), the root's name, the uuids of the
    tree's providers, and the options of :attr:`OPTIONS` (their defaults; what each means:
    :func:`find`).  An unknown option is a TypeError, as for a function's unknown keyword."""

    OPTIONS = (('foreign', None), ('touched', ()), ('instances', None), ('migrations', None),
               ('explained', ()), ('two_trees_ok', False), ('root_uuid', None), ('orphans', None),
               ('devices', None))

    def __init__(self, state, root_name, tree_rps, **options):
        unknown = sorted(set(options) - set(name for name, _default in self.OPTIONS))
        if unknown:
            raise TypeError('find() got unexpected keyword argument(s): %s' % ', '.join(unknown))
        self.state, self.root_name, self.tree_rps = state, root_name, tree_rps
        for name, default in self.OPTIONS:
            setattr(self, name, options.get(name, default))


class _Scan(object):
    """One :func:`find`: its inputs (an :class:`InFlightQuery`), read once, and the reasons,
    remarks and consumers it finds."""

    def __init__(self, query):
        state = query.state
        self.state = state
        self.root_name = query.root_name
        self.tree_rps = set(query.tree_rps)
        self.foreign = query.foreign or {}
        self.touched = set(query.touched)
        self.owned = None if query.instances is None else set(str(u).lower() for u in query.instances)
        self.explained = set(str(u).lower() for u in query.explained or ())
        self.orphaned = set(str(u).lower() for u in query.orphans or ())
        self.by_uuid = _in_flight_by_uuid(query.migrations)
        self.two_trees_ok = query.two_trees_ok
        self.root_uuid = query.root_uuid
        self.devices = query.devices
        self.holders = _class_holders(state, self.tree_rps)
        self.reasons, self.remarks, self.named = [], [], []
        self.seen = set()

    def defer(self, consumer, reason):
        """The node waits for ``consumer``, for ``reason``."""
        self.reasons.append(reason)
        self.named.append(consumer)


def _in_flight_by_uuid(migrations):
    """``{uuid: record}`` of nova's migration records still in flight."""
    by_uuid = {}
    for mig in migrations or []:
        if isinstance(mig, dict) and in_progress(mig) and mig.get('uuid'):
            by_uuid[str(mig['uuid']).lower()] = mig
    return by_uuid


def _class_holders(state, tree_rps):
    """``{class: set(consumer)}``: the consumers holding each class on the tree."""
    holders = {}
    for consumer, body in (state.get('allocations') or {}).items():
        allocs = (body or {}).get('allocations') or {}
        for rc in _amounts(allocs, [rp for rp in allocs if rp in tree_rps]):
            holders.setdefault(rc, set()).add(str(consumer).lower())
    return holders


def _nova_migration(scan, consumer, key, here):
    """A consumer that is a migration nova reports in flight: the node waits for it."""
    mig = scan.by_uuid.get(key)
    if mig is None:
        return False
    scan.defer(consumer, '%s holds the %s allocations on this node (%s): %s'
               % (_describe_migration(mig),
                  'source' if (mig.get('source_node') or '') == scan.root_name else 'move\'s',
                  _text(here), _what_to_do(mig)))
    return True


def _typed_migration(scan, consumer, body, here):
    """A consumer whose consumer_type is MIGRATION: the node waits for it."""
    if (body.get('consumer_type') or '').upper() != MIGRATION_TYPE:
        return False
    facts, likely = _device_facts(scan.devices, here, scan.holders)
    scan.defer(consumer, 'consumer %s is a migration (consumer_type MIGRATION) holding the source '
               'allocations of a move on this node (%s%s): %s'
               % (consumer, _text(here), ''.join('; ' + f for f in facts),
                  _what_to_do(instance=likely[0] if len(likely) == 1 else None, host=scan.root_name)))
    return True


def _outside_trees(scan, allocs):
    """The providers outside the tree a consumer holds allocations on, sharing providers aside."""
    other = []
    for rp in sorted(allocs):
        if rp in scan.tree_rps:
            continue
        info = scan.foreign.get(rp)
        if info is not None and SHARING_TRAIT in (info.get('traits') or []):
            continue
        other.append('%s%s' % (rp, ' (%s)' % info['name'] if info and info.get('name') else ''))
    return other


def _two_trees(scan, consumer, allocs, here):
    """An instance on this tree and another compute node's: the node waits, unless allowed."""
    other = _outside_trees(scan, allocs)
    if not other:
        return False
    text = ('instance %s holds allocations on this node (%s) and on %s, outside this tree: an '
            'evacuation, or a migration in nova\'s pre-Queens model (both ends on the '
            'instance)' % (consumer, _text(here), ', '.join(other)))
    if scan.two_trees_ok:
        scan.remarks.append('allow_foreign_allocations: %s (carried along unchanged)' % text)
    else:
        scan.defer(consumer, text + '. Wait until it is over (after an evacuation, the source\'s '
                   'nova-compute removes its allocations when it starts again; openstack '
                   'server migration list --server %s shows a migration), then rerun the '
                   'roll for this node' % consumer)
    return True


def _orphan(scan, consumer, here, hits):
    """A consumer nova confirmed is neither an instance nor a migration: an orphaned allocation."""
    text = ('consumer %s holds %s on this node, and nova has no instance and no migration in '
            'flight with that uuid: an orphaned allocation (its instance or migration is gone). '
            'Delete it with `%s` (without --delete it only lists)'
            % (consumer, _text(here), orphan_command(scan.root_uuid)))
    if hits:
        scan.defer(consumer, text + ', then rerun the roll for this node')
    else:
        scan.remarks.append(text + '. It holds nothing this reshape moves, so it is left as it is')


def _no_domain(scan, consumer, body, here, hits):
    """A consumer no guest domain on the host is: a migration in flight or an orphan."""
    known = []
    if body.get('consumer_type'):
        known.append('Placement\'s consumer_type for it is %s' % body['consumer_type'])
    facts, likely = _device_facts(scan.devices, here, scan.holders)
    known.extend(facts)
    text = ('consumer %s holds %s on this node but no guest domain on the host is this consumer%s. It is '
            'either a migration in flight (nova\'s migration record holds the source node\'s '
            'allocations until the move is confirmed or reverted; a resize to the same host '
            'looks the same) or an orphaned allocation (its instance is gone). Tell them apart '
            'with `OS_COMPUTE_API_VERSION=2.59 openstack server migration list --host %s` (a migration '
            'whose UUID is %s), `openstack server show %s` (an instance with that ID) and `nova-manage '
            'placement audit --resource_provider %s --verbose` (lists it if it is an orphan; --delete '
            'removes it)'
            % (consumer, _text(here), ' (%s)' % '; '.join(known) if known else '', scan.root_name, consumer,
               consumer, scan.root_uuid or '<root provider uuid>'))
    if len(likely) == 1:
        text += ('. If it is a resize or cold migration of %s: `openstack server resize confirm %s` or '
                 '`openstack server resize revert %s`' % (likely[0], likely[0], likely[0]))
    if hits:
        hint = next((h for h in (kind.defer_hint(hits) for kind in _kinds.KINDS) if h),
                    'the ownership option if you know where its devices are')
        scan.defer(consumer, text + '. Wait for the migration or remove the orphan, then rerun the roll '
                   'for this node (or name the consumer in %s)' % hint)
    else:
        scan.remarks.append(text + '. It holds nothing this reshape moves, so it is left as it is')


def _check_consumer(scan, consumer):
    """Every form of a move in flight, in order, for one consumer holding allocations on the tree."""
    body = scan.state['allocations'][consumer] or {}
    allocs = body.get('allocations') or {}
    here = _amounts(allocs, [rp for rp in allocs if rp in scan.tree_rps])
    if not here:
        return
    key = str(consumer).lower()
    if (_nova_migration(scan, consumer, key, here) or _typed_migration(scan, consumer, body, here)
            or _two_trees(scan, consumer, allocs, here)):
        scan.seen.add(key)
        return
    if scan.owned is None or key in scan.owned or key in scan.explained:
        return
    hits = dict((rc, n) for rc, n in here.items() if rc in scan.touched)
    if key in scan.orphaned:
        _orphan(scan, consumer, here, hits)
    else:
        _no_domain(scan, consumer, body, here, hits)


def _nova_reports(scan):
    """nova's migrations in flight on this node that hold no allocation on the tree."""
    for mig in sorted(scan.by_uuid.values(), key=lambda m: str(m.get('uuid'))):
        if str(mig['uuid']).lower() in scan.seen:
            continue
        ends = set(filter(None, (mig.get('source_node'), mig.get('dest_node'))))
        if scan.root_name in ends:
            scan.defer(str(mig['uuid']), 'nova reports %s in flight on this node: %s'
                       % (_describe_migration(mig), _what_to_do(mig)))


#: Classes every guest holds: not a device, so a guest holding only these says nothing of its domain.
_NOT_DEVICES = frozenset(('VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB'))
#: Where kolla-ansible keeps the guests' definitions (discover/domains.py)
_KOLLA_GLOBS = _domains.KOLLA_DOMAIN_XML_GLOBS


def no_domain_found(state, root_name, tree_rps, touched, instances):
    """The warning of a node whose guests hold device classes on its tree in Placement while
    discovery found no guest domain definition on the host at all (``instances`` known and empty),
    or None.

    Every such guest then looks like a move in flight or an orphan and the node is deferred: the
    usual cause is a libvirt whose definitions are elsewhere (kolla-ansible's nova_libvirt container
    keeps them in its ``nova_libvirt_qemu`` volume), so the warning says where to point discovery.
    ``touched``: the classes the reshape moves or rewrites (only those can defer the node)."""
    if instances is None or len(instances):
        return None
    holders, classes = set(), set()
    for consumer, body in sorted((state.get('allocations') or {}).items()):
        held = set(rc for rc, n in _amounts((body or {}).get('allocations') or {},
                                            list(tree_rps)).items()
                   if n and rc in touched and rc not in _NOT_DEVICES)
        if held:
            holders.add(consumer)
            classes |= held
    if not holders:
        return None
    return ('Placement shows %d guest(s) holding %s on %s (%s) but no guest domain definition was found '
            'on the host: discovery read none (domain_xml_glob matched no file and no live definition was '
            'given), so each of them looks like a move in flight or an orphan. If libvirt keeps the '
            'definitions elsewhere, point discovery there (rolling_reshape_domain_xml_glob, device_info\'s '
            'domain_xml_glob); kolla-ansible keeps them in the nova_libvirt_qemu volume: %s (docker) or %s '
            '(podman)'
            % (len(holders), ', '.join(sorted(classes)), root_name, ', '.join(sorted(holders)),
               _KOLLA_GLOBS['docker'], _KOLLA_GLOBS['podman']))


def find(state, root_name, tree_rps, **options):
    """Reasons (list of str) for which this node must wait; [] when nothing is in flight.
    The arguments are an :class:`InFlightQuery`'s: the options, all optional, below.

    ``state``: the node's tree read: the FULL allocations of the consumers the reshape may
    write, a PARTIAL body (its allocations on the tree only, ``"partial": True``) for every
    other consumer (backend.provider_tree_state ``select``).  The checks that need the full
    body (another compute node's tree, consumer_type MIGRATION) apply to the consumers read
    in full: a consumer the reshape leaves untouched cannot be harmed by it, even while it is
    mid-move elsewhere.  Every other check (nova's migration records, guest domains against
    consumers, orphans) needs only the tree part and applies to every consumer.
    ``tree_rps``: uuids of the providers of the tree.  ``foreign``: ``{rp: {"name",
    "traits", "root_provider_uuid"}}`` of the providers outside the tree the consumers use.
    ``touched``: the classes this reshape moves or rewrites on the tree; a consumer no
    domain owns defers the node only when it holds one of them (otherwise the reshape
    does not move it, and it is named in ``remarks`` instead).
    ``instances``: uuids of the guest domains on the host (None: unknown, check (c) off).
    ``migrations``: nova's in-progress migration records (os-migrations, microversion
    2.59 keys ``uuid``, ``instance_uuid``, ``status``, ``migration_type``,
    ``source_node``, ``dest_node``), None when nova was not asked.
    ``explained``: consumers the operator placed explicitly (ownership overrides): not
    suspected of being a migration.
    ``root_uuid``: the root provider's uuid (named in the commands the reasons give).
    ``two_trees_ok``: the operator allows allocations on two trees (``allow_foreign_allocations``):
    they are carried along unchanged and named in ``remarks``.
    ``orphans``: consumers nova confirmed are neither an instance nor a migration in flight
    (None: nova was not asked); such a consumer is named as an orphaned allocation, with the
    command that deletes it, instead of "a migration or an orphan".
    ``devices``: the host's device report (discovery), when there is one: a consumer no domain
    is gets what its mdevs / PCI devices say (free, held, the domain that likely is the
    instance of its migration).

    Returns ``(reasons, remarks, consumers)``: the consumers named in the reasons.
    """
    scan = _Scan(InFlightQuery(state, root_name, tree_rps, **options))
    for consumer in sorted(state.get('allocations') or {}):
        _check_consumer(scan, consumer)
    _nova_reports(scan)
    return scan.reasons, scan.remarks, sorted(set(scan.named))
