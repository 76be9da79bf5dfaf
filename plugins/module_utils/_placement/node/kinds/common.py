# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every reshape kind of the layout shares: the kinds, the operator's layout
options and their defaults, the layout's error, child names and deterministic child
uuids, and the inventory record an option-driven child gets.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re
import uuid as _uuid

from ...rules import inventory as inventory_rules
from ...rules import names as name_rules
from ...rules import providers as provider_rules
from ...errors import LAYOUT, PLAN, PlacementError


KIND_GPU = 'gpu'
KIND_PCI = 'pci'
KIND_SRIOV = 'sriov'
KIND_NUMA = 'numa'
KIND_PCPU = 'pcpu'
# the sections of the layout options that have enabled/name_template/... (DEFAULT_OPTIONS)
OPTION_KINDS = (KIND_GPU, KIND_PCI, KIND_SRIOV, KIND_NUMA)

NUMA_CLASSES = ('VCPU', 'PCPU', 'MEMORY_MB')

# Per kind: every key an operator may set.  ``reserved`` / ``allocation_ratio``
# left at None mean "Placement's default for a new child, the value already in
# Placement for an existing one" (nova's PCI tracking leaves them alone too,
# so an operator's hand-set reserved survives).
DEFAULT_OPTIONS = {
    # VCPU -> PCPU: the operator's word on which guests are pinned, where the domain XML
    # does not tell (a guest with no domain here, or pinned outside cpu_dedicated_set)
    KIND_PCPU: {'pinned': [], 'unpinned': []},
    KIND_GPU: {
        'enabled': True,
        'resource_class': 'VGPU',
        # nova's _ensure_pgpu_providers adds OWNER_NOVA to every pGPU provider
        'traits': ['OWNER_NOVA'],
        'name_template': '{root}_{libvirt_name}',
        'reserved': None,
        'allocation_ratio': None,
        # like nova's [devices]/enabled_mdev_types: which mdev type counts.
        # Empty: the type of the GPU's existing mdevs, or its only type.
        'mdev_types': [],
    },
    KIND_PCI: {
        # nova's [pci]report_in_placement defaults to False: no PCI children
        'enabled': False,
        'resource_class': None,          # None: CUSTOM_PCI_<VENDOR>_<PRODUCT>
        'traits': ['COMPUTE_MANAGED_PCI_DEVICE', 'OWNER_NOVA'],
        'name_template': '{root}_{ADDRESS}',
        'reserved': None,
        'allocation_ratio': None,
    },
    KIND_SRIOV: {
        'enabled': False,
        'resource_class': None,          # None: decided by class_style
        'class_style': 'pci',            # pci: CUSTOM_PCI_<VENDOR>_<VF PRODUCT>; sriov_net_vf: SRIOV_NET_VF
        'traits': ['COMPUTE_MANAGED_PCI_DEVICE', 'OWNER_NOVA'],
        'name_template': '{root}_{ADDRESS}',
        'reserved': None,
        'allocation_ratio': None,
    },
    KIND_NUMA: {
        'enabled': False,
        'resource_classes': list(NUMA_CLASSES),
        'traits': ['HW_NUMA_ROOT'],
        'name_template': '{root}_NUMA{id}',
        'reserved': None,                # None: the root's reserved, split like total
        'allocation_ratio': None,        # None: the root's ratio
    },
}

CLASS_STYLES = ('pci', 'sriov_net_vf')
NAME_MAX = provider_rules.NAME_MAX   # Placement's provider name limit (rules/providers.py)


class LayoutError(PlacementError):
    """The device report or the layout options cannot produce a layout."""

    status = 0
    default_code = LAYOUT

    def __init__(self, detail, **kwargs):
        kwargs.setdefault('title', 'Layout Error')
        super(LayoutError, self).__init__(detail, **kwargs)


def child_uuid(root_uuid, child_name):
    """Deterministic uuid of a child: uuid5(namespace=root uuid, name=child name)."""
    return str(_uuid.uuid5(_uuid.UUID(provider_rules.normalize_uuid(root_uuid)), child_name))


