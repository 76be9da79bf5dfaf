# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guests of the node, from libvirt domain XML: what every instance holds.

:func:`parse_domain_xml` reads one domain: its uuid and name, the mdevs and PCI addresses
it holds (``<hostdev>`` of type ``mdev`` / ``pci``, ``<interface type='hostdev'>``), its
vCPUs, the host CPUs a dedicated guest is pinned to (``<vcpupin>``) and its memory
encryption model (``<launchSecurity>``).  :func:`read_domains` reads the persistent files
(``/etc/libvirt/qemu/*.xml``) and the live XML strings (``virsh dumpxml``); the live
definition of a running guest wins over its file.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import xml.etree.ElementTree as ET

from . import sysfs as _sysfs
from .sysfs import DiscoveryError
from ... import shapes as _shapes
from .common import TEXT_OR_NULL, DevicePart

DEFAULT_DOMAIN_XML_GLOB = '/etc/libvirt/qemu/*.xml'

#: Where kolla-ansible keeps the guests' domain XML on the host: its ``nova_libvirt`` container
#: mounts the named volume ``nova_libvirt_qemu`` at /etc/libvirt/qemu, and the container engine
#: stores a named volume's files in ``<volumes>/<name>/_data`` (docker's default data root
#: /var/lib/docker; podman's, run as root, /var/lib/containers/storage).  The node's
#: ``rolling_reshape_domain_xml_glob`` (device_info's ``domain_xml_glob``) for a kolla node.
KOLLA_DOMAIN_XML_GLOBS = {
    'docker': '/var/lib/docker/volumes/nova_libvirt_qemu/_data/*.xml',
    'podman': '/var/lib/containers/storage/volumes/nova_libvirt_qemu/_data/*.xml',
}


def _can_list(path):
    return os.access(path, os.R_OK | os.X_OK)


def _xml_address(address, source):
    """``<address domain= bus= slot= function=/>`` -> '0000:81:02.0'."""
    try:
        domain = int(address.get('domain', '0'), 0)
        bus = int(address.get('bus'), 0)
        slot = int(address.get('slot'), 0)
        function = int(address.get('function'), 0)
    except (TypeError, ValueError):
        raise DiscoveryError('malformed %s: bad PCI <address> %r' % (source, dict(address.attrib)), path=source)
    if not (0 <= domain <= 0xffff and 0 <= bus <= 0xff and 0 <= slot <= 0x1f and 0 <= function <= 7):
        raise DiscoveryError('malformed %s: PCI <address> out of range %r' % (source, dict(address.attrib)),
                             path=source)
    return '%04x:%02x:%02x.%x' % (domain, bus, slot, function)


def _domain_root(text, source):
    """The ``<domain>`` element of ``text`` and its canonical uuid."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise DiscoveryError('malformed %s: not valid XML (%s)' % (source, exc), path=source)
    if root.tag != 'domain':
        raise DiscoveryError('malformed %s: root element is <%s>, expected <domain>' % (source, root.tag),
                             path=source)
    uuid = (root.findtext('uuid') or '').strip()
    if not _sysfs.UUID_RE.match(uuid):
        raise DiscoveryError('malformed %s: missing or bad <uuid> %r' % (source, uuid), path=source)
    return root, _sysfs.canonical_uuid(uuid)


def _hostdev(dev, source, mdevs, pci):
    """A subsystem ``<hostdev>``: its mdev uuid to ``mdevs`` or its PCI address to ``pci``."""
    kind = dev.get('type')
    address = dev.find('source/address')
    if kind == 'mdev':
        mdev_uuid = (address.get('uuid') if address is not None else '') or ''
        if not _sysfs.UUID_RE.match(mdev_uuid):
            raise DiscoveryError('malformed %s: mdev <hostdev> without a valid <source><address '
                                 'uuid=.../> (got %r)' % (source, mdev_uuid), path=source)
        mdevs.append(_sysfs.canonical_uuid(mdev_uuid))
    elif kind == 'pci':
        if address is None:
            raise DiscoveryError('malformed %s: pci <hostdev> without <source><address/>' % source,
                                 path=source)
        pci.append(_xml_address(address, source))


def _held_devices(root, source):
    """``(mdev uuids, PCI addresses)`` the domain's devices hold, each sorted and unique."""
    mdevs = []
    pci = []
    devices = root.find('devices')
    children = list(devices) if devices is not None else []
    for dev in children:
        if dev.tag == 'hostdev' and dev.get('mode', 'subsystem') == 'subsystem':
            _hostdev(dev, source, mdevs, pci)
        elif dev.tag == 'interface' and dev.get('type') == 'hostdev':
            address = dev.find('source/address')
            if address is None or address.get('type', 'pci') != 'pci':
                raise DiscoveryError('malformed %s: hostdev <interface> without a PCI <source><address/>'
                                     % source, path=source)
            pci.append(_xml_address(address, source))
    return sorted(set(mdevs)), sorted(set(pci))


def _pinned_cpus(root, source):
    """The host CPUs of a dedicated guest's ``<vcpupin>``s, None for a guest that is not one.

    nova pins every vCPU of a hw:cpu_policy=dedicated guest to ONE host CPU; a NUMA-aware
    shared guest gets <vcpupin> too, but to a range (its cell's CPUs).
    """
    pins = root.findall('cputune/vcpupin')
    if not pins:
        return None
    sets = []
    for pin in pins:
        try:
            sets.append(_sysfs.parse_cpulist(pin.get('cpuset') or '', source))
        except DiscoveryError:
            raise DiscoveryError('malformed %s: <vcpupin cpuset=%r>' % (source, pin.get('cpuset')),
                                 path=source)
    if all(len(cpus) == 1 for cpus in sets):
        return sorted(set(c for cpus in sets for c in cpus))
    return None


def parse_domain_xml(text, source):
    """One libvirt domain -> ``(uuid, {name, mdevs, pci_addresses})``.

    ``source`` names the file (or ``virsh dumpxml <uuid>``) in errors.
    """
    root, uuid = _domain_root(text, source)
    name = (root.findtext('name') or '').strip() or None
    mdevs, pci = _held_devices(root, source)
    pinned = _pinned_cpus(root, source)
    try:
        vcpus = int((root.findtext('vcpu') or '0').strip())
    except ValueError:
        raise DiscoveryError('malformed %s: <vcpu> is not a number' % source, path=source)
    return uuid, {'name': name, 'mdevs': mdevs, 'pci_addresses': pci,
                  'mem_encryption': launch_security(root.find('launchSecurity'), source),
                  'vcpus': vcpus, 'pinned_cpus': pinned}


def launch_security(elem, source):
    """The memory encryption model of a domain: amd-sev, amd-sev-es, amd-sev-snp, intel-tdx.

    nova writes ``<launchSecurity type='sev'>`` with a policy whose bit 2 (0x4) is set
    for SEV-ES (nova/virt/libvirt/driver.py ``_get_sev_policy``).
    """
    if elem is None:
        return None
    kind = (elem.get('type') or '').strip()
    if kind == 'sev':
        text = (elem.findtext('policy') or '0').strip()
        try:
            policy = int(text, 16) if text.lower().startswith('0x') else int(text)
        except ValueError:
            raise DiscoveryError('malformed %s: <launchSecurity> policy %r is not a number' % (source, text),
                                 path=source)
        return 'amd-sev-es' if policy & 0x4 else 'amd-sev'
    if kind == 'sev-snp':
        return 'amd-sev-snp'
    if kind == 'tdx':
        return 'intel-tdx'
    return kind or None


def _domain_xml_files(domain_xml_paths, domain_xml_glob):
    """The persistent domain XML files: the paths given, else those matching the glob."""
    if domain_xml_paths is not None:
        return list(domain_xml_paths)
    if not domain_xml_glob:
        return []
    # glob() silently matches nothing in a directory it cannot list
    # (/etc/libvirt/qemu is 0700 root): that would make every mdev look
    # unheld, so refuse instead.
    folder = os.path.dirname(domain_xml_glob)
    if folder and not glob.has_magic(folder) and os.path.isdir(folder) and not _can_list(folder):
        raise DiscoveryError('cannot list %s: permission denied (domain XML needs root: use become)'
                             % folder, path=folder)
    return sorted(glob.glob(domain_xml_glob))


def _domain_sources(domain_xml_paths, domain_xml_glob, domain_xmls):
    """``[(label, text, 'config' | 'live')]``: the files first, then the XML strings."""
    sources = []
    for path in _domain_xml_files(domain_xml_paths, domain_xml_glob):
        if os.path.isdir(path):
            continue
        sources.append((path, _sysfs.read(path), 'config'))
    for index, item in enumerate(domain_xmls or []):
        if isinstance(item, (tuple, list)):
            label, text = item[0], item[1]
        else:
            label, text = 'domain XML string #%d' % index, item
        sources.append((label, text, 'live'))
    return sources


def read_domains(domain_xml_paths, domain_xml_glob, domain_xmls, warnings):
    """Instances from files, then from XML strings (live ``virsh dumpxml``).

    A domain seen in both keeps the string version: the live definition of a
    running guest wins over its persistent file.
    """
    instances = {}
    origin = {}
    for label, text, kind in _domain_sources(domain_xml_paths, domain_xml_glob, domain_xmls):
        uuid, info = parse_domain_xml(text, label)
        if uuid in instances and origin[uuid][1] == kind:
            warnings.append('instance %s is defined twice (%s and %s); using %s'
                            % (uuid, origin[uuid][0], label, label))
        info['source'] = label
        instances[uuid] = info
        origin[uuid] = (label, kind)
    return instances


def _instance_records(instances):
    """The report's ``instances``: each domain's record, in uuid order."""
    records = {}
    for uuid in sorted(instances):
        info = instances[uuid]
        records[uuid] = {'name': info['name'], 'mdevs': info['mdevs'],
                         'pci_addresses': info['pci_addresses'], 'source': info['source'],
                         'mem_encryption': info.get('mem_encryption'),
                         'vcpus': info.get('vcpus'), 'pinned_cpus': info.get('pinned_cpus')}
    return records


class Domains(DevicePart):
    """The report's ``instances``: the guests' domain XML (files, then live definitions), what
    each holds (mdevs, PCI addresses), its memory encryption and pinned CPUs."""

    name = 'domains'
    report_keys = ('instances',)
    fields = {'instances': 'mapping?'}

    def read(self, reading, report):
        request = reading.request
        instances = read_domains(request.domain_xml_paths, request.domain_xml_glob, request.domain_xmls,
                                 reading.warnings)
        return {'instances': _instance_records(instances)}

    def check(self, devices, field):
        for uuid, info in (devices.get('instances') or {}).items():
            where = '%s.instances.%s' % (field, uuid)
            _shapes.expect_fields(info, where, {'name': TEXT_OR_NULL, 'vcpus': 'int?',
                                                'mem_encryption': TEXT_OR_NULL, 'vgpus': 'list?'},
                                  'an instance record (a mapping)')
            _shapes.expect_list_of(info.get('mdevs'), 'text', where + '.mdevs', 'a list of mdev UUIDs')
            _shapes.expect_list_of(info.get('pci_addresses'), 'text', where + '.pci_addresses',
                                   'a list of PCI addresses')
            _shapes.expect_list_of(info.get('pinned_cpus'), 'int', where + '.pinned_cpus', 'a list of CPU ids')


PART = Domains()
