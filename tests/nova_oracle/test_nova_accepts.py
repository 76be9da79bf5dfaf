# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nova 34 is the oracle: after our reshape, nova-compute starts and writes NOTHING.

Each case takes a fake host the project's tests or demo use (tools/fakehost.py
presets, every node of tools/simfleet.py's demo fleet) and, inside nova 34.0.0's
own functional harness (real nova-compute service, libvirt driver on nova's
fakelibvirt, in-process real Placement 16 from openstack-placement):

1. mirrors the host into fakelibvirt (tests/nova_oracle/mirror.py) and loads the
   host's own nova.conf into nova's CONF;
2. lets nova create the compute node provider itself, the way a pre-upgrade nova
   did: vGPU support off (``[devices]enabled_mdev_types`` empty) and PCI not in
   Placement (``[pci]report_in_placement`` False); then seeds what that old nova
   left in Placement: VGPU inventory on the root and every guest's allocation on
   the root, with no consumer_type (nova writes none);
3. runs OUR discovery on the fake host and OUR reshape over the REST backend
   against that same Placement;
4. lifts the overrides (the node's nova.conf now applies in full), restarts
   nova-compute (a new ComputeManager, ``update_available_resource`` with
   ``startup=True``: the resource tracker calls the driver's
   ``update_provider_tree`` and the PCI placement translator exactly as in
   production) and asserts: the service started (no ReshapeNeeded escaping, no
   ReshapeFailed, no PlacementPciException), nova sent ZERO POST/PUT/DELETE
   requests to Placement, and every provider, generation, inventory, trait,
   aggregate, allocation and consumer generation is exactly as we left it.

The controls show the oracle has teeth: the same host left flat makes nova write
(or fail), and PCI children under ``report_in_placement = False`` stop nova.
"""

import os
import shutil
import tempfile

import fixtures
from oslo_config import cfg

from nova.tests.functional.libvirt import base

import fakehost
import mirror
import simfleet
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import layout
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import planner
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend

CONF = cfg.CONF
PROJECT = '6f70656e-7374-6163-6b20-70726f6a6563'
USER = '75736572-2075-7365-7220-757365722075'
GUEST = {'VCPU': 1, 'MEMORY_MB': 128, 'DISK_GB': 1}


def inventory_fields(inventories):
    """{resource class: the inventory fields nova and Placement both have}."""
    fields = ('total', 'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio')
    return {rc: {f: inv.get(f) for f in fields} for rc, inv in inventories.items()}


class OracleTestBase(base.ServersTestBase):
    """One fake host, our reshape, then nova's verdict."""

    microversion = 'latest'

    def setUp(self):
        super().setUp()
        self.workdir = tempfile.mkdtemp(prefix='nova-oracle-')
        self.addCleanup(shutil.rmtree, self.workdir, True)
        self.recording = None
        from nova.scheduler.client import report
        for method in ('post', 'put', 'delete'):
            raw = report.SchedulerReportClient.__dict__[method]
            self.useFixture(fixtures.MonkeyPatch(
                'nova.scheduler.client.report.SchedulerReportClient.' + method,
                self._recorder(method.upper(), raw)))

    def _clear_attrs(self):
        # nova's cleanup deletes every public instance attribute; pytest's unittest
        # runner sets the test method on the instance and deletes it afterwards
        for key in [k for k in self.__dict__ if k[0] != '_' and not k.startswith('test')]:
            if key != 'id':
                del self.__dict__[key]

    def _recorder(self, verb, raw):
        def call(client, url, *args, **kwargs):
            if self.recording is not None:
                self.recording.append('%s %s' % (verb, url))
            return raw(client, url, *args, **kwargs)
        return call

    # ------------------------------------------------------------ placement
    def _get(self, url, version='1.38'):
        resp = self.placement.get(url, version=version)
        self.assertEqual(200, resp.status, url)
        return resp.body

    def dump(self):
        """Everything nova could change, generations included."""
        out = {'providers': {}, 'consumers': {}}
        consumers = set()
        for rp in self._get('/resource_providers')['resource_providers']:
            uuid = rp['uuid']
            allocs = self._get('/resource_providers/%s/allocations' % uuid)['allocations']
            consumers.update(allocs)
            out['providers'][rp['name']] = {
                'uuid': uuid, 'parent': rp['parent_provider_uuid'],
                'generation': rp['generation'],
                'inventories': self._get('/resource_providers/%s/inventories' % uuid)['inventories'],
                'traits': sorted(self._get('/resource_providers/%s/traits' % uuid)['traits']),
                'aggregates': sorted(self._get('/resource_providers/%s/aggregates' % uuid)['aggregates']),
                'allocations': {c: a['resources'] for c, a in allocs.items()},
            }
        for consumer in sorted(consumers):
            body = self._get('/allocations/%s' % consumer)
            out['consumers'][consumer] = {
                'generation': body.get('consumer_generation'),
                'type': body.get('consumer_type'),
                'allocations': {rp: a['resources'] for rp, a in body['allocations'].items()},
            }
        return out

    def compute_headers(self, user='admin', roles='reader,member,admin'):
        """What the harness' stubbed keystone middleware reads (noauth-style)."""
        project = self.api_fixture.project_id
        return {'X-Auth-User': user, 'X-User-Id': user, 'X-Auth-Project-Id': project, 'X-Roles': roles}

    def nova_adapter(self, backend, **who):
        """OUR compute adapter on the harness' nova API (wsgi-intercept), on the backend's session."""
        from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import compute as nova
        return nova.compute_adapter(backend, endpoint_override=self.api_fixture.api.base_url,
                                    additional_headers=self.compute_headers(**who))

    def backend(self):
        from keystoneauth1 import adapter as ks_adapter
        from keystoneauth1 import session as ks_session
        from keystoneauth1 import token_endpoint
        endpoint = self.placement_fixture.endpoint
        sess = ks_session.Session(auth=token_endpoint.Token(endpoint, 'admin'))
        adapter = ks_adapter.Adapter(session=sess, service_type='placement', endpoint_override=endpoint,
                                     additional_headers={'X-Roles': 'admin,service'})
        return RestBackend(adapter)

    # ------------------------------------------------------------- the host
    def build(self, spec):
        self.spec = spec
        self.hostname = spec['hostname']
        self.built = fakehost.build_host(os.path.join(self.workdir, self.hostname), spec, clean=True)
        self.conf_files = mirror.load_nova_conf(CONF, self.built)
        return self.built

    def start_old_nova(self):
        """nova before the upgrade: no vGPU children, PCI not in Placement, and (for a SEV
        host) MEM_ENCRYPTION_CONTEXT still on the root (seeded below, as nova < 2025.2 had it)."""
        self.flags(enabled_mdev_types=[], group='devices')
        self.flags(report_in_placement=False, group='pci')
        if CONF.compute.cpu_dedicated_set:
            # before Train: no dedicated/shared sets, every online CPU is VCPU
            self.flags(cpu_dedicated_set=None, cpu_shared_set=None, group='compute')
            online = set(c for cell in self.spec['numa_cells'] for c in fakehost.cpu_ids(cell['cpus']))
            from nova.virt.libvirt import host as libvirt_host
            # the base class mocks get_online_cpus (range(16)): give it this host's CPUs
            libvirt_host.Host.get_online_cpus.return_value = online
        qemu_version = None
        features = mirror.domain_capability_features(self.built)
        if features and self.spec.get('tdx') is not None:
            capacity = (self.spec['tdx'] or {}).get('misc_capacity')
            self.useFixture(fixtures.MockPatch(
                'nova.virt.libvirt.host.Host._get_cgroup_tdx_capacity', return_value=capacity))
        if features:
            for flag, value in mirror.kernel_sev_flags(self.spec).items():
                setattr(self.libvirt.amd_sev, flag, value)
            self.useFixture(fixtures.MonkeyPatch(
                'nova.tests.fixtures.libvirt.virConnect._domain_capability_features', features))
            from oslo_utils import versionutils
            from nova.virt.libvirt import host as libvirt_host
            qemu_version = versionutils.convert_version_to_int(libvirt_host.MIN_QEMU_SEV_ES_VERSION)
        libvirt_version = None
        if any('live_migratable' in spec for spec in CONF.pci.device_spec):
            # nova refuses live_migratable below libvirt 10.0.0 / QEMU 8.2.2 (driver.py
            # _check_pci_whitelist): the NVIDIA VFIO vGPU host runs Linux 6.8+ with them
            # (Ubuntu 24.04's versions)
            from oslo_utils import versionutils
            from nova.virt.libvirt import driver as libvirt_driver
            libvirt_version = versionutils.convert_version_to_int(
                libvirt_driver.MIN_VFIO_PCI_VARIANT_LIBVIRT_VERSION)
            qemu_version = max(qemu_version or 0, versionutils.convert_version_to_int(
                libvirt_driver.MIN_VFIO_PCI_VARIANT_QEMU_VERSION))
        self.useFixture(fixtures.MonkeyPatch('nova.pci.utils.is_physical_function',
                                             mirror.is_physical_function(self.built)))
        self.start_compute(hostname=self.hostname,
                           pci_info=mirror.pci_info(self.spec, self.built),
                           mdev_info=mirror.mdev_info(self.built), qemu_version=qemu_version,
                           libvirt_version=libvirt_version)
        self.compute = self.computes[self.hostname]
        self.domains = mirror.define_domains(self.compute.driver._host.get_connection(), self.built)
        self.root_uuid = self.compute_rp_uuids[self.hostname]
        self.assert_started_cleanly()

    def seed_legacy(self, extra_consumers=()):
        """What the old nova left in Placement: VGPU on the root, guests on the root."""
        units = simfleet._gpu_units(self.spec)
        if units:
            body = self._get('/resource_providers/%s/inventories' % self.root_uuid)
            body['inventories']['VGPU'] = {'total': units, 'reserved': 0, 'min_unit': 1,
                                           'max_unit': units, 'step_size': 1, 'allocation_ratio': 1.0}
            resp = self.placement.put('/resource_providers/%s/inventories' % self.root_uuid, body)
            self.assertEqual(200, resp.status, resp.body)
        sev_guests = set(i['name'] for i in self.spec.get('instances', []) if i.get('mem_encryption'))
        if self.spec.get('sev'):
            # nova < 2025.2: MEM_ENCRYPTION_CONTEXT and HW_CPU_X86_AMD_SEV on the root
            body = self._get('/resource_providers/%s/inventories' % self.root_uuid)
            slots = int(self.spec['sev'].get('max_guests', 15))
            body['inventories']['MEM_ENCRYPTION_CONTEXT'] = {
                'total': slots, 'reserved': 0, 'min_unit': 1, 'max_unit': 1, 'step_size': 1,
                'allocation_ratio': 1.0}
            resp = self.placement.put('/resource_providers/%s/inventories' % self.root_uuid, body)
            self.assertEqual(200, resp.status, resp.body)
            body = self._get('/resource_providers/%s/traits' % self.root_uuid)
            body['traits'] = sorted(set(body['traits']) | {'HW_CPU_X86_AMD_SEV'})
            resp = self.placement.put('/resource_providers/%s/traits' % self.root_uuid, body, version='1.38')
            self.assertEqual(200, resp.status, resp.body)
        held = {}
        for mdev in self.built['mdevs'].values():
            if mdev['holder']:
                held[mdev['holder']] = held.get(mdev['holder'], 0) + 1
        self.consumers = {}
        for name, uuid in sorted(self.built['instances'].items()):
            resources = dict(GUEST)
            if held.get(name):
                resources['VGPU'] = held[name]
            if name in sev_guests:
                resources['MEM_ENCRYPTION_CONTEXT'] = 1
            self.put_allocations(uuid, {self.root_uuid: resources})
            self.consumers[name] = uuid
        for uuid, allocations in extra_consumers:
            self.put_allocations(uuid, allocations)

    def put_allocations(self, consumer, allocations, version='1.36'):
        # 1.36: no consumer_type, as nova 34 writes them (Placement reports 'unknown')
        current = self._get('/allocations/%s' % consumer)
        body = {'allocations': {rp: {'resources': res} for rp, res in allocations.items()},
                'project_id': PROJECT, 'user_id': USER,
                'consumer_generation': current.get('consumer_generation')}
        resp = self.placement.put('/allocations/%s' % consumer, body, version=version)
        self.assertEqual(204, resp.status, resp.body)

    def our_reshape(self, **kwargs):
        report = discovery.discover(self.built['sysfs_root'], domain_xml_glob=self.built['domain_xml_glob'],
                                    hostname=self.hostname, nova_conf=self.built['nova_conf'],
                                    domain_capabilities=self.built.get('domain_capabilities'))
        backend = self.backend()
        try:
            return reshaper.reshape_node(backend, self.hostname, report,
                                         snapshot_dir=os.path.join(self.workdir, 'snapshots'), **kwargs)
        finally:
            backend.close()

    def restart_new_nova(self):
        """nova 34 with the node's nova.conf in full; returns the writes it sent."""
        CONF.clear_override('enabled_mdev_types', group='devices')
        CONF.clear_override('report_in_placement', group='pci')
        CONF.clear_override('cpu_dedicated_set', group='compute')
        CONF.clear_override('cpu_shared_set', group='compute')
        self.recording = []
        self.restart_mark = len(self.stdlog.logger.output)
        try:
            self.compute = self.restart_compute_service(self.hostname)
        finally:
            writes, self.recording = self.recording, None
        return writes

    def assert_started_cleanly(self, mark=0):
        """The resource tracker's start-up pass ran to its end: nova logs and swallows
        most errors of ``update_available_resource`` (only ReshapeFailed, ReshapeNeeded,
        PlacementPciException and InvalidConfiguration stop the service), so a
        swallowed error would make "no writes" meaningless."""
        log = self.stdlog.logger.output[mark:]
        for marker in ('Error updating resources', 'Error updating PCI resources', 'Traceback'):
            self.assertNotIn(marker, log)
        self.assertIn(self.hostname, self.compute.manager.rt.compute_nodes)

    def assert_nova_accepts(self):
        before = self.dump()
        writes = self.restart_new_nova()
        after = self.dump()
        self.assert_started_cleanly(self.restart_mark)
        self.assertEqual([], writes, 'nova-compute wrote to Placement after our reshape')
        self.assertEqual(before, after)
        self.assert_same_tree_as_novas(after)
        return after

    def fresh_tree(self, dump):
        """nova's driver laying out a FRESH tree for this node: the root alone, as nova would find
        a new node (``dump``, Placement's state, is for subclasses that seed from it)."""
        from nova.compute import provider_tree as nova_provider_tree
        fresh = nova_provider_tree.ProviderTree()
        fresh.new_root(self.hostname, self.root_uuid, generation=0)
        self.compute.driver.update_provider_tree(fresh, self.hostname)
        return fresh

    def assert_same_tree_as_novas(self, dump):
        """nova's twin: the libvirt driver of the restarted service lays out a FRESH tree
        (:meth:`fresh_tree`) and must build exactly our driver-owned children (pGPUs, memory
        encryption): same names, inventories, traits.  PCI providers are the resource
        tracker's: it deletes or rewrites those it does not want, which the zero-writes check
        already catches.  This makes "no writes" mean "nova wants exactly this", not "nova did
        not look".  Returns nova's fresh tree."""
        fresh = self.fresh_tree(dump)
        nova = {}
        for uuid in fresh.get_provider_uuids(self.hostname):
            data = fresh.data(uuid)
            if data.name != self.hostname:
                nova[data.name] = (inventory_fields(data.inventory), sorted(data.traits))
        ours = {name: (inventory_fields(p['inventories']), p['traits']) for name, p in dump['providers'].items()
                if p['parent'] == self.root_uuid and 'COMPUTE_MANAGED_PCI_DEVICE' not in p['traits']}
        self.assertEqual(nova, ours)
        return fresh

    def run_case(self, spec, expect_status='reshaped'):
        self.build(spec)
        self.start_old_nova()
        self.seed_legacy()
        types_before = {c['type'] for c in self.dump()['consumers'].values()}
        result = self.our_reshape()
        self.assertEqual(expect_status, result['status'], result)
        after = self.assert_nova_accepts()
        # consumer_type is left as Placement reported it (nova 34 writes none)
        self.assertEqual(types_before, {c['type'] for c in after['consumers'].values()})
        return result, after

    def tree(self, dump):
        """{child name: (inventories, traits)} under our root."""
        return {name: (p['inventories'], p['traits']) for name, p in dump['providers'].items()
                if p['parent'] == self.root_uuid}


class TestPresets(OracleTestBase):
    """The fakehost presets the unit tests and docs use."""

    def test_gpu_one_type(self):
        result, after = self.run_case(fakehost.default_gpu_host(name='oracle-gpu', spare_mdevs=1))
        children = self.tree(after)
        self.assertEqual({'oracle-gpu_pci_0000_84_00_0', 'oracle-gpu_pci_0000_85_00_0'}, set(children))
        for inventories, traits in children.values():
            self.assertEqual(['VGPU'], list(inventories))
            self.assertIn('OWNER_NOVA', traits)
        self.assertNotIn('VGPU', after['providers']['oracle-gpu']['inventories'])

    def test_gpu_several_types_mdev_class_and_max_instances(self):
        result, after = self.run_case(fakehost.multi_type_gpu_host(name='oracle-multi'))
        children = self.tree(after)
        # GPU C gets no inventory from nova (max_instances reached on B), so no provider
        self.assertEqual({'oracle-multi_pci_0000_84_00_0': ['VGPU'],
                          'oracle-multi_pci_0000_85_00_0': ['CUSTOM_T4_4Q']},
                         {name: sorted(inv) for name, (inv, _t) in children.items()})

    def test_sriov_report_in_placement(self):
        result, after = self.run_case(fakehost.default_sriov_host(name='oracle-sriov'))
        children = self.tree(after)
        self.assertEqual({'oracle-sriov_0000:81:00.0', 'oracle-sriov_0000:3B:00.0'}, set(children))
        pci_held = [c for c, rec in after['consumers'].items()
                    if any(rp != self.root_uuid for rp in rec['allocations'])]
        self.assertEqual(3, len(pci_held))

    def test_sriov_physnet_tagged_pf_left_out(self):
        """A second PF whose VFs are tagged with a physical_network (neutron SR-IOV ports):
        nova keeps them out of Placement, and so do we."""
        spec = fakehost.default_sriov_host(name='oracle-physnet')
        spec['sriov_pfs'].append({'address': '0000:82:00.0', 'vendor_id': '8086', 'product_id': '1572',
                                  'vf_product_id': '154c', 'numa_node': 0, 'total_vfs': 8, 'num_vfs': 2})
        spec['nova_conf']['pci']['device_spec'] = [
            '{"address": "0000:82:*", "physical_network": "physnet1"}',
        ] + list(spec['nova_conf']['pci']['device_spec'])
        result, after = self.run_case(spec)
        self.assertEqual({'oracle-physnet_0000:81:00.0', 'oracle-physnet_0000:3B:00.0'}, set(self.tree(after)))

    def test_nvidia_vfio_vgpu(self):
        """NVIDIA vGPU of the vendor-specific VFIO framework (R580+, Linux 6.8+): the typed VFs,
        mirrored into fakelibvirt as VFs, selected by [pci]device_spec with a resource_class per
        vGPU type and live_migratable; nova 34 wants exactly our tree: one provider per GPU named
        after the PF, the spec's class, COMPUTE_MANAGED_PCI_DEVICE + HW_PCI_LIVE_MIGRATABLE +
        OWNER_NOVA, and each guest holding its VF there (healed in the same reshape)."""
        result, after = self.run_case(fakehost.nvidia_vfio_host(name='oracle-nvidia'))
        children = self.tree(after)
        traits = ['COMPUTE_MANAGED_PCI_DEVICE', 'HW_PCI_LIVE_MIGRATABLE', 'OWNER_NOVA']
        self.assertEqual({'oracle-nvidia_0000:41:00.0': (['CUSTOM_NVIDIA_L4_6Q'], 3, traits),
                          'oracle-nvidia_0000:42:00.0': (['CUSTOM_NVIDIA_L4_12Q'], 1, traits)},
                         {name: (sorted(inv), sum(i['total'] for i in inv.values()), t)
                          for name, (inv, t) in children.items()})
        for name, rc, guest in (('oracle-nvidia_0000:41:00.0', 'CUSTOM_NVIDIA_L4_6Q', 'instance-00000061'),
                                ('oracle-nvidia_0000:42:00.0', 'CUSTOM_NVIDIA_L4_12Q', 'instance-00000062')):
            uuid = after['providers'][name]['uuid']
            self.assertEqual({rc: 1}, after['consumers'][self.consumers[guest]]['allocations'][uuid])
        self.assertEqual(2, sum(1 for c in after['consumers'].values()
                                if any(rp != self.root_uuid for rp in c['allocations'])))

    def test_sriov_pci_not_in_placement(self):
        result, after = self.run_case(fakehost.default_sriov_host(name='oracle-nopci', report_in_placement=False),
                                      expect_status='noop')
        self.assertEqual({}, self.tree(after))

    def test_amd_sev_and_sev_es(self):
        """2025.2's reshape: MEM_ENCRYPTION_CONTEXT to <node>_amd_sev, SEV-ES child beside it,
        HW_CPU_X86_AMD_SEV off the root."""
        result, after = self.run_case(fakehost.default_sev_host(name='oracle-sev'))
        children = self.tree(after)
        self.assertEqual({'oracle-sev_amd_sev', 'oracle-sev_amd_sev_es'}, set(children))
        inv, traits = children['oracle-sev_amd_sev']
        self.assertEqual(15, inv['MEM_ENCRYPTION_CONTEXT']['total'])
        self.assertEqual(['HW_CPU_X86_AMD_SEV', 'OWNER_NOVA'], traits)
        root = after['providers']['oracle-sev']
        self.assertNotIn('MEM_ENCRYPTION_CONTEXT', root['inventories'])
        self.assertNotIn('HW_CPU_X86_AMD_SEV', root['traits'])
        sev_uuid = after['providers']['oracle-sev_amd_sev']['uuid']
        self.assertEqual(2, len(after['providers']['oracle-sev_amd_sev']['allocations']))
        self.assertEqual(2, sum(1 for c in after['consumers'].values() if sev_uuid in c['allocations']))

    def test_amd_sev_without_sev_es(self):
        result, after = self.run_case(fakehost.default_sev_host(name='oracle-sevonly', sev_es=False))
        self.assertEqual({'oracle-sevonly_amd_sev'}, set(self.tree(after)))

    def test_amd_sev_snp(self):
        """A kernel with SEV-SNP: nova hides SEV-ES and reports SEV-SNP (maxESGuests)."""
        spec = fakehost.default_sev_host(name='oracle-snp')
        spec['sev']['kernel']['sev_snp'] = True
        spec['sev']['launch_security'] = ['sev', 'sev-es', 'sev-snp']
        result, after = self.run_case(spec)
        self.assertEqual({'oracle-snp_amd_sev', 'oracle-snp_amd_sev_snp'}, set(self.tree(after)))

    def test_intel_tdx(self):
        """Intel TDX: nothing to move (nova has reported it on a child from the start, so the
        nova that seeds the node already made <node>_intel_tdx): our plan must find that
        child exactly as it would build it (noop), from the same misc cgroup total."""
        result, after = self.run_case(fakehost.default_tdx_host(name='oracle-tdx'), expect_status='noop')
        children = self.tree(after)
        self.assertEqual({'oracle-tdx_intel_tdx'}, set(children))
        self.assertEqual(63, children['oracle-tdx_intel_tdx'][0]['MEM_ENCRYPTION_CONTEXT']['total'])

    def test_vcpu_to_pcpu(self):
        """Train's reshape: pinned guests' VCPU becomes PCPU, the root reports nova's PCPU
        (cpu_dedicated_set) and VCPU (cpu_shared_set) totals."""
        result, after = self.run_case(fakehost.default_pinned_host(name='oracle-pcpu'))
        root = after['providers']['oracle-pcpu']
        self.assertEqual(6, root['inventories']['PCPU']['total'])
        self.assertEqual(2, root['inventories']['VCPU']['total'])
        holders = sorted(rc for a in root['allocations'].values() for rc in a if rc in ('VCPU', 'PCPU'))
        self.assertEqual(['PCPU', 'PCPU', 'VCPU'], holders)

    def test_every_kind_at_once(self):
        """vGPU children, PCI healing, SEV and PCPU in ONE POST /reshaper, nova accepts."""
        posts = []
        real = RestBackend.reshape

        def counting(backend, body):
            posts.append(body)
            return real(backend, body)

        self.useFixture(fixtures.MonkeyPatch(
            'ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest.RestBackend.reshape',
            counting))
        result, after = self.run_case(fakehost.mixed_host(name='oracle-mixed'))
        self.assertEqual(1, len(posts))
        self.assertEqual({'oracle-mixed_pci_0000_84_00_0', 'oracle-mixed_pci_0000_85_00_0',
                          'oracle-mixed_0000:81:00.0', 'oracle-mixed_0000:3B:00.0',
                          'oracle-mixed_amd_sev', 'oracle-mixed_amd_sev_es'}, set(self.tree(after)))
        self.assertEqual(6, after['providers']['oracle-mixed']['inventories']['PCPU']['total'])

    def test_plain(self):
        result, after = self.run_case(fakehost.default_plain_host(name='oracle-plain'), expect_status='noop')
        self.assertEqual({}, self.tree(after))


class TestControls(OracleTestBase):
    """The oracle can fail: what nova does with trees we did not (or wrongly) reshape."""

    def test_flat_tree_left_alone_makes_nova_reshape(self):
        """Without our reshape nova 34 does its own at start-up: the writes we must avoid."""
        self.build(fakehost.default_gpu_host(name='oracle-flat'))
        self.start_old_nova()
        self.seed_legacy()
        writes = self.restart_new_nova()
        self.assertIn('POST /reshaper', writes)
        self.assertEqual(2, writes.count('POST /resource_providers'), writes)

    def test_one_trait_or_inventory_field_off_makes_nova_write(self):
        """The comparison covers traits and every inventory field: nova repairs both."""
        self.build(fakehost.default_gpu_host(name='oracle-off'))
        self.start_old_nova()
        self.seed_legacy()
        self.assertEqual('reshaped', self.our_reshape()['status'])
        children = self.tree(self.dump())
        first, second = sorted(children)
        first_uuid = self.dump()['providers'][first]['uuid']
        body = self._get('/resource_providers/%s/traits' % first_uuid)
        body['traits'] = [t for t in body['traits'] if t != 'OWNER_NOVA']
        self.assertEqual(200, self.placement.put('/resource_providers/%s/traits' % first_uuid, body, version='1.38').status)
        second_uuid = self.dump()['providers'][second]['uuid']
        body = self._get('/resource_providers/%s/inventories' % second_uuid)
        body['inventories']['VGPU']['allocation_ratio'] = 2.0
        self.assertEqual(200, self.placement.put('/resource_providers/%s/inventories' % second_uuid, body, version='1.38').status)
        writes = self.restart_new_nova()
        self.assertEqual({'PUT /resource_providers/%s/inventories' % second_uuid,
                          'PUT /resource_providers/%s/traits' % first_uuid}, set(writes))
        self.assertEqual(2, len(writes), writes)

    def test_migration_in_flight_nova_cannot_reshape(self):
        """nova's migration model: the migration record's UUID holds the SOURCE node's
        allocations (VGPU included), the instance holds the destination's.  We leave such
        a node untouched; nova 34 itself then fails its start-up reshape (ReshapeFailed:
        no domain is named after the migration consumer), so the node must wait for the
        migration to finish (the fleet plan defers it)."""
        from nova import exception
        self.build(fakehost.default_gpu_host(name='oracle-mig'))
        self.start_old_nova()
        self.seed_legacy()
        migrating = self.consumers['instance-00000003']
        dest = self.placement.post('/resource_providers', {'name': 'oracle-mig-dest'}, version='1.20').body
        self.placement.put('/resource_providers/%s/inventories' % dest['uuid'], version='1.38', body={
            'resource_provider_generation': dest['generation'],
            'inventories': {'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 4096}}})
        source = self._get('/allocations/%s' % migrating)['allocations'][self.root_uuid]['resources']
        migration_uuid = 'c0ffee00-0000-4000-8000-00000000003a'
        self.put_allocations(migration_uuid, {self.root_uuid: source})
        self.put_allocations(migrating, {dest['uuid']: {'VCPU': 1, 'MEMORY_MB': 128}})
        # our reshape defers the node, naming the migration consumer (a migration or an orphan)
        result = self.our_reshape()
        self.assertEqual('deferred', result['status'])
        self.assertIn(migration_uuid, result['deferred_reason'])
        self.assertIn('VGPU', self.dump()['providers']['oracle-mig']['inventories'])
        self.assertRaises(exception.ReshapeFailed, self.restart_new_nova)
        # nova's failed reshape changed nothing either: the tree is still flat
        self.assertIn('VGPU', self.dump()['providers']['oracle-mig']['inventories'])

    def test_nvidia_vgpu_types_mixed_on_one_gpu_stop_nova_and_us(self):
        """Two vGPU types on the VFs of one GPU, each with its resource_class: nova 34 refuses
        to start (PlacementPciMixedResourceClassException: one provider per PF, one class), and
        our planner refuses the layout before writing anything."""
        from nova import exception
        spec = fakehost.nvidia_vfio_host(name='oracle-nvmixed')
        spec['nova_conf']['pci']['device_spec'][1] = spec['nova_conf']['pci']['device_spec'][1].replace(
            'CUSTOM_NVIDIA_L4_6Q', 'CUSTOM_NVIDIA_L4_4Q')
        self.build(spec)
        self.start_old_nova()
        self.seed_legacy()
        before = self.dump()
        refused = self.assertRaises(layout.LayoutError, self.our_reshape)
        self.assertIn('PlacementPciMixedResourceClassException', str(refused))
        self.assertEqual(before, self.dump())
        self.assertRaises(exception.PlacementPciMixedResourceClassException, self.restart_new_nova)

    def test_pci_children_with_report_in_placement_false_stop_nova(self):
        self.build(fakehost.default_sriov_host(name='oracle-stop'))
        self.start_old_nova()
        self.seed_legacy()
        self.assertEqual('reshaped', self.our_reshape()['status'])
        CONF.clear_override('report_in_placement', group='pci')
        self.flags(report_in_placement=False, group='pci')
        from nova import exception
        self.recording = []
        self.assertRaises(exception.PlacementPciException,
                          self.restart_compute_service, self.hostname)
        # and our planner refuses the same state instead of reshaping into it
        self.spec['nova_conf']['pci']['report_in_placement'] = False
        self.build(self.spec)
        self.assertRaises(planner.PlanError, self.our_reshape)


class TestDemoFleet(OracleTestBase):
    """Every node of the demo fleet (tools/simfleet.py, 12 nodes) that the roll reshapes, and the
    NVIDIA VFIO vGPU node it appends on request."""

    def _node(self, index):
        plan = simfleet.fleet_plan(12)
        return plan[index]

    def test_13_nvidia_vfio(self):
        """The NVIDIA VFIO vGPU node the simulator appends (--nvidia-vfio 1)."""
        node = simfleet.fleet_plan(12, nvidia_vfio=1)[12]
        self.assertEqual('nvidia-vfio', node['kind'])
        result, after = self.run_case(node['spec'])
        self.assertEqual({'compute-13_0000:41:00.0', 'compute-13_0000:42:00.0'}, set(self.tree(after)))


def _fleet_case(index, kind):
    def test(self):
        node = self._node(index)
        spec = node['spec']
        status = 'noop' if kind == 'plain' else 'reshaped'
        self.run_case(spec, expect_status=status)
    test.__name__ = 'test_%02d_%s' % (index + 1, kind)
    return test


for _index, _node in enumerate(simfleet.fleet_plan(12)):
    if _node['kind'] in ('gpu', 'sriov', 'plain', 'reshaped'):
        setattr(TestDemoFleet, 'test_%02d_%s' % (_index + 1, _node['kind']), _fleet_case(_index, _node['kind']))
