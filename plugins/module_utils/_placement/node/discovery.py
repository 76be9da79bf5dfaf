# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Device discovery on a compute node: sysfs + libvirt domain XML.

:func:`discover` reads what the kernel and libvirt say about the node and
returns the *device report* documented in ``docs/architecture.md``:

* GPUs: mdev parents under ``<sysfs>/class/mdev_bus/<BDF>``, their
  ``mdev_supported_types`` and the mediated devices that exist
  (``<sysfs>/bus/mdev/devices/<uuid>`` links into ``.../<parent BDF>/<uuid>``);
* SR-IOV physical functions (PCI devices with ``sriov_totalvfs``) and their
  virtual functions (``virtfnN`` links); VFs that are NVIDIA vGPUs of the
  vendor-specific VFIO framework (``nvidia/current_vgpu_type``, R580+ on Linux 6.8+)
  carry their vGPU type (:mod:`.nvidia_vfio`);
* other PCI devices matching the operator's vendor/product filters;
* NUMA cells (``<sysfs>/devices/system/node``);
* instances, from libvirt domain XML (files or strings such as the output of
  ``virsh dumpxml``): which mdevs and PCI addresses every guest holds.

:func:`ownership` turns a report into ``{instance_uuid: {device_address:
units}}``, the map the reshape planner uses to move allocations.

``sysfs_root`` is the directory that plays ``/sys`` (tests point it at a fake
tree built by ``tools/fakehost.py``).  Every failure is a
:class:`DiscoveryError` whose message names the file that could not be read or
parsed; absent optional directories (no ``mdev_bus`` on a node without GPUs,
no NUMA directory) simply give empty lists.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re
import socket
import xml.etree.ElementTree as ET

from .. import shapes as _shapes
from . import novaconf as _novaconf
from . import nvidia_vfio as _nvidia_vfio
from ..errors import LocalFileError

DISCOVERY_CODE = 'placement_upgrade.discovery'
DEFAULT_DOMAIN_XML_GLOB = '/etc/libvirt/qemu/*.xml'
DEFAULT_NOVA_CONF = _novaconf.DEFAULT_NOVA_CONF

_BDF_RE = re.compile(r'^[0-9a-fA-F]{4,}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$')
_HEX_ID_RE = re.compile(r'^(?:0[xX])?([0-9a-fA-F]{1,4})$')
_CLASS_RE = re.compile(r'^(?:0[xX])?([0-9a-fA-F]{1,6})$')
_UUID_RE = re.compile(r'^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$')
_VIRTFN_RE = re.compile(r'^virtfn([0-9]+)$')
_NODE_RE = re.compile(r'^node([0-9]+)$')
_MEMTOTAL_RE = re.compile(r'^Node\s+([0-9]+)\s+MemTotal:\s+([0-9]+)\s*kB\s*$')


class DiscoveryError(LocalFileError):
    """A sysfs file or domain XML could not be read or parsed.

    The message always names the file (or the XML source) at fault.
    """

    default_code = DISCOVERY_CODE
    default_title = 'Discovery Error'


# ---------------------------------------------------------------------------
# small readers: every one names the file in its error


def _read(path):
    """Return the stripped text of ``path`` or raise DiscoveryError naming it."""
    try:
        with open(path, 'rb') as handle:
            data = handle.read()
    except (IOError, OSError) as exc:
        raise DiscoveryError('cannot read %s: %s' % (path, exc.strerror or exc), path=path)
    try:
        return data.decode('utf-8').strip()
    except UnicodeDecodeError:
        raise DiscoveryError('malformed %s: not UTF-8 text' % path, path=path)


def _read_optional(path, default=None):
    if not os.path.lexists(path):
        return default
    return _read(path)


def _read_int(path, default=None, required=False):
    if not os.path.lexists(path):
        if required:
            raise DiscoveryError('missing %s' % path, path=path)
        return default
    text = _read(path)
    try:
        return int(text, 10)
    except ValueError:
        raise DiscoveryError('malformed %s: expected an integer, got %r' % (path, text[:80]), path=path)


def _read_hex_id(path):
    """'0x10de' -> '10de'; None when the file is absent."""
    if not os.path.lexists(path):
        return None
    text = _read(path)
    match = _HEX_ID_RE.match(text)
    if not match:
        raise DiscoveryError('malformed %s: expected a hexadecimal id like 0x10de, got %r'
                             % (path, text[:80]), path=path)
    return match.group(1).lower().zfill(4)


