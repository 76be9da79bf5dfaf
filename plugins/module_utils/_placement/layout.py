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

The layout is plain data (dicts and lists).  Child provider uuids are
deterministic (:func:`child_uuid`), so check mode predicts them and reruns
produce the same ones; the planner still reuses an existing child with the
right name whatever its uuid.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re
import uuid as _uuid

from . import discovery as _discovery
from . import model
from . import names as _names
from . import novaconf as _novaconf
from .errors import PlacementError

KIND_GPU = 'gpu'
KIND_PCI = 'pci'
KIND_SRIOV = 'sriov'
KIND_NUMA = 'numa'
KIND_PCPU = 'pcpu'
KINDS = (KIND_GPU, KIND_PCI, KIND_SRIOV, KIND_NUMA)

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

_CLASS_STYLES = ('pci', 'sriov_net_vf')
_NAME_MAX = 200   # Placement's provider name limit


class LayoutError(PlacementError):
    """The device report or the layout options cannot produce a layout."""

    status = 0
    default_code = 'placement_upgrade.layout'

    def __init__(self, detail, **kwargs):
        kwargs.setdefault('title', 'Layout Error')
        super(LayoutError, self).__init__(detail, **kwargs)


def child_uuid(root_uuid, child_name):
    """Deterministic uuid of a child: uuid5(namespace=root uuid, name=child name)."""
    return str(_uuid.uuid5(_uuid.UUID(model.normalize_uuid(root_uuid)), child_name))


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
                              % (kind, ', '.join(KINDS)))
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
    for kind in KINDS:
        _check_kind_options(kind, merged[kind])
    for key in ('pinned', 'unpinned'):
        value = merged[KIND_PCPU][key]
        if not isinstance(value, list):
            raise LayoutError('pcpu.%s must be a list of consumer UUIDs, got %r' % (key, value))
        for item in value:
            if not model.is_uuid_like(item):
                raise LayoutError('pcpu.%s: %r is not a consumer UUID' % (key, item))
    both = set(merged[KIND_PCPU]['pinned']) & set(merged[KIND_PCPU]['unpinned'])
    if both:
        raise LayoutError('pcpu: %s listed as both pinned and unpinned' % ', '.join(sorted(both)))
    return merged


def _check_kind_options(kind, opts):
    rc = opts.get('resource_class')
    if rc is not None:
        model.validate_name(rc, 'resource class')
    for trait in opts.get('traits') or []:
        model.validate_name(trait, 'trait')
    if opts.get('reserved') is not None and (isinstance(opts['reserved'], bool)
                                             or not isinstance(opts['reserved'], int)
                                             or opts['reserved'] < 0):
        raise LayoutError('%s.reserved must be a non-negative integer, got %r' % (kind, opts['reserved']))
    ratio = opts.get('allocation_ratio')
    if ratio is not None and (isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or ratio <= 0
                              or not model.is_finite(ratio)):
        raise LayoutError('%s.allocation_ratio must be a finite number > 0, got %r' % (kind, ratio))
    if kind == KIND_SRIOV and opts.get('class_style') not in _CLASS_STYLES:
        raise LayoutError('sriov.class_style must be one of %s, got %r'
                          % (', '.join(_CLASS_STYLES), opts.get('class_style')))
    if kind == KIND_NUMA:
        for rc_name in opts.get('resource_classes') or []:
            if rc_name not in NUMA_CLASSES:
                raise LayoutError('numa.resource_classes may only name %s, got %r'
                                  % (', '.join(NUMA_CLASSES), rc_name))
    if not isinstance(opts.get('name_template'), str) or not opts['name_template']:
        raise LayoutError('%s.name_template must be a non-empty string' % kind)


# -- naming -------------------------------------------------------------------

def _address_fields(address):
    address = str(address).lower()
    underscored = re.sub(r'[:.]', '_', address)
    return {
        'address': address,
        'ADDRESS': address.upper(),
        'address_underscored': underscored,
        'libvirt_name': 'pci_' + underscored,
    }


def _render_name(kind, template, fields):
    try:
        name = template.format(**fields)
    except (KeyError, IndexError, ValueError) as exc:
        raise LayoutError('%s.name_template %r cannot be rendered (%s); available fields: %s'
                          % (kind, template, exc, ', '.join(sorted(fields))))
    if not name or len(name) > _NAME_MAX:
        raise LayoutError('%s.name_template %r gives an invalid provider name %r (1..%d characters)'
                          % (kind, template, name, _NAME_MAX))
    return name


