# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build a fake compute node (sysfs tree + libvirt domain XML) under a directory.

Used by the unit tests of device discovery and by the demo fleet builder.
The tree mimics the kernel's layout, real symlinks included::

    <root>/sys/devices/pci0000:00/<BDF>/{vendor,device,class,numa_node}
    <root>/sys/devices/pci0000:00/<BDF>/mdev_supported_types/<type>/{available_instances,
                                        device_api,name,description}
    <root>/sys/devices/pci0000:00/<BDF>/<mdev uuid>/mdev_type -> ../mdev_supported_types/<type>
    <root>/sys/devices/pci0000:00/<PF>/{sriov_totalvfs,sriov_numvfs,virtfnN -> ../<VF>}
    <root>/sys/devices/pci0000:00/<VF>/physfn -> ../<PF>
    <root>/sys/bus/pci/devices/<BDF>   -> ../../../devices/pci0000:00/<BDF>
    <root>/sys/class/mdev_bus/<BDF>    -> ../../devices/pci0000:00/<BDF>
    <root>/sys/bus/mdev/devices/<uuid> -> ../../../devices/pci0000:00/<BDF>/<uuid>
    <root>/sys/devices/system/node/{online,nodeN/cpulist,nodeN/meminfo}
    <root>/etc/libvirt/qemu/<instance name>.xml

With ``spec['layout'] = 'plain'`` the PCI functions are plain directories under
``bus/pci/devices`` and ``class/mdev_bus`` (the discovery code must accept both).

Everything is deterministic: instance and mdev UUIDs are uuid5 of the host
name and the instance name / GPU address, so a fleet is reproducible.

The spec (a dict; every key optional)::

    hostname: compute-01
    layout: symlinks | plain
    numa_cells: [{id: 0, cpus: "0-15,32-47" or [0, 1, ...], memory_mb: 64266}]
    gpus:
      - address: "0000:84:00.0"
        vendor_id: "10de"            # default 10de
        product_id: "1eb8"           # default 1eb8 (Tesla T4)
        numa_node: 0                 # default -1
        mdev_types:
          nvidia-222: {name: "GRID T4-2Q", max_instances: 8, device_api: vfio-pci, description: ""}
          # or available_instances: N (written as is); by default
          # available_instances = max_instances - existing mdevs of that type
        mdevs:
          - {type: nvidia-222, holder: instance-00000001}   # holder null: unheld
          - {type: nvidia-222, uuid: "..."}                  # explicit uuid
    sriov_pfs:
      - address: "0000:81:00.0"
        vendor_id: "8086"; product_id: "1572"; vf_product_id: "154c"; numa_node: 1
        total_vfs: 8; num_vfs: 4
        vf_holders: {0: instance-00000002}     # VF index -> instance name
        vf_addresses: [...]                    # default: same bus, slot+2.., function 0-7
        nvidia_vgpu:                           # NVIDIA vGPU, vendor-specific VFIO framework (R580+):
          types: {1152: "NVIDIA L4-6Q"}        #   the GPU's vGPU types (id -> name)
          vf_types: {0: 1152, 1: 1152}         #   VF index -> nvidia/current_vgpu_type (others 0)
          creatable: [1152]                    #   what a VF without a type lists in
                                               #   nvidia/creatable_vgpu_types (default: every type;
                                               #   a VF with a type lists none)
          driver: nvidia                       #   the VFs' driver link (bus/pci/drivers/<name>)
    pci_devices:
      - {address: "0000:3b:00.0", vendor_id: "10de", product_id: "20b5",
         class_id: "030200", numa_node: 0, holder: instance-00000003}
    instances:
      - {name: instance-00000001, uuid: optional, vf_as: interface | hostdev, managed: 'yes' | 'no',
         extra_mdevs: [uuid, ...], extra_pci: [address, ...]}   # dangling references
    nova_conf:                                 # written to <root>/etc/nova/nova.conf
      devices: {enabled_mdev_types: "nvidia-222,nvidia-592"}
      mdev_nvidia-592: {device_addresses: "0000:85:00.0", mdev_class: CUSTOM_A10}
      pci: {report_in_placement: true,
            device_spec: ['{"vendor_id": "8086", "product_id": "154c"}', ...]}   # a list: the
                                               # option is repeated, one line per item (MultiStrOpt)
    nova_conf_d: {"10-extra.conf": {section: {key: value}}}   # <root>/etc/nova/nova.conf.d/
    sev:                                       # AMD memory encryption (nova 34 reads these)
      kernel: {sev: true, sev_es: true, sev_snp: false}   # /sys/module/kvm_amd/parameters/*
      max_guests: 15                           # <root>/etc/libvirt/domcapabilities.xml:
      max_es_guests: 494                       #   <sev supported='yes'> maxGuests / maxESGuests
      launch_security: [sev, sev-es]           #   <launchSecurity> sectypes (libvirt >= 10.5)
    instances: [{name: ..., mem_encryption: amd-sev | amd-sev-es}]   # domain <launchSecurity>
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import json
import os
import shutil
import sys
import uuid as _uuid
from xml.sax.saxutils import escape, quoteattr

