# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Discovery of the NUMA and PCPU kinds: the host's NUMA cells and its online CPUs.

The cells are ``<sysfs>/devices/system/node/node<N>`` (the ``online`` list, else every
``node<N>`` directory), each with its ``cpulist`` and the ``MemTotal`` line of its
``meminfo``; the online CPUs are ``devices/system/cpu/online`` (else the cells' CPUs).

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from . import sysfs as _sysfs
from .sysfs import DiscoveryError
from ... import shapes as _shapes
from .common import DevicePart, check_entries

_NODE_RE = re.compile(r'^node([0-9]+)$')
_MEMTOTAL_RE = re.compile(r'^Node\s+([0-9]+)\s+MemTotal:\s+([0-9]+)\s*kB\s*$')


def online_cpus(sysfs_root, cells):
    """The host's online CPUs (``devices/system/cpu/online``, else the NUMA cells')."""
    path = os.path.join(sysfs_root, 'devices', 'system', 'cpu', 'online')
    if os.path.isfile(path):
        return _sysfs.parse_cpulist(_sysfs.read(path), path)
    return sorted(c for cell in cells for c in cell.get('cpus', []))


def _node_ids(node_dir):
    """The NUMA nodes listed online, else those with a ``node<N>`` directory."""
    online_path = os.path.join(node_dir, 'online')
    if os.path.lexists(online_path):
        return _sysfs.parse_cpulist(_sysfs.read(online_path), online_path)
    return sorted(int(m.group(1)) for m in (_NODE_RE.match(n) for n in _sysfs.list_dir(node_dir)) if m)


def _node_file(base, name, node):
    path = os.path.join(base, name)
    if not os.path.lexists(path):
        raise DiscoveryError('missing %s (node %d is listed online)' % (path, node), path=path)
    return path


def _memory_kb(meminfo_path, node):
    """The ``Node <node> MemTotal: <n> kB`` of a node's meminfo."""
    for line in _sysfs.read(meminfo_path).splitlines():
        if 'MemTotal:' not in line:
            continue
        match = _MEMTOTAL_RE.match(line.strip())
        if not match or int(match.group(1)) != node:
            raise DiscoveryError('malformed %s: bad MemTotal line %r' % (meminfo_path, line.strip()[:80]),
                                 path=meminfo_path)
        return int(match.group(2))
    raise DiscoveryError('malformed %s: no "Node %d MemTotal:" line' % (meminfo_path, node),
                         path=meminfo_path)


def discover_numa(sysfs):
    """The report's ``numa_cells``: ``[{id, cpus, memory_mb}]``; [] without a NUMA directory."""
    node_dir = sysfs.node_dir
    if not os.path.isdir(node_dir):
        return []
    cells = []
    for node in _node_ids(node_dir):
        base = os.path.join(node_dir, 'node%d' % node)
        cpulist_path = _node_file(base, 'cpulist', node)
        cpus = _sysfs.parse_cpulist(_sysfs.read(cpulist_path), cpulist_path)
        memory_kb = _memory_kb(_node_file(base, 'meminfo', node), node)
        cells.append({'id': node, 'cpus': cpus, 'memory_mb': memory_kb // 1024})
    return cells


def _check_cell(cell, where):
    _shapes.expect_list_of(cell.get('cpus'), 'int', where + '.cpus', 'a list of CPU ids')


class NUMA(DevicePart):
    """The report's ``numa_cells`` (empty when the request says ``numa=False``) and ``cpus_online``."""

    name = 'numa'
    report_keys = ('numa_cells', 'cpus_online')

    def read(self, reading, report):
        cells = discover_numa(reading.sysfs) if reading.request.numa else []
        return {'numa_cells': cells, 'cpus_online': online_cpus(reading.request.sysfs_root, cells)}

    def check(self, devices, field):
        check_entries(devices.get('numa_cells'), field + '.numa_cells', 'NUMA cell records',
                      {'id': 'int!', 'memory_mb': 'int?'}, _check_cell)
        _shapes.expect_list_of(devices.get('cpus_online'), 'int', field + '.cpus_online', 'a list of CPU ids')


PART = NUMA()