def _read_class(path):
    """'0x030200' -> '030200'; None when the file is absent."""
    if not os.path.lexists(path):
        return None
    text = _read(path)
    match = _CLASS_RE.match(text)
    if not match:
        raise DiscoveryError('malformed %s: expected a PCI class like 0x030200, got %r'
                             % (path, text[:80]), path=path)
    return match.group(1).lower().zfill(6)


def _can_list(path):
    return os.access(path, os.R_OK | os.X_OK)


def _listdir(path):
    """Sorted entries of ``path``; [] when it does not exist."""
    if not os.path.isdir(path):
        return []
    try:
        return sorted(os.listdir(path))
    except (IOError, OSError) as exc:
        raise DiscoveryError('cannot list %s: %s' % (path, exc.strerror or exc), path=path)


def parse_cpulist(text, path='cpulist'):
    """Kernel list syntax ('0-15,32-47', '0,2,4-7', '') -> sorted ints.

    ``path`` only names the source in the error.
    """
    result = set()
    text = (text or '').strip()
    if not text:
        return []
    for part in text.split(','):
        part = part.strip()
        try:
            if '-' in part:
                low, high = part.split('-', 1)
                # '0-15:2/4' (stride syntax) is accepted by the kernel's parser on
                # input but never printed in these files: refuse it.
                low, high = int(low, 10), int(high, 10)
                if low < 0 or high < low:
                    raise ValueError(part)
                result.update(range(low, high + 1))
            else:
                value = int(part, 10)
                if value < 0:
                    raise ValueError(part)
                result.add(value)
        except ValueError:
            raise DiscoveryError('malformed %s: bad CPU list %r' % (path, text[:80]), path=path)
    return sorted(result)


def normalize_address(text):
    """'0000:84:00.0' in lower case; raise ValueError when it is not a BDF."""
    text = (text or '').strip()
    if not _BDF_RE.match(text):
        raise ValueError('not a PCI address: %r' % (text,))
    return text.lower()


# ---------------------------------------------------------------------------
# filters


def normalize_pci_filters(pci_filters):
    """Validate ``[{vendor_id, product_id?}]`` -> [(vendor, product_or_None)].

    Ids are 4 hex digits, with or without ``0x``, any case.
    """
    result = []
    for index, item in enumerate(pci_filters or []):
        if not isinstance(item, dict):
            raise DiscoveryError('pci_filters[%d]: expected a mapping with vendor_id and optional '
                                 'product_id, got %r' % (index, item))
        vendor = item.get('vendor_id')
        product = item.get('product_id')
        ids = []
        for key, value in (('vendor_id', vendor), ('product_id', product)):
            if value is None or (key == 'product_id' and value == ''):
                ids.append(None)
                continue
            match = _HEX_ID_RE.match(str(value).strip())
            if not match or len(match.group(1)) != 4:
                raise DiscoveryError('pci_filters[%d].%s: expected 4 hexadecimal digits like "10de", '
                                     'got %r' % (index, key, value))
            ids.append(match.group(1).lower())
        if ids[0] is None:
            raise DiscoveryError('pci_filters[%d]: vendor_id is required' % index)
        result.append((ids[0], ids[1]))
    return result


def _matches(filters, vendor_id, product_id):
    for vendor, product in filters:
        if vendor == vendor_id and (product is None or product == product_id):
            return True
    return False


# ---------------------------------------------------------------------------
# sysfs


class _Sysfs(object):
    def __init__(self, root):
        self.root = root
        self.pci_dir = os.path.join(root, 'bus', 'pci', 'devices')
        self.mdev_bus_dir = os.path.join(root, 'class', 'mdev_bus')
        self.mdev_dev_dir = os.path.join(root, 'bus', 'mdev', 'devices')
        self.node_dir = os.path.join(root, 'devices', 'system', 'node')

    def pci_path(self, address):
        return os.path.join(self.pci_dir, address)

    def pci_identity(self, address, fallback_dir=None):
        """vendor_id, product_id, class_id, numa_node of a PCI function."""
        base = self.pci_path(address)
        if not os.path.isdir(base) and fallback_dir is not None:
            base = fallback_dir
        numa = _read_int(os.path.join(base, 'numa_node'), default=-1)
        return {
            'vendor_id': _read_hex_id(os.path.join(base, 'vendor')),
            'product_id': _read_hex_id(os.path.join(base, 'device')),
            'class_id': _read_class(os.path.join(base, 'class')),
            'numa_node': numa if numa >= 0 else -1,
        }

    def link_target_name(self, path):
        """Basename of the directory a link (or plain directory) resolves to."""
        return os.path.basename(os.path.realpath(path))