def pci_class(vendor_id, product_id):
    """nova's class for a PCI device: CUSTOM_PCI_<VENDOR>_<PRODUCT>, upper-cased."""
    return ('CUSTOM_PCI_%s_%s' % (_hex4(vendor_id), _hex4(product_id))).upper()


def _hex4(value):
    text = str(value or '').lower()
    if text.startswith('0x'):
        text = text[2:]
    if not re.match(r'^[0-9a-f]{1,4}$', text):
        raise LayoutError('%r is not a PCI vendor/product id (1-4 hex digits)' % (value,))
    return text.rjust(4, '0')


def _inventory(total, opts, max_unit=None):
    inv = {'total': total, 'max_unit': max_unit if max_unit is not None else total}
    if opts.get('reserved') is not None:
        inv['reserved'] = opts['reserved']
    if opts.get('allocation_ratio') is not None:
        inv['allocation_ratio'] = float(opts['allocation_ratio'])
    return inv


def _inherit(opts):
    """Fields an existing child keeps from Placement because the operator did not set them."""
    return sorted(f for f in ('reserved', 'allocation_ratio') if opts.get(f) is None)


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
    "warnings": [text]}``; a child is ``{"name", "kind", "device", "inventories":
    {RC: record}, "traits": [..], "inherit": [field], "numa_node"}`` where
    ``device`` is the key the ownership map uses (PCI address, or ``NUMA<N>``).
    Children are sorted by name.
    """
    if not root_name:
        raise LayoutError('the root provider has no name')
    _discovery.check_report(devices)
    devices = devices or {}
    opts = merge_options(options)
    warnings = []
    children = []
    nova = devices.get('nova_conf')

    if nova is not None:
        if opts[KIND_NUMA]['enabled']:
            raise LayoutError('the NUMA layout (children <node>_NUMA<N>) is one no nova release '
                              'writes: nova keeps VCPU/MEMORY_MB on the root, so it would double '
                              'the node\'s capacity. It is refused on a node whose nova.conf was '
                              'read (%s).' % ', '.join(nova.get('files') or ['nova.conf']))
        children = nova_children(root_name, devices, nova, warnings)
        children.extend(mem_encryption_children(root_name, devices))
        result = _finish_layout(root_name, opts, children, warnings, nova)
        result['cpu'] = nova_cpu(devices, nova, opts[KIND_PCPU])
        return result

    if opts[KIND_GPU]['enabled']:
        children.extend(_gpu_children(root_name, devices.get('gpus') or [], opts[KIND_GPU], warnings))
    if opts[KIND_SRIOV]['enabled']:
        children.extend(_sriov_children(root_name, devices.get('sriov_pfs') or [], opts[KIND_SRIOV], warnings))
    if opts[KIND_PCI]['enabled']:
        children.extend(_pci_children(root_name, devices.get('pci_devices') or [], opts[KIND_PCI], warnings))
    if opts[KIND_NUMA]['enabled']:
        warnings.append('NUMA children are a layout no nova release writes (nova keeps VCPU and '
                        'MEMORY_MB on the root); use it only without nova-compute on this node')
        children.extend(_numa_children(root_name, devices.get('numa_cells') or [], opts[KIND_NUMA],
                                       numa_source or {}, warnings))
    children.extend(mem_encryption_children(root_name, devices))
    result = _finish_layout(root_name, opts, children, warnings, None)
    result['cpu'] = None
    return result


# -- VCPU -> PCPU (nova Train: _update_provider_tree_for_pcpu) -----------------------------------

def nova_cpu(devices, nova, opts):
    """The root's CPU inventory nova 34 reports under this nova.conf, and which guests are
    pinned; None when ``[compute]cpu_dedicated_set`` is not set (nothing to do).

    PCPU = the dedicated set (nova: ``_get_pcpu_available``), min_unit 1, max_unit =
    total, ratio 1, reserved 0; VCPU = ``cpu_shared_set`` (or ``vcpu_pin_set``), none
    when only the dedicated set is given (``_get_vcpu_available``).  A guest is pinned
    when every vCPU is pinned to one host CPU of the dedicated set (how nova defines a
    ``hw:cpu_policy=dedicated`` domain), unpinned when it floats; anything else is
    undecided unless ``opts`` (layout ``pcpu.pinned`` / ``pcpu.unpinned``) says.
    """
    compute = nova.get('compute') or {}
    dedicated = compute.get('cpu_dedicated_set')
    if not dedicated:
        return None
    online = set(devices.get('cpus_online') or [])
    files = ', '.join(nova.get('files') or ['nova.conf'])
    if online and not set(dedicated) <= online:
        raise LayoutError('%s: [compute]cpu_dedicated_set names CPUs %s that are not online on this '
                          'host (online: %s): nova 34 refuses to start with it'
                          % (files, _cpus_text(sorted(set(dedicated) - online)), _cpus_text(sorted(online))))
    shared = compute.get('cpu_shared_set') or compute.get('vcpu_pin_set')
    vcpus = len(shared) if shared else 0
    pinned = {}
    for uuid, info in sorted((devices.get('instances') or {}).items()):
        cpus = info.get('pinned_cpus')
        if not cpus:
            pinned[uuid] = False
        elif set(cpus) <= set(dedicated):
            pinned[uuid] = True
        else:
            pinned[uuid] = ('its vCPUs are pinned to host CPUs %s, not all in cpu_dedicated_set %s'
                            % (_cpus_text(cpus), _cpus_text(dedicated)))
    for uuid in opts.get('pinned') or []:
        pinned[model.normalize_uuid(uuid)] = True
    for uuid in opts.get('unpinned') or []:
        pinned[model.normalize_uuid(uuid)] = False
    return {
        'dedicated': list(dedicated), 'shared': list(shared) if shared else None,
        'pcpu': {'total': len(dedicated), 'min_unit': 1, 'max_unit': len(dedicated), 'step_size': 1,
                 'allocation_ratio': 1.0, 'reserved': 0},
        'vcpu_total': vcpus, 'pinned': pinned, 'files': files,
    }


def _cpus_text(cpus):
    return ','.join(str(c) for c in cpus)


# -- memory encryption (nova 34: _update_provider_tree_for_memory_encryption) -------------------

KIND_MEM_ENCRYPTION = 'mem_encryption'
MEM_ENCRYPTION_CONTEXT = 'MEM_ENCRYPTION_CONTEXT'
# nova moves every MEM_ENCRYPTION_CONTEXT allocation of the root to the child carrying this
# trait (_reshape_memory_encryption_allocations), and takes the trait off the root
SEV_TRAIT = 'HW_CPU_X86_AMD_SEV'


def taker(children, rc):
    """The child every allocation of ``rc`` goes to whatever the consumer, by nova's rule
    (MEM_ENCRYPTION_CONTEXT -> ``<node>_amd_sev``; ``takes_all``), or None: the one place
    the planner (which moves them) and verification (which checks them) read the rule."""
    for child in children:
        if child.get('takes_all') == rc:
            return child
    return None


def mem_encryption_children(root_name, devices):
    """One child per memory encryption model the host supports: ``<root>_amd_sev``, ...

    Inventory as nova 34 writes it (``_get_memory_encryption_inventories``): total =
    the model's slots, min_unit = max_unit = step_size = 1, reserved 0, ratio 1.0;
    traits: the model's trait and OWNER_NOVA.  A model with no slots gets no provider
    (nova removes it).
    """
    report = devices.get('mem_encryption') or {}
    children = []
    for model_id, info in sorted((report.get('models') or {}).items()):
        name = '%s_%s' % (root_name, model_id)
        total = int(info.get('total') or 0)
        child = {'name': name, 'kind': KIND_MEM_ENCRYPTION, 'device': model_id, 'inventories': {},
                 'traits': sorted([info['trait'], 'OWNER_NOVA']), 'inherit': [], 'numa_node': -1}
        if total < 1:
            child['remove'] = True
        else:
            child['inventories'] = {MEM_ENCRYPTION_CONTEXT: {
                'total': total, 'min_unit': 1, 'max_unit': 1, 'step_size': 1, 'reserved': 0,
                'allocation_ratio': 1.0}}
            if info['trait'] == SEV_TRAIT:
                child['takes_all'] = MEM_ENCRYPTION_CONTEXT
                # the model each guest's <launchSecurity> shows, for the planner's warning
                child['guest_models'] = dict(
                    (model.normalize_uuid(u), i.get('mem_encryption'))
                    for u, i in (devices.get('instances') or {}).items() if i.get('mem_encryption'))
        children.append(child)
    return children


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
            model.validate_name(rc, 'resource class')
            model.normalize_inventory(inv, rc)
    children.sort(key=lambda c: c['name'])
    for child in children:
        child.setdefault('moves_from', {})
        child.setdefault('traits_exact', False)
        child.setdefault('heal', False)
        child.setdefault('takes_all', None)
    classes = sorted(set(rc for c in children for rc in c['inventories'])
                     | set(src for c in children for src in c['moves_from']))
    root_traits_remove = [SEV_TRAIT] if any(c['takes_all'] for c in children) else []
    return {'root_name': root_name, 'options': opts, 'children': children,
            'classes': classes, 'warnings': warnings, 'remove': remove,
            'root_traits_remove': root_traits_remove,
            'nova': None if nova is None else {
                'files': list(nova.get('files') or []),
                'pci_in_placement': bool((nova.get('pci') or {}).get('report_in_placement'))}}


# -- nova 34's own layout (nova.conf read) ------------------------------------------------------

def _libvirt_name(address):
    return 'pci_' + re.sub(r'[:.]', '_', str(address).lower())


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


def _normalize_custom(name):
    name = str(name).upper()
    if model.is_custom(name) or _names.is_standard_trait(name) or _names.is_standard_resource_class(name):
        return name
    return model.CUSTOM_PREFIX + re.sub(r'[^A-Z0-9_]+', '_', name)


def _tag_true(tags, key):
    return str(tags.get(key, 'false')).strip().lower() in ('1', 'true', 'yes', 'on', 'y', 't')


def _pci_traits(tags):
    """nova's ``_get_traits_for_dev``: tag traits (normalised) + COMPUTE_MANAGED_PCI_DEVICE."""
    traits = set(_normalize_custom(t.strip()) for t in str(tags.get('traits') or '').split(',') if t.strip())
    traits.add('COMPUTE_MANAGED_PCI_DEVICE')
    if _tag_true(tags, 'live_migratable'):
        traits.add('HW_PCI_LIVE_MIGRATABLE')
    return traits


