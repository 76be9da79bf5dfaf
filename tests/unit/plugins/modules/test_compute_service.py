# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""compute_service: what it does without nova, and the update it computes.

The calls to nova's real os-services API are in tests/nova_oracle/test_nova_services.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import threading

import pytest

try:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
except ImportError:  # Python < 3.7
    from http.server import BaseHTTPRequestHandler, HTTPServer as ThreadingHTTPServer

from ansible_collections.placement.upgrade.plugins.modules import compute_service
from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import services as nova_services

ENABLED = {'id': 'c0ffee00-0000-4000-8000-000000000001', 'host': 'cmp-01', 'binary': 'nova-compute',
           'status': 'enabled', 'state': 'up', 'disabled_reason': None, 'forced_down': False}


def test_without_nova_the_task_says_so(run_module, store):
    rc, result = run_module(compute_service, {'host': 'cmp-01', 'state': 'disabled'})
    assert rc == 1 and result['failed'] is True
    assert 'compute_service needs nova\'s compute API' in result['msg']
    assert 'the embedded store has no nova' in result['msg']


def test_a_missing_embedded_store_is_not_created(run_module, tmp_path):
    rc, result = run_module(compute_service, {'host': 'cmp-01', 'embedded_db': str(tmp_path / 'none.db')})
    assert rc == 1 and 'does not exist' in result['msg']
    assert not (tmp_path / 'none.db').exists()


@pytest.mark.parametrize('current, asked, body', [
    (ENABLED, dict(enabled=False, disabled_reason='why'), {'status': 'disabled', 'disabled_reason': 'why'}),
    (ENABLED, dict(enabled=True), {}),
    (ENABLED, dict(), {}),
    (dict(ENABLED, status='disabled', disabled_reason='why'), dict(enabled=False, disabled_reason='why'), {}),
    (dict(ENABLED, status='disabled', disabled_reason='why'), dict(enabled=False), {}),
    (dict(ENABLED, status='disabled', disabled_reason='why'), dict(enabled=False, disabled_reason='other'),
     {'status': 'disabled', 'disabled_reason': 'other'}),
    (dict(ENABLED, status='disabled', disabled_reason='why'), dict(enabled=True), {'status': 'enabled'}),
    (ENABLED, dict(forced_down=True), {'forced_down': True}),
    (dict(ENABLED, forced_down=True), dict(forced_down=True), {}),
])
def test_only_what_differs_is_sent(current, asked, body):
    assert nova_services.wanted_update(current, **asked) == body


def test_check_mode_predicts_nova_record():
    after = nova_services.predicted(dict(ENABLED, status='disabled', disabled_reason='why'), {'status': 'enabled'})
    assert (after['status'], after['disabled_reason']) == ('enabled', None)
    after = nova_services.predicted(ENABLED, {'forced_down': True})
    assert (after['forced_down'], after['state']) == (True, 'down')


class CountingServer(object):
    """A stand-in for nova (and for the endpoint the auth options name): counts every request, answers 500."""

    def __init__(self):
        counter = self
        self.requests = []

        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                counter.requests.append('%s %s' % (self.command, self.path))
                body = b'{"error": "stand-in"}'
                self.send_response(500)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_PUT = do_POST = do_HEAD = _answer

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.url = 'http://127.0.0.1:%d' % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever)
        self.thread.daemon = True
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def nova_standin():
    server = CountingServer()
    try:
        yield server
    finally:
        server.close()


