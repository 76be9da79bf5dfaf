# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nova 34's own os-hypervisors, read by OUR fleet_inventory (the compute_nodes inventory plugin).

Inside nova's functional harness (see test_nova_accepts.py): a vGPU fake host started the
pre-upgrade way with VGPU seeded on its root, and a plain second compute host.  Then:

1. :func:`fleet_inventory.compute_nodes` over OUR compute adapter on the harness' nova API
   lists both hypervisors, matched to their root providers by uuid (nova's compute node
   uuid is the root provider's), with nova's service host, status and state; the GPU node
   needs the VGPU reshape, the other is plain;
2. after our reshape the GPU node is listed as reshaped;
3. credentials without nova's admin role get nova's 403, with what the listing needs.
"""

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import inventory as fleet_inventory
import fakehost
from test_nova_accepts import OracleTestBase

GPU_HOST = 'oracle-invgpu'
PLAIN_HOST = 'oracle-invplain'


class TestNovaInventory(OracleTestBase):

    def nodes(self, backend, **who):
        return dict((n['name'], n) for n in fleet_inventory.compute_nodes(backend, self.nova_adapter(backend, **who)))

    def test_hypervisors_grouped_by_what_their_trees_need(self):
        self.build(fakehost.default_gpu_host(name=GPU_HOST))
        self.start_old_nova()
        self.start_compute(hostname=PLAIN_HOST)
        self.seed_legacy()
        backend = self.backend()
        self.addCleanup(backend.close)

        # 1. nova's hypervisors, each matched to its root provider
        nodes = self.nodes(backend)
        self.assertEqual({GPU_HOST, PLAIN_HOST}, set(nodes))
        gpu, plain = nodes[GPU_HOST], nodes[PLAIN_HOST]
        self.assertEqual(self.compute_rp_uuids[GPU_HOST], gpu['uuid'])
        self.assertEqual(self.compute_rp_uuids[PLAIN_HOST], plain['uuid'])
        for node, host in ((gpu, GPU_HOST), (plain, PLAIN_HOST)):
            self.assertEqual('nova', node['source'])
            self.assertEqual(host, node['nova']['service_host'])
            self.assertEqual(('enabled', 'up'), (node['nova']['status'], node['nova']['state']))
        self.assertEqual(['vgpu'], gpu['needs'])
        self.assertEqual('needs_reshape', gpu['state'])
        self.assertEqual(fakehost_units(self.spec), gpu['root_inventory']['VGPU'])
        self.assertEqual(([], 'plain'), (plain['needs'], plain['state']))
        # without nova, Placement's roots give the same nodes and verdicts
        alone = dict((n['name'], n) for n in fleet_inventory.compute_nodes(backend))
        self.assertEqual(set(nodes), set(alone))
        self.assertEqual(gpu['needs'], alone[GPU_HOST]['needs'])
        self.assertEqual('placement', alone[GPU_HOST]['source'])

        # 2. after our reshape the node is reshaped
        self.assertEqual('reshaped', self.our_reshape()['status'])
        after = self.nodes(backend)[GPU_HOST]
        self.assertEqual(([], 'reshaped'), (after['needs'], after['state']))
        self.assertTrue(after['children'])

        # 3. nova's policy: listing hypervisors with their services is admin-only
        with self.assertRaises(errors.Forbidden) as ctx:
            self.nodes(backend, user='other', roles='reader,member')
        self.assertIn('/os-hypervisors/detail', ctx.exception.detail)
        self.assertIn('source=placement', ctx.exception.detail)


def fakehost_units(spec):
    import simfleet
    return simfleet._gpu_units(spec)
