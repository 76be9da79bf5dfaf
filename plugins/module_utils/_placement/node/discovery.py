# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Device discovery on a compute node: sysfs + libvirt domain XML.

:func:`discover` reads what the kernel and libvirt say about the node and
returns the *device report* documented in ``docs/architecture.md``.  Each part of
the report is read by its own module of :mod:`.discover`, one line of
:data:`.discover.registry.PARTS` each, which this module loops over (it names no part):

* GPUs (:mod:`.discover.gpus`): mdev parents under ``<sysfs>/class/mdev_bus/<BDF>``,
  their ``mdev_supported_types`` and the mediated devices that exist
  (``<sysfs>/bus/mdev/devices/<uuid>`` links into ``.../<parent BDF>/<uuid>``);
* SR-IOV physical functions (PCI devices with ``sriov_totalvfs``) and their
  virtual functions (``virtfnN`` links), and the other PCI devices matching the
  operator's vendor/product filters or nova's ``[pci]device_spec``
  (:mod:`.discover.pci`); VFs that are NVIDIA vGPUs of the vendor-specific VFIO
  framework (``nvidia/current_vgpu_type``, R580+ on Linux 6.8+) carry their vGPU
  type (:mod:`.nvidia_vfio`);
* NUMA cells (``<sysfs>/devices/system/node``) and the online CPUs
  (:mod:`.discover.numa`);
* the memory encryption models nova reports (:mod:`.discover.mem_encryption`);
* instances, from libvirt domain XML (files or strings such as the output of
  ``virsh dumpxml``): which mdevs and PCI addresses every guest holds
  (:mod:`.discover.domains`, then :mod:`.discover.holders`).

:func:`ownership` turns a report into ``{instance_uuid: {device_address:
units}}``, the map the reshape planner uses to move allocations;
:func:`check_report` checks the shape of a report given back
(:mod:`.discover.report_check`).  The names other code reads from here
(``__all__``) stay importable from this module.

``sysfs_root`` is the directory that plays ``/sys`` (tests point it at a fake
tree built by ``tools/fakehost.py``).  Every failure is a
:class:`DiscoveryError` whose message names the file that could not be read or
parsed; absent optional directories (no ``mdev_bus`` on a node without GPUs,
no NUMA directory) simply give empty lists.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import socket

from . import novaconf as _novaconf
from .discover import registry as _parts
from .discover.domains import DEFAULT_DOMAIN_XML_GLOB, KOLLA_DOMAIN_XML_GLOBS, parse_domain_xml
from .discover.holders import assign_holders, ownership, ownership_warnings
from .discover.mem_encryption import MEM_ENCRYPTION_MODELS, mem_encryption
from .discover.report_check import check_report
from .discover.sysfs import DISCOVERY_CODE, DiscoveryError, Sysfs, normalize_address, normalize_pci_filters, parse_cpulist

DEFAULT_NOVA_CONF = _novaconf.DEFAULT_NOVA_CONF

__all__ = [
    'DEFAULT_DOMAIN_XML_GLOB', 'KOLLA_DOMAIN_XML_GLOBS', 'DEFAULT_NOVA_CONF', 'DISCOVERY_CODE', 'DiscoveryError', 'MEM_ENCRYPTION_MODELS',
    'DiscoveryRequest', 'check_report', 'discover', 'read_report', 'mem_encryption', 'normalize_address', 'normalize_pci_filters', 'ownership',
    'ownership_warnings', 'parse_cpulist', 'parse_domain_xml',
]


def _read_nova_conf(nova_conf, nova_conf_dir, warnings):
    """What nova 34 reads from the node's nova.conf, None (with a warning) when there is none."""
    if not nova_conf:
        return None
    nova = _novaconf.read(nova_conf, nova_conf_dir)
    if nova is None:
        warnings.append('no nova.conf at %s: the layout falls back to the layout options and '
                        'nova\'s defaults' % nova_conf)
    return nova


class DiscoveryRequest(object):
    """What :func:`discover` is asked to read: its fields and their defaults are :attr:`FIELDS`
    (what each means: :func:`discover`).  An unknown field is a TypeError, as for a function's
    unknown keyword."""

    FIELDS = (
        ('sysfs_root', '/sys'),
        ('domain_xml_paths', None),
        ('domain_xml_glob', DEFAULT_DOMAIN_XML_GLOB),
        ('pci_filters', None),
        ('numa', True),
        ('hostname', None),
        ('domain_xmls', None),
        ('nova_conf', None),
        ('nova_conf_dir', None),
        ('domain_capabilities', None),
    )

    def __init__(self, **fields):
        unknown = sorted(set(fields) - set(name for name, _default in self.FIELDS))
        if unknown:
            raise TypeError('discover() got unexpected keyword argument(s): %s' % ', '.join(unknown))
        for name, default in self.FIELDS:
            setattr(self, name, fields.get(name, default))


class Reading(object):
    """One discovery under way, what every part of the report (:data:`.discover.registry.PARTS`)
    reads from: the request, the sysfs reader, the node's nova.conf as read (None without one),
    the normalised PCI filters and the report's warnings."""

    def __init__(self, request, sysfs, nova, filters, warnings):
        self.request = request
        self.sysfs = sysfs
        self.nova = nova
        self.filters = filters
        self.warnings = warnings


def discover(sysfs_root='/sys', **fields):
    """Return the device report of this node (see docs/architecture.md).

    The fields of the request (:class:`DiscoveryRequest`), all optional:
    ``domain_xml_paths``: explicit domain XML files; when None the files
    matching ``domain_xml_glob`` are read (``''`` / None reads none).
    ``domain_xmls``: extra domain XML strings, or ``(label, text)`` pairs, for
    example the live ``virsh dumpxml`` of running guests; they win over a file
    describing the same domain.
    ``pci_filters``: ``[{vendor_id, product_id?}]`` selecting other PCI
    devices to report.  ``numa``: read NUMA cells (else ``numa_cells`` is []).
    ``hostname``: the report's hostname (default: this machine's).
    ``domain_capabilities``: libvirt's domain capabilities XML (``virsh domcapabilities``),
    as text or a file path; with the kernel's kvm_amd parameters it gives the memory
    encryption models nova 34 reports (``report["mem_encryption"]``).
    ``nova_conf``: the node's nova.conf (plus ``nova_conf_dir``, default
    ``<nova_conf>.d``); what nova 34 reads from it for the layout goes in
    ``report["nova_conf"]`` (None when no file exists there, with a warning), and
    the PCI devices its ``[pci]device_spec`` selects are reported.
    """
    return read_report(DiscoveryRequest(sysfs_root=sysfs_root, **fields))


def read_report(request):
    """The device report a :class:`DiscoveryRequest` asks for: every part of
    :data:`.discover.registry.PARTS` read in order, then who holds what (holders.py)."""
    sysfs_root = request.sysfs_root
    if not sysfs_root or not os.path.isdir(sysfs_root):
        raise DiscoveryError('sysfs root %s does not exist or is not a directory' % (sysfs_root,),
                             path=sysfs_root)
    filters = normalize_pci_filters(request.pci_filters)
    warnings = []
    nova = _read_nova_conf(request.nova_conf, request.nova_conf_dir, warnings)
    reading = Reading(request, Sysfs(sysfs_root), nova, filters, warnings)
    report = {'hostname': request.hostname or socket.gethostname(), 'sysfs_root': sysfs_root}
    for part in _parts.PARTS:
        report.update(part.read(reading, report))
    report['nova_conf'] = nova
    report['warnings'] = warnings
    assign_holders(report, warnings)
    return report
