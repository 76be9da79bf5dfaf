# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Builders shared by the reshape tests (unit on the embedded store, integration on the
real Placement): a flat compute node as nova left it before the VGPU reshape.

Not a test module (no tests in it); the integration tests import it too.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os
import sys
import uuid as _uuid

_TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'tools')
if _TOOLS not in sys.path:
    sys.path.insert(0, _TOOLS)

import fakehost  # noqa: E402

from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import discovery
from ansible_collections.placement.upgrade.plugins.module_utils._placement.rules import allocations as allocation_rules  # noqa: E402
from ansible_collections.placement.upgrade.plugins.module_utils._placement.rules import inventory as inventory_rules  # noqa: E402

PROJECT = '6f2b1cf6-8a1e-4c4f-9d52-1d0b8e1c2a01'
USER = '0c3f6f2e-2a2b-4d8e-8c89-51d5c7b5a1c2'
SHARING = 'MISC_SHARES_VIA_AGGREGATE'

VCPU_PER_GUEST = 2
MEM_PER_GUEST = 2048
DISK_PER_GUEST = 20


def report_for(tmp_path, spec, pci_filters=None, nova=False):
    """Build a fake host from a fakehost spec and discover it: the device report.

    ``nova``: also read the nova.conf the spec carries (the layout is then nova 34's).
    """
    built = fakehost.build_host(str(tmp_path), spec, clean=True)
    return discovery.discover(built['sysfs_root'], domain_xml_glob=built['domain_xml_glob'],
                              hostname=spec.get('hostname'), pci_filters=pci_filters,
                              nova_conf=built['nova_conf'] if nova else None)


def gpu_report(tmp_path, hostname, spare_mdevs=0):
    return report_for(tmp_path, fakehost.default_gpu_host(name=hostname, spare_mdevs=spare_mdevs))


def _gen(backend, uuid):
    return backend.get_provider(uuid)['generation']


def make_provider(backend, name, inventories=None, traits=None, aggregates=None, parent=None):
    uuid = str(_uuid.uuid4())
    backend.create_provider(name, uuid=uuid, parent_provider_uuid=parent)
    if inventories:
        backend.set_inventories(uuid, _gen(backend, uuid), inventories)
    if traits:
        backend.set_provider_traits(uuid, _gen(backend, uuid), traits)
    if aggregates:
        backend.set_aggregates(uuid, _gen(backend, uuid), aggregates)
    return uuid


def put(backend, consumer, allocations, consumer_type='INSTANCE'):
    current = backend.get_allocations(consumer)
    backend.put_allocations(consumer, {
        'allocations': allocations,
        'project_id': PROJECT,
        'user_id': USER,
        'consumer_generation': current.get('consumer_generation'),
        'consumer_type': consumer_type,
    })


def put_untyped(backend, root, consumer, allocations):
    """Write ``consumer`` as nova 34 writes it: no consumer_type (Placement reports ``unknown``).

    Through ``POST /reshaper`` (sent at microversion 1.37, before consumer types), naming
    ``root`` with its inventory unchanged.
    """
    inv = backend.get_inventories(root)
    backend.reshape({
        'inventories': {root: {'resource_provider_generation': inv['resource_provider_generation'],
                               'inventories': inv['inventories']}},
        'allocations': {consumer: {'allocations': allocations, 'project_id': PROJECT, 'user_id': USER,
                                   'consumer_generation': None}}})


def vgpus_held(report):
    """{instance uuid: number of mdevs it holds} from a device report."""
    held = {}
    for gpu in report['gpus']:
        for mdev in gpu['mdevs']:
            if mdev['instance_uuid']:
                held[mdev['instance_uuid']] = held.get(mdev['instance_uuid'], 0) + 1
    return held


