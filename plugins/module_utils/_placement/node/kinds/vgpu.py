# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Physical GPUs (mdev parents) -> VGPU children, as nova's libvirt driver lays them
out in ``_update_provider_tree_for_vgpu`` (``_get_supported_vgpu_types``,
``_get_gpu_inventories``): child ``<root>_pci_0000_84_00_0``, class ``VGPU`` (or the
``[mdev_<type>]mdev_class``), ``total = existing mdevs + available_instances``,
``max_unit = total``, trait ``OWNER_NOVA``.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from .. import discovery as _discovery
from .common import (
    KIND_GPU,
    Kind,
    LayoutError,
    PlanError,
    address_fields,
    inherit_fields,
    inventory_record,
    libvirt_name,
    plan_count,
    plan_items,
    plan_mapping,
    render_name,
)


def nova_gpu_inventories(gpus, nova, warnings):
    """nova 34's ``_get_supported_vgpu_types`` + ``_get_gpu_inventories``, on a device report.

    Returns ``[(gpu, mdev type, resource class, total)]`` in address order, total
    0 included (nova removes such a provider).  libvirt lists mdev-capable
    devices in address order here; nova applies ``max_instances`` in that order.
    """
    enabled = list((nova.get('devices') or {}).get('enabled_mdev_types') or [])
    groups = nova.get('mdev_types') or {}
    type_of = {}
    class_of = {}
    default_type = None
    max_of = {}
    supported = []
    for mtype in enabled:
        group = groups.get(mtype) or {'device_addresses': [], 'mdev_class': 'VGPU', 'max_instances': None}
        supported.append(mtype)
        if group.get('max_instances'):
            max_of[mtype] = int(group['max_instances'])
        if not group.get('device_addresses'):
            if default_type is None:
                default_type = mtype
            else:
                warnings.append('nova.conf: mdev type %s has no device_addresses but %s is already '
                                'the default type; nova ignores %s' % (mtype, default_type, mtype))
                supported.remove(mtype)
            continue
        for address in group['device_addresses']:
            if address in type_of:
                raise LayoutError('nova.conf: GPU %s is listed under [mdev_%s] and [mdev_%s] '
                                  'device_addresses; nova refuses to start ("duplicate types for '
                                  'PCI ID %s")' % (address, type_of[address], mtype, address))
            type_of[address] = mtype
            class_of[address] = group.get('mdev_class') or 'VGPU'
    if not supported:
        return []

    def gpu_type(address):
        return type_of.get(address) or default_type

    gpus = sorted(gpus, key=lambda g: str(g.get('address')))
    totals = {}
    used_by_type = {}
    for gpu in gpus:
        mtype = gpu_type(gpu['address'])
        count = len([m for m in gpu.get('mdevs') or [] if m.get('type') in supported
                     and m.get('type') == mtype])
        if count:
            used_by_type[mtype] = used_by_type.get(mtype, 0) + count
            totals[gpu['address']] = count
    for gpu in gpus:
        mtype = gpu_type(gpu['address'])
        types = gpu.get('mdev_types') or {}
        if mtype is None or mtype not in supported or mtype not in types:
            continue
        available = int((types.get(mtype) or {}).get('available_instances') or 0)
        limit = max_of.get(mtype)
        if limit and used_by_type.get(mtype, 0) + available > limit:
            warnings.append('GPU %s: %d more %s mdevs would pass [mdev_%s]max_instances = %d; nova '
                            'gives it no inventory' % (gpu['address'], available, mtype, mtype, limit))
            totals[gpu['address']] = 0
            continue
        used_by_type[mtype] = used_by_type.get(mtype, 0) + available
        totals[gpu['address']] = totals.get(gpu['address'], 0) + available
    out = []
    for gpu in gpus:
        if gpu['address'] in totals:
            out.append((gpu, gpu_type(gpu['address']), class_of.get(gpu['address'], 'VGPU'),
                        totals[gpu['address']]))
    return out


def nova_children(root_name, devices, nova, warnings):
    """The pGPU children nova 34 keeps under ``root_name`` for this report and nova.conf
    (nova's ``_update_provider_tree_for_vgpu``); total 0: the child is to be removed."""
    children = []
    for gpu, mtype, rc, total in nova_gpu_inventories(devices.get('gpus') or [], nova, warnings):
        address = _discovery.normalize_address(gpu['address'])
        name = '%s_%s' % (root_name, libvirt_name(address))
        if total < 1:
            children.append({'name': name, 'kind': KIND_GPU, 'device': address, 'remove': True,
                             'inventories': {}, 'traits': [], 'inherit': [],
                             'numa_node': gpu.get('numa_node', -1)})
            continue
        inv = {'total': total, 'min_unit': 1, 'max_unit': total, 'step_size': 1, 'reserved': 0,
               'allocation_ratio': 1.0}
        children.append({
            'name': name, 'kind': KIND_GPU, 'device': address, 'mdev_type': mtype,
            'inventories': {rc: inv},
            # nova reshapes only VGPU off the root; a GPU of a custom class takes the VGPU units
            # its mdevs back (the class the child offers)
            'moves_from': {} if rc == 'VGPU' else {'VGPU': rc},
            'traits': ['OWNER_NOVA'], 'inherit': [], 'numa_node': gpu.get('numa_node', -1),
        })
    return children


