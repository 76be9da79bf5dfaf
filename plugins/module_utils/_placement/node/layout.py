# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layout policy: a device report -> the child providers a compute node should have.

The default layout reproduces the names and resource classes nova itself uses,
so a node reshaped by this collection looks exactly like one nova reshaped:

* physical GPU (mdev parent): child ``<root>_pci_0000_84_00_0`` with ``VGPU``,
  ``total = existing mdevs + available_instances`` of the enabled mdev type,
  ``max_unit = total`` (nova/virt/libvirt/driver.py ``_get_gpu_inventories``);
* PCI device: child ``<root>_0000:3B:00.0`` (address upper-cased, as nova's
  ``pci_placement_translator`` does) with ``CUSTOM_PCI_<VENDOR>_<PRODUCT>``,
  ``total = max_unit = 1`` and traits ``COMPUTE_MANAGED_PCI_DEVICE``, ``OWNER_NOVA``;
* SR-IOV physical function: ONE child per PF (nova's PCI-in-placement style),
  ``<root>_<PF address>``, class ``CUSTOM_PCI_<VENDOR>_<VF PRODUCT>`` (or
  ``SRIOV_NET_VF`` with ``class_style: sriov_net_vf``), ``total = max_unit = num_vfs``;
* NUMA cells (opt-in): child ``<root>_NUMA<N>`` with trait ``HW_NUMA_ROOT``
  and the root's VCPU / PCPU / MEMORY_MB split across cells, VCPU and PCPU in
  proportion to the cell's cpu count, MEMORY_MB in proportion to the cell's
  memory (largest-remainder rounding, so the parts add up to the root's total).

Every kind is overridable: ``resource_class``, ``traits``, ``name_template``,
``reserved``, ``allocation_ratio`` (see :data:`DEFAULT_OPTIONS`).

One file per reshape kind, as nova's libvirt driver has one method per kind:
``vgpu.py`` (``_update_provider_tree_for_vgpu``), ``pci.py`` (PCI and SR-IOV, the PCI
tracker's ``pci_placement_translator``), ``pcpu.py`` (``_update_provider_tree_for_pcpu``),
``mem_encryption.py`` (``_update_provider_tree_for_memory_encryption``), ``numa.py``
(the opt-in NUMA layout no nova release writes).  Each keeps the contract of
``kinds/common.py``'s ``Kind`` (children, refusals, its own allocation rule, root
clean-up, ...) and is one line of the registry ``kinds.KINDS``, which the layout, the
planner and verification loop over; ``common.py`` also holds what the kinds share
(options, names, child uuids) and ``ownership.py`` the ownership map.  This package's
namespace is the layout's API: :func:`build_layout` and the names below.

The layout is plain data (dicts and lists).  Child provider uuids are
deterministic (:func:`child_uuid`), so check mode predicts them and reruns
produce the same ones; the planner still reuses an existing child with the
right name whatever its uuid.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from . import discovery as _discovery
from ..rules import inventory as inventory_rules
from ..rules import names as name_rules
from .kinds import registry as _kinds
from .kinds import pci as _pci
from .kinds import vgpu as _vgpu
from .kinds.common import (
    DEFAULT_OPTIONS,
    KIND_GPU,
    KIND_NUMA,
    KIND_PCI,
    KIND_PCPU,
    KIND_SRIOV,
    NUMA_CLASSES,
    OPTION_KINDS,
    LayoutError,
    child_uuid,
    merge_options,
    pci_class,
)
from .kinds.mem_encryption import KIND_MEM_ENCRYPTION, MEM_ENCRYPTION_CONTEXT, SEV_TRAIT, mem_encryption_children, taker
from .kinds.numa import numa_child_names, numa_source, split_proportional
from .kinds.ownership import merge_ownership, owned_units, ownership_from_devices, ownership_of_report
from .kinds.pci import nova_pci_devices, nova_pci_providers
from .kinds.pcpu import nova_cpu
from .kinds.vgpu import nova_gpu_inventories

# the kind registry (kinds/registry.py); the loops below read it there, so a kind registered
# there is one the layout builds
KINDS = _kinds.KINDS

# The traits nova 34's resource tracker puts on every compute node it reports
# (nova/compute/resource_tracker.py ``_get_traits``: "Always mark the compute node";
# COMPUTE_NODE in 31, 33 and 34 alike, OWNER_NOVA new in 34).  A plan that writes the node
# adds the ones its root lacks (planner ``_root_marks``), so nova 34's first start after
# the reshape has nothing to add; 31 and 33 keep them (their ``_get_traits`` starts from the
# root's traits and takes off only the driver's capability traits it does not support).
ROOT_TRAITS = ('COMPUTE_NODE', 'OWNER_NOVA')
# ... and the one it puts on the root of a compute service that is disabled in nova, and takes off
# one that is enabled (resource_tracker ``_sync_compute_service_disabled_trait``, at every report,
# start-up included; nova-compute's ``set_host_enabled`` at the disable and the enable).  A root
# read after the disable may lack it: nova 33's periodic report, when it reads the service record
# before the disable is saved, PUTs the root's traits without it right after set_host_enabled added
# it.  A plan told that the service is disabled (PlanContext ``service_disabled``: the rolling role
# disables it before the reshape) adds it with the other marks, so nova 34's first start on the
# still-disabled service has nothing to add either.
DISABLED_TRAIT = 'COMPUTE_STATUS_DISABLED'

__all__ = [
    'DEFAULT_OPTIONS', 'KINDS', 'KIND_GPU', 'KIND_MEM_ENCRYPTION', 'KIND_NUMA', 'KIND_PCI', 'KIND_PCPU',
    'KIND_SRIOV', 'LayoutError', 'MEM_ENCRYPTION_CONTEXT', 'NUMA_CLASSES', 'SEV_TRAIT', 'build_layout',
    'child_uuid', 'mem_encryption_children', 'merge_options', 'merge_ownership', 'nova_children', 'nova_cpu',
    'nova_gpu_inventories', 'nova_pci_devices', 'nova_pci_providers', 'numa_child_names', 'numa_source',
    'OPTION_KINDS', 'owned_units', 'layout_of_report', 'ownership_of_report', 'ownership_from_devices',
    'pci_class', 'DISABLED_TRAIT', 'ROOT_TRAITS', 'split_proportional', 'taker',
]


# -- the layout ---------------------------------------------------------------

def build_layout(root_name, devices, options=None, numa_source=None):
    """Turn a device report into the desired children of ``root_name``.

    When the report carries the node's nova.conf (``devices["nova_conf"]``, read
    by discovery), nova 34's own rules decide (:func:`nova_children`) and the
    operator's layout options may only rename nothing: a layout no nova release
    writes is refused there (NUMA children).  Without a nova.conf the options
    below decide, with nova's defaults.

    ``devices`` is the device report (docs/architecture.md).  ``numa_source``
    is ``{RC: inventory record}`` of the node's VCPU / PCPU / MEMORY_MB to split
    across NUMA children (the planner passes the root's inventory, or the sum of
    the NUMA children after a reshape); it is only used when NUMA is enabled.

    Returns ``{"root_name", "options", "children": [child], "classes": [RC],
    "warnings": [text], "cpu", "mem_encryption"}``; a child is ``{"name", "kind", "device", "inventories":
    {RC: record}, "traits": [..], "inherit": [field], "numa_node"}`` where
    ``device`` is the key the ownership map uses (PCI address, or ``NUMA<N>``).
    Children are sorted by name.
    """
    if not root_name:
        raise LayoutError('the root provider has no name')
    _discovery.check_report(devices)
    return layout_of_report(root_name, devices, options, numa_source)


def layout_of_report(root_name, devices, options=None, numa_source=None):
    """:func:`build_layout` of a device report already checked (discovery.check_report)."""
    devices = devices or {}
    opts = merge_options(options)
    warnings = []
    nova = devices.get('nova_conf')
    for kind in _kinds.KINDS:
        kind.check_options(opts, nova)
    children = []
    for kind in _kinds.KINDS:
        children.extend(kind.children(root_name, devices, opts, nova, numa_source, warnings))
    result = _finish_layout(root_name, opts, children, warnings, nova)
    for kind in _kinds.KINDS:
        result.update(kind.describe(devices, nova, opts))
    return result


def nova_children(root_name, devices, nova, warnings):
    """The children nova 34 keeps under ``root_name`` for this report and nova.conf:
    the pGPUs' (vgpu.py), then the PCI devices' (pci.py)."""
    return (_vgpu.nova_children(root_name, devices, nova, warnings)
            + _pci.nova_children(root_name, devices, nova, warnings))


def _finish_layout(root_name, opts, children, warnings, nova):
    remove = sorted(c['name'] for c in children if c.get('remove'))
    children = [c for c in children if not c.get('remove')]
    seen = {}
    for child in children:
        if child['name'] in seen:
            raise LayoutError('two devices map to the same child provider name %r (%s and %s): '
                              'adjust the name templates'
                              % (child['name'], seen[child['name']], child['device']))
        seen[child['name']] = child['device']
        for rc, inv in child['inventories'].items():
            name_rules.validate_name(rc, 'resource class')
            inventory_rules.normalize_inventory(inv, rc)
    children.sort(key=lambda c: c['name'])
    for child in children:
        child.setdefault('moves_from', {})
        child.setdefault('traits_exact', False)
        child.setdefault('heal', False)
        child.setdefault('takes_all', None)
    classes = sorted(set(rc for c in children for rc in c['inventories'])
                     | set(src for c in children for src in c['moves_from']))
    root_traits_remove = [t for kind in _kinds.KINDS for t in kind.root_traits_remove(children)]
    return {'root_name': root_name, 'options': opts, 'children': children,
            'classes': classes, 'warnings': warnings, 'remove': remove,
            'root_traits_remove': root_traits_remove,
            'root_traits_add': list(ROOT_TRAITS),
            'nova': None if nova is None else {
                'files': list(nova.get('files') or []),
                'pci_in_placement': bool((nova.get('pci') or {}).get('report_in_placement'))}}
