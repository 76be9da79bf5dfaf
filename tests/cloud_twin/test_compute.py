# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cloud twin's nova-compute nodes on the running control plane (tests/cloud_twin/cloud.py).

Each node is its own process: nova's real ``nova-compute`` on fakelibvirt (tests/cloud_twin/compute.py),
started and stopped by pid with novactl (tests/cloud_twin/novactl.py), nova 33 from ``.venv-nova33``
and nova 34 from ``.venv-nova``, talking to the cloud's RabbitMQ, nova-conductor 34 and Placement 16
(Keystone password auth of the user ``nova``).

1. ``test_node_comes_up_on_nova_33``: per kind (tests/cloud_twin/nodes.py), nova 33 registers the node
   through the conductor (os-services: up) and reports its tree to Placement; the tree nova 33 laid is
   asserted, and the collection's discovery (on the node's sysfs, domain XML and the nova.conf nova 34
   will run with) plus its planner in check mode say what the roll would do on it.
2. ``test_nova_34_on_our_reshaped_node_writes_nothing``: two pinned guests (``hw:cpu_policy=dedicated``)
   are booted through nova-api (openstacksdk) on a pcpu node, where nova 33 gives them VCPU on the
   root (the legacy vcpu_pin_set); the node is stopped (SIGTERM), switched to
   nova 34 (the pre-start hook: venv and nova.conf), reshaped by the collection, then nova 34 starts:
   Placement's own request log shows no write by the user ``nova`` from the start to 2 s after it
   reported (the start-up update_available_resource ran).
3. ``test_nova_34_alone_on_the_old_layout``: the control run: the same kind and guests, never reshaped, switched
   and started on nova 34: what nova alone does (its writes, counted from the same log).

``CLOUD_TWIN_COMPUTE_KINDS`` (comma-separated) limits the kinds of 1. (default: every kind).
"""

import os
import time

import pytest

import nodes
import novactl

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper

pytestmark = [pytest.mark.real, pytest.mark.slow]

KINDS = [k for k in os.environ.get('CLOUD_TWIN_COMPUTE_KINDS', ','.join(nodes.KINDS)).split(',') if k]
#: T4 2Q (fakehost.default_gpu_host): 8 mdevs per GPU
GPU_CHILDREN = ('_pci_0000_84_00_0', '_pci_0000_85_00_0')


def placement_options(cloud):
    """[placement] of a node's nova.conf: Keystone password auth of the user nova, internal endpoint."""
    return {'auth_type': 'password', 'auth_url': cloud.auth_url, 'username': 'nova',
            'password': cloud.passwords['nova'], 'project_name': 'service', 'user_domain_name': 'Default',
            'project_domain_name': 'Default', 'region_name': 'RegionOne', 'valid_interfaces': 'internal'}


class Node(object):
    def __init__(self, cloud, kind, name):
        self.cloud, self.kind, self.name = cloud, kind, name
        self.dir = nodes.create(cloud.path('nodes', name), kind, name, cloud.broker.transport_url,
                                placement_options(cloud))

    def start(self, release, timeout=240):
        began = time.monotonic()
        novactl.start(self.dir, release, wait_up=True, timeout=timeout)
        return time.monotonic() - began

    def stop(self):
        return novactl.stop(self.dir, timeout=60)


@pytest.fixture(scope='module')
def started(cloud, request):
    """Nodes started here, stopped by pid at the end of the module even when a test fails."""
    made = []

    def stop_all():
        for node in made:
            node.stop()
    request.addfinalizer(stop_all)

    def start(kind, name, release='33'):
        node = Node(cloud, kind, name)
        made.append(node)
        node.start(release)
        cloud.nova_manage('cell_v2', 'discover_hosts')
        cloud.wait_services(('nova-compute',), hosts=[name], timeout=120)
        return node
    return start


def placement(cloud):
    from keystoneauth1 import adapter
    return adapter.Adapter(session=cloud.session('operator'), service_type='placement', interface='internal',
                           region_name='RegionOne', endpoint_override=cloud.placement.url)


def tree(cloud, name):
    """{provider name: {'parent', 'inventories', 'traits'}} of the tree rooted at ``name``."""
    api = placement(cloud)
    roots = api.get('/resource_providers?name=%s' % name, microversion='1.38').json()['resource_providers']
    assert len(roots) == 1, roots
    out = {}
    for rp in api.get('/resource_providers?in_tree=%s' % roots[0]['uuid'], microversion='1.38').json()['resource_providers']:
        inv = api.get('/resource_providers/%s/inventories' % rp['uuid'], microversion='1.38').json()['inventories']
        traits = api.get('/resource_providers/%s/traits' % rp['uuid'], microversion='1.38').json()['traits']
        out[rp['name']] = {'parent': rp['parent_provider_uuid'], 'uuid': rp['uuid'],
                           'inventories': {rc: i['total'] for rc, i in inv.items()}, 'traits': sorted(traits)}
    return out


