# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shape of a device report given back (the reshape's ``devices`` option, a hand-edited report).

:func:`check_report` refuses a report whose shape the layout cannot read, naming the field
(:class:`..errors.BadInput`); a report made by discovery always passes.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ... import shapes as _shapes
from ...errors import BadInput

#: a PCI address as the kernel names it in sysfs (``%04x:%02x:%02x.%d``: lower-case hex, a
#: domain of 4 digits or more) and as nova names its children after it; nothing around it
CANONICAL_PCI_ADDRESS = re.compile(r'[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]')

_TEXT_OR_NULL = 'text?'


def _check_entries(items, field, what, kinds, each=None):
    _shapes.expect_list_of(items, 'mapping', field, 'a list of %s' % what, 'a mapping (one of %s)' % what)
    for index, item in enumerate(items or []):
        where = '%s[%d]' % (field, index)
        _shapes.expect_fields(item, where, kinds)
        if each is not None:
            each(item, where)


def _check_gpu(gpu, where):
    types = _shapes.expect(gpu.get('mdev_types'), 'mapping', where + '.mdev_types',
                           'a mapping of mdev type -> {available_instances, ...}', optional=True)
    for name, info in (types or {}).items():
        _shapes.expect_fields(info, '%s.mdev_types.%s' % (where, name), {'available_instances': 'int?'})
    _check_entries(gpu.get('mdevs'), where + '.mdevs', 'mdev records',
                   {'uuid': 'text!', 'type': _TEXT_OR_NULL, 'instance_uuid': _TEXT_OR_NULL})


def _check_pf(pf, where):
    _check_entries(pf.get('vfs'), where + '.vfs', 'VF records',
                   {'address': 'text!', 'product_id': _TEXT_OR_NULL, 'instance_uuid': _TEXT_OR_NULL,
                    'driver': _TEXT_OR_NULL, 'vgpu_type': 'mapping?'})


def _check_cell(cell, where):
    _shapes.expect_list_of(cell.get('cpus'), 'int', where + '.cpus', 'a list of CPU ids')


def _check_nova_conf(nova, field):
    _shapes.expect_fields(nova, field, {'devices': 'mapping?', 'mdev_types': 'mapping?',
                                        'pci': 'mapping?', 'compute': 'mapping?'})
    _shapes.expect_list_of(nova.get('files'), 'text', field + '.files', 'a list of file names')
    devices = nova.get('devices') or {}
    _shapes.expect_list_of(devices.get('enabled_mdev_types'), 'text', field + '.devices.enabled_mdev_types',
                           'a list of mdev type names')
    for mtype, group in (nova.get('mdev_types') or {}).items():
        where = '%s.mdev_types.%s' % (field, mtype)
        _shapes.expect_fields(group, where, {'mdev_class': 'text?', 'max_instances': 'int?'})
        _shapes.expect_list_of(group.get('device_addresses'), 'text', where + '.device_addresses',
                               'a list of PCI addresses')
    pci = nova.get('pci') or {}
    _shapes.expect_fields(pci, field + '.pci', {'report_in_placement': 'bool?', 'device_spec': 'list?'})
    for index, spec in enumerate(pci.get('device_spec') or []):
        where = '%s.pci.device_spec[%d]' % (field, index)
        _shapes.expect(spec, 'mapping', where, 'a mapping (one parsed [pci]device_spec)')
        for key, value in spec.items():
            if key == 'address' and isinstance(value, dict):
                for part, text in value.items():
                    _shapes.expect(text, 'text', '%s.address.%s' % (where, part))
            else:
                _shapes.expect(value, 'text', '%s.%s' % (where, key))
    compute = nova.get('compute') or {}
    for key in ('cpu_dedicated_set', 'cpu_shared_set', 'vcpu_pin_set'):
        _shapes.expect_list_of(compute.get(key), 'int', '%s.compute.%s' % (field, key), 'a list of CPU ids')


def _check_instances(instances, field):
    for uuid, info in (instances or {}).items():
        where = '%s.instances.%s' % (field, uuid)
        _shapes.expect_fields(info, where, {'name': _TEXT_OR_NULL, 'vcpus': 'int?',
                                            'mem_encryption': _TEXT_OR_NULL, 'vgpus': 'list?'},
                              'an instance record (a mapping)')
        _shapes.expect_list_of(info.get('mdevs'), 'text', where + '.mdevs', 'a list of mdev UUIDs')
        _shapes.expect_list_of(info.get('pci_addresses'), 'text', where + '.pci_addresses', 'a list of PCI addresses')
        _shapes.expect_list_of(info.get('pinned_cpus'), 'int', where + '.pinned_cpus', 'a list of CPU ids')


