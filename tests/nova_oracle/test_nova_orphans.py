# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Orphaned allocations told apart from moves in flight by nova 34's own API.

Inside nova's functional harness (see test_nova_accepts.py): a vGPU fake host started the
pre-upgrade way, with VGPU seeded on its root, a real server booted on it by nova (an instance
nova knows, with no guest domain in the host's XML), and an allocation of a consumer nova has
never heard of (an orphan: what ``nova-manage placement audit`` finds).  Our reshape, asking
nova through ``nova.orphaned``:

1. names the orphan as an orphaned allocation with the ``nova-manage placement audit ...
   --delete`` command, lists it in the plan's ``orphans``, and defers the node (it holds VGPU);
   the booted server is NOT called an orphan;
2. once the orphan's allocation is deleted, the node is reshaped and nova-compute accepts it.
"""

import uuid as _uuid

from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import compute as nova
import fakehost
from test_nova_accepts import OracleTestBase

HOST = 'oracle-orphans'


class TestNovaOrphans(OracleTestBase):

    def lookup(self):
        backend = self.backend()
        self.addCleanup(backend.close)
        adapter = self.nova_adapter(backend)
        self.asked = []

        def orphaned(consumers):
            self.asked.append(sorted(consumers))
            return nova.orphaned(adapter, consumers, backoff=0)
        return orphaned

    def test_an_orphan_is_named_with_the_command_and_a_real_server_is_not(self):
        self.build(fakehost.default_gpu_host(name=HOST, spare_mdevs=1))
        self.start_old_nova()
        server = self._create_server(host=HOST, networks='none')
        orphan = str(_uuid.uuid4())
        self.seed_legacy(extra_consumers=[(orphan, {self.root_uuid: {'VGPU': 1}})])

        plan = self.our_reshape(check_mode=True, orphan_lookup=self.lookup())
        self.assertEqual('deferred', plan['status'], plan)
        reason = plan['deferred_reason']
        self.assertIn('consumer %s holds VGPU 1 on this node, and nova has no instance and no migration' % orphan,
                      reason)
        self.assertIn('nova-manage placement audit --resource_provider %s --verbose --delete' % self.root_uuid,
                      reason)
        self.assertEqual([orphan], [o['consumer'] for o in plan['plan']['orphans']])
        # nova was asked about the consumers no domain explains: the orphan and the booted server
        self.assertEqual([sorted([orphan, server['id']])], self.asked)
        self.assertNotIn('%s holds' % server['id'], reason.split('nova has no instance')[0].split(orphan)[0])

        # the operator deletes the orphan (as nova-manage placement audit --delete does)
        resp = self.placement.delete('/allocations/%s' % orphan)
        self.assertEqual(204, resp.status, resp.body)
        done = self.our_reshape(orphan_lookup=self.lookup())
        self.assertEqual('reshaped', done['status'], done)
        self.assertEqual([], done['plan']['orphans'])
        self.assert_nova_accepts()