def flat_gpu_node(backend, name, report, with_pool=True, extra_vgpu=0):
    """A compute node as nova reported it before the reshape: VGPU on the root.

    Root ``name``: VCPU 64 (ratio 4.0), MEMORY_MB 131072 (reserved 512), VGPU =
    sum over the report's GPUs of existing mdevs + available instances (+
    ``extra_vgpu``).  A sharing DISK_GB pool ``<name>-pool`` (trait
    MISC_SHARES_VIA_AGGREGATE, same aggregate).  Every instance holding mdevs
    gets VCPU 2, MEMORY_MB 2048 and its VGPU count on the root, and DISK_GB 20
    on the pool.  Returns ``{"root", "pool", "consumers": {uuid: vgpus}}``.
    """
    agg = str(_uuid.uuid4())
    vgpu_total = extra_vgpu
    for gpu in report['gpus']:
        mtype = sorted(gpu['mdev_types'])[0]
        vgpu_total += gpu['mdev_types'][mtype]['available_instances'] + len(gpu['mdevs'])
    inventories = {
        'VCPU': {'total': 64, 'allocation_ratio': 4.0},
        'MEMORY_MB': {'total': 131072, 'reserved': 512},
        'VGPU': {'total': vgpu_total, 'max_unit': vgpu_total},
    }
    root = make_provider(backend, name, inventories, traits=['COMPUTE_ARCH_X86_64'], aggregates=[agg])
    pool = None
    if with_pool:
        pool = make_provider(backend, name + '-pool', {'DISK_GB': {'total': 2000}},
                             traits=[SHARING], aggregates=[agg])
    consumers = vgpus_held(report)
    for consumer, vgpus in sorted(consumers.items()):
        allocs = {root: {'resources': {'VCPU': VCPU_PER_GUEST, 'MEMORY_MB': MEM_PER_GUEST, 'VGPU': vgpus}}}
        if pool:
            allocs[pool] = {'resources': {'DISK_GB': DISK_PER_GUEST}}
        put(backend, consumer, allocs)
    return {'root': root, 'pool': pool, 'consumers': consumers, 'aggregate': agg}


def comparable(state):
    """A provider_tree_state without generations (what a rollback must restore exactly)."""
    providers = {}
    for uuid, prov in state['providers'].items():
        providers[uuid] = {
            'name': prov['name'],
            'parent_provider_uuid': prov.get('parent_provider_uuid'),
            'inventories': dict((rc, inventory_rules.normalize_inventory(
                dict((k, v) for k, v in rec.items() if k in inventory_rules.INVENTORY_FIELDS), rc))
                for rc, rec in prov['inventories'].items()),
            'usages': dict((rc, n) for rc, n in prov['usages'].items() if n),
            'traits': sorted(prov['traits']),
            'aggregates': sorted(prov['aggregates']),
        }
    allocations = {}
    for consumer, body in state['allocations'].items():
        allocations[consumer] = {
            'allocations': allocation_rules.strip_allocations(body['allocations']),
            'project_id': body.get('project_id'),
            'user_id': body.get('user_id'),
            'consumer_type': body.get('consumer_type'),
        }
    return {'providers': providers, 'allocations': allocations}


def child_named(backend, name):
    """The one provider called ``name`` (asserts there is exactly one)."""
    found = backend.list_providers(name=name)
    assert len(found) == 1, name
    return found[0]


def vgpu_on(backend, consumer):
    """{provider uuid: VGPU units} of one consumer's allocations."""
    allocs = backend.get_allocations(consumer)['allocations']
    return dict((rp, e['resources']['VGPU']) for rp, e in allocs.items() if 'VGPU' in e['resources'])


def consumers_by_name(report):
    """{instance name: consumer uuid} from a device report."""
    return dict((info['name'], uuid) for uuid, info in report['instances'].items())


class Wrapper(object):
    """Delegates to a backend and records every ``POST /reshaper`` body it passes on
    (``reshape_calls``, deep copies); subclasses intercept other calls."""

    def __init__(self, inner):
        self.inner = inner
        self.reshape_calls = []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def reshape(self, body):
        self.reshape_calls.append(copy.deepcopy(body))
        return self.inner.reshape(body)


class WritesBeforeFirstReshape(Wrapper):
    """Writes one allocation (a concurrent nova) right before the first reshape call."""

    def __init__(self, inner, write):
        super(WritesBeforeFirstReshape, self).__init__(inner)
        self.write = write

    def reshape(self, body):
        if not self.reshape_calls:
            self.write(self.inner)
        return super(WritesBeforeFirstReshape, self).reshape(body)
