# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cloud twin's nova-compute: nova's own service on nova's fakelibvirt, in a plain process.

Run by a nova release's own python (the openstack-ansible shape: one venv per release)::

    .venv-nova33/bin/python tests/cloud_twin/compute.py --node DIR
    .venv-nova/bin/python   tests/cloud_twin/compute.py --node DIR

``DIR`` is a node directory of tests/cloud_twin/nodes.py (host.json, node.conf).  The launcher:

1. rebuilds the fake host from ``host.json`` with tools/fakehost.py (``DIR/host``: sysfs, the
   guests' domain XML, the node's nova.conf: what the collection's discovery reads);
2. applies in this process what nova's functional libvirt base applies
   (``nova/tests/functional/libvirt/base.py`` ``ServersTestBase.setUp``): ``LibvirtFixture``
   (libvirt -> fakelibvirt), ``LibvirtImageBackendFixture``, ``OSBrickFixture``, the mocks of
   ``_create_image`` (no disk; it makes the instance's directory, as nova's own does first: a
   resize renames it), ``_get_local_gb_info``, ``is_valid_hostname``, ``file_open``,
   ``supports_direct_io`` and ``get_online_cpus``, and ``Host.get_connection`` returning ONE
   fakelibvirt connection holding this node's hardware, mirrored from the spec by the nova
   oracle's tests/nova_oracle/mirror.py (GPUs with their mdev types, PCI devices, the mdevs and the
   guests' domains already there); for SEV, libvirt's domain capabilities and the kernel's
   kvm_amd parameters as nova 34's AmdSevFixture stubs them; nova's ``NeutronFixture`` (the guests have no
   ports; nova-compute's network calls go to nova's fake of neutron), ``GlanceFixture`` (no Glance:
   nova's test images, as tests/cloud_twin/control.py gives the control plane) and
   ``PrivsepNoHelperFixture`` (a privsep call fails loudly instead of starting a helper);
3. keeps the host up to date as nova changes it: a guest defined or undefined rewrites
   ``DIR/domains`` and ``host.json``, an mdev nova creates (``LibvirtDriver._create_mdev``, which
   nova's VGPUTestBase fakes the same way) is added to the connection and the tree, its type's
   ``available_instances`` lowered as the kernel does; the tree is rebuilt;
4. runs nova's own ``nova.cmd.compute.main()`` with ``--config-file DIR/node.conf
   --config-file DIR/host/etc/nova/nova.conf`` (or the ``--nova-config-file`` given: an
   openstack-ansible node's /etc/nova/nova.conf, tests/cloud_twin/test_openstack_ansible_twin.py): the real service connects to RabbitMQ, registers
   through nova-conductor and reports its inventory to Placement.  SIGTERM stops it as
   systemd's ``systemctl stop nova-compute`` does (oslo.service's graceful stop).

What is not real: the hypervisor (fakelibvirt keeps the guests in this process' memory; the
domain XML written to ``DIR/domains`` is nova's own, as libvirt writes /etc/libvirt/qemu).

In a kolla-shaped container (tests/cloud_twin/kolla_images.py, test_kolla_twin.py) it runs as::

    compute.py --node /var/lib/kolla/twin-node --domains /etc/libvirt/qemu --config-file /etc/nova/nova.conf

``--domains``: the folder of the guests' domain XML instead of ``DIR/domains`` (there: libvirt's own
folder, the ``nova_libvirt_qemu`` volume): the definitions are written there only (not into the
tree's ``host/etc/libvirt/qemu``), and the connection's domains are defined from there at start, as
libvirtd reads /etc/libvirt/qemu.  nova's own ``--config-file`` arguments, when given, replace the
node's two files (``node.conf`` and the tree's nova.conf): kolla's one nova.conf.
"""

import argparse
import glob
import os
import re
import shutil
import sys
import threading
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
for _path in (os.path.join(REPO, 'tools'), os.path.join(REPO, 'tests', 'nova_oracle'), HERE):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import fakehost  # noqa: E402  (tools/)
import nodes  # noqa: E402


class FakeHost(object):
    """The node's hardware and guests: host.json <-> the fakelibvirt connection <-> the tree."""

    def __init__(self, directory, domains_dir=None):
        self.directory = os.path.abspath(directory)
        # libvirt's folder of the definitions, when not the node's (kolla: the nova_libvirt_qemu volume)
        self.libvirt_dir = os.path.abspath(domains_dir) if domains_dir else None
        self.spec = nodes.read_spec(self.directory)
        self.lock = threading.RLock()
        self.connection = None
        self.built = None

    @property
    def domains_dir(self):
        return self.libvirt_dir or os.path.join(self.directory, 'domains')

    def rebuild(self):
        """DIR/host from the spec, nova's own domain XML in its qemu folder (or only in libvirt's)."""
        with self.lock:
            spec = dict(self.spec)
            self.built = fakehost.build_host(os.path.join(self.directory, 'host'), spec, clean=True)
            qemu_dir = os.path.dirname(self.built['domain_xml_glob'])
            if self.libvirt_dir:
                for path in glob.glob(os.path.join(qemu_dir, '*.xml')):
                    os.remove(path)
                self.built['domain_xml_glob'] = os.path.join(self.libvirt_dir, '*.xml')
                return self.built
            for path in glob.glob(os.path.join(self.domains_dir, '*.xml')):
                shutil.copy(path, os.path.join(qemu_dir, os.path.basename(path)))
            return self.built

    # ----------------------------------------------------------------- nova's changes
    def sync(self):
        """host.json, DIR/domains and the tree from the connection's defined domains."""
        if self.connection is None:
            return
        with self.lock:
            names = set()
            instances = []
            held_mdevs, held_pci = {}, {}
            for dom in list(self.connection._vms.values()):
                if dom._transient:
                    continue
                name = dom.name()
                names.add(name)
                text = dom.XMLDesc(0)
                path = os.path.join(self.domains_dir, name + '.xml')
                with open(path + '.tmp', 'w') as handle:
                    handle.write(text)
                os.replace(path + '.tmp', path)
                item = {'name': name, 'uuid': dom.UUIDString()}
                root = ET.fromstring(text)
                if root.find("./launchSecurity[@type='sev']") is not None:
                    item['mem_encryption'] = 'amd-sev'
                for addr in root.findall("./devices/hostdev[@type='mdev']/source/address"):
                    held_mdevs[addr.get('uuid')] = name
                for addr in root.findall("./devices/hostdev[@type='pci']/source/address"):
                    held_pci['%04x:%02x:%02x.%x' % tuple(int(addr.get(f), 0) for f in
                                                         ('domain', 'bus', 'slot', 'function'))] = name
                instances.append(item)
            for path in glob.glob(os.path.join(self.domains_dir, '*.xml')):
                if os.path.basename(path)[:-len('.xml')] not in names:
                    os.remove(path)
            self.spec['instances'] = sorted(instances, key=lambda i: i['name'])
            for gpu in self.spec.get('gpus', []):
                for mdev in gpu.get('mdevs', []):
                    mdev['holder'] = held_mdevs.get(mdev.get('uuid'))
            for dev in self.spec.get('pci_devices', []):
                dev['holder'] = held_pci.get(dev['address'])
            nodes.write_spec(self.directory, self.spec)
            self.rebuild()

    def add_mdev(self, fakelibvirt, dev_name, mdev_type, uuid):
        """An mdev nova created on the GPU ``dev_name`` (pci_0000_84_00_0)."""
        with self.lock:
            address = '%s:%s:%s.%s' % tuple(dev_name[len('pci_'):].split('_'))
            for gpu in self.spec.get('gpus', []):
                if gpu['address'] == address:
                    gpu.setdefault('mdevs', []).append({'type': mdev_type, 'uuid': uuid, 'holder': None})
            name = 'mdev_' + uuid.replace('-', '_')
            self.connection.mdev_info.devices[name] = fakelibvirt.FakeMdevDevice(
                dev_name=name, type_id=mdev_type, parent=dev_name)
            # the kernel lowers the parent's available_instances of the type (fakelibvirt does not)
            dev = self.connection.pci_info.devices[dev_name]
            pattern = r"(<type id='%s'>.*?<availableInstances>)(\d+)" % re.escape(mdev_type)
            dev.pci_device = re.sub(pattern, lambda m: m.group(1) + str(max(int(m.group(2)) - 1, 0)),
                                    dev.pci_device, count=1, flags=re.S)
            nodes.write_spec(self.directory, self.spec)
            self.rebuild()


class _FixtureHost(object):
    """What nova's NeutronFixture and GlanceFixture ask of their test: ``flags``, ``stub_out``,
    ``useFixture`` (each fixture set up now, kept in ``stack``)."""

    def __init__(self, stack):
        self.stack = stack

    def useFixture(self, fixture):  # noqa: N802  (the testtools name the fixtures call)
        self.stack.append(_use(fixture))
        return fixture

    def flags(self, **kwargs):
        from nova.tests import fixtures as nova_fixtures
        self.useFixture(nova_fixtures.ConfPatcher(**kwargs))

    def stub_out(self, old, new):
        import fixtures
        self.useFixture(fixtures.MonkeyPatch(old, new))


def _use(fixture):
    fixture.setUp()
    return fixture


def _create_image(context, instance, *args, **kwargs):
    """What nova's LibvirtDriver._create_image does here: the instance's directory, no disk."""
    from nova.virt.libvirt import utils as libvirt_utils
    os.makedirs(libvirt_utils.get_instance_path(instance), exist_ok=True)
    return (False, False)


def apply_fixtures(host):
    """nova's functional libvirt base, applied to this process; returns the fixtures."""
    import io
    import fixtures
    from nova.tests import fixtures as nova_fixtures
    from nova.tests.fixtures import libvirt as fakelibvirt
    import mirror  # tests/nova_oracle
    from nova.virt.libvirt import driver as libvirt_driver

    spec, built = host.spec, host.built
    used = []
    used.append(_use(nova_fixtures.LibvirtImageBackendFixture()))
    libvirt_fixture = _use(nova_fixtures.LibvirtFixture())
    used.append(libvirt_fixture)
    used.append(_use(nova_fixtures.OSBrickFixture()))
    used.append(_use(nova_fixtures.PrivsepNoHelperFixture()))
    used.append(_use(nova_fixtures.NeutronFixture(_FixtureHost(used))))
    # no Glance in the twin: nova's in-memory test images, as the control plane has them
    used.append(_use(nova_fixtures.GlanceFixture(_FixtureHost(used))))
    info = spec.get('host_info') or nodes.HOST_INFO
    host_info = fakelibvirt.HostInfo(cpu_nodes=info['cpu_nodes'], cpu_sockets=info['cpu_sockets'],
                                     cpu_cores=info['cpu_cores'], cpu_threads=info['cpu_threads'],
                                     kB_mem=info['kB_mem'])
    for name, kwargs in (
            # no disk is written; the instance's directory is (the real _create_image's first step:
            # a resize renames it to <uuid>_resize)
            ('nova.virt.libvirt.LibvirtDriver._create_image', {'side_effect': _create_image}),
            ('nova.virt.libvirt.LibvirtDriver._get_local_gb_info', {'return_value': spec['local_gb']}),
            ('nova.virt.libvirt.driver.libvirt_utils.is_valid_hostname', {'return_value': True}),
            ('nova.virt.libvirt.driver.libvirt_utils.file_open', {'side_effect': lambda *a, **k: io.BytesIO(b'')}),
            ('nova.privsep.utils.supports_direct_io', {'return_value': True}),
            ('nova.virt.libvirt.host.Host.get_online_cpus', {'return_value': set(range(host_info.cpus))}),
            # resize/migration bookkeeping of nova's VGPUTestBase (no disks here)
            ('nova.virt.libvirt.LibvirtDriver._get_instance_disk_info', {'return_value': []})):
        used.append(_use(fixtures.MockPatch(name, **kwargs)))

    features = mirror.domain_capability_features(built)
    qemu_version = None
    if spec.get('sev'):
        used.append(_use(fixtures.MonkeyPatch(
            'nova.tests.fixtures.libvirt.virConnect._domain_capability_features', features)))
        flags = mirror.kernel_sev_flags(spec)
        if getattr(libvirt_fixture, 'amd_sev', None) is not None:
            for flag, value in flags.items():
                setattr(libvirt_fixture.amd_sev, flag, value)
        else:
            # a release without nova's AmdSevFixture (nova 33): the same stub of the kernel's
            # kvm_amd parameters nova 34's fixture makes (Host._kernel_supports_amd_sev)
            models = {'sev': flags['sev'], 'sev-es': flags['sev_es'], 'sev-snp': flags['sev_snp']}
            used.append(_use(fixtures.MockPatch('nova.virt.libvirt.host.Host._kernel_supports_amd_sev',
                                                side_effect=lambda model='sev': models[model])))

    pci_info = mirror.pci_info(spec, built)
    if pci_info.devices:
        libvirt_fixture.update_sriov_mac_address_mapping(pci_info.get_pci_address_mac_mapping())
    used.append(_use(fixtures.MonkeyPatch('nova.pci.utils.is_physical_function',
                                          mirror.is_physical_function(built))))
    connection = fakelibvirt.Connection(
        'qemu:///system', version=fakelibvirt.FAKE_LIBVIRT_VERSION,
        hv_version=qemu_version or fakelibvirt.FAKE_QEMU_VERSION, host_info=host_info,
        pci_info=pci_info, mdev_info=mirror.mdev_info(built), hostname=spec['hostname'])
    mirror.define_domains(connection, built)
    host.connection = connection
    used.append(_use(fixtures.MockPatch('nova.virt.libvirt.host.Host.get_connection', return_value=connection)))

    # the host follows nova: domains defined / undefined, mdevs created
    def hooked(method):
        def call(self, *args, **kwargs):
            result = method(self, *args, **kwargs)
            host.sync()
            return result
        return call
    for target, method in (('nova.tests.fixtures.libvirt.Connection.defineXML', fakelibvirt.Connection.defineXML),
                           ('nova.tests.fixtures.libvirt.Connection._undefine', fakelibvirt.Connection._undefine)):
        used.append(_use(fixtures.MonkeyPatch(target, hooked(method))))

    def create_mdev(driver, dev_name, mdev_type, uuid=None):
        from oslo_utils import uuidutils
        uuid = uuid or uuidutils.generate_uuid()
        host.add_mdev(fakelibvirt, dev_name, mdev_type, uuid)
        return uuid
    if hasattr(libvirt_driver.LibvirtDriver, '_create_mdev'):
        used.append(_use(fixtures.MonkeyPatch('nova.virt.libvirt.driver.LibvirtDriver._create_mdev', create_mdev)))
    return used


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--node', required=True, help='the node directory (tests/cloud_twin/nodes.py)')
    parser.add_argument('--nova-config-file', action='append', default=[], metavar='FILE',
                        help="nova's config file (repeatable), in place of DIR/node.conf and the host's nova.conf "
                             "(an openstack-ansible node's /etc/nova/nova.conf, the release's config directory)")
    parser.add_argument('--domains', help="the guests' domain XML folder (default DIR/domains; kolla: "
                                          "/etc/libvirt/qemu, the nova_libvirt_qemu volume)")
    args, nova_args = parser.parse_known_args(argv)
    directory = os.path.abspath(args.node)
    if not os.path.isfile(os.path.join(directory, 'host.json')):
        parser.error('%s has no host.json: make it with tests/cloud_twin/nodes.py create()' % directory)
    # the release's own entry point first: it chooses its concurrency (nova 34: native threads,
    # nova 33: eventlet) before nova's test fixtures are imported (nova/tests/__init__.py
    # patches again with the default it is told by the environment)
    from nova.cmd import compute as nova_compute
    from nova import monkey_patch
    patched = getattr(monkey_patch, 'MONKEY_PATCHED', False)
    os.environ['OS_NOVA_DISABLE_EVENTLET_PATCHING'] = '0' if patched else '1'
    host = FakeHost(directory, args.domains)
    if args.domains:
        os.makedirs(args.domains, exist_ok=True)
    host.rebuild()
    apply_fixtures(host)
    host.sync()
    if args.nova_config_file:
        sys.argv = ['nova-compute'] + [arg for path in args.nova_config_file for arg in ('--config-file', path)] + nova_args
    elif '--config-file' in nova_args:  # kolla's one nova.conf, given as nova-compute's own option
        sys.argv = ['nova-compute'] + nova_args
    else:
        sys.argv = ['nova-compute', '--config-file', os.path.join(directory, 'node.conf'),
                    '--config-file', host.built['nova_conf']] + nova_args
    mark_start(directory)
    return nova_compute.main()


def _write(path, text):
    with open(path + '.tmp', 'w') as handle:
        handle.write(text)
    os.replace(path + '.tmp', path)


def mark_start(directory):
    """``DIR/compute.ready`` once nova's Service.start() returned (init_host, the start-up
    update_available_resource that reports to Placement, the RPC server, post_start_hook);
    ``DIR/compute.failed`` with nova's error when it raised (nova's behaviour is unchanged: the
    exception goes on to oslo.service as without the launcher)."""
    import json
    import time
    from nova import service
    from nova import version
    for name in ('compute.ready', 'compute.failed'):
        if os.path.exists(os.path.join(directory, name)):
            os.remove(os.path.join(directory, name))
    _write(os.path.join(directory, 'compute.pid'), '%d\n' % os.getpid())
    start = service.Service.start
    release = version.version_string()

    def started(self, *args, **kwargs):
        began = time.time()
        try:
            result = start(self, *args, **kwargs)
        except BaseException as exc:
            _write(os.path.join(directory, 'compute.failed'), json.dumps(
                {'pid': os.getpid(), 'release': release, 'error': '%s: %s' % (type(exc).__name__, exc),
                 'began': began, 'at': time.time()}))
            raise
        if self.binary == 'nova-compute':
            _write(os.path.join(directory, 'compute.ready'), json.dumps(
                {'pid': os.getpid(), 'release': release, 'began': began, 'at': time.time()}))
        return result
    service.Service.start = started


if __name__ == '__main__':
    sys.exit(main())