def _pci_rc(tags, vendor_id, product_id):
    if tags.get('resource_class'):
        rc = str(tags['resource_class']).upper()
        if _names.is_standard_resource_class(rc) or model.is_custom(rc):
            return rc
        return _normalize_custom(rc)
    return pci_class(vendor_id, product_id)


def nova_pci_devices(devices, nova):
    """The PCI tracker's view: every device a [pci]device_spec matches, with its tags.

    ``[{address, vendor_id, product_id, dev_type: type-PCI|type-PF|type-VF,
    parent_addr, instance_uuid, tags}]``.  As nova: a VF's vendor is its PF's.
    """
    specs = (nova.get('pci') or {}).get('device_spec') or []
    if not specs:
        return []
    pfs = devices.get('sriov_pfs') or []
    pf_addresses = [pf['address'] for pf in pfs]
    out = []

    def consider(address, vendor, product, dev_type, parent, holder):
        spec = _novaconf.matching_spec(specs, address, vendor, product, parent, pf_addresses)
        if spec is None:
            return
        out.append({'address': address, 'vendor_id': vendor, 'product_id': product,
                    'dev_type': dev_type, 'parent_addr': parent, 'instance_uuid': holder,
                    'tags': _novaconf.spec_tags(spec)})

    for pf in pfs:
        consider(pf['address'], pf.get('vendor_id'), pf.get('product_id'), 'type-PF', None,
                 pf.get('instance_uuid'))
        for vf in pf.get('vfs') or []:
            consider(vf['address'], pf.get('vendor_id'), vf.get('product_id') or pf.get('vf_product_id'),
                     'type-VF', pf['address'], vf.get('instance_uuid'))
    for dev in devices.get('pci_devices') or []:
        consider(dev['address'], dev.get('vendor_id'), dev.get('product_id'), 'type-PCI', None,
                 dev.get('instance_uuid'))
    return sorted(out, key=lambda d: d['address'])


