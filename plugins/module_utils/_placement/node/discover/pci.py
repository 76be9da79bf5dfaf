# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Discovery of the PCI kinds: SR-IOV physical functions with their VFs, and other PCI devices.

A PF is a PCI function with ``sriov_totalvfs``; its VFs are its ``virtfnN`` links (the
VFs' product id is read from the first).  A PF whose VFs are mdev parents (NVIDIA Ampere
vGPU) is a GPU (:mod:`.gpus`), not listed here.  Another PCI device is reported when the
operator's ``pci_filters`` or a ``[pci]device_spec`` of nova.conf (:mod:`..novaconf`)
selects it; VFs and PFs never are.  The VFs that are NVIDIA vGPUs of the vendor-specific
VFIO framework are described afterwards by :mod:`..nvidia_vfio`.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from . import sysfs as _sysfs
from .. import novaconf as _novaconf
from .. import nvidia_vfio as _nvidia_vfio
from .common import TEXT_OR_NULL, DevicePart, check_entries, hold

_VIRTFN_RE = re.compile(r'^virtfn([0-9]+)$')


def _pci_functions(sysfs):
    """``{address: directory}`` of every PCI function under ``bus/pci/devices``."""
    infos = {}
    for entry in _sysfs.list_dir(sysfs.pci_dir):
        try:
            address = _sysfs.normalize_address(entry)
        except ValueError:
            continue
        base = sysfs.pci_path(address)
        if not os.path.isdir(base):
            continue
        infos[address] = base
    return infos


def _virtual_functions(sysfs, base):
    """``[(index, VF address)]`` of the ``virtfnN`` links of a PF, in index order."""
    vfs = []
    for name in _sysfs.list_dir(base):
        match = _VIRTFN_RE.match(name)
        if not match:
            continue
        vfs.append((int(match.group(1)), sysfs.link_address(os.path.join(base, name))))
    vfs.sort()
    return vfs


def _sriov_pf(sysfs, address, base, total_path):
    """The report's record of one SR-IOV PF, and its VF addresses."""
    total = _sysfs.read_int(total_path)
    num = _sysfs.read_int(os.path.join(base, 'sriov_numvfs'), default=0)
    vfs = [vf for _index, vf in _virtual_functions(sysfs, base)]
    pf = {'address': address}
    pf.update(sysfs.pci_identity(address))
    pf['total_vfs'] = total
    pf['num_vfs'] = num
    pf['vf_product_id'] = None
    pf['instance_uuid'] = None
    pf['vfs'] = [{'address': vf, 'instance_uuid': None} for vf in vfs]
    if vfs:
        pf['vf_product_id'] = _sysfs.read_hex_id(os.path.join(sysfs.pci_path(vfs[0]), 'device'))
    return pf, vfs


def _selected(sysfs, address, filters, specs):
    """The PCI identity of a device the filters or a device_spec select, else None."""
    ident = sysfs.pci_identity(address)
    if filters and _sysfs.filters_match(filters, ident['vendor_id'], ident['product_id']):
        return ident
    if specs and _novaconf.matching_spec(specs, address, ident['vendor_id'], ident['product_id']):
        return ident
    return None


def _other_devices(sysfs, infos, skip, filters, specs):
    """The report's ``pci_devices``: functions neither PF nor VF nor skipped that are selected."""
    devices = []
    if not filters and not specs:
        return devices
    for address in sorted(infos):
        if address in skip:
            continue
        base = infos[address]
        if os.path.lexists(os.path.join(base, 'sriov_totalvfs')):
            continue
        if os.path.lexists(os.path.join(base, 'physfn')):
            continue
        ident = _selected(sysfs, address, filters, specs)
        if ident is None:
            continue
        device = {'address': address}
        device.update(ident)
        device['instance_uuid'] = None
        devices.append(device)
    return devices


def discover_pci(sysfs, gpu_addresses, filters, specs=None):
    """SR-IOV PFs and the other PCI devices that ``filters`` or a nova device_spec select."""
    infos = _pci_functions(sysfs)
    pfs = []
    vf_of = {}
    for address in sorted(infos):
        base = infos[address]
        total_path = os.path.join(base, 'sriov_totalvfs')
        if not os.path.lexists(total_path):
            continue
        pf, vfs = _sriov_pf(sysfs, address, base, total_path)
        for vf in vfs:
            vf_of[vf] = address
        pfs.append(pf)
    # A PF whose VFs are mdev parents (e.g. NVIDIA Ampere vGPU) is a GPU, not a NIC.
    gpu_pfs = set(vf_of[a] for a in gpu_addresses if a in vf_of)
    pfs = [pf for pf in pfs if pf['address'] not in gpu_pfs]
    skip = set(gpu_addresses) | gpu_pfs | set(vf_of)
    return pfs, _other_devices(sysfs, infos, skip, filters, specs)


