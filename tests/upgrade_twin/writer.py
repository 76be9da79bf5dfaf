# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The upgrade twin's WRITER: the OLD nova release writes an operator's state (issue 29, step 1).

Run by the old release's own python (``.venv-nova31/bin/python`` or ``.venv-nova33/bin/python``),
never imported by the judge::

    .venv-nova31/bin/python tests/upgrade_twin/writer.py --kind vgpu --out DIR

1. Bootstraps a deployment's databases in DIR with the release's OWN command-line tools:
   ``placement-manage db sync``, ``nova-manage api_db sync``, ``cell_v2 map_cell0``,
   ``db sync``, ``cell_v2 create_cell`` (the cells' URLs are relative SQLite paths, so a copy
   of DIR is the same deployment: every process runs with DIR as its working directory).
2. Runs the release's functional harness on those FILES (tests/upgrade_twin/filedb.py): its
   real API, conductor, scheduler, Placement and a nova-compute on the libvirt driver over
   fakelibvirt, and boots guests THROUGH NOVA'S API with the operator's flavors.
3. Writes the fakelibvirt host description (``host.json``: a tools/fakehost.py spec of the
   devices, mdevs and guests exactly as nova created them), nova's own domain XML
   (``domains/<instance name>.xml``) and ``state.json`` (release, compute node, servers).

Kinds: ``vgpu`` (two pGPUs with nvidia-11, flavors ``resources:VGPU=1`` and ``=2``); ``pci`` (two
type-PCI devices 8086:1533 in ``[pci]device_spec``, alias ``a1``, ``report_in_placement`` off,
one guest with ``pci_passthrough:alias=a1:1`` and one without); ``sev`` (kvm_amd sev=1, libvirt
maxGuests 100, two guests from a ``hw_mem_encryption`` image, one plain); ``pcpu`` (legacy
``vcpu_pin_set = 0-7``, two ``hw:cpu_policy=dedicated`` guests); ``pcpu-migrating`` (``pcpu`` with
the second guest cold-migrated to a second host and left in VERIFY_RESIZE); ``mixed`` (one host
with the ``pci`` and ``pcpu`` kinds at once: ``vcpu_pin_set = 0-7``, the two type-PCI devices,
``report_in_placement`` off, one pinned guest holding a device and one pinned guest without).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import unittest
import xml.etree.ElementTree as ET

HOST = 'twin-%s'
NOVA_CONF = """[DEFAULT]
transport_url = fake://nowhere/
[api_database]
connection = sqlite:///nova_api.db
[database]
connection = sqlite:///nova_cell1.db
"""
PLACEMENT_CONF = """[placement_database]
connection = sqlite:///placement.db
[api]
auth_strategy = noauth2
"""
CELL0_URL = 'sqlite:///nova_cell0.db'


def run(out, argv):
    """One of the release's CLIs, in DIR; its output goes to DIR/bootstrap.log."""
    with open(os.path.join(out, 'bootstrap.log'), 'a') as log:
        log.write('$ %s\n' % ' '.join(argv))
        log.flush()
        subprocess.run(argv, cwd=out, stdout=log, stderr=subprocess.STDOUT, check=True)


def bootstrap(out):
    bindir = os.path.dirname(sys.executable)
    with open(os.path.join(out, 'nova.conf'), 'w') as handle:
        handle.write(NOVA_CONF)
    with open(os.path.join(out, 'placement.conf'), 'w') as handle:
        handle.write(PLACEMENT_CONF)
    nova_manage = [os.path.join(bindir, 'nova-manage'), '--config-file', 'nova.conf']
    run(out, [os.path.join(bindir, 'placement-manage'), '--config-file', 'placement.conf', 'db', 'sync'])
    run(out, nova_manage + ['api_db', 'sync'])
    run(out, nova_manage + ['cell_v2', 'map_cell0', '--database_connection', CELL0_URL])
    run(out, nova_manage + ['db', 'sync'])
    run(out, nova_manage + ['cell_v2', 'create_cell', '--name', 'cell1'])


