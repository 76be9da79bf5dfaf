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
mdev warnings from a report alone.  Each part of the report (:data:`registry.PARTS`) says
its own rules (``DevicePart.holder``, ``after_holding``, ``owned``, ``report_warnings``); this
module loops over them.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from . import registry as _registry


def assign_holders(report, warnings):
    """Set each device's ``instance_uuid`` from the domains of ``report['instances']`` (in place)."""
    reported = set(address for part in _registry.PARTS for _where, address in part.addresses(report, ''))
    holds = [h for h in (part.holder(report, reported) for part in _registry.PARTS) if h is not None]
    for uuid in sorted(report['instances']):
        info = report['instances'][uuid]
        label = '%s (%s)' % (uuid, info['name']) if info['name'] else uuid
        for hold in holds:
            hold(uuid, label, info, warnings)
    for part in _registry.PARTS:
        part.after_holding(report, warnings)


def ownership(report):
    """``{instance_uuid: {device_address: units}}`` from a device report.

    mdevs count against their parent GPU, VFs (and a PF passed through whole)
    against the PF, other PCI devices against themselves; one unit each.
    """
    result = {}
    for part in _registry.PARTS:
        for consumer, address in part.owned(report):
            if not consumer:
                continue
            owned = result.setdefault(consumer, {})
            owned[address] = owned.get(address, 0) + 1
    return result


def ownership_warnings(report):
    """Problems the planner must know about: unheld mdevs, missing mdevs.

    Recomputed from the report alone (for a report that did not come from
    :func:`..discovery.discover`, e.g. one edited by hand or built by a test).
    """
    warnings = []
    for part in _registry.PARTS:
        warnings.extend(part.report_warnings(report))
    return warnings