def merge_options(options):
    """Deep-merge operator options over :data:`DEFAULT_OPTIONS`; reject unknown keys."""
    merged = copy.deepcopy(DEFAULT_OPTIONS)
    if not options:
        return merged
    if not isinstance(options, dict):
        raise LayoutError('layout options must be a mapping of kind -> options, got %r' % (options,))
    for kind, opts in options.items():
        if kind not in merged:
            raise LayoutError('unknown device kind %r in layout options (known: %s)'
                              % (kind, ', '.join(OPTION_KINDS)))
        if opts is None:
            continue
        if not isinstance(opts, dict):
            raise LayoutError('layout options for %s must be a mapping, got %r' % (kind, opts))
        for key, value in opts.items():
            if key not in merged[kind]:
                raise LayoutError('unknown layout option %s.%s (known: %s)'
                                  % (kind, key, ', '.join(sorted(merged[kind]))))
            if value is None and key not in ('reserved', 'allocation_ratio', 'resource_class'):
                continue
            merged[kind][key] = value
    for kind in OPTION_KINDS:
        _check_kind_options(kind, merged[kind])
    for key in ('pinned', 'unpinned'):
        value = merged[KIND_PCPU][key]
        if not isinstance(value, list):
            raise LayoutError('pcpu.%s must be a list of consumer UUIDs, got %r' % (key, value))
        for item in value:
            if not provider_rules.is_uuid_like(item):
                raise LayoutError('pcpu.%s: %r is not a consumer UUID' % (key, item))
    both = set(merged[KIND_PCPU]['pinned']) & set(merged[KIND_PCPU]['unpinned'])
    if both:
        raise LayoutError('pcpu: %s listed as both pinned and unpinned' % ', '.join(sorted(both)))
    return merged


def _check_kind_options(kind, opts):
    rc = opts.get('resource_class')
    if rc is not None:
        name_rules.validate_name(rc, 'resource class')
    for trait in opts.get('traits') or []:
        name_rules.validate_name(trait, 'trait')
    if opts.get('reserved') is not None and (isinstance(opts['reserved'], bool)
                                             or not isinstance(opts['reserved'], int)
                                             or opts['reserved'] < 0):
        raise LayoutError('%s.reserved must be a non-negative integer, got %r' % (kind, opts['reserved']))
    ratio = opts.get('allocation_ratio')
    if ratio is not None and (isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or ratio <= 0
                              or not inventory_rules.is_finite(ratio)):
        raise LayoutError('%s.allocation_ratio must be a finite number > 0, got %r' % (kind, ratio))
    if kind == KIND_SRIOV and opts.get('class_style') not in CLASS_STYLES:
        raise LayoutError('sriov.class_style must be one of %s, got %r'
                          % (', '.join(CLASS_STYLES), opts.get('class_style')))
    if kind == KIND_NUMA:
        for rc_name in opts.get('resource_classes') or []:
            if rc_name not in NUMA_CLASSES:
                raise LayoutError('numa.resource_classes may only name %s, got %r'
                                  % (', '.join(NUMA_CLASSES), rc_name))
    if not isinstance(opts.get('name_template'), str) or not opts['name_template']:
        raise LayoutError('%s.name_template must be a non-empty string' % kind)


# -- naming -------------------------------------------------------------------

def libvirt_name(address):
    """libvirt's node device name of a PCI address: ``pci_0000_84_00_0`` (nova's pGPU child suffix)."""
    return 'pci_' + re.sub(r'[:.]', '_', str(address).lower())


def address_fields(address):
    """The fields a name template may use for a PCI address."""
    address = str(address).lower()
    underscored = re.sub(r'[:.]', '_', address)
    return {
        'address': address,
        'ADDRESS': address.upper(),
        'address_underscored': underscored,
        'libvirt_name': libvirt_name(address),
    }


def render_name(kind, template, fields):
    try:
        name = template.format(**fields)
    except (KeyError, IndexError, ValueError) as exc:
        raise LayoutError('%s.name_template %r cannot be rendered (%s); available fields: %s'
                          % (kind, template, exc, ', '.join(sorted(fields))))
    if not name or provider_rules.name_error(name):
        raise LayoutError('%s.name_template %r gives an invalid provider name %r (1..%d characters)'
                          % (kind, template, name, NAME_MAX))
    return name


