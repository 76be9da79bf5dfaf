# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nova 34's own os-services API, driven by OUR nova_services (the compute_service module).

Inside nova's functional harness (see test_nova_accepts.py), one compute host:

1. the service is read (uuid id, enabled, up); disabling it with a reason is one PUT, and
   nova's API shows it disabled; the same request again sends nothing (nova would answer 400
   to a PUT that changes nothing) and says unchanged; another reason is one PUT; check mode
   predicts and sends nothing;
2. the service stopped and forced down is reported down at once; waiting for ``up`` on it
   gives up after the timeout with a message naming what nova reports;
3. restarted, it is waited for until it is up AND reported after its restart; forced_down is
   cleared and it is enabled again, with nova's reason cleared;
4. an unknown host is NotFound naming the hosts nova knows; credentials without nova's admin
   role get nova's 403 with what the calls need; a reason with ``enabled`` is refused before
   any call.
"""

import datetime

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import services as nova_services
from test_nova_accepts import OracleTestBase

HOST = 'oracle-svc'
REASON = 'placement.upgrade: reshape in progress'


class TestNovaServices(OracleTestBase):

    def adapter(self, backend, **who):
        adapter = self.nova_adapter(backend, **who)
        self.puts = []
        send = adapter.request

        def counting(url, method, **kwargs):
            if method == 'PUT':
                self.puts.append((url, kwargs.get('json')))
            return send(url, method, **kwargs)

        adapter.request = counting
        return adapter

    def novas_view(self):
        services = self.admin_api.get_services(binary='nova-compute', host=HOST)
        self.assertEqual(1, len(services))
        return services[0]

    def test_disable_wait_and_enable(self):
        self.start_compute(hostname=HOST)
        backend = self.backend()
        self.addCleanup(backend.close)
        adapter = self.adapter(backend)

        # 1. read, disable (one PUT), again (none), another reason (one), check mode (none)
        current = nova_services.get_service(adapter, HOST)
        self.assertEqual(('nova-compute', HOST, 'enabled', 'up', False),
                         (current['binary'], current['host'], current['status'], current['state'],
                          current['forced_down']))
        self.assertEqual(self.novas_view()['id'], current['id'])
        changed, after = nova_services.set_service(adapter, current, enabled=False, disabled_reason=REASON)
        self.assertTrue(changed)
        self.assertEqual(('disabled', REASON), (after['status'], after['disabled_reason']))
        self.assertEqual(('disabled', REASON), (self.novas_view()['status'], self.novas_view()['disabled_reason']))
        self.assertEqual(1, len(self.puts))
        changed, again = nova_services.set_service(adapter, nova_services.get_service(adapter, HOST),
                                                   enabled=False, disabled_reason=REASON)
        self.assertFalse(changed)
        self.assertEqual(1, len(self.puts))
        self.assertEqual(after['status'], again['status'])
        changed = nova_services.set_service(adapter, nova_services.get_service(adapter, HOST),
                                            enabled=False, disabled_reason=REASON + ' (batch 2)')[0]
        self.assertTrue(changed)
        self.assertEqual(REASON + ' (batch 2)', self.novas_view()['disabled_reason'])
        current = nova_services.get_service(adapter, HOST)
        changed, predicted = nova_services.set_service(adapter, current, enabled=True, check_mode=True)
        self.assertTrue(changed)
        self.assertEqual(('enabled', None), (predicted['status'], predicted['disabled_reason']))
        self.assertEqual('disabled', self.novas_view()['status'])
        self.assertEqual(2, len(self.puts))

        # 2. stopped and forced down: down at once; waiting for up gives up with nova's view
        before_restart = datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M:%S.%f')
        self.computes[HOST].stop()
        changed = nova_services.set_service(adapter, nova_services.get_service(adapter, HOST), forced_down=True)[0]
        self.assertTrue(changed)
        record, _waited = nova_services.wait_for(adapter, HOST, 'down', timeout=5, interval=0.2)
        self.assertEqual(('down', True), (record['state'], record['forced_down']))
        with self.assertRaises(errors.WaitTimeout) as ctx:
            nova_services.wait_for(adapter, HOST, 'up', timeout=1, interval=0.2)
        self.assertIn('is not up after 1 s (nova reports state down', ctx.exception.detail)

        # 3. started again: up and reported after its restart, then forced_down cleared and enabled
        self.computes[HOST].start()
        changed = nova_services.set_service(adapter, nova_services.get_service(adapter, HOST), forced_down=False)[0]
        self.assertTrue(changed)
        record, _waited = nova_services.wait_for(adapter, HOST, 'up', reported_since=before_restart,
                                                 timeout=30, interval=0.5)
        self.assertEqual('up', record['state'])
        self.assertGreater(record['updated_at'].replace('T', ' '), before_restart)
        changed, after = nova_services.set_service(adapter, record, enabled=True)
        self.assertTrue(changed)
        view = self.novas_view()
        self.assertEqual(('enabled', None, False, 'up'),
                         (view['status'], view['disabled_reason'], view['forced_down'], view['state']))
        self.assertEqual((False, 'enabled'),
                         (nova_services.set_service(adapter, nova_services.get_service(adapter, HOST),
                                                    enabled=True)[0], after['status']))

        # 4. what goes wrong says what it is
        with self.assertRaises(errors.NotFound) as ctx:
            nova_services.get_service(adapter, 'oracle-nobody')
        self.assertIn("no nova-compute service on host 'oracle-nobody'", ctx.exception.detail)
        self.assertIn(HOST, ctx.exception.detail)
        with self.assertRaises(errors.Forbidden) as ctx:
            nova_services.get_service(self.adapter(backend, user='other', roles='reader,member'), HOST)
        self.assertIn('os_compute_api:os-services', ctx.exception.detail)
        puts = len(self.puts)
        with self.assertRaises(errors.ConfigurationError):
            nova_services.set_service(adapter, nova_services.get_service(adapter, HOST), enabled=True,
                                      disabled_reason='why')
        self.assertEqual(puts, len(self.puts))

    def test_a_forced_down_service_is_cleared_only_once_the_new_one_reports(self):
        """nova's updated_at moves with every write of the record (our PUT too) and its state follows
        the last heartbeat for service_down_time once forced_down is cleared: cleared right after a
        stop, the service reads up at once with a fresh updated_at, not running at all.  The module's
        clearing (clear_forced_down_when_up) waits for the new process' writes instead."""
        host = 'oracle-fd'
        self.start_compute(hostname=host)
        backend = self.backend()
        self.addCleanup(backend.close)
        adapter = self.adapter(backend)

        def stop_and_force_down():
            self.computes[host].stop()
            nova_services.set_service(adapter, nova_services.get_service(adapter, host), forced_down=True)
            self.assertEqual('down', nova_services.get_service(adapter, host)['state'])
            return datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M:%S.%f')

        # what nova does: cleared while stopped, it reads up and "reported" after the stop at once
        since = stop_and_force_down()
        nova_services.set_service(adapter, nova_services.get_service(adapter, host), forced_down=False)
        fooled, waited = nova_services.wait_for(adapter, host, 'up', reported_since=since, timeout=5, interval=0.2)
        self.assertEqual('up', fooled['state'])
        self.assertLess(waited, 1.0)

        # the clearing: not started, nothing writes the record, it stays forced down (a timeout)
        since = stop_and_force_down()
        puts = len(self.puts)
        with self.assertRaises(errors.WaitTimeout) as ctx:
            nova_services.clear_forced_down_when_up(adapter, nova_services.get_service(adapter, host), since,
                                                    timeout=3, interval=0.2)
        self.assertIn('has not written its record in nova since %s' % since, ctx.exception.detail)
        self.assertEqual(puts, len(self.puts))
        self.assertEqual((True, 'down'), (self.novas_view_of(host)['forced_down'], self.novas_view_of(host)['state']))

        # started: cleared once it wrote its record, then up with a report after the clearing PUT
        self.computes[host].start()
        record, waited, changed = nova_services.clear_forced_down_when_up(
            adapter, nova_services.get_service(adapter, host), since, timeout=60, interval=0.5)
        cleared = [body for _url, body in self.puts[puts:]]
        self.assertEqual([{'forced_down': False}], cleared)
        self.assertTrue(changed)
        self.assertEqual(('up', False), (record['state'], record['forced_down']))
        self.assertGreater(record['updated_at'].replace('T', ' '), since)
        print('\nnova 34: forced_down cleared and the service up after its restart in %.1f s' % waited)

    def novas_view_of(self, host):
        return self.admin_api.get_services(binary='nova-compute', host=host)[0]