def nova_pci_providers(root_name, devices, nova, warnings):
    """nova's ``pci_placement_translator.PlacementView`` on a device report.

    One provider per type-PCI / type-PF device and one per PF for its VFs, named
    ``<root>_<ADDRESS>``; physnet-tagged devices are left out (Neutron SR-IOV).
    Raises LayoutError where nova raises (a PF and its VFs both listed, mixed
    classes or traits among one PF's VFs, one_time_use on a VF, devname specs).
    """
    for spec in (nova.get('pci') or {}).get('device_spec') or []:
        if spec.get('devname'):
            raise LayoutError('nova.conf: [pci]device_spec %s uses devname; with '
                              '[pci]report_in_placement nova refuses it ("Please use PCI address '
                              'in the configuration instead")' % (spec,))
    rps = {}
    for dev in nova_pci_devices(devices, nova):
        tags = dev['tags']
        if tags.get('physical_network'):
            warnings.append('PCI %s: physical_network tagged, left to Neutron (nova does not report '
                            'it in placement)' % dev['address'])
            continue
        parent = dev['address'] if dev['dev_type'] in ('type-PCI', 'type-PF') else dev['parent_addr']
        name = '%s_%s' % (root_name, parent.upper())
        rp = rps.setdefault(name, {'name': name, 'address': parent, 'parent': None, 'children': [],
                                   'rc': None, 'traits': None, 'otu': False})
        rc = _pci_rc(tags, dev['vendor_id'], dev['product_id'])
        traits = _pci_traits(tags)
        if dev['dev_type'] in ('type-PCI', 'type-PF'):
            if rp['parent'] or rp['children']:
                raise LayoutError('nova.conf [pci]device_spec matches both PF %s and its VFs (%s): '
                                  'nova refuses to start (PlacementPciDependentDeviceException)'
                                  % (dev['address'], ', '.join(d['address'] for d in rp['children'])))
            rp['parent'] = dev
            rp['rc'] = rc
            rp['otu'] = _tag_true(tags, 'one_time_use')
            if rp['otu']:
                traits.add('HW_PCI_ONE_TIME_USE')
            rp['traits'] = traits
        else:
            if rp['parent']:
                raise LayoutError('nova.conf [pci]device_spec matches both PF %s and its VF %s: nova '
                                  'refuses to start (PlacementPciDependentDeviceException)'
                                  % (parent, dev['address']))
            if rp['rc'] and rp['rc'] != rc:
                raise LayoutError('nova.conf gives the VFs of PF %s two resource classes (%s, %s): '
                                  'nova refuses to start (PlacementPciMixedResourceClassException)'
                                  % (parent, rp['rc'], rc))
            if rp['traits'] is not None and rp['traits'] != traits:
                raise LayoutError('nova.conf gives the VFs of PF %s different traits: nova refuses '
                                  'to start (PlacementPciMixedTraitsException)' % parent)
            if 'one_time_use' in tags:
                raise LayoutError('nova.conf sets one_time_use on VF %s: nova refuses it (only '
                                  'type-PCI and type-PF devices may set one_time_use)' % dev['address'])
            rp['children'].append(dev)
            rp['rc'] = rc
            rp['traits'] = traits
    return [rps[name] for name in sorted(rps)]


