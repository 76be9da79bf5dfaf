# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which guest holds which device, and the ownership map the planner reads.

:func:`assign_holders` sets ``instance_uuid`` on the report's mdevs, VFs, PFs and PCI
devices from what the domains hold, with a warning for every mdev no domain holds, every
device a domain names that the report does not have, and every device two domains hold.
:func:`ownership` turns a report into ``{instance_uuid: {device_address: units}}``: mdevs
count against their parent GPU, VFs (and a PF passed through whole) against the PF, other
PCI devices against themselves; :func:`ownership_warnings` recomputes the unheld / missing
mdev warnings from a report alone.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def _mdev_index(report):
    """``{mdev uuid: (gpu, mdev record)}``."""
    index = {}
    for gpu in report['gpus']:
        for mdev in gpu['mdevs']:
            index[mdev['uuid']] = (gpu, mdev)
    return index


def _pci_index(report):
    """``{address: record}`` of every PF, VF and other PCI device of the report."""
    index = {}
    for pf in report['sriov_pfs']:
        index[pf['address']] = pf
        for vf in pf['vfs']:
            index[vf['address']] = vf
    for device in report['pci_devices']:
        index[device['address']] = device
    return index


def _hold_mdevs(uuid, label, info, mdev_index, warnings):
    for mdev_uuid in info['mdevs']:
        found = mdev_index.get(mdev_uuid)
        if found is None:
            warnings.append('instance %s holds mdev %s which does not exist in sysfs' % (label, mdev_uuid))
            continue
        _gpu, mdev = found
        if mdev['instance_uuid'] and mdev['instance_uuid'] != uuid:
            warnings.append('mdev %s is held by both instance %s and instance %s; keeping %s'
                            % (mdev_uuid, mdev['instance_uuid'], uuid, mdev['instance_uuid']))
            continue
        mdev['instance_uuid'] = uuid


def _hold_pci(uuid, label, info, pci_index, gpu_addresses, warnings):
    for address in info['pci_addresses']:
        target = pci_index.get(address)
        if target is None:
            if address in gpu_addresses:
                warnings.append('instance %s holds mdev parent GPU %s by PCI passthrough' % (label, address))
            else:
                warnings.append('instance %s holds PCI device %s which is not a reported device '
                                '(no SR-IOV PF/VF, not matched by pci_filters)' % (label, address))
            continue
        if target['instance_uuid'] and target['instance_uuid'] != uuid:
            warnings.append('PCI device %s is held by both instance %s and instance %s; keeping %s'
                            % (address, target['instance_uuid'], uuid, target['instance_uuid']))
            continue
        target['instance_uuid'] = uuid


def assign_holders(report, warnings):
    """Set each device's ``instance_uuid`` from the domains of ``report['instances']`` (in place)."""
    mdev_index = _mdev_index(report)
    pci_index = _pci_index(report)
    gpu_addresses = set(g['address'] for g in report['gpus'])
    for uuid in sorted(report['instances']):
        info = report['instances'][uuid]
        label = '%s (%s)' % (uuid, info['name']) if info['name'] else uuid
        _hold_mdevs(uuid, label, info, mdev_index, warnings)
        _hold_pci(uuid, label, info, pci_index, gpu_addresses, warnings)
    for gpu in report['gpus']:
        for mdev in gpu['mdevs']:
            if mdev['instance_uuid'] is None:
                warnings.append('mdev %s on GPU %s (type %s) is not held by any instance'
                                % (mdev['uuid'], gpu['address'], mdev['type']))


def ownership(report):
    """``{instance_uuid: {device_address: units}}`` from a device report.

    mdevs count against their parent GPU, VFs (and a PF passed through whole)
    against the PF, other PCI devices against themselves; one unit each.
    """
    result = {}

    def add(consumer, address):
        if not consumer:
            return
        owned = result.setdefault(consumer, {})
        owned[address] = owned.get(address, 0) + 1

    for gpu in report.get('gpus') or []:
        for mdev in gpu.get('mdevs') or []:
            add(mdev.get('instance_uuid'), gpu['address'])
    for pf in report.get('sriov_pfs') or []:
        add(pf.get('instance_uuid'), pf['address'])
        for vf in pf.get('vfs') or []:
            add(vf.get('instance_uuid'), pf['address'])
    for device in report.get('pci_devices') or []:
        add(device.get('instance_uuid'), device['address'])
    return result


def ownership_warnings(report):
    """Problems the planner must know about: unheld mdevs, missing mdevs.

    Recomputed from the report alone (for a report that did not come from
    :func:`..discovery.discover`, e.g. one edited by hand or built by a test).
    """
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
