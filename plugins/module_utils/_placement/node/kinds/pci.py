# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCI devices and SR-IOV PFs -> PCI children, as nova's PCI tracker reports them in
placement (``nova/compute/pci_placement_translator.py``, Zed+): one child
``<root>_<ADDRESS>`` per type-PCI / type-PF device and one per PF for its VFs, class
``CUSTOM_PCI_<VENDOR>_<PRODUCT>`` (or the spec's ``resource_class``), traits
``COMPUTE_MANAGED_PCI_DEVICE``, ``OWNER_NOVA`` and the spec's; without a nova.conf,
the layout options' PCI and SR-IOV children (one per PF, ``total = num_vfs``).

NVIDIA vGPUs of the vendor-specific VFIO framework (R580+, a VF whose
``nvidia/current_vgpu_type`` is set, see :mod:`..nvidia_vfio`) are VFs like any other here, as
they are for nova: the PF's VFs that a device_spec selects make ONE provider, class and traits
from the spec (nova reads nothing of the vGPU type); the layout only warns where the vGPU
types and that provider disagree.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from .. import discovery as _discovery
from ...rules import names as name_rules
from ...rules import providers as provider_rules
from ... import names as _names
from .. import novaconf as _novaconf
from .. import nvidia_vfio as _nvidia_vfio
from .common import (
    KIND_PCI,
    KIND_SRIOV,
    Kind,
    LayoutError,
    PlanError,
    address_fields,
    amount_on,
    inherit_fields,
    inventory_record,
    pci_class,
    plan_assignments,
    plan_count,
    render_name,
)

#: The ``how`` of the assignment record of a consumer nova's PCI allocation healing changes
HOW_HEAL = 'pci-heal'


def _normalize_custom(name):
    name = str(name).upper()
    if name_rules.is_custom(name) or _names.is_standard_trait(name) or _names.is_standard_resource_class(name):
        return name
    return name_rules.CUSTOM_PREFIX + re.sub(r'[^A-Z0-9_]+', '_', name)


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
        if _names.is_standard_resource_class(rc) or name_rules.is_custom(rc):
            return rc
        return _normalize_custom(rc)
    return pci_class(vendor_id, product_id)


def nova_pci_devices(devices, nova):
    """The PCI tracker's view: every device a [pci]device_spec matches, with its tags.

    ``[{address, vendor_id, product_id, dev_type: type-PCI|type-PF|type-VF,
    parent_addr, instance_uuid, tags}]`` (a VF that is an NVIDIA vGPU also has ``vgpu_type``,
    for the warnings only).  As nova: a VF's vendor is its PF's.
    """
    specs = (nova.get('pci') or {}).get('device_spec') or []
    if not specs:
        return []
    pfs = devices.get('sriov_pfs') or []
    pf_addresses = [pf['address'] for pf in pfs]
    out = []

    def consider(address, vendor, product, dev_type, parent, holder, record=None):
        spec = _novaconf.matching_spec(specs, address, vendor, product, parent, pf_addresses)
        if spec is None:
            return
        dev = {'address': address, 'vendor_id': vendor, 'product_id': product,
               'dev_type': dev_type, 'parent_addr': parent, 'instance_uuid': holder,
               'tags': _novaconf.spec_tags(spec)}
        if record is not None and 'vgpu_type' in record:
            dev['vgpu_type'] = record['vgpu_type']
        out.append(dev)

    for pf in pfs:
        consider(pf['address'], pf.get('vendor_id'), pf.get('product_id'), 'type-PF', None,
                 pf.get('instance_uuid'))
        for vf in pf.get('vfs') or []:
            consider(vf['address'], pf.get('vendor_id'), vf.get('product_id') or pf.get('vf_product_id'),
                     'type-VF', pf['address'], vf.get('instance_uuid'), vf)
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
    out = [rps[name] for name in sorted(rps)]
    for rp in out:
        _vgpu_warnings(rp, warnings)
    return out


def _vgpu_warnings(rp, warnings):
    """What nova does not check with NVIDIA vGPU VFs: a selected VF without a vGPU type, and
    VFs of several vGPU types on one provider (one class: a flavor cannot tell them apart)."""
    vgpus = [d for d in rp['children'] if 'vgpu_type' in d]
    if not vgpus:
        return
    for dev in vgpus:
        if not dev['vgpu_type']:
            warnings.append('nova.conf [pci]device_spec selects VF %s of NVIDIA GPU %s, which has no vGPU '
                            'type (nvidia/current_vgpu_type is 0): nova 34 counts it in %s on %s all the '
                            'same; write a type to it or leave it out of the device_spec'
                            % (dev['address'], rp['address'], rp['rc'], rp['name']))
    kinds = {}
    for dev in vgpus:
        if dev['vgpu_type']:
            kinds.setdefault(_nvidia_vfio.type_label(dev['vgpu_type']), []).append(dev['address'])
    if len(kinds) > 1:
        warnings.append('the VFs of NVIDIA GPU %s that nova.conf [pci]device_spec selects have %d vGPU types '
                        '(%s) but nova 34 reports them on one provider, %s, in one class, %s: a guest asking '
                        'for %s may get any of them'
                        % (rp['address'], len(kinds),
                           '; '.join('%s: %s' % (k, ', '.join(v)) for k, v in sorted(kinds.items())),
                           rp['name'], rp['rc'], rp['rc']))


def nova_children(root_name, devices, nova, warnings):
    """The PCI children nova 34 keeps under ``root_name`` with ``[pci]report_in_placement``
    (its ``pci_placement_translator``): one per device or PF, one per PF for its VFs."""
    children = []
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
            key = provider_rules.normalize_uuid(holder)
            out[key] = out.get(key, 0) + 1
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


def _device_child(kind, root_name, dev, address, rc, total, opts):
    """The child of one device (an SR-IOV PF: its VFs; a PCI device: itself) in the option layout."""
    fields = dict(address_fields(address), root=root_name, vendor_id=dev.get('vendor_id', ''),
                  product_id=dev.get('product_id', ''), numa_node=dev.get('numa_node', -1))
    return {
        'name': render_name(kind, opts['name_template'], fields),
        'kind': kind,
        'device': fields['address'],
        'inventories': {rc: inventory_record(total, opts)},
        'traits': sorted(set(opts.get('traits') or [])),
        'inherit': inherit_fields(opts),
        'numa_node': dev.get('numa_node', -1),
    }


def sriov_option_children(root_name, pfs, opts, warnings):
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
        out.append(_device_child(KIND_SRIOV, root_name, pf, address, rc, total, opts))
    return out


def pci_option_children(root_name, devs, opts, warnings):
    out = []
    for dev in devs:
        address = dev.get('address')
        if not address:
            raise LayoutError('a PCI device in the device report has no address')
        rc = opts.get('resource_class') or pci_class(dev.get('vendor_id'), dev.get('product_id'))
        out.append(_device_child(KIND_PCI, root_name, dev, address, rc, 1, opts))
    return out


def heal(healers, work):
    """nova's PCI allocation healing, done in the reshape: every holder in the tree gets its units
    (``work``: the :class:`..plan_state.PlanState`)."""
    for child in healers:
        rc = next(iter(child['inventories']))
        for consumer, units in sorted(child['holders'].items()):
            if consumer not in work.current:
                work.warn('consumer %s holds %d device(s) of %s but has no allocation on this '
                          'node (a migration holds them, or it is gone): nova does not heal it '
                          'either' % (consumer, units, child['name']))
                continue
            allocs = work.allocations_of(consumer)
            have = amount_on(allocs, child['uuid'], rc)
            if have == units:
                continue
            entry = allocs.setdefault(child['uuid'], {'resources': {}})
            entry['resources'][rc] = entry['resources'].get(rc, 0) + units - have
            work.use(child['uuid'], rc, units - have)
            if not allocs[child['uuid']]['resources'][rc]:
                del allocs[child['uuid']]['resources'][rc]
            work.assign(consumer, rc, {'how': HOW_HEAL, 'amount': units - have, 'to': {child['name']: units}})


class PCI(Kind):
    """PCI devices and SR-IOV PFs -> PCI children (nova's PCI-in-placement); heals the holders
    the device report names; refuses what nova 34's PCI tracking refuses at start-up."""

    name = 'pci'
    discovery = 'node/discover/pci.py'
    need = 'pci'
    options = (KIND_SRIOV, KIND_PCI)
    own_assignments = (HOW_HEAL,)

    def children(self, root_name, devices, opts, nova, numa_source, warnings):
        if nova is not None:
            return nova_children(root_name, devices, nova, warnings)
        out = []
        if opts[KIND_SRIOV]['enabled']:
            out.extend(sriov_option_children(root_name, devices.get('sriov_pfs') or [], opts[KIND_SRIOV], warnings))
        if opts[KIND_PCI]['enabled']:
            out.extend(pci_option_children(root_name, devices.get('pci_devices') or [], opts[KIND_PCI], warnings))
        return out

    def writes(self, layout, root_inv):
        holders = set()
        for want in layout.get('children') or ():
            if want.get('heal'):
                holders.update(str(c).lower() for c in want.get('holders') or {})
        return set(), holders

    def check_root(self, work):
        """nova 34's PCI tracking: COMPUTE_MANAGED_PCI_DEVICE without report_in_placement, and
        PCI providers outside the PCI view it builds, stop its start-up."""
        nova = work.layout.get('nova')
        if nova is None:
            return
        tree = work.tree
        wanted = set(c['name'] for c in work.children)
        # nova's ensure_tracking_was_not_enabled_before looks at every provider of the tree,
        # the root included; the PCI view (stray check) only at the children
        marked = sorted(tree.name(u) for u in tree.providers
                        if 'COMPUTE_MANAGED_PCI_DEVICE' in tree.traits(u))
        managed = [n for n in marked if n != tree.name(work.root_uuid)]
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

    def consumers(self, work):
        healers = [c for c in work.children if c['heal']]
        return set(c for c in work.current if any(c in child['holders'] for child in healers))

    def settle(self, work):
        heal([c for c in work.children if c['heal']], work)

    def held_devices(self, devices, here):
        classes = [rc for rc in here if pci_class_held(rc)]
        if not classes:
            return None
        pfs = devices.get('sriov_pfs') or ()
        items = (list(devices.get('pci_devices') or ()) + [vf for pf in pfs for vf in pf.get('vfs') or ()]
                 + [pf for pf in pfs if pf.get('instance_uuid')])
        return 'PCI device', items, classes

    def planned_changes(self, plan, consumer, then, planned, moves, delta):
        """nova's PCI allocation healing adds or takes the units a guest's devices back
        (``assignments`` ``how: pci-heal``, its ``amount``)."""
        change = {}
        for rc, rec in plan_assignments(plan, consumer):
            if rec.get('how') in self.own_assignments:
                change[rc] = change.get(rc, 0) + (plan_count(rec.get('amount')) or 0)
        return change

    def root_class(self, rc):
        return rc in ('SRIOV_NET_VF', 'PGPU') or rc.startswith('CUSTOM_PCI_')


def pci_class_held(rc):
    """A class a consumer holds through a PCI device or VF of the host."""
    return rc.startswith('CUSTOM_PCI_') or rc in ('SRIOV_NET_VF', 'PCI_DEVICE')


KIND = PCI()