def nova_children(root_name, devices, nova, warnings):
    """The children nova 34 keeps under ``root_name`` for this report and nova.conf."""
    children = []
    for gpu, mtype, rc, total in nova_gpu_inventories(devices.get('gpus') or [], nova, warnings):
        address = _discovery.normalize_address(gpu['address'])
        name = '%s_%s' % (root_name, _libvirt_name(address))
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
    if (nova.get('pci') or {}).get('report_in_placement'):
        for rp in nova_pci_providers(root_name, devices, nova, warnings):
            devs = [rp['parent']] if rp['parent'] else rp['children']
            total = len(devs)
            inv = {'total': total, 'max_unit': total}
            if rp['otu'] and rp['parent'].get('instance_uuid'):
                inv['reserved'] = total
            children.append({
                'name': rp['name'], 'kind': KIND_SRIOV if rp['children'] else KIND_PCI,
                'device': _discovery.normalize_address(rp['address']),
                'inventories': {rp['rc']: inv},
                'traits': sorted(rp['traits'] | set(['OWNER_NOVA'])),
                'traits_exact': True, 'heal': True,
                'inherit': [f for f in ('reserved', 'allocation_ratio', 'min_unit', 'step_size')
                            if f not in inv],
                'holders': _holders(devs),
                'numa_node': -1,
            })
    return children


def _holders(devs):
    out = {}
    for dev in devs:
        holder = dev.get('instance_uuid')
        if holder:
            key = model.normalize_uuid(holder)
            out[key] = out.get(key, 0) + 1
    return out


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


