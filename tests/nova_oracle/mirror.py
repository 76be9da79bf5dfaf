# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mirror a fake host of ``tools/fakehost.py`` into nova's fakelibvirt.

The fake host (sysfs tree + domain XML + nova.conf) is what our discovery reads;
this module gives nova 34's libvirt driver the SAME host through nova's own test
fixture (``nova.tests.fixtures.libvirt``):

* every GPU becomes a node device with the spec's vendor/product and an
  ``mdev_types`` capability listing the spec's types with the same
  ``availableInstances`` the sysfs tree shows;
* every mdev of the tree (uuid, type, parent) becomes a libvirt mdev device;
* every SR-IOV PF and VF, and every plain PCI device, becomes a node device with
  the spec's address, vendor/product, NUMA node and PF/VF capabilities (an NVIDIA vGPU
  GPU of the vendor-specific VFIO framework is such a PF: its vGPUs are its VFs; nova reads
  nothing of their ``nvidia/`` files);
* nova's sysfs check of a device_spec naming one address (is it a PF?) reads the tree;
* the domain XML files of the tree are defined as libvirt domains;
* nova.conf is the tree's own file, parsed by oslo.config into nova's CONF.

Only the translation of the host lives here; every decision (inventory, names,
traits, reshape, refusal) is left to nova's code.
"""

import glob
import os

from oslo_config import cfg

from nova.tests.fixtures import libvirt as fakelibvirt


def _bdf(address):
    _domain, bus, rest = address.split(':')
    slot, function = rest.split('.')
    return int(bus, 16), int(slot, 16), int(function, 16)


def _addr_xml(address):
    bus, slot, function = _bdf(address)
    return ("<address domain='0x0000' bus='%#04x' slot='%#04x' function='%#x'/>"
            % (bus, slot, function))


class SpecPCIDevice(fakelibvirt.FakePCIDevice):
    """A fakelibvirt PCI node device whose capability comes from our spec."""

    def __init__(self, dev_type, address, numa_node, vend_id, prod_id, capability,
                 parent=None, mdev_capable=False):
        self._spec_capability = capability
        self._mdev_capable = mdev_capable
        bus, slot, function = _bdf(address)
        super().__init__(
            dev_type=dev_type, bus=bus, slot=slot, function=function,
            iommu_group=40 + (bus << 8 | slot << 3 | function) % 1000,
            numa_node=numa_node,
            vf_ratio=1 if dev_type in ('PF', 'VF') else None,
            parent=_bdf(parent) if parent else None,
            vend_id=vend_id, prod_id=prod_id)

    def generate_xml(self, skip_capability=False):
        super().generate_xml(skip_capability=True)
        if self._spec_capability:
            self.pci_device = self.pci_device.replace(
                '<iommuGroup', self._spec_capability + '\n    <iommuGroup', 1)
        self.is_capable_of_mdevs = self._mdev_capable


def _mdev_types_xml(gpu, built_mdevs):
    types = gpu.get('mdev_types') or {'nvidia-222': {'name': 'GRID T4-2Q', 'max_instances': 8}}
    parts = []
    for type_name in sorted(types):
        info = types[type_name]
        if 'available_instances' in info:
            available = int(info['available_instances'])
        else:
            used = len([m for m in built_mdevs.values()
                        if m['gpu'] == gpu['address'] and m['type'] == type_name])
            available = max(int(info.get('max_instances', 8)) - used, 0)
        parts.append("<type id='%s'><name>%s</name><deviceAPI>%s</deviceAPI>"
                     "<availableInstances>%d</availableInstances></type>"
                     % (type_name, info.get('name') or type_name,
                        info.get('device_api', 'vfio-pci'), available))
    return "<capability type='mdev_types'>%s</capability>" % ''.join(parts)


def _vf_addresses(pf):
    import fakehost  # tools/ is on sys.path (tests/conftest.py)
    num = int(pf.get('num_vfs', 4))
    addresses = pf.get('vf_addresses') or fakehost.default_vf_addresses(pf['address'], num)
    return addresses[:num]


def pci_info(spec, built):
    """The fakelibvirt ``HostPCIDevicesInfo`` of the fake host ``spec``."""
    info = fakelibvirt.HostPCIDevicesInfo(num_pci=0, num_pfs=0, num_vfs=0, num_mdevcap=0)
    info.devices = {}

    def add(dev):
        info.devices[fakelibvirt._get_libvirt_nodedev_name(dev.bus, dev.slot, dev.function)] = dev

    for gpu in spec.get('gpus', []):
        add(SpecPCIDevice('MDEV_TYPES', gpu['address'], gpu.get('numa_node', -1),
                          gpu.get('vendor_id', '10de'), gpu.get('product_id', '1eb8'),
                          _mdev_types_xml(gpu, built['mdevs']), mdev_capable=True))
    for pf in spec.get('sriov_pfs', []):
        vfs = _vf_addresses(pf)
        add(SpecPCIDevice(
            'PF', pf['address'], pf.get('numa_node', -1), pf.get('vendor_id', '8086'),
            pf.get('product_id', '1572'),
            "<capability type='virt_functions' maxCount='%d'>%s</capability>"
            % (int(pf.get('total_vfs', 8)), ''.join(_addr_xml(a) for a in vfs))))
        for vf in vfs:
            add(SpecPCIDevice(
                'VF', vf, pf.get('numa_node', -1), pf.get('vendor_id', '8086'),
                pf.get('vf_product_id', '154c'),
                "<capability type='phys_function'>%s</capability>" % _addr_xml(pf['address']),
                parent=pf['address']))
    for dev in spec.get('pci_devices', []):
        add(SpecPCIDevice('PCI', dev['address'], dev.get('numa_node', -1),
                          dev.get('vendor_id', '10de'), dev.get('product_id', '20b5'), ''))
    return info


def is_physical_function(built):
    """nova's ``nova.pci.utils.is_physical_function`` reading the fake tree instead of ``/sys``.

    nova calls it for a ``[pci]device_spec`` naming ONE address (devspec.py
    ``WhitelistPciAddress._check_physical_function``): the same test as nova's, on
    ``<tree>/sys/bus/pci/devices/<address>/sriov_totalvfs``.
    """
    root = built['sysfs_root']

    def check(domain, bus, slot, function):
        dev_path = os.path.join(root, 'bus', 'pci', 'devices', '%s:%s:%s.%s' % (domain, bus, slot, function))
        if os.path.isdir(dev_path):
            try:
                with open(os.path.join(dev_path, 'sriov_totalvfs')) as fd:
                    return int(fd.read()) > 0
            except (IOError, ValueError):
                pass
        return False
    return check


def mdev_info(built):
    """The fakelibvirt ``HostMdevDevicesInfo``: every mdev of the tree, held or not."""
    devices = {}
    for uuid, mdev in built['mdevs'].items():
        name = 'mdev_' + uuid.replace('-', '_')
        devices[name] = fakelibvirt.FakeMdevDevice(
            dev_name=name, type_id=mdev['type'],
            parent='pci_' + mdev['gpu'].replace(':', '_').replace('.', '_'))
    return fakelibvirt.HostMdevDevicesInfo(devices=devices)


def define_domains(connection, built):
    """Define the tree's domain XML files as (running) libvirt domains."""
    names = []
    for path in sorted(glob.glob(built['domain_xml_glob'])):
        with open(path) as handle:
            dom = connection.defineXML(handle.read())
        dom.create()
        names.append(dom.name())
    return names