def pci_class(vendor_id, product_id):
    """nova's class for a PCI device: CUSTOM_PCI_<VENDOR>_<PRODUCT>, upper-cased."""
    return ('CUSTOM_PCI_%s_%s' % (hex4(vendor_id), hex4(product_id))).upper()


def hex4(value):
    text = str(value or '').lower()
    if text.startswith('0x'):
        text = text[2:]
    if not re.match(r'^[0-9a-f]{1,4}$', text):
        raise LayoutError('%r is not a PCI vendor/product id (1-4 hex digits)' % (value,))
    return text.rjust(4, '0')


def inventory_record(total, opts, max_unit=None):
    inv = {'total': total, 'max_unit': max_unit if max_unit is not None else total}
    if opts.get('reserved') is not None:
        inv['reserved'] = opts['reserved']
    if opts.get('allocation_ratio') is not None:
        inv['allocation_ratio'] = float(opts['allocation_ratio'])
    return inv


def inherit_fields(opts):
    """Fields an existing child keeps from Placement because the operator did not set them."""
    return sorted(f for f in ('reserved', 'allocation_ratio') if opts.get(f) is None)


# -- what the planner and the kinds share ------------------------------------------

class PlanError(PlacementError):
    """The plan cannot be made (unmapped consumer, capacity, bad input).

    ``consumers`` names the consumers at fault (may be empty).
    """

    status = 0
    default_code = PLAN

    def __init__(self, detail, consumers=None, **kwargs):
        kwargs.setdefault('title', 'Reshape Plan Refused')
        super(PlanError, self).__init__(detail, **kwargs)
        self.consumers = sorted(consumers or [])


def amount_on(allocs, rp, rc):
    """Units of ``rc`` an allocations map ``{rp: {"resources": {RC: n}}}`` holds on ``rp``."""
    return ((allocs.get(rp) or {}).get('resources') or {}).get(rc, 0)


def add(allocs, used, rp, rc, n):
    """Add ``n`` units of ``rc`` on ``rp`` to a consumer's allocations and to the usage map."""
    entry = allocs.setdefault(rp, {'resources': {}})
    entry['resources'][rc] = entry['resources'].get(rc, 0) + n
    used.setdefault(rp, {})
    used[rp][rc] = used[rp].get(rc, 0) + n


# -- a snapshot's plan, read by a kind's rollback rules (untrusted: any part may be missing) --

def plan_count(value):
    """An amount read from a snapshot's plan: an int (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def plan_mapping(value):
    """A part of a snapshot's plan (not checked by ``snapshot.check_document``) read as a mapping."""
    return value if isinstance(value, dict) else {}


