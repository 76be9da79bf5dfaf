# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The compute nodes of a cloud, and what each one's provider tree needs.

:func:`compute_nodes` lists the compute nodes from nova's hypervisors (when a compute
endpoint is given) or from Placement's root providers, and reads each node's tree
(providers and inventories) to tell what a reshape would do there, from Placement alone:
each kind with a need (``Kind.need``, ``Kind.root_class``: :data:`..node.kinds.registry.KINDS`)
says which classes on a root name it:

``vgpu``
    VGPU inventory on the root (nova before the VGPU reshape: one child per physical GPU).
``mem_encryption``
    MEM_ENCRYPTION_CONTEXT on the root (AMD SEV before nova moved it to a child).
``pci``
    a PCI class on the root (``CUSTOM_PCI_*``, ``SRIOV_NET_VF``, ``PGPU``) where nova's PCI
    in Placement keeps one child per device.

A node whose root holds none of those and that has children holding them is
``reshaped``; one with neither is ``plain``.  Whether the VCPU -> PCPU reshape is due
depends on nova.conf (``cpu_dedicated_set``), which only the node knows: it is not
guessed here.  This is what the ``placement.upgrade.compute_nodes`` inventory plugin
groups hosts by.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from .. import errors
from ..backends.base import SHARING_TRAIT
from ..node.kinds import registry as _kinds

#: the needs, one per kind that has one (``Kind.need``: a class of it still on the root)
NEEDS = tuple(kind.need for kind in _kinds.KINDS if kind.need)
STATE_NEEDS_RESHAPE = 'needs_reshape'
STATE_RESHAPED = 'reshaped'
STATE_PLAIN = 'plain'

#: compute microversion of GET /os-hypervisors/detail whose ids are the compute nodes' uuids
#: (= their root providers' uuids) and which carries the service host
HYPERVISORS_MICROVERSION = '2.53'
HYPERVISORS_HINT = ('listing the hypervisors with their services (GET /os-hypervisors/detail) needs the '
                    '`admin` role under nova\'s default policy (os_compute_api:os-hypervisors:list-detail), '
                    'or set source=placement to list the compute nodes from Placement\'s root providers')


def need_of(resource_class):
    """The need a class names when it sits on a root (None for an ordinary class): the kind's
    whose class it is (``Kind.root_class``, :data:`kinds.registry.KINDS`)."""
    for kind in _kinds.KINDS:
        if kind.need and kind.root_class(resource_class):
            return kind.need
    return None


def classify(root, tree):
    """One node: ``{"needs": [...], "state", "children", "root_inventory"}``.

    ``root`` is the root provider, ``tree`` maps every provider of its tree (root
    included) to ``{"provider": record, "inventories": {rc: record}}``.
    """
    root_inv = tree[root['uuid']]['inventories']
    needs = sorted(set(n for n in (need_of(rc) for rc in root_inv) if n))
    children = sorted(entry['provider']['name'] for uuid, entry in tree.items() if uuid != root['uuid'])
    moved_on_children = any(need_of(rc) for uuid, entry in tree.items() if uuid != root['uuid']
                            for rc in entry['inventories'])
    if needs:
        state = STATE_NEEDS_RESHAPE
    elif moved_on_children:
        state = STATE_RESHAPED
    else:
        state = STATE_PLAIN
    return {
        'needs': needs,
        'state': state,
        'children': children,
        'root_inventory': dict((rc, rec.get('total')) for rc, rec in sorted(root_inv.items())),
    }


def placement_nodes(backend):
    """Every root provider of Placement but sharing pools, with its tree classified, by name."""
    providers = backend.list_providers()
    trees = {}
    for prov in providers:
        root_uuid = prov.get('root_provider_uuid') or prov['uuid']
        inv = backend.get_inventories(prov['uuid'])['inventories']
        trees.setdefault(root_uuid, {})[prov['uuid']] = {'provider': prov, 'inventories': inv}
    nodes = []
    for prov in providers:
        if prov.get('parent_provider_uuid'):
            continue
        if SHARING_TRAIT in backend.get_provider_traits(prov['uuid'])['traits']:
            continue                    # a sharing pool (DISK_GB on shared storage), not a compute node
        node = {'name': prov['name'], 'uuid': prov['uuid']}
        node.update(classify(prov, trees[prov['uuid']]))
        nodes.append(node)
    return sorted(nodes, key=lambda n: n['name'])


def hypervisors(adapter, retries=3, backoff=0.25):
    """nova's hypervisors (``GET /os-hypervisors/detail``, every page, through openstacksdk's compute
    resource: nova/compute.list_records) at 2.53.

    Returns ``[{"uuid", "hypervisor_hostname", "service_host", "status", "state",
    "hypervisor_type"}]``.  Errors are :mod:`.errors` types naming nova's endpoint
    (nova.py maps them as for os-migrations).
    """
    from ..nova import compute as _nova
    found = []
    for hyp in _nova.list_records(adapter, 'hypervisors', {}, HYPERVISORS_MICROVERSION, HYPERVISORS_HINT,
                                  retries=retries, backoff=backoff):
        service = hyp.get('service') or {}
        found.append({
            'uuid': hyp.get('id'),
            'hypervisor_hostname': hyp.get('hypervisor_hostname'),
            'service_host': service.get('host'),
            'status': hyp.get('status'),
            'state': hyp.get('state'),
            'hypervisor_type': hyp.get('hypervisor_type'),
        })
    return found


def compute_nodes(backend, adapter=None):
    """The compute nodes: nova's hypervisors when ``adapter`` (nova) is given, else Placement's roots.

    Each node: ``name`` (the root provider's, nova's hypervisor hostname), ``uuid``,
    ``needs``, ``state``, ``children``, ``root_inventory``, ``source`` (``nova`` or
    ``placement``) and, from nova, ``nova`` (service host, status, state).  A hypervisor
    without a root provider is listed with ``state`` ``missing`` (nova-compute has not
    reported it to Placement yet).
    """
    roots = placement_nodes(backend)
    if adapter is None:
        for node in roots:
            node['source'] = 'placement'
        return roots
    by_uuid = dict((n['uuid'], n) for n in roots)
    nodes = []
    for hyp in hypervisors(adapter):
        node = by_uuid.get(hyp['uuid'])
        if node is None:
            node = {'name': hyp['hypervisor_hostname'], 'uuid': hyp['uuid'], 'needs': [],
                    'state': 'missing', 'children': [], 'root_inventory': {}}
        node = dict(node, source='nova', nova={'service_host': hyp['service_host'], 'status': hyp['status'],
                                               'state': hyp['state'], 'hypervisor_type': hyp['hypervisor_type']})
        nodes.append(node)
    return sorted(nodes, key=lambda n: n['name'] or '')


def require_names(nodes):
    """Refuse a node without a name (nova answered a hypervisor without its hostname)."""
    for node in nodes:
        if not node.get('name'):
            raise errors.PlacementError('compute node %s has no name (hypervisor_hostname)' % node.get('uuid'),
                                        status=0, title='Error')
    return nodes