@pytest.mark.parametrize('args, msg', [
    ({'host': ''}, "host must name nova's service host of the compute service, got an empty string"),
    ({'host': '  '}, "host must name nova's service host of the compute service, got an empty string"),
    ({'binary': ''}, "binary must name nova's binary of the compute service, got an empty string"),
    ({'state': 'enabled', 'disabled_reason': 'why'},
     'disabled_reason is for a disabled service; nova refuses it with state=enabled'),
    ({'wait_for': 'down', 'wait_timeout': -1}, 'wait_timeout must be 0 or more seconds, got -1'),
    ({'wait_for': 'down', 'wait_interval': 0}, 'wait_interval must be more than 0 seconds, got 0.0'),
    ({'wait_for': 'down', 'wait_interval': -2.5}, 'wait_interval must be more than 0 seconds, got -2.5'),
    ({'wait_for': 'down', 'wait_interval': 'nan'}, 'wait_interval must be more than 0 seconds, got nan'),
    ({'wait_for': 'up', 'report_interval': 0}, 'report_interval must be more than 0 seconds, got 0.0'),
    ({'wait_for': 'up', 'report_interval': -10}, 'report_interval must be more than 0 seconds, got -10.0'),
    ({'wait_for': 'up', 'forced_down_at': 'a while ago'},
     "forced_down_at must be a UTC time as YYYY-MM-DD HH:MM:SS (as nova's updated_at), got 'a while ago'"),
    ({'wait_for': 'up', 'reported_since': 'yesterday'},
     "reported_since must be a UTC time as YYYY-MM-DD HH:MM:SS (as nova's updated_at), got 'yesterday'"),
    ({'wait_for': 'up', 'reported_since': '2026-11-23'},
     "reported_since must be a UTC time as YYYY-MM-DD HH:MM:SS (as nova's updated_at), got '2026-11-23'"),
    ({'wait_for': 'up', 'reported_since': '2026-11-23 12:00:00+02:00'},
     "reported_since must be a UTC time as YYYY-MM-DD HH:MM:SS (as nova's updated_at), got '2026-11-23 12:00:00+02:00'"),
    ({'state': 'disabled', 'compute_endpoint': 'nova'},
     "compute_endpoint must be the URL of nova's compute API (http:// or https://, usually ending in /v2.1), "
     "got 'nova'"),
    ({'state': 'disabled', 'compute_endpoint': 'ftp://nova.example/v2.1'},
     "compute_endpoint must be the URL of nova's compute API (http:// or https://, usually ending in /v2.1), "
     "got 'ftp://nova.example/v2.1'"),
    ({'state': 'disabled', 'compute_endpoint': 'http:///v2.1'},
     "compute_endpoint must be the URL of nova's compute API (http:// or https://, usually ending in /v2.1), "
     "got 'http:///v2.1'"),
])
def test_bad_arguments_are_refused_before_nova_is_asked(run_module, nova_standin, args, msg):
    auth = {'auth_type': 'admin_token', 'auth': {'token': 'admin', 'endpoint': nova_standin.url},
            'compute_endpoint': nova_standin.url + '/v2.1'}
    rc, result = run_module(compute_service, dict(auth, **dict({'host': 'cmp-01'}, **args)))
    assert rc == 1 and result['msg'] == msg, result
    assert nova_standin.requests == []      # no request reached nova (nor Placement)


def test_the_standin_counts_the_requests_of_good_arguments(run_module, nova_standin):
    """The same task with good arguments does reach the stand-in: the count above can tell."""
    auth = {'auth_type': 'admin_token', 'auth': {'token': 'admin', 'endpoint': nova_standin.url},
            'compute_endpoint': nova_standin.url + '/v2.1'}
    rc, result = run_module(compute_service, dict(auth, host='cmp-01', state='disabled', disabled_reason='why'))
    assert rc == 1 and nova_standin.requests, result


