# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nova 34's own os-migrations, read by OUR nova.py, defers the node it names.

Inside nova's functional harness (see test_nova_accepts.py): a vGPU fake host
(``oracle-migsrc``, started the pre-upgrade way and seeded with the legacy VGPU root
inventory and allocations) and a plain second compute host (``oracle-migdst``).  A
server booted on the source is RESIZED through nova's API by nova's conductor, scheduler
and compute services; it waits in VERIFY_RESIZE, and nova's migration record (uuid =
the consumer that now holds the source node's allocations) is in flight.  Then:

1. :func:`nova.in_progress_migrations` over a keystoneauth Adapter on the harness'
   compute endpoint (the OSAPIFixture's wsgi-intercept URL, compute microversion 2.59)
   returns that record, with nova's paging (``limit`` 1: nova's next link is followed);
2. our reshape of the source, given the record, is DEFERRED naming the migration and
   its instance; without the record the same tree would be reshaped (the migration
   consumer holds no VGPU, so the allocations alone do not tell the move);
3. credentials without the admin role get nova's own 403, mapped to our message;
4. the resize is confirmed through nova's API: the record is no longer returned, the
   node is reshaped, and nova-compute restarted on it writes nothing.
"""

from unittest import mock

import fakehost
from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import compute as nova
from test_nova_accepts import CONF, OracleTestBase

SOURCE = 'oracle-migsrc'
DEST = 'oracle-migdst'


class TestNovaMigrations(OracleTestBase):

    def migrations(self, backend, **kwargs):
        return nova.in_progress_migrations(self.nova_adapter(backend, **kwargs.pop('who', {})), backoff=0, **kwargs)

    def resize_to_dest(self, server, flavor):
        with mock.patch('nova.virt.libvirt.driver.LibvirtDriver.migrate_disk_and_power_off',
                        return_value='{}'):
            self._resize_server(server, flavor['id'])
        return self._wait_for_migration_status(server, ['finished'])

    def confirm(self, server):
        # libvirt's _cleanup_resize looks at CONF.host for the source (see nova's test_vgpu)
        host = CONF.host
        self.flags(host=SOURCE)
        try:
            self._confirm_resize(server)
        finally:
            self.flags(host=host)
        self._wait_for_migration_status(server, ['confirmed'])

    def test_resize_in_flight_defers_the_source_until_confirmed(self):
        self.build(fakehost.default_gpu_host(name=SOURCE))
        self.start_old_nova()
        self.start_compute(hostname=DEST)
        tiny, small = sorted(self.api.get_flavors(), key=lambda f: (f['ram'], f['disk'], f['id']))[:2]
        server = self._create_server(host=SOURCE, networks='none', flavor_id=tiny['id'])
        self.assertEqual(SOURCE, server['OS-EXT-SRV-ATTR:host'])
        nova_view = self.resize_to_dest(server, small)
        self.seed_legacy()

        backend = self.backend()
        self.addCleanup(backend.close)
        # 1. nova's record, through OUR reader, paged one by one (nova's next link followed, by
        # openstacksdk's compute resource: every request it sends is counted on the session)
        adapter, sent = self.nova_adapter(backend), []
        session = adapter.session
        send = session.request

        def counting(url, method, **kwargs):
            params = kwargs.get('params') or {}
            sent.append((url, dict((k, str(v[0] if isinstance(v, list) and len(v) == 1 else v))
                                   for k, v in params.items())))
            return send(url, method, **kwargs)

        session.request = counting
        try:
            records = nova.in_progress_migrations(adapter, host=SOURCE, node=SOURCE, limit=1, backoff=0)
        finally:
            del session.request
        self.assertEqual(1, len(records), records)
        record = records[0]
        self.assertEqual([('/os-migrations', {'host': SOURCE, 'limit': '1'}),
                          ('/os-migrations', {'host': SOURCE, 'limit': '1', 'marker': record['uuid']})], sent)
        self.assertEqual(nova_view['uuid'], record['uuid'])
        self.assertEqual(server['id'], record['instance_uuid'])
        self.assertEqual('finished', record['status'])
        self.assertEqual('resize', record['migration_type'])
        self.assertEqual((SOURCE, DEST), (record['source_node'], record['dest_node']))
        self.assertEqual((SOURCE, DEST), (record['source_compute'], record['dest_compute']))
        self.assertEqual(records, self.migrations(backend, host=DEST, node=DEST))   # both ends
        self.assertEqual([], self.migrations(backend, host='oracle-nobody'))
        # nova's migration consumer holds the source node's allocations (no consumer_type)
        consumers = self.dump()['consumers']
        self.assertIn(record['uuid'], consumers)
        self.assertEqual([self.root_uuid], list(consumers[record['uuid']]['allocations']))
        self.assertNotIn(self.root_uuid, consumers[server['id']]['allocations'])

        # 2. the source is deferred with the record, untouched; reshaped without it
        before = self.dump()
        deferred = self.our_reshape(migrations=records, check_mode=True)
        self.assertEqual('deferred', deferred['status'], deferred)
        self.assertIn(record['uuid'], deferred['deferred_reason'])
        self.assertIn(server['id'], deferred['deferred_reason'])
        self.assertIn('confirm or revert', deferred['deferred_reason'])
        self.assertEqual('deferred', self.our_reshape(migrations=records)['status'])
        self.assertEqual(before, self.dump())
        blind = self.our_reshape(check_mode=True)
        self.assertEqual('reshaped', blind['status'], blind)
        self.assertTrue(any(record['uuid'] in w for w in blind['warnings']), blind['warnings'])
        found = nova.node_migrations(backend, SOURCE, mode='always', endpoint_override=self.api_fixture.api.base_url,
                                     additional_headers=self.compute_headers())
        self.assertEqual({'source': 'nova', 'count': 1, 'records': records}, found)

        # 3. without the admin role nova refuses, and the message says what is needed
        with self.assertRaises(errors.Forbidden) as ctx:
            self.migrations(backend, host=SOURCE, who={'user': 'other', 'roles': 'reader,member'})
        self.assertIn('`admin` role', ctx.exception.detail)
        self.assertIn(self.api_fixture.api.base_url, ctx.exception.detail)

        # 4. confirmed through nova's API: nothing in flight, the node is reshaped, nova agrees
        self.confirm(server)
        self.assertEqual([], self.migrations(backend, host=SOURCE, node=SOURCE))
        self.assertNotIn(record['uuid'], self.dump()['consumers'])
        done = self.our_reshape(migrations=[])
        self.assertEqual('reshaped', done['status'], done)
        self.assert_nova_accepts()