def _discover_gpus(sysfs, warnings):
    gpus = []
    by_real = {}
    by_name = {}
    for entry in _listdir(sysfs.mdev_bus_dir):
        entry_path = os.path.join(sysfs.mdev_bus_dir, entry)
        if not os.path.isdir(entry_path):
            continue
        real = os.path.realpath(entry_path)
        try:
            address = normalize_address(os.path.basename(real))
        except ValueError:
            try:
                address = normalize_address(entry)
            except ValueError:
                # ccw / ap mdev parents (s390) are not PCI GPUs: not ours.
                continue
        types = {}
        types_dir = os.path.join(entry_path, 'mdev_supported_types')
        for type_name in _listdir(types_dir):
            type_dir = os.path.join(types_dir, type_name)
            if not os.path.isdir(type_dir):
                continue
            available = _read_int(os.path.join(type_dir, 'available_instances'), required=True)
            if available < 0:
                raise DiscoveryError('malformed %s: negative available_instances %d'
                                     % (os.path.join(type_dir, 'available_instances'), available),
                                     path=os.path.join(type_dir, 'available_instances'))
            types[type_name] = {
                'name': _read_optional(os.path.join(type_dir, 'name')),
                'available_instances': available,
                'device_api': _read_optional(os.path.join(type_dir, 'device_api')),
                'description': _read_optional(os.path.join(type_dir, 'description'), ''),
            }
        gpu = {'address': address}
        gpu.update(sysfs.pci_identity(address, fallback_dir=entry_path))
        physfn = os.path.join(sysfs.pci_path(address), 'physfn')
        gpu['physfn'] = None
        if os.path.lexists(physfn):
            try:
                gpu['physfn'] = normalize_address(sysfs.link_target_name(physfn))
            except ValueError:
                raise DiscoveryError('malformed %s: does not point to a PCI function' % physfn, path=physfn)
        gpu['mdev_types'] = types
        gpu['mdevs'] = []
        gpus.append(gpu)
        by_real[real] = gpu
        by_name[address] = gpu

    for entry in _listdir(sysfs.mdev_dev_dir):
        link = os.path.join(sysfs.mdev_dev_dir, entry)
        if not _UUID_RE.match(entry):
            warnings.append('ignoring %s: not an mdev UUID' % link)
            continue
        real = os.path.realpath(link)
        if not os.path.isdir(real):
            warnings.append('mdev %s: %s does not resolve to a device directory' % (entry, link))
            continue
        parent_real = os.path.dirname(real)
        gpu = by_real.get(parent_real) or by_name.get(os.path.basename(parent_real).lower())
        if gpu is None:
            warnings.append('mdev %s: parent %s is not an mdev parent under %s'
                            % (entry, os.path.basename(parent_real), sysfs.mdev_bus_dir))
            continue
        type_link = os.path.join(link, 'mdev_type')
        mdev_type = None
        if os.path.lexists(type_link):
            mdev_type = sysfs.link_target_name(type_link)
        gpu['mdevs'].append({'uuid': entry.lower(), 'type': mdev_type, 'instance_uuid': None})
    for gpu in gpus:
        gpu['mdevs'].sort(key=lambda m: m['uuid'])
    gpus.sort(key=lambda g: g['address'])
    return gpus