def test_good_times_and_intervals_are_taken():
    params = {'host': 'cmp-01', 'binary': 'nova-compute', 'state': None, 'disabled_reason': None, 'wait_timeout': 0,
              'wait_interval': 0.1, 'report_interval': 10.0, 'reported_since': None, 'forced_down_at': None}
    moment = datetime.datetime.utcnow() - datetime.timedelta(seconds=20)
    for since in (None, moment.strftime('%Y-%m-%d %H:%M:%S'), moment.strftime('%Y-%m-%dT%H:%M:%S'),
                  moment.strftime('%Y-%m-%d %H:%M:%S.%f')):
        assert compute_service.check_arguments(dict(params, reported_since=since)) is None
    # forced_down_at is nova's stamp (nova's clock), not checked against this one
    assert compute_service.check_arguments(dict(params, forced_down_at='2026-11-23 12:00:00')) is None
    for url in ('http://nova.example:8774/v2.1', 'https://[2001:db8::1]/compute/v2.1'):
        assert compute_service.check_arguments(dict(params, compute_endpoint=url)) is None
    assert compute_service.check_arguments(dict(params, state='disabled', disabled_reason='why')) is None


@pytest.mark.parametrize('offset, words', [(-3600, '1h00m behind'), (-301, '5m01s behind'), (900, '15m00s ahead of')])
def test_a_reported_since_off_this_hosts_utc_clock_is_refused_before_nova_is_asked(
        run_module, nova_standin, monkeypatch, offset, words):
    """A node whose clock is behind UTC (or on local time) gives a start time in the past: nova's
    records from before the restart would pass for the new service's reports, and it would be
    enabled before it ran."""
    current = datetime.datetime(2026, 11, 28, 1, 0, 0)
    monkeypatch.setattr(compute_service, 'now', lambda: current)
    since = (current + datetime.timedelta(seconds=offset)).strftime('%Y-%m-%d %H:%M:%S')
    auth = {'auth_type': 'admin_token', 'auth': {'token': 'admin', 'endpoint': nova_standin.url},
            'compute_endpoint': nova_standin.url + '/v2.1'}
    rc, result = run_module(compute_service, dict(auth, host='cmp-01', wait_for='up', forced_down=False,
                                                  reported_since=since))
    assert rc == 1, result
    assert result['msg'].startswith('reported_since %s is %s this host\'s UTC clock (2026-11-28 01:00:00 UTC): '
                                    'more than 5 minutes off' % (since, words)), result['msg']
    assert nova_standin.requests == []
    # 4m50s off either way is taken
    params = {'host': 'cmp-01', 'binary': 'nova-compute', 'state': None, 'disabled_reason': None, 'wait_timeout': 0,
              'wait_interval': 1.0, 'report_interval': 10.0, 'forced_down_at': None}
    for near in (-290, 290):
        since = (current + datetime.timedelta(seconds=near)).strftime('%Y-%m-%d %H:%M:%S')
        assert compute_service.check_arguments(dict(params, reported_since=since)) is None


def test_a_wait_that_runs_out_of_time_says_so_not_503(monkeypatch):
    """nova answered every poll; the service just never got there: no '503 Service Unavailable'
    (it was raised as ServiceUnavailable, and the task's message began with a 503 nova never sent)."""
    from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
    from ansible_collections.placement.upgrade.plugins.module_utils.common import error_result

    monkeypatch.setattr(nova_services, 'get_service', lambda *args, **kwargs: dict(ENABLED))
    now = [0.0]

    def sleep(seconds):
        now[0] += seconds

    with pytest.raises(errors.WaitTimeout) as info:
        nova_services.wait_for(None, 'cmp-01', 'down', timeout=8, interval=2, clock=lambda: now[0], sleep=sleep)
    failed = error_result(info.value)
    assert failed['msg'].startswith('nova-compute on cmp-01 is not down after 8 s (nova reports state up'), failed['msg']
    assert '503' not in failed['msg'] and 'Unavailable' not in failed['msg']
    assert failed['error']['status'] == 0 and failed['error']['code'] == 'placement_upgrade.wait_timeout'


