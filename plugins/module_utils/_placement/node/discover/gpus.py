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
from ... import shapes as _shapes
from .sysfs import DiscoveryError
from .common import TEXT_OR_NULL, DevicePart, check_entries, hold


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


def _check_gpu(gpu, where):
    types = _shapes.expect(gpu.get('mdev_types'), 'mapping', where + '.mdev_types',
                           'a mapping of mdev type -> {available_instances, ...}', optional=True)
    for name, info in (types or {}).items():
        _shapes.expect_fields(info, '%s.mdev_types.%s' % (where, name), {'available_instances': 'int?'})
    check_entries(gpu.get('mdevs'), where + '.mdevs', 'mdev records',
                  {'uuid': 'text!', 'type': TEXT_OR_NULL, 'instance_uuid': TEXT_OR_NULL})


def _hold_mdevs(uuid, label, info, mdev_index, warnings):
    for mdev_uuid in info['mdevs']:
        found = mdev_index.get(mdev_uuid)
        if found is None:
            warnings.append('instance %s holds mdev %s which does not exist in sysfs' % (label, mdev_uuid))
            continue
        _gpu, mdev = found
        hold(mdev, uuid, 'mdev %s' % mdev_uuid, warnings)


class GPUs(DevicePart):
    """The report's ``gpus``: mdev parents, their types and mdevs; a guest holds an mdev, which
    counts against its parent GPU."""

    name = 'gpus'
    report_keys = ('gpus',)

    def read(self, reading, report):
        return {'gpus': discover_gpus(reading.sysfs, reading.warnings)}

    def check(self, devices, field):
        check_entries(devices.get('gpus'), field + '.gpus', 'GPU records',
                      {'address': 'text!', 'vendor_id': TEXT_OR_NULL, 'product_id': TEXT_OR_NULL,
                       'numa_node': 'int?', 'mdev_types': 'mapping?'}, _check_gpu)

    def addresses(self, devices, field):
        return [('%s.gpus[%d].address' % (field, index), gpu['address'])
                for index, gpu in enumerate(devices.get('gpus') or [])]

    def holder(self, report, reported=()):
        index = {}
        for gpu in report['gpus']:
            for mdev in gpu['mdevs']:
                index[mdev['uuid']] = (gpu, mdev)
        return lambda uuid, label, info, warnings: _hold_mdevs(uuid, label, info, index, warnings)

    def after_holding(self, report, warnings):
        for gpu in report['gpus']:
            for mdev in gpu['mdevs']:
                if mdev['instance_uuid'] is None:
                    warnings.append('mdev %s on GPU %s (type %s) is not held by any instance'
                                    % (mdev['uuid'], gpu['address'], mdev['type']))

    def owned(self, report):
        return [(mdev.get('instance_uuid'), gpu['address'])
                for gpu in report.get('gpus') or [] for mdev in gpu.get('mdevs') or []]

    def report_warnings(self, report):
        warnings = []
        known = set()
        for gpu in report.get('gpus') or []:
            for mdev in gpu.get('mdevs') or []:
                known.add(mdev['uuid'])
                if not mdev.get('instance_uuid'):
                    warnings.append('mdev %s on GPU %s (type %s) is not held by any instance'
                                    % (mdev['uuid'], gpu['address'], mdev.get('type')))
        for uuid in sorted(report.get('instances') or {}):
            for mdev_uuid in (report['instances'][uuid] or {}).get('mdevs') or []:
                if mdev_uuid not in known:
                    warnings.append('instance %s holds mdev %s which does not exist in sysfs' % (uuid, mdev_uuid))
        return warnings


PART = GPUs()
