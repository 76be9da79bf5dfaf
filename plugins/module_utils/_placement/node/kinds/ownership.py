# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ownership map ``{consumer: {device: units}}`` of a device report, and the operator's
overrides of it: which child a consumer's moved units go to (docs/architecture.md).

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from .. import discovery as _discovery
from ...rules import providers as provider_rules
from ...errors import PlacementError
from .common import LayoutError


def _consumer_key(value):
    try:
        return provider_rules.normalize_uuid(value)
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
    return ownership_of_report(devices)


def ownership_of_report(devices):
    """:func:`ownership_from_devices` of a device report already checked (discovery.check_report)."""
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
