# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NUMA cells -> children ``<root>_NUMA<N>`` with trait ``HW_NUMA_ROOT`` and the root's
VCPU / PCPU / MEMORY_MB split across cells (opt-in, without a nova.conf only: the NUMA
layout was specified for nova but never implemented, so no nova release writes it).

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from .. import discovery as _discovery
from ...rules import inventory as inventory_rules
from .common import KIND_NUMA, merge_options, render_name


def split_proportional(total, weights):
    """Split the integer ``total`` in proportion to ``weights`` (largest remainder).

    The parts add up to ``total`` exactly; ties go to the earlier index, so the
    result is deterministic.  All-zero weights give all-zero parts.
    """
    wsum = sum(weights)
    if wsum <= 0 or total <= 0:
        return [0] * len(weights)
    parts = [total * w // wsum for w in weights]
    rest = total - sum(parts)
    order = sorted(range(len(weights)), key=lambda i: (-((total * weights[i]) % wsum), i))
    for i in order[:rest]:
        parts[i] += 1
    return parts


def option_children(root_name, cells, opts, source, warnings):
    cells = sorted(cells, key=lambda c: int(c.get('id', 0)))
    if not cells:
        warnings.append('NUMA layout enabled but the report lists no NUMA cell')
        return []
    cpu_w = [len(c.get('cpus') or []) for c in cells]
    mem_w = [int(c.get('memory_mb') or 0) for c in cells]
    per_cell = [{} for _cell in cells]
    for rc in opts.get('resource_classes') or []:
        if rc not in source:
            continue
        src = inventory_rules.normalize_inventory(source[rc], rc)
        weights = mem_w if rc == 'MEMORY_MB' else cpu_w
        if sum(weights) <= 0:
            warnings.append('NUMA layout: the report gives no %s for any cell, %s stays where it is'
                            % ('memory' if rc == 'MEMORY_MB' else 'cpus', rc))
            continue
        totals = split_proportional(src['total'], weights)
        reserved_total = opts['reserved'] if opts.get('reserved') is not None else src['reserved']
        reserved = split_proportional(reserved_total, weights)
        ratio = float(opts['allocation_ratio']) if opts.get('allocation_ratio') is not None \
            else src['allocation_ratio']
        for i, part in enumerate(totals):
            if part < 1:
                continue
            max_unit = min(src['max_unit'], part)
            per_cell[i][rc] = {
                'total': part,
                'reserved': min(reserved[i], part),
                'min_unit': min(src['min_unit'], max_unit),
                'max_unit': max_unit,
                'step_size': src['step_size'],
                'allocation_ratio': ratio,
            }
    out = []
    for cell, inventories in zip(cells, per_cell):
        if not inventories:
            warnings.append('NUMA cell %s gets no inventory, no child' % cell.get('id'))
            continue
        cid = int(cell.get('id', 0))
        fields = {'root': root_name, 'id': cid}
        out.append({
            'name': render_name(KIND_NUMA, opts['name_template'], fields),
            'kind': KIND_NUMA,
            'device': 'NUMA%d' % cid,
            'inventories': inventories,
            'traits': sorted(set(opts.get('traits') or [])),
            'inherit': [],
            'numa_node': cid,
        })
    return out


def numa_child_names(root_name, devices, options=None):
    """The NUMA child names the layout would use, whatever inventory they get."""
    _discovery.check_report(devices)
    opts = merge_options(options)[KIND_NUMA]
    names = []
    for cell in (devices or {}).get('numa_cells') or []:
        names.append(render_name(KIND_NUMA, opts['name_template'],
                                 {'root': root_name, 'id': int(cell.get('id', 0))}))
    return names