def report_of(node):
    """The collection's discovery on the node, with the nova.conf nova 34 will run with (as the roll)."""
    paths = nodes.discovery_paths(node.dir)
    return discovery.discover(paths['rolling_reshape_sysfs_root'],
                              domain_xml_glob=paths['rolling_reshape_domain_xml_glob'], hostname=node.name,
                              nova_conf=paths['rolling_reshape_nova_conf'],
                              domain_capabilities=paths.get('rolling_reshape_domain_capabilities'))


def backend(cloud):
    return RestBackend(placement(cloud))


def nova_writes(cloud, since):
    return [(r['method'], r['uri'].split('?')[0], r['status'])
            for r in cloud.placement_requests(user='nova', since=since, writes_only=True)]


def assert_nova_33_tree(kind, name, providers):
    root = providers[name]
    children = dict((n, p) for n, p in providers.items() if n != name)
    if kind in ('vgpu', 'mixed'):
        # nova 33 keeps VGPU on one child per pGPU (nova does since Stein), never on the root
        assert 'VGPU' not in root['inventories']
        assert sorted(children) == sorted(name + suffix for suffix in GPU_CHILDREN)
        assert all(p['inventories'] == {'VGPU': 8} for p in children.values())
    if kind in ('pcpu', 'mixed'):
        # the legacy vcpu_pin_set: every pinned CPU is VCPU on the root, no PCPU
        assert root['inventories'].get('VCPU') == 8 and 'PCPU' not in root['inventories']
    if kind == 'pci':
        # report_in_placement off: the devices are not in Placement
        assert children == {}
    if kind == 'sev':
        # nova 33 (2026.1) reports MEM_ENCRYPTION_CONTEXT on <node>_amd_sev (since 2025.2)
        assert 'MEM_ENCRYPTION_CONTEXT' not in root['inventories']
        assert children[name + '_amd_sev']['inventories'] == {'MEM_ENCRYPTION_CONTEXT': 100}
    if kind == 'new':
        assert root['inventories'].get('PCPU') == 6 and root['inventories'].get('VCPU') == 2
        assert children == {}


@pytest.mark.parametrize('kind', KINDS)
def test_node_comes_up_on_nova_33(cloud, started, kind):
    name = 'twin-%s' % kind
    node = started(kind, name)
    with open(os.path.join(node.dir, 'compute.ready')) as handle:
        assert '"release": "33.' in handle.read()
    providers = tree(cloud, name)
    assert_nova_33_tree(kind, name, providers)
    report = report_of(node)
    api = backend(cloud)
    try:
        result = reshaper.reshape_node(api, name, report, snapshot_dir=os.path.join(node.dir, 'snapshots'),
                                       check_mode=True)
    finally:
        api.close()
    print('\n%s on nova 33: %s; the planner in check mode: %s, moved %s %s' % (
        name, dict((n, p['inventories']) for n, p in providers.items()), result['status'],
        result.get('moved'), result.get('deferred_reason') or ''))
    if kind in ('pcpu', 'mixed', 'pci'):
        # no guest yet: nothing to move (the inventory is nova's to change at start-up)
        assert result['status'] in ('noop', 'reshaped'), result
    if kind in ('vgpu', 'sev', 'new'):
        # nothing moves (at most nova 34's OWNER_NOVA trait is added, as the upgrade twin found)
        assert result['status'] in ('noop', 'reshaped'), result
        moved = result.get('moved') or {}
        assert (moved.get('consumers', 0), moved.get('units') or {}) == (0, {}), result


def boot(cloud, host, extra_specs, count, vcpus=2):
    """``count`` guests through nova-api (openstacksdk, the operator) on ``host``; their ids."""
    import cloud as cloud_mod
    conn = cloud.connect('operator')
    flavor = conn.compute.create_flavor(name='f-%s-%d' % (host, time.monotonic_ns() % 100000), ram=256,
                                        vcpus=vcpus, disk=1)
    conn.compute.create_flavor_extra_specs(flavor, extra_specs)
    ids = []
    for index in range(count):
        server = conn.compute.create_server(name='%s-g%d' % (host, index), image_id=cloud_mod.IMAGE_ID,
                                            flavor_id=flavor.id, networks='none',
                                            availability_zone='nova:%s' % host)
        ids.append(conn.compute.wait_for_server(server, status='ACTIVE', failures=['ERROR'], wait=240).id)
    return ids


def allocations(cloud, consumers):
    api = placement(cloud)
    return dict((c, dict((rp, a['resources']) for rp, a in
                         api.get('/allocations/%s' % c, microversion='1.38').json()['allocations'].items()))
                for c in consumers)