def _check_mem_encryption(enc, field):
    models = _shapes.expect(enc.get('models'), 'mapping', field + '.mem_encryption.models',
                            'a mapping of model -> {total, trait}', optional=True)
    for name, info in (models or {}).items():
        _shapes.expect_fields(info, '%s.mem_encryption.models.%s' % (field, name),
                              {'total': 'int?', 'trait': 'text!'})


def _check_address(value, field):
    """A device's address in the canonical form (its type was checked before), else BadInput naming the field."""
    if not CANONICAL_PCI_ADDRESS.fullmatch(value):
        raise BadInput('%s must be a PCI address in the canonical form dddd:bb:ss.f (lower-case hex, as sysfs '
                       'names the device, e.g. 0000:84:00.0), got %r' % (field, str(value)), field=field)


def _device_addresses(devices, field):
    """``(field, address)`` of every device the report lists: gpus, sriov_pfs and their vfs, pci_devices."""
    for index, gpu in enumerate(devices.get('gpus') or []):
        yield '%s.gpus[%d].address' % (field, index), gpu['address']
    for index, pf in enumerate(devices.get('sriov_pfs') or []):
        yield '%s.sriov_pfs[%d].address' % (field, index), pf['address']
        for v_index, vf in enumerate(pf.get('vfs') or []):
            yield '%s.sriov_pfs[%d].vfs[%d].address' % (field, index, v_index), vf['address']
    for index, dev in enumerate(devices.get('pci_devices') or []):
        yield '%s.pci_devices[%d].address' % (field, index), dev['address']


def _check_identities(devices, field):
    """Every device address canonical, and named once in the whole report (naming both fields)."""
    seen = {}
    for where, address in _device_addresses(devices, field):
        _check_address(address, where)
        if address in seen:
            raise BadInput('%s and %s both name the PCI device %s: a device is listed once in a device report '
                           '(listed twice, its units would be counted twice); remove one of them'
                           % (seen[address], where, address), field=where)
        seen[address] = where


def check_report(devices, field='devices'):
    """Refuse a device report whose shape the layout cannot read, naming the field.

    A report made by :func:`..discovery.discover` always passes; this is for one given back to a
    module (the reshape's ``devices``), edited by hand or built by a tool.  Only the
    containers and the fields the layout reads are checked (a missing optional list
    is an empty one), and each device's identity (:func:`_check_identities`: its address
    canonical, named once).  Raises :class:`.errors.BadInput`, e.g. ``devices.gpus must be a
    list of GPU records, got str``.
    """
    if devices is None:
        return
    _shapes.expect_fields(devices, field, {
        'hostname': 'scalar?', 'instances': 'mapping?', 'nova_conf': 'mapping?',
        'mem_encryption': 'mapping?', 'warnings': 'list?'}, 'a device report (a mapping)')
    _check_entries(devices.get('gpus'), field + '.gpus', 'GPU records',
                   {'address': 'text!', 'vendor_id': _TEXT_OR_NULL, 'product_id': _TEXT_OR_NULL,
                    'numa_node': 'int?', 'mdev_types': 'mapping?'}, _check_gpu)
    _check_entries(devices.get('sriov_pfs'), field + '.sriov_pfs', 'SR-IOV PF records',
                   {'address': 'text!', 'vendor_id': _TEXT_OR_NULL, 'product_id': _TEXT_OR_NULL,
                    'vf_product_id': _TEXT_OR_NULL, 'num_vfs': 'int?', 'total_vfs': 'int?', 'numa_node': 'int?',
                    'instance_uuid': _TEXT_OR_NULL, 'vgpu_framework': _TEXT_OR_NULL}, _check_pf)
    _check_entries(devices.get('pci_devices'), field + '.pci_devices', 'PCI device records',
                   {'address': 'text!', 'vendor_id': _TEXT_OR_NULL, 'product_id': _TEXT_OR_NULL,
                    'numa_node': 'int?', 'instance_uuid': _TEXT_OR_NULL})
    _check_identities(devices, field)
    _check_entries(devices.get('numa_cells'), field + '.numa_cells', 'NUMA cell records',
                   {'id': 'int!', 'memory_mb': 'int?'}, _check_cell)
    _shapes.expect_list_of(devices.get('cpus_online'), 'int', field + '.cpus_online', 'a list of CPU ids')
    _check_instances(devices.get('instances'), field)
    if devices.get('nova_conf') is not None:
        _check_nova_conf(devices['nova_conf'], field + '.nova_conf')
    enc = devices.get('mem_encryption')
    if enc is not None:
        _check_mem_encryption(enc, field)