NAMESPACE = _uuid.uuid5(_uuid.NAMESPACE_DNS, 'fakehost.placement-upgrade.invalid')

T4_VENDOR = '10de'
T4_PRODUCT = '1eb8'
T4_2Q = 'nvidia-222'


def instance_uuid(hostname, name):
    """The uuid a fake instance ``name`` on ``hostname`` gets."""
    return str(_uuid.uuid5(NAMESPACE, 'instance:%s:%s' % (hostname, name)))


def mdev_uuid(hostname, gpu_address, index):
    """The uuid of the ``index``-th fake mdev on ``gpu_address`` of ``hostname``."""
    return str(_uuid.uuid5(NAMESPACE, 'mdev:%s:%s:%d' % (hostname, gpu_address, index)))


def _parse_bdf(address):
    domain, bus, rest = address.split(':')
    slot, function = rest.split('.')
    return int(domain, 16), int(bus, 16), int(slot, 16), int(function, 16)


def _bdf(domain, bus, slot, function):
    return '%04x:%02x:%02x.%x' % (domain, bus, slot, function)


def default_vf_addresses(pf_address, count):
    """VF addresses as a typical NIC lays them out: PF slot + 2, 8 functions per slot."""
    domain, bus, slot, _function = _parse_bdf(pf_address)
    return [_bdf(domain, bus, slot + 2 + i // 8, i % 8) for i in range(count)]


def _cpus_text(cpus):
    """[0, 1, 2, 5] -> '0-2,5' (the kernel's list syntax); a string is kept as is."""
    if isinstance(cpus, str):
        return cpus
    runs = []
    for cpu in sorted(set(int(c) for c in cpus)):
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ','.join(str(low) if low == high else '%d-%d' % (low, high) for low, high in runs)


class _Writer(object):
    def __init__(self, root, layout):
        self.root = os.path.abspath(root)
        self.sys = os.path.join(self.root, 'sys')
        self.layout = layout
        if layout not in ('symlinks', 'plain'):
            raise ValueError('layout must be "symlinks" or "plain", got %r' % (layout,))
        self.pci_devices = os.path.join(self.sys, 'bus', 'pci', 'devices')
        self.mdev_bus = os.path.join(self.sys, 'class', 'mdev_bus')
        self.mdev_devices = os.path.join(self.sys, 'bus', 'mdev', 'devices')
        self.devices = os.path.join(self.sys, 'devices', 'pci0000:00')
        for path in (self.pci_devices, self.mdev_devices):
            os.makedirs(path)

    @staticmethod
    def write(path, text):
        parent = os.path.dirname(path)
        if not os.path.isdir(parent):
            os.makedirs(parent)
        with open(path, 'w') as handle:
            handle.write(text)

    @staticmethod
    def link(target_abs, link_path):
        parent = os.path.dirname(link_path)
        if not os.path.isdir(parent):
            os.makedirs(parent)
        os.symlink(os.path.relpath(target_abs, parent), link_path)

    def pci_function(self, address, vendor, product, class_id, numa_node):
        """Create a PCI function; return its real directory."""
        if self.layout == 'plain':
            path = os.path.join(self.pci_devices, address)
        else:
            path = os.path.join(self.devices, address)
        if os.path.exists(path):
            raise ValueError('PCI address %s is used twice' % address)
        os.makedirs(path)
        self.write(os.path.join(path, 'vendor'), '0x%s\n' % vendor)
        self.write(os.path.join(path, 'device'), '0x%s\n' % product)
        self.write(os.path.join(path, 'class'), '0x%s\n' % class_id)
        self.write(os.path.join(path, 'numa_node'), '%d\n' % numa_node)
        if self.layout != 'plain':
            self.link(path, os.path.join(self.pci_devices, address))
        return path

    def mdev_parent(self, address, device_dir):
        """Register ``device_dir`` as an mdev parent; return the dir holding its types."""
        entry = os.path.join(self.mdev_bus, address)
        if self.layout == 'plain':
            os.makedirs(entry)
            # vendor/device are read from bus/pci/devices; keep the parent a plain dir.
            return entry
        self.link(device_dir, entry)
        return device_dir


def _holder(instances, name):
    if name is None:
        return None
    if name not in instances:
        instances[name] = {'name': name, 'mdevs': [], 'pci': [], 'vfs': []}
    return instances[name]


def build_host(root, spec, clean=False):
    """Write the fake host described by ``spec`` under ``root``.

    Returns ``{root, hostname, sysfs_root, domain_xml_glob, xml_paths,
    instances: {name: uuid}, mdevs: {uuid: {gpu, type, holder}}}``.
    ``clean`` removes an earlier fake tree (``<root>/sys``, ``<root>/etc``) first;
    otherwise an existing one is an error.
    """
    spec = dict(spec or {})
    root = os.path.abspath(root)
    hostname = spec.get('hostname', 'compute-01')
    sys_root = os.path.join(root, 'sys')
    qemu_dir = os.path.join(root, 'etc', 'libvirt', 'qemu')
    for path in (sys_root, os.path.join(root, 'etc')):
        if os.path.lexists(path):
            if not clean:
                raise ValueError('%s already exists (pass clean=True to rebuild)' % path)
            shutil.rmtree(path)
    writer = _Writer(root, spec.get('layout', 'symlinks'))
    os.makedirs(qemu_dir)

    instances = {}
    for item in spec.get('instances', []):
        entry = _holder(instances, item['name'])
        entry.update(item)
    mdev_map = {}

    for gpu in spec.get('gpus', []):
        address = gpu['address']
        device_dir = writer.pci_function(address, gpu.get('vendor_id', T4_VENDOR),
                                         gpu.get('product_id', T4_PRODUCT),
                                         gpu.get('class_id', '030200'), gpu.get('numa_node', -1))
        parent_dir = writer.mdev_parent(address, device_dir)
        mdevs = gpu.get('mdevs', [])
        types = gpu.get('mdev_types') or {T4_2Q: {'name': 'GRID T4-2Q', 'max_instances': 8}}
        for type_name in sorted(types):
            info = types[type_name]
            type_dir = os.path.join(parent_dir, 'mdev_supported_types', type_name)
            os.makedirs(type_dir)
            if 'available_instances' in info:
                available = info['available_instances']
            else:
                used = len([m for m in mdevs if m.get('type', T4_2Q) == type_name])
                available = max(int(info.get('max_instances', 8)) - used, 0)
            writer.write(os.path.join(type_dir, 'available_instances'), '%s\n' % available)
            writer.write(os.path.join(type_dir, 'device_api'), '%s\n' % info.get('device_api', 'vfio-pci'))
            if info.get('name') is not None:
                writer.write(os.path.join(type_dir, 'name'), '%s\n' % info['name'])
            writer.write(os.path.join(type_dir, 'description'), '%s\n' % info.get('description', ''))
        for index, mdev in enumerate(mdevs):
            uuid = mdev.get('uuid') or mdev_uuid(hostname, address, index)
            type_name = mdev.get('type', T4_2Q)
            mdev_dir = os.path.join(parent_dir, uuid)
            os.makedirs(mdev_dir)
            writer.link(os.path.join(parent_dir, 'mdev_supported_types', type_name),
                        os.path.join(mdev_dir, 'mdev_type'))
            writer.link(mdev_dir, os.path.join(writer.mdev_devices, uuid))
            holder = _holder(instances, mdev.get('holder'))
            if holder is not None:
                holder['mdevs'].append(uuid)
            mdev_map[uuid] = {'gpu': address, 'type': type_name, 'holder': mdev.get('holder')}

    for pf in spec.get('sriov_pfs', []):
        address = pf['address']
        pf_dir = writer.pci_function(address, pf.get('vendor_id', '8086'), pf.get('product_id', '1572'),
                                     pf.get('class_id', '020000'), pf.get('numa_node', -1))
        total = int(pf.get('total_vfs', 8))
        num = int(pf.get('num_vfs', total))
        writer.write(os.path.join(pf_dir, 'sriov_totalvfs'), '%d\n' % total)
        writer.write(os.path.join(pf_dir, 'sriov_numvfs'), '%d\n' % num)
        vf_addresses = pf.get('vf_addresses') or default_vf_addresses(address, num)
        holders = dict((int(k), v) for k, v in (pf.get('vf_holders') or {}).items())
        vgpu = pf.get('nvidia_vgpu')
        for index, vf_address in enumerate(vf_addresses[:num]):
            vf_dir = writer.pci_function(vf_address, pf.get('vendor_id', '8086'),
                                         pf.get('vf_product_id', '154c'),
                                         pf.get('class_id', '020000'), pf.get('numa_node', -1))
            writer.link(vf_dir, os.path.join(pf_dir, 'virtfn%d' % index))
            writer.link(pf_dir, os.path.join(vf_dir, 'physfn'))
            if vgpu is not None:
                nvidia_vgpu_vf(writer, vf_dir, vgpu, index)
            holder = _holder(instances, holders.get(index))
            if holder is not None:
                holder['vfs'].append(vf_address)
        holder = _holder(instances, pf.get('holder'))
        if holder is not None:
            holder['pci'].append(address)

    for device in spec.get('pci_devices', []):
        writer.pci_function(device['address'], device['vendor_id'], device['product_id'],
                            device.get('class_id', '030200'), device.get('numa_node', -1))
        holder = _holder(instances, device.get('holder'))
        if holder is not None:
            holder['pci'].append(device['address'])

    cells = spec.get('numa_cells', [])
    if cells:
        node_dir = os.path.join(writer.sys, 'devices', 'system', 'node')
        writer.write(os.path.join(node_dir, 'online'), '%s\n' % _cpus_text([c['id'] for c in cells]))
        for cell in cells:
            base = os.path.join(node_dir, 'node%d' % cell['id'])
            writer.write(os.path.join(base, 'cpulist'), '%s\n' % _cpus_text(cell.get('cpus', [])))
            memory_kb = int(cell.get('memory_mb', 0)) * 1024
            writer.write(os.path.join(base, 'meminfo'),
                         'Node %d MemTotal:       %d kB\n'
                         'Node %d MemFree:        %d kB\n'
                         'Node %d MemUsed:        %d kB\n'
                         % (cell['id'], memory_kb, cell['id'], memory_kb // 2, cell['id'], memory_kb // 2))
        all_cpus = sorted(c for cell in cells for c in cpu_ids(cell.get('cpus', [])))
        writer.write(os.path.join(writer.sys, 'devices', 'system', 'cpu', 'online'),
                     '%s\n' % _cpus_text(all_cpus))

    domcaps = None
    if spec.get('sev') is not None:
        params = os.path.join(writer.sys, 'module', 'kvm_amd', 'parameters')
        for name, on in sorted((spec['sev'].get('kernel') or {'sev': True}).items()):
            writer.write(os.path.join(params, name), 'Y\n' if on else 'N\n')
    if spec.get('tdx') is not None and spec['tdx'].get('misc_capacity') is not None:
        writer.write(os.path.join(writer.sys, 'fs', 'cgroup', 'misc.capacity'),
                     'sev 0\nsev_es 0\ntdx %d\n' % int(spec['tdx']['misc_capacity']))
    if spec.get('sev') is not None or spec.get('tdx') is not None:
        domcaps = os.path.join(root, 'etc', 'libvirt', 'domcapabilities.xml')
        writer.write(domcaps, domain_capabilities_xml(spec.get('sev'), spec.get('tdx')))

    nova_conf = None
    if spec.get('nova_conf') is not None:
        nova_conf = os.path.join(root, 'etc', 'nova', 'nova.conf')
        writer.write(nova_conf, nova_conf_text(spec['nova_conf']))
    for fname, sections in sorted((spec.get('nova_conf_d') or {}).items()):
        writer.write(os.path.join(root, 'etc', 'nova', 'nova.conf.d', fname), nova_conf_text(sections))

    result_instances = {}
    xml_paths = []
    for name in sorted(instances):
        info = instances[name]
        uuid = info.get('uuid') or instance_uuid(hostname, name)
        result_instances[name] = uuid
        path = os.path.join(qemu_dir, '%s.xml' % name)
        writer.write(path, domain_xml(name, uuid, info.get('mdevs', []) + list(info.get('extra_mdevs', [])),
                                      info.get('pci', []) + list(info.get('extra_pci', [])),
                                      info.get('vfs', []), vf_as=info.get('vf_as', 'interface'),
                                      managed=info.get('managed', 'yes'),
                                      mem_encryption=info.get('mem_encryption'),
                                      pinned_cpus=info.get('pinned_cpus')))
        xml_paths.append(path)

    return {
        'root': root,
        'hostname': hostname,
        'sysfs_root': writer.sys,
        'domain_xml_glob': os.path.join(qemu_dir, '*.xml'),
        'xml_paths': xml_paths,
        'instances': result_instances,
        'mdevs': mdev_map,
        'nova_conf': nova_conf,
        'domain_capabilities': domcaps,
    }


def nvidia_vgpu_vf(writer, vf_dir, vgpu, index):
    """The ``nvidia/`` directory and driver link of VF ``index`` of an NVIDIA vGPU GPU (the
    vendor-specific VFIO framework): ``current_vgpu_type`` and ``creatable_vgpu_types``."""
    types = dict((int(k), v) for k, v in (vgpu.get('types') or {}).items())
    current = int(dict((int(k), v) for k, v in (vgpu.get('vf_types') or {}).items()).get(index, 0))
    base = os.path.join(vf_dir, 'nvidia')
    writer.write(os.path.join(base, 'current_vgpu_type'), '%d\n' % current)
    creatable = [] if current else [int(t) for t in vgpu.get('creatable', sorted(types))]
    lines = ['%-5d : %s\n' % (t, types.get(t, 'NVIDIA vGPU %d' % t)) for t in creatable]
    writer.write(os.path.join(base, 'creatable_vgpu_types'), 'ID    : vGPU Name\n' + ''.join(lines))
    driver = os.path.join(writer.sys, 'bus', 'pci', 'drivers', vgpu.get('driver', 'nvidia'))
    if not os.path.isdir(driver):
        os.makedirs(driver)
    writer.link(driver, os.path.join(vf_dir, 'driver'))


def _conf_value(value):
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, (list, tuple)) and not value:
        return ''
    return str(value)


def nova_conf_text(sections):
    """oslo.config INI text of ``{section: {option: value}}``.

    A list value is written as the option repeated once per item (how a
    MultiStrOpt such as ``[pci]device_spec`` is given); booleans as true/false.
    """
    lines = []
    for section in sorted(sections or {}):
        lines.append('[%s]' % section)
        for key in sorted(sections[section] or {}):
            value = sections[section][key]
            if isinstance(value, (list, tuple)) and value:
                for item in value:
                    lines.append('%s = %s' % (key, _conf_value(item)))
            else:
                lines.append('%s = %s' % (key, _conf_value(value)))
        lines.append('')
    return '\n'.join(lines)


def _pci_address_xml(address, with_type=False):
    domain, bus, slot, function = _parse_bdf(address)
    return "<address %sdomain='0x%04x' bus='0x%02x' slot='0x%02x' function='0x%x'/>" % (
        "type='pci' " if with_type else '', domain, bus, slot, function)


SEV_POLICY = {'amd-sev': '0x0033', 'amd-sev-es': '0x0037'}    # nova: NODBG|NOKS|DOMAIN|SEV (+ES)


def domain_capabilities_xml(sev=None, tdx=None):
    """``virsh domcapabilities`` of an AMD SEV (or Intel TDX) host, as libvirt prints it."""
    lines = ["<domainCapabilities>", "  <path>/usr/bin/qemu-system-x86_64</path>",
             "  <domain>kvm</domain>", "  <machine>pc-q35-8.2</machine>", "  <arch>x86_64</arch>",
             "  <features>", "    <gic supported='no'/>"]
    sev = sev or {}
    if sev:
        supported = 'yes' if sev.get('supported', True) else 'no'
        lines += ["    <sev supported='%s'>" % supported,
                  "      <cbitpos>47</cbitpos>", "      <reducedPhysBits>1</reducedPhysBits>",
                  "      <maxGuests>%d</maxGuests>" % int(sev.get('max_guests', 15)),
                  "      <maxESGuests>%d</maxESGuests>" % int(sev.get('max_es_guests', 0)),
                  "    </sev>"]
    if tdx is not None:
        lines.append("    <tdx supported='%s'/>" % ('yes' if tdx.get('supported', True) else 'no'))
    if sev.get('launch_security'):
        lines += ["    <launchSecurity supported='yes'>", "      <enum name='sectype'>"]
        lines += ["        <value>%s</value>" % t for t in sev['launch_security']]
        lines += ["      </enum>", "    </launchSecurity>"]
    lines += ["  </features>", "</domainCapabilities>", ""]
    return '\n'.join(lines)


def cpu_ids(cpus):
    """``'0-3,8'`` (or a list) -> ``[0, 1, 2, 3, 8]``."""
    if isinstance(cpus, str):
        out = []
        for part in cpus.split(','):
            if '-' in part:
                lo, hi = part.split('-')
                out.extend(range(int(lo), int(hi) + 1))
            elif part.strip():
                out.append(int(part))
        return out
    return list(cpus)


def domain_xml(name, uuid, mdevs=(), pci=(), vfs=(), vf_as='interface', mem_encryption=None,
               pinned_cpus=None, managed='yes'):
    """A libvirt domain definition shaped like the ones nova writes.

    ``managed``: the ``managed`` attribute of a VF's ``<hostdev>`` (nova writes ``no`` for a
    device_spec tagged ``managed: no``, as NVIDIA vGPU VFs are: they stay on their driver).

    ``pinned_cpus``: host CPUs of a ``hw:cpu_policy=dedicated`` guest, one per vCPU
    (``<cputune><vcpupin>``, as nova writes them); otherwise the guest floats."""
    lines = [
        "<domain type='kvm'>",
        '  <name>%s</name>' % escape(name),
        '  <uuid>%s</uuid>' % escape(uuid),
        '  <metadata>',
        '    <nova:instance xmlns:nova="http://openstack.org/xmlns/libvirt/nova/1.1">',
        '      <nova:name>%s</nova:name>' % escape(name),
        '    </nova:instance>',
        '  </metadata>',
        "  <memory unit='KiB'>4194304</memory>",
        "  <vcpu placement='static'>%d</vcpu>" % (len(pinned_cpus) if pinned_cpus else 2),
    ]
    if pinned_cpus:
        lines.append('  <cputune>')
        lines += ["    <vcpupin vcpu='%d' cpuset='%d'/>" % (i, c) for i, c in enumerate(pinned_cpus)]
        lines += ["    <emulatorpin cpuset='%s'/>" % ','.join(str(c) for c in pinned_cpus), '  </cputune>']
    lines += [
        "  <os><type arch='x86_64' machine='q35'>hvm</type></os>",
        '  <devices>',
        "    <disk type='file' device='disk'>",
        "      <driver name='qemu' type='qcow2' cache='none'/>",
        "      <source file=%s/>" % quoteattr('/var/lib/nova/instances/%s/disk' % uuid),
        "      <target dev='vda' bus='virtio'/>",
        '    </disk>',
    ]
    for mdev in mdevs:
        lines += [
            "    <hostdev mode='subsystem' type='mdev' managed='no' model='vfio-pci'>",
            '      <source>',
            "        <address uuid=%s/>" % quoteattr(mdev),
            '      </source>',
            '    </hostdev>',
        ]
    for address in pci:
        lines += [
            "    <hostdev mode='subsystem' type='pci' managed='yes'>",
            '      <source>',
            '        %s' % _pci_address_xml(address),
            '      </source>',
            '    </hostdev>',
        ]
    for address in vfs:
        if vf_as == 'hostdev':
            lines += [
                "    <hostdev mode='subsystem' type='pci' managed=%s>" % quoteattr(managed),
                '      <source>',
                '        %s' % _pci_address_xml(address),
                '      </source>',
                '    </hostdev>',
            ]
        else:
            lines += [
                "    <interface type='hostdev' managed='yes'>",
                "      <mac address='fa:16:3e:00:00:01'/>",
                '      <source>',
                '        %s' % _pci_address_xml(address, with_type=True),
                '      </source>',
                '    </interface>',
            ]
    lines += ['  </devices>']
    if mem_encryption:
        lines += ["  <launchSecurity type='sev'>", '    <cbitpos>47</cbitpos>',
                  '    <reducedPhysBits>1</reducedPhysBits>',
                  '    <policy>%s</policy>' % SEV_POLICY[mem_encryption], '  </launchSecurity>']
    lines += ['</domain>', '']
    return '\n'.join(lines)


# ---------------------------------------------------------------------------
# presets

DEFAULT_NUMA = [
    {'id': 0, 'cpus': '0-15,32-47', 'memory_mb': 64266},
    {'id': 1, 'cpus': '16-31,48-63', 'memory_mb': 64498},
]


def default_gpu_host(name='compute-01', spare_mdevs=0, mdev_type=T4_2Q, type_name='GRID T4-2Q',
                     max_instances=8, numa=True):
    """Spec of a typical vGPU node.

    Two T4 GPUs (NUMA 0 and 1) with mdevs held by three instances:
    instance-00000001 has 2 mdevs on GPU A, instance-00000002 one on each GPU,
    instance-00000003 one on GPU B.  ``spare_mdevs`` unheld mdevs are added on
    GPU A (nova leaves them behind when a guest is deleted).
    """
    gpu_a, gpu_b = '0000:84:00.0', '0000:85:00.0'
    types = {mdev_type: {'name': type_name, 'max_instances': max_instances,
                         'device_api': 'vfio-pci', 'description': 'num_heads=4, frl_config=60'}}
    return {
        'hostname': name,
        'gpus': [
            {'address': gpu_a, 'numa_node': 0, 'mdev_types': types,
             'mdevs': ([{'type': mdev_type, 'holder': 'instance-00000001'},
                        {'type': mdev_type, 'holder': 'instance-00000001'},
                        {'type': mdev_type, 'holder': 'instance-00000002'}]
                       + [{'type': mdev_type, 'holder': None} for _i in range(spare_mdevs)])},
            {'address': gpu_b, 'numa_node': 1, 'mdev_types': types,
             'mdevs': [{'type': mdev_type, 'holder': 'instance-00000002'},
                       {'type': mdev_type, 'holder': 'instance-00000003'}]},
        ],
        'numa_cells': [dict(c) for c in DEFAULT_NUMA] if numa else [],
        'instances': [{'name': 'instance-00000001'}, {'name': 'instance-00000002'},
                      {'name': 'instance-00000003'}],
        'nova_conf': {'devices': {'enabled_mdev_types': mdev_type}},
    }


def multi_type_gpu_host(name='compute-01', numa=True):
    """Spec of a vGPU node with two mdev types (nova's [mdev_<type>] groups).

    Three T4 GPUs that each support nvidia-222 (2Q, 8 per GPU) and nvidia-223
    (4Q, 4 per GPU).  nova.conf enables both: nvidia-222 is the default type
    (no device_addresses: GPU A), nvidia-223 is pinned to GPUs B and C with
    ``mdev_class = CUSTOM_T4_4Q`` and ``max_instances = 5``, so GPU C (4 more on
    top of B's 1 + 3) gets no inventory at all, as nova decides.
    """
    gpu_a, gpu_b, gpu_c = '0000:84:00.0', '0000:85:00.0', '0000:86:00.0'
    types = {T4_2Q: {'name': 'GRID T4-2Q', 'max_instances': 8, 'device_api': 'vfio-pci'},
             'nvidia-223': {'name': 'GRID T4-4Q', 'max_instances': 4, 'device_api': 'vfio-pci'}}
    return {
        'hostname': name,
        'gpus': [
            {'address': gpu_a, 'numa_node': 0, 'mdev_types': types,
             'mdevs': [{'type': T4_2Q, 'holder': 'instance-00000021'},
                       {'type': T4_2Q, 'holder': 'instance-00000022'}]},
            {'address': gpu_b, 'numa_node': 1, 'mdev_types': types,
             'mdevs': [{'type': 'nvidia-223', 'holder': 'instance-00000022'}]},
            {'address': gpu_c, 'numa_node': 1, 'mdev_types': types, 'mdevs': []},
        ],
        'numa_cells': [dict(c) for c in DEFAULT_NUMA] if numa else [],
        'instances': [{'name': 'instance-00000021'}, {'name': 'instance-00000022'}],
        'nova_conf': {
            'devices': {'enabled_mdev_types': '%s,nvidia-223' % T4_2Q},
            'mdev_nvidia-223': {'device_addresses': '%s,%s' % (gpu_b, gpu_c),
                                'mdev_class': 'CUSTOM_T4_4Q', 'max_instances': 5},
        },
    }


def default_sriov_host(name='compute-01', numa=True, report_in_placement=True):
    """Spec of a typical SR-IOV node: one X710 PF with 4 of 8 VFs enabled, two held,
    plus one passthrough A2 GPU (PCI in placement) held by a third instance.

    Its nova.conf lists the VFs and the A2 in ``[pci]device_spec`` and (by default)
    turns ``[pci]report_in_placement`` on, so nova 34 tracks them in Placement."""
    return {
        'hostname': name,
        'sriov_pfs': [
            {'address': '0000:81:00.0', 'vendor_id': '8086', 'product_id': '1572', 'vf_product_id': '154c',
             'numa_node': 1, 'total_vfs': 8, 'num_vfs': 4,
             'vf_holders': {0: 'instance-00000011', 1: 'instance-00000012'}},
        ],
        'pci_devices': [
            {'address': '0000:3b:00.0', 'vendor_id': '10de', 'product_id': '25b6', 'class_id': '030200',
             'numa_node': 0, 'holder': 'instance-00000013'},
        ],
        'numa_cells': [dict(c) for c in DEFAULT_NUMA] if numa else [],
        'instances': [{'name': 'instance-00000011'}, {'name': 'instance-00000012'},
                      {'name': 'instance-00000013'}],
        'nova_conf': {'pci': {
            'report_in_placement': report_in_placement,
            'device_spec': ['{"vendor_id": "8086", "product_id": "154c"}',
                            '{"vendor_id": "10de", "product_id": "25b6"}'],
            'alias': ['{"name": "a2", "vendor_id": "10de", "product_id": "25b6", '
                      '"device_type": "type-PCI"}'],
        }},
    }


L4_VENDOR, L4_PRODUCT = '10de', '27b8'
L4_6Q, L4_12Q = 1152, 1153


def nvidia_vfio_host(name='compute-01', numa=True):
    """Spec of an NVIDIA vGPU node of the vendor-specific VFIO framework (driver R580+ on
    Linux 6.8+: no mdev; a vGPU is a VF whose ``nvidia/current_vgpu_type`` is written).

    Two L4 GPUs (10de:27b8, class 030200), 8 VFs enabled on each from function 4 on, as
    NVIDIA lays them out.  GPU A (0000:41:00.0, NUMA 0): three VFs of type L4-6Q, the first
    held by instance-00000061; GPU B (0000:42:00.0, NUMA 1): one VF of type L4-12Q, held by
    instance-00000062; every other VF has no type and lists the one type its GPU can still
    create (a GPU runs one type at a time).  The type ids and the L4's VF product id (27b8)
    are the fake's.  nova.conf (as nova documents this
    framework) selects the typed VFs by address in ``[pci]device_spec`` with a
    ``resource_class`` per vGPU type, ``managed: no`` (the VF stays on NVIDIA's driver) and
    ``live_migratable``, and turns on ``[pci]report_in_placement``; the guests hold their VF
    by ``<hostdev type='pci' managed='no'>``."""
    gpu_a, gpu_b = '0000:41:00.0', '0000:42:00.0'
    vfs_a = default_vgpu_vf_addresses(gpu_a, 8)
    vfs_b = default_vgpu_vf_addresses(gpu_b, 8)
    types = {L4_6Q: 'NVIDIA L4-6Q', L4_12Q: 'NVIDIA L4-12Q'}
    specs = (['{"address": "%s", "resource_class": "CUSTOM_NVIDIA_L4_6Q", "managed": "no", '
              '"live_migratable": "yes"}' % a for a in vfs_a[:3]]
             + ['{"address": "%s", "resource_class": "CUSTOM_NVIDIA_L4_12Q", "managed": "no", '
                '"live_migratable": "yes"}' % a for a in vfs_b[:1]])
    return {
        'hostname': name,
        'sriov_pfs': [
            {'address': gpu_a, 'vendor_id': L4_VENDOR, 'product_id': L4_PRODUCT, 'vf_product_id': L4_PRODUCT,
             'class_id': '030200', 'numa_node': 0, 'total_vfs': 32, 'num_vfs': 8, 'vf_addresses': vfs_a,
             'vf_holders': {0: 'instance-00000061'},
             'nvidia_vgpu': {'types': types, 'vf_types': {0: L4_6Q, 1: L4_6Q, 2: L4_6Q},
                             'creatable': [L4_6Q], 'driver': 'nvidia'}},
            {'address': gpu_b, 'vendor_id': L4_VENDOR, 'product_id': L4_PRODUCT, 'vf_product_id': L4_PRODUCT,
             'class_id': '030200', 'numa_node': 1, 'total_vfs': 32, 'num_vfs': 8, 'vf_addresses': vfs_b,
             'vf_holders': {0: 'instance-00000062'},
             'nvidia_vgpu': {'types': types, 'vf_types': {0: L4_12Q},
                             'creatable': [L4_12Q], 'driver': 'nvidia'}},
        ],
        'numa_cells': [dict(c) for c in DEFAULT_NUMA] if numa else [],
        'instances': [{'name': 'instance-00000061', 'vf_as': 'hostdev', 'managed': 'no'},
                      {'name': 'instance-00000062', 'vf_as': 'hostdev', 'managed': 'no'},
                      {'name': 'instance-00000063'}],
        'nova_conf': {'pci': {'report_in_placement': True, 'device_spec': specs}},
    }


def default_vgpu_vf_addresses(pf_address, count):
    """VF addresses of an NVIDIA GPU: the PF's slot from function 4 on, then the next slots."""
    domain, bus, slot, _function = _parse_bdf(pf_address)
    return [_bdf(domain, bus, slot + (4 + i) // 8, (4 + i) % 8) for i in range(count)]


def default_plain_host(name='compute-01'):
    """Spec of a node without GPUs or SR-IOV: NUMA cells only."""
    return {'hostname': name, 'numa_cells': [dict(c) for c in DEFAULT_NUMA],
            'nova_conf': {'DEFAULT': {'reserved_host_memory_mb': 4096}}}


def default_sev_host(name='compute-01', sev_es=True):
    """Spec of an AMD SEV node before 2025.2: MEM_ENCRYPTION_CONTEXT still on the root.

    The kernel enables SEV (and SEV-ES unless ``sev_es=False``); libvirt reports 15 SEV
    guests and 494 SEV-ES guests.  Two guests run with memory encryption (policy 0x33,
    plain SEV: the only model nova had before 2025.2), one without.
    """
    return {
        'hostname': name,
        'numa_cells': [dict(c) for c in DEFAULT_NUMA],
        'sev': {'kernel': {'sev': True, 'sev_es': sev_es, 'sev_snp': False},
                'max_guests': 15, 'max_es_guests': 494 if sev_es else 0},
        'instances': [{'name': 'instance-00000031', 'mem_encryption': 'amd-sev'},
                      {'name': 'instance-00000032', 'mem_encryption': 'amd-sev'},
                      {'name': 'instance-00000033'}],
        'nova_conf': {'DEFAULT': {'reserved_host_memory_mb': 4096}},
    }


def default_tdx_host(name='compute-01'):
    """Spec of an Intel TDX node (nova 2025.2+ reports it on ``<node>_intel_tdx`` from the
    start, so nothing moves): libvirt shows ``<tdx supported='yes'/>``, the misc cgroup 63
    TDX guests, and nova.conf sets the host-passthrough CPU mode TDX needs."""
    return {
        'hostname': name,
        'numa_cells': [dict(c) for c in DEFAULT_NUMA],
        'tdx': {'misc_capacity': 63},
        'instances': [{'name': 'instance-00000051'}],
        'nova_conf': {'libvirt': {'cpu_mode': 'host-passthrough'}},
    }


def default_pinned_host(name='compute-01'):
    """Spec of a node before Train's PCPU: pinned guests consume VCPU on the root.

    8 host CPUs (two cells of 4), nova.conf of the new release dedicates 2-7 to pinned
    guests (``[compute]cpu_dedicated_set``) and shares 0-1 (``cpu_shared_set``).  Two
    guests are pinned (vcpupin to 2,3 and to 4,5), one floats.
    """
    return {
        'hostname': name,
        'numa_cells': [{'id': 0, 'cpus': '0-3', 'memory_mb': 8192},
                       {'id': 1, 'cpus': '4-7', 'memory_mb': 8192}],
        'instances': [{'name': 'instance-00000041', 'pinned_cpus': [2, 3]},
                      {'name': 'instance-00000042', 'pinned_cpus': [4, 5]},
                      {'name': 'instance-00000043'}],
        'nova_conf': {'compute': {'cpu_dedicated_set': '2-7', 'cpu_shared_set': '0-1'}},
    }


def mixed_host(name='compute-01'):
    """Spec of a node that needs every start-up reshape at once: vGPU children, PCI in
    Placement (healing), AMD SEV (with SEV-ES) and VCPU -> PCPU.  8 host CPUs as in
    :func:`default_pinned_host`; instance-00000001 (2 mdevs) is also pinned to CPUs 2-3,
    instance-00000002 (mdevs on both GPUs) also runs with SEV."""
    spec = default_gpu_host(name=name)
    sriov = default_sriov_host(name=name)
    pinned = default_pinned_host(name=name)
    sev = default_sev_host(name=name)
    spec['numa_cells'] = pinned['numa_cells']
    spec['sriov_pfs'] = sriov['sriov_pfs']
    spec['pci_devices'] = sriov['pci_devices']
    spec['sev'] = sev['sev']
    spec['instances'] = ([{'name': 'instance-00000001', 'pinned_cpus': [2, 3]},
                          {'name': 'instance-00000002', 'mem_encryption': 'amd-sev'},
                          {'name': 'instance-00000003'}]
                         + sriov['instances'])
    spec['nova_conf'] = dict(spec['nova_conf'])
    spec['nova_conf'].update(sriov['nova_conf'])
    spec['nova_conf'].update(pinned['nova_conf'])
    return spec


PRESETS = {'gpu': default_gpu_host, 'sev': default_sev_host, 'pinned': default_pinned_host,
           'tdx': default_tdx_host,
           'mixed': mixed_host, 'sriov': default_sriov_host, 'plain': default_plain_host,
           'multi-type': multi_type_gpu_host, 'nvidia-vfio': nvidia_vfio_host}


def main(argv=None):
    parser = argparse.ArgumentParser(description='Build a fake compute node (sysfs + libvirt XML).')
    parser.add_argument('root', help='directory to build the host in (gets sys/ and etc/)')
    parser.add_argument('--preset', choices=sorted(PRESETS), default='gpu')
    parser.add_argument('--hostname', default='compute-01')
    parser.add_argument('--clean', action='store_true', help='replace an existing fake tree')
    args = parser.parse_args(argv)
    try:
        result = build_host(args.root, PRESETS[args.preset](args.hostname), clean=args.clean)
    except (ValueError, OSError) as exc:
        parser.exit(2, 'fakehost: %s\n' % exc)
    json.dump(result, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write('\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