def test_nova_34_on_our_reshaped_node_writes_nothing(cloud, started):
    node = started('pcpu', 'twin-roll-pcpu')
    guests = boot(cloud, node.name, nodes.FLAVORS['pcpu'], 2)
    held = allocations(cloud, guests)
    # nova 33 on the legacy vcpu_pin_set: the pinned guests hold VCPU on the root (the fallback query)
    assert all(list(a.values())[0].get('VCPU') == 2 for a in held.values()), held
    domains = sorted(os.listdir(os.path.join(node.dir, 'host', 'etc', 'libvirt', 'qemu')))
    assert len(domains) == 2, domains
    stop_s = node.stop()
    novactl.switch(node.dir, '34')
    api = backend(cloud)
    try:
        result = reshaper.reshape_node(api, node.name, report_of(node),
                                       snapshot_dir=os.path.join(node.dir, 'snapshots'))
    finally:
        api.close()
    assert result['status'] == 'reshaped', result
    reshaped = tree(cloud, node.name)
    assert reshaped[node.name]['inventories'].get('PCPU') == 8
    moved = allocations(cloud, guests)
    assert all(list(a.values())[0].get('PCPU') == 2 and 'VCPU' not in list(a.values())[0]
               for a in moved.values()), moved
    mark = cloud.placement_log_size()
    start_s = node.start('34')
    time.sleep(2.0)
    assert nova_writes(cloud, mark) == []
    with open(os.path.join(node.dir, 'compute.ready')) as handle:
        assert '"release": "34.' in handle.read()
    assert tree(cloud, node.name) == reshaped
    assert allocations(cloud, guests) == moved
    print('\n%s: nova 33 stopped in %.1f s, nova 34 started and reported in %.1f s, 0 writes'
          % (node.name, stop_s, start_s))


def test_nova_34_alone_on_the_old_layout(cloud, started):
    node = started('pcpu', 'twin-alone-pcpu')
    guests = boot(cloud, node.name, nodes.FLAVORS['pcpu'], 2)
    before = tree(cloud, node.name)
    node.stop()
    novactl.switch(node.dir, '34')
    mark = cloud.placement_log_size()
    try:
        node.start('34')
        outcome = 'started'
    except novactl.NovactlError as exc:
        outcome = 'refused: %s' % exc
    time.sleep(2.0)
    writes = nova_writes(cloud, mark)
    after = tree(cloud, node.name)
    print('\n%s: nova 34 alone on the old layout %s; its writes: %s; root %s -> %s'
          % (node.name, outcome, writes, before[node.name]['inventories'], after[node.name]['inventories']))
    print('guests\' allocations after nova 34 alone: %s' % allocations(cloud, guests))
    # nova alone acts on the old layout (its own start-up reshape of VCPU to PCPU, or a refusal):
    # either way it is not the silent start of the reshaped node
    assert writes or outcome != 'started', 'nova 34 wrote nothing on the old layout: the control does not discriminate'
    if outcome == 'started':
        assert after[node.name]['inventories'].get('PCPU') == 8


def test_vgpu_guest_mdev_reaches_the_tree(cloud, started):
    """A ``resources:VGPU=1`` guest booted through nova-api on nova 33: nova creates its mdev (the
    launcher's fake of the kernel adds it to fakelibvirt and to the node's sysfs), the guest's domain
    XML names it, and the collection's discovery finds the mdev on its GPU held by that guest."""
    node = started('vgpu', 'twin-guest-vgpu')
    guest = boot(cloud, node.name, nodes.FLAVORS['vgpu'], 1, vcpus=1)[0]
    held = allocations(cloud, [guest])[guest]
    providers = tree(cloud, node.name)
    by_uuid = dict((p['uuid'], n) for n, p in providers.items())
    vgpu = [(by_uuid[rp], res['VGPU']) for rp, res in held.items() if 'VGPU' in res]
    assert len(vgpu) == 1 and vgpu[0][1] == 1 and vgpu[0][0] != node.name, held
    spec = nodes.read_spec(node.dir)
    mdevs = [m for gpu in spec['gpus'] for m in gpu['mdevs']]
    assert len(mdevs) == 1 and mdevs[0]['holder'], spec['gpus']
    sysfs = nodes.discovery_paths(node.dir)['rolling_reshape_sysfs_root']
    assert os.path.isdir(os.path.join(sysfs, 'bus', 'mdev', 'devices', mdevs[0]['uuid']))
    report = report_of(node)
    print('\n%s: guest %s holds VGPU on %s; mdev %s; discovery: %s' % (
        node.name, guest, vgpu[0][0], mdevs[0]['uuid'], report.get('gpus') or report))
