# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""VCPU -> PCPU on the root, as nova's libvirt driver reports it since Train
(``_update_provider_tree_for_pcpu``, ``_get_pcpu_available``, ``_get_vcpu_available``)
under ``[compute]cpu_dedicated_set``, and which guests are pinned.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ...rules import providers as provider_rules
from .common import LayoutError


def nova_cpu(devices, nova, opts):
    """The root's CPU inventory nova 34 reports under this nova.conf, and which guests are
    pinned; None when ``[compute]cpu_dedicated_set`` is not set (nothing to do).

    PCPU = the dedicated set (nova: ``_get_pcpu_available``), min_unit 1, max_unit =
    total, ratio 1, reserved 0; VCPU = ``cpu_shared_set`` (or ``vcpu_pin_set``), none
    when only the dedicated set is given (``_get_vcpu_available``).  A guest is pinned
    when every vCPU is pinned to one host CPU of the dedicated set (how nova defines a
    ``hw:cpu_policy=dedicated`` domain), unpinned when it floats; anything else is
    undecided unless ``opts`` (layout ``pcpu.pinned`` / ``pcpu.unpinned``) says.
    """
    compute = nova.get('compute') or {}
    dedicated = compute.get('cpu_dedicated_set')
    if not dedicated:
        return None
    online = set(devices.get('cpus_online') or [])
    files = ', '.join(nova.get('files') or ['nova.conf'])
    if online and not set(dedicated) <= online:
        raise LayoutError('%s: [compute]cpu_dedicated_set names CPUs %s that are not online on this '
                          'host (online: %s): nova 34 refuses to start with it'
                          % (files, cpus_text(sorted(set(dedicated) - online)), cpus_text(sorted(online))))
    shared = compute.get('cpu_shared_set') or compute.get('vcpu_pin_set')
    vcpus = len(shared) if shared else 0
    pinned = {}
    for uuid, info in sorted((devices.get('instances') or {}).items()):
        cpus = info.get('pinned_cpus')
        if not cpus:
            pinned[uuid] = False
        elif set(cpus) <= set(dedicated):
            pinned[uuid] = True
        else:
            pinned[uuid] = ('its vCPUs are pinned to host CPUs %s, not all in cpu_dedicated_set %s'
                            % (cpus_text(cpus), cpus_text(dedicated)))
    for uuid in opts.get('pinned') or []:
        pinned[provider_rules.normalize_uuid(uuid)] = True
    for uuid in opts.get('unpinned') or []:
        pinned[provider_rules.normalize_uuid(uuid)] = False
    return {
        'dedicated': list(dedicated), 'shared': list(shared) if shared else None,
        'pcpu': {'total': len(dedicated), 'min_unit': 1, 'max_unit': len(dedicated), 'step_size': 1,
                 'allocation_ratio': 1.0, 'reserved': 0},
        'vcpu_total': vcpus, 'pinned': pinned, 'files': files,
    }


def cpus_text(cpus):
    return ','.join(str(c) for c in cpus)