def _sleeps(monkeypatch, polls_to_state, **kwargs):
    """The pauses wait_for makes while nova reports the service up for ``polls_to_state`` reads."""
    records = [dict(ENABLED, state='up')] * polls_to_state + [dict(ENABLED, state='down')]
    reads = iter(records)
    monkeypatch.setattr(nova_services, 'get_service', lambda *args, **kw: next(reads))
    now, pauses = [0.0], []

    def sleep(seconds):
        pauses.append(seconds)
        now[0] += seconds

    waited = nova_services.wait_for(None, 'cmp-01', 'down', clock=lambda: now[0], sleep=sleep, **kwargs)[1]
    return pauses, waited


def test_the_polling_backs_off_from_a_quarter_second_up_to_the_interval(monkeypatch):
    # each pause as long as the wait so far (at least 0.25 s, at most the interval)
    pauses, waited = _sleeps(monkeypatch, 8, timeout=300, interval=5)
    assert pauses == [0.25, 0.25, 0.5, 1, 2, 4, 5, 5] and waited == sum(pauses)


def test_the_polling_never_pauses_longer_than_the_interval_nor_past_the_timeout(monkeypatch):
    assert _sleeps(monkeypatch, 4, timeout=300, interval=0.1)[0] == [0.1] * 4
    assert _sleeps(monkeypatch, 5, timeout=300, interval=5, first_interval=5)[0] == [5] * 5   # as before
    assert _sleeps(monkeypatch, 3, timeout=1, interval=5)[0] == [0.25, 0.25, 0.5]


def test_the_reads_quicken_around_a_write_that_is_due():
    pause = nova_services.next_pause
    # 20 s into a wait: every interval, except that a pause ends where a due write's window starts
    assert pause(120.0, 100.0, [], 1.0) == 1.0
    assert pause(120.0, 100.0, [130.0], 1.0) == 1.0
    assert pause(129.5, 100.0, [130.0], 1.0) == pytest.approx(0.2)
    # from LEAD before the due moment: 0.1 s apart, then backing off by a quarter of how late it is
    assert pause(129.7, 100.0, [130.0], 1.0) == 0.1
    assert pause(130.3, 100.0, [130.0], 1.0) == 0.1
    assert pause(131.0, 100.0, [130.0], 1.0) == pytest.approx(0.25)
    assert pause(132.0, 100.0, [130.0], 1.0) == pytest.approx(0.5)
    assert pause(135.0, 100.0, [130.0], 1.0) == 1.0
    # the moment nearest now counts; a first_interval at or above the interval keeps to the interval
    assert pause(129.8, 100.0, [110.0, 130.0, 140.0], 1.0) == 0.1
    assert pause(129.8, 100.0, [130.0], 1.0, first_interval=1.0) == 1.0


def test_nova_stamps_are_read_as_utc_seconds():
    assert nova_services.epoch('1970-01-01T00:00:10.500000') == 10.5
    assert nova_services.epoch('1970-01-01 00:01:00') == 60.0
    assert nova_services.epoch('1970-01-01T00:00:01Z') == 1.0
    assert nova_services.epoch('1970-01-01T00:00:01+00:00') == 1.0
    assert nova_services.epoch(None) is None and nova_services.epoch('soon') is None


class _NovaTimeline(object):
    """nova's record of a restarted nova-compute on a clock of its own (seconds since the epoch):
    forced down, its heartbeats and its version saves at the given moments, a PUT a write too
    (answered with its stamp to the microsecond, as nova answers from its object), every read
    noted.  ``up`` follows the last heartbeat (last_seen_up, which a save does not move) for 60 s
    once not forced down; ``whole_seconds`` stores stamps rounded to the second, as MySQL does
    with nova's DATETIME columns."""

    def __init__(self, now, beats, saves=(), forced_down=True, whole_seconds=False):
        self.now = now
        self.writes = sorted(list(beats) + list(saves))
        self.beats = sorted(beats)
        self.put_at = []
        self.forced_down = forced_down
        self.whole_seconds = whole_seconds
        self.reads = []

    @staticmethod
    def stamp(moment):
        return datetime.datetime.utcfromtimestamp(moment).strftime('%Y-%m-%dT%H:%M:%S.%f')

    def record(self):
        written = [w for w in self.writes + self.put_at if w <= self.now]
        beats = [w for w in self.beats if w <= self.now]
        up = not self.forced_down and bool(beats) and self.now - beats[-1] <= 60
        last = max(written) if written else None
        if last is not None and self.whole_seconds:
            last = float(round(last))
        return dict(ENABLED, status='disabled', forced_down=self.forced_down, state='up' if up else 'down',
                    updated_at=self.stamp(last) if last is not None else None)

    def get_service(self, *args, **kwargs):
        self.reads.append(self.now)
        return self.record()

    def put(self, adapter, service_id, body, *args):
        self.put_at.append(self.now)
        self.forced_down = body.get('forced_down', self.forced_down)
        return dict(self.record(), updated_at=self.stamp(self.now))

    def sleep(self, seconds):
        self.now += seconds


