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
3. ``test_nova_34_alone_on_the_old_layout``: the control run, per kind: a node with a guest of the kind's
   flavor on nova 33, never reshaped, stopped, switched to nova 34 (venv and nova.conf) and started: what
   nova alone does (started or refused, its writes counted from the same log, the tree and the guest's
   allocation before -> after), asserted per kind as nova's code does it (see the test).

``CLOUD_TWIN_COMPUTE_KINDS`` (comma-separated) limits the kinds of 1. and 3. (default: every kind).
"""

import os
import time

import pytest

import nodes
import novactl
import test_cloud_twin_roll as roll  # its SEV image helper and PCI class (the 6-node roll)

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


def boot(cloud, host, extra_specs, count, vcpus=2, image_id=None):
    """``count`` guests through nova-api (openstacksdk, the operator) on ``host``; their ids."""
    import cloud as cloud_mod
    conn = cloud.connect('operator')
    flavor = conn.compute.create_flavor(name='f-%s-%d' % (host, time.monotonic_ns() % 100000), ram=256,
                                        vcpus=vcpus, disk=1)
    conn.compute.create_flavor_extra_specs(flavor, extra_specs)
    ids = []
    for index in range(count):
        server = conn.compute.create_server(name='%s-g%d' % (host, index), image_id=image_id or cloud_mod.IMAGE_ID,
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


#: the control run's guest per kind: its vCPUs (the flavor's extra specs are nodes.FLAVORS[kind])
ALONE_VCPUS = {'vgpu': 1, 'pci': 1, 'pcpu': 2, 'sev': 2, 'mixed': 2, 'new': 2}
OWNER_NOVA = 'OWNER_NOVA'


@pytest.fixture(scope='module')
def sev_image(cloud):
    """nova's test image the SEV guest boots from, given the properties nova requires of a
    memory-encrypted guest (through nova's image metadata API, as the 6-node roll does)."""
    roll._set_image_properties(cloud.connect('operator'), roll.SEV_IMAGE, roll.SEV_PROPERTIES)
    return roll.SEV_IMAGE


@pytest.fixture(scope='module')
def pci_alias(cloud):
    """nova-api turns a flavor's ``pci_passthrough:alias`` into the guest's PCI request only with the
    alias in its own nova.conf (the 6-node roll's RollCloud has it from its start): the session cloud's
    nova.conf gets the pci node's alias ``a2`` and nova-api is reloaded (uWSGI's graceful reload).  The
    guest is forced to its host (``nova:<host>``), so the scheduler runs no filter on it."""
    with open(cloud.nova_conf) as handle:
        text = handle.read()
    if nodes.PCI_ALIAS not in text:
        with open(cloud.nova_conf, 'a') as handle:
            handle.write('\n[pci]\nalias = %s\n' % nodes.PCI_ALIAS)
        cloud.nova_api.reload()
    return 'a2'


def named_writes(writes, providers):
    """nova's writes to the node's providers (``providers``: a :func:`tree`), their uuids replaced by their
    names, and its writes to no provider (POST /reshaper, /resource_providers, /resource_classes)."""
    names = dict((p['uuid'], n) for n, p in providers.items())
    out = []
    for method, uri, status in writes:
        parts = uri.split('/')
        if len(parts) > 2 and parts[1] == 'resource_providers':
            if parts[2] not in names:
                continue        # another node's provider (make cloud-twin: the other tests' nodes run on)
            parts[2] = names[parts[2]]
        out.append((method, '/'.join(parts), status))
    return out


def named_allocations(held, providers):
    names = dict((p['uuid'], n) for n, p in providers.items())
    return dict((c, dict((names.get(rp, rp), res) for rp, res in a.items())) for c, a in held.items())


def trait_changes(before, after):
    """{provider: (added, removed)} of every provider whose traits changed (a new provider: all added)."""
    out = {}
    for name, rp in after.items():
        old = set(before[name]['traits']) if name in before else set()
        added, removed = set(rp['traits']) - old, old - set(rp['traits'])
        if added or removed:
            out[name] = (sorted(added), sorted(removed))
    return out


@pytest.mark.parametrize('kind', KINDS)
def test_nova_34_alone_on_the_old_layout(cloud, started, request, kind):
    """The control run: the node of ``kind`` with its guest on nova 33, stopped, switched to nova 34's
    venv and nova.conf (novactl.switch: the deployment tool's step) and started, without the collection.
    What nova 34 does alone, from nova's code (.venv-nova): its resource tracker adds ``OWNER_NOVA``
    to the root at every update (compute/resource_tracker.py ``_get_traits``) and its libvirt driver to
    the pGPU and SEV children (virt/libvirt/driver.py); on the legacy vcpu_pin_set, with
    ``cpu_dedicated_set`` now, the driver raises ReshapeNeeded at start-up
    (``_update_provider_tree_for_pcpu``) and moves the pinned guests' VCPU to PCPU in one POST
    /reshaper; with ``report_in_placement`` turned on, the PCI translator
    (compute/pci_placement_translator.py) adds a child per device and heals the guest's device
    allocation, also through POST /reshaper.  test_nova_34_on_our_reshaped_node_writes_nothing is the
    collection's case: zero writes by nova."""
    name = 'twin-alone-%s' % kind
    image = request.getfixturevalue('sev_image') if kind == 'sev' else None
    if kind == 'pci':
        request.getfixturevalue('pci_alias')
    node = started(kind, name)
    guests = boot(cloud, name, nodes.FLAVORS[kind], 1, vcpus=ALONE_VCPUS[kind], image_id=image)
    before = tree(cloud, name)
    held_before = named_allocations(allocations(cloud, guests), before)
    # what the collection would do here (its planner in check mode, on the nova.conf nova 34 runs with)
    api = backend(cloud)
    try:
        plan = reshaper.reshape_node(api, name, report_of(node), snapshot_dir=os.path.join(node.dir, 'snapshots'),
                                     check_mode=True)
    finally:
        api.close()
    node.stop()
    novactl.switch(node.dir, '34')
    mark = cloud.placement_log_size()
    try:
        node.start('34')
        outcome = 'started'
    except novactl.NovactlError as exc:
        outcome = 'refused: %s' % exc
    time.sleep(2.0)
    after = tree(cloud, name)
    writes = named_writes(nova_writes(cloud, mark), after)
    held_after = named_allocations(allocations(cloud, guests), after)
    traits = trait_changes(before, after)
    inventories = dict((n, (before[n]['inventories'] if n in before else None, p['inventories']))
                       for n, p in after.items() if n not in before or before[n]['inventories'] != p['inventories'])
    guest = guests[0]
    print('\n%s (%s): the collection\'s plan %s; nova 34 alone %s; %d writes: %s; traits changed: %s; '
          'inventories changed: %s; the guest\'s allocation %s -> %s' % (
              kind, name, plan['status'], outcome, len(writes), ', '.join('%s %s %d' % w for w in writes) or 'none',
              traits, inventories, held_before[guest], held_after[guest]))
    novactl.stop(node.dir)

    # the collection's reshaped node: nova 34 writes nothing; nova alone writes on every kind
    assert outcome == 'started', outcome
    assert writes, 'nova 34 wrote nothing on the old layout: the control does not discriminate'
    assert all(status < 400 for _m, _u, status in writes), writes
    trait_puts = sorted(u for m, u, _s in writes if m == 'PUT' and u.endswith('/traits'))
    others = sorted((m, u) for m, u, _s in writes if not (m == 'PUT' and u.endswith('/traits')))
    # nova 34 adds OWNER_NOVA (nova 33 has no such trait) to every provider it owns, one PUT each
    assert trait_puts == sorted('/resource_providers/%s/traits' % n for n in after), writes
    assert all(OWNER_NOVA in after[n]['traits'] and OWNER_NOVA not in before.get(n, {'traits': []})['traits']
               for n in after), traits
    if kind in ('vgpu', 'sev', 'new'):
        # nova 33 already lays these as nova 34 does: the trait writes, nothing else
        assert others == [], writes
        assert traits == dict((n, ([OWNER_NOVA], [])) for n in before), traits
        assert inventories == {} and held_after == held_before, (inventories, held_before, held_after)
    if kind in ('pcpu', 'mixed'):
        # nova's own start-up reshape: VCPU 8 -> PCPU 8 on the root, the pinned guest's VCPU -> PCPU
        assert others == [('POST', '/reshaper')], writes
        root = inventories[name]
        assert root[0].get('VCPU') == 8 and 'PCPU' not in root[0], root
        assert root[1].get('PCPU') == 8 and 'VCPU' not in root[1], root
        moved = held_after[guest][name]
        assert moved.get('PCPU') == 2 and 'VCPU' not in moved and held_before[guest][name].get('VCPU') == 2, \
            (held_before, held_after)
        if kind == 'mixed':
            gpus = [n for n, r in held_after[guest].items() if 'VGPU' in r]
            assert gpus and gpus == [n for n, r in held_before[guest].items() if 'VGPU' in r], (held_before, held_after)
    if kind == 'pci':
        # report_in_placement turned on: a child per device, the guest's device allocation healed
        devices = sorted(n for n in after if n not in before)
        assert devices == sorted('%s_%s' % (name, d['address'].upper())
                                 for d in nodes.read_spec(node.dir)['pci_devices']), after
        assert all(after[d]['inventories'] == {roll.PCI_CLASS: 1} and 'COMPUTE_MANAGED_PCI_DEVICE' in after[d]['traits']
                   for d in devices), after
        # nova's report client makes sure of the device's custom class (PUT /resource_classes) before its reshape
        classes = set(u for m, u in others if u.startswith('/resource_classes/'))
        assert classes == set(['/resource_classes/' + roll.PCI_CLASS]), writes
        assert [w for w in others if not w[1].startswith('/resource_classes/')] == sorted(
            [('POST', '/resource_providers')] * len(devices) + [('POST', '/reshaper')]), writes
        healed = [n for n, r in held_after[guest].items() if roll.PCI_CLASS in r]
        assert len(healed) == 1 and healed[0] in devices and all(roll.PCI_CLASS not in r for r in held_before[guest].values()), \
            (held_before, held_after)
    if kind == 'new':
        # already in the layout: the collection plans nothing here (the roll skips the node), so after the
        # roll nova 34 starts on this very tree: nova alone and the collection end the same
        assert plan['status'] == 'noop' and not (plan.get('moved') or {}).get('consumers'), plan
    elif kind in ('pcpu', 'mixed', 'pci'):
        # the collection would reshape these itself before nova 34 starts (then nova writes nothing)
        assert plan['status'] != 'noop', plan


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