def _pci_facts(connection, dev_name):
    """(address, vendor id, product id, NUMA node) of a libvirt PCI node device, from its XML."""
    root = ET.fromstring(connection.nodeDeviceLookupByName(dev_name).XMLDesc(0))
    cap = root.find('./capability')
    address = '%04x:%02x:%02x.%x' % tuple(int(cap.find(field).text, 0) for field in ('domain', 'bus', 'slot', 'function'))
    node = cap.find('./numa')
    return (address, cap.find('./vendor').get('id')[2:].lower(), cap.find('./product').get('id')[2:].lower(),
            int(node.get('node')) if node is not None else -1)


def make_case(kind, out):
    """The writer test case, built after bootstrap (importing nova monkey-patches eventlet)."""
    import nova.tests.functional  # noqa: F401  (nova.monkey_patch first)
    from nova import version as nova_version
    from nova.tests.fixtures import libvirt as fakelibvirt
    from oslo_serialization import jsonutils
    from nova.tests.functional.libvirt import base as libvirt_base
    from nova.tests.functional.libvirt import test_numa_servers
    from nova.tests.functional.libvirt import test_pci_sriov_servers
    from nova.tests.functional.libvirt import test_vgpu

    import filedb

    # nova's own test bases for the kind: their fakes (mdev creation, PCI filter) and config
    base = {'vgpu': test_vgpu.VGPUTestBase, 'pci': test_pci_sriov_servers._PCIServersTestBase,
            'sev': libvirt_base.ServersTestBase, 'pcpu': test_numa_servers.NUMAServersTestBase,
            'pcpu-migrating': test_numa_servers.NUMAServersTestBase}.get(kind)
    if kind == 'mixed':
        # the fakes of both of nova's bases (PCI filter, NUMA filter; both extend
        # ServersTestBase, whose setUp runs once through the MRO)
        class MixedTestBase(test_pci_sriov_servers._PCIServersTestBase, test_numa_servers.NUMAServersTestBase):
            pass
        base = MixedTestBase
    pci_spec = {'vendor_id': fakelibvirt.PCI_VEND_ID, 'product_id': fakelibvirt.PCI_PROD_ID}

    class Writer(filedb.FileDatabasesMixin, base):
        db_urls = {'api': 'sqlite:///nova_api.db', 'placement': 'sqlite:///placement.db'}
        # the PCI kind: one passthrough device type (nova's PCIServersTest's), alias a1;
        # [pci]report_in_placement stays at its default, False, as in every release up to 34
        PCI_DEVICE_SPEC = [jsonutils.dumps(pci_spec)]
        PCI_ALIAS = [jsonutils.dumps(dict(pci_spec, name='a1', device_type='type-PCI'))]

        def setUp(self):
            # the harness' cleanup "kills" every service, which DELETES its service record (a
            # test-only method); a deployment's services stop for the upgrade and keep it
            import fixtures
            self.useFixture(fixtures.MonkeyPatch('nova.service.Service.kill', lambda service: service.stop()))
            super().setUp()

        def _clear_attrs(self):
            pass

        def _lower_available_instances(self, dev_name, mdev_type):
            """What the kernel does and fakelibvirt does not when an mdev is created: the parent's
            ``available_instances`` of that type drops by one (fakelibvirt keeps 16, which would
            make nova report 16 + the mdevs created as the pGPU's total)."""
            dev = self.computes[self._current_host].driver._host.get_connection().pci_info.devices[dev_name]
            pattern = r"(<type id='%s'>.*?<availableInstances>)(\d+)" % re.escape(mdev_type)
            dev.pci_device = re.sub(pattern, lambda m: m.group(1) + str(int(m.group(2)) - 1), dev.pci_device,
                                    count=1, flags=re.S)

        def _boot(self, flavor, count):
            servers = []
            for _index in range(count):
                servers.append(self._create_server(
                    image_uuid='155d900f-4e14-4e4c-a73d-069cbf4541e6', flavor_id=flavor,
                    host=self.hostname, networks='none', expected_state='ACTIVE'))
            return servers

        def test_write(self):
            getattr(self, 'write_' + kind.replace('-', '_'))()
            # the resource tracker's periodic pass, as a running nova made it before the upgrade
            if kind != 'sev':   # (write_sev runs it with its kernel fakes in place)
                self._run_periodics(raise_on_error=True)
            self.describe()

        def write_vgpu(self):
            self.hostname = HOST % kind
            self.flags(enabled_mdev_types=fakelibvirt.NVIDIA_11_VGPU_TYPE, group='devices')
            self.nova_conf = {'devices': {'enabled_mdev_types': fakelibvirt.NVIDIA_11_VGPU_TYPE}}
            self.compute = self.start_compute_with_vgpu(self.hostname)
            one = self._create_flavor(name='vgpu.1', extra_spec={'resources:VGPU': '1'})
            two = self._create_flavor(name='vgpu.2', extra_spec={'resources:VGPU': '2'})
            self.servers = self._boot(one, 2) + self._boot(two, 1)

        def write_pci(self):
            self.hostname = HOST % kind
            self.nova_conf = {'pci': {'device_spec': self.PCI_DEVICE_SPEC, 'alias': self.PCI_ALIAS}}
            pci_info = fakelibvirt.HostPCIDevicesInfo(num_pci=2, num_pfs=0, num_vfs=0, numa_node=0)
            self.start_compute(hostname=self.hostname, pci_info=pci_info)
            self.compute = self.computes[self.hostname]
            passthrough = self._create_flavor(name='pci.1', extra_spec={'pci_passthrough:alias': 'a1:1'})
            plain = self._create_flavor(name='plain')
            self.servers = self._boot(passthrough, 1) + self._boot(plain, 1)

        def write_sev(self):
            """An AMD SEV host as nova's own SEV tests make it (test_bug_1928063): the kernel's
            kvm_amd ``sev`` = 1, libvirt's domain capabilities with SEV (maxGuests 100,
            maxESGuests 15), two guests from an image with ``hw_mem_encryption`` (UEFI, q35)."""
            import copy
            import fixtures
            from nova import test as nova_test
            from nova.virt.libvirt import host as libvirt_host
            self.hostname = HOST % kind
            self.nova_conf = {}
            kernel = libvirt_host.SEV_KERNEL_PARAM_FILE
            if '%s' in kernel:   # nova 33 names the parameter file per model (kvm_amd/parameters/<model>)
                kernel = kernel % 'sev'
            self.useFixture(fixtures.MonkeyPatch(
                'nova.tests.fixtures.libvirt.virConnect._domain_capability_features',
                fakelibvirt.virConnect._domain_capability_features_with_SEV_max_guests))
            with nova_test.patch_exists(kernel, True), nova_test.patch_open(kernel, "1\n"):
                self.start_compute(hostname=self.hostname)
                self.compute = self.computes[self.hostname]
                image = copy.deepcopy(self.glance.image1)
                image['id'] = 'a5e1c0de-5e00-4000-8000-000000000029'
                image['properties'].update({'hw_firmware_type': 'uefi', 'hw_machine_type': 'q35',
                                            'hw_mem_encryption': 'True'})
                self.glance.create(None, image)
                plain = self._create_flavor(name='plain')
                self.servers = [self._create_server(image_uuid=image['id'], flavor_id=plain, host=self.hostname,
                                                    networks='none', expected_state='ACTIVE') for _i in range(2)]
                self.servers += self._boot(plain, 1)
                self._run_periodics(raise_on_error=True)
            self.sev_spec = {'kernel': {'sev': True, 'sev_es': False, 'sev_snp': False},
                             'max_guests': 100, 'max_es_guests': 15}

        def write_pcpu(self):
            """Pinned guests on a host still on the legacy ``vcpu_pin_set`` (nova's own
            ReshapeForPCPUsTest): nova reports VCPU only, and a ``hw:cpu_policy=dedicated``
            guest falls back to VCPU (``[workarounds]disable_fallback_pcpu_query`` False)."""
            self.hostname = HOST % kind
            self.flags(cpu_dedicated_set=None, cpu_shared_set=None, group='compute')
            self.flags(vcpu_pin_set='0-7')
            self.nova_conf = {'DEFAULT': {'vcpu_pin_set': '0-7'}}
            self.start_compute(hostname=self.hostname)
            self.compute = self.computes[self.hostname]
            pinned = self._create_flavor(name='pinned', extra_spec={'hw:cpu_policy': 'dedicated'})
            self.servers = self._boot(pinned, 2)

        def write_pcpu_migrating(self):
            """The PCPU host of ``write_pcpu`` with a cold migration in flight, as nova's own
            ReshapeForPCPUsTest leaves it: a second host, the second guest migrated there and left
            in VERIFY_RESIZE (unconfirmed): its migration record holds its VCPU on this host."""
            from unittest import mock
            self.write_pcpu()
            self.start_compute(hostname=self.hostname + '-dst')
            with mock.patch('nova.virt.libvirt.driver.LibvirtDriver.migrate_disk_and_power_off',
                            return_value='{}'):
                self.admin_api.post_server_action(self.servers[1]['id'], {'migrate': None})
            self._wait_for_state_change(self.servers[1], 'VERIFY_RESIZE')

        def write_mixed(self):
            """One host carrying two kinds the upgrade moves at once: pinned guests on the legacy
            ``vcpu_pin_set`` (``write_pcpu``) and type-PCI passthrough with
            ``report_in_placement`` off (``write_pci``).  The first guest is pinned AND holds a
            device (its VCPU becomes PCPU and its device allocation is healed in the same move),
            the second is pinned only."""
            self.hostname = HOST % kind
            self.flags(cpu_dedicated_set=None, cpu_shared_set=None, group='compute')
            self.flags(vcpu_pin_set='0-7')
            self.nova_conf = {'DEFAULT': {'vcpu_pin_set': '0-7'},
                              'pci': {'device_spec': self.PCI_DEVICE_SPEC, 'alias': self.PCI_ALIAS}}
            pci_info = fakelibvirt.HostPCIDevicesInfo(num_pci=2, num_pfs=0, num_vfs=0, numa_node=0)
            self.start_compute(hostname=self.hostname, pci_info=pci_info)
            self.compute = self.computes[self.hostname]
            pinned_pci = self._create_flavor(name='pinned.pci', extra_spec={'hw:cpu_policy': 'dedicated',
                                                                            'pci_passthrough:alias': 'a1:1'})
            pinned = self._create_flavor(name='pinned', extra_spec={'hw:cpu_policy': 'dedicated'})
            self.servers = self._boot(pinned_pci, 1) + self._boot(pinned, 1)

        def describe_numa(self, connection):
            """The host's NUMA cells (cpus, memory) from libvirt's capabilities, as sysfs shows them."""
            root = ET.fromstring(connection.getCapabilities())
            cells = []
            for cell in root.findall('./host/topology/cells/cell'):
                memory = cell.find('./memory')
                cells.append({'id': int(cell.get('id')), 'memory_mb': int(memory.text) // 1024,
                              'cpus': sorted(int(cpu.get('id')) for cpu in cell.findall('./cpus/cpu'))})
            return cells

        def describe(self):
            """host.json, domains/, state.json: the host exactly as nova left it."""
            driver = self.compute.driver
            connection = driver._host.get_connection()
            domains_dir = os.path.join(out, 'domains')
            os.makedirs(domains_dir)
            by_uuid = {}
            for dom in connection.listAllDomains(fakelibvirt.VIR_CONNECT_LIST_DOMAINS_ACTIVE):
                with open(os.path.join(domains_dir, dom.name() + '.xml'), 'w') as handle:
                    handle.write(dom.XMLDesc(0))
                by_uuid[dom.UUIDString()] = dom.name()
            spec = {'hostname': self.hostname, 'nova_conf': self.nova_conf,
                    'instances': [{'name': by_uuid[s['id']], 'uuid': s['id']} for s in self.servers]}
            if kind == 'vgpu':
                spec['gpus'] = self.describe_gpus(driver, connection, by_uuid)
            if kind in ('pci', 'mixed'):
                spec['pci_devices'] = self.describe_pci(connection, domains_dir)
            if kind in ('pcpu', 'pcpu-migrating', 'mixed'):
                spec['numa_cells'] = self.describe_numa(connection)
            if kind == 'sev':
                spec['sev'] = self.sev_spec
                for item in spec['instances']:
                    with open(os.path.join(domains_dir, item['name'] + '.xml')) as handle:
                        if "<launchSecurity type='sev'" in handle.read():
                            item['mem_encryption'] = 'amd-sev'
                # the host's NUMA cells, as the oracle's SEV hosts have them (discovery reads them)
                spec['numa_cells'] = []
            self.write_files(spec, driver, by_uuid)

        def describe_pci(self, connection, domains_dir):
            """Every type-PCI device of the host, and the guest whose domain XML holds it."""
            holders = {}
            for name in os.listdir(domains_dir):
                root = ET.parse(os.path.join(domains_dir, name)).getroot()
                for addr in root.findall("./devices/hostdev[@type='pci']/source/address"):
                    address = '%04x:%02x:%02x.%x' % tuple(int(addr.get(f), 0) for f in ('domain', 'bus', 'slot', 'function'))
                    holders[address] = name[:-len('.xml')]
            devices = []
            for dev_name in connection.listDevices('pci', 0):
                address, vendor, product, numa_node = _pci_facts(connection, dev_name)
                devices.append({'address': address, 'vendor_id': vendor, 'product_id': product,
                                'class_id': '020000', 'numa_node': numa_node, 'holder': holders.get(address)})
            return devices

        def describe_gpus(self, driver, connection, by_uuid):
            assigned = driver._get_all_assigned_mediated_devices()
            gpus = []
            for dev in driver._get_mdev_capable_devices():
                address, vendor, product, numa_node = _pci_facts(connection, dev['dev_id'])
                mdevs = [{'type': mdev['type'], 'uuid': mdev['uuid'],
                          'holder': by_uuid.get(assigned.get(mdev['uuid']))}
                         for mdev in driver._get_mediated_devices()
                         if mdev['parent'] == dev['dev_id']]
                gpus.append({
                    'address': address, 'vendor_id': vendor,
                    'product_id': product, 'numa_node': numa_node,
                    'mdev_types': {name: {'name': info['name'], 'device_api': info['deviceAPI'],
                                          'available_instances': int(info['availableInstances'])}
                                   for name, info in dev['types'].items()},
                    'mdevs': mdevs})
            return gpus

        def write_files(self, spec, driver, by_uuid):
            with open(os.path.join(out, 'host.json'), 'w') as handle:
                json.dump(spec, handle, indent=2, sort_keys=True)
            state = {'release': nova_version.version_string(), 'kind': kind, 'hostname': self.hostname,
                     'compute_node_uuid': self.compute_rp_uuids[self.hostname],
                     'local_gb': driver._get_local_gb_info(),
                     'servers': [{'id': s['id'], 'name': by_uuid[s['id']],
                                  'flavor': self.api.get_server(s['id'])['flavor']}
                                 for s in self.servers]}
            with open(os.path.join(out, 'state.json'), 'w') as handle:
                json.dump(state, handle, indent=2, sort_keys=True)

    if kind != 'vgpu':
        return Writer
    # nova 31 fakes libvirt >= 7.3's mdev creation in _create_mdev_7_3, nova 33 in _create_mdev
    name = '_create_mdev_7_3' if hasattr(test_vgpu.VGPUTestBase, '_create_mdev_7_3') else '_create_mdev'
    create = getattr(test_vgpu.VGPUTestBase, name)

    def create_and_count(self, dev_name, mdev_type, uuid=None):
        uuid = create(self, dev_name, mdev_type, uuid)
        self._lower_available_instances(dev_name, mdev_type)
        return uuid
    setattr(Writer, name, create_and_count)
    return Writer


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--kind', required=True, choices=['vgpu', 'pci', 'sev', 'pcpu', 'pcpu-migrating', 'mixed'])
    parser.add_argument('--out', required=True)
    args = parser.parse_args(argv)
    out = os.path.abspath(args.out)
    os.makedirs(out)
    bootstrap(out)
    os.chdir(out)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    case = make_case(args.kind, out)
    result = unittest.TextTestRunner(stream=sys.stderr, verbosity=2).run(case('test_write'))
    return 0 if result.wasSuccessful() else 1


if __name__ == '__main__':
    sys.exit(main())