def test_a_restarted_service_is_read_quickly_when_its_heartbeats_are_due(monkeypatch):
    """Started at T, nova-compute's first heartbeat comes 5 s after its start-up (here 0.8 s):
    T+5.8, the next one report_interval later, T+15.8.  The reads see the first within 0.25 s
    (0.8 s after it was due at the earliest), the next within 0.1 s (on time), without reading
    every 0.25 s all along."""
    started = 1795670000.0
    nova = _NovaTimeline(started + 0.5, [started - 3.0, started + 5.8, started + 15.8, started + 25.8])
    monkeypatch.setattr(nova_services, 'get_service', nova.get_service)
    monkeypatch.setattr(nova_services, '_put', nova.put)
    current = nova.record()
    record, waited, changed = nova_services.clear_forced_down_when_up(
        None, current, _NovaTimeline.stamp(started), timeout=90, interval=1.0, clock=lambda: nova.now,
        sleep=nova.sleep, report_interval=10)
    assert changed is True and record['state'] == 'up' and record['forced_down'] is False
    assert nova.put_at[0] - (started + 5.8) <= 0.25, nova.put_at
    assert nova.now - (started + 15.8) <= 0.1 + 1e-6, nova.now
    # read at most every second in between: about half a quarter-second poll's 60 reads
    assert len(nova.reads) <= 35, len(nova.reads)
    assert max(b - a for a, b in zip(nova.reads, nova.reads[1:])) <= 1.0


def test_after_a_version_saved_at_the_start_the_first_heartbeat_is_read_quickly(monkeypatch):
    """An upgraded nova-compute saves its service version 2 s after its start (before its start-up
    pass: no heartbeat comes that soon), its first heartbeat 5.5 s later: forced_down is cleared
    after the first write, the wait ends within 0.25 s of the heartbeat after it."""
    started = 1795670000.0
    nova = _NovaTimeline(started + 0.5, [started - 3.0, started + 7.5, started + 17.5], saves=[started + 2.0])
    monkeypatch.setattr(nova_services, 'get_service', nova.get_service)
    monkeypatch.setattr(nova_services, '_put', nova.put)
    record, waited, changed = nova_services.clear_forced_down_when_up(
        None, nova.record(), _NovaTimeline.stamp(started), timeout=90, interval=1.0, clock=lambda: nova.now,
        sleep=nova.sleep, report_interval=10)
    assert record['state'] == 'up' and changed is True
    assert started + 2.0 < nova.put_at[0] <= started + 3.0
    assert started + 7.5 < nova.now <= started + 7.75, nova.now - started


