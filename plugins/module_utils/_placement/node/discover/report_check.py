# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shape of a device report given back (the reshape's ``devices`` option, a hand-edited report).

:func:`check_report` refuses a report whose shape the layout cannot read, naming the field
(:class:`..errors.BadInput`); a report made by discovery always passes.  Each part of the
report checks its own (``DevicePart.check``, ``addresses``: :data:`registry.PARTS`); this module
checks the report's top level, the devices' identities and the node's nova.conf.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ... import shapes as _shapes
from ...errors import BadInput
from . import registry as _registry

#: a PCI address as the kernel names it in sysfs (``%04x:%02x:%02x.%d``: lower-case hex, a
#: domain of 4 digits or more) and as nova names its children after it; nothing around it
CANONICAL_PCI_ADDRESS = re.compile(r'[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]')


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


def _check_address(value, field):
    """A device's address in the canonical form (its type was checked before), else BadInput naming the field."""
    if not CANONICAL_PCI_ADDRESS.fullmatch(value):
        raise BadInput('%s must be a PCI address in the canonical form dddd:bb:ss.f (lower-case hex, as sysfs '
                       'names the device, e.g. 0000:84:00.0), got %r' % (field, str(value)), field=field)


def _device_addresses(devices, field):
    """``(field, address)`` of every device the report lists, part by part (``DevicePart.addresses``)."""
    for part in _registry.PARTS:
        for where, address in part.addresses(devices, field):
            yield where, address


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
    fields = {'hostname': 'scalar?', 'nova_conf': 'mapping?', 'warnings': 'list?'}
    for part in _registry.PARTS:
        fields.update(part.fields)
    _shapes.expect_fields(devices, field, fields, 'a device report (a mapping)')
    for part in _registry.PARTS:
        part.check(devices, field)
    _check_identities(devices, field)
    if devices.get('nova_conf') is not None:
        _check_nova_conf(devices['nova_conf'], field + '.nova_conf')