def _discover_pci(sysfs, gpu_addresses, filters, specs=None):
    """SR-IOV PFs and the other PCI devices that ``filters`` or a nova device_spec select."""
    pfs = []
    devices = []
    vf_of = {}
    infos = {}
    for entry in _listdir(sysfs.pci_dir):
        try:
            address = normalize_address(entry)
        except ValueError:
            continue
        base = sysfs.pci_path(address)
        if not os.path.isdir(base):
            continue
        infos[address] = base
    for address in sorted(infos):
        base = infos[address]
        total_path = os.path.join(base, 'sriov_totalvfs')
        if not os.path.lexists(total_path):
            continue
        total = _read_int(total_path)
        num = _read_int(os.path.join(base, 'sriov_numvfs'), default=0)
        vfs = []
        for name in _listdir(base):
            match = _VIRTFN_RE.match(name)
            if not match:
                continue
            link = os.path.join(base, name)
            try:
                vf_address = normalize_address(sysfs.link_target_name(link))
            except ValueError:
                raise DiscoveryError('malformed %s: does not point to a PCI function' % link, path=link)
            vfs.append((int(match.group(1)), vf_address))
        vfs.sort()
        pf = {'address': address}
        pf.update(sysfs.pci_identity(address))
        pf['total_vfs'] = total
        pf['num_vfs'] = num
        pf['vf_product_id'] = None
        pf['instance_uuid'] = None
        pf['vfs'] = [{'address': vf, 'instance_uuid': None} for _index, vf in vfs]
        if vfs:
            pf['vf_product_id'] = _read_hex_id(os.path.join(sysfs.pci_path(vfs[0][1]), 'device'))
        for _index, vf in vfs:
            vf_of[vf] = address
        pfs.append(pf)
    # A PF whose VFs are mdev parents (e.g. NVIDIA Ampere vGPU) is a GPU, not a NIC.
    gpu_pfs = set(vf_of[a] for a in gpu_addresses if a in vf_of)
    pfs = [pf for pf in pfs if pf['address'] not in gpu_pfs]
    for address in sorted(infos):
        if address in gpu_addresses or address in gpu_pfs or address in vf_of:
            continue
        base = infos[address]
        if os.path.lexists(os.path.join(base, 'sriov_totalvfs')):
            continue
        if os.path.lexists(os.path.join(base, 'physfn')):
            continue
        if not filters and not specs:
            continue
        ident = sysfs.pci_identity(address)
        if not (filters and _matches(filters, ident['vendor_id'], ident['product_id'])) and not (
                specs and _novaconf.matching_spec(specs, address, ident['vendor_id'], ident['product_id'])):
            continue
        device = {'address': address}
        device.update(ident)
        device['instance_uuid'] = None
        devices.append(device)
    return pfs, devices


def _online_cpus(sysfs_root, cells):
    """The host's online CPUs (``devices/system/cpu/online``, else the NUMA cells')."""
    path = os.path.join(sysfs_root, 'devices', 'system', 'cpu', 'online')
    if os.path.isfile(path):
        return parse_cpulist(_read(path), path)
    return sorted(c for cell in cells for c in cell.get('cpus', []))