@pytest.mark.parametrize('told', [True, False], ids=['forced_down_at', 'without'])
def test_a_version_saved_before_the_task_looked_counts_once_the_forced_down_write_is_known(monkeypatch, told):
    """The new nova-compute saved its version 0.3 s after its start, before the task first read the
    record (0.5 s): told which write forced it down (forced_down_at), the task counts that save,
    clears and is done at the first heartbeat (7.3 s); not told, it takes the save for its own
    PUT and goes on to the first heartbeat before clearing, and to the next after it."""
    started = 1795670000.0
    nova = _NovaTimeline(started - 1.0, [started - 3.0, started + 7.3, started + 17.3], saves=[started + 0.3])
    monkeypatch.setattr(nova_services, 'get_service', nova.get_service)
    monkeypatch.setattr(nova_services, '_put', nova.put)
    forced = nova.put(None, None, {'forced_down': True})['updated_at']       # the wait down's PUT
    nova.now = started + 0.5
    record, waited, changed = nova_services.clear_forced_down_when_up(
        None, nova.record(), _NovaTimeline.stamp(started), timeout=90, interval=1.0, clock=lambda: nova.now,
        sleep=nova.sleep, report_interval=10, forced_down_at=forced if told else None)
    assert record['state'] == 'up' and changed is True
    if told:
        assert nova.put_at[-1] <= started + 0.5 + 1e-6
        assert started + 7.3 < nova.now <= started + 7.8, nova.now - started    # 2 s later than due: 0.5 s
    else:
        assert started + 7.3 < nova.put_at[-1] <= started + 8.3
        assert started + 17.3 < nova.now <= started + 17.45, nova.now - started


def test_a_put_stored_in_whole_seconds_is_not_taken_for_a_heartbeat(monkeypatch):
    """nova's database stores whole seconds (MySQL rounds): forced_down cleared at T+0.7 after the
    version save, answered ...00.700000, stored ...01.  Read as a write after the clearing, it
    would end the wait at once (up on the OLD process' heartbeat, before the start-up pass); the
    wait goes on to the first heartbeat."""
    started = 1795670000.0
    nova = _NovaTimeline(started - 1.0, [started - 3.0, started + 6.4, started + 16.4], saves=[started + 0.2],
                         whole_seconds=True)
    monkeypatch.setattr(nova_services, 'get_service', nova.get_service)
    monkeypatch.setattr(nova_services, '_put', nova.put)
    forced = nova.put(None, None, {'forced_down': True})['updated_at']
    nova.now = started + 0.7
    record, waited, changed = nova_services.clear_forced_down_when_up(
        None, nova.record(), _NovaTimeline.stamp(started - 0.5), timeout=90, interval=1.0, clock=lambda: nova.now,
        sleep=nova.sleep, report_interval=10, forced_down_at=forced)
    assert changed is True and nova.put_at[-1] == started + 0.7
    assert record['state'] == 'up' and nova.now > started + 6.4, nova.now - started


def test_the_later_of_reported_since_and_forced_down_at_is_the_baseline(monkeypatch):
    """forced_down_at after reported_since (nova's clock ahead of the controller's: its stamp of the
    forced_down PUT is later than the start the role stamped): that PUT is not the new process'
    write; the version save after it is."""
    started = 1795670000.0
    nova = _NovaTimeline(started - 0.2, [started - 3.0, started + 6.0, started + 16.0], saves=[started + 1.0])
    monkeypatch.setattr(nova_services, 'get_service', nova.get_service)
    monkeypatch.setattr(nova_services, '_put', nova.put)
    forced = nova.put(None, None, {'forced_down': True})['updated_at']       # at T-0.2 on nova's clock
    nova.now = started + 1.5
    record, waited, changed = nova_services.clear_forced_down_when_up(
        None, nova.record(), _NovaTimeline.stamp(started - 0.5), timeout=90, interval=1.0, clock=lambda: nova.now,
        sleep=nova.sleep, report_interval=10, forced_down_at=forced)
    # cleared at once on the save (T+1.0), done at the first heartbeat, not taken by the PUT
    assert nova.put_at[-1] == started + 1.5 and started + 6.0 < nova.now <= started + 6.5
    nova = _NovaTimeline(started - 0.2, [started - 3.0, started + 6.0, started + 16.0])
    monkeypatch.setattr(nova_services, 'get_service', nova.get_service)
    monkeypatch.setattr(nova_services, '_put', nova.put)
    forced = nova.put(None, None, {'forced_down': True})['updated_at']
    nova.now = started + 0.5
    record, waited, changed = nova_services.clear_forced_down_when_up(
        None, nova.record(), _NovaTimeline.stamp(started - 0.5), timeout=90, interval=1.0, clock=lambda: nova.now,
        sleep=nova.sleep, report_interval=10, forced_down_at=forced)
    # no save: the PUT (after reported_since) is passed over, the first heartbeat clears
    assert started + 6.0 < nova.put_at[-1] <= started + 7.0


