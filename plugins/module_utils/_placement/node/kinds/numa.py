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
from ... import tree as _tree
from .common import KIND_NUMA, Kind, LayoutError, merge_options, render_name


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
    return _child_names(root_name, devices, options)


def _child_names(root_name, devices, options):
    opts = merge_options(options)[KIND_NUMA]
    names = []
    for cell in (devices or {}).get('numa_cells') or []:
        names.append(render_name(KIND_NUMA, opts['name_template'],
                                 {'root': root_name, 'id': int(cell.get('id', 0))}))
    return names


def numa_source(tree, root, devices, options):
    """The VCPU/PCPU/MEMORY_MB inventory a NUMA layout splits: the root's inventory plus what
    NUMA children of that layout already hold, so the split is the same before and after a
    reshape (the rerun is a no-op).  ``tree``: a :class:`tree.ProviderTree`; ``root`` its root;
    ``devices``: a report already checked (discovery.check_report)."""
    opts = merge_options(options)
    if not opts[KIND_NUMA]['enabled']:
        return {}
    root_uuid = root['uuid']
    names = set(_child_names(root['name'], devices, options))
    sources = [tree.raw_inventory(root_uuid)]
    for uuid in tree.uuids():
        if uuid != root_uuid and tree.get(uuid).get('name') in names:
            sources.append(tree.raw_inventory(uuid))
    out = {}
    for rc in opts[KIND_NUMA]['resource_classes']:
        recs = [_tree.norm_inventories({rc: s[rc]})[rc] for s in sources if rc in s]
        if not recs:
            continue
        out[rc] = {
            'total': sum(r['total'] for r in recs),
            'reserved': sum(r['reserved'] for r in recs),
            'min_unit': min(r['min_unit'] for r in recs),
            'max_unit': max(r['max_unit'] for r in recs),
            'step_size': recs[0]['step_size'],
            'allocation_ratio': recs[0]['allocation_ratio'],
        }
    return out


class NUMA(Kind):
    """NUMA cells -> ``<root>_NUMA<N>`` children (opt-in; refused where nova.conf was read)."""

    name = 'numa'
    discovery = 'node/discover/numa.py'
    options = (KIND_NUMA,)

    def check_options(self, opts, nova):
        if nova is not None and opts[KIND_NUMA]['enabled']:
            raise LayoutError('the NUMA layout (children <node>_NUMA<N>) is one no nova release '
                              'writes: nova keeps VCPU/MEMORY_MB on the root, so it would double '
                              'the node\'s capacity. It is refused on a node whose nova.conf was '
                              'read (%s).' % ', '.join(nova.get('files') or ['nova.conf']))

    def children(self, root_name, devices, opts, nova, numa_source, warnings):
        if nova is not None or not opts[KIND_NUMA]['enabled']:
            return []
        warnings.append('NUMA children are a layout no nova release writes (nova keeps VCPU and '
                        'MEMORY_MB on the root); use it only without nova-compute on this node')
        return option_children(root_name, devices.get('numa_cells') or [], opts[KIND_NUMA],
                               numa_source or {}, warnings)


KIND = NUMA()