def _discover_numa(sysfs):
    node_dir = sysfs.node_dir
    if not os.path.isdir(node_dir):
        return []
    online_path = os.path.join(node_dir, 'online')
    if os.path.lexists(online_path):
        ids = parse_cpulist(_read(online_path), online_path)
    else:
        ids = sorted(int(m.group(1)) for m in (_NODE_RE.match(n) for n in _listdir(node_dir)) if m)
    cells = []
    for node in ids:
        base = os.path.join(node_dir, 'node%d' % node)
        cpulist_path = os.path.join(base, 'cpulist')
        if not os.path.lexists(cpulist_path):
            raise DiscoveryError('missing %s (node %d is listed online)' % (cpulist_path, node),
                                 path=cpulist_path)
        cpus = parse_cpulist(_read(cpulist_path), cpulist_path)
        meminfo_path = os.path.join(base, 'meminfo')
        if not os.path.lexists(meminfo_path):
            raise DiscoveryError('missing %s (node %d is listed online)' % (meminfo_path, node),
                                 path=meminfo_path)
        memory_kb = None
        for line in _read(meminfo_path).splitlines():
            if 'MemTotal:' not in line:
                continue
            match = _MEMTOTAL_RE.match(line.strip())
            if not match or int(match.group(1)) != node:
                raise DiscoveryError('malformed %s: bad MemTotal line %r' % (meminfo_path, line.strip()[:80]),
                                     path=meminfo_path)
            memory_kb = int(match.group(2))
            break
        if memory_kb is None:
            raise DiscoveryError('malformed %s: no "Node %d MemTotal:" line' % (meminfo_path, node),
                                 path=meminfo_path)
        cells.append({'id': node, 'cpus': cpus, 'memory_mb': memory_kb // 1024})
    return cells


# ---------------------------------------------------------------------------
# libvirt domain XML


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


def parse_domain_xml(text, source):
    """One libvirt domain -> ``(uuid, {name, mdevs, pci_addresses})``.

    ``source`` names the file (or ``virsh dumpxml <uuid>``) in errors.
    """
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise DiscoveryError('malformed %s: not valid XML (%s)' % (source, exc), path=source)
    if root.tag != 'domain':
        raise DiscoveryError('malformed %s: root element is <%s>, expected <domain>' % (source, root.tag),
                             path=source)
    uuid = (root.findtext('uuid') or '').strip()
    if not _UUID_RE.match(uuid):
        raise DiscoveryError('malformed %s: missing or bad <uuid> %r' % (source, uuid), path=source)
    uuid = _canonical_uuid(uuid)
    name = (root.findtext('name') or '').strip() or None
    mdevs = []
    pci = []
    devices = root.find('devices')
    children = list(devices) if devices is not None else []
    for dev in children:
        if dev.tag == 'hostdev' and dev.get('mode', 'subsystem') == 'subsystem':
            kind = dev.get('type')
            address = dev.find('source/address')
            if kind == 'mdev':
                mdev_uuid = (address.get('uuid') if address is not None else '') or ''
                if not _UUID_RE.match(mdev_uuid):
                    raise DiscoveryError('malformed %s: mdev <hostdev> without a valid <source><address '
                                         'uuid=.../> (got %r)' % (source, mdev_uuid), path=source)
                mdevs.append(_canonical_uuid(mdev_uuid))
            elif kind == 'pci':
                if address is None:
                    raise DiscoveryError('malformed %s: pci <hostdev> without <source><address/>' % source,
                                         path=source)
                pci.append(_xml_address(address, source))
        elif dev.tag == 'interface' and dev.get('type') == 'hostdev':
            address = dev.find('source/address')
            if address is None or address.get('type', 'pci') != 'pci':
                raise DiscoveryError('malformed %s: hostdev <interface> without a PCI <source><address/>'
                                     % source, path=source)
            pci.append(_xml_address(address, source))
    # nova pins every vCPU of a hw:cpu_policy=dedicated guest to ONE host CPU; a NUMA-aware
    # shared guest gets <vcpupin> too, but to a range (its cell's CPUs)
    pinned = None
    pins = root.findall('cputune/vcpupin')
    if pins:
        sets = []
        for pin in pins:
            try:
                sets.append(parse_cpulist(pin.get('cpuset') or '', source))
            except DiscoveryError:
                raise DiscoveryError('malformed %s: <vcpupin cpuset=%r>' % (source, pin.get('cpuset')),
                                     path=source)
        if all(len(cpus) == 1 for cpus in sets):
            pinned = sorted(set(c for cpus in sets for c in cpus))
    try:
        vcpus = int((root.findtext('vcpu') or '0').strip())
    except ValueError:
        raise DiscoveryError('malformed %s: <vcpu> is not a number' % source, path=source)
    return uuid, {'name': name, 'mdevs': sorted(set(mdevs)), 'pci_addresses': sorted(set(pci)),
                  'mem_encryption': _launch_security(root.find('launchSecurity'), source),
                  'vcpus': vcpus, 'pinned_cpus': pinned}


def _launch_security(elem, source):
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


def _canonical_uuid(text):
    text = text.strip().lower().replace('-', '')
    return '%s-%s-%s-%s-%s' % (text[0:8], text[8:12], text[12:16], text[16:20], text[20:32])


def _read_domains(domain_xml_paths, domain_xml_glob, domain_xmls, warnings):
    """Instances from files, then from XML strings (live ``virsh dumpxml``).

    A domain seen in both keeps the string version: the live definition of a
    running guest wins over its persistent file.
    """
    if domain_xml_paths is None:
        paths = []
        if domain_xml_glob:
            # glob() silently matches nothing in a directory it cannot list
            # (/etc/libvirt/qemu is 0700 root): that would make every mdev look
            # unheld, so refuse instead.
            folder = os.path.dirname(domain_xml_glob)
            if folder and not glob.has_magic(folder) and os.path.isdir(folder) and not _can_list(folder):
                raise DiscoveryError('cannot list %s: permission denied (domain XML needs root: use become)'
                                     % folder, path=folder)
            paths = sorted(glob.glob(domain_xml_glob))
    else:
        paths = list(domain_xml_paths)
    sources = []
    for path in paths:
        if os.path.isdir(path):
            continue
        sources.append((path, _read(path), 'config'))
    for index, item in enumerate(domain_xmls or []):
        if isinstance(item, (tuple, list)):
            label, text = item[0], item[1]
        else:
            label, text = 'domain XML string #%d' % index, item
        sources.append((label, text, 'live'))
    instances = {}
    origin = {}
    for label, text, kind in sources:
        uuid, info = parse_domain_xml(text, label)
        if uuid in instances and origin[uuid][1] == kind:
            warnings.append('instance %s is defined twice (%s and %s); using %s'
                            % (uuid, origin[uuid][0], label, label))
        info['source'] = label
        instances[uuid] = info
        origin[uuid] = (label, kind)
    return instances


# ---------------------------------------------------------------------------
# the report


def discover(sysfs_root='/sys', domain_xml_paths=None, domain_xml_glob=DEFAULT_DOMAIN_XML_GLOB,
             pci_filters=None, numa=True, hostname=None, domain_xmls=None, nova_conf=None,
             nova_conf_dir=None, domain_capabilities=None):
    """Return the device report of this node (see docs/architecture.md).

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
    if not sysfs_root or not os.path.isdir(sysfs_root):
        raise DiscoveryError('sysfs root %s does not exist or is not a directory' % (sysfs_root,),
                             path=sysfs_root)
    filters = normalize_pci_filters(pci_filters)
    warnings = []
    nova = None
    if nova_conf:
        nova = _novaconf.read(nova_conf, nova_conf_dir)
        if nova is None:
            warnings.append('no nova.conf at %s: the layout falls back to the layout options and '
                            'nova\'s defaults' % nova_conf)
    sysfs = _Sysfs(sysfs_root)
    gpus = _discover_gpus(sysfs, warnings)
    gpu_addresses = set(g['address'] for g in gpus)
    specs = (nova or {}).get('pci', {}).get('device_spec') if nova else None
    pfs, devices = _discover_pci(sysfs, gpu_addresses, filters, specs)
    _nvidia_vfio.annotate(sysfs, pfs, warnings)
    cells = _discover_numa(sysfs) if numa else []
    online = _online_cpus(sysfs_root, cells)
    instances = _read_domains(domain_xml_paths, domain_xml_glob, domain_xmls, warnings)
    mem_enc = mem_encryption(sysfs_root, domain_capabilities, nova, warnings)

    report = {
        'hostname': hostname or socket.gethostname(),
        'sysfs_root': sysfs_root,
        'gpus': gpus,
        'sriov_pfs': pfs,
        'pci_devices': devices,
        'numa_cells': cells,
        'cpus_online': online,
        'instances': {},
        'nova_conf': nova,
        'mem_encryption': mem_enc,
        'warnings': warnings,
    }
    for uuid in sorted(instances):
        info = instances[uuid]
        report['instances'][uuid] = {'name': info['name'], 'mdevs': info['mdevs'],
                                     'pci_addresses': info['pci_addresses'], 'source': info['source'],
                                     'mem_encryption': info.get('mem_encryption'),
                                     'vcpus': info.get('vcpus'), 'pinned_cpus': info.get('pinned_cpus')}
    _assign_holders(report, warnings)
    _nvidia_vfio.guests(report, warnings)
    return report


# -- memory encryption (nova/virt/libvirt/host.py get_mem_encryption_inventories) -------

MEM_ENCRYPTION_MODELS = (
    # (nova's model id, trait); the order of nova's fields.MemEncryptionModel.ALL
    ('amd_sev', 'HW_CPU_X86_AMD_SEV'),
    ('amd_sev_es', 'HW_CPU_X86_AMD_SEV_ES'),
    ('amd_sev_snp', 'HW_CPU_X86_AMD_SEV_SNP'),
    ('intel_tdx', 'HW_CPU_X86_INTEL_TDX'),
)
KVM_AMD_PARAMETERS = 'module/kvm_amd/parameters'
MISC_CGROUP_CAPACITY = 'fs/cgroup/misc.capacity'


def _kernel_flag(sysfs_root, name):
    path = os.path.join(sysfs_root, KVM_AMD_PARAMETERS, name)
    if not os.path.isfile(path):
        return False
    return _read(path).strip().lower() in ('1', 'y', 'yes', 'true', 'on')


def _domcaps_text(domain_capabilities):
    if not domain_capabilities:
        return None, None
    text = domain_capabilities
    source = 'domain capabilities XML'
    if not text.lstrip().startswith('<'):
        source = text
        if not os.path.isfile(text):
            raise DiscoveryError('domain capabilities file %s does not exist' % text, path=text)
        text = _read(text)
    return text, source


def mem_encryption(sysfs_root, domain_capabilities, nova, warnings):
    """``{source, models: {model: {total, trait}}}`` as nova 34 computes them, or None.

    AMD SEV needs the kernel's kvm_amd ``sev`` parameter and ``<sev supported='yes'>``
    in the domain capabilities (total ``maxGuests``); SEV-ES also the ``sev_es``
    parameter and no ``sev_snp`` (total ``maxESGuests``); SEV-SNP the ``sev_snp``
    parameter and ``sev-snp`` among the ``<launchSecurity>`` sectypes (total
    ``maxESGuests``); Intel TDX ``[libvirt]cpu_mode = host-passthrough``, ``<tdx
    supported='yes'>`` and a capacity: ``[libvirt]num_intel_tdx_guests`` when set, else
    the ``tdx`` line of the misc cgroup's ``misc.capacity``.  (nova 34 no longer reads
    ``[libvirt]num_memory_encrypted_guests``: AMD totals come from libvirt only.)
    QEMU is assumed recent enough for SEV-ES (nova: 8.0.0); only supported models with
    a total above 0 are listed.
    """
    text, source = _domcaps_text(domain_capabilities)
    if text is None:
        if _kernel_flag(sysfs_root, 'sev'):
            warnings.append('the kernel enables AMD SEV (kvm_amd sev) but no domain capabilities XML '
                            'was given: memory encryption providers are not planned')
        return None
    try:
        caps = ET.fromstring(text)
    except ET.ParseError as exc:
        raise DiscoveryError('malformed %s: not valid XML (%s)' % (source, exc), path=source)
    features = caps.find('features')
    sev = features.find('sev') if features is not None else None
    tdx = features.find('tdx') if features is not None else None
    launch = features.find('launchSecurity') if features is not None else None
    sectypes = []
    if launch is not None and launch.get('supported') == 'yes':
        sectypes = [(v.text or '').strip() for v in launch.findall("enum[@name='sectype']/value")]

    def count(elem, tag):
        try:
            return int((elem.findtext(tag) or '0').strip())
        except ValueError:
            raise DiscoveryError('malformed %s: <%s> is not a number' % (source, tag), path=source)

    models = {}
    amd_sev = (_kernel_flag(sysfs_root, 'sev') and sev is not None and sev.get('supported') == 'yes')
    if amd_sev:
        models['amd_sev'] = count(sev, 'maxGuests')
        snp_kernel = _kernel_flag(sysfs_root, 'sev_snp')
        if _kernel_flag(sysfs_root, 'sev_es') and not snp_kernel:
            models['amd_sev_es'] = count(sev, 'maxESGuests')
        if snp_kernel and 'sev-snp' in sectypes:
            models['amd_sev_snp'] = count(sev, 'maxESGuests')
    libvirt = (nova or {}).get('libvirt') or {}
    if tdx is not None and tdx.get('supported') == 'yes' and libvirt.get('cpu_mode') == 'host-passthrough':
        capacity = libvirt.get('num_intel_tdx_guests')
        if capacity is None:
            capacity = _tdx_cgroup_capacity(sysfs_root)
        models['intel_tdx'] = capacity or 0
    traits = dict(MEM_ENCRYPTION_MODELS)
    return {'source': source,
            'models': dict((m, {'total': n, 'trait': traits[m]}) for m, n in sorted(models.items()))}


def _tdx_cgroup_capacity(sysfs_root):
    path = os.path.join(sysfs_root, MISC_CGROUP_CAPACITY)
    if not os.path.isfile(path):
        return None
    for line in _read(path).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == 'tdx' and parts[1].isdigit():
            return int(parts[1])
    return None


def _assign_holders(report, warnings):
    mdev_index = {}
    for gpu in report['gpus']:
        for mdev in gpu['mdevs']:
            mdev_index[mdev['uuid']] = (gpu, mdev)
    pci_index = {}
    for pf in report['sriov_pfs']:
        pci_index[pf['address']] = pf
        for vf in pf['vfs']:
            pci_index[vf['address']] = vf
    for device in report['pci_devices']:
        pci_index[device['address']] = device
    gpu_addresses = set(g['address'] for g in report['gpus'])

    for uuid in sorted(report['instances']):
        info = report['instances'][uuid]
        label = '%s (%s)' % (uuid, info['name']) if info['name'] else uuid
        for mdev_uuid in info['mdevs']:
            found = mdev_index.get(mdev_uuid)
            if found is None:
                warnings.append('instance %s holds mdev %s which does not exist in sysfs' % (label, mdev_uuid))
                continue
            _gpu, mdev = found
            if mdev['instance_uuid'] and mdev['instance_uuid'] != uuid:
                warnings.append('mdev %s is held by both instance %s and instance %s; keeping %s'
                                % (mdev_uuid, mdev['instance_uuid'], uuid, mdev['instance_uuid']))
                continue
            mdev['instance_uuid'] = uuid
        for address in info['pci_addresses']:
            target = pci_index.get(address)
            if target is None:
                if address in gpu_addresses:
                    warnings.append('instance %s holds mdev parent GPU %s by PCI passthrough' % (label, address))
                else:
                    warnings.append('instance %s holds PCI device %s which is not a reported device '
                                    '(no SR-IOV PF/VF, not matched by pci_filters)' % (label, address))
                continue
            if target['instance_uuid'] and target['instance_uuid'] != uuid:
                warnings.append('PCI device %s is held by both instance %s and instance %s; keeping %s'
                                % (address, target['instance_uuid'], uuid, target['instance_uuid']))
                continue
            target['instance_uuid'] = uuid
    for gpu in report['gpus']:
        for mdev in gpu['mdevs']:
            if mdev['instance_uuid'] is None:
                warnings.append('mdev %s on GPU %s (type %s) is not held by any instance'
                                % (mdev['uuid'], gpu['address'], mdev['type']))


def ownership(report):
    """``{instance_uuid: {device_address: units}}`` from a device report.

    mdevs count against their parent GPU, VFs (and a PF passed through whole)
    against the PF, other PCI devices against themselves; one unit each.
    """
    result = {}

    def add(consumer, address):
        if not consumer:
            return
        owned = result.setdefault(consumer, {})
        owned[address] = owned.get(address, 0) + 1

    for gpu in report.get('gpus') or []:
        for mdev in gpu.get('mdevs') or []:
            add(mdev.get('instance_uuid'), gpu['address'])
    for pf in report.get('sriov_pfs') or []:
        add(pf.get('instance_uuid'), pf['address'])
        for vf in pf.get('vfs') or []:
            add(vf.get('instance_uuid'), pf['address'])
    for device in report.get('pci_devices') or []:
        add(device.get('instance_uuid'), device['address'])
    return result


def ownership_warnings(report):
    """Problems the planner must know about: unheld mdevs, missing mdevs.

    Recomputed from the report alone (for a report that did not come from
    :func:`discover`, e.g. one edited by hand or built by a test).
    """
    warnings = []
    known = set()
    for gpu in report.get('gpus') or []:
        for mdev in gpu.get('mdevs') or []:
            known.add(mdev['uuid'])
            if not mdev.get('instance_uuid'):
                warnings.append('mdev %s on GPU %s (type %s) is not held by any instance'
                                % (mdev['uuid'], gpu['address'], mdev.get('type')))
    for uuid in sorted(report.get('instances') or {}):
        for mdev_uuid in (report['instances'][uuid] or {}).get('mdevs') or []:
            if mdev_uuid not in known:
                warnings.append('instance %s holds mdev %s which does not exist in sysfs' % (uuid, mdev_uuid))
    return warnings


# ---------------------------------------------------------------------------
# the shape of a device report given back (reshape's devices option, a hand-edited report)

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


def check_report(devices, field='devices'):
    """Refuse a device report whose shape the layout cannot read, naming the field.

    A report made by :func:`discover` always passes; this is for one given back to a
    module (the reshape's ``devices``), edited by hand or built by a tool.  Only the
    containers and the fields the layout reads are checked (a missing optional list
    is an empty one).  Raises :class:`.errors.BadInput`, e.g. ``devices.gpus must be a
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
    _check_entries(devices.get('numa_cells'), field + '.numa_cells', 'NUMA cell records',
                   {'id': 'int!', 'memory_mb': 'int?'},
                   lambda cell, where: _shapes.expect_list_of(cell.get('cpus'), 'int', where + '.cpus',
                                                              'a list of CPU ids'))
    _shapes.expect_list_of(devices.get('cpus_online'), 'int', field + '.cpus_online', 'a list of CPU ids')
    for uuid, info in (devices.get('instances') or {}).items():
        where = '%s.instances.%s' % (field, uuid)
        _shapes.expect_fields(info, where, {'name': _TEXT_OR_NULL, 'vcpus': 'int?',
                                            'mem_encryption': _TEXT_OR_NULL, 'vgpus': 'list?'},
                              'an instance record (a mapping)')
        _shapes.expect_list_of(info.get('mdevs'), 'text', where + '.mdevs', 'a list of mdev UUIDs')
        _shapes.expect_list_of(info.get('pci_addresses'), 'text', where + '.pci_addresses', 'a list of PCI addresses')
        _shapes.expect_list_of(info.get('pinned_cpus'), 'int', where + '.pinned_cpus', 'a list of CPU ids')
    if devices.get('nova_conf') is not None:
        _check_nova_conf(devices['nova_conf'], field + '.nova_conf')
    enc = devices.get('mem_encryption')
    if enc is not None:
        models = _shapes.expect(enc.get('models'), 'mapping', field + '.mem_encryption.models',
                                'a mapping of model -> {total, trait}', optional=True)
        for name, info in (models or {}).items():
            _shapes.expect_fields(info, '%s.mem_encryption.models.%s' % (field, name),
                                  {'total': 'int?', 'trait': 'text!'})
