# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/nova_standin.py, the os-services stand-in on timers of benchmarks/bench_nova_cycle.py:
its nova-compute's lifecycle (on a clock the test moves) and its PUT as nova 2.53 answers it,
read through nova/services.py as the compute_service module reads it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session

from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import services

import nova_standin


class Clock(object):
    def __init__(self):
        self.now = 1_800_000_000.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


@pytest.fixture
def nova():
    clock = Clock()
    server = nova_standin.NovaCycle(scale=0.1, t_stop=3, t_start=10, clock=clock, sleep=clock.sleep)
    server.clock_ = clock
    try:
        yield server
    finally:
        server.close()


def adapter_for(url):
    return ks_adapter.Adapter(session=ks_session.Session(timeout=10), service_type='compute', endpoint_override=url)


def state(nova, host='cmp-01'):
    return services.get_service(adapter_for(nova.url), host, backoff=0)


def test_the_timers_are_scaled(nova):
    assert (nova.t_stop, nova.t_start, nova.report_interval, nova.service_down_time) == pytest.approx((0.3, 1.0, 1.0, 6.0))


def test_a_stopped_service_is_down_once_its_last_report_is_service_down_time_old(nova):
    clock = nova.clock_
    nova.add('cmp-01', running_for=10.4)        # reports at -10.4, ..., -0.4 (every 1 s scaled)
    up = state(nova)
    assert up['state'] == 'up' and up['updated_at'] == nova_standin._stamp(clock.now - 0.4)
    assert nova.stop('cmp-01') == pytest.approx(0.3)        # stop takes t_stop; it last reported 0.7 s ago
    clock.now += 6.0 - 0.7 - 0.01
    assert state(nova)['state'] == 'up'
    clock.now += 0.02
    down = state(nova)
    assert down['state'] == 'down' and down['updated_at'] == up['updated_at']


def test_a_started_service_reports_t_start_later_then_every_report_interval(nova):
    clock = nova.clock_
    nova.add('cmp-01')
    nova.stop('cmp-01')
    clock.now += 100
    started = nova.start('cmp-01')
    clock.now += 0.99
    assert state(nova)['state'] == 'down'                      # starting: no report yet
    clock.now += 0.02
    first = state(nova)
    assert first['state'] == 'up' and first['updated_at'] == nova_standin._stamp(started + 1.0)
    clock.now += 1.0
    assert state(nova)['updated_at'] == nova_standin._stamp(started + 2.0)


def test_forced_down_is_down_at_once_and_cleared_is_up_while_it_reports(nova):
    nova.add('cmp-01')
    adapter = adapter_for(nova.url)
    record = state(nova)
    changed, after = services.set_service(adapter, record, forced_down=True, backoff=0)
    assert changed and after['state'] == 'down' and after['forced_down'] is True
    changed, after = services.set_service(adapter, after, forced_down=False, backoff=0)
    assert changed and after['state'] == 'up' and after['forced_down'] is False
    changed, after = services.set_service(adapter, after, enabled=False, disabled_reason='why', backoff=0)
    assert (after['status'], after['disabled_reason']) == ('disabled', 'why')
    changed, after = services.set_service(adapter, after, enabled=True, backoff=0)
    assert (after['status'], after['disabled_reason']) == ('enabled', None)
    assert [body for _host, body, _at in nova.puts] == [
        {'forced_down': True}, {'forced_down': False}, {'status': 'disabled', 'disabled_reason': 'why'},
        {'status': 'enabled'}]


@pytest.mark.parametrize('body', [{}, {'disabled_reason': 'why'}, {'status': 'enabled', 'disabled_reason': 'why'},
                                  {'status': 'off'}, {'forced_down': 'yes'}])
def test_a_put_nova_refuses_is_a_400(nova, body):
    record = nova.add('cmp-01')
    with pytest.raises(errors.PlacementError) as info:
        services._put(adapter_for(nova.url), record['id'], body, 0, 0, None)
    assert info.value.status == 400 and nova.puts == []


def test_an_unknown_service_is_a_404(nova):
    nova.add('cmp-01')
    with pytest.raises(errors.PlacementError) as info:
        services._put(adapter_for(nova.url), 'e0c5e3f4-0000-4000-8000-000000000000', {'forced_down': True}, 0, 0, None)
    assert info.value.status == 404


def test_cleared_right_after_a_stop_it_reads_up_and_written_since_running_or_not(nova):
    """As nova 34 does (tests/nova_oracle/test_nova_services.py): a PUT writes the record (its
    updated_at), and the state follows the last heartbeat once forced_down is cleared."""
    clock = nova.clock_
    nova.add('cmp-01', running_for=10.4)
    adapter = adapter_for(nova.url)
    nova.stop('cmp-01')
    services.set_service(adapter, state(nova), forced_down=True, backoff=0)
    since = nova_standin._stamp(clock.now)
    clock.now += 0.5
    services.set_service(adapter, state(nova), forced_down=False, backoff=0)
    fooled, waited = services.wait_for(adapter, 'cmp-01', 'up', reported_since=since, timeout=5,
                                       clock=clock, sleep=clock.sleep)
    assert (fooled['state'], waited) == ('up', 0)            # not running, "up and written since"


def test_clearing_waits_for_the_new_process_then_for_a_report_after_the_clearing(nova):
    clock = nova.clock_
    nova.add('cmp-01', running_for=10.4)
    adapter = adapter_for(nova.url)
    nova.stop('cmp-01')
    services.set_service(adapter, state(nova), forced_down=True, backoff=0)
    since = nova_standin._stamp(clock.now)
    # not started: nothing writes the record; it stays forced down, nothing is sent
    puts = len(nova.puts)
    with pytest.raises(errors.WaitTimeout, match='has not written its record in nova since'):
        services.clear_forced_down_when_up(adapter, state(nova), since, timeout=3, interval=0.5,
                                           clock=clock, sleep=clock.sleep)
    assert len(nova.puts) == puts and state(nova)['forced_down'] is True
    # started: first report t_start (1.0) later, then every report_interval (1.0)
    started = nova.start('cmp-01')
    record, waited, changed = services.clear_forced_down_when_up(adapter, state(nova), since, timeout=10,
                                                                 interval=0.25, clock=clock, sleep=clock.sleep)
    cleared = [(body, when) for _host, body, when in nova.puts[puts:]]
    assert [body for body, _when in cleared] == [{'forced_down': False}]
    # cleared after the first report (started + 1.0), up once the next came (started + 2.0)
    assert cleared[0][1] >= started + 1.0
    assert (record['state'], record['forced_down'], changed) == ('up', False, True)
    assert record['updated_at'] == nova_standin._stamp(started + 2.0)
    assert clock.now >= started + 2.0


def test_clearing_does_not_take_its_own_forced_down_write_for_the_new_process(nova):
    """reported_since in whole seconds (or on a clock behind nova's) can be older than the forced_down
    PUT of the same second: that write is not the new process'."""
    clock = nova.clock_
    nova.add('cmp-01', running_for=10.4)
    adapter = adapter_for(nova.url)
    nova.stop('cmp-01')
    since = nova_standin._stamp(clock.now - 0.5)          # before the forced_down PUT below
    services.set_service(adapter, state(nova), forced_down=True, backoff=0)
    puts = len(nova.puts)
    with pytest.raises(errors.WaitTimeout, match='has not written its record in nova since'):
        services.clear_forced_down_when_up(adapter, state(nova), since, timeout=3, interval=0.5,
                                           clock=clock, sleep=clock.sleep)
    assert len(nova.puts) == puts and state(nova)['forced_down'] is True