def _gpu_children(root_name, gpus, opts, warnings):
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
        fields = dict(_address_fields(address), root=root_name, vendor_id=gpu.get('vendor_id', ''),
                      product_id=gpu.get('product_id', ''), numa_node=gpu.get('numa_node', -1),
                      mdev_type=mtype)
        out.append({
            'name': _render_name(KIND_GPU, opts['name_template'], fields),
            'kind': KIND_GPU,
            'device': fields['address'],
            'inventories': {opts['resource_class']: _inventory(total, opts)},
            'traits': sorted(set(opts.get('traits') or [])),
            'inherit': _inherit(opts),
            'numa_node': gpu.get('numa_node', -1),
        })
    return out


def _vf_product(pf, warnings):
    product = pf.get('vf_product_id')
    if not product:
        for vf in pf.get('vfs') or []:
            if vf.get('product_id'):
                product = vf['product_id']
                break
    if not product:
        warnings.append('SR-IOV PF %s: the report gives no VF product id, using the PF product id '
                        '%s for the class (set layout.sriov.resource_class if nova uses another)'
                        % (pf.get('address'), pf.get('product_id')))
        product = pf.get('product_id')
    return product


def _sriov_children(root_name, pfs, opts, warnings):
    out = []
    for pf in pfs:
        address = pf.get('address')
        if not address:
            raise LayoutError('an SR-IOV PF in the device report has no address')
        total = int(pf.get('num_vfs') or 0)
        if total < 1:
            warnings.append('SR-IOV PF %s: no VF enabled (num_vfs 0), no child' % address)
            continue
        if opts.get('resource_class'):
            rc = opts['resource_class']
        elif opts['class_style'] == 'sriov_net_vf':
            rc = 'SRIOV_NET_VF'
        else:
            rc = pci_class(pf.get('vendor_id'), _vf_product(pf, warnings))
        fields = dict(_address_fields(address), root=root_name, vendor_id=pf.get('vendor_id', ''),
                      product_id=pf.get('product_id', ''), numa_node=pf.get('numa_node', -1))
        out.append({
            'name': _render_name(KIND_SRIOV, opts['name_template'], fields),
            'kind': KIND_SRIOV,
            'device': fields['address'],
            'inventories': {rc: _inventory(total, opts)},
            'traits': sorted(set(opts.get('traits') or [])),
            'inherit': _inherit(opts),
            'numa_node': pf.get('numa_node', -1),
        })
    return out


def _pci_children(root_name, devs, opts, warnings):
    out = []
    for dev in devs:
        address = dev.get('address')
        if not address:
            raise LayoutError('a PCI device in the device report has no address')
        rc = opts.get('resource_class') or pci_class(dev.get('vendor_id'), dev.get('product_id'))
        fields = dict(_address_fields(address), root=root_name, vendor_id=dev.get('vendor_id', ''),
                      product_id=dev.get('product_id', ''), numa_node=dev.get('numa_node', -1))
        out.append({
            'name': _render_name(KIND_PCI, opts['name_template'], fields),
            'kind': KIND_PCI,
            'device': fields['address'],
            'inventories': {rc: _inventory(1, opts)},
            'traits': sorted(set(opts.get('traits') or [])),
            'inherit': _inherit(opts),
            'numa_node': dev.get('numa_node', -1),
        })
    return out