def test_a_heartbeat_at_another_moment_is_still_seen_within_the_interval(monkeypatch):
    """report_interval wrong (nova's is 30 s, the wait assumes 10 s), start-up slow: only later."""
    started = 1795670000.0
    nova = _NovaTimeline(started + 0.5, [started + 21.3, started + 51.3])
    monkeypatch.setattr(nova_services, 'get_service', nova.get_service)
    monkeypatch.setattr(nova_services, '_put', nova.put)
    record, waited, changed = nova_services.clear_forced_down_when_up(
        None, nova.record(), _NovaTimeline.stamp(started), timeout=90, interval=1.0, clock=lambda: nova.now,
        sleep=nova.sleep, report_interval=10)
    assert record['state'] == 'up' and changed is True
    assert started + 21.3 < nova.put_at[0] <= started + 22.3
    assert started + 51.3 < nova.now <= started + 52.3


def test_nova_is_reached_without_placement_being_looked_up(run_module):
    """compute_service talks to nova alone: the backend authenticates and does not look Placement up
    (no version discovery there, two requests fewer while nova-compute is out of service).  Here the
    token's endpoint (where Placement would be) answers nothing at all, and the task works."""
    import socket

    import nova_standin

    dead = socket.socket()
    dead.bind(('127.0.0.1', 0))        # bound, never listening: a connection there is refused
    nowhere = 'http://127.0.0.1:%d' % dead.getsockname()[1]
    nova = nova_standin.NovaCycle()
    nova.add('cmp-01', running_for=1.0)
    try:
        rc, result = run_module(compute_service, {
            'auth_type': 'admin_token', 'auth': {'token': 'admin', 'endpoint': nowhere},
            'compute_endpoint': nova.url, 'host': 'cmp-01', 'state': 'disabled', 'disabled_reason': 'why'})
    finally:
        nova.close()
        dead.close()
    assert rc == 0, result
    assert (result['changed'], result['service']['status']) == (True, 'disabled')


def test_a_backend_opened_for_nova_alone_refuses_placement_calls():
    from ansible_collections.placement.upgrade.plugins.module_utils._placement import errors
    from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.rest import RestBackend

    class Connection(object):
        session = object()

        def close(self):
            pass

    backend = RestBackend(None, connection=Connection())
    assert backend.session is Connection.session
    with pytest.raises(errors.ConfigurationError, match='opened for nova alone'):
        backend.list_providers()


def test_the_auths_one_endpoint_is_placements_not_novas(run_module):
    """admin_token (or none) auth resolves every service to its one endpoint, Placement's: without
    compute_endpoint that is no compute endpoint, opened for nova alone or not (nothing is asked)."""
    import socket

    dead = socket.socket()
    dead.bind(('127.0.0.1', 0))
    try:
        rc, result = run_module(compute_service, {
            'auth_type': 'admin_token', 'auth': {'token': 'admin', 'endpoint': 'http://127.0.0.1:%d' % dead.getsockname()[1]},
            'host': 'cmp-01'})
    finally:
        dead.close()
    assert rc == 1
    assert result['msg'] == ("compute_service needs nova's compute API, and there is none here (the service catalog "
                             "lists no compute endpoint): use cloud/auth options whose service catalog lists nova, "
                             "or set compute_endpoint"), result