def _check_pf(pf, where):
    check_entries(pf.get('vfs'), where + '.vfs', 'VF records',
                  {'address': 'text!', 'product_id': TEXT_OR_NULL, 'instance_uuid': TEXT_OR_NULL,
                   'driver': TEXT_OR_NULL, 'vgpu_type': 'mapping?'})


def _hold_pci(uuid, label, info, pci_index, gpu_addresses, others, warnings):
    for address in info['pci_addresses']:
        target = pci_index.get(address)
        if target is None:
            if address in others:
                continue            # another part's device (its holder sets it)
            if address in gpu_addresses:
                warnings.append('instance %s holds mdev parent GPU %s by PCI passthrough' % (label, address))
            else:
                warnings.append('instance %s holds PCI device %s which is not a reported device '
                                '(no SR-IOV PF/VF, not matched by pci_filters)' % (label, address))
            continue
        hold(target, uuid, 'PCI device %s' % address, warnings)


class PCI(DevicePart):
    """The report's ``sriov_pfs`` (with their VFs, NVIDIA vGPU VFs annotated: node/nvidia_vfio.py)
    and ``pci_devices``; a guest holds a VF (counting against its PF), a PF whole, or a device."""

    name = 'pci'
    report_keys = ('sriov_pfs', 'pci_devices')

    def read(self, reading, report):
        nova = reading.nova
        specs = (nova or {}).get('pci', {}).get('device_spec') if nova else None
        gpu_addresses = set(g['address'] for g in report.get('gpus') or [])
        pfs, devices = discover_pci(reading.sysfs, gpu_addresses, reading.filters, specs)
        _nvidia_vfio.annotate(reading.sysfs, pfs, reading.warnings)
        return {'sriov_pfs': pfs, 'pci_devices': devices}

    def check(self, devices, field):
        check_entries(devices.get('sriov_pfs'), field + '.sriov_pfs', 'SR-IOV PF records',
                      {'address': 'text!', 'vendor_id': TEXT_OR_NULL, 'product_id': TEXT_OR_NULL,
                       'vf_product_id': TEXT_OR_NULL, 'num_vfs': 'int?', 'total_vfs': 'int?', 'numa_node': 'int?',
                       'instance_uuid': TEXT_OR_NULL, 'vgpu_framework': TEXT_OR_NULL}, _check_pf)
        check_entries(devices.get('pci_devices'), field + '.pci_devices', 'PCI device records',
                      {'address': 'text!', 'vendor_id': TEXT_OR_NULL, 'product_id': TEXT_OR_NULL,
                       'numa_node': 'int?', 'instance_uuid': TEXT_OR_NULL})

    def addresses(self, devices, field):
        out = []
        for index, pf in enumerate(devices.get('sriov_pfs') or []):
            out.append(('%s.sriov_pfs[%d].address' % (field, index), pf['address']))
            for v_index, vf in enumerate(pf.get('vfs') or []):
                out.append(('%s.sriov_pfs[%d].vfs[%d].address' % (field, index, v_index), vf['address']))
        for index, dev in enumerate(devices.get('pci_devices') or []):
            out.append(('%s.pci_devices[%d].address' % (field, index), dev['address']))
        return out

    def holder(self, report, reported=()):
        index = {}
        for pf in report['sriov_pfs']:
            index[pf['address']] = pf
            for vf in pf['vfs']:
                index[vf['address']] = vf
        for device in report['pci_devices']:
            index[device['address']] = device
        # a GPU held whole is not a reported PCI device: said apart
        gpu_addresses = set(g['address'] for g in report.get('gpus') or [])
        # a device another part of the report lists (not a GPU) is that part's to hold
        others = set(reported) - set(index) - gpu_addresses
        return lambda uuid, label, info, warnings: _hold_pci(uuid, label, info, index, gpu_addresses, others,
                                                             warnings)

    def after_holding(self, report, warnings):
        _nvidia_vfio.guests(report, warnings)

    def owned(self, report):
        out = []
        for pf in report.get('sriov_pfs') or []:
            out.append((pf.get('instance_uuid'), pf['address']))
            for vf in pf.get('vfs') or []:
                out.append((vf.get('instance_uuid'), pf['address']))
        for device in report.get('pci_devices') or []:
            out.append((device.get('instance_uuid'), device['address']))
        return out


PART = PCI()
