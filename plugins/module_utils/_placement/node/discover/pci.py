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
