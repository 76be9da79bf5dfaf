# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build a simulated fleet of compute nodes for the demo, the molecule scenarios and tests.

One call (:func:`build`) makes, under an output directory::

    hosts/<node>/sys/...                 fake sysfs of each node (tools/fakehost.py)
    hosts/<node>/etc/libvirt/qemu/*.xml  the guests' libvirt domain XML
    hosts/<node>/etc/mdevctl.d/...       every mdev defined persistently (as nova 34 leaves them),
    hosts/<node>/usr/sbin/mdevctl        and a stand-in mdevctl (the pre-flight's mdev check)
    placement.db                         the embedded Placement, seeded with the LEGACY
                                         flat layout (or any Backend given to seed())
    inventory.yml                        an Ansible inventory: group ``compute``, one
                                         local-connection host per node
    fleet.json                           what was built and what the roll should do

The default fleet (12 nodes) is what an operator of a vGPU cloud has before the
upgrade, and covers every path of the roll:

* GPU nodes (``kind: gpu``): 1 to 3 physical GPUs with mdevs held by guests (one
  guest with mdevs on two GPUs), some unheld mdevs, CPU-only guests next to them;
  Placement has ``VGPU: N`` on the root provider and every guest's VGPU allocation
  on the root (nova before Stein).  The roll reshapes them.
* two of the GPU nodes (compute-02, compute-05) are also AMD SEV hosts: Placement has
  ``MEM_ENCRYPTION_CONTEXT`` and ``HW_CPU_X86_AMD_SEV`` on the root (nova before 2025.2)
  and their first guest holds one; the roll moves it to ``<node>_amd_sev`` in the same
  reshape (compute-02 also gets ``<node>_amd_sev_es``).
* one SR-IOV node (``kind: sriov``): an X710 PF with VFs held by guests and a
  passthrough GPU, tracked only in nova's database before the upgrade (nothing in
  Placement); its nova.conf turns ``[pci]report_in_placement`` on, so the roll creates
  nova's PCI providers and moves the guests' PCI allocations there.  It is also the
  pinned-CPU host: ``[compute]cpu_dedicated_set`` is set and instance-00000011 is
  pinned, so its VCPU becomes PCPU on the root in the same reshape.  Reshaped.
* one node already reshaped (``kind: reshaped``): seeded flat, then reshaped by the
  collection's own core while the fleet is built.  The roll skips it.
* moves in flight, in every form nova writes them (each deferred, the rest of the roll
  goes on; inflight.py):
  - ``kind: migrating``: a resize from this GPU node to the ``plain`` node is waiting to
    be confirmed: nova's migration record (its uuid a consumer with no consumer_type, as
    nova 34 writes it) holds the SOURCE allocations here, VGPU included; the instance
    holds the destination's on the plain node, whose host also runs its domain;
  - ``kind: resizing`` (7+ nodes): a resize to the same host: the instance holds the new
    flavour and a consumer of type MIGRATION the old one, both on this node;
  - ``kind: evacuating`` (7+ nodes): a guest holding VGPU here, evacuated from the plain
    node to this one, holds allocations on both trees until the failed source comes back
    (VCPU and MEMORY_MB on the plain node).
  The plain node has nothing to reshape: it is skipped (its remarks name the moves).
* one shared DISK_GB pool (trait MISC_SHARES_VIA_AGGREGATE, same aggregate as every
  node): every guest's DISK_GB lives there and must be carried along.

``nvidia_vfio=N`` appends N NVIDIA vGPU nodes of the vendor-specific VFIO framework
(``kind: nvidia-vfio``, named after the default fleet's last node, so the default fleet
is unchanged): fakehost's ``nvidia_vfio_host``, two L4 GPUs whose typed VFs nova.conf's
``[pci]device_spec`` selects with ``[pci]report_in_placement``; before the upgrade nothing
of them is in Placement (nova tracked the VFs in its database), so the roll creates nova's
PCI providers and moves each guest's vGPU class there.  Reshaped.

``unmapped=[node]`` adds, on a GPU node, a guest whose domain holds no mdev but whose
allocation has VGPU 1 (an unmappable owner): with the strict ownership policy the roll
must stop at that node.

Everything is deterministic (uuid5 names, a seeded random generator), so two
builds give the same fleet.  ``prefix`` is put in front of every provider name and
host name, so several fleets can share one (real) Placement.

Command line::

    python tools/simfleet.py OUT [--nodes 12] [--nvidia-vfio 1] [--unmapped compute-03] [--prefix P]
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import json
import os
import random
import shutil
import sys
import uuid as _uuid

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import fakehost  # noqa: E402  (tools/fakehost.py, next to this file)

NAMESPACE = _uuid.uuid5(_uuid.NAMESPACE_DNS, 'simfleet.placement-upgrade.invalid')
PROJECT_ID = 'f0a1c2d3e4f5461788a9b0c1d2e3f4a5'
USER_ID = '0b1c2d3e4f5a46b7a8c9d0e1f2a3b4c5'
POOL_NAME = 'shared-storage-pool'
POOL_DISK_GB = 40000
SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE'

# Physical GPU models and one vGPU type each: (vendor, product, mdev type, type name, max instances)
GPU_MODELS = [
    ('10de', '1eb8', 'nvidia-222', 'GRID T4-2Q', 8),
    ('10de', '2236', 'nvidia-592', 'NVIDIA A10-4Q', 6),
]
SRIOV_VF_CLASS = 'CUSTOM_PCI_8086_154C'
GPU_KINDS = ('gpu', 'migrating', 'resizing', 'evacuating')
UNMAPPABLE_GUEST = 'instance-000000ff'
PASSTHROUGH_GPU = {'vendor_id': '10de', 'product_id': '25b6'}
PASSTHROUGH_CLASS = 'CUSTOM_PCI_10DE_25B6'


def stable_uuid(*parts):
    return str(_uuid.uuid5(NAMESPACE, ':'.join(str(p) for p in parts)))


# ---------------------------------------------------------------------------
# the plan of the fleet (pure data)

def fleet_plan(nodes=12, prefix='', unmapped=(), seed=7, nvidia_vfio=0):
    """The list of node specs: ``[{name, kind, spec, guests, ...}]`` (no files written).

    Roles by position: the last node is the plain migration target, the one before it
    the migrating GPU node, then the already-reshaped node, then the SR-IOV node, then
    (7+ nodes) the evacuating and the resizing GPU nodes; the rest are GPU nodes.
    Fewer than 5 nodes gives GPU nodes only (plus what fits).  ``nvidia_vfio`` NVIDIA
    VFIO vGPU nodes come after those ``nodes``.
    """
    if nodes < 1:
        raise ValueError('a fleet needs at least one node')
    if nvidia_vfio < 0:
        raise ValueError('nvidia_vfio must be 0 or more, got %d' % nvidia_vfio)
    rng = random.Random(seed)
    names = ['%scompute-%02d' % (prefix, i + 1) for i in range(nodes)]
    kinds = ['gpu'] * nodes
    if nodes >= 5:
        kinds[-1] = 'plain'
        kinds[-2] = 'migrating'
        kinds[-3] = 'reshaped'
        kinds[-4] = 'sriov'
        if nodes >= 7:
            kinds[-5] = 'evacuating'
            kinds[-6] = 'resizing'
    elif nodes >= 3:
        kinds[-1] = 'reshaped'
    unmapped = set(unmapped or ())
    for name in unmapped:
        if name not in names:
            raise ValueError('unmapped node %s is not in the fleet (%s)' % (name, ', '.join(names)))
        if kinds[names.index(name)] not in GPU_KINDS:
            raise ValueError('unmapped node %s must be a GPU node, it is %s' % (name, kinds[names.index(name)]))
    specs = []
    gpu_index = 0
    for name, kind in zip(names, kinds):
        if kind in GPU_KINDS or kind == 'reshaped':
            spec = _gpu_spec(name, gpu_index, rng)
            gpu_index += 1
        elif kind == 'sriov':
            spec = fakehost.default_sriov_host(name)
            # also the fleet's pinned-CPU host: nova.conf of the new release dedicates one
            # thread of every core to pinned guests; instance-00000011 is pinned (Train's
            # VCPU -> PCPU reshape, done in the same pass as the PCI one)
            spec['nova_conf']['compute'] = {'cpu_dedicated_set': '16-31,48-63',
                                            'cpu_shared_set': '0-15,32-47'}
            spec['instances'][0]['pinned_cpus'] = [16, 17]
        else:
            spec = fakehost.default_plain_host(name)
        extra = ['instance-%08x' % (0x100 + i) for i in range(rng.randint(1, 2))]
        spec.setdefault('instances', [])
        spec['instances'] = list(spec['instances']) + [{'name': guest} for guest in extra]
        if name in unmapped:
            # a guest whose domain holds no mdev although its allocation has VGPU 1
            spec['instances'].append({'name': UNMAPPABLE_GUEST})
        specs.append({'name': name, 'kind': kind, 'spec': spec, 'cpu_only': extra,
                      'unmapped': name in unmapped})
    if nodes >= 5:
        source, target = specs[-2], specs[-1]
        source['migrates_to'] = target['name']
        guest = _first_guest(source)
        # the destination's host runs the resized guest's domain (same uuid)
        target['spec']['instances'].append(
            {'name': guest, 'uuid': fakehost.instance_uuid(source['spec']['hostname'], guest)})
    if nodes >= 7:
        specs[-5]['evacuated_from'] = specs[-1]['name']
    for index in range(nodes, nodes + nvidia_vfio):
        name = '%scompute-%02d' % (prefix, index + 1)
        specs.append({'name': name, 'kind': 'nvidia-vfio', 'spec': fakehost.nvidia_vfio_host(name),
                      'cpu_only': ['instance-00000063'], 'unmapped': False})
    return specs


def _first_guest(item):
    return sorted(i['name'] for i in item['spec']['instances'])[0]


# GPU nodes (by GPU-node index) that are also AMD SEV hosts: compute-02 (SEV and SEV-ES),
# compute-05 (SEV only)
SEV_GPU_NODES = (1, 4)


def _gpu_spec(name, index, rng):
    vendor, product, mdev_type, type_name, max_inst = GPU_MODELS[index % len(GPU_MODELS)]
    gpu_count = (2, 1, 3)[index % 3]
    types = {mdev_type: {'name': type_name, 'max_instances': max_inst, 'device_api': 'vfio-pci',
                         'description': 'num_heads=4, frl_config=60'}}
    gpus = []
    for g in range(gpu_count):
        gpus.append({'address': '0000:%02x:00.0' % (0x84 + g), 'vendor_id': vendor, 'product_id': product,
                     'numa_node': g % 2, 'mdev_types': types, 'mdevs': []})
    guests = []
    serial = 1
    # guest 1 on GPU A with two mdevs; a guest spanning GPU A and B when there are two;
    # then one or two single-mdev guests per further GPU
    plan = [[(0, 2)]]
    if gpu_count >= 2:
        plan.append([(0, 1), (1, 1)])
    for g in range(1, gpu_count):
        for _i in range(rng.randint(1, 2)):
            plan.append([(g, 1)])
    if gpu_count == 1:
        plan.append([(0, 1)])
    for holds in plan:
        guest = 'instance-%08x' % serial
        serial += 1
        guests.append(guest)
        for g, count in holds:
            for _i in range(count):
                gpus[g]['mdevs'].append({'type': mdev_type, 'holder': guest})
    # an unheld mdev left behind by a deleted guest, on every other node
    if index % 2 == 1:
        gpus[0]['mdevs'].append({'type': mdev_type, 'holder': None})
    spec = {
        'hostname': name,
        'gpus': gpus,
        'numa_cells': [dict(c) for c in fakehost.DEFAULT_NUMA],
        'instances': [{'name': g} for g in guests],
        'nova_conf': {'devices': {'enabled_mdev_types': mdev_type}},
    }
    if index in SEV_GPU_NODES:
        # an AMD SEV host (nova < 2025.2: MEM_ENCRYPTION_CONTEXT on the root): its first guest
        # runs with memory encryption; the second SEV node's kernel has no SEV-ES
        sev_es = index == SEV_GPU_NODES[0]
        spec['sev'] = fakehost.default_sev_host(name, sev_es=sev_es)['sev']
        spec['instances'][0]['mem_encryption'] = 'amd-sev'
    return spec


# ---------------------------------------------------------------------------
# files

def build_hosts(out_dir, specs):
    """Write every node's fake host; return {node: fakehost result}."""
    built = {}
    for item in specs:
        root = os.path.join(out_dir, 'hosts', item['name'])
        built[item['name']] = fakehost.build_host(root, item['spec'], clean=True)
        built[item['name']].update(write_mdevctl(root, built[item['name']]))
    return built


#: the stand-in for mdevctl on a simulated node: ``list --defined`` (``-d``) prints the
#: definitions of <node>/etc/mdevctl.d as mdevctl does (uuid parent type start); nothing else
_FAKE_MDEVCTL = '''#!/usr/bin/env python3
# A stand-in for mdevctl on a node simulated by tools/simfleet.py: `mdevctl list --defined`
# lists the definitions of this node's etc/mdevctl.d; no other command is implemented.
import json, os, sys
store = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'etc', 'mdevctl.d')
if sys.argv[1:2] != ['list'] or not set(sys.argv[2:]) & {'--defined', '-d'}:
    sys.exit('this stand-in for mdevctl implements only: mdevctl list --defined')
for parent in sorted(os.listdir(store)) if os.path.isdir(store) else []:
    for uuid in sorted(os.listdir(os.path.join(store, parent))):
        with open(os.path.join(store, parent, uuid)) as handle:
            doc = json.load(handle)
        print(uuid, parent, doc['mdev_type'], doc.get('start', 'manual'))
'''


def write_mdevctl(root, host):
    """Every mdev of a built fake host defined persistently, as nova 34 leaves the mdevs it creates
    (``<root>/etc/mdevctl.d/<parent>/<uuid>``, start ``auto``), and a stand-in ``mdevctl`` at
    ``<root>/usr/sbin/mdevctl``; returns ``{mdevctl_dir, mdevctl}``."""
    store = os.path.join(root, 'etc', 'mdevctl.d')
    for uuid, mdev in sorted((host.get('mdevs') or {}).items()):
        parent_dir = os.path.join(store, mdev['gpu'])
        if not os.path.isdir(parent_dir):
            os.makedirs(parent_dir)
        with open(os.path.join(parent_dir, uuid), 'w') as handle:
            json.dump({'mdev_type': mdev['type'], 'start': 'auto', 'attrs': []}, handle, indent=2, sort_keys=True)
    sbin = os.path.join(root, 'usr', 'sbin')
    if not os.path.isdir(sbin):
        os.makedirs(sbin)
    command = os.path.join(sbin, 'mdevctl')
    with open(command, 'w') as handle:
        handle.write(_FAKE_MDEVCTL)
    os.chmod(command, 0o755)
    return {'mdevctl_dir': store, 'mdevctl': command}


def write_inventory(out_dir, fleet, extra_vars=None):
    """inventory.yml: group compute, one local-connection host per node, plus the fleet's vars."""
    hosts = {}
    for node in fleet['nodes']:
        host = {
            'rolling_reshape_sysfs_root': node['sysfs_root'],
            'rolling_reshape_domain_xml_glob': node['domain_xml_glob'],
            'rolling_reshape_nova_conf': node.get('nova_conf') or '',
        }
        # the pre-flight's mdev check reads the simulated node's mdevctl, not the controller's
        if node.get('mdevctl_dir'):
            host['preflight_mdevctl_dir'] = node['mdevctl_dir']
            host['preflight_mdevctl'] = node['mdevctl']
        if node.get('domain_capabilities'):
            host['rolling_reshape_domain_capabilities'] = node['domain_capabilities']
        if node['provider'] != node['name']:
            host['rolling_reshape_provider_name'] = node['provider']
        if node.get('pci_filters'):
            host['rolling_reshape_pci_filters'] = node['pci_filters']
        hosts[node['name']] = host
    group_vars = {
        'ansible_connection': 'local',
        'ansible_python_interpreter': '{{ ansible_playbook_python }}',
        # the simulated nodes are files of this user: no root needed to read them
        'rolling_reshape_become': False,
    }
    group_vars.update(extra_vars or {})
    doc = {'all': {'children': {'compute': {'hosts': hosts, 'vars': group_vars}}}}
    path = os.path.join(out_dir, 'inventory.yml')
    with open(path, 'w') as handle:
        handle.write('# Generated by tools/simfleet.py: a simulated fleet of %d compute nodes.\n'
                     % len(fleet['nodes']))
        handle.write(_yaml(doc))
    return path


def _yaml(doc):
    try:
        import yaml
    except ImportError:   # JSON is YAML
        return json.dumps(doc, indent=2, sort_keys=True) + '\n'
    return yaml.safe_dump(doc, default_flow_style=False, sort_keys=True)


# ---------------------------------------------------------------------------
# placement

def _inv(total, **fields):
    rec = {'total': total, 'reserved': 0, 'min_unit': 1, 'max_unit': total, 'step_size': 1,
           'allocation_ratio': 1.0}
    rec.update(fields)
    return rec


def _gpu_units(spec):
    total = 0
    for gpu in spec.get('gpus', []):
        for info in gpu['mdev_types'].values():
            total += int(info.get('max_instances', 8))
    return total


def _provider(backend, name, uuid, parent=None):
    found = backend.list_providers(name=name)
    if found:
        return found[0]
    return backend.create_provider(name, uuid=uuid, parent_provider_uuid=parent)


def _set_inventories(backend, uuid, inventories):
    gen = backend.get_inventories(uuid)['resource_provider_generation']
    backend.set_inventories(uuid, gen, inventories)


def _set_traits(backend, uuid, traits):
    gen = backend.get_provider_traits(uuid)['resource_provider_generation']
    backend.set_provider_traits(uuid, gen, sorted(traits))


def _set_aggregates(backend, uuid, aggregates):
    gen = backend.get_aggregates(uuid)['resource_provider_generation']
    backend.set_aggregates(uuid, gen, sorted(aggregates))


def _put(backend, consumer, allocations, consumer_type='INSTANCE'):
    current = backend.get_allocations(consumer)
    backend.put_allocations(consumer, {
        'allocations': allocations,
        'project_id': PROJECT_ID,
        'user_id': USER_ID,
        'consumer_generation': current.get('consumer_generation') if current.get('allocations') else None,
        'consumer_type': consumer_type,
    })


def _put_untyped(backend, root_uuid, consumer, allocations):
    """Write a new consumer as nova 34 does: no consumer_type (Placement reports ``unknown``).

    Through POST /reshaper, which the backends send at microversion 1.37 (before
    consumer types), naming the root with its inventory unchanged.
    """
    inv = backend.get_inventories(root_uuid)
    backend.reshape({
        'inventories': {root_uuid: {'resource_provider_generation': inv['resource_provider_generation'],
                                    'inventories': inv['inventories']}},
        'allocations': {consumer: {'allocations': allocations, 'project_id': PROJECT_ID,
                                   'user_id': USER_ID, 'consumer_generation': None}},
    })


def seed_placement(backend, fleet, log=None):
    """Seed ``backend`` (any Backend: embedded or a real Placement) with the legacy layout.

    Returns the fleet with the provider uuids filled in.  The ``reshaped`` node is
    reshaped at the end with the collection's core (snapshots into
    ``fleet['build_snapshot_dir']``).
    """
    log = log or (lambda _msg: None)
    rng = random.Random(fleet.get('seed', 7))
    prefix = fleet.get('prefix', '')
    aggregate = stable_uuid(prefix, 'aggregate', 'storage')
    pool = _provider(backend, prefix + POOL_NAME, stable_uuid(prefix, 'provider', POOL_NAME))
    # 40 TB for the default dozen nodes; 500 GB a node for a large simulated fleet (benchmarks)
    pool_total = max(POOL_DISK_GB, 500 * len(fleet['nodes']))
    _set_inventories(backend, pool['uuid'], {'DISK_GB': _inv(pool_total, max_unit=2000, reserved=100)})
    _set_traits(backend, pool['uuid'], [SHARING_TRAIT])
    _set_aggregates(backend, pool['uuid'], [aggregate])
    fleet['pool'] = {'name': pool['name'], 'uuid': pool['uuid'], 'aggregate': aggregate}
    roots = {}
    for node in fleet['nodes']:
        root = _provider(backend, node['provider'], stable_uuid(prefix, 'provider', node['provider']))
        roots[node['name']] = root['uuid']
        node['uuid'] = root['uuid']
        cpus = sum(len(fakehost.cpu_ids(c['cpus'])) for c in node['spec'].get('numa_cells', [])) or 32
        memory = sum(int(c['memory_mb']) for c in node['spec'].get('numa_cells', [])) or 65536
        inventories = {
            'VCPU': _inv(cpus, allocation_ratio=4.0, max_unit=cpus),
            'MEMORY_MB': _inv(memory, reserved=4096, max_unit=memory, allocation_ratio=1.0),
        }
        units = _gpu_units(node['spec'])
        if units:
            inventories['VGPU'] = _inv(units)
        sev = node['spec'].get('sev')
        if sev:
            inventories['MEM_ENCRYPTION_CONTEXT'] = _inv(int(sev.get('max_guests', 15)), max_unit=1)
        # PCI devices (the SR-IOV node's VFs, the passthrough A2) are not in Placement before
        # the upgrade: nova tracked them in its own database; nova 34 with
        # [pci]report_in_placement reports them on children and heals the allocations.
        _set_inventories(backend, root['uuid'], inventories)
        _set_traits(backend, root['uuid'], ['COMPUTE_NODE'] + (['HW_CPU_X86_AMD_SEV'] if sev else []))
        _set_aggregates(backend, root['uuid'], [aggregate])
        log('seeded provider %s (%s)' % (node['provider'], ', '.join(
            '%s %d' % (rc, inv['total']) for rc, inv in sorted(inventories.items()))))
    for node in fleet['nodes']:
        root_uuid = roots[node['name']]
        held = _held_units(node)
        sev_guests = set(i['name'] for i in node['spec'].get('instances', []) if i.get('mem_encryption'))
        consumers = []
        for guest, consumer in sorted(node['instances'].items()):
            resources = {'VCPU': rng.choice((2, 4, 8)), 'MEMORY_MB': rng.choice((4096, 8192, 16384))}
            for rc, n in held.get(guest, {}).items():
                resources[rc] = n
            if guest in sev_guests:
                resources['MEM_ENCRYPTION_CONTEXT'] = 1
            allocations = {root_uuid: {'resources': resources},
                           pool['uuid']: {'resources': {'DISK_GB': rng.choice((20, 40, 80))}}}
            if guest == UNMAPPABLE_GUEST:
                resources['VGPU'] = 1
                node['unmappable_consumer'] = consumer
            if node.get('migrates_to') and guest == node['migrating_guest']:
                # nova (Queens+): the migration record's uuid holds the source allocations,
                # written without a consumer_type (nova 34); the instance holds the
                # destination's (seeded with the plain node, whose host runs its domain)
                migration = stable_uuid(prefix, 'migration', node['name'])
                _put_untyped(backend, root_uuid, migration, allocations)
                node['migration_consumer'] = migration
                consumers.append(migration)
                continue
            if node['kind'] == 'resizing' and guest == node['resizing_guest']:
                # a resize to the same host: the MIGRATION consumer keeps the old flavour here
                old = dict(resources, VCPU=max(1, resources['VCPU'] // 2))
                migration = stable_uuid(prefix, 'migration', node['name'])
                _put(backend, migration, {root_uuid: {'resources': old},
                                          pool['uuid']: {'resources': {'DISK_GB': 20}}},
                     consumer_type='MIGRATION')
                node['migration_consumer'] = migration
                consumers.append(migration)
            if node.get('evacuated_from') and guest == node['evacuated_guest']:
                # evacuated from the plain node, which has not come back: both trees
                elsewhere = {'VCPU': resources['VCPU'], 'MEMORY_MB': resources['MEMORY_MB']}
                allocations[roots[node['evacuated_from']]] = {'resources': elsewhere}
            _put(backend, consumer, allocations)
            consumers.append(consumer)
        node['consumers'] = consumers
        log('seeded %d consumers on %s' % (len(consumers), node['provider']))
    for node in fleet['nodes']:
        if node['kind'] == 'reshaped':
            _reshape_now(backend, node, fleet, log)
    return fleet


def _held_units(node):
    """{guest name: {RC: units}} the guest's devices stand for, from the spec."""
    held = {}
    spec = node['spec']
    for gpu in spec.get('gpus', []):
        for mdev in gpu.get('mdevs', []):
            if mdev.get('holder'):
                slot = held.setdefault(mdev['holder'], {})
                slot['VGPU'] = slot.get('VGPU', 0) + 1
    return held


def _vf_class(spec, pf, index):
    """The class of VF ``index`` of ``pf``: an NVIDIA vGPU VF's is the resource_class of the
    device_spec naming its address (the fake's own nova.conf), a NIC's the X710 VF's."""
    if pf.get('nvidia_vgpu') is None:
        return SRIOV_VF_CLASS
    addresses = pf.get('vf_addresses') or fakehost.default_vf_addresses(pf['address'], int(pf.get('num_vfs', 8)))
    for text in spec['nova_conf']['pci']['device_spec']:
        item = json.loads(text)
        if item.get('address') == addresses[int(index)]:
            return item['resource_class']
    raise ValueError('no device_spec of %s names VF %s' % (spec['hostname'], addresses[int(index)]))


def pci_held_units(node):
    """{guest name: {RC: units}} of the PCI devices the guests hold (healed by the reshape)."""
    held = {}
    spec = node['spec']
    for pf in spec.get('sriov_pfs', []):
        for index, guest in (pf.get('vf_holders') or {}).items():
            slot = held.setdefault(guest, {})
            rc = _vf_class(spec, pf, index)
            slot[rc] = slot.get(rc, 0) + 1
    for dev in spec.get('pci_devices', []):
        if dev.get('holder'):
            slot = held.setdefault(dev['holder'], {})
            slot[PASSTHROUGH_CLASS] = slot.get(PASSTHROUGH_CLASS, 0) + 1
    return held


def _reshape_now(backend, node, fleet, log):
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery, reshaper
    devices = discovery.discover(node['sysfs_root'], domain_xml_glob=node['domain_xml_glob'],
                                 hostname=node['provider'], nova_conf=node.get('nova_conf'),
                                 domain_capabilities=node.get('domain_capabilities'))
    result = reshaper.reshape_node(backend, node['provider'], devices,
                                   snapshot_dir=fleet['build_snapshot_dir'], log=log)
    if result['status'] != 'reshaped' or not result.get('verified'):
        raise RuntimeError('could not pre-reshape %s: %s' % (node['provider'], result.get('msg')))
    log('pre-reshaped %s (the roll must skip it)' % node['provider'])


# ---------------------------------------------------------------------------
# the whole thing

def describe(out_dir, specs, built, prefix='', seed=7):
    """The fleet description (fleet.json) from the specs and the built hosts."""
    nodes = []
    for item in specs:
        host = built[item['name']]
        instances = dict(host['instances'])
        node = {
            'name': item['name'],
            'provider': item['name'],
            'kind': item['kind'],
            'sysfs_root': host['sysfs_root'],
            'domain_xml_glob': host['domain_xml_glob'],
            'nova_conf': host['nova_conf'],
            'domain_capabilities': host.get('domain_capabilities'),
            'mdevctl_dir': host.get('mdevctl_dir'),
            'mdevctl': host.get('mdevctl'),
            'instances': instances,
            'spec': item['spec'],
            'unmapped': item['unmapped'],
            'gpus': len(item['spec'].get('gpus', [])),
            'vgpu_held': sum(n.get('VGPU', 0) for n in _held_units({'spec': item['spec']}).values()),
        }
        if item.get('migrates_to'):
            node['migrates_to'] = item['migrates_to']
            node['migrating_guest'] = _first_guest(item)
        if item['kind'] == 'resizing':
            node['resizing_guest'] = _first_guest(item)
        if item.get('evacuated_from'):
            node['evacuated_from'] = item['evacuated_from']
            # a guest holding VGPU: the reshape moves it, so its allocations on the source's tree
            # defer the node (a guest the reshape leaves alone would not: it reads only the tree
            # part of such a consumer)
            node['evacuated_guest'] = sorted(g for g, units in _held_units(item).items() if units.get('VGPU'))[0]
        nodes.append(node)
    # each node's verdict, as the fleet plan gives it (a real roll at serial 1 stops at the
    # first 'failed' node: the nodes after it are then not reached)
    expected = {}
    for node in nodes:
        if node['unmapped']:
            expected[node['name']] = 'failed'
        elif node['kind'] in ('migrating', 'resizing', 'evacuating'):
            expected[node['name']] = 'deferred'
        elif node['kind'] in ('gpu', 'sriov', 'nvidia-vfio'):
            expected[node['name']] = 'reshaped'
        else:
            expected[node['name']] = 'noop'
    return {
        'format': 1,
        'out_dir': out_dir,
        'prefix': prefix,
        'seed': seed,
        'nodes': nodes,
        'expected': expected,
        'embedded_db': os.path.join(out_dir, 'placement.db'),
        'build_snapshot_dir': os.path.join(out_dir, 'build-snapshots'),
        'inventory': os.path.join(out_dir, 'inventory.yml'),
    }


def build(out_dir, nodes=12, prefix='', unmapped=(), seed=7, backend=None, clean=True,
          inventory_vars=None, log=None, nvidia_vfio=0):
    """Build the fleet under ``out_dir`` and seed Placement; return the fleet description.

    ``backend``: where to seed (default: a new embedded store at ``out_dir/placement.db``).
    ``inventory_vars``: extra group variables for inventory.yml (e.g. ``placement_backend``).
    """
    out_dir = os.path.abspath(out_dir)
    if clean:
        for sub in ('hosts', 'build-snapshots'):
            path = os.path.join(out_dir, sub)
            if os.path.isdir(path):
                shutil.rmtree(path)
        for name in ('placement.db', 'placement.db-wal', 'placement.db-shm', 'inventory.yml', 'fleet.json'):
            path = os.path.join(out_dir, name)
            if os.path.exists(path):
                os.unlink(path)
    if not os.path.isdir(out_dir):
        os.makedirs(out_dir)
    specs = fleet_plan(nodes=nodes, prefix=prefix, unmapped=unmapped, seed=seed, nvidia_vfio=nvidia_vfio)
    built = build_hosts(out_dir, specs)
    fleet = describe(out_dir, specs, built, prefix=prefix, seed=seed)
    own = backend is None
    if own:
        from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
        backend = EmbeddedBackend(fleet['embedded_db'])
    else:
        fleet['embedded_db'] = None
    try:
        seed_placement(backend, fleet, log=log)
    finally:
        if own:
            backend.close()
    group_vars = {}
    if fleet['embedded_db']:
        group_vars['placement_backend'] = {'embedded_db': fleet['embedded_db']}
    group_vars.update(inventory_vars or {})
    write_inventory(out_dir, fleet, group_vars)
    with open(os.path.join(out_dir, 'fleet.json'), 'w') as handle:
        json.dump(_public(fleet), handle, indent=1, sort_keys=True)
        handle.write('\n')
    return fleet


def _public(fleet):
    out = dict(fleet)
    out['nodes'] = [dict((k, v) for k, v in n.items() if k != 'spec') for n in fleet['nodes']]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description='Build a simulated fleet of compute nodes (fake sysfs, '
                                                 'libvirt XML, embedded Placement in the legacy layout).')
    parser.add_argument('out', help='output directory')
    parser.add_argument('--nodes', type=int, default=12)
    parser.add_argument('--nvidia-vfio', type=int, default=0, metavar='N',
                        help='append N NVIDIA vGPU nodes of the vendor-specific VFIO framework (R580+)')
    parser.add_argument('--prefix', default='', help='prefix of every provider and host name')
    parser.add_argument('--unmapped', action='append', default=[],
                        help='a GPU node that gets a VGPU consumer no guest explains (repeatable)')
    parser.add_argument('--seed', type=int, default=7)
    parser.add_argument('--backend-json', metavar='FILE',
                        help='seed a real Placement instead of the embedded store: a JSON file holding the '
                             'modules\' backend options (cloud/auth...), or an object with them under "backend"; '
                             'the inventory\'s placement_backend is set to them')
    parser.add_argument('-q', '--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = None if args.quiet else (lambda msg: sys.stderr.write('simfleet: %s\n' % msg))
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import PlacementError
    backend, inventory_vars = None, None
    try:
        if args.backend_json:
            with open(args.backend_json) as handle:
                options = json.load(handle)
            options = options.get('backend', options)
            from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import factory
            backend = factory.get_backend(options)
            inventory_vars = {'placement_backend': options}
        fleet = build(args.out, nodes=args.nodes, prefix=args.prefix, unmapped=args.unmapped,
                      seed=args.seed, log=log, backend=backend, inventory_vars=inventory_vars,
                      nvidia_vfio=args.nvidia_vfio)
    except (ValueError, OSError, PlacementError) as exc:
        parser.exit(2, 'simfleet: %s\n' % exc)
    finally:
        if backend is not None:
            backend.close()
    print(json.dumps({'inventory': fleet['inventory'], 'embedded_db': fleet['embedded_db'],
                      'expected': fleet['expected']}, indent=2, sort_keys=True))
    return 0


if __name__ == '__main__':
    sys.exit(main())