def plan_items(value):
    """A part of a snapshot's plan read as a list of mappings."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def plan_assignments(plan, consumer):
    """``[(RC, record)]``: the assignment records (mappings) a snapshot's plan gives ``consumer``,
    in class order."""
    per_rc = plan_mapping(plan_mapping(plan.get('assignments')).get(consumer))
    return [(rc, rec) for rc, rec in sorted(per_rc.items()) if isinstance(rec, dict)]


# -- the kind contract ---------------------------------------------------------------

class Kind(object):
    """The contract every reshape kind keeps (one file per kind in this package, one line in
    ``kinds/registry.py``'s :data:`KINDS`), as nova's libvirt driver has one
    ``_update_provider_tree_for_<kind>`` per kind.  The defaults here are "this kind has no
    such rule"; a kind overrides what it has.  The layout (layout.py), the planner
    (planner.py) and verification (verify.py) loop over :data:`KINDS` and name no kind.

    ``name``        the kind's name (docs/reshape.md);
    ``discovery``   the module that discovers its devices on the host (node/discover/, a part
                    of ``discover/registry.py``'s PARTS);
    ``options``     the layout option sections it reads (common.DEFAULT_OPTIONS);
    ``plan_keys``   the keys it adds to a plan (``PlanState.set_result``);
    ``need``        the need a compute node has when one of the kind's classes is still on its
                    root (fleet/inventory.py, the inventory plugin's groups; :meth:`root_class`).
    """

    name = None
    discovery = None
    options = ()
    plan_keys = ()      # keys the kind adds to a plan (None until the kind fills them)
    need = None
    # the ``how`` of the assignment records the kind writes as its own change of a consumer's
    # totals (``PlanState.assign``), not a move: its :meth:`planned_changes` reads them, and they
    # are not among the ``moves`` any kind's :meth:`planned_changes` is given
    own_assignments = ()

    def check_options(self, opts, nova):
        """The kind's refusals (LayoutError) of the layout options on this node."""

    def children(self, root_name, devices, opts, nova, numa_source, warnings):
        """The kind's child providers for a device report: with ``nova`` (the node's
        nova.conf, read) nova 34's own rules, else the layout options ``opts``."""
        return []

    def describe(self, devices, nova, opts):
        """What the kind adds to the layout besides children: ``{key: value}``."""
        return {}

    def root_traits_remove(self, children):
        """Root traits nova takes off the root when this kind's class moves to ``children``."""
        return []

    def writes(self, layout, root_inv):
        """``(classes, consumers)`` a plan of ``layout`` may rewrite beyond the classes it
        moves to children: root classes the kind converts in place, holders it heals."""
        return set(), set()

    def explained(self, layout):
        """Consumers the kind itself accounts for (no guest domain needed to explain them)."""
        return set()

    def check_root(self, work):
        """The kind's refusals (PlanError) of a plan (``work``: a :class:`..plan_state.PlanState`,
        the kinds' API)."""

    def taker(self, children, rc):
        """The child every allocation of ``rc`` goes to by nova's rule for this kind, or None:
        the generic path (the device ownership, then the pack policy)."""
        return None

    def prepare_root(self, work):
        """Changes of the root the kind makes before anything moves (``work.root_inventory_after()``);
        returns a reason to defer the node, or None."""
        return None

    def consumers(self, work):
        """Consumers the kind rewrites besides the holders of moved classes."""
        return set()

    def settle(self, work):
        """The kind's rewrite of allocations after the moves (healing, conversion)."""

    def root_cleanup(self, layout, moved):
        """Root traits to take off when the plan moves ``moved`` (a rollback puts the
        snapshot's root traits back, whichever kind took them off: rollback.plan_rollback)."""
        return set()

    def said(self, plan, past):
        """What the one-line summary says of what the kind writes itself (its ``plan_keys``)."""
        return []

    def held_devices(self, devices, here):
        """``(what, devices, classes)``: the host's devices of this kind in a device report that
        hold the classes ``classes`` of ``here`` (the classes a consumer holds on the tree), and
        what one is called; None when the consumer holds none of its classes
        (inflight.py: what the host's devices say of a consumer no domain is)."""
        return None

    def defer_hint(self, hits):
        """Where the operator names a consumer no domain is, when the classes it holds that the
        reshape moves are ``hits`` and the kind is the one to tell (inflight.py), or None."""
        return None

    def snapshot_summary(self, plan, tree):
        """``{key: value}`` the kind adds to the plan's summary in a snapshot, from the tree
        before the reshape (what a rollback checks the snapshot against: rollback.py)."""
        return {}

    def planned_changes(self, plan, consumer, then, planned, moves, delta):
        """``{RC: n}``: what the kind's rule changed of ``consumer``'s per-class totals on purpose
        in the reshape recorded in ``plan`` (a snapshot's plan summary, read as untrusted: any part
        may be missing or of another type; ``plan_count`` / ``plan_mapping`` / ``plan_items`` /
        ``plan_assignments`` read it).  A reshape only moves allocations but for these rules.
        ``then``: the consumer's totals in the snapshot; ``planned``: its totals after the reshape
        (``planned_totals``); ``moves``: its assignment records ``[(RC, record)]`` that are moves
        (whose ``how`` is no kind's :attr:`own_assignments`); ``delta``: ``{RC: n}`` the kinds
        before this one in :data:`KINDS` changed (read only).  ``rollback.planned_changes`` sums
        the kinds' answers, in the registry's order."""
        return {}

    def root_classes_changed(self, plan):
        """Root classes the kind's plan may change in place besides the moved ones: for a snapshot
        written before its plan recorded ``inventories_before``, a rollback does not compare them
        with the node (rollback.inventory_drift)."""
        return ()

    def root_class(self, rc):
        """Whether ``rc`` on a root means the node still needs this kind's reshape (:attr:`need`)."""
        return False
