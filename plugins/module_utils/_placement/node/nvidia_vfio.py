# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA vGPUs of the vendor-specific VFIO framework: discovery of the VFs that are vGPUs.

From the R580 drivers on Linux 6.8+, Ada, Hopper and Blackwell GPUs have no mdev
interface: the GPU (an SR-IOV physical function) has virtual functions, each with an
``nvidia/`` directory in sysfs::

    <sysfs>/bus/pci/devices/<VF>/nvidia/current_vgpu_type      "0", or the vGPU type id set
    <sysfs>/bus/pci/devices/<VF>/nvidia/creatable_vgpu_types   "ID    : vGPU Name" then
                                                               "<id>  : <name>" per line
    <sysfs>/bus/pci/devices/<VF>/driver -> .../drivers/<name>

A VF whose ``current_vgpu_type`` is written is a vGPU, given to a guest as a plain VFIO PCI
device (``<hostdev type='pci'>`` naming the VF).  nova tracks these VFs with its PCI tracker
only, through ``[pci]device_spec`` (its ``resource_class``, ``traits``, ``live_migratable``):
the Placement layout is the SR-IOV one of :mod:`.kinds.pci`, nothing of the mdev kind.

:func:`annotate` adds to the device report's SR-IOV records what sysfs says of the vGPU:
the PF gets ``vgpu_framework: nvidia-vfio``, every VF with an ``nvidia/`` directory gets
``driver``, ``vgpu_type`` (``{id, name}``, None when no type is set) and
``creatable_vgpu_types`` (``[{id, name}]`` as the file lists them).  :func:`guests` gives each
instance the vGPUs it holds (``vgpus``: ``[{address, physfn, type_id, type}]``).

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from .discover import sysfs as _sysfs
from .discover.sysfs import DiscoveryError

FRAMEWORK = 'nvidia-vfio'
VENDOR_DIR = 'nvidia'
CURRENT = 'current_vgpu_type'
CREATABLE = 'creatable_vgpu_types'

_TYPE_LINE_RE = re.compile(r'^\s*([0-9]+)\s*:\s*(.*?)\s*$')


def parse_vgpu_types(text, path):
    """``creatable_vgpu_types`` text -> ``[{id, name}]`` in the file's order.

    The first line may be the header (``ID    : vGPU Name``); every other non-empty line is
    ``<decimal id> : <name>``.  Anything else is refused naming the file.
    """
    out = []
    lines = [line for line in (text or '').splitlines() if line.strip()]
    for index, line in enumerate(lines):
        match = _TYPE_LINE_RE.match(line)
        if match is None:
            if index == 0 and ':' in line:
                continue  # the header
            raise DiscoveryError('malformed %s: expected "<id> : <vGPU name>" lines, got %r'
                                 % (path, line.strip()[:80]), path=path)
        out.append({'id': int(match.group(1)), 'name': match.group(2) or None})
    return out


def _vf_record(sysfs, address):
    """What the VF's ``nvidia/`` directory and driver link say, or None without that directory."""
    base = sysfs.pci_path(address)
    vendor_dir = os.path.join(base, VENDOR_DIR)
    if not os.path.isdir(vendor_dir):
        return None
    current_path = os.path.join(vendor_dir, CURRENT)
    current = _sysfs.read_int(current_path, required=True)
    if current < 0:
        raise DiscoveryError('malformed %s: negative vGPU type id %d' % (current_path, current),
                             path=current_path)
    creatable_path = os.path.join(vendor_dir, CREATABLE)
    creatable = []
    if os.path.lexists(creatable_path):
        creatable = parse_vgpu_types(_sysfs.read(creatable_path), creatable_path)
    driver_link = os.path.join(base, 'driver')
    driver = sysfs.link_target_name(driver_link) if os.path.lexists(driver_link) else None
    return {'driver': driver, 'current': current, 'creatable': creatable}


def annotate(sysfs, pfs, warnings):
    """Mark the SR-IOV PFs whose VFs are NVIDIA vGPUs and describe each such VF (in place).

    A type id that no ``creatable_vgpu_types`` of the host names (a GPU whose every VF has a
    type lists none) keeps its id with ``name: None`` and a warning says so.
    """
    names_by_pf = {}
    names = {}
    found = []
    for pf in pfs:
        pf['vgpu_framework'] = None
        for vf in pf.get('vfs') or []:
            info = _vf_record(sysfs, vf['address'])
            if info is None:
                continue
            pf['vgpu_framework'] = FRAMEWORK
            for item in info['creatable']:
                if item['name']:
                    names_by_pf.setdefault(pf['address'], {}).setdefault(item['id'], item['name'])
                    names.setdefault(item['id'], item['name'])
            found.append((pf, vf, info))
    for pf, vf, info in found:
        vf['driver'] = info['driver']
        vf['creatable_vgpu_types'] = info['creatable']
        vf['vgpu_type'] = None
        if info['current']:
            name = names_by_pf.get(pf['address'], {}).get(info['current']) or names.get(info['current'])
            vf['vgpu_type'] = {'id': info['current'], 'name': name}
            if name is None:
                warnings.append('VF %s of NVIDIA GPU %s: vGPU type id %d (%s) is named by no %s of this host; '
                                'the report gives its id only'
                                % (vf['address'], pf['address'], info['current'], CURRENT, CREATABLE))


def type_label(vgpu_type):
    """``'NVIDIA L4-6Q (id 1152)'``, ``'id 1152'`` or ``'none'``."""
    if not vgpu_type:
        return 'none'
    if vgpu_type.get('name'):
        return '%s (id %s)' % (vgpu_type['name'], vgpu_type.get('id'))
    return 'id %s' % vgpu_type.get('id')


def guests(report, warnings):
    """Each instance's ``vgpus`` (the NVIDIA vGPU VFs it holds); a guest holding a VF with no
    vGPU type set is warned about (that VF gives it no vGPU)."""
    held = {}
    for pf in report.get('sriov_pfs') or []:
        if pf.get('vgpu_framework') != FRAMEWORK:
            continue
        for vf in pf.get('vfs') or []:
            if 'vgpu_type' not in vf or not vf.get('instance_uuid'):
                continue
            vgpu = vf['vgpu_type'] or {}
            held.setdefault(vf['instance_uuid'], []).append({
                'address': vf['address'], 'physfn': pf['address'],
                'type_id': vgpu.get('id'), 'type': vgpu.get('name')})
            if not vf['vgpu_type']:
                warnings.append('instance %s holds VF %s of NVIDIA GPU %s, which has no vGPU type '
                                '(nvidia/%s is 0)' % (vf['instance_uuid'], vf['address'], pf['address'], CURRENT))
    for uuid, info in (report.get('instances') or {}).items():
        info['vgpus'] = sorted(held.get(uuid, []), key=lambda v: v['address'])