def _gpu_type(gpu, opts):
    types = gpu.get('mdev_types') or {}
    existing = sorted(set(m.get('type') for m in gpu.get('mdevs') or [] if m.get('type')))
    enabled = list(opts.get('mdev_types') or [])
    if enabled:
        for name in enabled:
            if name in types or name in existing:
                return name
        return None
    if len(existing) > 1:
        raise LayoutError('GPU %s holds mdevs of several types (%s): nova can only report one type '
                          'per GPU; set layout.gpu.mdev_types' % (gpu.get('address'), ', '.join(existing)))
    if existing:
        return existing[0]
    if len(types) == 1:
        return list(types)[0]
    if not types:
        return None
    raise LayoutError('GPU %s supports several mdev types (%s) and holds no mdev: set '
                      'layout.gpu.mdev_types like nova\'s [devices]/enabled_mdev_types'
                      % (gpu.get('address'), ', '.join(sorted(types))))


def option_children(root_name, gpus, opts, warnings):
    out = []
    for gpu in gpus:
        address = gpu.get('address')
        if not address:
            raise LayoutError('a GPU in the device report has no address')
        mtype = _gpu_type(gpu, opts)
        if mtype is None:
            warnings.append('GPU %s: no enabled mdev type, no child' % address)
            continue
        available = int(((gpu.get('mdev_types') or {}).get(mtype) or {}).get('available_instances') or 0)
        existing = len([m for m in gpu.get('mdevs') or [] if m.get('type', mtype) == mtype])
        total = available + existing
        if total < 1:
            warnings.append('GPU %s: mdev type %s has no capacity (0 mdevs, 0 available), no child'
                            % (address, mtype))
            continue
        fields = dict(address_fields(address), root=root_name, vendor_id=gpu.get('vendor_id', ''),
                      product_id=gpu.get('product_id', ''), numa_node=gpu.get('numa_node', -1),
                      mdev_type=mtype)
        out.append({
            'name': render_name(KIND_GPU, opts['name_template'], fields),
            'kind': KIND_GPU,
            'device': fields['address'],
            'inventories': {opts['resource_class']: inventory_record(total, opts)},
            'traits': sorted(set(opts.get('traits') or [])),
            'inherit': inherit_fields(opts),
            'numa_node': gpu.get('numa_node', -1),
        })
    return out


class VGPU(Kind):
    """pGPUs -> VGPU children; refuses a root whose VGPU no child takes (nova 34 drops it)."""

    name = 'vgpu'
    discovery = 'node/discover/gpus.py'
    need = 'vgpu'
    options = (KIND_GPU,)

    def children(self, root_name, devices, opts, nova, numa_source, warnings):
        if nova is not None:
            return nova_children(root_name, devices, nova, warnings)
        if not opts[KIND_GPU]['enabled']:
            return []
        return option_children(root_name, devices.get('gpus') or [], opts[KIND_GPU], warnings)

    def check_root(self, work):
        """Stops a plan that would leave VGPU on the root (nova 34 moves it off at start-up, or
        drops it): the message says which input is missing."""
        if 'VGPU' not in work.root_inv or 'VGPU' in work.moved:
            return
        root = work.root
        nova = work.layout.get('nova')
        files = ', '.join((nova or {}).get('files') or [])
        holders = work.tree.consumers_of(root['uuid'], 'VGPU')
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

    def held_devices(self, devices, here):
        classes = [rc for rc in here if mdev_class(rc)]
        if not classes:
            return None
        return 'mdev', [m for g in devices.get('gpus') or () for m in g.get('mdevs') or ()], classes

    def planned_changes(self, plan, consumer, then, planned, moves, delta):
        """A GPU child of a custom mdev class takes VGPU units as its class: a move to a child
        (``to``) whose single class, by the children the plan recorded, is not the moved one."""
        children = dict((c.get('name'), plan_mapping(c.get('inventories'))) for c in plan_items(plan.get('children')))
        change = {}
        for rc, rec in moves:
            for child_name, n in sorted(plan_mapping(rec.get('to')).items()):
                target = _child_class(children, child_name, rc)
                if target != rc and plan_count(n):
                    change[rc] = change.get(rc, 0) - n
                    change[target] = change.get(target, 0) + n
        return change

    def root_class(self, rc):
        return rc == 'VGPU'


def _child_class(children, child_name, rc):
    """The class a child takes a moved class ``rc`` as: ``rc``, or the one class of a GPU child of a
    custom mdev class (VGPU -> CUSTOM_...), by the children the plan recorded."""
    inventories = children.get(child_name)
    if not inventories or rc in inventories or len(inventories) != 1:
        return rc
    return next(iter(inventories))


def mdev_class(rc):
    """A class a consumer holds through an mdev of the host (VGPU, or a custom class of nova's
    mdev_class; a ``CUSTOM_PCI_`` class is a PCI device's)."""
    return rc == 'VGPU' or (rc.startswith('CUSTOM_') and not rc.startswith('CUSTOM_PCI_'))


KIND = VGPU()