def domain_capability_features(built):
    """The ``<features>`` element of the tree's domcapabilities.xml, for fakelibvirt's
    ``virConnect._domain_capability_features`` (None when the host has none)."""
    path = built.get('domain_capabilities')
    if not path:
        return None
    with open(path) as handle:
        text = handle.read()
    start, end = text.index('  <features>'), text.index('</features>') + len('</features>')
    return text[start:end]


def kernel_sev_flags(spec):
    """The kvm_amd parameters the tree shows, as nova's AmdSevFixture takes them."""
    kernel = (spec.get('sev') or {}).get('kernel') or {}
    return {'sev': bool(kernel.get('sev', bool(spec.get('sev')))),
            'sev_es': bool(kernel.get('sev_es')), 'sev_snp': bool(kernel.get('sev_snp'))}


def load_nova_conf(conf, built):
    """Parse the tree's nova.conf (and nova.conf.d) into nova's CONF, as oslo.config
    does for ``--config-file`` / ``--config-dir``."""
    paths = []
    if built.get('nova_conf') and os.path.exists(built['nova_conf']):
        paths.append(built['nova_conf'])
        paths += sorted(glob.glob(built['nova_conf'] + '.d/*.conf'))
    for path in paths:
        cfg.ConfigParser._parse_file(path, conf._namespace)
    conf._ConfigOpts__cache.clear()
    return paths
