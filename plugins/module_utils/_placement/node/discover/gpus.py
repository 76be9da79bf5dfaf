# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Discovery of the VGPU kind: physical GPUs that are mdev parents, and their mdevs.

A GPU is an mdev parent under ``<sysfs>/class/mdev_bus/<BDF>`` with its
``mdev_supported_types`` (``available_instances``, ``name``, ``device_api``,
``description``); the mediated devices that exist are
``<sysfs>/bus/mdev/devices/<uuid>``, links into ``.../<parent BDF>/<uuid>``.  A GPU that
is an SR-IOV VF (NVIDIA Ampere) names its PF in ``physfn``.  ccw / ap mdev parents (s390)
are not PCI GPUs and are skipped.  Which guest holds each mdev is :mod:`.holders`' job.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from . import sysfs as _sysfs
from .sysfs import DiscoveryError


def _parent_address(entry, real):
    """The PCI address of an mdev parent entry, or None for a parent that is not PCI."""
    try:
        return _sysfs.normalize_address(os.path.basename(real))
    except ValueError:
        try:
            return _sysfs.normalize_address(entry)
        except ValueError:
            # ccw / ap mdev parents (s390) are not PCI GPUs: not ours.
            return None


def _mdev_types(entry_path):
    """``{type: {name, available_instances, device_api, description}}`` of one mdev parent."""
    types = {}
    types_dir = os.path.join(entry_path, 'mdev_supported_types')
    for type_name in _sysfs.list_dir(types_dir):
        type_dir = os.path.join(types_dir, type_name)
        if not os.path.isdir(type_dir):
            continue
        available_path = os.path.join(type_dir, 'available_instances')
        available = _sysfs.read_int(available_path, required=True)
        if available < 0:
            raise DiscoveryError('malformed %s: negative available_instances %d' % (available_path, available),
                                 path=available_path)
        types[type_name] = {
            'name': _sysfs.read_optional(os.path.join(type_dir, 'name')),
            'available_instances': available,
            'device_api': _sysfs.read_optional(os.path.join(type_dir, 'device_api')),
            'description': _sysfs.read_optional(os.path.join(type_dir, 'description'), ''),
        }
    return types


def _gpu_record(sysfs, address, entry_path, types):
    """One GPU of the report: its PCI identity, its PF when it is a VF, its mdev types."""
    gpu = {'address': address}
    gpu.update(sysfs.pci_identity(address, fallback_dir=entry_path))
    physfn = os.path.join(sysfs.pci_path(address), 'physfn')
    gpu['physfn'] = sysfs.link_address(physfn) if os.path.lexists(physfn) else None
    gpu['mdev_types'] = types
    gpu['mdevs'] = []
    return gpu


def _attach_mdevs(sysfs, by_real, by_name, warnings):
    """Add each existing mdev to its parent GPU's ``mdevs``; warn about the ones that have none."""
    for entry in _sysfs.list_dir(sysfs.mdev_dev_dir):
        link = os.path.join(sysfs.mdev_dev_dir, entry)
        if not _sysfs.UUID_RE.match(entry):
            warnings.append('ignoring %s: not an mdev UUID' % link)
            continue
        real = os.path.realpath(link)
        if not os.path.isdir(real):
            warnings.append('mdev %s: %s does not resolve to a device directory' % (entry, link))
            continue
        parent_real = os.path.dirname(real)
        gpu = by_real.get(parent_real) or by_name.get(os.path.basename(parent_real).lower())
        if gpu is None:
            warnings.append('mdev %s: parent %s is not an mdev parent under %s'
                            % (entry, os.path.basename(parent_real), sysfs.mdev_bus_dir))
            continue
        type_link = os.path.join(link, 'mdev_type')
        mdev_type = None
        if os.path.lexists(type_link):
            mdev_type = sysfs.link_target_name(type_link)
        gpu['mdevs'].append({'uuid': entry.lower(), 'type': mdev_type, 'instance_uuid': None})


def discover_gpus(sysfs, warnings):
    """The report's ``gpus``: every PCI mdev parent with its types and mdevs, in address order."""
    gpus = []
    by_real = {}
    by_name = {}
    for entry in _sysfs.list_dir(sysfs.mdev_bus_dir):
        entry_path = os.path.join(sysfs.mdev_bus_dir, entry)
        if not os.path.isdir(entry_path):
            continue
        real = os.path.realpath(entry_path)
        address = _parent_address(entry, real)
        if address is None:
            continue
        gpu = _gpu_record(sysfs, address, entry_path, _mdev_types(entry_path))
        gpus.append(gpu)
        by_real[real] = gpu
        by_name[address] = gpu
    _attach_mdevs(sysfs, by_real, by_name, warnings)
    for gpu in gpus:
        gpu['mdevs'].sort(key=lambda m: m['uuid'])
    gpus.sort(key=lambda g: g['address'])
    return gpus