def split_proportional(total, weights):
    """Split the integer ``total`` in proportion to ``weights`` (largest remainder).

    The parts add up to ``total`` exactly; ties go to the earlier index, so the
    result is deterministic.  All-zero weights give all-zero parts.
    """
    wsum = sum(weights)
    if wsum <= 0 or total <= 0:
        return [0] * len(weights)
    parts = [total * w // wsum for w in weights]
    rest = total - sum(parts)
    order = sorted(range(len(weights)), key=lambda i: (-((total * weights[i]) % wsum), i))
    for i in order[:rest]:
        parts[i] += 1
    return parts


def _numa_children(root_name, cells, opts, source, warnings):
    cells = sorted(cells, key=lambda c: int(c.get('id', 0)))
    if not cells:
        warnings.append('NUMA layout enabled but the report lists no NUMA cell')
        return []
    cpu_w = [len(c.get('cpus') or []) for c in cells]
    mem_w = [int(c.get('memory_mb') or 0) for c in cells]
    per_cell = [{} for _cell in cells]
    for rc in opts.get('resource_classes') or []:
        if rc not in source:
            continue
        src = model.normalize_inventory(source[rc], rc)
        weights = mem_w if rc == 'MEMORY_MB' else cpu_w
        if sum(weights) <= 0:
            warnings.append('NUMA layout: the report gives no %s for any cell, %s stays where it is'
                            % ('memory' if rc == 'MEMORY_MB' else 'cpus', rc))
            continue
        totals = split_proportional(src['total'], weights)
        reserved_total = opts['reserved'] if opts.get('reserved') is not None else src['reserved']
        reserved = split_proportional(reserved_total, weights)
        ratio = float(opts['allocation_ratio']) if opts.get('allocation_ratio') is not None \
            else src['allocation_ratio']
        for i, part in enumerate(totals):
            if part < 1:
                continue
            max_unit = min(src['max_unit'], part)
            per_cell[i][rc] = {
                'total': part,
                'reserved': min(reserved[i], part),
                'min_unit': min(src['min_unit'], max_unit),
                'max_unit': max_unit,
                'step_size': src['step_size'],
                'allocation_ratio': ratio,
            }
    out = []
    for cell, inventories in zip(cells, per_cell):
        if not inventories:
            warnings.append('NUMA cell %s gets no inventory, no child' % cell.get('id'))
            continue
        cid = int(cell.get('id', 0))
        fields = {'root': root_name, 'id': cid}
        out.append({
            'name': _render_name(KIND_NUMA, opts['name_template'], fields),
            'kind': KIND_NUMA,
            'device': 'NUMA%d' % cid,
            'inventories': inventories,
            'traits': sorted(set(opts.get('traits') or [])),
            'inherit': [],
            'numa_node': cid,
        })
    return out


# -- ownership ------------------------------------------------------------------

def _consumer_key(value):
    try:
        return model.normalize_uuid(value)
    except PlacementError:
        return None


def ownership_from_devices(devices):
    """The ownership map ``{consumer: {device: units}}`` of a device report.

    The rule lives in :func:`discovery.ownership` (an mdev counts against its
    parent GPU, a VF against its PF, a PCI device against itself; one unit
    each, from the holders the report records); this only normalises the
    consumer uuids and device addresses to Placement's / the layout's keys.
    """
    _discovery.check_report(devices)
    out = {}
    for consumer, devs in _discovery.ownership(devices or {}).items():
        key = _consumer_key(consumer)
        if key is None:
            continue
        entry = out.setdefault(key, {})
        for device, units in devs.items():
            dkey = str(device).lower()
            entry[dkey] = entry.get(dkey, 0) + units
    return out


def merge_ownership(derived, overrides):
    """Operator overrides replace the derived entry of a consumer, device by device.

    An override value is either a unit count (applied to every moved class the
    device's child carries) or ``{RC: units}`` (e.g. for NUMA cells:
    ``{"NUMA0": {"VCPU": 4, "MEMORY_MB": 4096}}``).
    """
    out = dict((k, dict(v)) for k, v in (derived or {}).items())
    for consumer, devs in (overrides or {}).items():
        key = _consumer_key(consumer)
        if key is None:
            raise LayoutError('ownership override: %r is not a consumer uuid' % (consumer,))
        if not isinstance(devs, dict):
            raise LayoutError('ownership override for %s must map device -> units' % key)
        entry = out.setdefault(key, {})
        for device, units in devs.items():
            dkey = str(device).upper() if str(device).upper().startswith('NUMA') else str(device).lower()
            if isinstance(units, dict):
                for rc, n in units.items():
                    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                        raise LayoutError('ownership override %s/%s/%s: units must be an integer >= 0'
                                          % (key, dkey, rc))
                entry[dkey] = dict(units)
            elif isinstance(units, bool) or not isinstance(units, int) or units < 0:
                raise LayoutError('ownership override %s/%s: units must be an integer >= 0' % (key, dkey))
            else:
                entry[dkey] = units
    return out


def owned_units(entry, rc):
    """Units of ``rc`` one ownership value stands for (int, or {RC: n})."""
    if isinstance(entry, dict):
        return int(entry.get(rc, 0))
    return int(entry or 0)


def numa_child_names(root_name, devices, options=None):
    """The NUMA child names the layout would use, whatever inventory they get."""
    _discovery.check_report(devices)
    opts = merge_options(options)[KIND_NUMA]
    names = []
    for cell in (devices or {}).get('numa_cells') or []:
        names.append(_render_name(KIND_NUMA, opts['name_template'],
                                  {'root': root_name, 'id': int(cell.get('id', 0))}))
    return names
